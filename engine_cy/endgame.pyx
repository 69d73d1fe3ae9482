# Exact endgame solver: negamax alpha-beta with principal-variation search, iterative deepening, a shared
# lockless transposition table (entries independent of the spread) and Lazy SMP threads.
#
# Values inside the search are the final spread from the point of view of the player to move (own score
# minus opponent score, end-of-game adjustments included). The reported value is the change in spread.
# A worker searches in place on a Game (in solver mode: two scoreless turns end the game); it is reusable
# for many positions without allocation once its move arena has grown.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t, int64_t, INT64_MAX
from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.string cimport memset, memcpy

cdef extern from "portable.h":
    double macondo_now() noexcept nogil
    void* macondo_huge_alloc(size_t n, void** base, size_t* length) noexcept nogil
    void macondo_huge_free(void* base, size_t length) noexcept nogil
    void macondo_prefault(void* p, size_t n) noexcept nogil
    int macondo_try_lock(int* flag) noexcept nogil
    void macondo_unlock(int* flag) noexcept nogil

from engine_cy.common cimport ml_t, MAX_ALPHABET, RACK_SIZE, MAX_BOARD_DIM
from engine_cy.game cimport Game
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.prune import pruned_kwg
from engine_cy.move cimport (Move, MOVE_PLACE, MOVE_PASS, MOVE_EXCHANGE, pack_move, unpack_move, packed_kind,
                             packed_tiles, packed_lane)
from engine_cy.movegen cimport MoveGen, RECORD_SMALL, RECORD_EG_BEST

cdef extern from *:
    """
    static inline int macondo_eg_read_flag(const int* p) { return *(const volatile int*) p; }
    """
    int read_flag "macondo_eg_read_flag"(const int* p) noexcept nogil


cdef enum:
    TT_EXACT = 1
    TT_LOWER = 2
    TT_UPPER = 3
    EST_GOES_OUT = 2048
    EST_TT_MOVE = 4096
    EST_PASS_BACK = 8192
    LAZY_PICKS = 4            # select the best remaining move this many times, then sort the rest


cdef inline double now() noexcept nogil:
    return macondo_now()


def monotonic():
    return now()


# A stop (or the time limit) during iterative deepening's depth 1 lets depth 1 run on for at most this many
# seconds (a completed depth is worth more than the best of some root moves), then takes the best root move
# searched so far.
cdef double DEPTH1_GRACE = 0.3


cdef int arena_cmp_desc(const void* a, const void* b) noexcept nogil:
    cdef int ea = (<const ArenaMove*> a).est
    cdef int eb = (<const ArenaMove*> b).est
    return (eb > ea) - (eb < ea)


# Buckets of two entries (the even index and the next): the first keeps the deeper of the positions filed
# there, the second the latest other one. Against one always-replaced entry per index, 8 NWL20 endgames at
# 7 plies searched 4% fewer nodes with the same table.
#
# The table starts with TT_START_ENTRIES in use and doubles the part in use whenever about one entry in
# TT_GROW_LOAD of it has been filled, up to the size asked for. A search that stores few positions touches
# little memory (the kernel zeroes each page on its first touch: a 5k-node endgame with a whole 512 MB table
# took 0.1-1.0 s, with 2 MB in use 0.04 s), while a large one grows as it stores. A doubling first faults the
# new half in with one call, then moves each entry whose key now indexes the new half there (one thread does
# it while the others search on: what they read or write meanwhile in the moving part may be lost or torn,
# which the entries' self-check turns into misses, never into wrong answers). Without the move, each doubling
# lost half of the earlier iterations' best moves, and 8-ply endgames searched up to 3.4 times the nodes.
# The load: the same 8 endgames searched 1.4% more nodes than with the whole table in use from the start when
# the table grew at one entry in 8, none more at one in 32; 16 is the middle (384 bytes a stored position).
# Fills are counted for one key in TT_SAMPLE (keys whose top bits are zero): the threads sharing a table
# rarely write the counter (no cache line bouncing between them on every store).
cdef enum:
    TT_START_ENTRIES = 65536          # 1.5 MB
    TT_GROW_LOAD = 16
    TT_SAMPLE_SHIFT = 58
    TT_SAMPLE = 64


@cython.final
cdef class TranspositionTable:
    """A power-of-two table of 24-byte entries shared by every thread (no locks: each entry verifies
    itself, so a torn write is a miss). The part in use grows with the search (see TT_GROW_LOAD)."""

    def __cinit__(self):
        self.entries = NULL
        self.mem_base = NULL
        self.mem_len = 0

    def __init__(self, int megabytes=256):
        cdef uint64_t n = 1
        if megabytes < 1:
            raise ValueError("the transposition table needs at least 1 MB")
        while n * 2 * sizeof(TTEntry) <= <uint64_t> megabytes * 1024 * 1024:
            n *= 2
        # huge pages where the system has them: the probes are random over the part in use, and with 4 KB
        # pages nearly each is a TLB miss (pass-first CSW21 at 10 plies: 0.70 -> 0.52 s). The allocation is
        # only reserved here; a page costs its zeroing when the growing part in use first reaches it
        self.entries = <TTEntry*> macondo_huge_alloc(n * sizeof(TTEntry), &self.mem_base, &self.mem_len)
        if self.entries == NULL:
            raise MemoryError(f"cannot allocate a {megabytes} MB transposition table")
        self.n_entries = n
        self.max_mask = n - 1
        self.mask = (n if n < TT_START_ENTRIES else TT_START_ENTRIES) - 1
        self.sampled_fills = 0
        self.growing = 0

    def __dealloc__(self):
        if self.mem_base != NULL:
            macondo_huge_free(self.mem_base, self.mem_len)

    def clear(self):
        """Empty the part in use (the rest was never written). Call it only while no search uses the table."""
        memset(self.entries, 0, (self.mask + 1) * sizeof(TTEntry))
        self.sampled_fills = 0

    @property
    def megabytes(self):
        """The size asked for (the most the table grows to), in MB."""
        return self.n_entries * sizeof(TTEntry) / (1024.0 * 1024.0)

    def put(self, uint64_t key, int score, int depth, int flag, uint64_t move):
        """Store an entry as a search does (for tests and tools)."""
        if key == 0 or flag not in (TT_EXACT, TT_LOWER, TT_UPPER) or not 0 <= depth < 256:
            raise ValueError("an entry needs a nonzero key, a flag of 1-3 and a depth of 0-255")
        self.store(key, score, depth, flag, move)

    def get(self, uint64_t key):
        """The entry stored under `key` as (score, depth, flag, move), or None (for tests and tools)."""
        cdef int score = 0, depth = 0, flag = 0
        cdef uint64_t move = 0
        if self.probe(key, &score, &depth, &flag, &move):
            return score, depth, flag, move
        return None

    @property
    def active_megabytes(self):
        """The part in use so far, in MB."""
        return (self.mask + 1) * sizeof(TTEntry) / (1024.0 * 1024.0)

    cdef void grow(self) noexcept nogil:
        cdef uint64_t m = self.mask, half = m + 1, i, key
        cdef TTEntry* e
        if m >= self.max_mask or not macondo_try_lock(&self.growing):
            return
        if self.mask == m:   # not grown by another thread meanwhile
            macondo_prefault(&self.entries[half], half * sizeof(TTEntry))
            for i in range(half):
                e = &self.entries[i]
                if e.data != 0:
                    key = e.check ^ e.move ^ e.data
                    if key & half:   # its bucket (key & mask, less its low bit) moves up by half
                        self.entries[i + half] = e[0]
                        e.data = 0
                        e.check = 0
                        e.move = 0
            self.mask = m * 2 + 1
        macondo_unlock(&self.growing)

    cdef bint probe(self, uint64_t key, int* score, int* depth, int* flag, uint64_t* move) noexcept nogil:
        cdef TTEntry* e = &self.entries[key & self.mask & ~(<uint64_t> 1)]
        cdef uint64_t check, mv, data
        cdef int j
        for j in range(2):
            check = e[j].check
            mv = e[j].move
            data = e[j].data
            if data != 0 and ((check ^ mv) ^ data) == key:
                score[0] = <int32_t> <uint32_t> data
                depth[0] = <int> ((data >> 32) & 0xFF)
                flag[0] = <int> ((data >> 40) & 0xFF)
                move[0] = mv
                return True
        return False

    cdef void store(self, uint64_t key, int score, int depth, int flag, uint64_t move) noexcept nogil:
        cdef uint64_t m = self.mask
        cdef TTEntry* b = &self.entries[key & m & ~(<uint64_t> 1)]
        cdef TTEntry* e
        cdef uint64_t data = (<uint64_t> <uint32_t> score) | (<uint64_t> depth << 32) | (<uint64_t> flag << 40)
        cdef uint64_t old_data
        cdef int j
        # the same position in either slot: keep a deeper entry unless the new one is exact
        for j in range(2):
            old_data = b[j].data
            if old_data != 0 and (b[j].check ^ b[j].move ^ old_data) == key:
                if flag != TT_EXACT and <int> ((old_data >> 32) & 0xFF) > depth:
                    return
                e = &b[j]
                e.check = key ^ move ^ data
                e.move = move
                e.data = data
                return
        # a new position: the first slot holds the deeper of it and the first slot's entry, which otherwise
        # goes to the second slot, replacing whatever is there
        if b[1].data == 0 and (key >> TT_SAMPLE_SHIFT) == 0 and m < self.max_mask:
            self.sampled_fills += 1
            if self.sampled_fills * TT_SAMPLE * TT_GROW_LOAD > m + 1:
                self.grow()
        old_data = b[0].data
        if old_data == 0 or depth >= <int> ((old_data >> 32) & 0xFF):
            if old_data != 0:
                b[1] = b[0]
            e = &b[0]
        else:
            e = &b[1]
        e.check = key ^ move ^ data
        e.move = move
        e.data = data


@cython.final
cdef bint copy_moves(uint64_t** mv, int32_t** sc, int* cap, int at, const uint64_t* src_mv,
                     const int32_t* src_sc, int n, bint spare) noexcept nogil:
    """Copy n packed moves and their scores into (*mv, *sc) from index `at`, first growing both arrays (to
    exactly at + n, or with room to spare) when they hold fewer; False without memory (nothing copied)."""
    cdef int need = at + n, new_cap
    cdef uint64_t* cm
    cdef int32_t* cs
    if need > cap[0]:
        new_cap = need + need // 2 + 64 if spare else need
        cm = <uint64_t*> realloc(mv[0], new_cap * sizeof(uint64_t))
        if cm == NULL:
            return False
        mv[0] = cm
        cs = <int32_t*> realloc(sc[0], new_cap * sizeof(int32_t))
        if cs == NULL:
            return False
        sc[0] = cs
        cap[0] = new_cap
    memcpy(&mv[0][at], src_mv, n * sizeof(uint64_t))
    memcpy(&sc[0][at], src_sc, n * sizeof(int32_t))
    return True


cdef inline bint move_fits(uint64_t mv, const int* have, int* used, int* n_tiles) noexcept nogil:
    """Whether packed placement mv's tiles (a blank as 0) are among the counts `have`; *n_tiles gets how
    many it places. used[] must be all 0, and is left so."""
    cdef int nt = 0, ml, code
    cdef bint fits = True
    while nt < RACK_SIZE:
        code = <int> ((mv >> (13 + 7 * nt)) & 0x7F)
        if code == 0:
            break
        ml = 0 if (code & 0x40) else (code & 0x3F)
        used[ml] += 1
        if used[ml] > have[ml]:
            fits = False
        nt += 1
    n_tiles[0] = nt
    while nt > 0:
        nt -= 1
        code = <int> ((mv >> (13 + 7 * nt)) & 0x7F)
        used[0 if (code & 0x40) else (code & 0x3F)] = 0
    return fits


cdef bint list_segments(const uint64_t* mv, int n, int* st, int* cnt) noexcept nogil:
    """Each lane's run (st[idx], cnt[idx]) of a move list in generation order (lane by lane; passes and
    exchanges left out). False when a lane's moves are not one run (the list is then of no use)."""
    cdef int i, idx, last = -1
    memset(st, 0, 2 * MAX_BOARD_DIM * sizeof(int))
    memset(cnt, 0, 2 * MAX_BOARD_DIM * sizeof(int))
    for i in range(n):
        if packed_kind(mv[i]) != MOVE_PLACE:
            continue
        idx = packed_lane(mv[i])
        if idx != last:
            if cnt[idx] != 0:
                return False
            st[idx] = i
            last = idx
        cnt[idx] += 1
    return True


cdef class EndgameWorker:
    """One thread's search state. attach() a Game whose bag is empty (or, for the pre-endgame solver,
    whose remaining draws are fixed) and call the search entry points."""

    def __cinit__(self):
        cdef int i
        self.arena = NULL
        self.acap = 0
        for i in range(EG_MAX_PLY):
            self.lc_mv[i] = NULL
            self.lc_sc[i] = NULL
            self.lc_cap[i] = 0
            self.lc_len[i] = 0
            self.lc_valid[i] = False
            self.lc_max_valid[i] = False
            self.gl_mv[i] = NULL
            self.gl_sc[i] = NULL
            self.gl_cap[i] = 0
            self.gl_n[i] = 0
            self.gl_valid[i] = False
            self.gl_seg_ok[i] = False
        for i in range(3):
            self.pl_mv[i] = NULL
            self.pl_sc[i] = NULL
            self.pl_n[i] = 0
            self.pl_cap[i] = 0
            self.pl_valid[i] = False
        self.top_lines = NULL
        self.forced_lines = NULL
        self.multi_k = 0
        self.n_forced = 0
        self.n_top = 0
        self.n_prev_top = 0

    def __init__(self, Kwg kwg, LetterDistribution ld, TranspositionTable tt, int bingo_bonus=50):
        self.mg = MoveGen(kwg, ld, None, bingo_bonus, False)    # (the board is never empty in an endgame)
        self.mg.scores_only = True      # the searcher reads the lists' scores only
        self.tt = tt
        self.acap = 1 << 14
        self.arena = <ArenaMove*> malloc(self.acap * sizeof(ArenaMove))
        if self.arena == NULL:
            raise MemoryError()
        self.atop = 0
        self.own_stop = 0
        self.stop_flag = &self.own_stop
        self.deadline = 0
        self.helper_id = 0
        self.heuristics = False
        self.use_tt = True
        self.lane_reuse = True
        self.d1_cut = True
        self.probe_first = True
        self.patch_probes = True
        self.last_ply_bounded = False
        self.lanes_generated = 0
        self.lanes_reused = 0
        self.grand_nodes = 0
        self.grand_cuts = 0
        self.playout_lists = 0
        self.playout_lanes_kept = 0
        self.probes = 0
        self.probe_cuts = 0

    def __dealloc__(self):
        cdef int i
        free(self.arena)
        free(self.top_lines)
        free(self.forced_lines)
        for i in range(EG_MAX_PLY):
            free(self.lc_mv[i])
            free(self.lc_sc[i])
            free(self.gl_mv[i])
            free(self.gl_sc[i])
        for i in range(3):
            free(self.pl_mv[i])
            free(self.pl_sc[i])

    cdef void attach(self, Game g):
        self.g = g
        self.mg.bind(g.board)

    def bind_game(self, Game g):
        if g.kwg is not self.mg.kwg:
            raise ValueError("the game and the solver use different lexica")
        self.attach(g)

    cdef bint grow_arena(self, int need) noexcept nogil:
        cdef int cap = self.acap
        cdef ArenaMove* a
        while cap < need:
            cap *= 2
        a = <ArenaMove*> realloc(self.arena, cap * sizeof(ArenaMove))
        if a == NULL:
            return False
        self.arena = a
        self.acap = cap
        return True

    # ------------------------------------------------------------ lane reuse

    cdef void move_lanes(self, const Move* m, uint8_t* dirty) noexcept nogil:
        """The lanes whose contents (tiles, cross-sets, anchors) can differ between the board before placement m
        and after it (the board holds m): its own lane, the perpendicular lanes of its new tiles, the lanes
        of the empty squares that end the perpendicular runs through its new tiles, and the perpendicular
        lanes of the empty squares that end its main run."""
        cdef int dim = self.g.board.dim, d, L, s, i, j, q
        cdef uint32_t o, occ_l
        memset(dirty, 0, 2 * MAX_BOARD_DIM)
        if m.kind != MOVE_PLACE:
            return
        d = m.vertical
        L = m.row if d == 0 else m.col
        s = m.col if d == 0 else m.row
        dirty[d * MAX_BOARD_DIM + L] = 1
        for i in range(m.length):
            if m.tiles[i] == 0:
                continue
            q = s + i
            dirty[(1 - d) * MAX_BOARD_DIM + q] = 1
            o = self.g.board.occ[1 - d][q]
            j = L - 1
            while j >= 0 and (o >> j) & 1:
                j -= 1
            if j >= 0:
                dirty[d * MAX_BOARD_DIM + j] = 1
            j = L + 1
            while j < dim and (o >> j) & 1:
                j += 1
            if j < dim:
                dirty[d * MAX_BOARD_DIM + j] = 1
        occ_l = self.g.board.occ[d][L]
        j = s - 1
        while j >= 0 and (occ_l >> j) & 1:
            j -= 1
        if j >= 0:
            dirty[(1 - d) * MAX_BOARD_DIM + j] = 1
        j = s + m.length
        while j < dim and (occ_l >> j) & 1:
            j += 1
        if j < dim:
            dirty[(1 - d) * MAX_BOARD_DIM + j] = 1

    cdef bint lc_patch(self, int c, int idx, int st, int n) noexcept nogil:
        """Keep the n moves a later child just generated (small_buf from st) for lane idx, which the first
        child's move touched and this child's move did not: they are the lane's moves on the parent's board,
        valid for every child whose own move leaves the lane alone. False without memory (nothing kept)."""
        if not copy_moves(&self.lc_mv[c], &self.lc_sc[c], &self.lc_cap[c], self.lc_len[c],
                          &self.mg.small_buf[st], &self.mg.small_score[st], n, True):
            return False
        self.lc_start[c][idx] = self.lc_len[c]
        self.lc_count[c][idx] = n
        self.lc_len[c] += n
        self.lc_dirty[c][idx] = 0
        self.lc_max_valid[c] = False
        return True

    cdef void begin_lane_lists(self, int p, int opp_val) noexcept nogil:
        """Set the generator up to list player p's moves lane by lane (mg.gen_lane per lane, RECORD_SMALL,
        bag empty, into small_buf from the start)."""
        self.mg.set_rack_c(self.g.racks[p])
        self.mg.bag_tiles = 0
        self.mg.opp_rack_value = opp_val
        self.mg.record_mode = RECORD_SMALL
        self.mg.top_n = 0
        self.mg.do_sort = False
        self.mg.n_moves = 0
        self.mg.has_best = False
        self.mg.n_placements = 0
        self.mg.n_exchanges = 0
        self.mg.n_passes = 0
        self.mg.tiles_played = 0
        self.mg.prepare_leaves()
        self.mg.board_empty = False
        self.mg.begin_bingos()

    cdef void patch_lanes(self, int c, int p, int opp_val, const uint8_t* dirty) noexcept nogil:
        """Before a probe (first_move): list the lanes only the sibling lists' own child touched (lc_dirty)
        and this node's move did not, and keep them for every sibling (lc_patch), so the probes of the
        siblings after this one search only the lanes their own moves touched."""
        cdef int d, lane, idx, st, dim = self.mg.dim
        cdef bint ready = False
        for d in range(2):
            for lane in range(dim):
                idx = d * MAX_BOARD_DIM + lane
                if not self.lc_dirty[c][idx] or dirty[idx]:
                    continue
                if not ready:
                    ready = True
                    self.begin_lane_lists(p, opp_val)
                st = self.mg.n_moves
                self.mg.dir = d
                self.mg.lane = lane
                self.mg.gen_lane()
                self.lanes_generated += 1
                self.lc_patch(c, idx, st, self.mg.n_moves - st)
        self.mg.n_moves = 0

    cdef int gen_reuse(self, int ply, int p, int opp_val, bint best_only, int64_t out, int rack_n,
                       uint64_t* best_mv, int32_t* best_sc, int64_t* best_val, int64_t stop_at,
                       bint* stopped) noexcept nogil:
        """Player p's moves at a node of ply >= 1, lane by lane in generation order: the first child of the
        parent to generate keeps its lanes' moves (lc_*[ply - 1]); a later child generates only the lanes
        its move or that child's move touched and copies the rest. The result is what gen_c would give.
        Without best_only: self.mg.small_buf / small_score / n_moves (RECORD_SMALL, the pass last). With best_only:
        no list; the first placement of highest value (score, + out when it uses all rack_n tiles) in
        *best_mv / *best_sc / *best_val; returns 1 (found) or 0; once a value reaches stop_at the rest is not
        looked at (*stopped: the value is then only a lower bound on the best; a child that stops early does
        not keep its lanes). Returns -1 when it cannot serve (the caller generates in full)."""
        cdef uint8_t dirty[2 * MAX_BOARD_DIM]
        cdef int c = ply - 1, dim, d, lane, idx, i, st, cnt, n, found = 0
        cdef bint build
        cdef uint64_t mv
        cdef int64_t v
        cdef uint64_t* cm
        cdef int32_t* cs
        if ply <= 0 or not self.lane_reuse or self.g.board.n_tiles == 0:
            return -1
        build = not self.lc_valid[c]
        if stopped != NULL:
            stopped[0] = False
        self.move_lanes(&self.path_move[ply], dirty)
        dim = self.mg.dim
        self.begin_lane_lists(p, opp_val)
        for d in range(2):
            for lane in range(dim):
                idx = d * MAX_BOARD_DIM + lane
                if build or dirty[idx] or self.lc_dirty[c][idx]:
                    st = self.mg.n_moves
                    self.mg.dir = d
                    self.mg.lane = lane
                    self.mg.gen_lane()
                    self.lanes_generated += 1
                    if build:
                        self.lc_start[c][idx] = st
                        self.lc_count[c][idx] = self.mg.n_moves - st
                    elif not dirty[idx]:
                        # a lane only the first child's move touched: the lane as every child's move left it
                        self.lc_patch(c, idx, st, self.mg.n_moves - st)
                    if best_only:
                        for i in range(st, self.mg.n_moves):
                            mv = self.mg.small_buf[i]
                            v = self.mg.small_score[i]
                            if packed_tiles(mv) == rack_n:
                                v += out
                            if found == 0 or v > best_val[0]:
                                found = 1
                                best_val[0] = v
                                best_mv[0] = mv
                                best_sc[0] = self.mg.small_score[i]
                        if not build:
                            self.mg.n_moves = st   # the list is not wanted, only its best
                        if found and best_val[0] >= stop_at:
                            stopped[0] = True
                            self.mg.n_moves = 0
                            return 1
                else:
                    st = self.lc_start[c][idx]
                    cnt = self.lc_count[c][idx]
                    if cnt == 0:
                        continue
                    self.lanes_reused += 1
                    cm = &self.lc_mv[c][st]
                    cs = &self.lc_sc[c][st]
                    if best_only:
                        for i in range(cnt):
                            v = cs[i]
                            if packed_tiles(cm[i]) == rack_n:
                                v += out
                            if found == 0 or v > best_val[0]:
                                found = 1
                                best_val[0] = v
                                best_mv[0] = cm[i]
                                best_sc[0] = cs[i]
                        if found and best_val[0] >= stop_at:
                            stopped[0] = True
                            self.mg.n_moves = 0
                            return 1
                    else:
                        while self.mg.n_moves + cnt > self.mg.cap_small:
                            if not self.mg.grow_small():
                                return -1
                        memcpy(&self.mg.small_buf[self.mg.n_moves], cm, cnt * sizeof(uint64_t))
                        memcpy(&self.mg.small_score[self.mg.n_moves], cs, cnt * sizeof(int32_t))
                        self.mg.n_moves += cnt
        if build:
            n = self.mg.n_moves
            if not copy_moves(&self.lc_mv[c], &self.lc_sc[c], &self.lc_cap[c], 0, self.mg.small_buf,
                              self.mg.small_score, n, False):
                return -1
            memcpy(self.lc_dirty[c], dirty, 2 * MAX_BOARD_DIM)
            self.lc_len[c] = n
            self.lc_valid[c] = True
            self.lc_max_valid[c] = False
        if best_only:
            self.mg.n_moves = 0
            return found
        self.mg.record_pass()
        return 0

    # ------------------------------------------------------------ leaf heuristic

    cdef int stuck_value(self, int player) noexcept nogil:
        """Face value of the player's tiles that no legal placement on the board can use (the search stops
        once every letter of the rack is seen used)."""
        cdef int ml, v = 0
        cdef uint64_t need = 0
        for ml in range(1, self.g.ld.size):
            if self.g.racks[player][ml]:
                need |= (<uint64_t> 1) << ml
        if need == 0:
            return 0
        need &= ~self.mg.letters_used(self.g.racks[player], need, 1)
        for ml in range(1, self.g.ld.size):
            if (need >> ml) & 1:
                v += self.g.racks[player][ml] * self.g.scores_tbl[ml]
        return v

    cdef void playout_list(self, int k, const uint64_t* smv, const int32_t* ssc, const int* sst, const int* sn,
                           const Move* m1, const Move* m2) noexcept nogil:
        """The playout's step k lists the mover's moves (self.mg.small_buf, generation order, what gen_c would
        give) and keeps them in pl_*[k % 3]. smv / ssc (NULL: none) is the list two moves back (the same
        mover, whose rack held this one's tiles and more) with its lanes' runs sst / sn, and m1, m2 the moves
        since: in the lanes neither touched its plays the rack still holds are this step's, in the same order;
        the other lanes are generated."""
        cdef int mover = self.g.on_turn, slot = k % 3, dim = self.mg.dim, d, lane, idx, i, n, nt, ml
        cdef uint8_t dirty[2 * MAX_BOARD_DIM]
        cdef uint8_t d2[2 * MAX_BOARD_DIM]
        cdef int seg_st[2 * MAX_BOARD_DIM]
        cdef int seg_n[2 * MAX_BOARD_DIM]
        cdef int have[MAX_ALPHABET]
        cdef int used[MAX_ALPHABET]
        cdef uint64_t mv
        self.playout_lists += 1
        if smv == NULL or self.g.board.n_tiles == 0:
            self.mg.gen_c(self.g.racks[mover], 0, self.g.rack_value(1 - mover), RECORD_SMALL, 0, False)
        else:
            self.move_lanes(m1, dirty)
            self.move_lanes(m2, d2)
            for ml in range(self.g.ld.size):
                have[ml] = self.g.racks[mover][ml]
                used[ml] = 0
            self.begin_lane_lists(mover, self.g.rack_value(1 - mover))
            memset(seg_st, 0, sizeof(seg_st))
            memset(seg_n, 0, sizeof(seg_n))
            for d in range(2):
                for lane in range(dim):
                    idx = d * MAX_BOARD_DIM + lane
                    seg_st[idx] = self.mg.n_moves
                    if dirty[idx] or d2[idx]:
                        self.mg.dir = d
                        self.mg.lane = lane
                        self.mg.gen_lane()
                        seg_n[idx] = self.mg.n_moves - seg_st[idx]
                        continue
                    n = sn[idx]
                    if n == 0:
                        continue
                    self.playout_lanes_kept += 1
                    while self.mg.n_moves + n > self.mg.cap_small:
                        if not self.mg.grow_small():
                            # (no memory: this step is chosen by a full generation, unlisted)
                            self.pl_valid[slot] = False
                            self.mg.gen_c(self.g.racks[mover], 0, self.g.rack_value(1 - mover), RECORD_SMALL,
                                          0, False)
                            return
                    for i in range(sst[idx], sst[idx] + n):
                        mv = smv[i]
                        if move_fits(mv, have, used, &nt):
                            self.mg.small_buf[self.mg.n_moves] = mv
                            self.mg.small_score[self.mg.n_moves] = ssc[i]
                            self.mg.n_moves += 1
                    seg_n[idx] = self.mg.n_moves - seg_st[idx]
            self.mg.record_pass()
            if self.keep_playout_list(slot, False):
                memcpy(self.pl_seg_st[slot], seg_st, sizeof(seg_st))
                memcpy(self.pl_seg_n[slot], seg_n, sizeof(seg_n))
            return
        self.keep_playout_list(slot, True)

    cdef bint keep_playout_list(self, int slot, bint segments) noexcept nogil:
        """Keep the list just made (self.mg.small_buf) as a playout step's, in pl_*[slot], with its lanes' runs
        when `segments` (else the caller sets them). Returns whether it is kept."""
        cdef int n = self.mg.n_moves
        if not copy_moves(&self.pl_mv[slot], &self.pl_sc[slot], &self.pl_cap[slot], 0, self.mg.small_buf,
                          self.mg.small_score, n, False):
            self.pl_valid[slot] = False
            return False
        self.pl_n[slot] = n
        self.pl_valid[slot] = not segments or \
            list_segments(self.pl_mv[slot], n, self.pl_seg_st[slot], self.pl_seg_n[slot])
        return self.pl_valid[slot]

    cdef bint playout_pick(self, int64_t pass_val, Move* m) noexcept nogil:
        """The greedy choice among the moves just listed (self.mg.small_buf, generation order): the first
        placement of highest value (set_eg_value's terms), unless the pass (pass_val) is strictly better.
        Sets *m (with its score); returns whether it is a placement."""
        cdef int i, slot, nt, face
        cdef uint64_t mv, code, best_mv = 0
        cdef int64_t v, best_v = 0
        cdef int32_t best_sc = 0
        cdef bint found = False
        for i in range(self.mg.n_moves):
            mv = self.mg.small_buf[i]
            if packed_kind(mv) != MOVE_PLACE:
                continue
            v = <int64_t> self.mg.small_score[i] * self.mg.eg_mul
            if self.mg.eg_tile_pen != 0 or self.mg.eg_face_pen != 0:
                nt = 0
                face = 0
                for slot in range(RACK_SIZE):
                    code = (mv >> (13 + 7 * slot)) & 0x7F
                    if code == 0:
                        break
                    nt += 1
                    if not (code & 0x40):
                        face += self.g.scores_tbl[code & 0x3F]
                v -= self.mg.eg_tile_pen * nt + self.mg.eg_face_pen * face
            if not found or v > best_v:
                found = True
                best_v = v
                best_mv = mv
                best_sc = self.mg.small_score[i]
        if found and best_v >= pass_val:
            unpack_move(best_mv, self.g.board, m)
            m.score = best_sc
            return True
        memset(m, 0, sizeof(Move))
        m.kind = MOVE_PASS
        return False

    cdef int playout(self, uint64_t* rec_moves, int32_t* rec_scores, int* rec_n, int ply) noexcept nogil:
        """Greedy playout: each side plays its highest-scoring move; while the solving
        side's opponent holds stuck tiles, the solving side prefers plays that keep tiles (score minus
        f * (7 * tiles + 2 * face value), f = stuck share of the opponent's rack), for at most 25 moves.
        Returns the final spread for the player on turn at the leaf.

        At a search leaf (ply >= 1) the first move comes from the leaf mover's move list by lane reuse (its
        siblings share that rack), which also gives the stuck tiles when the leaf mover is the one they are
        counted for. With lane_reuse each later step lists its moves from the list two moves back
        (playout_list): the second move's from the parent's list (a node of depth 1 keeps it), the rest from
        the playout's own. The value and the choice are those of the full generation."""
        cdef int leaf_p = self.g.on_turn
        cdef int solver = self.solver_player
        cdef int opp_total = self.g.rack_value(1 - solver)
        cdef int stuck = 0
        cdef int k = 0, i, mover, spread, ml, src
        cdef int uses[MAX_ALPHABET]
        cdef int64_t pass_val
        cdef bint listed = False, lists = self.lane_reuse
        cdef Move m
        cdef Move step_move[2]      # the moves of the last two steps (step j's in step_move[j % 2])
        if ply >= 1 and self.lane_reuse and not self.g.over:
            if leaf_p == 1 - solver or opp_total == 0:
                listed = self.gen_reuse(ply, leaf_p, self.g.rack_value(1 - leaf_p), False, 0, 0, NULL, NULL,
                                        NULL, INT64_MAX, NULL) >= 0
                if listed and opp_total > 0:
                    self.mg.tile_uses(uses)
                    for ml in range(1, self.g.ld.size):
                        if self.g.racks[leaf_p][ml] and uses[ml] == 0:
                            stuck += self.g.racks[leaf_p][ml] * self.g.scores_tbl[ml]
                elif opp_total > 0:
                    stuck = self.stuck_value(1 - solver)
            else:
                stuck = self.stuck_value(1 - solver)
                listed = self.gen_reuse(ply, leaf_p, self.g.rack_value(1 - leaf_p), False, 0, 0, NULL, NULL,
                                        NULL, INT64_MAX, NULL) >= 0
        elif opp_total > 0:
            stuck = self.stuck_value(1 - solver)
        if lists:
            self.pl_valid[0] = False
            self.pl_valid[1] = False
            self.pl_valid[2] = False
            if listed:
                self.keep_playout_list(0, True)
        while not self.g.over and k < 25:
            mover = self.g.on_turn
            # the generator keeps the first placement of highest value in its order; the pass, last in that
            # order, replaces it only when strictly better
            if mover == solver and stuck > 0:
                self.mg.set_eg_value(opp_total, 0, 7 * <int64_t> stuck, 2 * <int64_t> stuck)
                pass_val = -(<int64_t> stuck) * (self.g.rack_value(0) + self.g.rack_value(1))
            else:
                self.mg.set_eg_value(1, 0, 0, 0)
                pass_val = 0
            if k == 0 and listed:
                # the same choice from the listed moves (generation order, placements only)
                self.playout_pick(pass_val, &m)
            elif lists:
                if k == 1 and ply >= 1 and self.gl_valid[ply - 1] and self.gl_seg_ok[ply - 1]:
                    self.playout_list(k, self.gl_mv[ply - 1], self.gl_sc[ply - 1], self.gl_seg_st[ply - 1],
                                      self.gl_seg_n[ply - 1], &self.path_move[ply], &step_move[0])
                elif k >= 2 and self.pl_valid[(k - 2) % 3]:
                    src = (k - 2) % 3
                    self.playout_list(k, self.pl_mv[src], self.pl_sc[src], self.pl_seg_st[src],
                                      self.pl_seg_n[src], &step_move[k % 2], &step_move[(k - 1) % 2])
                else:
                    self.playout_list(k, NULL, NULL, NULL, NULL, NULL, NULL)
                self.playout_pick(pass_val, &m)
            else:
                self.mg.gen_c(self.g.racks[mover], 0, self.g.rack_value(1 - mover), RECORD_EG_BEST, 0, False)
                if self.mg.n_moves > 0 and self.mg.eg_best_value >= pass_val:
                    m = self.mg.move_buf[0]
                else:
                    memset(&m, 0, sizeof(Move))
                    m.kind = MOVE_PASS
            if rec_moves != NULL:
                rec_moves[k] = pack_move(&m)
                rec_scores[k] = m.score
                rec_n[0] = k + 1
            step_move[k % 2] = m
            self.g.play_c(&m)
            k += 1
        spread = self.g.score[leaf_p] - self.g.score[1 - leaf_p]
        if not self.g.over:
            spread += 2 * self.g.rack_value(1 - leaf_p) - 2 * self.g.rack_value(leaf_p)
        for i in range(k):
            self.g.undo_c()
        return spread

    # ------------------------------------------------------------ search

    cdef int negamax(self, int depth, int ply, int alpha, int beta, bint pv) noexcept nogil:
        cdef int p = self.g.on_turn
        cdef int spread = self.g.score[p] - self.g.score[1 - p]
        cdef int tt_score = 0, tt_depth = 0, tt_flag = 0, v, best, i, j, n, base, k, flag
        cdef int own_val, opp_val, rack_n, alpha_in, r, pass_v
        cdef bint stopped, stand_pat, upper, bounded
        cdef int32_t sc = 0
        cdef int64_t val = 0
        cdef uint64_t tt_move = 0, best_move = 0, mv
        cdef ArenaMove tmp
        cdef ArenaMove* a
        cdef Move m
        cdef bint sorted_rest = False
        cdef bint probed = False
        cdef bint grand = False, have_grand = False
        cdef int grand_lane = 0
        cdef uint8_t grand_lanes[2 * MAX_BOARD_DIM]
        cdef uint64_t probe_mv = 0
        self.pv_len[ply] = 0
        self.nodes += 1
        if self.g.over:
            return spread
        if depth <= 0:
            if not self.heuristics:
                return spread
            if self.use_tt and self.tt.probe(self.g.hash, &tt_score, &tt_depth, &tt_flag, &tt_move):
                if tt_flag == TT_EXACT:
                    return tt_score + spread
                v = self.playout(NULL, NULL, NULL, ply)
                return v
            v = self.playout(NULL, NULL, NULL, ply)
            if self.use_tt:
                self.tt.store(self.g.hash, v - spread, 0, TT_EXACT, 0)
            return v
        if not self.no_abort:
            # one load per interior node (another thread sets the flag); the clock only every 1024 nodes
            if read_flag(self.stop_flag):
                self.aborted = True
                return 0
            if self.deadline > 0 and (self.nodes & 1023) == 0 and now() >= self.deadline:
                self.stop_flag[0] = 1
                self.aborted = True
                return 0
        if self.use_tt and self.tt.probe(self.g.hash, &tt_score, &tt_depth, &tt_flag, &tt_move):
            if tt_depth >= depth and not pv:
                v = tt_score + spread
                if tt_flag == TT_EXACT:
                    return v
                if tt_flag == TT_LOWER:
                    if v > alpha:
                        alpha = v
                elif v < beta:
                    beta = v
                if alpha >= beta:
                    return v
        own_val = self.g.rack_value(p)
        opp_val = self.g.rack_value(1 - p)
        rack_n = self.g.rack_n[p]
        best = -EG_INF
        if depth == 1 and not self.heuristics:
            # the children are leaves: their values follow from the move alone, nothing is played. The
            # generator keeps only the first placement of highest value in its order (what a scan of every
            # move would keep); the pass, generated last, replaces it only when strictly better
            if self.g.zeros + 1 >= self.g.max_zeros:
                pass_v = spread - own_val + opp_val
            else:
                pass_v = spread
            stopped = False
            upper = False
            bounded = False
            if self.d1_cut and pass_v >= beta:
                # passing alone reaches beta: a lower bound without generating (fail high)
                r = 0
                stopped = True
            elif self.last_ply_bounded and self.d1_cut and self.lane_reuse and ply > 0 and \
                    not self.lc_valid[ply - 1] and not self.d1_first[ply - 1] and self.g.board.n_tiles > 0:
                # the parent's first child here: no sibling has listed its lanes, and most parents cut at this
                # child. Only a value above alpha matters, so the placements are searched best bound first
                # from alpha up (anchors whose bound cannot pass it are skipped) and stop at beta; a later
                # sibling lists the lanes for the rest to reuse
                self.d1_first[ply - 1] = True
                self.last_ply_bounded_nodes += 1
                bounded = True
                r = -1          # generated below
                have_grand = ply >= 2 and self.gl_valid[ply - 2]
                if have_grand:
                    # the lanes the last two moves left alone keep the grandparent's plays: their best may
                    # decide the node at once, else it seeds the search of the other lanes
                    self.grand_nodes += 1
                    grand = self.grand_best(ply, p, 2 * opp_val, rack_n, grand_lanes, &mv, &sc, &val,
                                            &grand_lane)
                    if grand and val >= <int64_t> beta - spread:
                        self.grand_cuts += 1
                        r = 1
            else:
                r = self.gen_reuse(ply, p, opp_val, True, 2 * opp_val, rack_n, &mv, &sc, &val,
                                   (<int64_t> beta - spread) if self.d1_cut else INT64_MAX, &stopped)
            if r < 0:
                self.mg.set_eg_value(1, 2 * opp_val, 0, 0)
                if bounded:
                    self.mg.eg_seeded = True
                    if grand and val >= <int64_t> alpha - spread + 1:
                        # (the seed's order key sits at the end of its lane: a play of the same value in an
                        # earlier lane comes first in generation order)
                        self.mg.eg_seed_value = val
                        self.mg.eg_seed_key = grand_lane * 64 + 63
                    else:
                        grand = False
                        self.mg.eg_seed_value = <int64_t> alpha - spread + 1
                        self.mg.eg_seed_key = 0x7FFFFFFF
                    self.mg.eg_shadow = True
                    self.mg.eg_stop_value = <int64_t> beta - spread
                    if have_grand:
                        self.mg.lane_filter = grand_lanes
                self.mg.gen_c(self.g.racks[p], 0, opp_val, RECORD_EG_BEST, 0, False)
                if bounded:
                    self.mg.lane_filter = NULL
                    self.mg.eg_stop_value = INT64_MAX
                    self.mg.eg_shadow = False
                    self.mg.eg_seeded = False
                r = 0
                if self.mg.n_moves > 0:
                    m = self.mg.move_buf[0]
                    r = 1
                    mv = pack_move(&m)
                    sc = m.score
                    val = self.mg.eg_best_value
                elif grand:
                    r = 1       # the grandparent's play stands (mv, sc, val)
                if bounded and r == 1:
                    stopped = val >= <int64_t> beta - spread     # (the search stops there: a lower bound)
                elif bounded:
                    # every placement is worth at most alpha: an upper bound
                    upper = True
                    best = alpha
            if r == 1:
                best = spread + <int> val
                best_move = mv
                self.pv[ply][0] = best_move
                self.pv_score[ply][0] = sc
                self.pv_len[ply] = 1
            if pass_v > best:
                m.kind = MOVE_PASS
                m.score = 0
                m.row = 0
                m.col = 0
                m.vertical = 0
                m.length = 0
                m.n_tiles = 0
                best = pass_v
                best_move = pack_move(&m)
                self.pv[ply][0] = best_move
                self.pv_score[ply][0] = 0
                self.pv_len[ply] = 1
            if self.use_tt:
                # a search stopped at beta knows a lower bound only; passing first says nothing about the
                # best move, so the table keeps the move it had (deeper iterations order by it)
                upper = upper and best <= alpha
                self.tt.store(self.g.hash, best - spread, 1,
                              TT_LOWER if stopped else (TT_UPPER if upper else TT_EXACT),
                              tt_move if r == 0 and (stopped or upper) else best_move)
            return best
        alpha_in = alpha
        # children at the last ply cut at once when passing reaches their beta (d1_cut): decided here unplayed
        stand_pat = depth == 2 and self.d1_cut and not self.heuristics and self.g.max_zeros >= 2
        self.lc_valid[ply] = False      # the children's lane reuse starts afresh
        self.d1_first[ply] = False
        self.gl_valid[ply] = False
        if self.probe_first and not pv and tt_move == 0 and \
                self.first_move(ply, depth, p, opp_val, rack_n, &probe_mv, &sc):
            # most nodes off the principal line cut at their first move: find it without listing the moves
            # (first_move: the move the ordering below would take first) and search it; only when it does
            # not cut are the moves listed, and the rest searched in the same order as without the probe
            self.probes += 1
            if stand_pat and packed_kind(probe_mv) == MOVE_PLACE and packed_tiles(probe_mv) < rack_n and \
                    spread + sc <= alpha:
                self.nodes += 1
                v = spread + sc
            else:
                unpack_move(probe_mv, self.g.board, &m)
                m.score = sc
                self.path_move[ply + 1] = m
                self.g.play_c(&m)
                v = -self.negamax(depth - 1, ply + 1, -beta, -alpha, False)
                self.g.undo_c()
                if self.aborted:
                    return 0
            probed = True
            best = v
            best_move = probe_mv
            if v > alpha:
                alpha = v
                self.pv_extend(ply, probe_mv, sc)
            if alpha >= beta:
                self.probe_cuts += 1
                if self.use_tt:
                    self.tt.store(self.g.hash, best - spread, depth, TT_LOWER, best_move)
                return best
        if self.gen_reuse(ply, p, opp_val, False, 0, 0, NULL, NULL, NULL, INT64_MAX, NULL) < 0:
            self.mg.gen_c(self.g.racks[p], 0, opp_val, RECORD_SMALL, 0, False)
        n = self.mg.n_moves
        if (depth == 3 and self.last_ply_bounded and not self.heuristics) or \
                (depth == 1 and self.heuristics and self.lane_reuse):
            self.keep_grand_list(ply)
        base = self.list_moves(depth, rack_n, opp_val, tt_move)
        if base < 0:
            return 0
        for i in range(n):
            if self.depth1_stop(depth, i):
                self.atop = base
                return 0
            a = &self.arena[base]   # the arena may move while children grow it
            if i < LAZY_PICKS:
                k = i
                for j in range(i + 1, n):
                    if a[j].est > a[k].est:
                        k = j
                if k != i:
                    tmp = a[i]
                    a[i] = a[k]
                    a[k] = tmp
            elif not sorted_rest:
                qsort(&a[i], n - i, sizeof(ArenaMove), arena_cmp_desc)
                sorted_rest = True
            mv = a[i].move
            if probed and mv == probe_mv:
                continue                    # searched first, before the list
            if stand_pat and packed_kind(mv) == MOVE_PLACE and packed_tiles(mv) < rack_n and \
                    spread + a[i].score <= alpha:
                # the child (last ply, the game goes on) would pass for at least its own beta (-alpha): its
                # value -(spread + score) is a lower bound there, so this move is worth at most
                # spread + score <= alpha here, known without playing it
                self.nodes += 1
                v = spread + a[i].score
            else:
                unpack_move(mv, self.g.board, &m)
                m.score = a[i].score
                self.path_move[ply + 1] = m
                self.g.play_c(&m)
                if i == 0 and not probed:
                    v = -self.negamax(depth - 1, ply + 1, -beta, -alpha, pv)
                else:
                    v = -self.negamax(depth - 1, ply + 1, -alpha - 1, -alpha, False)
                    if not self.aborted and alpha < v < beta:
                        v = -self.negamax(depth - 1, ply + 1, -beta, -alpha, pv)
                self.g.undo_c()
                if self.aborted:
                    self.atop = base
                    return 0
            if ply == 0:
                if not self.root_have or v > self.root_best:
                    self.root_have = True
                    self.root_best = v
                    self.root_move = mv
                    self.root_score = self.arena[base + i].score
                if self.root_guard:
                    self.no_abort = False    # one root move is searched: from now on a stop is honoured
            if v > best:
                best = v
                best_move = mv
                if v > alpha:
                    alpha = v
                    self.pv_extend(ply, mv, self.arena[base + i].score)
            if alpha >= beta:
                break
        self.atop = base
        if not self.use_tt:
            return best
        if best <= alpha_in:
            flag = TT_UPPER
        elif best >= beta:
            flag = TT_LOWER
        else:
            flag = TT_EXACT
        self.tt.store(self.g.hash, best - spread, depth, flag, best_move)
        return best

    cdef inline int list_moves(self, int depth, int rack_n, int opp_val, uint64_t tt_move) noexcept nogil:
        """Put the moves the generator just listed (small_buf) on the arena above atop, each with its ordering
        estimate: its score; going out, twice the opponent's rack more and EST_GOES_OUT; at depths over 2 a
        per-tile term (whose sign the Lazy SMP helpers vary); the pass EST_PASS_BACK when it would end the game,
        else 0; the table's move EST_TT_MOVE more. Returns the index of the first (atop is raised past the
        last), or -1 without memory (the search is then aborted)."""
        cdef int n = self.mg.n_moves, base = self.atop, i, est, nt
        cdef uint64_t mv
        cdef ArenaMove* a
        if base + n > self.acap and not self.grow_arena(base + n):
            self.aborted = True
            self.stop_flag[0] = 1
            return -1
        a = &self.arena[base]
        for i in range(n):
            mv = self.mg.small_buf[i]
            a[i].move = mv
            a[i].score = self.mg.small_score[i]
            if packed_kind(mv) == MOVE_PASS:
                est = EST_PASS_BACK if self.g.zeros + 1 >= self.g.max_zeros else 0
            else:
                nt = packed_tiles(mv)
                est = a[i].score
                if nt == rack_n:
                    est += 2 * opp_val + EST_GOES_OUT
                elif depth > 2:
                    est += (3 if self.helper_id & 1 else -5) * nt
            if mv == tt_move:
                est += EST_TT_MOVE
            a[i].est = est
        self.atop = base + n
        return base

    cdef inline bint depth1_stop(self, int depth, int i) noexcept nogil:
        """Before the i-th move of a node of depth 1, whose children are leaves (greedy playouts) that never
        look at the stop flag: whether a stop or the deadline ends the search here (at iterative deepening's
        depth 1 only once one root move is searched and DEPTH1_GRACE has passed). Sets aborted."""
        if depth == 1 and i > 0 and not self.no_abort and \
                (read_flag(self.stop_flag) or (self.deadline > 0 and now() >= self.deadline)):
            self.stop_flag[0] = 1
            if not self.root_guard or self.grace_over():
                self.aborted = True
                return True
        return False

    cdef inline void pv_extend(self, int ply, uint64_t mv, int32_t score) noexcept nogil:
        """The line at ply becomes mv (with its score) followed by the line found at ply + 1."""
        cdef int k
        self.pv[ply][0] = mv
        self.pv_score[ply][0] = score
        for k in range(self.pv_len[ply + 1]):
            self.pv[ply][k + 1] = self.pv[ply + 1][k]
            self.pv_score[ply][k + 1] = self.pv_score[ply + 1][k]
        self.pv_len[ply] = self.pv_len[ply + 1] + 1

    cdef void lane_maxima(self, int c, int k, int rack_n) noexcept nogil:
        """Per lane of the sibling lists lc_*[c]: the first of its placements of highest estimate among those
        that keep a tile (score + k per tile) and the first of highest score among those that go out (their
        bonus depends on the opponent's rack, which differs between siblings)."""
        cdef int idx, i, st, cnt, nt
        cdef int64_t v
        cdef uint64_t mv
        for idx in range(2 * MAX_BOARD_DIM):
            self.lc_no_i[c][idx] = -1
            self.lc_out_i[c][idx] = -1
            if self.lc_dirty[c][idx] or idx % MAX_BOARD_DIM >= self.mg.dim:
                continue                    # (every later sibling generates this lane)
            st = self.lc_start[c][idx]
            cnt = self.lc_count[c][idx]
            for i in range(st, st + cnt):
                mv = self.lc_mv[c][i]
                if packed_kind(mv) != MOVE_PLACE:
                    continue
                nt = packed_tiles(mv)
                if nt == rack_n:
                    if self.lc_out_i[c][idx] < 0 or self.lc_sc[c][i] > self.lc_out_v[c][idx]:
                        self.lc_out_i[c][idx] = i
                        self.lc_out_v[c][idx] = self.lc_sc[c][i]
                else:
                    v = self.lc_sc[c][i] + <int64_t> k * nt
                    if self.lc_no_i[c][idx] < 0 or v > self.lc_no_v[c][idx]:
                        self.lc_no_i[c][idx] = i
                        self.lc_no_v[c][idx] = v
        self.lc_max_valid[c] = True
        self.lc_max_k[c] = k

    cdef bint keep_grand_list(self, int ply) noexcept nogil:
        """Keep the list the generator just made at this node (small_buf, generation order) for its
        grandchildren (gl_*[ply]); False without memory (they then search without it)."""
        cdef int n = self.mg.n_moves
        if not copy_moves(&self.gl_mv[ply], &self.gl_sc[ply], &self.gl_cap[ply], 0, self.mg.small_buf,
                          self.mg.small_score, n, False):
            return False
        self.gl_n[ply] = n
        self.gl_valid[ply] = True
        self.gl_seg_ok[ply] = list_segments(self.gl_mv[ply], n, self.gl_seg_st[ply], self.gl_seg_n[ply])
        return True

    cdef bint grand_best(self, int ply, int p, int64_t out, int rack_n, uint8_t* lanes, uint64_t* best_mv,
                         int32_t* best_sc, int64_t* best_val, int* best_lane) noexcept nogil:
        """At a node of ply >= 2 whose grandparent kept its list (gl_*[ply - 2], the same mover, whose rack
        held this one's tiles and more): lanes[] marks the lanes either move since touched (move_lanes), and
        among the other lanes' placements of that list the sub-rack can still play (the same plays, scored
        the same, in the same order as this node's own generation would give them), the first of highest
        value (score, + out when it uses all rack_n tiles) goes in *best_*. Returns whether there is one."""
        cdef uint8_t d2[2 * MAX_BOARD_DIM]
        cdef int g = ply - 2, i, idx, ml, nt
        cdef int have[MAX_ALPHABET]
        cdef int used[MAX_ALPHABET]
        cdef uint64_t mv
        cdef int64_t v
        cdef bint found = False
        self.move_lanes(&self.path_move[ply - 1], lanes)
        self.move_lanes(&self.path_move[ply], d2)
        for i in range(2 * MAX_BOARD_DIM):
            lanes[i] |= d2[i]
        for ml in range(self.g.ld.size):
            have[ml] = self.g.racks[p][ml]
            used[ml] = 0
        for i in range(self.gl_n[g]):
            mv = self.gl_mv[g][i]
            if packed_kind(mv) != MOVE_PLACE:
                continue
            idx = packed_lane(mv)
            if lanes[idx]:
                continue
            if not move_fits(mv, have, used, &nt):
                continue
            v = self.gl_sc[g][i]
            if nt == rack_n:
                v += out
            if not found or v > best_val[0]:
                found = True
                best_val[0] = v
                best_mv[0] = mv
                best_sc[0] = self.gl_sc[g][i]
                best_lane[0] = idx
        return found

    cdef bint first_move(self, int ply, int depth, int p, int opp_val, int rack_n, uint64_t* mv_out,
                         int32_t* score) noexcept nogil:
        """The move negamax's ordering takes first at a node of ply >= 1 without a table move, found without
        listing the moves: the first in list order (gen_reuse's: lane by lane, the pass last) of highest
        estimate (score, + 2 * opp_val + EST_GOES_OUT going out, + the per-tile term of depths over 2). The
        lanes a sibling listed and this node's move left alone give their best from lane_maxima; the others
        are searched best bound first for the same estimate (RECORD_EG_BEST, seeded with the best so far).
        Returns False (nothing found) when no sibling has listed its lanes: the caller lists the moves."""
        cdef int c = ply - 1, d, lane, idx, i, dim = self.mg.dim, best_lane = 0
        cdef int64_t k = 0, v, best_v = 0, out_add = 2 * <int64_t> opp_val + EST_GOES_OUT
        cdef int pass_est = EST_PASS_BACK if self.g.zeros + 1 >= self.g.max_zeros else 0
        cdef bint found = False, search = False
        cdef uint64_t best_mv = 0
        cdef int32_t best_sc = 0
        cdef uint8_t dirty[2 * MAX_BOARD_DIM]
        cdef uint8_t lanes[2 * MAX_BOARD_DIM]
        cdef Move m
        if ply <= 0 or not self.lane_reuse or not self.lc_valid[c] or self.g.board.n_tiles == 0:
            return False
        if depth > 2:
            k = 3 if self.helper_id & 1 else -5
        self.move_lanes(&self.path_move[ply], dirty)
        if self.patch_probes:
            self.patch_lanes(c, p, opp_val, dirty)
        if not self.lc_max_valid[c] or self.lc_max_k[c] != k:
            self.lane_maxima(c, <int> k, rack_n)
        for d in range(2):
            for lane in range(dim):
                idx = d * MAX_BOARD_DIM + lane
                lanes[idx] = dirty[idx] or self.lc_dirty[c][idx]
                if lanes[idx]:
                    search = True
                    continue
                # this lane's first of highest estimate: going out or not, the earlier on a tie
                i = self.lc_no_i[c][idx]
                v = self.lc_no_v[c][idx]
                if self.lc_out_i[c][idx] >= 0 and (i < 0 or self.lc_out_v[c][idx] + out_add > v or
                                                   (self.lc_out_v[c][idx] + out_add == v and
                                                    self.lc_out_i[c][idx] < i)):
                    i = self.lc_out_i[c][idx]
                    v = self.lc_out_v[c][idx] + out_add
                if i >= 0 and (not found or v > best_v):
                    found = True
                    best_v = v
                    best_mv = self.lc_mv[c][i]
                    best_sc = self.lc_sc[c][i]
                    best_lane = idx
        if search:
            # the other lanes, best bound first; a play there replaces the best above only when higher, or
            # equal and in an earlier lane (the seed's order key sits at the end of its lane)
            self.mg.set_eg_value(1, out_add - k * rack_n, -k, 0)
            self.mg.eg_seeded = found
            self.mg.eg_seed_value = best_v
            self.mg.eg_seed_key = best_lane * 64 + 63
            self.mg.eg_shadow = True
            self.mg.lane_filter = lanes
            self.mg.gen_c(self.g.racks[p], 0, opp_val, RECORD_EG_BEST, 0, False)
            self.mg.lane_filter = NULL
            self.mg.eg_shadow = False
            self.mg.eg_seeded = False
            if self.mg.n_moves > 0:
                m = self.mg.move_buf[0]
                found = True
                best_v = self.mg.eg_best_value
                best_mv = pack_move(&m)
                best_sc = m.score
        if not found or pass_est > best_v:
            memset(&m, 0, sizeof(Move))
            m.kind = MOVE_PASS
            best_mv = pack_move(&m)
            best_sc = 0
        mv_out[0] = best_mv
        score[0] = best_sc
        return True

    cdef bint grace_over(self) noexcept nogil:
        cdef double t = now()
        if self.stop_seen == 0:
            self.stop_seen = t
        return t - self.stop_seen >= DEPTH1_GRACE

    cdef int search_c(self, int plies, int alpha, int beta) noexcept nogil:
        """One search of the attached game to `plies` (the root is a PV node). The result is meaningless
        when self.aborted is set."""
        self.aborted = False
        self.root_have = False
        self.stop_seen = 0
        self.atop = 0
        self.solver_player = self.g.on_turn
        if plies > EG_MAX_PLY - 1:
            plies = EG_MAX_PLY - 1
        return self.negamax(plies, 0, alpha, beta, True)

    cdef int id_search_c(self, int plies, int alpha, int beta) noexcept nogil:
        """Iterative deepening 1..plies; returns the deepest completed value, or when stopped during depth 1
        (never before its first root move is searched) the best root move's value so far."""
        cdef int d, v = 0, r
        for d in range(1, plies + 1):
            self.no_abort = d == 1
            self.root_guard = d == 1
            r = self.search_c(d, alpha, beta)
            self.no_abort = False
            self.root_guard = False
            if self.aborted:
                if d == 1 and self.root_have:
                    v = self.root_best
                break
            v = r
        return v

    # ------------------------------------------------------------ top-k root

    cdef void keep_line(self, RootLine* dst, uint64_t mv, int32_t score, int value) noexcept nogil:
        """dst becomes first move mv (with its score) followed by the line found at ply 1, worth value."""
        cdef int k, n = self.pv_len[1]
        if n > EG_MAX_PLY - 1:
            n = EG_MAX_PLY - 1
        dst.move[0] = mv
        dst.score[0] = score
        for k in range(n):
            dst.move[k + 1] = self.pv[1][k]
            dst.score[k + 1] = self.pv_score[1][k]
        dst.length = n + 1
        dst.value = value

    cdef int multi_search_c(self, int plies) noexcept nogil:
        """One top-k search of the attached game to `plies` (root_multi). The result is meaningless when
        self.aborted is set; top_lines then holds the first moves searched so far."""
        self.aborted = False
        self.root_have = False
        self.stop_seen = 0
        self.atop = 0
        self.solver_player = self.g.on_turn
        if plies > EG_MAX_PLY - 1:
            plies = EG_MAX_PLY - 1
        return self.root_multi(plies)

    cdef int root_multi(self, int depth) noexcept nogil:
        """The root of a top-k search: every first move is searched, the best multi_k of them and every forced
        one with a window that makes its value exact. A forced move, and any move while fewer than multi_k are
        kept, gets the full window; any other first a null window at the k-th best value kept (floor) and, when
        it beats it, the window (floor, +inf) again. A move that stays at or below the floor is worth no more
        than the k-th best, so the kept moves are the best k (on a tie the one searched first), and each kept
        value, found inside a window with no upper bound, is exact. The previous depth's best moves are
        searched first, in their order. Returns the best value; top_lines (n_top, best first) and
        forced_lines (where forced_done) hold the lines."""
        cdef int p = self.g.on_turn
        cdef int spread = self.g.score[p] - self.g.score[1 - p]
        cdef int tt_score = 0, tt_depth = 0, tt_flag = 0, v, i, j, n, base, f, floor, at, last
        cdef int opp_val, rack_n
        cdef int32_t sc
        cdef uint64_t tt_move = 0, mv
        cdef ArenaMove* a
        cdef Move m
        cdef bint exact
        self.pv_len[0] = 0
        self.n_top = 0
        for f in range(self.n_forced):
            self.forced_done[f] = False
        self.nodes += 1
        if self.g.over or self.multi_k < 1:
            return spread
        if self.use_tt:
            self.tt.probe(self.g.hash, &tt_score, &tt_depth, &tt_flag, &tt_move)
        opp_val = self.g.rack_value(1 - p)
        rack_n = self.g.rack_n[p]
        self.lc_valid[0] = False        # the children's lane reuse starts afresh
        self.d1_first[0] = False
        self.gl_valid[0] = False
        self.mg.gen_c(self.g.racks[p], 0, opp_val, RECORD_SMALL, 0, False)
        n = self.mg.n_moves
        base = self.list_moves(depth, rack_n, opp_val, tt_move)
        if base < 0:
            return 0
        a = &self.arena[base]
        for i in range(n):
            # the previous depth's best moves first, in their order
            for j in range(self.n_prev_top):
                if a[i].move == self.prev_top[j]:
                    a[i].est = (1 << 24) - j
                    break
        qsort(a, n, sizeof(ArenaMove), arena_cmp_desc)
        for i in range(n):
            if self.depth1_stop(depth, i):
                self.atop = base
                return 0
            a = &self.arena[base]   # the arena may move while children grow it
            mv = a[i].move
            sc = a[i].score
            f = -1
            for j in range(self.n_forced):
                if self.forced[j] == mv:
                    f = j
                    break
            unpack_move(mv, self.g.board, &m)
            m.score = sc
            self.path_move[1] = m
            self.g.play_c(&m)
            if f >= 0 or self.n_top < self.multi_k:
                v = -self.negamax(depth - 1, 1, -EG_INF, EG_INF, True)
                exact = True
            else:
                floor = self.top_lines[self.multi_k - 1].value
                v = -self.negamax(depth - 1, 1, -floor - 1, -floor, False)
                exact = False
                if not self.aborted and v > floor:
                    v = -self.negamax(depth - 1, 1, -EG_INF, -floor, True)
                    exact = v > floor
            self.g.undo_c()
            if self.aborted:
                self.atop = base
                return 0
            if not self.root_have or v > self.root_best:
                self.root_have = True
                self.root_best = v
                self.root_move = mv
                self.root_score = sc
            if self.root_guard:
                self.no_abort = False    # one root move is searched: from now on a stop is honoured
            if f >= 0:
                self.keep_line(&self.forced_lines[f], mv, sc, v)
                self.forced_done[f] = True
            if exact and (self.n_top < self.multi_k or v > self.top_lines[self.multi_k - 1].value):
                at = 0
                while at < self.n_top and self.top_lines[at].value >= v:
                    at += 1
                last = self.n_top if self.n_top < self.multi_k else self.multi_k - 1
                j = last
                while j > at:
                    self.top_lines[j] = self.top_lines[j - 1]
                    j -= 1
                self.keep_line(&self.top_lines[at], mv, sc, v)
                if self.n_top < self.multi_k:
                    self.n_top += 1
        self.atop = base
        # the best line is the principal variation of this search
        for j in range(self.top_lines[0].length):
            self.pv[0][j] = self.top_lines[0].move[j]
            self.pv_score[0][j] = self.top_lines[0].score[j]
        self.pv_len[0] = self.top_lines[0].length
        for j in range(self.n_top):
            self.prev_top[j] = self.top_lines[j].move[0]
        self.n_prev_top = self.n_top
        if self.use_tt:
            self.tt.store(self.g.hash, self.top_lines[0].value - spread, depth, TT_EXACT, self.top_lines[0].move[0])
        return self.top_lines[0].value

    def set_multi(self, int k, forced=()):
        """Top-k root searches: keep the best k first moves (1 to EG_MAX_TOP) and search the packed first moves
        `forced` (at most EG_MAX_FORCED) with a full window too; k = 0 turns it off."""
        cdef int i
        if not 0 <= k <= EG_MAX_TOP:
            raise ValueError(f"k must be 0 to {EG_MAX_TOP}")
        if len(forced) > EG_MAX_FORCED:
            raise ValueError(f"at most {EG_MAX_FORCED} forced first moves")
        if (k > 0 or len(forced) > 0) and self.top_lines == NULL:
            self.top_lines = <RootLine*> malloc(EG_MAX_TOP * sizeof(RootLine))
            self.forced_lines = <RootLine*> malloc(EG_MAX_FORCED * sizeof(RootLine))
            if self.top_lines == NULL or self.forced_lines == NULL:
                raise MemoryError()
        self.multi_k = k
        self.n_forced = len(forced)
        for i in range(self.n_forced):
            self.forced[i] = forced[i]
            self.forced_done[i] = False
        self.n_top = 0
        self.n_prev_top = 0

    def multi_lines(self):
        """The last top-k search's results: ([(value, line)] best first, [(value, line) or None] per forced
        move), values as final spreads for the player to move; lines [(packed, score)] with the first move
        first. After a stopped search: the first moves searched before the stop."""
        top = [(self.top_lines[i].value, [(self.top_lines[i].move[j], self.top_lines[i].score[j])
                                          for j in range(self.top_lines[i].length)]) for i in range(self.n_top)]
        forced = [(self.forced_lines[i].value, [(self.forced_lines[i].move[j], self.forced_lines[i].score[j])
                                                for j in range(self.forced_lines[i].length)])
                  if self.forced_done[i] else None for i in range(self.n_forced)]
        return top, forced

    # ------------------------------------------------------------ Python API

    def search(self, int plies, int alpha=-EG_INF, int beta=EG_INF, bint iterative=True):
        """Search the bound game; returns the final spread for the player to move (iterative: the deepest
        completed depth's, or the best root move's so far when stopped during depth 1)."""
        cdef int v
        if self.g is None:
            raise ValueError("no game is bound")
        with nogil:
            if iterative:
                v = self.id_search_c(plies, alpha, beta)
            else:
                self.no_abort = False
                v = self.search_c(plies, alpha, beta)
        return v

    def principal_variation(self):
        """(packed move, score) pairs of the last completed root search."""
        return [(self.pv[0][i], self.pv_score[0][i]) for i in range(self.pv_len[0])]

    def partial_root(self):
        """After a search stopped before completing: (value, line) of the best fully searched root move,
        or None. The line is the principal variation when it starts with that move (a full window), else
        the move alone."""
        if not self.root_have:
            return None
        if self.pv_len[0] > 0 and self.pv[0][0] == self.root_move:
            return self.root_best, self.principal_variation()
        return self.root_best, [(self.root_move, self.root_score)]

    def set_deadline(self, double deadline):
        self.deadline = deadline

    def request_stop(self):
        self.stop_flag[0] = 1

    def clear_stop(self):
        self.stop_flag[0] = 0


    def playout_line(self, Game game):
        """The greedy playout's moves from `game` (as scored at the search's leaves, with the solving side
        being the player on turn at the root of the solve): [(packed, score)]."""
        cdef uint64_t mvs[32]
        cdef int32_t scs[32]
        cdef int n = 0
        self.attach(game)
        self.playout(mvs, scs, &n, -1)
        return [(mvs[i], scs[i]) for i in range(n)]


def decode_line(Game game, line):
    """Replay a principal variation on a copy of `game`: a list of (kind, row, col, vertical, tiles, score)
    with kind 'place' / 'exchange' / 'pass' and tiles per square (0 = played-through)."""
    cdef Game g = game.clone()
    cdef Move m
    kinds = ("place", "exchange", "pass")
    out = []
    for packed, score in line:
        if g.over:
            break
        if unpack_move(<uint64_t> packed, g.board, &m) != 0 and packed_kind(packed) == MOVE_PLACE:
            raise ValueError("the line does not fit the board")
        m.score = score
        out.append((kinds[m.kind], m.row, m.col, bool(m.vertical), tuple(m.tiles[i] for i in range(m.length)),
                    score))
        g.play_c(&m)
    return out


@cython.final
cdef class EndgameSolver:
    """Iterative deepening over a shared table with Lazy SMP helper threads. Reusable across positions."""
    cdef readonly TranspositionTable tt
    cdef list workers
    cdef int stop_flag
    cdef Kwg kwg
    cdef LetterDistribution ld
    cdef int bingo_bonus
    cdef public bint lane_reuse  # the workers' lane_reuse (children reuse a sibling's untouched lanes)
    cdef public bint d1_cut      # the workers' d1_cut (the last ply stops at beta)
    cdef public bint probe_first # the workers' probe_first (a node's first move searched before listing)
    cdef public bint patch_probes  # the workers' patch_probes (a probe lists the lanes only its siblings touched)
    cdef public bint last_ply_bounded  # the workers' last_ply_bounded (off: its values are not asked again)

    def __init__(self, Kwg kwg, LetterDistribution ld, int tt_megabytes=256, int bingo_bonus=50):
        self.lane_reuse = True
        self.d1_cut = True
        self.probe_first = True
        self.patch_probes = True
        self.last_ply_bounded = False
        self.kwg = kwg
        self.ld = ld
        self.bingo_bonus = bingo_bonus
        self.tt = TranspositionTable(tt_megabytes)
        self.workers = []
        self.stop_flag = 0

    cdef EndgameWorker worker(self, int i, Kwg kwg):
        """Thread i's worker, generating moves in `kwg` (the solver's lexicon or one pruned to the board)."""
        cdef EndgameWorker w
        while len(self.workers) <= i or (<EndgameWorker> self.workers[i]).mg.kwg is not kwg:
            w = EndgameWorker(kwg, self.ld, self.tt, self.bingo_bonus)
            w.stop_flag = &self.stop_flag
            if len(self.workers) <= i:
                w.helper_id = len(self.workers)
                self.workers.append(w)
            else:
                w.helper_id = i
                self.workers[i] = w
        return self.workers[i]

    def stop(self):
        """Stop the running solve (or, when none runs, the next one: a stop that races the start of a solve
        is not lost); it returns the deepest completed result."""
        self.stop_flag = 1

    def clear_table(self):
        """Empty the transposition table (the part in use so far; the rest was never written)."""
        self.tt.clear()

    @property
    def nodes(self):
        return sum((<EndgameWorker> w).nodes for w in self.workers)

    @property
    def lane_stats(self):
        """(lanes generated, lanes reused) by lane reuse over every worker's searches (work counters)."""
        return (sum((<EndgameWorker> w).lanes_generated for w in self.workers),
                sum((<EndgameWorker> w).lanes_reused for w in self.workers))

    @property
    def bounded_stats(self):
        """(last-ply nodes searched best bound first, of which took their grandparent's list, of which decided
        by it alone) over every worker's searches (EndgameWorker.last_ply_bounded)."""
        return (sum((<EndgameWorker> w).last_ply_bounded_nodes for w in self.workers),
                sum((<EndgameWorker> w).grand_nodes for w in self.workers),
                sum((<EndgameWorker> w).grand_cuts for w in self.workers))

    @property
    def playout_stats(self):
        """(playout steps listed from the list two moves back or in full, lanes taken from such a list) over
        every worker's searches (EndgameWorker.playout_list; lane_reuse only)."""
        return (sum((<EndgameWorker> w).playout_lists for w in self.workers),
                sum((<EndgameWorker> w).playout_lanes_kept for w in self.workers))

    @property
    def probe_stats(self):
        """(first moves searched before listing, of which cut at once) over every worker's searches."""
        return (sum((<EndgameWorker> w).probes for w in self.workers),
                sum((<EndgameWorker> w).probe_cuts for w in self.workers))

    def solve(self, Game game, int plies, double max_time=0, int threads=1, bint first_win=False,
              bint heuristics=True, bint use_tt=True, progress=None, bint prune=True, int top_k=0, also=()):
        """Solve `game` (bag empty) to `plies`. Returns a dict: value (spread change for the player to
        move), final_spread, line [(packed, score)], depth (deepest completed), nodes, seconds, complete
        (every requested ply searched), stopped.

        With top_k > 1 or `also` (packed first moves, at most EG_MAX_FORCED) the root keeps the best top_k
        first moves (1 to EG_MAX_TOP) with exact values (EndgameWorker.root_multi), and values every move of
        `also` exactly too: the dict adds "lines" (best first) and "also" (one per move of `also`, None when
        a stop came before it was searched), each a dict of value, final_spread, line and estimated (the
        greedy playout past the horizon). A first move of `also` that is not legal here is a ValueError.

        With `prune` (the default) the search generates moves in the lexicon pruned to this board and the
        unplayed tiles (engine_cy.prune): the same moves in the same order, so the same values and node
        counts, with less work per node.

        progress(dict) is called after each completed depth with the same keys."""
        import threading
        cdef EndgameWorker main, w
        cdef int d, r, start_spread, alpha, beta, i
        cdef double t0 = now()
        cdef Game root
        if plies < 1 or plies > EG_MAX_PLY - 1:
            raise ValueError(f"plies must be 1 to {EG_MAX_PLY - 1}")
        if threads < 1:
            raise ValueError("threads must be at least 1")
        if game.bag_size != 0:
            raise ValueError(f"the bag is not empty ({game.bag_size} tiles): the endgame solver needs an empty bag")
        if game.kwg is not self.kwg:
            raise ValueError("the game and the solver use different lexica")
        cdef bint multi
        also = [int(x) for x in also]
        multi = top_k > 1 or len(also) > 0
        if multi and first_win:
            raise ValueError("top-k and also-solve values are exact: they do not combine with first-win")
        if not 0 <= top_k <= EG_MAX_TOP:
            raise ValueError(f"top-k must be 1 to {EG_MAX_TOP}, got {top_k}")
        if len(also) > EG_MAX_FORCED:
            raise ValueError(f"at most {EG_MAX_FORCED} also-solve moves, got {len(also)}")
        kwg = pruned_kwg(game) if prune else self.kwg
        root = game.with_lexicon(kwg) if prune else game.clone()
        root.solver_mode()
        p = root.on_turn
        sc = root.scores
        start_spread = sc[p] - sc[1 - p]
        deadline = t0 + max_time if max_time > 0 else 0
        for i in range(threads):
            w = self.worker(i, kwg)
            w.nodes = 0
            w.deadline = deadline
            w.heuristics = heuristics
            w.use_tt = use_tt
            w.lane_reuse = self.lane_reuse
            w.d1_cut = self.d1_cut
            w.probe_first = self.probe_first
            w.patch_probes = self.patch_probes
            w.last_ply_bounded = self.last_ply_bounded
            w.attach(root if i == 0 else root.clone())
            w.set_multi(0)
        main = self.workers[0]
        alpha = -1 if first_win else -EG_INF
        beta = 1 if first_win else EG_INF
        result = {"value": 0, "final_spread": start_spread, "line": [], "depth": 0, "nodes": 0,
                  "seconds": 0.0, "complete": False, "stopped": False}
        if multi:
            result.update(lines=[], also=[None] * len(also))
            if also:
                legal = set(_first_moves(main, root))
                for i, mv in enumerate(also):
                    if mv not in legal:
                        raise ValueError(f"also-solve move {i + 1} is not a legal first move here")
            main.set_multi(max(top_k, 1), also)
        if root.game_over:
            self.stop_flag = 0
            result.update(complete=True, seconds=now() - t0)
            return result

        helpers = []
        for i in range(1, threads):
            helpers.append(threading.Thread(target=_helper_run, args=(self.workers[i], plies, alpha, beta,
                                                                        i), daemon=True))
        for h in helpers:
            h.start()
        try:
            for d in range(1, plies + 1):
                # depth 1 cannot be stopped before its first root move is searched; stopped later, it reports
                # the best root move searched so far (depth 0: no depth completed)
                main.no_abort = d == 1
                main.root_guard = d == 1
                with nogil:
                    if multi:
                        r = main.multi_search_c(d)
                    else:
                        r = main.search_c(d, alpha, beta)
                main.no_abort = False
                main.root_guard = False
                if main.aborted:
                    partial = main.partial_root() if d == 1 else None
                    if partial is not None:
                        if multi:
                            top, forced = main.multi_lines()
                            partial = (top[0][0], top[0][1])
                            _multi_result(result, top, forced, start_spread)
                        result.update(value=partial[0] - start_spread, final_spread=partial[0],
                                      line=partial[1], depth=0, nodes=self.nodes, seconds=now() - t0)
                    break
                result.update(value=r - start_spread, final_spread=r, line=main.principal_variation(), depth=d,
                              nodes=self.nodes, seconds=now() - t0)
                if multi:
                    top, forced = main.multi_lines()
                    _multi_result(result, top, forced, start_spread)
                if progress is not None:
                    progress(dict(result))
                if first_win and r != 0:
                    pass  # a decided sign at a shallower depth may still flip deeper: keep going
        finally:
            self.stop_flag = 1
            for h in helpers:
                h.join()
            self.stop_flag = 0     # the solver is ready for the next solve
        result["estimated"] = _estimated(main, root, result["line"]) if heuristics else []
        if multi:
            for entry in result["lines"] + result["also"]:
                if entry is not None:
                    entry["estimated"] = _estimated(main, root, entry["line"]) if heuristics else []
        result["complete"] = result["depth"] == plies
        result["stopped"] = not result["complete"]
        result["nodes"] = self.nodes
        result["seconds"] = now() - t0
        return result


cdef list _first_moves(EndgameWorker w, Game root):
    """The packed first moves the root of a search generates (the worker attached to root)."""
    cdef int p = root.on_turn
    w.mg.gen_c(root.racks[p], 0, root.rack_value(1 - p), RECORD_SMALL, 0, False)
    return [w.mg.small_buf[i] for i in range(w.mg.n_moves)]


def _multi_result(dict result, list top, list forced, int start_spread):
    """A top-k search's lines into a solve's result (values as spread changes)."""
    result["lines"] = [{"value": v - start_spread, "final_spread": v, "line": line} for v, line in top]
    result["also"] = [None if x is None else {"value": x[0] - start_spread, "final_spread": x[0], "line": x[1]}
                      for x in forced]


cdef list _estimated(EndgameWorker main, Game root, list line):
    """The moves past the horizon of a line searched from root: the greedy playout that scored its leaf."""
    cdef list out = []
    if not line:
        return out
    end = root.clone()
    for packed, score in line:
        _play_packed(end, packed, score)
    if not end.game_over:
        main.solver_player = root.on_turn
        out = main.playout_line(end)
    main.attach(root)
    return out


cdef _play_packed(Game g, uint64_t packed, int score):
    cdef Move m
    unpack_move(packed, g.board, &m)
    m.score = score
    g.play_c(&m)


def _helper_run(EndgameWorker w, int plies, int alpha, int beta, int helper):
    cdef int d, start
    # odd helpers run one ply ahead of the main thread so they fill the table where it is going next
    with nogil:
        start = 1 + (helper & 1)
        d = start
        while d <= plies and read_flag(w.stop_flag) == 0:
            w.no_abort = False
            w.search_c(d, alpha, beta)
            if w.aborted:
                break
            d += 1
