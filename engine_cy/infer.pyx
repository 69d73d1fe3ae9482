# Inference of the opponent's kept tiles from their play (the rangefinder idea of Macondo, written afresh
# here). For each candidate rack the opponent could have held on the board before their play, the rack's
# moves are generated and the play is judged against them, by one of two models:
# - tolerance: a best-mode search gives the rack's best static equity; the rack is consistent (likelihood 1)
#   when the play's own equity with it (its score plus the value of the leave it keeps) is within a tolerance
#   of that best, else inconsistent (likelihood 0);
# - softmax: the likelihood is exp(v(play) / T) / sum over the rack's top N moves by equity of exp(v(m) / T),
#   v being the static equity in points or the static win percentage from the win table, T a temperature (T 0:
#   the limit, the best play only, ties sharing).
# An exchange of n tiles is judged as the rack's best n-tile exchange (its leave is the one taken as kept); a
# pass by the equity of keeping the whole rack.
#
# The candidate leaves are multisets drawn from a pool (the tiles the inferring player cannot see): every one
# of them with its hypergeometric multiplicity (enumerate_leaves), or random draws when they are too many
# (sample_leaves). Each InferWorker evaluates a range of them with the GIL released; a Python driver splits
# the ranges between threads, so the result never depends on timing. split_racks lists, for the opponent's
# earlier turns, the leaves a later rack can have been kept from.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint64_t
from libc.string cimport memset, memcpy
from libc.math cimport exp, log, floor, INFINITY

from engine_cy.common cimport ml_t, equity_t, MAX_ALPHABET, RACK_SIZE, EQUITY_SCALE, binom
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.movegen cimport MoveGen, RECORD_BEST, RECORD_TOP_N
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
    MODE_PASS = 2
    MAX_POOL = 256
    WIN_ROWS = 601
    MIN_WIN_COLS = 2           # a win table's columns: unseen tiles 0 .. columns - 1 (as the simulation's)
    MAX_WIN_COLS = 401
    MAX_TOP_N = 1000

cdef enum:
    MODEL_TOLERANCE = 0
    MODEL_SOFTMAX = 1


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


cdef long long _split_one(const uint8_t* rack, int size, int ml, int left, const int* played,
                          const int* avail, uint8_t* cur, double w, long long parent, uint8_t* out,
                          double* weights, long long* parents, long long n, bint write) noexcept nogil:
    """The sub-multisets of `left` more tiles of rack[ml:] (cur holds the choice so far), with p + S within
    avail; written from row n when `write`. Returns the row count after them."""
    cdef int c, top
    if left == 0:
        if write:
            memcpy(&out[n * size], cur, size)
            weights[n] = w
            parents[n] = parent
        return n + 1
    if ml >= size:
        return n
    top = rack[ml] if rack[ml] < left else left
    if avail[ml] - played[ml] < top:
        top = avail[ml] - played[ml]
    for c in range(top, -1, -1):
        cur[ml] = <uint8_t> c
        # C(R, S) / C(p + S, p): the kept tiles as a random part of the rack, given the tiles played from it
        n = _split_one(rack, size, ml + 1, left - c, played, avail, cur,
                       w * binom(rack[ml], c) / binom(played[ml] + c, played[ml]), parent, out, weights, parents,
                       n, write)
    cur[ml] = 0
    return n


def split_racks(racks, int k, played, avail):
    """For each rack R (counts uint8 [n, size]) the leaves S of k tiles that an earlier play of `played`
    (counts by letter) can have kept, R being S plus the tiles drawn after it, with played + S within `avail`
    (the tiles the inferrer could not see at that play). Returns (parent int64 [m], leave uint8 [m, size],
    weight float64 [m]): each S with its probability given R, proportional to C(R, S) / C(played + S, played)
    (the leave and the draw as random parts of a random rack that held the play), normalised over each rack's
    feasible S; a rack without one has no rows."""
    cdef const uint8_t[:, ::1] rv = racks
    cdef int size = rv.shape[1], i
    cdef long long n = rv.shape[0], r, m = 0, start
    cdef int cplayed[MAX_ALPHABET]
    cdef int cavail[MAX_ALPHABET]
    cdef uint8_t cur[MAX_ALPHABET]
    cdef double tot
    if not 0 <= k <= RACK_SIZE or size > MAX_ALPHABET or len(played) != size or len(avail) != size:
        raise ValueError("bad leave size, rack width or counts")
    for i in range(size):
        cplayed[i] = int(played[i])
        cavail[i] = int(avail[i])
    memset(cur, 0, sizeof(cur))
    with nogil:
        for r in range(n):
            m = _split_one(&rv[r, 0], size, 0, k, cplayed, cavail, cur, 1.0, r, NULL, NULL, NULL, m, False)
    out = np.zeros((max(1, m), size), dtype=np.uint8)
    weights = np.zeros(max(1, m), dtype=np.float64)
    parents = np.zeros(max(1, m), dtype=np.int64)
    cdef uint8_t[:, ::1] ov = out
    cdef double[::1] wv = weights
    cdef long long[::1] pv = parents
    m = 0
    with nogil:
        for r in range(n):
            start = m
            m = _split_one(&rv[r, 0], size, 0, k, cplayed, cavail, cur, 1.0, r, &ov[0, 0], &wv[0], &pv[0], m,
                           True)
            tot = 0.0
            for i in range(<int> (m - start)):
                tot += wv[start + i]
            if tot > 0:
                for i in range(<int> (m - start)):
                    wv[start + i] /= tot
    return parents[:m], out[:m], weights[:m]


@cython.final
cdef class InferWorker:
    """Evaluates candidate racks on one board (the board before the opponent's play, cross-sets valid).
    mode 'place': the rack is `played` + the leave, and the play (its score and tiles played) is judged;
    mode 'exchange': the leave is the whole rack, and its best exchange of `n_exchanged` tiles is judged;
    mode 'pass': the leave is the whole rack, and keeping all of it is judged.
    model 'tolerance' (tolerance_mp) or 'softmax' (temperature in the units of the value, top_n moves; the
    value is equity in points, or with a win table the static win percentage at `spread` points ahead with
    `unseen` tiles unseen by the mover). phony: the play is not a word, so it is not among the rack's generated
    moves and joins the softmax's sum. play_adjust: millipoints added to the play's equity (an opening play's
    vowel penalty, which the generated moves carry)."""
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
    cdef int model
    cdef double temperature
    cdef int top_n
    cdef object win_table
    cdef const double* wintable
    cdef int win_cols
    cdef double spread
    cdef int unseen
    cdef bint phony
    cdef int play_adjust
    cdef double vals[MAX_TOP_N]
    cdef public int stop

    def __init__(self, Board board, Kwg kwg, Klv klv, LetterDistribution ld, str mode, played, int play_score,
                 int n_exchanged, int bag_tiles, int tolerance_mp, int bingo_bonus=50, *, str model="tolerance",
                 double temperature=0.0, int top_n=20, win_table=None, double spread=0.0, int unseen=0,
                 bint phony=False, int play_adjust=0):
        cdef int i
        cdef const double[:, ::1] tv
        if not board.cross_valid:
            raise ValueError("the board's cross-sets are not computed")
        if mode not in ("place", "exchange", "pass"):
            raise ValueError(f"unknown mode {mode!r}")
        if model not in ("tolerance", "softmax"):
            raise ValueError(f"unknown model {model!r}")
        self.mode = MODE_PLACE if mode == "place" else (MODE_EXCHANGE if mode == "exchange" else MODE_PASS)
        self.model = MODEL_TOLERANCE if model == "tolerance" else MODEL_SOFTMAX
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
        if not (temperature >= 0.0 and temperature < INFINITY):
            raise ValueError("the temperature must be a finite number >= 0")
        if not 1 <= top_n <= MAX_TOP_N:
            raise ValueError(f"top_n must be 1 to {MAX_TOP_N}")
        self.play_score = play_score
        self.n_exchanged = n_exchanged
        self.bag_tiles = bag_tiles
        self.tolerance = tolerance_mp
        self.temperature = temperature
        self.top_n = top_n
        self.spread = spread
        self.unseen = max(unseen, 0)
        self.phony = phony
        self.play_adjust = play_adjust
        self.wintable = NULL
        self.win_table = None
        self.win_cols = 0
        if win_table is not None:
            arr = np.ascontiguousarray(win_table, dtype=np.float64)
            if arr.ndim != 2 or arr.shape[0] != WIN_ROWS or not MIN_WIN_COLS <= arr.shape[1] <= MAX_WIN_COLS:
                raise ValueError(f"the win table must be {WIN_ROWS} x {MIN_WIN_COLS} to {MAX_WIN_COLS}")
            self.win_cols = arr.shape[1]
            self.unseen = min(self.unseen, self.win_cols - 1)   # more unseen tiles read the last column
            self.win_table = arr
            tv = arr
            self.wintable = &tv[0, 0]
        self.stop = 0

    cdef inline double value(self, equity_t eq) noexcept nogil:
        """A move's value for the softmax: equity in points, or the static win percentage (the win table at
        the spread after the move, its equity counted as points, linearly between the table's rows)."""
        cdef double s, row, frac
        cdef int lo
        if self.wintable == NULL:
            return eq / <double> EQUITY_SCALE
        s = self.spread + eq / <double> EQUITY_SCALE
        if s > 300.0:
            s = 300.0
        elif s < -300.0:
            s = -300.0
        row = 300.0 - s
        lo = <int> floor(row)
        if lo >= WIN_ROWS - 1:
            lo = WIN_ROWS - 2
        frac = row - lo
        return 100.0 * (self.wintable[lo * self.win_cols + self.unseen] * (1.0 - frac)
                        + self.wintable[(lo + 1) * self.win_cols + self.unseen] * frac)

    cdef double softmax_ll(self, equity_t play_eq, int32_t* top_eq) noexcept nogil:
        """log P(play | rack) after a top-N generation: the play's term over the sum of the top moves' terms
        (and its own when it is a phony); T 0: the best only, ties sharing. top_eq (or NULL): the top moves'
        equities are written there, INT32_MIN past the last."""
        cdef int i, n = self.mg.n_moves, ties = 0
        cdef double vp = self.value(play_eq), top = -INFINITY, z = 0.0, t = self.temperature
        for i in range(n):
            self.vals[i] = self.value(self.mg.move_buf[i].equity)
            if self.vals[i] > top:
                top = self.vals[i]
            if top_eq != NULL:
                top_eq[i] = self.mg.move_buf[i].equity
        if top_eq != NULL:
            for i in range(n, self.top_n):
                top_eq[i] = -2147483647 - 1
        if self.phony and vp > top:
            top = vp
        if n == 0 and not self.phony:
            return -INFINITY
        if t == 0.0:
            if vp < top:
                return -INFINITY
            for i in range(n):
                if self.vals[i] == top:
                    ties += 1
            if self.phony:
                ties += 1
            return -log(<double> ties) if ties > 0 else 0.0
        for i in range(n):
            z += exp((self.vals[i] - top) / t)
        if self.phony:
            z += exp((vp - top) / t)
        return (vp - top) / t - log(z)

    cdef bint judge(self, const uint8_t* leave, uint8_t* kept, int32_t* best_eq, int32_t* play_eq, double* ll,
                    int32_t* top_eq) noexcept nogil:
        cdef uint8_t rack[MAX_ALPHABET]
        cdef int ml, i, want, kept_n
        cdef uint8_t mask = 0, m
        cdef equity_t eq, top
        cdef bint softmax = self.model == MODEL_SOFTMAX
        memset(rack, 0, MAX_ALPHABET)
        for ml in range(self.size):
            rack[ml] = leave[ml]
            if self.mode == MODE_PLACE:
                rack[ml] += self.played[ml]
        if softmax:
            self.mg.gen_c(rack, self.bag_tiles, -1, RECORD_TOP_N, self.top_n, False)
            top = -2147483647
            for i in range(self.mg.n_moves):
                if self.mg.move_buf[i].equity > top:
                    top = self.mg.move_buf[i].equity
        else:
            self.mg.gen_c(rack, self.bag_tiles, -1, RECORD_BEST, 1, False)
            top = self.mg.move_buf[0].equity
        best_eq[0] = top
        if self.mode == MODE_PLACE or self.mode == MODE_PASS:
            if self.mode == MODE_PLACE:
                # the leave's canonical mask: the first leave[ml] instance bits of each letter
                for ml in range(self.size):
                    if leave[ml]:
                        mask |= <uint8_t> (((1 << leave[ml]) - 1) << self.mg.first_bit[ml])
                eq = self.mg.equity_for(self.play_score, self.n_played, mask) + self.play_adjust
            else:
                eq = self.mg.equity_for(0, 0, self.mg.cur_mask)
            play_eq[0] = eq
            memcpy(kept, leave, self.size)
            if softmax:
                ll[0] = self.softmax_ll(eq, top_eq)
                return ll[0] > -INFINITY
            ll[0] = 0.0 if eq + self.tolerance >= top else -INFINITY
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
            ll[0] = -INFINITY
            if softmax and top_eq != NULL:
                self.softmax_ll(0, top_eq)
            return False
        play_eq[0] = eq
        for ml in range(self.size):
            kept[ml] = 0
            for i in range(rack[ml]):
                if mask & (1 << (self.mg.first_bit[ml] + i)):
                    kept[ml] += 1
        if softmax:
            ll[0] = self.softmax_ll(eq, top_eq)
            return ll[0] > -INFINITY
        ll[0] = 0.0 if eq + self.tolerance >= top else -INFINITY
        return eq + self.tolerance >= top

    def run(self, leaves, long long start, long long end, accepted, kept, best_eq, play_eq, loglik=None,
            top_eq=None):
        """Judge leaves[start:end] (counts [n, size]); writes accepted (uint8: a likelihood above 0), kept (uint8
        [n, size]: the leave the opponent keeps, for an exchange the best exchange's), best_eq and play_eq (int32
        millipoints), loglik (float64, optional: the log-likelihood of the play, -inf for 0) and top_eq (int32
        [n, top_n], optional, softmax only: the equities of the rack's top moves, INT32_MIN past the last).
        Returns how many were judged (fewer once stop is set)."""
        cdef const uint8_t[:, ::1] lv = leaves
        cdef uint8_t[::1] av = accepted
        cdef uint8_t[:, ::1] kv = kept
        cdef int32_t[::1] bv = best_eq
        cdef int32_t[::1] pv = play_eq
        cdef double[::1] llv
        cdef int32_t[:, ::1] tv
        cdef double dummy = 0.0
        cdef bint has_ll = loglik is not None, has_top = top_eq is not None
        cdef long long i, done = 0
        if lv.shape[1] != self.size or kv.shape[1] != self.size:
            raise ValueError("leave arrays must have one column per letter")
        if start < 0 or end > lv.shape[0] or end > av.shape[0] or end > kv.shape[0] or end > bv.shape[0] \
                or end > pv.shape[0]:
            raise ValueError("range outside the arrays")
        if has_ll:
            llv = loglik
            if end > llv.shape[0]:
                raise ValueError("range outside the arrays")
        if has_top:
            if self.model != MODEL_SOFTMAX:
                raise ValueError("top_eq needs the softmax model")
            tv = top_eq
            if end > tv.shape[0] or tv.shape[1] != self.top_n:
                raise ValueError("top_eq must be [n, top_n]")
        with nogil:
            for i in range(start, end):
                if read_flag(&self.stop):
                    break
                av[i] = self.judge(&lv[i, 0], &kv[i, 0], &bv[i], &pv[i], &llv[i] if has_ll else &dummy,
                                   &tv[i, 0] if has_top else NULL)
                done += 1
        return done
