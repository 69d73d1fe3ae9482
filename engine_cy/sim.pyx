# Monte Carlo simulation (reference section 12). One SimWorker per thread: each iteration draws a random
# opponent rack and bag order (from a seed derived from the iteration number only, so results depend on
# the seed and thread count, never on timing), then plays every active candidate out for P plies of
# static-equity moves with that same rack and order, and accumulates equity and win samples in C.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy
from libc.math cimport lround

from engine_cy.common cimport ml_t, MAX_ALPHABET, RACK_SIZE, EQUITY_SCALE
from engine_cy.game cimport Game
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.movegen cimport MoveGen, Move, RECORD_BEST, MOVE_PLACE, move_from_fields
from engine_cy.rng cimport Rng, rng_seed, rng_below, splitmix64

cdef enum:
    MAX_PLIES = 16
    MAX_POOL = 128
    WIN_ROWS = 601
    WIN_COLS = 94


@cython.final
cdef class SimWorker:
    cdef Game g
    cdef MoveGen mg
    cdef int me
    cdef int n_cands
    cdef Move* cands
    cdef uint8_t* active
    cdef public int plies
    cdef uint64_t seed
    cdef ml_t pool[MAX_POOL]
    cdef int pool_n
    cdef uint8_t known[MAX_ALPHABET]
    cdef int known_n
    cdef double* wintable
    cdef object wintable_ref
    # accumulators per candidate
    cdef double* eq_sum
    cdef double* eq_sq
    cdef double* win_sum
    cdef double* win_sq
    cdef long long* n
    cdef double* ply_score     # [cand * MAX_PLIES + ply]
    cdef double* ply_bingo
    cdef public long long iterations
    cdef public bint stop

    def __cinit__(self):
        self.cands = NULL
        self.active = NULL
        self.eq_sum = NULL

    def __init__(self, Game root, Kwg kwg, Klv klv, LetterDistribution ld, candidates, known_opp, wintable,
                 uint64_t seed, int plies=2, int bingo_bonus=50):
        """candidates: (kind, row, col, vertical, tiles, score) tuples for the player on turn in `root`;
        known_opp: machine letters known to be on the opponent's rack; wintable: float64 array [601, 94]."""
        cdef int i, j, ml, c
        import numpy as np
        if not 0 <= plies < MAX_PLIES:
            raise ValueError(f"plies must be 0 to {MAX_PLIES - 1}")
        self.g = root.clone()
        self.mg = MoveGen(kwg, ld, klv, bingo_bonus)
        self.mg.bind(self.g.board)
        self.me = self.g.on_turn
        self.plies = plies
        self.seed = seed
        self.stop = False
        self.iterations = 0
        table = np.ascontiguousarray(wintable, dtype=np.float64)
        if table.shape != (WIN_ROWS, WIN_COLS):
            raise ValueError(f"the win table must be {WIN_ROWS} x {WIN_COLS}")
        self.wintable_ref = table
        cdef double[:, ::1] view = table
        self.wintable = &view[0, 0]
        # the unseen pool less the known opponent tiles
        memset(self.known, 0, MAX_ALPHABET)
        self.known_n = 0
        for t in known_opp:
            self.known[t] += 1
            self.known_n += 1
        counts = [0] * ld.size
        for t in root.rack(1 - self.me):
            counts[t] += 1
        for t in root.bag_list():
            counts[t] += 1
        for ml in range(ld.size):
            counts[ml] -= self.known[ml]
            if counts[ml] < 0:
                raise ValueError(f"known opponent tile {ld.label(ml)} is not among the unseen tiles")
        self.pool_n = 0
        for ml in range(ld.size):
            for c in range(counts[ml]):
                if self.pool_n >= MAX_POOL:
                    raise ValueError("too many unseen tiles")
                self.pool[self.pool_n] = ml
                self.pool_n += 1
        self.n_cands = len(candidates)
        self.cands = <Move*> calloc(max(1, self.n_cands), sizeof(Move))
        self.active = <uint8_t*> malloc(max(1, self.n_cands))
        self.eq_sum = <double*> calloc(max(1, self.n_cands), sizeof(double))
        self.eq_sq = <double*> calloc(max(1, self.n_cands), sizeof(double))
        self.win_sum = <double*> calloc(max(1, self.n_cands), sizeof(double))
        self.win_sq = <double*> calloc(max(1, self.n_cands), sizeof(double))
        self.n = <long long*> calloc(max(1, self.n_cands), sizeof(long long))
        self.ply_score = <double*> calloc(max(1, self.n_cands) * MAX_PLIES, sizeof(double))
        self.ply_bingo = <double*> calloc(max(1, self.n_cands) * MAX_PLIES, sizeof(double))
        if self.ply_bingo == NULL or self.cands == NULL:
            raise MemoryError()
        for i, (kind, row, col, vertical, tiles, score) in enumerate(candidates):
            self.active[i] = 1
            move_from_fields(&self.cands[i], kind, row, col, vertical, tiles, score)

    def __dealloc__(self):
        free(self.cands)
        free(self.active)
        free(self.eq_sum)
        free(self.eq_sq)
        free(self.win_sum)
        free(self.win_sq)
        free(self.n)
        free(self.ply_score)
        free(self.ply_bingo)

    def set_active(self, int i, bint on):
        self.active[i] = on

    cdef double win_lookup(self, int spread, int unseen) noexcept nogil:
        if spread > 300:
            spread = 300
        elif spread < -300:
            spread = -300
        if unseen > WIN_COLS - 1:
            unseen = WIN_COLS - 1
        return self.wintable[(300 - spread) * WIN_COLS + unseen]

    cdef void iterate(self, uint64_t index) noexcept nogil:
        cdef Rng rng
        cdef uint64_t st = self.seed ^ (index * 0xD1B54A32D192ED03ULL)
        cdef ml_t shuffled[MAX_POOL]
        cdef uint8_t opp[MAX_ALPHABET]
        cdef int i, j, c, ply, k, mover, need, start, end_spread, opp_p = 1 - self.me, u
        cdef int leave_p[MAX_PLIES]
        cdef int leave_v[MAX_PLIES]
        cdef ml_t t
        cdef Move best
        cdef double leftover, eq, win
        cdef int our_leave, their_leave
        rng_seed(&rng, splitmix64(&st))
        memcpy(shuffled, self.pool, self.pool_n * sizeof(ml_t))
        for i in range(self.pool_n - 1, 0, -1):
            j = <int> rng_below(&rng, i + 1)
            t = shuffled[i]
            shuffled[i] = shuffled[j]
            shuffled[j] = t
        memcpy(opp, self.known, MAX_ALPHABET)
        need = RACK_SIZE - self.known_n
        if need > self.pool_n:
            need = self.pool_n
        if need < 0:
            need = 0
        for i in range(need):
            opp[shuffled[i]] += 1
        self.g.set_hidden(opp_p, opp, &shuffled[need], self.pool_n - need)
        start = self.g.score[self.me] - self.g.score[opp_p]
        for c in range(self.n_cands):
            if not self.active[c]:
                continue
            self.g.play_c(&self.cands[c])
            k = 1
            for ply in range(self.plies):
                if self.g.over:
                    break
                mover = self.g.on_turn
                self.mg.gen_c(self.g.racks[mover], self.g.bag_n, self.g.rack_value(1 - mover), RECORD_BEST, 1,
                              False)
                best = self.mg.move_buf[0]
                leave_p[ply] = mover
                leave_v[ply] = self.mg.leave_value[best.leave_mask] if self.g.bag_n > 0 else 0
                self.ply_score[c * MAX_PLIES + ply] += best.score
                if best.kind == MOVE_PLACE and best.n_tiles == RACK_SIZE:
                    self.ply_bingo[c * MAX_PLIES + ply] += 1
                self.g.play_c(&best)
                k += 1
            # leftover: the leaves kept at the last two plies, ours minus theirs
            our_leave = 0
            their_leave = 0
            for i in range(k - 1 - 2 if k - 1 >= 2 else 0, k - 1):
                if leave_p[i] == self.me:
                    our_leave = leave_v[i]
                else:
                    their_leave = leave_v[i]
            leftover = (our_leave - their_leave) / <double> EQUITY_SCALE
            end_spread = self.g.score[self.me] - self.g.score[opp_p]
            eq = (end_spread - start) + leftover
            if self.g.over or self.g.bag_n + self.g.rack_n[0] + self.g.rack_n[1] == 0:
                win = 1.0 if end_spread > 0 else (0.5 if end_spread == 0 else 0.0)
            else:
                i = end_spread + <int> lround(leftover)
                if self.g.on_turn == self.me:
                    u = self.g.bag_n + self.g.rack_n[opp_p]
                    win = self.win_lookup(i, u)
                else:
                    u = self.g.bag_n + self.g.rack_n[self.me]
                    win = 1.0 - self.win_lookup(-i, u)
            self.eq_sum[c] += eq
            self.eq_sq[c] += eq * eq
            self.win_sum[c] += win
            self.win_sq[c] += win * win
            self.n[c] += 1
            for i in range(k):
                self.g.undo_c()
        self.iterations += 1

    def run(self, uint64_t first, uint64_t step, int count):
        """Iterations first, first + step, ... (count of them), GIL released; stops early on self.stop."""
        cdef int i, done = 0
        with nogil:
            for i in range(count):
                if self.stop:
                    break
                self.iterate(first + i * step)
                done += 1
        return done

    def stats(self):
        """Per candidate: (n, eq_sum, eq_sq, win_sum, win_sq, [ply score sums], [ply bingo counts])."""
        out = []
        cdef int c, p
        for c in range(self.n_cands):
            out.append((self.n[c], self.eq_sum[c], self.eq_sq[c], self.win_sum[c], self.win_sq[c],
                        [self.ply_score[c * MAX_PLIES + p] for p in range(self.plies)],
                        [self.ply_bingo[c * MAX_PLIES + p] for p in range(self.plies)]))
        return out
