# Building word graphs: see kwg_build.pyx.
from libc.stdint cimport uint32_t, uint64_t, int64_t

cdef int64_t kwg_relayout(const uint32_t* nodes, const uint64_t* masks, uint32_t root, uint32_t* pos,
                          uint32_t* queue, uint64_t* out) noexcept nogil
