# The KWG node format and its inline accessors, shared by the reader (kwg), the checker (kwg_check), the
# builder (kwg_build) and every walker (cross_set, movegen, wordmap, klv, prune).
#
# A KWG is a flat array of little-endian uint32 nodes,
#   bits 31..24 tile | bit 23 accepts | bit 22 is_end | bits 21..0 arc index.
# nodes[0] points at the DAWG root list, nodes[1] (when present) at the GADDAG root list.
# A sibling list is a run of nodes with ascending tiles, the last one flagged is_end; a node's arc is the
# index of its children's list (0: none). Tile 0 is the GADDAG separator (and the blank inside a KLV leave
# graph). This file declares no extension type, so cimporting it imports no module at run time.
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

cdef inline void kwg_fill_child_masks(const uint32_t* nodes, uint32_t n, const uint8_t* reach,
                                      uint64_t* m) noexcept nogil:
    """m[p] = bit t for every tile t in the sibling list from node p to its end, for the nodes reach marks
    (m zeroed by the caller: other nodes stay 0)."""
    cdef int64_t p = <int64_t> n - 1
    while p >= 0:
        if reach[p]:
            m[p] = (<uint64_t> 1) << kwg_tile(nodes, <uint32_t> p)
            if not kwg_is_end(nodes, <uint32_t> p):
                m[p] |= m[p + 1]
        p -= 1
