# KWG (Kurnia Word Graph, "Node22") reader and builder.
#
# Layout (reference §2): a flat array of little-endian uint32 nodes,
#   bits 31..24 tile | bit 23 accepts | bit 22 is_end | bits 21..0 arc index.
# nodes[0] points at the DAWG root list, nodes[1] (when present) at the GADDAG root list.
# Tile 0 is the GADDAG separator (and the blank inside a KLV leave graph).
#
# The builder is an incremental minimising construction over sorted strings with one
# interning table shared by the DAWG and the GADDAG, so GADDAG lists after a separator
# coincide with DAWG lists. Each distinct sibling list is stored once and contiguously,
# which is exactly the KWG layout, so no separate layout pass is needed.
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, realloc, free, calloc, qsort
from libc.string cimport memcmp, memset, memcpy

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef enum:
    REC = 24          # bytes per string record in the builder (tiles stored +1, zero padded)
    MAX_LIST = 66     # arcs in one sibling list: 63 tiles + separator, with room
    MAX_DEPTH = 26


cdef class Kwg:
    """A KWG held as one contiguous uint32 array (no per-node Python objects)."""

    def __cinit__(self):
        self.nodes = NULL
        self.counts = NULL
        self._counts = None
        self.child_masks = NULL
        self._child_masks = None
        self._word_map = None

    def __init__(self, data):
        """data: bytes-like KWG file contents (little-endian uint32 nodes)."""
        cdef cnp.ndarray arr
        if len(data) % 4 != 0 or len(data) < 4:
            raise ValueError(f"KWG data size {len(data)} is not a positive multiple of 4 bytes")
        arr = np.frombuffer(bytes(data), dtype="<u4").astype(np.uint32, copy=True)
        if arr.shape[0] > KWG_ARC_MASK + 1:
            raise ValueError("KWG has more than 2^22 nodes")
        self.array = arr
        self.nodes = <const uint32_t*> cnp.PyArray_DATA(arr)
        self.n_nodes = <uint32_t> arr.shape[0]
        self.dawg_root = kwg_arc(self.nodes, 0)
        self.gaddag_root = kwg_arc(self.nodes, 1) if self.n_nodes > 1 else 0
        self._validate()

    def _validate(self):
        cdef uint32_t i, a
        for i in range(self.n_nodes):
            a = kwg_arc(self.nodes, i)
            if a >= self.n_nodes:
                raise ValueError(f"KWG node {i} points outside the graph ({a} >= {self.n_nodes})")
        if self.dawg_root != 0 and self.dawg_root < 1:
            raise ValueError("KWG DAWG root is invalid")

    @classmethod
    def from_file(cls, path):
        with open(path, "rb") as fh:
            return cls(fh.read())

    def to_bytes(self):
        return self.array.astype("<u4").tobytes()

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
        return kwg_letter_set(self.nodes, p)

    def seek(self, uint32_t p, uint32_t t):
        return kwg_seek(self.nodes, p, t)

    cdef void ensure_counts(self) except *:
        """count[p] = words in the suffix of the sibling list starting at p (reference §2.4)."""
        cdef cnp.ndarray arr
        cdef uint32_t* cnt
        cdef uint8_t* done
        cdef uint32_t* stack
        cdef Py_ssize_t sp
        cdef uint32_t p, q, a, n = self.n_nodes
        cdef bint ready
        cdef uint64_t total
        if self._counts is not None:
            return
        arr = np.zeros(max(n, 1), dtype=np.uint32)
        cnt = <uint32_t*> cnp.PyArray_DATA(arr)
        done = <uint8_t*> calloc(n + 1, 1)
        stack = <uint32_t*> malloc((2 * n + 2) * sizeof(uint32_t))
        if done == NULL or stack == NULL:
            free(done); free(stack)
            raise MemoryError()
        with nogil:
            for p in range(n - 1, 0, -1):
                if done[p]:
                    continue
                sp = 0
                stack[sp] = p
                sp += 1
                while sp > 0:
                    q = stack[sp - 1]
                    if done[q]:
                        sp -= 1
                        continue
                    ready = True
                    a = kwg_arc(self.nodes, q)
                    if a != 0 and not done[a]:
                        stack[sp] = a
                        sp += 1
                        ready = False
                    if not kwg_is_end(self.nodes, q) and q + 1 < n and not done[q + 1]:
                        stack[sp] = q + 1
                        sp += 1
                        ready = False
                    if ready:
                        total = 1 if kwg_accepts(self.nodes, q) else 0
                        if a != 0:
                            total += cnt[a]
                        if not kwg_is_end(self.nodes, q) and q + 1 < n:
                            total += cnt[q + 1]
                        cnt[q] = <uint32_t> total
                        done[q] = 1
                        sp -= 1
        free(done)
        free(stack)
        self._counts = arr
        self.counts = cnt

    cdef void ensure_child_masks(self) except *:
        """mask[p] = bit t for every tile t in the sibling list from node p to its end. The move generator
        finds a child in O(1): p + popcount(mask[p] & ((1 << t) - 1)), instead of scanning the list."""
        cdef cnp.ndarray arr
        cdef uint64_t* m
        cdef int64_t p
        if self._child_masks is not None:
            return
        arr = np.zeros(self.n_nodes + 1, dtype=np.uint64)
        m = <uint64_t*> cnp.PyArray_DATA(arr)
        with nogil:
            p = <int64_t> self.n_nodes - 1
            while p >= 0:
                m[p] = (<uint64_t> 1) << kwg_tile(self.nodes, <uint32_t> p)
                if not kwg_is_end(self.nodes, <uint32_t> p):
                    m[p] |= m[p + 1]
                p -= 1
        self._child_masks = arr
        self.child_masks = m

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
        if root == 0:
            return 0
        self.ensure_counts()
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
        if root == 0:
            return out
        # iterative DFS: stack_p[d] = current node index in the list at depth d
        depth = 0
        stack_p[0] = root
        while depth >= 0:
            p = stack_p[depth]
            buf[depth] = <unsigned char> kwg_tile(self.nodes, p)
            if kwg_accepts(self.nodes, p):
                out.append(bytes(buf[:depth + 1]))
            depth = kwg_dfs_next(self.nodes, stack_p, depth, 62)
        return out


# ---------------------------------------------------------------- builder

cdef int _rec_cmp(const void* a, const void* b) noexcept nogil:
    return memcmp(a, b, REC)


cdef struct Builder:
    uint32_t* out          # KWG nodes being written
    uint32_t* out_len      # list length, at the index of each list's first node
    uint32_t n_out
    uint32_t cap_out
    uint32_t* table        # hash table of list start indexes (0 = empty slot)
    uint32_t table_mask
    uint32_t n_lists


cdef inline uint64_t _hash_list(const uint32_t* nodes, uint32_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef uint32_t i
    for i in range(n):
        h ^= nodes[i]
        h *= 1099511628211ULL
        h ^= h >> 29
    return h


cdef int _grow_table(Builder* b) noexcept nogil:
    cdef uint32_t old_size = b.table_mask + 1
    cdef uint32_t new_size = old_size * 2
    cdef uint32_t* nt = <uint32_t*> calloc(new_size, sizeof(uint32_t))
    cdef uint32_t i, s, slot
    if nt == NULL:
        return -1
    for i in range(old_size):
        s = b.table[i]
        if s != 0:
            slot = <uint32_t> (_hash_list(b.out + s, b.out_len[s]) & (new_size - 1))
            while nt[slot] != 0:
                slot = (slot + 1) & (new_size - 1)
            nt[slot] = s
    free(b.table)
    b.table = nt
    b.table_mask = new_size - 1
    return 0


cdef int64_t _intern(Builder* b, uint32_t* nodes, uint32_t n) noexcept nogil:
    """Store the list (is_end set on its last node) once; return its start index (0 if empty, -1 on error)."""
    cdef uint64_t h
    cdef uint32_t slot, s, new_cap
    if n == 0:
        return 0
    nodes[n - 1] |= KWG_IS_END
    h = _hash_list(nodes, n)
    slot = <uint32_t> (h & b.table_mask)
    while b.table[slot] != 0:
        s = b.table[slot]
        if b.out_len[s] == n and memcmp(b.out + s, nodes, n * sizeof(uint32_t)) == 0:
            return s
        slot = (slot + 1) & b.table_mask
    if b.n_out + n > KWG_ARC_MASK + 1:
        return -1
    if b.n_out + n > b.cap_out:
        new_cap = b.cap_out * 2
        while new_cap < b.n_out + n:
            new_cap *= 2
        b.out = <uint32_t*> realloc(b.out, new_cap * sizeof(uint32_t))
        b.out_len = <uint32_t*> realloc(b.out_len, new_cap * sizeof(uint32_t))
        if b.out == NULL or b.out_len == NULL:
            return -1
        b.cap_out = new_cap
    s = b.n_out
    memcpy(b.out + s, nodes, n * sizeof(uint32_t))
    b.out_len[s] = n
    b.n_out += n
    b.table[slot] = s
    b.n_lists += 1
    if b.n_lists * 2 > b.table_mask:
        if _grow_table(b) != 0:
            return -1
    return s


cdef int64_t _build_trie(Builder* b, const uint8_t* recs, Py_ssize_t n_recs) noexcept nogil:
    """Incrementally build the minimal graph of the sorted, distinct records; return the root list."""
    cdef uint32_t pending[MAX_DEPTH][MAX_LIST]
    cdef uint32_t n_pending[MAX_DEPTH]
    cdef int prev_len = 0, cur_len, cp, d
    cdef Py_ssize_t r
    cdef const uint8_t* s
    cdef const uint8_t* prev = NULL
    cdef int64_t child
    memset(n_pending, 0, sizeof(n_pending))
    for r in range(n_recs):
        s = recs + r * REC
        cur_len = 0
        while cur_len < REC and s[cur_len] != 0:
            cur_len += 1
        cp = 0
        if prev != NULL:
            while cp < cur_len and cp < prev_len and s[cp] == prev[cp]:
                cp += 1
        # close the lists below the common prefix, deepest first
        d = prev_len
        while d > cp:
            child = _intern(b, &pending[d][0], n_pending[d])
            if child < 0:
                return -1
            n_pending[d] = 0
            pending[d - 1][n_pending[d - 1] - 1] |= <uint32_t> child
            d -= 1
        for d in range(cp, cur_len):
            if n_pending[d] >= MAX_LIST:
                return -1
            pending[d][n_pending[d]] = (<uint32_t> (s[d] - 1)) << 24
            if d == cur_len - 1:
                pending[d][n_pending[d]] |= KWG_ACCEPTS
            n_pending[d] += 1
        prev = s
        prev_len = cur_len
    d = prev_len
    while d > 0:
        child = _intern(b, &pending[d][0], n_pending[d])
        if child < 0:
            return -1
        n_pending[d] = 0
        pending[d - 1][n_pending[d - 1] - 1] |= <uint32_t> child
        d -= 1
    return _intern(b, &pending[0][0], n_pending[0])


cdef Py_ssize_t _sort_unique(uint8_t* recs, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, w = 0
    if n == 0:
        return 0
    qsort(recs, n, REC, _rec_cmp)
    for i in range(n):
        if w == 0 or memcmp(recs + (w - 1) * REC, recs + i * REC, REC) != 0:
            if w != i:
                memcpy(recs + w * REC, recs + i * REC, REC)
            w += 1
    return w


def build_kwg(words, bint gaddag=True):
    """Build KWG bytes from machine-letter words (bytes-like; tile 0 only in DAWG-only graphs).

    With gaddag=True the file holds the DAWG at node 0 and the GADDAG at node 1."""
    cdef Py_ssize_t n_words = len(words), n_d = 0, n_g = 0, i, k, j, L
    cdef Py_ssize_t total_g = 0
    cdef uint8_t* drecs
    cdef uint8_t* grecs = NULL
    cdef uint8_t* rec
    cdef const unsigned char* w
    cdef bytes bw
    cdef Builder b
    cdef int64_t droot, groot = 0
    cdef list encoded = []
    cdef int max_len = REC - 2 if gaddag else REC - 1
    for word in words:
        bw = bytes(word)
        L = len(bw)
        if L < 1 or (gaddag and L < 2):
            continue
        if L > max_len:
            raise ValueError(f"word of length {L} is longer than the builder supports ({max_len})")
        for j in range(L):
            if bw[j] > 62 or (gaddag and bw[j] == 0):
                raise ValueError(f"invalid machine letter {bw[j]} in word")
        encoded.append(bw)
        total_g += L
    n_words = len(encoded)
    drecs = <uint8_t*> calloc(max(n_words, 1), REC)
    if gaddag:
        grecs = <uint8_t*> calloc(max(total_g, 1), REC)
    if drecs == NULL or (gaddag and grecs == NULL):
        free(drecs); free(grecs)
        raise MemoryError()
    for i in range(n_words):
        bw = encoded[i]
        w = bw
        L = len(bw)
        rec = drecs + i * REC
        for j in range(L):
            rec[j] = w[j] + 1
        if gaddag:
            # reverse(w), then reverse(w[:k]) + sep + w[k:] for k = 1..L-1
            rec = grecs + n_g * REC
            for j in range(L):
                rec[j] = w[L - 1 - j] + 1
            n_g += 1
            for k in range(1, L):
                rec = grecs + n_g * REC
                for j in range(k):
                    rec[j] = w[k - 1 - j] + 1
                rec[k] = 1            # separator, tile 0
                for j in range(k, L):
                    rec[j + 1] = w[j] + 1
                n_g += 1
    memset(&b, 0, sizeof(Builder))
    b.cap_out = 1 << 16
    b.out = <uint32_t*> malloc(b.cap_out * sizeof(uint32_t))
    b.out_len = <uint32_t*> malloc(b.cap_out * sizeof(uint32_t))
    b.table = <uint32_t*> calloc(1 << 16, sizeof(uint32_t))
    b.table_mask = (1 << 16) - 1
    b.n_out = 2 if gaddag else 1
    if b.out == NULL or b.out_len == NULL or b.table == NULL:
        free(drecs); free(grecs); free(b.out); free(b.out_len); free(b.table)
        raise MemoryError()
    with nogil:
        n_d = _sort_unique(drecs, n_words)
        droot = _build_trie(&b, drecs, n_d)
        if gaddag and droot >= 0:
            n_g = _sort_unique(grecs, n_g)
            groot = _build_trie(&b, grecs, n_g)
    free(drecs)
    free(grecs)
    free(b.table)
    free(b.out_len)
    if droot < 0 or groot < 0:
        free(b.out)
        raise ValueError("KWG build failed: the graph exceeds 2^22 nodes or a list is too long")
    b.out[0] = KWG_IS_END | <uint32_t> droot
    if gaddag:
        b.out[1] = KWG_IS_END | <uint32_t> groot
    arr = np.empty(b.n_out, dtype="<u4")
    cdef uint32_t[::1] view = arr
    memcpy(&view[0], b.out, b.n_out * sizeof(uint32_t))
    free(b.out)
    return arr.tobytes()
