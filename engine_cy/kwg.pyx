# KWG (Kurnia Word Graph, "Node22") reader: the Kwg class holds a validated graph as one contiguous uint32
# array and answers lookups (contains, index_of, words, ...) and the move generator's derived tables
# (child masks, the interleaved relaid-out GADDAG).
#
# The node format and its inline accessors are in kwg_node.pxd. Loading checks the whole graph once
# (kwg_check.check_kwg), so that every walk in the engine can run without checks; bytes that break a rule
# raise LexiconFormatError (a ValueError) naming the node. Graphs are built from word lists by kwg_build.
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from engine_cy.kwg_node cimport (KWG_IS_END, KWG_ARC_MASK, kwg_tile, kwg_accepts, kwg_is_end, kwg_arc,
                                 kwg_seek, kwg_letter_set, kwg_dfs_next, kwg_fill_child_masks)
from engine_cy.kwg_check cimport KIND_GADDAG, KIND_DAWG, KIND_LEAVES, check_kwg
from engine_cy.kwg_build cimport kwg_relayout

import numpy as np
cimport numpy as cnp

from engine_cy.kwg_check import LexiconFormatError

cnp.import_array()

cdef extern from "portable.h":
    void* macondo_huge_alloc(size_t n, void** base, size_t* length) noexcept nogil
    void macondo_huge_free(void* base, size_t length) noexcept nogil


cdef class Kwg:
    """A KWG held as one contiguous uint32 array (no per-node Python objects), validated at load."""

    def __cinit__(self):
        self.nodes = NULL
        self.n_nodes = 0
        self.counts = NULL
        self._counts = None
        self.reach = NULL
        self._reach = None
        self.child_masks = NULL
        self._child_masks = None
        self._word_map = None
        self.mnodes = NULL
        self.mnodes_base = NULL
        self.mnodes_len = 0
        self.kind = "dawg"

    def __dealloc__(self):
        if self.mnodes_base != NULL:
            macondo_huge_free(self.mnodes_base, self.mnodes_len)

    def __init__(self, data, kind="auto"):
        """data: bytes-like KWG file contents (little-endian uint32 nodes).

        kind: "gaddag" (node 1 must be the GADDAG root pointer), "dawg" (DAWG only, node 1 is an ordinary
        node), "leaves" (DAWG only, each path's tiles ascending: a KLV leave graph), or "auto": "gaddag" when
        node 1 has the shape of a root pointer (tile 0, no accept flag, end of list), else "dawg".
        Raises LexiconFormatError (a ValueError) when the bytes break the format."""
        cdef cnp.ndarray arr
        cdef uint32_t n
        cdef int k
        if self.nodes != NULL:
            raise TypeError("Kwg is already initialised")
        if not isinstance(data, bytes):
            data = bytes(data)   # lengths below are in bytes (a numpy array's len() is not)
        if len(data) > 4 * (KWG_ARC_MASK + 1):
            raise LexiconFormatError("KWG has more than 2^22 nodes")
        if len(data) % 4 != 0 or len(data) < 4:
            raise LexiconFormatError(f"KWG data size {len(data)} is not a positive multiple of 4 bytes")
        arr = np.frombuffer(data, dtype="<u4").astype(np.uint32, copy=True)
        arr.flags.writeable = False
        n = <uint32_t> arr.shape[0]
        if kind == "auto":
            kind = "gaddag" if n >= 2 and (arr[1] & 0xFFC00000) == KWG_IS_END else "dawg"
        if kind == "gaddag":
            k = KIND_GADDAG
        elif kind == "dawg":
            k = KIND_DAWG
        elif kind == "leaves":
            k = KIND_LEAVES
        else:
            raise ValueError(f"unknown KWG kind {kind!r}")
        self._validate(arr, k)
        self.kind = kind
        self.array = arr
        self.n_nodes = n
        self.nodes = <const uint32_t*> cnp.PyArray_DATA(arr)

    cdef int _validate(self, object array, int kind) except -1:
        """Check the whole graph (kwg_check.check_kwg, which lists the rules) and keep what the check
        computed: the roots, the word counts, the reachable-node map and, with a GADDAG, the child masks."""
        droot, groot, cnt_arr, reach_arr, masks_arr = check_kwg(array, kind)
        self._reach = reach_arr
        self.reach = <const uint8_t*> cnp.PyArray_DATA(reach_arr)
        self._counts = cnt_arr
        self.counts = <const uint32_t*> cnp.PyArray_DATA(cnt_arr)
        self.dawg_root = droot
        self.gaddag_root = groot
        if masks_arr is not None:
            # the move generator's child masks (ensure_child_masks) come with the load
            self._child_masks = masks_arr
            self.child_masks = <const uint64_t*> cnp.PyArray_DATA(masks_arr)
        return 0

    @classmethod
    def from_file(cls, path, kind="auto"):
        with open(path, "rb") as fh:
            data = fh.read(4 * (KWG_ARC_MASK + 1) + 1)
        return cls(data, kind)

    def to_bytes(self):
        return self.array.astype("<u4").tobytes()

    cdef int check_list(self, uint32_t p) except -1:
        """Raise IndexError unless p is 0 (no list) or a node the validator passed as a list start."""
        if p != 0 and (p >= self.n_nodes or not self.reach[p]):
            raise IndexError(f"node {p} is not in a sibling list of this graph ({self.n_nodes} nodes)")
        return 0

    def node(self, uint32_t i):
        """(tile, accepts, is_end, arc) of node i, for tests and tools."""
        if i >= self.n_nodes:
            raise IndexError(i)
        return (kwg_tile(self.nodes, i), kwg_accepts(self.nodes, i), kwg_is_end(self.nodes, i),
                kwg_arc(self.nodes, i))

    cdef bint contains_ml(self, const unsigned char* word, int n) noexcept nogil:
        cdef uint32_t p = self.dawg_root
        cdef uint32_t last = 0
        cdef int i
        if n == 0:
            return False
        for i in range(n):
            if p == 0:
                return False
            last = kwg_seek(self.nodes, p, word[i])
            if last == 0:
                return False
            p = kwg_arc(self.nodes, last)
        return kwg_accepts(self.nodes, last)

    def contains(self, const unsigned char[:] word):
        """True when the machine-letter word is in the DAWG."""
        if word.shape[0] == 0:
            return False
        return self.contains_ml(&word[0], <int> word.shape[0])

    def accepts_path(self, uint32_t root, const unsigned char[:] seq):
        """True when the tile sequence is accepted starting from the list at root (e.g. the GADDAG root)."""
        cdef uint32_t p = root, last = 0
        cdef Py_ssize_t i
        self.check_list(root)
        if seq.shape[0] == 0:
            return False
        for i in range(seq.shape[0]):
            if p == 0:
                return False
            last = kwg_seek(self.nodes, p, seq[i])
            if last == 0:
                return False
            p = kwg_arc(self.nodes, last)
        return kwg_accepts(self.nodes, last)

    def letter_set(self, uint32_t p):
        self.check_list(p)
        return kwg_letter_set(self.nodes, p)

    def seek(self, uint32_t p, uint32_t t):
        self.check_list(p)
        return kwg_seek(self.nodes, p, t)

    cdef void ensure_counts(self) except *:
        """count[p] = words in the suffix of the sibling list starting at p (the word ranks of index_of add
        them up). The check at load computes them; an instance that was never initialised gets an empty
        table."""
        if self._counts is None:
            self._counts = np.zeros(max(self.n_nodes, 1), dtype=np.uint32)
            self.counts = <const uint32_t*> cnp.PyArray_DATA(self._counts)

    cdef void ensure_child_masks(self) except *:
        """mask[p] = bit t for every tile t in the sibling list from node p to its end. The move generator
        finds a child in O(1): p + popcount(mask[p] & ((1 << t) - 1)), instead of scanning the list.
        Only reachable nodes get a mask (others, which no walk visits, stay 0)."""
        cdef cnp.ndarray arr
        cdef uint64_t* m
        if self._child_masks is not None:
            return
        arr = np.zeros(self.n_nodes + 1, dtype=np.uint64)
        m = <uint64_t*> cnp.PyArray_DATA(arr)
        with nogil:
            kwg_fill_child_masks(self.nodes, self.n_nodes, self.reach, m)
        self._child_masks = arr
        self.child_masks = m

    cdef bint ensure_mnodes(self) except *:
        """The move generator's copy of the GADDAG: each node and the tiles of its sibling-list suffix in one
        uint64 (node | mask << 32), so a child lookup (mask, then the child's node a few entries on) reads one
        cache line where the separate arrays take two; and the lists reachable from the GADDAG root laid
        out breadth first (kwg_build.kwg_relayout), from mnodes_root = 1, so that the hot lists near the root
        share cache lines and a list's children lie side by side. Arcs in mnodes are indices into mnodes.
        Only when every tile is below 32 and the lists fit 22-bit arcs (returns False otherwise, and mnodes
        stays NULL)."""
        cdef cnp.ndarray pos, queue
        cdef uint64_t* m
        cdef uint32_t i
        cdef int64_t used
        if self.mnodes != NULL:
            return True
        self.ensure_child_masks()
        for i in range(self.n_nodes):
            if self.child_masks[i] >> 32:
                return False
        if self.gaddag_root == 0:
            return False
        pos = np.zeros(self.n_nodes + 1, dtype=np.uint32)
        queue = np.zeros(self.n_nodes + 1, dtype=np.uint32)
        with nogil:
            used = kwg_relayout(self.nodes, self.child_masks, self.gaddag_root,
                                <uint32_t*> cnp.PyArray_DATA(pos), <uint32_t*> cnp.PyArray_DATA(queue), NULL)
        if used < 0:
            return False
        # huge pages where the system has them (the generator's reads are random over the whole graph)
        m = <uint64_t*> macondo_huge_alloc((used + 1) * sizeof(uint64_t), &self.mnodes_base, &self.mnodes_len)
        if m == NULL:
            raise MemoryError()
        pos[:] = 0
        with nogil:
            kwg_relayout(self.nodes, self.child_masks, self.gaddag_root, <uint32_t*> cnp.PyArray_DATA(pos),
                         <uint32_t*> cnp.PyArray_DATA(queue), m)
        self.mnodes = m
        self.mnodes_root = 1
        return True

    def word_map(self):
        """The words of 7+ letters by letter multiset (built on first use, then shared)."""
        from engine_cy.wordmap import WordMap
        if self._word_map is None:
            self._word_map = WordMap(self)
        return self._word_map

    def word_count(self, uint32_t root=0xFFFFFFFF):
        """Number of strings accepted from a root list (default: the DAWG root)."""
        if root == 0xFFFFFFFF:
            root = self.dawg_root
        self.check_list(root)
        if root == 0:
            return 0
        return int(self.counts[root])

    cdef int64_t index_of_ml(self, const unsigned char* word, int n) noexcept nogil:
        """Rank of the word in machine-letter lexicographic order, or -1 (counts must exist)."""
        cdef uint32_t p = self.dawg_root
        cdef int64_t idx = 0
        cdef int i
        if n == 0:
            return -1
        for i in range(n):
            if p == 0:
                return -1
            idx += self.counts[p]
            while kwg_tile(self.nodes, p) != word[i]:
                if kwg_is_end(self.nodes, p):
                    return -1
                p += 1
            idx -= self.counts[p]
            if i == n - 1:
                return idx if kwg_accepts(self.nodes, p) else -1
            if kwg_accepts(self.nodes, p):
                idx += 1
            p = kwg_arc(self.nodes, p)
        return -1

    def index_of(self, const unsigned char[:] word):
        self.ensure_counts()
        if word.shape[0] == 0:
            return -1
        return self.index_of_ml(&word[0], <int> word.shape[0])

    def words(self, uint32_t root=0xFFFFFFFF):
        """Every accepted string from root (default DAWG), as bytes of machine letters, in order."""
        cdef list out = []
        cdef uint32_t p
        cdef uint32_t stack_p[64]
        cdef unsigned char buf[64]
        cdef int depth
        if root == 0xFFFFFFFF:
            root = self.dawg_root
        self.check_list(root)
        if root == 0:
            return out
        # iterative DFS: stack_p[d] = current node index in the list at depth d (the validator bounds the
        # depth by MAX_WORD_LEN + 1 < 64)
        depth = 0
        stack_p[0] = root
        while depth >= 0:
            p = stack_p[depth]
            buf[depth] = <unsigned char> kwg_tile(self.nodes, p)
            if kwg_accepts(self.nodes, p):
                out.append(bytes(buf[:depth + 1]))
            depth = kwg_dfs_next(self.nodes, stack_p, depth, 62)
        return out
