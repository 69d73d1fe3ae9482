from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t
from engine_cy.common cimport ml_t, MAX_BOARD_DIM

cdef enum:
    MAX_SQUARES = MAX_BOARD_DIM * MAX_BOARD_DIM

cdef class Board:
    cdef readonly int dim
    cdef readonly int start_row, start_col
    cdef readonly str layout_name
    cdef readonly int n_tiles                        # tiles on the board
    cdef readonly bint open_down                     # openings are searched down as well as across
    cdef int32_t opening_pen[2 * MAX_BOARD_DIM]      # per square i of the start lane, [d * MAX_BOARD_DIM + i] (d 0:
                                                     # the start row, 1: column): millipoints an opening play loses
                                                     # for a vowel there
    # Both orientations are kept so that one generator scans lanes: dir 0 = rows (across plays),
    # dir 1 = columns (down plays); square (lane, idx) is [lane * dim + idx].
    cdef ml_t tiles[2][MAX_SQUARES]                  # 0 empty, ml, ml | 0x80 for a blank
    cdef uint8_t letter_mult[2][MAX_SQUARES]         # 1, 2, 3, 4
    cdef uint8_t word_mult[2][MAX_SQUARES]           # 1, 2, 3, 4
    # Letters allowed on an empty square for a play along dir (constraint from the perpendicular
    # word), bit ml; and the face value of the perpendicular tiles (blank 0). Occupied: 0 / 0.
    cdef uint64_t cross_set[2][MAX_SQUARES]
    cdef int32_t cross_score[2][MAX_SQUARES]
    cdef bint cross_valid                            # cross-sets computed for the current tiles
    cdef uint32_t occ[2][MAX_BOARD_DIM]              # occupied squares of each lane, bit idx (kept by put)

    cdef inline ml_t get(self, int row, int col) noexcept nogil:
        return self.tiles[0][row * self.dim + col]
    cdef void put(self, int row, int col, ml_t ml) noexcept nogil
