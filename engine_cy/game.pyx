# Game state: board with incrementally updated cross-sets, bag with a seeded RNG, racks, scores, turn,
# scoreless turns, end of game, Zobrist hash; play and exact undo via a stack of small records.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy, memmove

from engine_cy.common cimport ml_t, MAX_ALPHABET, MAX_BOARD_DIM, RACK_SIZE
from engine_cy.board cimport Board, MAX_SQUARES
from engine_cy.kwg cimport Kwg
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.move cimport Move, MOVE_PLACE, MOVE_EXCHANGE, MOVE_PASS
from engine_cy.rng cimport Rng, rng_seed, rng_next, rng_below, splitmix64
from engine_cy.cross_set cimport cross_set_after_change, cross_set_square, CROSS_CACHE_BITS
from engine_cy.cross_set import compute_all as _compute_cross_sets
from engine_cy.rules import score_play as _score_play

# Zobrist keys: (square, tile) with blanks keyed apart, (player, letter, count), turn, scoreless count.
cdef uint64_t Z_SQUARE[MAX_SQUARES][128]
cdef uint64_t Z_RACK[2][MAX_ALPHABET][RACK_SIZE + 2]
cdef uint64_t Z_TURN
cdef uint64_t Z_ZEROS[16]


cdef void _init_keys():
    global Z_TURN
    cdef uint64_t st = 0x5EED5EED12345678ULL
    cdef int i, j, k
    for i in range(MAX_SQUARES):
        for j in range(128):
            Z_SQUARE[i][j] = splitmix64(&st)
    for i in range(2):
        for j in range(MAX_ALPHABET):
            for k in range(RACK_SIZE + 2):
                Z_RACK[i][j][k] = splitmix64(&st)
    Z_TURN = splitmix64(&st)
    for i in range(16):
        Z_ZEROS[i] = splitmix64(&st)


_init_keys()


cdef inline int _zkey(ml_t t) noexcept nogil:
    return (t & 0x3F) | (64 if (t & 0x80) else 0)


END_REASONS = {END_NONE: "none", END_STANDARD: "standard", END_CONSECUTIVE_ZEROS: "consecutive_zeros"}


class GameError(ValueError):
    """An illegal operation on the game state (bad rack, move on a finished game, ...)."""


@cython.final
cdef class Game:
    """The shared game engine for self-play, simulation and search."""

    def __cinit__(self):
        self.undo_stack = NULL
        self.undo_n = 0
        self.undo_cap = 0
        self.cs_save = NULL
        self.cross_cache = NULL
        self.csc_save = NULL
        self.cs_where = NULL
        self.cs_n = 0
        self.cs_cap = 0

    def __init__(self, Kwg kwg, LetterDistribution ld, Board board, uint64_t seed=0, int bingo_bonus=50,
                 int max_zeros=6):
        cdef int i, ml, k
        self.kwg = kwg
        self.ld = ld
        self.board = board
        for i in range(MAX_ALPHABET):
            self.scores_tbl[i] = ld.scores[i] if i < ld.size else 0
        self.all_letters = ((<uint64_t> 1 << ld.size) - 1) & ~(<uint64_t> 1)
        self.bingo_bonus = bingo_bonus
        self.max_zeros = max_zeros
        rng_seed(&self.rng, seed)
        self.undo_cap = 64
        self.undo_stack = <Undo*> malloc(self.undo_cap * sizeof(Undo))
        if self.undo_stack == NULL:
            raise MemoryError()
        memset(self.racks, 0, sizeof(self.racks))
        self.rack_n[0] = self.rack_n[1] = 0
        self.score[0] = self.score[1] = 0
        self.on_turn = 0
        self.zeros = 0
        self.over = False
        self.end_reason = END_NONE
        self.fixed_order = False
        # the bag: the distribution less the board's tiles
        counts = [ld.counts[i] for i in range(ld.size)]
        for r in range(board.dim):
            for c in range(board.dim):
                t = board.get(r, c)
                if t:
                    counts[0 if t & 0x80 else t] -= 1
        if any(x < 0 for x in counts):
            raise GameError("the board holds more tiles of a kind than the distribution")
        self.bag_n = 0
        for ml in range(ld.size):
            for k in range(counts[ml]):
                if self.bag_n >= MAX_BAG:
                    raise GameError("the distribution has too many tiles")
                self.bag[self.bag_n] = ml
                self.bag_n += 1
        _compute_cross_sets(board, kwg, ld)
        self.hash = self.compute_hash()

    def __dealloc__(self):
        free(self.undo_stack)
        free(self.cs_save)
        free(self.csc_save)
        free(self.cs_where)
        free(self.cross_cache)

    # ------------------------------------------------------------ C core

    cdef uint64_t compute_hash(self) noexcept nogil:
        cdef uint64_t h = 0
        cdef int sq, p, ml, dim = self.board.dim
        for sq in range(dim * dim):
            if self.board.tiles[0][sq] != 0:
                h ^= Z_SQUARE[sq][_zkey(self.board.tiles[0][sq])]
        for p in range(2):
            for ml in range(self.ld.size):
                if self.racks[p][ml]:
                    h ^= Z_RACK[p][ml][self.racks[p][ml]]
        if self.on_turn:
            h ^= Z_TURN
        h ^= Z_ZEROS[self.zeros if self.zeros < 16 else 15]
        return h

    cdef uint64_t rack_hash(self, int p) noexcept nogil:
        """Player p's share of the hash (XOR it out to key a position without that rack)."""
        cdef uint64_t h = 0
        cdef int ml
        for ml in range(self.ld.size):
            if self.racks[p][ml]:
                h ^= Z_RACK[p][ml][self.racks[p][ml]]
        return h

    cdef void rack_add(self, int p, ml_t ml, int delta) noexcept nogil:
        cdef int old = self.racks[p][ml]
        if old:
            self.hash ^= Z_RACK[p][ml][old]
        self.racks[p][ml] = <uint8_t> (old + delta)
        if old + delta:
            self.hash ^= Z_RACK[p][ml][old + delta]
        self.rack_n[p] += delta

    cdef void set_zeros(self, int z) noexcept nogil:
        self.hash ^= Z_ZEROS[self.zeros if self.zeros < 16 else 15]
        self.zeros = z
        self.hash ^= Z_ZEROS[self.zeros if self.zeros < 16 else 15]

    cdef int rack_value(self, int player) noexcept nogil:
        cdef int ml, v = 0
        for ml in range(1, self.ld.size):
            v += self.racks[player][ml] * self.scores_tbl[ml]
        return v

    cdef void draw_c(self, int player, int n, Undo* u) noexcept nogil:
        cdef int i, j
        cdef ml_t t
        for i in range(n):
            if self.bag_n == 0:
                break
            if self.fixed_order:
                j = self.bag_n - 1
            else:
                j = <int> rng_below(&self.rng, self.bag_n)
            t = self.bag[j]
            self.bag[j] = self.bag[self.bag_n - 1]
            self.bag[self.bag_n - 1] = t
            self.bag_n -= 1
            self.rack_add(player, t, 1)
            if u != NULL:
                u.draw_idx[u.n_drawn] = <uint8_t> j
                u.drawn[u.n_drawn] = t
                u.n_drawn += 1

    cdef void refresh_cross(self, const Move* m) noexcept nogil:
        cdef int d = m.vertical
        cdef int lane = m.col if d else m.row
        cdef int first = m.row if d else m.col
        cross_set_after_change(self.board, self.kwg.nodes, self.kwg.dawg_root, self.kwg.gaddag_root,
                               self.scores_tbl, self.all_letters, d, lane, first, first + m.length - 1)
        self.board.cross_valid = True

    cdef int save_cross(self, const Move* m) except -1 nogil:
        """Push the cross-sets and cross-scores refresh_cross(m) will rewrite: the crossing squares of the
        move's line (the other orientation) and every square of the lines through its squares."""
        cdef int n, need = self.board.dim * (m.length + 1)
        cdef uint64_t* grown_cs
        cdef int32_t* grown_csc
        if self.cs_n + need > self.cs_cap:
            n = 2 * self.cs_cap + need + 1024
            grown_cs = <uint64_t*> realloc(self.cs_save, n * sizeof(uint64_t))
            if grown_cs == NULL:
                with gil:
                    raise MemoryError()
            self.cs_save = grown_cs
            grown_csc = <int32_t*> realloc(self.csc_save, n * sizeof(int32_t))
            if grown_csc == NULL:
                with gil:
                    raise MemoryError()
            self.csc_save = grown_csc
            grown_csc = <int32_t*> realloc(self.cs_where, n * sizeof(int32_t))
            if grown_csc == NULL:
                with gil:
                    raise MemoryError()
            self.cs_where = grown_csc
            self.cs_cap = n
        self.cs_n = self.copy_cross(m, self.cs_n, True)
        return 0

    cdef void restore_cross(self, const Move* m, int mark) noexcept nogil:
        """Undo of save_cross: the saved values back from the stack at `mark`."""
        self.copy_cross(m, mark, False)
        self.cs_n = mark
        self.board.cross_valid = True

    cdef int copy_cross(self, const Move* m, int n, bint save) noexcept nogil:
        """Copy the cross-sets and cross-scores of the squares refresh_cross(m) rewrites (the crossing
        squares of the move's line, then every square of the lines through its squares) to the save stack
        from index n (save) or back from it; returns the index after the last one."""
        cdef int d = m.vertical, dim = self.board.dim, idx, k, sq, o
        cdef int lane = m.col if d else m.row
        cdef int first = m.row if d else m.col
        for idx in range(-1, m.length):
            for k in range(dim):
                if idx < 0:
                    o = 1 - d
                    sq = k * dim + lane
                else:
                    o = d
                    sq = k * dim + first + idx
                if save:
                    self.cs_save[n] = self.board.cross_set[o][sq]
                    self.csc_save[n] = self.board.cross_score[o][sq]
                else:
                    self.board.cross_set[o][sq] = self.cs_save[n]
                    self.board.cross_score[o][sq] = self.csc_save[n]
                n += 1
        return n

    cdef void cross_touch(self, int o, int lane, int idx) noexcept nogil:
        """Save the cross-set and cross-score of square (lane, idx) of orientation o, then recompute them."""
        cdef int sq = lane * self.board.dim + idx
        self.cs_save[self.cs_n] = self.board.cross_set[o][sq]
        self.csc_save[self.cs_n] = self.board.cross_score[o][sq]
        self.cs_where[self.cs_n] = o * MAX_SQUARES + sq
        self.cs_n += 1
        if self.cross_cache == NULL:
            # (without the memory the sets are computed each time)
            self.cross_cache = <CrossCacheEntry*> calloc(1 << CROSS_CACHE_BITS, sizeof(CrossCacheEntry))
        cross_set_square(self.board, self.kwg.nodes, self.kwg.dawg_root, self.kwg.gaddag_root, self.scores_tbl,
                         self.all_letters, o, lane, idx, self.cross_cache)

    cdef int cross_update(self, const Move* m) except -1 nogil:
        """After placement m's tiles are on the board: recompute (saving the old values for cross_revert) only
        the cross-sets the new tiles can change. A square's cross-set depends on the run of tiles beside it in
        the perpendicular line, so along the move's line only the squares just before and after its run (and
        the newly covered squares, which become 0) change, and in the line crossing each new tile only the
        squares just before and after that tile's run (and the tile's own square)."""
        cdef int d = m.vertical, dim = self.board.dim, i, k, s, e, need
        cdef int lane = m.col if d else m.row
        cdef int first = m.row if d else m.col
        cdef const ml_t* line = &self.board.tiles[d][lane * dim]
        cdef const ml_t* cross
        need = 2 + 3 * m.length
        if self.cs_n + need > self.cs_cap:
            self.save_cross(m)     # grows the stacks (its saved entries are dropped below)
            self.cs_n -= dim * (m.length + 1)
        # plays along the other orientation whose perpendicular word runs in this line
        s = first
        while s > 0 and line[s - 1] != 0:
            s -= 1
        e = first + m.length - 1
        while e < dim - 1 and line[e + 1] != 0:
            e += 1
        if s > 0:
            self.cross_touch(1 - d, s - 1, lane)
        if e < dim - 1:
            self.cross_touch(1 - d, e + 1, lane)
        for i in range(m.length):
            if m.tiles[i] == 0:
                continue
            k = first + i
            self.cross_touch(1 - d, k, lane)
            # plays along this orientation through the line crossing the new tile at position `lane`
            cross = &self.board.tiles[1 - d][k * dim]
            s = lane
            while s > 0 and cross[s - 1] != 0:
                s -= 1
            e = lane
            while e < dim - 1 and cross[e + 1] != 0:
                e += 1
            self.cross_touch(d, lane, k)
            if s > 0:
                self.cross_touch(d, s - 1, k)
            if e < dim - 1:
                self.cross_touch(d, e + 1, k)
        self.board.cross_valid = True
        return 0

    cdef void cross_revert(self, int mark) noexcept nogil:
        """Undo of cross_update: the saved values back, newest first, down to stack height `mark`."""
        cdef int n, w
        for n in range(self.cs_n - 1, mark - 1, -1):
            w = self.cs_where[n]
            self.board.cross_set[w // MAX_SQUARES][w % MAX_SQUARES] = self.cs_save[n]
            self.board.cross_score[w // MAX_SQUARES][w % MAX_SQUARES] = self.csc_save[n]
        self.cs_n = mark
        self.board.cross_valid = True

    cdef int play_c(self, const Move* m) except -1 nogil:
        cdef Undo* u
        cdef Undo* grown
        cdef int p = self.on_turn, i, r, c, k, sq
        cdef ml_t t
        if self.undo_n >= self.undo_cap:
            grown = <Undo*> realloc(self.undo_stack, 2 * self.undo_cap * sizeof(Undo))
            if grown == NULL:
                with gil:
                    raise MemoryError()
            self.undo_stack = grown
            self.undo_cap *= 2
        u = &self.undo_stack[self.undo_n]
        self.undo_n += 1
        u.move = m[0]
        u.player = p
        u.scores[0] = self.score[0]
        u.scores[1] = self.score[1]
        u.zeros = self.zeros
        u.over = self.over
        u.end_reason = self.end_reason
        u.n_drawn = 0
        u.rng = self.rng
        u.hash = self.hash
        memcpy(u.racks_before, self.racks, sizeof(self.racks))
        if m.kind == MOVE_PLACE:
            for i in range(m.length):
                t = m.tiles[i]
                if t == 0:
                    continue
                r = m.row + i * m.vertical
                c = m.col + i * (1 - m.vertical)
                sq = r * self.board.dim + c
                self.board.put(r, c, t)
                self.hash ^= Z_SQUARE[sq][_zkey(t)]
                self.rack_add(p, 0 if (t & 0x80) else t, -1)
            u.cs_mark = self.cs_n
            self.cross_update(m)
            self.score[p] += m.score
            self.set_zeros(0)
            self.draw_c(p, m.n_tiles, u)
            if self.rack_n[p] == 0 and self.bag_n == 0:
                self.score[p] += 2 * self.rack_value(1 - p)
                self.over = True
                self.end_reason = END_STANDARD
        elif m.kind == MOVE_EXCHANGE:
            for i in range(m.length):
                self.rack_add(p, m.tiles[i], -1)
            self.draw_c(p, m.length, u)
            # exchanged tiles go to the bottom of the bag (drawn last in a fixed order)
            memmove(&self.bag[m.length], &self.bag[0], self.bag_n * sizeof(ml_t))
            for i in range(m.length):
                self.bag[i] = m.tiles[i]
            self.bag_n += m.length
            self.set_zeros(self.zeros + 1)
        else:
            self.set_zeros(self.zeros + 1)
        if not self.over and self.zeros >= self.max_zeros:
            self.score[0] -= self.rack_value(0)
            self.score[1] -= self.rack_value(1)
            self.over = True
            self.end_reason = END_CONSECUTIVE_ZEROS
        self.on_turn = 1 - p
        self.hash ^= Z_TURN
        return 0

    cdef int undo_c(self) except -1 nogil:
        cdef Undo* u
        cdef const Move* m
        cdef int p, i, j, r, c
        cdef ml_t t
        if self.undo_n == 0:
            with gil:
                raise GameError("nothing to undo")
        self.undo_n -= 1
        u = &self.undo_stack[self.undo_n]
        m = &u.move
        p = u.player
        if m.kind == MOVE_EXCHANGE:
            self.bag_n -= m.length
            memmove(&self.bag[0], &self.bag[m.length], self.bag_n * sizeof(ml_t))
        # return the draws to the bag in reverse, restoring its order exactly
        for i in range(u.n_drawn - 1, -1, -1):
            j = u.draw_idx[i]
            t = u.drawn[i]
            self.bag[self.bag_n] = t
            self.bag_n += 1
            self.bag[self.bag_n - 1] = self.bag[j]
            self.bag[j] = t
        if m.kind == MOVE_PLACE:
            for i in range(m.length):
                if m.tiles[i] == 0:
                    continue
                r = m.row + i * m.vertical
                c = m.col + i * (1 - m.vertical)
                self.board.put(r, c, 0)
            self.cross_revert(u.cs_mark)
        memcpy(self.racks, u.racks_before, sizeof(self.racks))
        self.rack_n[0] = 0
        self.rack_n[1] = 0
        for i in range(self.ld.size):
            self.rack_n[0] += self.racks[0][i]
            self.rack_n[1] += self.racks[1][i]
        self.score[0] = u.scores[0]
        self.score[1] = u.scores[1]
        self.zeros = u.zeros
        self.over = u.over
        self.end_reason = u.end_reason
        self.rng = u.rng
        self.hash = u.hash
        self.on_turn = p
        return 0

    cdef void reset_c(self, uint64_t seed) noexcept nogil:
        """A new game on an empty board: full bag, empty racks, seeded RNG, nothing to undo."""
        cdef int ml, k, d, sq, dim = self.board.dim
        memset(self.board.tiles, 0, sizeof(self.board.tiles))
        memset(self.board.occ, 0, sizeof(self.board.occ))
        self.board.n_tiles = 0
        for d in range(2):
            for sq in range(dim * dim):
                self.board.cross_set[d][sq] = self.all_letters
                self.board.cross_score[d][sq] = 0
        self.board.cross_valid = True
        self.bag_n = 0
        for ml in range(self.ld.size):
            for k in range(self.ld.counts[ml]):
                if self.bag_n < MAX_BAG:
                    self.bag[self.bag_n] = <ml_t> ml
                    self.bag_n += 1
        memset(self.racks, 0, sizeof(self.racks))
        self.rack_n[0] = 0
        self.rack_n[1] = 0
        self.score[0] = 0
        self.score[1] = 0
        self.on_turn = 0
        self.zeros = 0
        self.over = False
        self.end_reason = END_NONE
        self.fixed_order = False
        self.undo_n = 0
        self.cs_n = 0
        rng_seed(&self.rng, seed)
        self.hash = self.compute_hash()

    cpdef Game clone(self):
        """An independent copy of the current state (own board, racks, bag, RNG; empty history)."""
        cdef Game g = Game.__new__(Game)
        g.kwg = self.kwg
        g.ld = self.ld
        g.board = self.board.copy()
        g.board.cross_valid = self.board.cross_valid
        memcpy(g.scores_tbl, self.scores_tbl, sizeof(self.scores_tbl))
        g.all_letters = self.all_letters
        memcpy(g.racks, self.racks, sizeof(self.racks))
        g.rack_n[0] = self.rack_n[0]
        g.rack_n[1] = self.rack_n[1]
        memcpy(g.bag, self.bag, sizeof(self.bag))
        g.bag_n = self.bag_n
        g.fixed_order = self.fixed_order
        g.score[0] = self.score[0]
        g.score[1] = self.score[1]
        g.on_turn = self.on_turn
        g.zeros = self.zeros
        g.max_zeros = self.max_zeros
        g.over = self.over
        g.end_reason = self.end_reason
        g.bingo_bonus = self.bingo_bonus
        g.rng = self.rng
        g.hash = self.hash
        g.undo_cap = 64
        g.undo_n = 0
        g.undo_stack = <Undo*> malloc(g.undo_cap * sizeof(Undo))
        if g.undo_stack == NULL:
            raise MemoryError()
        return g

    def with_lexicon(self, Kwg kwg):
        """A copy of the current state that checks words in `kwg` (a lexicon pruned to this board, see
        engine_cy.prune), its cross-sets recomputed there. `kwg` must hold every word the copy can form."""
        cdef Game g
        if kwg.gaddag_root == 0:
            raise ValueError("the lexicon needs a GADDAG")
        g = self.clone()
        g.kwg = kwg
        free(g.cross_cache)         # (its letter sets are another lexicon's)
        g.cross_cache = NULL
        _compute_cross_sets(g.board, kwg, g.ld)
        return g

    def solver_mode(self):
        """Switch to the solvers' rules: two scoreless turns end the game, and the
        current count becomes 1 if it was within one of the real limit, else 0."""
        self.set_zeros(1 if self.zeros + 1 >= self.max_zeros else 0)
        self.max_zeros = 2

    cdef void set_hidden(self, int player, const uint8_t* counts, const ml_t* order, int n) noexcept nogil:
        """Replace `player`'s rack by `counts` and the bag by `order` (first drawn first); draws then follow
        it exactly. Used by the pre-endgame solver to try every draw."""
        cdef int ml, i
        for ml in range(self.ld.size):
            if self.racks[player][ml] != counts[ml]:
                self.rack_add(player, ml, counts[ml] - self.racks[player][ml])
        self.bag_n = n
        for i in range(n):
            self.bag[n - 1 - i] = order[i]
        self.fixed_order = True

    cdef int bag_sequence(self, ml_t* out) noexcept nogil:
        """The bag in draw order (first drawn first); returns its size."""
        cdef int i
        for i in range(self.bag_n):
            out[i] = self.bag[self.bag_n - 1 - i]
        return self.bag_n

    # ------------------------------------------------------------ Python API

    def reseed(self, uint64_t seed):
        rng_seed(&self.rng, seed)

    def set_rack(self, int player, tiles):
        """Give `player` exactly these tiles: the old rack goes back to the bag, the new tiles come from the
        bag, or from the other rack (which is then refilled from the bag) when only it holds them."""
        cdef int ml, k, other = 1 - player
        need = [0] * self.ld.size
        for t in tiles:
            if not 0 <= t < self.ld.size:
                raise GameError(f"tile {t} is not in the alphabet")
            need[t] += 1
        if sum(need) > RACK_SIZE:
            raise GameError(f"a rack holds at most {RACK_SIZE} tiles")
        for ml in range(self.ld.size):
            for k in range(self.racks[player][ml]):
                self._bag_put(ml)
            while self.racks[player][ml]:
                self.rack_add(player, ml, -1)
        other_refill = 0
        for ml in range(self.ld.size):
            for k in range(need[ml]):
                if self._bag_take(ml):
                    self.rack_add(player, ml, 1)
                elif self.racks[other][ml] > 0:
                    self.rack_add(other, ml, -1)
                    self.rack_add(player, ml, 1)
                    other_refill += 1
                else:
                    raise GameError(f"tile {self.ld.label(ml)} is not available for the rack")
        if other_refill:
            self.draw_c(other, other_refill, NULL)

    def _bag_put(self, int ml):
        if self.bag_n >= MAX_BAG:
            raise GameError("bag overflow")
        self.bag[self.bag_n] = ml
        self.bag_n += 1

    def _bag_take(self, int ml):
        cdef int i
        for i in range(self.bag_n - 1, -1, -1):
            if self.bag[i] == ml:
                memmove(&self.bag[i], &self.bag[i + 1], (self.bag_n - 1 - i) * sizeof(ml_t))
                self.bag_n -= 1
                return True
        return False

    def set_bag_order(self, order):
        """Fix the draw order: `order` (first drawn first) must be tiles now in the bag; any other bag tiles
        are drawn after them. Draws then follow this order without randomness."""
        rest = self.bag_list()
        for t in order:
            if t not in rest:
                raise GameError(f"tile {self.ld.label(t)} in the draw order is not in the bag")
            rest.remove(t)
        seq = list(reversed(list(order)))  # bag[bag_n - 1] is drawn first
        arr = rest + seq
        for i, t in enumerate(arr):
            self.bag[i] = t
        self.fixed_order = True

    def set_random_order(self):
        self.fixed_order = False

    def discard_bag(self):
        """Take every bag tile out of the game (analysis set-ups such as short-rack endgames; the tile
        census then falls short of the distribution by these tiles)."""
        self.bag_n = 0

    def fill_rack(self, int player):
        """Draw until the rack holds 7 tiles or the bag is empty."""
        self.draw_c(player, RACK_SIZE - self.rack_n[player], NULL)

    def set_turn(self, int player):
        if player not in (0, 1):
            raise GameError("player must be 0 or 1")
        if player != self.on_turn:
            self.on_turn = player
            self.hash ^= Z_TURN

    def set_scores(self, int s0, int s1):
        self.score[0] = s0
        self.score[1] = s1

    def set_zeros_count(self, int z):
        self.set_zeros(z)

    def adjust_score(self, int player, int delta):
        """Time penalties and challenge bonuses (no turn change)."""
        self.score[player] += delta

    def set_over(self, bint over, str reason="none"):
        inv = {v: k for k, v in END_REASONS.items()}
        self.over = over
        self.end_reason = inv.get(reason, END_NONE)

    def play(self, str kind, int row=0, int col=0, bint vertical=False, tiles=(), score=None):
        """Play a move for the player on turn: kind 'place' (tiles per square, 0 = played-through),
        'exchange' (rack tiles) or 'pass'. The score is computed when not given. Draws follow the bag."""
        cdef Move m
        cdef int p = self.on_turn, i
        if self.over:
            raise GameError("the game is over")
        memset(&m, 0, sizeof(Move))
        have = [self.racks[p][i] for i in range(self.ld.size)]
        if kind == "place":
            tiles = list(tiles)
            if not tiles or len(tiles) > MAX_BOARD_DIM:
                raise GameError("a placement needs 1 to 21 squares")
            if score is None:
                score = _score_play(self.board, self.ld, row, col, vertical, tiles, self.bingo_bonus)
            m.kind = MOVE_PLACE
            m.length = len(tiles)
            for i, t in enumerate(tiles):
                m.tiles[i] = t
                if t:
                    have[0 if t & 0x80 else t] -= 1
                    m.n_tiles += 1
            dim = self.board.dim
            for i, t in enumerate(tiles):
                r, c = (row + i, col) if vertical else (row, col + i)
                if not (0 <= r < dim and 0 <= c < dim):
                    raise GameError("the play runs off the board")
                if t and self.board.get(r, c):
                    raise GameError("a tile is placed on an occupied square")
                if not t and not self.board.get(r, c):
                    raise GameError("a played-through square is empty")
        elif kind == "exchange":
            if not tiles or len(tiles) > RACK_SIZE:
                raise GameError("an exchange needs 1 to 7 tiles")
            if self.bag_n < RACK_SIZE:
                raise GameError(f"exchanges need at least {RACK_SIZE} tiles in the bag ({self.bag_n} left)")
            m.kind = MOVE_EXCHANGE
            m.length = len(tiles)
            m.n_tiles = len(tiles)
            for i, t in enumerate(sorted(tiles)):
                m.tiles[i] = t
                have[t] -= 1
            score = 0
        elif kind == "pass":
            m.kind = MOVE_PASS
            score = 0
        else:
            raise GameError(f"unknown move kind {kind!r}")
        if any(x < 0 for x in have):
            raise GameError("the rack does not hold the tiles of this move")
        m.score = score
        m.row = row
        m.col = col
        m.vertical = vertical
        self.play_c(&m)
        return score

    def undo(self):
        self.undo_c()

    @property
    def scores(self):
        return (self.score[0], self.score[1])

    @property
    def zeros_count(self):
        return self.zeros

    @property
    def game_over(self):
        return bool(self.over)

    @property
    def end_reason_name(self):
        return END_REASONS[self.end_reason]

    @property
    def hash_key(self):
        return self.hash

    def recomputed_hash(self):
        return self.compute_hash()

    @property
    def history_length(self):
        return self.undo_n

    def rack(self, int player):
        return [ml for ml in range(self.ld.size) for _ in range(self.racks[player][ml])]

    def rack_counts(self, int player):
        return [self.racks[player][ml] for ml in range(self.ld.size)]

    def bag_list(self):
        """Bag tiles in array order (the last is drawn first when the order is fixed)."""
        return [self.bag[i] for i in range(self.bag_n)]

    @property
    def bag_size(self):
        return self.bag_n

    def history(self):
        """Moves played so far: (player, kind, row, col, vertical, tiles, score, rack_before)."""
        kinds = ("place", "exchange", "pass")
        out = []
        cdef int i, k
        cdef Undo* u
        for i in range(self.undo_n):
            u = &self.undo_stack[i]
            rack = [ml for ml in range(self.ld.size) for k in range(u.racks_before[u.player][ml])]
            out.append((u.player, kinds[u.move.kind], u.move.row, u.move.col, bool(u.move.vertical),
                        tuple(u.move.tiles[k] for k in range(u.move.length)), u.move.score, rack))
        return out

    def tile_census(self):
        """Counts of every tile kind on board + racks + bag (must equal the distribution)."""
        counts = [0] * self.ld.size
        for r in range(self.board.dim):
            for c in range(self.board.dim):
                t = self.board.get(r, c)
                if t:
                    counts[0 if t & 0x80 else t] += 1
        for p in range(2):
            for ml in range(self.ld.size):
                counts[ml] += self.racks[p][ml]
        for t in self.bag_list():
            counts[t] += 1
        return counts
