# KWG (Node22) word graph: DAWG at nodes[0], GADDAG at nodes[1] (see reference §2).
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

cdef enum:
    KWG_ACCEPTS = 0x800000
    KWG_IS_END = 0x400000
    KWG_ARC_MASK = 0x3FFFFF
    KWG_NOT_FOUND = 0xFFFFFFFF

cdef inline uint32_t kwg_tile(const uint32_t* nodes, uint32_t i) noexcept nogil:
    return nodes[i] >> 24

cdef inline bint kwg_accepts(const uint32_t* nodes, uint32_t i) noexcept nogil:
    return (nodes[i] & KWG_ACCEPTS) != 0

cdef inline bint kwg_is_end(const uint32_t* nodes, uint32_t i) noexcept nogil:
    return (nodes[i] & KWG_IS_END) != 0

cdef inline uint32_t kwg_arc(const uint32_t* nodes, uint32_t i) noexcept nogil:
    return nodes[i] & KWG_ARC_MASK

cdef inline uint32_t kwg_seek(const uint32_t* nodes, uint32_t p, uint32_t t) noexcept nogil:
    """Index of the node with tile t in the sibling list starting at p, or 0 when absent.

    Node 0 is never a sibling of a real list, so 0 doubles as "not found"."""
    cdef uint32_t n, nt
    if p == 0:
        return 0
    while True:
        n = nodes[p]
        nt = n >> 24
        if nt == t:
            return p
        if nt > t or (n & KWG_IS_END):
            return 0
        p += 1

cdef inline uint64_t kwg_letter_set(const uint32_t* nodes, uint32_t p) noexcept nogil:
    """Bit t set for every tile t in list p whose arc completes a word."""
    cdef uint64_t bits = 0
    cdef uint32_t n
    if p == 0:
        return 0
    while True:
        n = nodes[p]
        if n & KWG_ACCEPTS:
            bits |= (<uint64_t>1) << (n >> 24)
        if n & KWG_IS_END:
            return bits
        p += 1

cdef inline int kwg_dfs_next(const uint32_t* nodes, uint32_t* stack, int depth, int max_depth) noexcept nogil:
    """One step of a preorder walk over a word graph: stack[d] is the node at depth d. Descend into the
    current node's list when it has one and depth < max_depth, else go to the next sibling, popping finished
    lists. Returns the new depth (-1: the walk is over)."""
    cdef uint32_t p = stack[depth]
    if kwg_arc(nodes, p) != 0 and depth < max_depth:
        stack[depth + 1] = kwg_arc(nodes, p)
        return depth + 1
    while depth >= 0:
        p = stack[depth]
        if kwg_is_end(nodes, p):
            depth -= 1
        else:
            stack[depth] = p + 1
            return depth
    return -1

cdef class Kwg:
    # Every instance is validated once at load (Kwg.__init__): the nodes reachable from the roots form
    # sorted, end-terminated sibling lists with in-range arcs and tiles, no cycles, no dead ends, strings of
    # at most MAX_WORD_LEN letters (+1 separator in the GADDAG) and bounded counts. The nogil walkers here
    # and in movegen / cross_set / wordmap rely on that and do no checks of their own.
    cdef readonly object array       # numpy uint32 array owning the nodes (read-only)
    cdef const uint32_t* nodes
    cdef readonly uint32_t n_nodes
    cdef readonly uint32_t dawg_root     # first index of the DAWG root list (0 if empty)
    cdef readonly uint32_t gaddag_root   # first index of the GADDAG root list (0 if none)
    cdef readonly str kind               # "gaddag" (DAWG + GADDAG), "dawg" or "leaves" (DAWG only)
    cdef object _counts                  # word counts (numpy uint32), computed by the validator, for ranks
    cdef const uint32_t* counts
    cdef object _reach                   # numpy uint8: 1 for valid list starts (all reachable nodes)
    cdef const uint8_t* reach
    cdef object _child_masks             # lazily computed: tiles of the sibling-list suffix at each node
    cdef const uint64_t* child_masks
    cdef object _word_map                # lazily built engine_cy.wordmap.WordMap
    cdef const uint64_t* mnodes           # lazily built by ensure_mnodes (NULL until then, or when unusable)
    cdef void* mnodes_base                # its allocation (macondo_huge_alloc)
    cdef size_t mnodes_len
    cdef readonly uint32_t mnodes_root      # the GADDAG root list in mnodes (its lists are laid out anew)
    cdef bint contains_ml(self, const unsigned char* word, int n) noexcept nogil
    cdef void ensure_child_masks(self) except *
    cdef bint ensure_mnodes(self) except *
    cdef void ensure_counts(self) except *
    cdef int64_t index_of_ml(self, const unsigned char* word, int n) noexcept nogil
    cdef int check_list(self, uint32_t p) except -1
    cdef int _validate(self, object array, int kind) except -1
