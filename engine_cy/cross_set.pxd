from libc.stdint cimport uint32_t, uint64_t, int32_t
from engine_cy.board cimport Board

cdef enum:
    CROSS_CACHE_BITS = 12       # a CrossCache holds 1 << CROSS_CACHE_BITS entries
    CROSS_CACHE_MAX_RUN = 19    # the longest run of tiles and hole it keys

cdef struct CrossCacheEntry:
    uint64_t k0                 # the run's first 9 letters (6 bits each, the hole 0) and its length; 0: empty
    uint64_t k1                 # its next 10 letters
    uint64_t bits               # the letters the hole accepts

cdef void cross_set_square(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                           const int32_t* scores, uint64_t all_letters, int d, int lane, int idx,
                           CrossCacheEntry* cache=*) noexcept nogil
cdef void cross_set_lane(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                         const int32_t* scores, uint64_t all_letters, int d, int lane) noexcept nogil
cdef void cross_set_after_change(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                                 const int32_t* scores, uint64_t all_letters, int d, int lane, int first,
                                 int last) noexcept nogil
cdef void cross_set_all(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                        const int32_t* scores, uint64_t all_letters) noexcept nogil
