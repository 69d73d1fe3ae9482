# Inference of the opponent's kept tiles from their last play (the rangefinder idea of Macondo,
# written afresh here). For each candidate rack the opponent could have held on the board before
# their play, a best-mode search gives their best static equity; the rack is consistent with what they did
# when the play's own equity with that rack (its score plus the value of the leave it keeps) is within a
# tolerance of that best. An exchange of n tiles is consistent when the rack's best n-tile exchange is.
#
# The candidate leaves are multisets drawn from a pool (the tiles the inferring player cannot see): every one
# of them with its hypergeometric multiplicity (enumerate_leaves), or random draws when they are too many
# (sample_leaves). Each InferWorker evaluates a range of them with the GIL released; a Python driver splits
# the ranges between threads, so the result never depends on timing.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint64_t
from libc.string cimport memset, memcpy

from engine_cy.common cimport ml_t, equity_t, MAX_ALPHABET, RACK_SIZE, EQUITY_SCALE, binom
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.movegen cimport MoveGen, RECORD_BEST
from engine_cy.rng cimport Rng, rng_seed, rng_below

import numpy as np

cdef extern from *:
    """
    static inline int macondo_infer_read_flag(const int* p) { return *(const volatile int*) p; }
    """
    int read_flag "macondo_infer_read_flag"(const int* p) noexcept nogil

cdef enum:
    MODE_PLACE = 0
    MODE_EXCHANGE = 1
    MAX_POOL = 256


def count_leaves(pool, int k):
    """Distinct multisets of k tiles that the pool (counts by machine letter) can supply."""
    ways = [1] + [0] * k
    for c in pool:
        nxt = [0] * (k + 1)
        for have in range(k + 1):
            if ways[have]:
                for take in range(min(int(c), k - have) + 1):
                    nxt[have + take] += ways[have]
        ways = nxt
    return ways[k]


cdef void _enum(const int* pool, int size, int ml, int left, uint8_t* cur, double w,
                uint8_t* out, double* weights, long long* n) noexcept nogil:
    cdef int c, top
    if left == 0:
        memcpy(&out[n[0] * size], cur, size)
        weights[n[0]] = w
        n[0] += 1
        return
    if ml >= size:
        return
    top = pool[ml] if pool[ml] < left else left
    for c in range(top, -1, -1):
        cur[ml] = <uint8_t> c
        _enum(pool, size, ml + 1, left - c, cur, w * binom(pool[ml], c), out, weights, n)
    cur[ml] = 0


def enumerate_leaves(pool, int k):
    """Every multiset of k tiles from the pool: (counts uint8 [n, size], multiplicity float64 [n]), the
    multiplicity being the number of ways to draw it (product of binomials), so multiplicity / C(N, k) is its
    probability in a random draw."""
    cdef int size = len(pool), i
    cdef int cpool[MAX_ALPHABET]
    cdef uint8_t cur[MAX_ALPHABET]
    cdef long long n = 0
    if not 0 <= k <= RACK_SIZE or size > MAX_ALPHABET:
        raise ValueError("bad leave size or pool")
    for i in range(size):
        cpool[i] = int(pool[i])
    total = count_leaves(pool, k)
    out = np.zeros((max(1, total), size), dtype=np.uint8)
    weights = np.zeros(max(1, total), dtype=np.float64)
    cdef uint8_t[:, ::1] ov = out
    cdef double[::1] wv = weights
    memset(cur, 0, sizeof(cur))
    with nogil:
        _enum(cpool, size, 0, k, cur, 1.0, &ov[0, 0], &wv[0], &n)
    return out[:n], weights[:n]


def sample_leaves(pool, int k, long long count, uint64_t seed):
    """`count` random draws of k tiles from the pool (each a uniform draw without replacement), as counts
    uint8 [count, size]."""
    cdef int size = len(pool), i, j, t, pn = 0
    cdef long long s
    cdef ml_t tiles[MAX_POOL]
    cdef Rng rng
    for i in range(size):
        for j in range(int(pool[i])):
            if pn >= MAX_POOL:
                raise ValueError("pool too large")
            tiles[pn] = <ml_t> i
            pn += 1
    if not 0 <= k <= pn:
        raise ValueError("leave larger than the pool")
    out = np.zeros((max(1, count), size), dtype=np.uint8)
    cdef uint8_t[:, ::1] ov = out
    rng_seed(&rng, seed)
    with nogil:
        for s in range(count):
            # partial Fisher-Yates: the first k of a shuffle
            for i in range(k):
                j = i + <int> rng_below(&rng, pn - i)
                t = tiles[i]
                tiles[i] = tiles[j]
                tiles[j] = <ml_t> t
                ov[s, tiles[i]] += 1
    return out[:count]


@cython.final
cdef class InferWorker:
    """Evaluates candidate racks on one board (the board before the opponent's play, cross-sets valid).
    mode 'place': the rack is `played` + the leave, and the play (its score and tiles played) is judged;
    mode 'exchange': the leave is the whole rack, and the best exchange of `n_exchanged` tiles is judged."""
    cdef MoveGen mg
    cdef Board board
    cdef int size
    cdef int mode
    cdef uint8_t played[MAX_ALPHABET]
    cdef int n_played
    cdef int play_score
    cdef int n_exchanged
    cdef int bag_tiles
    cdef equity_t tolerance
    cdef public int stop

    def __init__(self, Board board, Kwg kwg, Klv klv, LetterDistribution ld, str mode, played, int play_score,
                 int n_exchanged, int bag_tiles, int tolerance_mp, int bingo_bonus=50):
        cdef int i
        if not board.cross_valid:
            raise ValueError("the board's cross-sets are not computed")
        if mode not in ("place", "exchange"):
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = MODE_PLACE if mode == "place" else MODE_EXCHANGE
        self.board = board
        self.size = ld.size
        self.mg = MoveGen(kwg, ld, klv, bingo_bonus)
        self.mg.bind(board)
        memset(self.played, 0, MAX_ALPHABET)
        self.n_played = 0
        for t in played:
            i = t
            if not 0 <= i < ld.size:
                raise ValueError("played tile outside the alphabet")
            self.played[i] += 1
            self.n_played += 1
        if self.n_played > RACK_SIZE:
            raise ValueError("too many played tiles")
        if self.mode == MODE_EXCHANGE and not 1 <= n_exchanged <= RACK_SIZE:
            raise ValueError("an exchange has 1 to 7 tiles")
        if tolerance_mp < 0:
            raise ValueError("tolerance must not be negative")
        self.play_score = play_score
        self.n_exchanged = n_exchanged
        self.bag_tiles = bag_tiles
        self.tolerance = tolerance_mp
        self.stop = 0

    cdef bint judge(self, const uint8_t* leave, uint8_t* kept, int32_t* best_eq, int32_t* play_eq) noexcept nogil:
        cdef uint8_t rack[MAX_ALPHABET]
        cdef int ml, i, want, kept_n
        cdef uint8_t mask = 0, m
        cdef equity_t eq, top
        memset(rack, 0, MAX_ALPHABET)
        for ml in range(self.size):
            rack[ml] = leave[ml]
            if self.mode == MODE_PLACE:
                rack[ml] += self.played[ml]
        self.mg.gen_c(rack, self.bag_tiles, -1, RECORD_BEST, 1, False)
        top = self.mg.move_buf[0].equity
        best_eq[0] = top
        if self.mode == MODE_PLACE:
            # the leave's canonical mask: the first leave[ml] instance bits of each letter
            for ml in range(self.size):
                if leave[ml]:
                    mask |= <uint8_t> (((1 << leave[ml]) - 1) << self.mg.first_bit[ml])
            eq = self.mg.equity_for(self.play_score, self.n_played, mask)
            play_eq[0] = eq
            memcpy(kept, leave, self.size)
            return eq + self.tolerance >= top
        # exchange: the best kept sub-multiset with n_exchanged tiles out
        want = self.mg.rack_tiles - self.n_exchanged
        kept_n = -1
        eq = 0
        for i in range(self.mg.n_sub_masks):
            if self.mg.sub_sizes[i] != want:
                continue
            m = self.mg.sub_masks[i]
            if kept_n < 0 or self.mg.equity_for(0, self.n_exchanged, m) > eq:
                eq = self.mg.equity_for(0, self.n_exchanged, m)
                mask = m
                kept_n = want
        if kept_n < 0:
            play_eq[0] = -2147483647
            memset(kept, 0, self.size)
            return False
        play_eq[0] = eq
        for ml in range(self.size):
            kept[ml] = 0
            for i in range(rack[ml]):
                if mask & (1 << (self.mg.first_bit[ml] + i)):
                    kept[ml] += 1
        return eq + self.tolerance >= top

    def run(self, leaves, long long start, long long end, accepted, kept, best_eq, play_eq):
        """Judge leaves[start:end] (counts [n, size]); writes accepted (uint8), kept (uint8 [n, size]: the
        leave the opponent keeps, for an exchange the best exchange's), best_eq and play_eq (int32
        millipoints). Returns how many were judged (fewer once stop is set)."""
        cdef const uint8_t[:, ::1] lv = leaves
        cdef uint8_t[::1] av = accepted
        cdef uint8_t[:, ::1] kv = kept
        cdef int32_t[::1] bv = best_eq
        cdef int32_t[::1] pv = play_eq
        cdef long long i, done = 0
        if lv.shape[1] != self.size or kv.shape[1] != self.size:
            raise ValueError("leave arrays must have one column per letter")
        if start < 0 or end > lv.shape[0] or end > av.shape[0] or end > kv.shape[0] or end > bv.shape[0] \
                or end > pv.shape[0]:
            raise ValueError("range outside the arrays")
        with nogil:
            for i in range(start, end):
                if read_flag(&self.stop):
                    break
                av[i] = self.judge(&lv[i, 0], &kv[i, 0], &bv[i], &pv[i])
                done += 1
        return done
