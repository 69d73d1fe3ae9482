from libc.stdint cimport uint32_t, uint64_t, int32_t
from engine_cy.board cimport Board

cdef void cross_set_square(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                           const int32_t* scores, uint64_t all_letters, int d, int lane, int idx) noexcept nogil
cdef void cross_set_lane(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                         const int32_t* scores, uint64_t all_letters, int d, int lane) noexcept nogil
cdef void cross_set_after_change(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                                 const int32_t* scores, uint64_t all_letters, int d, int lane, int first,
                                 int last) noexcept nogil
cdef void cross_set_all(Board b, const uint32_t* nodes, uint32_t dawg_root, uint32_t gaddag_root,
                        const int32_t* scores, uint64_t all_letters) noexcept nogil
