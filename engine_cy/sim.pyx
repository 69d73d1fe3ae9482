# Monte Carlo simulation. One SimWorker per thread: each iteration draws a random
# opponent rack and bag order (from a seed derived from the iteration number only, so results depend on
# the seed and thread count, never on timing), then plays every active candidate out for P plies of
# static-equity moves with that same rack and order, and accumulates equity and win samples in C.
# With enable_stats it also keeps, per candidate and ply, a histogram of the move's score and a heatmap of the
# squares it put tiles on, and per candidate the opponent's rack before and after their reply (ply 1).
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy
from libc.math cimport lround

from engine_cy.common cimport ml_t, MAX_ALPHABET, RACK_SIZE, EQUITY_SCALE
from engine_cy.game cimport Game
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.common cimport MAX_BOARD_DIM
from engine_cy.board cimport Board
from engine_cy.move cimport Move, MOVE_PLACE, MOVE_EXCHANGE, move_from_fields, move_cmp
from engine_cy.movegen cimport MoveGen, RECORD_BEST
from engine_cy.rng cimport Rng, rng_seed, rng_below, rng_next, splitmix64

cdef extern from *:
    """
    static inline int macondo_sim_read_flag(const int* p) { return *(const volatile int*) p; }
    """
    int read_flag "macondo_sim_read_flag"(const int* p) noexcept nogil


cdef enum:
    LANES = 2 * MAX_BOARD_DIM
    MAX_PLIES = 16
    MAX_POOL = 256             # unseen tiles (the 21x21 game has 200)
    WIN_ROWS = 601
    MIN_WIN_COLS = 2           # a win table's columns: unseen tiles 0 .. columns - 1 (a 100-tile game: 94)
    MAX_WIN_COLS = 401
    SCORE_BINS = 16            # statistics: score bins of SCORE_BIN_WIDTH points, the last one open-ended
    SCORE_BIN_WIDTH = 10

SCORE_HISTOGRAM_BINS = SCORE_BINS
SCORE_HISTOGRAM_WIDTH = SCORE_BIN_WIDTH


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
    cdef int win_cols
    cdef object wintable_ref
    # accumulators per candidate
    cdef double* eq_sum
    cdef double* eq_sq
    cdef double* win_sum
    cdef double* win_sq
    cdef long long* n
    cdef double* ply_score     # [cand * MAX_PLIES + ply]
    cdef double* ply_bingo
    # one iteration's samples, added to the accumulators only when the iteration completes (a stop in the
    # middle of an iteration discards it, so the statistics always cover whole iterations)
    cdef double* it_eq
    cdef double* it_win
    cdef double* it_ply_score  # [cand * MAX_PLIES + ply]
    cdef double* it_ply_bingo
    cdef uint8_t* it_done
    cdef public long long iterations
    cdef public long long cut_iterations   # iterations a stop interrupted after some work (discarded)
    cdef public int stop       # set from another thread; polled per candidate and per ply
    # The opponent's first reply reuses a search of the root board: a candidate changes only a few lanes
    # (its own, its neighbours, the crossing ones), and with tiles left in the bag a placement's equity
    # depends only on the rack and its lane. So each iteration searches every lane of the root board once
    # for the opponent's rack and, per candidate, only the lanes the candidate changed.
    cdef uint8_t* affected           # [cand * LANES + d * MAX_BOARD_DIM + lane]
    cdef uint8_t all_lanes[LANES]
    cdef Move base_best[LANES]
    cdef uint8_t base_has[LANES]
    cdef public bint reuse_lanes
    # inference: the opponent keeps one of these leaves, drawn by weight, the rest of their rack
    # filling at random; n_inf = 0 draws the whole rack at random
    cdef int n_inf
    cdef ml_t* inf_tiles        # [n_inf * RACK_SIZE]
    cdef uint8_t* inf_len
    cdef double* inf_cum        # cumulative weights
    # track_pairs: per two candidates a < b simulated on the same iteration, [(a * n + b) * 5 ...]: the
    # iterations, the sum and the sum of squares of win(a) - win(b), the same of equity(a) - equity(b)
    cdef double* pair
    # statistics (enable_stats): one iteration's moves per candidate and ply and the plies played, added when
    # the iteration completes into numpy arrays this worker owns (written through these pointers in C)
    cdef Move* it_move          # [cand * MAX_PLIES + ply]
    cdef uint8_t* it_plies
    cdef int64_t* st_hist       # [(cand * plies + ply) * SCORE_BINS + bin]
    cdef uint32_t* st_heat      # [(cand * plies + ply) * dim * dim + row * dim + col]
    cdef int64_t* st_kept       # [cand * MAX_ALPHABET + letter]: the opponent's leave after their reply
    cdef int64_t* st_held       # [cand * MAX_ALPHABET + letter]: the opponent's rack before it
    cdef int64_t* st_replies    # [cand]: iterations in which the opponent replied
    cdef object st_arrays
    cdef int n_letters

    def __cinit__(self):
        self.cands = NULL
        self.active = NULL
        self.eq_sum = NULL
        self.it_eq = NULL
        self.it_win = NULL
        self.it_ply_score = NULL
        self.it_ply_bingo = NULL
        self.it_done = NULL
        self.n_inf = 0
        self.inf_tiles = NULL
        self.inf_len = NULL
        self.inf_cum = NULL
        self.pair = NULL
        self.it_move = NULL
        self.it_plies = NULL
        self.st_hist = NULL

    def __init__(self, Game root, Kwg kwg, Klv klv, LetterDistribution ld, candidates, known_opp, wintable,
                 uint64_t seed, int plies=2, int bingo_bonus=50):
        """candidates: (kind, row, col, vertical, tiles, score) tuples for the player on turn in `root`;
        known_opp: machine letters known to be on the opponent's rack; wintable: float64 array [601, C]: rows spread
        +300..-300, columns unseen tiles 0..C-1 (more unseen tiles read the last column)."""
        cdef int i, j, ml, c
        import numpy as np
        if not 0 <= plies < MAX_PLIES:
            raise ValueError(f"plies must be 0 to {MAX_PLIES - 1}")
        self.g = root.clone()
        self.mg = MoveGen(kwg, ld, klv, bingo_bonus)
        self.mg.bind(self.g.board)
        self.me = self.g.on_turn
        self.n_letters = ld.size
        self.plies = plies
        self.seed = seed
        self.stop = 0
        self.iterations = 0
        self.cut_iterations = 0
        table = np.ascontiguousarray(wintable, dtype=np.float64)
        if table.ndim != 2 or table.shape[0] != WIN_ROWS or not MIN_WIN_COLS <= table.shape[1] <= MAX_WIN_COLS:
            raise ValueError(f"the win table must be {WIN_ROWS} x {MIN_WIN_COLS} to {MAX_WIN_COLS}")
        self.win_cols = table.shape[1]
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
        self.it_eq = <double*> calloc(max(1, self.n_cands), sizeof(double))
        self.it_win = <double*> calloc(max(1, self.n_cands), sizeof(double))
        self.it_ply_score = <double*> calloc(max(1, self.n_cands) * MAX_PLIES, sizeof(double))
        self.it_ply_bingo = <double*> calloc(max(1, self.n_cands) * MAX_PLIES, sizeof(double))
        self.it_done = <uint8_t*> calloc(max(1, self.n_cands), 1)
        if self.ply_bingo == NULL or self.cands == NULL or self.it_eq == NULL or self.it_win == NULL or \
                self.it_ply_score == NULL or self.it_ply_bingo == NULL or self.it_done == NULL:
            raise MemoryError()
        for i, (kind, row, col, vertical, tiles, score) in enumerate(candidates):
            self.active[i] = 1
            move_from_fields(&self.cands[i], kind, row, col, vertical, tiles, score)
        self.affected = <uint8_t*> calloc(max(1, self.n_cands) * LANES, 1)
        if self.affected == NULL:
            raise MemoryError()
        self.reuse_lanes = self.g.board.n_tiles > 0
        memset(self.all_lanes, 0, LANES)
        for i in range(self.g.board.dim):
            self.all_lanes[i] = 1
            self.all_lanes[MAX_BOARD_DIM + i] = 1
        live_total = 0
        live_affected = 0
        for i in range(self.n_cands):
            live, aff = self.mark_lanes(i)
            live_total += live
            live_affected += aff
        # reuse pays when the candidates change a small share of the lanes that hold plays (not on an
        # almost empty board, where every candidate touches most of them)
        if live_total == 0 or live_affected + live_total / max(1, self.n_cands) > 0.6 * live_total:
            self.reuse_lanes = False

    cdef tuple mark_lanes(self, int c):
        """Flag the lanes whose search inputs (tiles, cross-sets, cross-scores, neighbour tiles) candidate
        c changes, by playing it on the root and comparing. Returns (lanes that can hold a play after c,
        how many of them are flagged)."""
        cdef Board b = self.g.board
        cdef int dim = b.dim, d, lane, idx, sq
        cdef ml_t before_t[2][MAX_BOARD_DIM * MAX_BOARD_DIM]
        cdef uint64_t before_cs[2][MAX_BOARD_DIM * MAX_BOARD_DIM]
        cdef int32_t before_csc[2][MAX_BOARD_DIM * MAX_BOARD_DIM]
        cdef uint8_t tile_changed[LANES]
        cdef uint8_t has_tile[LANES]
        cdef uint8_t* out = &self.affected[c * LANES]
        cdef int live = 0, live_aff = 0
        memcpy(before_t, b.tiles, sizeof(before_t))
        memcpy(before_cs, b.cross_set, sizeof(before_cs))
        memcpy(before_csc, b.cross_score, sizeof(before_csc))
        self.g.play_c(&self.cands[c])
        memset(tile_changed, 0, LANES)
        memset(has_tile, 0, LANES)
        for d in range(2):
            for lane in range(dim):
                for idx in range(dim):
                    sq = lane * dim + idx
                    if b.tiles[d][sq] != 0:
                        has_tile[d * MAX_BOARD_DIM + lane] = 1
                    if b.tiles[d][sq] != before_t[d][sq]:
                        tile_changed[d * MAX_BOARD_DIM + lane] = 1
                        out[d * MAX_BOARD_DIM + lane] = 1
                    if b.cross_set[d][sq] != before_cs[d][sq] or b.cross_score[d][sq] != before_csc[d][sq]:
                        out[d * MAX_BOARD_DIM + lane] = 1
        self.g.undo_c()
        for d in range(2):
            for lane in range(dim):
                if tile_changed[d * MAX_BOARD_DIM + lane]:
                    # neighbouring lanes see these tiles as perpendicular neighbours (anchors, cross words)
                    if lane > 0:
                        out[d * MAX_BOARD_DIM + lane - 1] = 1
                    if lane < dim - 1:
                        out[d * MAX_BOARD_DIM + lane + 1] = 1
        for d in range(2):
            for lane in range(dim):
                idx = d * MAX_BOARD_DIM + lane
                if has_tile[idx] or (lane > 0 and has_tile[idx - 1]) or (lane < dim - 1 and has_tile[idx + 1]):
                    live += 1
                    live_aff += out[idx]
        return live, live_aff

    cdef void first_reply(self, int c, int mover, Move* best) noexcept nogil:
        """The opponent's best move after candidate c (played): the root search's best in every unchanged
        lane seeds a search of the exchanges, the pass and the changed lanes (shadow-bounded). It also
        leaves the rack's leave table in place for the caller."""
        cdef int i
        cdef uint8_t* aff = &self.affected[c * LANES]
        cdef Move seed
        cdef bint have = False
        for i in range(LANES):
            if not aff[i] and self.base_has[i] and (not have or move_cmp(&self.base_best[i], &seed) < 0):
                seed = self.base_best[i]
                have = True
        self.mg.seeded_best(self.g.racks[mover], self.g.bag_n, aff, &seed if have else NULL, best)

    def __dealloc__(self):
        free(self.affected)
        free(self.cands)
        free(self.active)
        free(self.eq_sum)
        free(self.eq_sq)
        free(self.win_sum)
        free(self.win_sq)
        free(self.n)
        free(self.ply_score)
        free(self.ply_bingo)
        free(self.it_eq)
        free(self.it_win)
        free(self.it_ply_score)
        free(self.it_ply_bingo)
        free(self.it_done)
        free(self.inf_tiles)
        free(self.inf_len)
        free(self.inf_cum)
        free(self.pair)
        free(self.it_move)
        free(self.it_plies)

    def enable_stats(self):
        """From now on, collect per candidate the playouts' statistics (stats_arrays): the score histogram and
        the heatmap of every ply, and the opponent's rack before and after their reply."""
        import numpy as np
        cdef int k = max(1, self.n_cands), pl = max(1, self.plies), dim = self.g.board.dim
        cdef int64_t[:, :, ::1] hist
        cdef uint32_t[:, :, ::1] heat
        cdef int64_t[:, ::1] kept
        cdef int64_t[:, ::1] held
        cdef int64_t[::1] replies
        if self.st_hist != NULL:
            return
        self.it_move = <Move*> calloc(k * MAX_PLIES, sizeof(Move))
        self.it_plies = <uint8_t*> calloc(k, 1)
        if self.it_move == NULL or self.it_plies == NULL:
            raise MemoryError()
        arrays = (np.zeros((k, pl, SCORE_BINS), dtype=np.int64), np.zeros((k, pl, dim * dim), dtype=np.uint32),
                  np.zeros((k, MAX_ALPHABET), dtype=np.int64), np.zeros((k, MAX_ALPHABET), dtype=np.int64),
                  np.zeros(k, dtype=np.int64))
        hist, heat, kept, held, replies = arrays
        self.st_arrays = arrays
        self.st_heat = &heat[0, 0, 0]
        self.st_kept = &kept[0, 0]
        self.st_held = &held[0, 0]
        self.st_replies = &replies[0]
        self.st_hist = &hist[0, 0, 0]

    def stats_arrays(self):
        """Copies of the statistics (enable_stats), None when off: score histograms int64 [candidates, plies,
        SCORE_HISTOGRAM_BINS] (iterations by the ply's score; a ply after the game ended counts as 0 points),
        heatmaps uint32 [candidates, plies, dim * dim] (tiles placed per square), the opponent's leave after
        their reply and their rack before it, int64 [candidates, letters] (summed over iterations), and the
        iterations in which they replied, int64 [candidates]."""
        if self.st_hist == NULL:
            return None
        size = self.g.ld.size
        hist, heat, kept, held, replies = self.st_arrays
        k, pl = self.n_cands, self.plies
        return (hist[:k, :pl].copy(), heat[:k, :pl].copy(), kept[:k, :size].copy(), held[:k, :size].copy(),
                replies[:k].copy())

    cdef void add_stats(self, int c, const uint8_t* opp) noexcept nogil:
        """Add candidate c's playout of the iteration just completed to the statistics; opp is the opponent's
        dealt rack (counts), which their reply (ply 1) is made from."""
        cdef int ply, b, i, dim = self.g.board.dim, played = self.it_plies[c]
        cdef int64_t* h
        cdef uint32_t* hm
        cdef int64_t* kept
        cdef int64_t* held
        cdef Move* m
        cdef ml_t t
        for ply in range(self.plies):
            h = &self.st_hist[(c * self.plies + ply) * SCORE_BINS]
            if ply >= played:
                h[0] += 1
                continue
            m = &self.it_move[c * MAX_PLIES + ply]
            b = m.score // SCORE_BIN_WIDTH if m.score > 0 else 0
            h[b if b < SCORE_BINS else SCORE_BINS - 1] += 1
            if m.kind == MOVE_PLACE:
                hm = &self.st_heat[(c * self.plies + ply) * dim * dim]
                for i in range(m.length):
                    if m.tiles[i] != 0:
                        if m.vertical:
                            hm[(m.row + i) * dim + m.col] += 1
                        else:
                            hm[m.row * dim + m.col + i] += 1
        if played < 1:
            return
        kept = &self.st_kept[c * MAX_ALPHABET]
        held = &self.st_held[c * MAX_ALPHABET]
        for i in range(self.n_letters):
            kept[i] += opp[i]
            held[i] += opp[i]
        m = &self.it_move[c * MAX_PLIES]
        if m.kind == MOVE_PLACE:
            for i in range(m.length):
                t = m.tiles[i]
                if t != 0:
                    kept[0 if t & 0x80 else t] -= 1
        elif m.kind == MOVE_EXCHANGE:
            for i in range(m.length):
                kept[m.tiles[i]] -= 1
        self.st_replies[c] += 1

    def track_pairs(self):
        """From now on, for every two candidates simulated on the same iteration, accumulate the differences of
        their samples (pair_stats): the paired comparison best-arm identification makes (the draws are common, so
        the differences vary much less than either sample)."""
        cdef size_t n = <size_t> max(1, self.n_cands)
        if self.pair == NULL:
            self.pair = <double*> calloc(n * n * 5, sizeof(double))
            if self.pair == NULL:
                raise MemoryError()

    def pair_stats(self, int a):
        """Candidate a against each candidate b (track_pairs): (iterations both were simulated on, the sum and the
        sum of squares of win(a) - win(b), the same for equity(a) - equity(b)); zeros for b = a."""
        cdef int b, k = self.n_cands
        cdef double* p
        cdef double sign
        if not 0 <= a < k:
            raise IndexError("no such candidate")
        out = []
        for b in range(k):
            if b == a or self.pair == NULL:
                out.append((0, 0.0, 0.0, 0.0, 0.0))
                continue
            if a < b:
                p = &self.pair[(<size_t> a * k + b) * 5]
                sign = 1.0
            else:
                p = &self.pair[(<size_t> b * k + a) * 5]
                sign = -1.0
            out.append((<long long> p[0], sign * p[1], p[2], sign * p[3], p[4]))
        return out

    def set_inferred_leaves(self, counts, weights):
        """The opponent's inferred leaves: counts uint8 [n, letters] (each within the unseen pool less the known
        tiles, at most 7 - known tiles) and their weights (> 0). Each iteration draws one by weight and fills
        the rest of the rack at random; an empty list restores uniform draws."""
        import numpy as np
        cdef int n, i, ml, c, k, size = self.g.ld.size
        cdef int pool_counts[MAX_ALPHABET]
        cdef double total = 0.0
        c_arr = np.ascontiguousarray(counts, dtype=np.uint8)
        w_arr = np.ascontiguousarray(weights, dtype=np.float64)
        n = c_arr.shape[0] if c_arr.ndim == 2 else 0
        if n and (c_arr.shape[1] != size or w_arr.shape != (n,)):
            raise ValueError("inferred leaves need one column per letter and one weight each")
        free(self.inf_tiles)
        free(self.inf_len)
        free(self.inf_cum)
        self.inf_tiles = NULL
        self.inf_len = NULL
        self.inf_cum = NULL
        self.n_inf = 0
        if n == 0:
            return
        memset(pool_counts, 0, sizeof(pool_counts))
        for i in range(self.pool_n):
            pool_counts[self.pool[i]] += 1
        self.inf_tiles = <ml_t*> calloc(n * RACK_SIZE, sizeof(ml_t))
        self.inf_len = <uint8_t*> calloc(n, 1)
        self.inf_cum = <double*> calloc(n, sizeof(double))
        if self.inf_tiles == NULL or self.inf_len == NULL or self.inf_cum == NULL:
            raise MemoryError()
        for i in range(n):
            w = float(w_arr[i])
            if not w > 0 or w == float("inf"):
                raise ValueError("inferred leave weights must be positive and finite")
            k = 0
            for ml in range(size):
                c = c_arr[i, ml]
                if c > pool_counts[ml]:
                    raise ValueError(f"inferred leave holds {self.g.ld.label(ml)} beyond the unseen tiles")
                for _ in range(c):
                    if k + self.known_n >= RACK_SIZE:
                        raise ValueError("inferred leave too long for the rack")
                    self.inf_tiles[i * RACK_SIZE + k] = <ml_t> ml
                    k += 1
            self.inf_len[i] = <uint8_t> k
            total += w
            self.inf_cum[i] = total
        self.n_inf = n

    cdef int draw_inferred(self, Rng* rng, ml_t* shuffled, uint8_t* opp) noexcept nogil:
        """Put a leave drawn by weight on the opponent's rack (opp) and take its tiles out of the shuffled pool
        (the remaining tiles keep their shuffled order at the front); returns the tiles left in the pool."""
        cdef double x = (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) * self.inf_cum[self.n_inf - 1]
        cdef int lo = 0, hi = self.n_inf - 1, mid, i, j, n = 0
        cdef uint8_t take[MAX_ALPHABET]
        cdef ml_t* lv
        while lo < hi:
            mid = (lo + hi) // 2
            if self.inf_cum[mid] > x:
                hi = mid
            else:
                lo = mid + 1
        memset(take, 0, MAX_ALPHABET)
        lv = &self.inf_tiles[lo * RACK_SIZE]
        for i in range(self.inf_len[lo]):
            opp[lv[i]] += 1
            take[lv[i]] += 1
        for i in range(self.pool_n):
            if take[shuffled[i]]:
                take[shuffled[i]] -= 1
            else:
                shuffled[n] = shuffled[i]
                n += 1
        return n

    def affected_lanes(self, int c):
        """Lanes (dir, lane) that candidate c changes, whose search the first reply repeats."""
        return [(i // MAX_BOARD_DIM, i % MAX_BOARD_DIM) for i in range(LANES) if self.affected[c * LANES + i]]

    def set_active(self, int i, bint on):
        self.active[i] = on

    def win_at(self, int spread, int unseen):
        """The win probability the playouts read for the player on turn at `spread` with `unseen` tiles unseen
        (spread clamped to +-300, unseen to the table's last column)."""
        return self.win_lookup(spread, unseen)

    cdef double win_lookup(self, int spread, int unseen) noexcept nogil:
        if spread > 300:
            spread = 300
        elif spread < -300:
            spread = -300
        if unseen > self.win_cols - 1:
            unseen = self.win_cols - 1
        return self.wintable[(300 - spread) * self.win_cols + unseen]

    cdef void deal(self, uint64_t index, uint8_t* opp, ml_t* shuffled, int* need_out, int* pool_out) noexcept nogil:
        """Iteration `index`'s opponent rack (opp, counts) and bag order (shuffled[need:pool]): the unseen pool
        shuffled, the known tiles, an inferred leave drawn by weight when inference is on, and the rest of the
        rack from the front of the shuffled pool."""
        cdef Rng rng
        cdef uint64_t st = self.seed ^ (index * 0xD1B54A32D192ED03ULL)
        cdef int i, j, need, pool_n
        cdef ml_t t
        rng_seed(&rng, splitmix64(&st))
        memcpy(shuffled, self.pool, self.pool_n * sizeof(ml_t))
        for i in range(self.pool_n - 1, 0, -1):
            j = <int> rng_below(&rng, i + 1)
            t = shuffled[i]
            shuffled[i] = shuffled[j]
            shuffled[j] = t
        memcpy(opp, self.known, MAX_ALPHABET)
        pool_n = self.pool_n
        need = RACK_SIZE - self.known_n
        if self.n_inf > 0:
            pool_n = self.draw_inferred(&rng, shuffled, opp)
            need = RACK_SIZE - self.known_n - (self.pool_n - pool_n)
        if need > pool_n:
            need = pool_n
        if need < 0:
            need = 0
        for i in range(need):
            opp[shuffled[i]] += 1
        need_out[0] = need
        pool_out[0] = pool_n

    def dealt_opponent_rack(self, uint64_t index):
        """The opponent rack iteration `index` plays against (machine letters), for tests and diagnostics."""
        cdef uint8_t opp[MAX_ALPHABET]
        cdef ml_t shuffled[MAX_POOL]
        cdef int need, pool_n, ml
        self.deal(index, opp, shuffled, &need, &pool_n)
        return [ml for ml in range(self.g.ld.size) for _ in range(opp[ml])]

    cdef bint iterate(self, uint64_t index) noexcept nogil:
        """One iteration over every active candidate; returns False (nothing recorded) when the stop flag
        was seen before it completed."""
        cdef ml_t shuffled[MAX_POOL]
        cdef uint8_t opp[MAX_ALPHABET]
        cdef int i, c, ply, k, mover, need, start, end_spread, opp_p = 1 - self.me, u, pool_n
        cdef int leave_p[MAX_PLIES]
        cdef int leave_v[MAX_PLIES]
        cdef Move best
        cdef double leftover, eq, win
        cdef int our_leave, their_leave
        cdef bint reuse, stopped = False, worked = False
        cdef double* it_ps
        cdef double* it_pb
        cdef double* pp
        cdef double dw, de
        cdef int c2
        self.deal(index, opp, shuffled, &need, &pool_n)
        self.g.set_hidden(opp_p, opp, &shuffled[need], pool_n - need)
        start = self.g.score[self.me] - self.g.score[opp_p]
        reuse = self.reuse_lanes and self.plies > 0 and self.g.bag_n > 0
        if reuse:
            self.mg.lane_bests(self.g.racks[opp_p], self.g.bag_n, self.all_lanes, self.base_best, self.base_has)
        memset(self.it_done, 0, self.n_cands)
        for c in range(self.n_cands):
            if not self.active[c]:
                continue
            if read_flag(&self.stop):
                stopped = True
                break
            it_ps = &self.it_ply_score[c * MAX_PLIES]
            it_pb = &self.it_ply_bingo[c * MAX_PLIES]
            memset(it_ps, 0, MAX_PLIES * sizeof(double))
            memset(it_pb, 0, MAX_PLIES * sizeof(double))
            worked = True
            self.g.play_c(&self.cands[c])
            k = 1
            for ply in range(self.plies):
                if self.g.over:
                    break
                if ply > 0 and read_flag(&self.stop):
                    stopped = True
                    break
                mover = self.g.on_turn
                if ply == 0 and reuse and self.g.bag_n > 0 and mover == opp_p:
                    self.first_reply(c, mover, &best)
                else:
                    self.mg.gen_c(self.g.racks[mover], self.g.bag_n, self.g.rack_value(1 - mover), RECORD_BEST,
                                  1, False)
                    best = self.mg.move_buf[0]
                leave_p[ply] = mover
                leave_v[ply] = self.mg.leave_value[best.leave_mask] if self.g.bag_n > 0 else 0
                it_ps[ply] = best.score
                if self.it_move != NULL:
                    self.it_move[c * MAX_PLIES + ply] = best
                if best.kind == MOVE_PLACE and best.n_tiles == RACK_SIZE:
                    it_pb[ply] = 1
                self.g.play_c(&best)
                k += 1
            if stopped:
                for i in range(k):
                    self.g.undo_c()
                break
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
            self.it_eq[c] = eq
            self.it_win[c] = win
            self.it_done[c] = 1
            if self.it_plies != NULL:
                self.it_plies[c] = <uint8_t> (k - 1)
            for i in range(k):
                self.g.undo_c()
        if stopped:
            if worked:
                self.cut_iterations += 1
            return False
        for c in range(self.n_cands):
            if not self.it_done[c]:
                continue
            eq = self.it_eq[c]
            win = self.it_win[c]
            self.eq_sum[c] += eq
            self.eq_sq[c] += eq * eq
            self.win_sum[c] += win
            self.win_sq[c] += win * win
            self.n[c] += 1
            for ply in range(self.plies):
                self.ply_score[c * MAX_PLIES + ply] += self.it_ply_score[c * MAX_PLIES + ply]
                self.ply_bingo[c * MAX_PLIES + ply] += self.it_ply_bingo[c * MAX_PLIES + ply]
            if self.st_hist != NULL:
                self.add_stats(c, opp)
        if self.pair != NULL:
            for c in range(self.n_cands):
                if not self.it_done[c]:
                    continue
                for c2 in range(c + 1, self.n_cands):
                    if not self.it_done[c2]:
                        continue
                    pp = &self.pair[(<size_t> c * self.n_cands + c2) * 5]
                    dw = self.it_win[c] - self.it_win[c2]
                    de = self.it_eq[c] - self.it_eq[c2]
                    pp[0] += 1
                    pp[1] += dw
                    pp[2] += dw * dw
                    pp[3] += de
                    pp[4] += de * de
        self.iterations += 1
        return True

    def run(self, uint64_t first, uint64_t step, int count):
        """Iterations first, first + step, ... (count of them), GIL released; returns how many completed.
        Stops early on self.stop, within one candidate's ply (the iteration in progress is discarded)."""
        cdef int i, done = 0
        with nogil:
            for i in range(count):
                if read_flag(&self.stop) or not self.iterate(first + i * step):
                    break
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
