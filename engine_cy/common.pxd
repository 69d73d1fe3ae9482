# Shared C-level types and constants for engine_cy.
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t, int64_t

ctypedef uint8_t ml_t          # machine letter: 0 blank/empty/play-through, 1..n letters, |0x80 blank on board
ctypedef int32_t equity_t      # millipoints

cdef enum:
    EQUITY_SCALE = 1000
    BLANK_MASK = 0x80
    EMPTY_SQUARE = 0
    MAX_BOARD_DIM = 21
    MAX_ALPHABET = 64          # letter sets fit a uint64 (bit 0 reserved for blank / separator)
    RACK_SIZE = 7
    MAX_WORD_LEN = 21

cdef inline bint ml_is_blanked(ml_t ml) noexcept nogil:
    return (ml & BLANK_MASK) != 0

cdef inline ml_t ml_unblank(ml_t ml) noexcept nogil:
    return ml & 0x7F

cdef inline double binom(int n, int k) noexcept nogil:
    """C(n, k) as a double (0 outside 0 <= k <= n): ways to draw k tiles of a letter the pool holds n of."""
    cdef double r = 1.0
    cdef int i
    if k < 0 or k > n:
        return 0.0
    for i in range(k):
        r = r * (n - i) / (i + 1)
    return r
