from libc.stdint cimport int32_t, int64_t, uint32_t
from engine_cy.kwg cimport Kwg

cdef class Klv:
    # Validated at load (Klv.__init__): the leave graph is a valid "leaves" Kwg, there is exactly one value
    # per leave in it, and the values are finite millipoints; leave_value_ml relies on that.
    cdef readonly Kwg kwg              # DAWG-only graph of leaves (tile 0 = blank)
    cdef readonly object values_array  # numpy int32 millipoints, by leave rank (read-only)
    cdef const int32_t* values
    cdef readonly int64_t n_values
    cdef bint loaded
    cdef int32_t leave_value_ml(self, const unsigned char* sorted_leave, int n) noexcept nogil
