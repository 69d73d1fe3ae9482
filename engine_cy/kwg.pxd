# KWG (Node22) word graph reader: DAWG at nodes[0], GADDAG at nodes[1]. The node format and its accessors
# are in kwg_node.pxd, the load-time check in kwg_check, the builder in kwg_build.
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

cdef class Kwg:
    # Every instance is validated once at load (Kwg.__init__, kwg_check.check_kwg): the nodes reachable from
    # the roots form sorted, end-terminated sibling lists with in-range arcs and tiles, no cycles, no dead
    # ends, strings of at most MAX_WORD_LEN letters (+1 separator in the GADDAG) and bounded counts. The
    # nogil walkers here and in movegen / cross_set / wordmap rely on that and do no checks of their own.
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
