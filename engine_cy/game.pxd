from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t
from engine_cy.common cimport ml_t, MAX_ALPHABET, MAX_BOARD_DIM
from engine_cy.board cimport Board, MAX_SQUARES
from engine_cy.kwg cimport Kwg
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.move cimport Move
from engine_cy.rng cimport Rng
from engine_cy.cross_set cimport CrossCacheEntry

cdef enum:
    MAX_BAG = 256
    END_NONE = 0
    END_STANDARD = 1          # a player went out with the bag empty
    END_CONSECUTIVE_ZEROS = 2 # the scoreless-turn limit was reached

cdef struct Undo:
    Move move
    int player
    int scores[2]
    int zeros
    bint over
    int end_reason
    int n_drawn
    uint8_t draw_idx[8]       # bag index swapped out at each draw (to restore the bag order exactly)
    ml_t drawn[8]
    Rng rng
    uint64_t hash
    uint8_t racks_before[2][MAX_ALPHABET]   # only used by exchanges and end-of-game bookkeeping
    int last_scoreless_player
    int cs_mark               # cross-set save stack height before the move (placements)

cimport cython

@cython.final
cdef class Game:
    cdef readonly Board board
    cdef readonly Kwg kwg
    cdef readonly LetterDistribution ld
    cdef int32_t scores_tbl[MAX_ALPHABET]
    cdef uint64_t all_letters
    cdef uint8_t racks[2][MAX_ALPHABET]     # rack counts by machine letter
    cdef int rack_n[2]
    cdef ml_t bag[MAX_BAG]                  # draws take bag[bag_n - 1] after an optional random swap
    cdef int bag_n
    cdef bint fixed_order                   # draw in bag order (no randomness): bagorder / tileorder
    cdef int score[2]
    cdef readonly int on_turn
    cdef int zeros
    cdef public int max_zeros
    cdef bint over
    cdef int end_reason
    cdef public int bingo_bonus
    cdef Rng rng
    cdef uint64_t hash
    cdef Undo* undo_stack
    cdef int undo_n
    cdef int undo_cap
    # cross-sets and cross-scores a placement is about to change, saved so undo restores them by copying
    cdef uint64_t* cs_save
    cdef CrossCacheEntry* cross_cache       # cross_touch's letter sets by run (NULL until first needed)
    cdef int32_t* csc_save
    cdef int cs_n
    cdef int cs_cap
    cdef int32_t* cs_where    # per saved entry: orientation * MAX_SQUARES + square (cross_update)

    cdef int play_c(self, const Move* m) except -1 nogil
    cdef int undo_c(self) except -1 nogil
    cdef void draw_c(self, int player, int n, Undo* u) noexcept nogil
    cdef uint64_t compute_hash(self) noexcept nogil
    cdef uint64_t rack_hash(self, int p) noexcept nogil
    cdef void refresh_cross(self, const Move* m) noexcept nogil
    cdef int save_cross(self, const Move* m) except -1 nogil
    cdef void restore_cross(self, const Move* m, int mark) noexcept nogil
    cdef int copy_cross(self, const Move* m, int n, bint save) noexcept nogil
    cdef int cross_update(self, const Move* m) except -1 nogil
    cdef void cross_touch(self, int o, int lane, int idx) noexcept nogil
    cdef void cross_revert(self, int mark) noexcept nogil
    cdef int rack_value(self, int player) noexcept nogil
    cdef void reset_c(self, uint64_t seed) noexcept nogil
    cdef void rack_add(self, int p, ml_t ml, int delta) noexcept nogil
    cdef void set_zeros(self, int z) noexcept nogil
    cpdef Game clone(self)
    cdef void set_hidden(self, int player, const uint8_t* counts, const ml_t* order, int n) noexcept nogil
    cdef int bag_sequence(self, ml_t* out) noexcept nogil
