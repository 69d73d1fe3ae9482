# Pre-endgame solver core: for one candidate play and one draw order of the bag,
# the pessimistic outcome - win only if every opponent reply still loses for them; our own later turns
# with a non-empty bag are decided by a nested solve over what we can know (every sub-draw), choosing
# the play with the fewest expected losses and assuming the worst among tied plays.
#
# Outcomes are ordered from best to worst for the solving side: WIN < DRAW < UNRESOLVED < LOSS, and
# a merge keeps the worst. UNRESOLVED marks branches cut by a stop, and by the nesting limit when
# cap_outcome says so: a continuation past the limit takes the outcome cap_outcome (WIN: it is skipped,
# the reference engines' semantics; UNRESOLVED: it is marked). Every verdict that a continuation past
# the limit could have changed is flagged (last_capped), so that callers can bound what the limit did.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memset, memcpy, memchr

cdef extern from "portable.h":
    int macondo_try_lock(int* flag) noexcept nogil
    void macondo_unlock(int* flag) noexcept nogil
    int MACONDO_ATOMIC_LOCK

from engine_cy.common cimport ml_t, MAX_ALPHABET, RACK_SIZE
from engine_cy.game cimport Game
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.move cimport Move, MOVE_PLACE, MOVE_PASS, unpack_move, packed_kind, move_from_fields
from engine_cy.movegen cimport MoveGen, RECORD_SMALL
from engine_cy.endgame cimport EndgameWorker, TranspositionTable, ArenaMove, EG_INF, arena_cmp_desc

cdef enum:
    O_WIN = 0
    O_DRAW = 1
    O_UNRES = 2
    O_LOSS = 3
    MAX_SEQ = 8

OUTCOME_NAMES = ("win", "draw", "unresolved", "loss")


cdef struct KeyIdx:
    uint64_t key
    int idx


cdef int _key_cmp(const void* a, const void* b) noexcept nogil:
    cdef const KeyIdx* x = <const KeyIdx*> a
    cdef const KeyIdx* y = <const KeyIdx*> b
    if x.key != y.key:
        return -1 if x.key < y.key else 1
    return (x.idx > y.idx) - (x.idx < y.idx)


cdef int _count_seqs(uint8_t* counts, int size, int k) noexcept nogil:
    cdef int ml, n = 0
    if k == 0:
        return 1
    for ml in range(size):
        if counts[ml]:
            counts[ml] -= 1
            n += _count_seqs(counts, size, k - 1)
            counts[ml] += 1
    return n


cdef int _fill_seqs(uint8_t* counts, int size, int k, int depth, ml_t* cur, ml_t* seqs, int64_t* weights,
                    int n, int64_t w) noexcept nogil:
    cdef int ml, c
    if depth == k:
        memcpy(&seqs[n * MAX_SEQ], cur, MAX_SEQ)
        if weights != NULL:
            weights[n] = w
        return n + 1
    for ml in range(size):
        c = counts[ml]
        if c:
            counts[ml] -= 1
            cur[depth] = <ml_t> ml
            n = _fill_seqs(counts, size, k, depth + 1, cur, seqs, weights, n, w * c)
            counts[ml] += 1
    return n


cdef uint64_t _group_key(const ml_t* seq, int k, int t) noexcept nogil:
    """Draws that leave the same position: the first t tiles as a multiset, the rest in order."""
    cdef ml_t head[MAX_SEQ]
    cdef int i, j
    cdef ml_t x
    cdef uint64_t key = 0
    if t > k:
        t = k
    for i in range(t):
        head[i] = seq[i]
    for i in range(1, t):
        x = head[i]
        j = i - 1
        while j >= 0 and head[j] > x:
            head[j + 1] = head[j]
            j -= 1
        head[j + 1] = x
    for i in range(t):
        key = (key << 6) | head[i]
    key = (key << 6) | 63   # separator
    for i in range(t, k):
        key = (key << 6) | seq[i]
    return key


cdef int _seq_index(const ml_t* seqs, int nq, int k, const ml_t* seq) noexcept nogil:
    """Index of `seq` (k tiles) among the nq sequences of _fill_seqs, or -1."""
    cdef int qi, i
    for qi in range(nq):
        for i in range(k):
            if seqs[qi * MAX_SEQ + i] != seq[i]:
                break
        else:
            return qi
    return -1


cdef void _group_reps(const ml_t* seqs, int nq, int k, KeyIdx* keys, int* reps) noexcept nogil:
    """reps[t * nq + qi]: the first sub-draw equivalent to sub-draw qi after a play of t tiles (they leave
    the same position, so they share one solve)."""
    cdef int t, qi, i, r
    for t in range(k + 1):
        for qi in range(nq):
            keys[qi].key = _group_key(&seqs[qi * MAX_SEQ], k, t)
            keys[qi].idx = qi
        qsort(keys, nq, sizeof(KeyIdx), _key_cmp)
        r = keys[0].idx
        for i in range(nq):
            if i > 0 and keys[i].key != keys[i - 1].key:
                r = keys[i].idx
            reps[t * nq + keys[i].idx] = r


cdef enum:
    NEST_CACHE = 4096          # nested verdict arrays kept per worker (direct-mapped)
    NEST_MAX_DRAWS = 20000     # larger nested solves are not cached


cdef inline void _lock(int* flag) noexcept nogil:
    """Take a spin lock (its holders only copy a few words)."""
    while not macondo_try_lock(flag):
        pass


cdef struct NestEntry:
    uint64_t key
    int nq
    bint capped                # a continuation past the nesting limit took part in the verdicts
    uint8_t* verdict


cdef uint64_t PLAYOUT_SALT = 0x9E3779B97F4A7C15ULL

cdef uint64_t ENDGAME_SALT = 0xD6E8FEB86659FD93ULL

cdef enum:
    RISK_CACHE = 16384         # at_risk answers kept per worker (direct-mapped)
    ENDGAME_CACHE = 262144     # endgame verdicts kept (direct-mapped; 2 MB), shared by a job's threads
    MAX_MOVES_CHOICE = 4096    # tied plays an opponent's choice can hold (more are not examined)
    CHOICE_CACHE = 1024        # the opponent's choices kept per worker (direct-mapped)
    CHOICE_MAX = 16            # tied plays kept per choice (a choice with more is not cached)


cdef struct ChoiceEntry:
    uint64_t key
    int n                      # tied plays (0: empty slot)
    bint capped                # a continuation past the nesting limit took part in the choice
    uint64_t moves[CHOICE_MAX]
    int32_t scores[CHOICE_MAX]


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= 0xFF51AFD7ED558CCDULL
    x ^= x >> 33
    x *= 0xC4CEB9FE1A85EC53ULL
    x ^= x >> 33
    return x


@cython.final
cdef class PegWorker:
    """One thread's pre-endgame state: a game copy in solver mode, a move generator (with leaves, to order
    our nested candidates) and an endgame worker sharing the solve's transposition table."""
    cdef Game g
    cdef EndgameWorker eg
    cdef MoveGen mg
    cdef public int plies
    cdef public int max_nested
    # the outcome of a continuation past the nesting limit (O_WIN: skipped; O_UNRES: marked unresolved)
    cdef public int cap_outcome
    # set when a continuation past the nesting limit took part in the verdict being computed (see every_reply)
    cdef bint capped
    cdef public long long cap_hits
    cdef public bint skip_deep_pass
    cdef bint exact
    cdef int last_spread
    cdef int me
    cdef int own_stop
    cdef public long long endgames
    cdef public long long nested_calls
    # a trace of the first nested solve (for --eventuality): chosen play, sub-draws and their verdicts
    cdef bint tracing
    cdef bint trace_have
    cdef Move trace_move
    cdef int trace_n, trace_k, trace_actual
    cdef ml_t* trace_seqs
    cdef int64_t* trace_weights
    cdef uint8_t* trace_verdict
    # nested-solve cache: a nested verdict depends on what we can see (board, our rack, spread, scoreless
    # turns, depth), not on the opponent's rack or the bag order, so every draw that reaches the same
    # position shares it. A job's threads share one (the cache owner's), each access under its lock
    cdef NestEntry* ncache
    cdef int nest_lock_flag
    cdef int* nest_lock           # the flag guarding ncache (the cache owner's)
    cdef bint nest_ok
    cdef public long long nested_hits
    cdef public bint use_nested_cache
    # quick passes: at most this many moves per decision (opponent replies, our nested candidates); 0 = all
    cdef public int max_replies
    # the opponent model when the opponent moves with tiles in the bag: False = pessimistic (every reply),
    # True = solver (they solve their own pre-endgame from what they can see; ties go against us)
    cdef public bint opp_solver
    cdef public long long opp_solves
    cdef public long long opp_solve_hits
    cdef public long long choice_skips   # opponent's solves not needed: we win against every reply
    cdef public bint skip_won_choice     # judge every reply before the opponent's solve (tests turn it off)
    cdef ChoiceEntry* ccache
    # endgame leaves: 0 static (the spread), 1 greedy playout everywhere, 2 auto: a greedy playout in the
    # endgames where a tile is stuck or at risk at the root (at most `risk_moves` plays use it), static elsewhere
    cdef public int leaf_mode
    cdef public int risk_moves
    cdef public long long playout_endgames
    cdef uint64_t* risk_cache     # at_risk answers by board and rack (the answer in the lowest bit)
    # endgame verdicts by position (board, racks, passes, turn), spread and settings, the outcome for the player
    # to move in the lowest two bits. Draws that differ only in the tile left in the bag give the same endgame
    # after every reply that does not need that tile (the opponent draws it back): it is solved once.
    cdef uint64_t* eg_cache
    cdef bint eg_cache_on         # within solve_draw (explanations search every endgame for its line)
    cdef public bint use_endgame_cache
    cdef public long long endgame_hits
    cdef PegWorker cache_owner    # the worker whose endgame and nested caches this one uses (None: its own)
    cdef bint own_cache           # eg_cache is this worker's to free
    cdef bint own_ncache          # ncache is this worker's to free

    def __init__(self, Game root, Kwg kwg, Klv klv, LetterDistribution ld, TranspositionTable tt,
                 int bingo_bonus=50):
        self.g = root.clone()
        if self.g.max_zeros != 2:
            self.g.solver_mode()
        self.eg = EndgameWorker(kwg, ld, tt, bingo_bonus)
        self.eg.attach(self.g)
        self.eg.stop_flag = &self.own_stop
        self.eg.last_ply_bounded = True      # each endgame is one null-window search
        self.mg = MoveGen(kwg, ld, klv, bingo_bonus)
        self.mg.bind(self.g.board)
        self.me = self.g.on_turn
        self.plies = 4
        self.max_nested = 1
        self.cap_outcome = O_UNRES
        self.capped = False
        self.cap_hits = 0
        self.skip_deep_pass = True
        self.exact = False
        self.own_stop = 0
        self.endgames = 0
        self.nested_calls = 0
        self.tracing = False
        self.trace_have = False
        self.ncache = <NestEntry*> calloc(NEST_CACHE, sizeof(NestEntry))
        if self.ncache == NULL:
            raise MemoryError()
        self.nest_lock_flag = 0
        self.nest_lock = &self.nest_lock_flag
        self.own_ncache = True
        self.nested_hits = 0
        self.use_nested_cache = True
        self.max_replies = 0
        self.opp_solver = False
        self.opp_solves = 0
        self.opp_solve_hits = 0
        self.choice_skips = 0
        self.skip_won_choice = True
        self.leaf_mode = 0
        self.risk_moves = 2
        self.playout_endgames = 0
        self.risk_cache = <uint64_t*> calloc(RISK_CACHE, sizeof(uint64_t))
        if self.risk_cache == NULL:
            raise MemoryError()
        self.ccache = <ChoiceEntry*> calloc(CHOICE_CACHE, sizeof(ChoiceEntry))
        if self.ccache == NULL:
            raise MemoryError()
        self.eg_cache = <uint64_t*> calloc(ENDGAME_CACHE, sizeof(uint64_t))
        if self.eg_cache == NULL:
            raise MemoryError()
        self.own_cache = True
        self.eg_cache_on = False
        self.use_endgame_cache = True
        self.endgame_hits = 0
        self.trace_seqs = NULL
        self.trace_weights = NULL
        self.trace_verdict = NULL

    def __dealloc__(self):
        self._free_trace()
        if self.own_ncache:
            self._free_nest_cache()
        if self.own_cache:
            free(self.eg_cache)
        free(self.ccache)
        free(self.risk_cache)

    cdef void _free_nest_cache(self) noexcept nogil:
        cdef int i
        if self.ncache != NULL:
            for i in range(NEST_CACHE):
                free(self.ncache[i].verdict)
            free(self.ncache)
        self.ncache = NULL

    cdef void _free_trace(self) noexcept nogil:
        free(self.trace_seqs)
        free(self.trace_weights)
        free(self.trace_verdict)
        self.trace_seqs = NULL
        self.trace_weights = NULL
        self.trace_verdict = NULL
        self.trace_have = False

    def share_endgame_cache(self, PegWorker owner not None):
        """Use `owner`'s endgame and nested verdict caches from now on (the workers of one job, on threads: an
        endgame or a nested solve one of them solved, the others find, whichever draw or play reaches it). An
        endgame entry is one aligned 64-bit word holding its key, so a read racing a write sees the old entry
        or the new one, and either is a verdict of the position its key names; the nested entries are read
        and written under the owner's lock. Its own caches are dropped; `owner` is kept alive."""
        if owner.cache_owner is not None:
            owner = owner.cache_owner
        if owner is self or self.cache_owner is owner:
            return
        if self.own_cache:
            free(self.eg_cache)
        self.own_cache = False
        self.eg_cache = owner.eg_cache
        if MACONDO_ATOMIC_LOCK:     # (else each keeps its own: the lock would not exclude)
            if self.own_ncache:
                self._free_nest_cache()
            self.own_ncache = False
            self.ncache = owner.ncache
            self.nest_lock = &owner.nest_lock_flag
        self.cache_owner = owner

    def request_stop(self):
        self.own_stop = 1

    @property
    def heuristics(self):
        return self.leaf_mode == 1

    @heuristics.setter
    def heuristics(self, bint on):
        self.leaf_mode = 1 if on else 0

    def set_deadline(self, double deadline):
        self.eg.deadline = deadline

    def endgame_options(self, lane_reuse=None, d1_cut=None, probe_first=None, last_ply_bounded=None):
        """The endgame searcher's speed options (for tests and benchmarks: results are the same either way);
        returns the current (lane_reuse, d1_cut, probe_first, last_ply_bounded)."""
        if lane_reuse is not None:
            self.eg.lane_reuse = lane_reuse
        if d1_cut is not None:
            self.eg.d1_cut = d1_cut
        if probe_first is not None:
            self.eg.probe_first = probe_first
        if last_ply_bounded is not None:
            self.eg.last_ply_bounded = last_ply_bounded
        return self.eg.lane_reuse, self.eg.d1_cut, self.eg.probe_first, self.eg.last_ply_bounded

    @property
    def last_ply_bounded_nodes(self):
        """Last-ply nodes searched best bound first from alpha up (EndgameWorker.last_ply_bounded)."""
        return self.eg.last_ply_bounded_nodes

    @property
    def grand_stats(self):
        """(last-ply nodes that took their grandparent's list, of which decided by it alone) (EndgameWorker
        grand_best)."""
        return self.eg.grand_nodes, self.eg.grand_cuts

    @property
    def stopped(self):
        return self.own_stop != 0

    @property
    def nodes(self):
        """Endgame search nodes so far (all searches of this worker): the work, whatever the machine's load."""
        return self.eg.nodes

    # ------------------------------------------------------------ C core

    cdef bint at_risk(self, int player) noexcept nogil:
        """Whether the player holds a tile that at most risk_moves legal placements use (0: a stuck tile).
        The answer depends on the board and that rack only: cached by them."""
        cdef uint64_t key, need = 0
        cdef int ml
        cdef bint res = False
        key = _mix(self.g.hash ^ self.g.rack_hash(1 - player) ^ (<uint64_t> player << 60)
                   ^ (<uint64_t> self.risk_moves << 52)) & ~(<uint64_t> 1)
        if key == 0:
            key = 2
        if (self.risk_cache[(key >> 1) & (RISK_CACHE - 1)] & ~(<uint64_t> 1)) == key:
            return self.risk_cache[(key >> 1) & (RISK_CACHE - 1)] & 1
        for ml in range(self.g.ld.size):
            if self.g.racks[player][ml]:
                need |= (<uint64_t> 1) << ml
        # at risk: a letter of the rack (the blank included) that at most risk_moves placed tiles use
        res = need != 0 and self.mg.letters_used(self.g.racks[player], need, self.risk_moves + 1) != need
        self.risk_cache[(key >> 1) & (RISK_CACHE - 1)] = key | (<uint64_t> res)
        return res

    cdef int endgame_outcome(self) noexcept nogil:
        cdef int p = self.g.on_turn, v, s, o
        cdef bint playout, cached
        cdef uint64_t key = 0, e
        if self.g.over:
            s = self.g.score[self.me] - self.g.score[1 - self.me]
        else:
            if self.own_stop:
                return O_UNRES
            if self.plies == 1 and self.leaf_mode == 0 and not self.exact and self.g.zeros + 1 < self.g.max_zeros \
                    and self.g.score[p] - self.g.score[1 - p] >= 1:
                # one ply with static leaves: passing keeps the spread, so the mover's value is at least it
                self.endgames += 1
                s = self.g.score[p] - self.g.score[1 - p]
                if p != self.me:
                    s = -s
                self.last_spread = s
                return O_WIN if s > 0 else O_LOSS
            cached = self.eg_cache_on and self.use_endgame_cache and not self.exact
            if cached:
                # the verdict depends on the position (its hash), the spread and the search's settings only
                key = _mix(self.g.hash ^ _mix(<uint64_t> (self.g.score[p] - self.g.score[1 - p] + 100000))
                           ^ (<uint64_t> self.plies << 40) ^ (<uint64_t> self.leaf_mode << 48)
                           ^ (<uint64_t> self.risk_moves << 52) ^ ENDGAME_SALT)
                e = self.eg_cache[(key >> 2) & (ENDGAME_CACHE - 1)]
                if (e >> 2) == (key >> 2):
                    self.endgames += 1
                    self.endgame_hits += 1
                    o = <int> (e & 3)
                    if p != self.me and o != O_DRAW:
                        o = O_LOSS if o == O_WIN else O_WIN
                    self.last_spread = 1 if o == O_WIN else (0 if o == O_DRAW else -1)
                    return o
            self.eg.no_abort = False
            playout = self.leaf_mode == 1 or (self.leaf_mode == 2 and (self.at_risk(0) or self.at_risk(1)))
            self.eg.heuristics = playout
            if playout:
                self.playout_endgames += 1
                if self.leaf_mode == 2:
                    # these endgames value leaves differently: their positions get their own table entries
                    self.g.hash ^= PLAYOUT_SALT
            if self.exact:
                v = self.eg.search_c(self.plies, -EG_INF, EG_INF)
            else:
                v = self.eg.search_c(self.plies, -1, 1)
            if playout and self.leaf_mode == 2:
                self.g.hash ^= PLAYOUT_SALT
            if self.eg.aborted:
                return O_UNRES
            self.endgames += 1
            if cached:
                o = O_WIN if v > 0 else (O_DRAW if v == 0 else O_LOSS)
                self.eg_cache[(key >> 2) & (ENDGAME_CACHE - 1)] = (key & ~(<uint64_t> 3)) | <uint64_t> o
            s = v if p == self.me else -v
        self.last_spread = s
        if s > 0:
            return O_WIN
        if s == 0:
            return O_DRAW
        return O_LOSS

    cdef int solve_move(self, Move* m, int dn) noexcept nogil:
        cdef int res
        self.g.play_c(m)
        if self.g.over or self.g.bag_n == 0:
            res = self.endgame_outcome()
        elif self.g.on_turn != self.me:
            res = self.opp_replies(dn)
        elif self.max_nested >= 0 and dn + 1 > self.max_nested:
            res = self.cap_outcome
            self.capped = True
            self.cap_hits += 1
        else:
            res = self.nested(dn + 1)
        self.g.undo_c()
        return res

    cdef bint judge(self, uint64_t packed, int score, int dn, int* worst) noexcept nogil:
        """Our outcome after the opponent's reply `packed`, merged into *worst (the worst so far); True when
        nothing more can change it (a loss, or a stop: then at least unresolved)."""
        cdef Move m
        cdef int o
        unpack_move(packed, self.g.board, &m)
        m.score = score
        o = self.solve_move(&m, dn)
        if o > worst[0]:
            worst[0] = o
        if worst[0] == O_LOSS:
            return True
        if self.own_stop:
            if worst[0] < O_UNRES:
                worst[0] = O_UNRES
            return True
        return False

    cdef int candidates(self, int p, int k, ArenaMove** out) noexcept nogil:
        """Player p's candidates for a nested solve with k tiles in the bag, best static equity first (a pass
        only after a pass when skip_deep_pass), at most max_replies in quick passes. *out is allocated here
        (the caller frees it); returns how many, or -1 without memory."""
        cdef int i, n_c = 0
        cdef bint after_pass = self.g.zeros + 1 >= self.g.max_zeros
        cdef ArenaMove* cands
        self.mg.gen_c(self.g.racks[p], k, -1, RECORD_SMALL, 0, False)
        cands = <ArenaMove*> malloc((self.mg.n_moves + 1) * sizeof(ArenaMove))
        out[0] = cands
        if cands == NULL:
            return -1
        for i in range(self.mg.n_moves):
            if packed_kind(self.mg.small_buf[i]) == MOVE_PASS and self.skip_deep_pass and not after_pass:
                continue
            cands[n_c].move = self.mg.small_buf[i]
            cands[n_c].score = self.mg.small_score[i]
            cands[n_c].est = self.mg.small_equity[i]
            n_c += 1
        qsort(cands, n_c, sizeof(ArenaMove), arena_cmp_desc)
        if self.max_replies > 0 and n_c > self.max_replies:
            n_c = self.max_replies
        return n_c

    cdef int opp_replies(self, int dn) noexcept nogil:
        """Every reply of the opponent (placements and pass); the worst outcome for us. In solver mode (and
        within the nesting limit) the opponent instead chooses by their own nested solve."""
        cdef int o
        if self.opp_solver and self.max_replies == 0 and self.g.bag_n > 0 and \
                (self.max_nested < 0 or dn + 1 <= self.max_nested):
            o = self.solver_replies(dn)
            if o >= 0:
                return o
        return self.every_reply(dn)

    cdef int every_reply(self, int dn) noexcept nogil:
        """Our worst outcome over every reply of the opponent (placements and pass), highest score first; ends
        at the first loss (or a stop)."""
        cdef int p = self.g.on_turn, n, i, worst = O_WIN
        cdef ArenaMove* buf
        cdef bint after_pass = self.g.zeros + 1 >= self.g.max_zeros
        cdef bint capped_before = self.capped, any_capped = False
        self.mg.gen_c(self.g.racks[p], self.g.bag_n, -1, RECORD_SMALL, 0, False)
        n = self.mg.n_moves
        buf = <ArenaMove*> malloc(n * sizeof(ArenaMove))
        if buf == NULL:
            return O_UNRES
        for i in range(n):
            buf[i].move = self.mg.small_buf[i]
            buf[i].score = self.mg.small_score[i]
            if packed_kind(buf[i].move) == MOVE_PASS:
                buf[i].est = 1 << 20 if after_pass else -1
            else:
                buf[i].est = buf[i].score
        qsort(buf, n, sizeof(ArenaMove), arena_cmp_desc)
        if self.max_replies > 0 and n > self.max_replies:
            n = self.max_replies
        for i in range(n):
            self.capped = False
            if self.judge(buf[i].move, buf[i].score, dn, &worst):
                if worst == O_LOSS and not self.capped:
                    any_capped = False   # a loss that no continuation past the limit decided: final either way
                else:
                    any_capped = any_capped or self.capped
                break
            any_capped = any_capped or self.capped
        free(buf)
        self.capped = capped_before or any_capped
        return worst

    cdef int solver_replies(self, int dn) noexcept nogil:
        """Both sides solve: the opponent, to move with tiles still in the bag, solves their own pre-endgame
        from what they can see (our rack and the bag are hidden from them: every ordering of those tiles),
        keeps the plays with the fewest expected losses (a draw counts half; pessimistic for them below, within
        the nesting limit) and, among those tied plays, takes the one worst for us. Returns our outcome for
        the actual bag, or -1 when they have no candidate to choose from (the caller then checks every
        reply). Their choice depends only on what they see, so it is cached: every draw that leaves them the
        same rack on the same board shares it."""
        cdef int o = self.g.on_turn, us = self.me, k = self.g.bag_n
        cdef int i, r, n_tied = 0, worst, decided
        cdef bint capped_before = self.capped
        cdef uint64_t key
        cdef ChoiceEntry* e
        cdef uint64_t* tmoves
        cdef int32_t* tscores
        key = _mix(self.g.hash ^ self.g.rack_hash(us)
                   ^ _mix(<uint64_t> (self.g.score[o] - self.g.score[us] + 100000))
                   ^ (<uint64_t> dn << 56) ^ (<uint64_t> self.plies << 48) ^ (<uint64_t> k << 40)
                   ^ (<uint64_t> self.max_nested << 32) ^ (<uint64_t> self.cap_outcome << 28) ^ 0x5EED)
        if key == 0:
            key = 1
        e = &self.ccache[key & (CHOICE_CACHE - 1)]
        # a private copy: judging the plays below may solve deeper choices that reuse this cache slot
        tmoves = <uint64_t*> malloc(MAX_MOVES_CHOICE * sizeof(uint64_t))
        tscores = <int32_t*> malloc(MAX_MOVES_CHOICE * sizeof(int32_t))
        if tmoves == NULL or tscores == NULL:
            free(tmoves)
            free(tscores)
            return O_UNRES
        if e.key == key and e.n > 0:
            self.opp_solve_hits += 1
            self.capped = self.capped or e.capped
            n_tied = e.n
            memcpy(tmoves, e.moves, n_tied * sizeof(uint64_t))
            memcpy(tscores, e.scores, n_tied * sizeof(int32_t))
        else:
            # every reply first (each judged exactly as a chosen one would be below, highest score first, ending
            # at the first loss): when we win against all of them, we win against whichever they choose, and
            # their own pre-endgame need not be solved (most draws of a play that wins most of them)
            self.capped = False
            worst = self.every_reply(dn) if self.skip_won_choice else O_LOSS
            if worst == O_WIN or self.own_stop:
                free(tmoves)
                free(tscores)
                if worst != O_WIN:
                    return O_UNRES
                self.choice_skips += 1
                return O_WIN
            decided = -1
            n_tied = self.opp_choice(dn, tmoves, tscores, &decided)
            if decided >= 0:
                # a play they cannot improve on (no expected loss) already costs us the game: no need to
                # list the rest of their tied plays (the list is partial: not cached)
                free(tmoves)
                free(tscores)
                return decided
            if n_tied > 0 and n_tied <= CHOICE_MAX and not self.own_stop:
                e.key = key
                e.n = n_tied
                e.capped = self.capped
                memcpy(e.moves, tmoves, n_tied * sizeof(uint64_t))
                memcpy(e.scores, tscores, n_tied * sizeof(int32_t))
            elif n_tied <= 0 or self.own_stop:
                free(tmoves)
                free(tscores)
                if self.own_stop:
                    return O_UNRES
                return -1
        self.capped = self.capped or capped_before
        worst = O_WIN
        for i in range(n_tied):
            if self.judge(tmoves[i], tscores[i], dn, &worst):
                break
        free(tmoves)
        free(tscores)
        return worst

    cdef int opp_choice(self, int dn, uint64_t* tmoves, int32_t* tscores, int* decided) noexcept nogil:
        """The opponent's nested solve (see solver_replies): writes their tied best plays (packed) and returns
        how many (0: no candidate, or stopped). Sub-draws are tried most-often-lost first, so a play that
        cannot match the best so far is dropped after as few endgames as possible. Once a play with no
        expected loss is found (nothing can beat it), each play tied with it is judged for us at once, and a
        loss for us ends the search with decided = O_LOSS (the list is then partial)."""
        cdef int o = self.g.on_turn, us = self.me, k = self.g.bag_n, size = self.g.ld.size
        cdef int nq, i, j, t, qi, gi, ng, n_c = 0, c, n_tied = 0
        cdef uint8_t unseen[MAX_ALPHABET]
        cdef uint8_t save_us[MAX_ALPHABET]
        cdef uint8_t us_counts[MAX_ALPHABET]
        cdef ml_t actual[MAX_SEQ]
        cdef ml_t cur_seq[MAX_SEQ]
        cdef ml_t* seqs
        cdef int64_t* weights
        cdef int64_t* gw
        cdef int* reps
        cdef int* order
        cdef int* lost
        cdef KeyIdx* keys
        cdef ArenaMove* cands
        cdef int64_t best = 0, T
        cdef int res
        cdef bint have_best = False, complete
        cdef Move m
        self.opp_solves += 1
        self.g.bag_sequence(actual)
        memcpy(save_us, self.g.racks[us], MAX_ALPHABET)
        memcpy(unseen, self.g.racks[us], MAX_ALPHABET)
        for i in range(k):
            unseen[actual[i]] += 1
        nq = _count_seqs(unseen, size, k)
        n_c = self.candidates(o, k, &cands)
        seqs = <ml_t*> malloc(nq * MAX_SEQ)
        weights = <int64_t*> malloc(nq * sizeof(int64_t))
        gw = <int64_t*> malloc((k + 1) * nq * sizeof(int64_t))
        reps = <int*> malloc((k + 1) * nq * sizeof(int))
        order = <int*> malloc(nq * sizeof(int))
        lost = <int*> calloc(nq, sizeof(int))
        keys = <KeyIdx*> malloc(nq * sizeof(KeyIdx))
        if seqs == NULL or weights == NULL or gw == NULL or reps == NULL or order == NULL or lost == NULL \
                or keys == NULL or n_c < 0:
            n_tied = 0
        else:
            memset(cur_seq, 0, MAX_SEQ)
            _fill_seqs(unseen, size, k, 0, cur_seq, seqs, weights, 0, 1)
            _group_reps(seqs, nq, k, keys, reps)
            # the weight of each group of equivalent sub-draws, on its representative
            for t in range(k + 1):
                for qi in range(nq):
                    gw[t * nq + qi] = 0
                for qi in range(nq):
                    gw[t * nq + reps[t * nq + qi]] += weights[qi]
            self.me = o     # their point of view
            for c in range(n_c):
                unpack_move(cands[c].move, self.g.board, &m)
                m.score = cands[c].score
                t = m.n_tiles if m.kind == MOVE_PLACE else 0
                if t > k:
                    t = k
                ng = 0
                for qi in range(nq):
                    if reps[t * nq + qi] == qi:
                        order[ng] = qi
                        ng += 1
                # most-often-lost first (insertion sort: a handful of groups)
                for i in range(1, ng):
                    j = i
                    while j > 0 and lost[order[j]] > lost[order[j - 1]]:
                        qi = order[j]
                        order[j] = order[j - 1]
                        order[j - 1] = qi
                        j -= 1
                T = 0
                complete = True
                for gi in range(ng):
                    qi = order[gi]
                    memcpy(us_counts, unseen, MAX_ALPHABET)
                    for j in range(k):
                        us_counts[seqs[qi * MAX_SEQ + j]] -= 1
                    self.g.set_hidden(us, us_counts, &seqs[qi * MAX_SEQ], k)
                    res = self.solve_move(&m, dn + 1)
                    if res == O_LOSS:
                        T += 2 * gw[t * nq + qi]
                        lost[qi] += 1
                    elif res == O_DRAW:
                        T += gw[t * nq + qi]
                    if self.own_stop or (have_best and T > best):
                        complete = False
                        break
                if self.own_stop:
                    break
                if not complete:
                    continue
                if not have_best or T < best:
                    best = T
                    have_best = True
                    n_tied = 0
                if n_tied < MAX_MOVES_CHOICE:
                    tmoves[n_tied] = cands[c].move
                    tscores[n_tied] = cands[c].score
                    n_tied += 1
                if best == 0 and not self.tracing:
                    self.me = us
                    self.g.set_hidden(us, save_us, actual, k)
                    res = self.solve_move(&m, dn)
                    self.me = o
                    if res == O_LOSS and not self.own_stop:
                        decided[0] = O_LOSS
                        break
            self.me = us
            self.g.set_hidden(us, save_us, actual, k)
            if self.own_stop:
                n_tied = 0
        self.me = us
        free(seqs)
        free(weights)
        free(gw)
        free(reps)
        free(order)
        free(lost)
        free(keys)
        free(cands)
        return n_tied

    cdef int nested(self, int d) noexcept nogil:
        """Our turn with tiles still in the bag: choose as if we could not see the bag (every sub-draw of the
        unseen tiles), taking the worst case among the plays with the fewest expected losses; return the
        verdict for the actual bag."""
        cdef int o = 1 - self.g.on_turn, k = self.g.bag_n, size = self.g.ld.size, nq, i, res
        cdef uint8_t unseen[MAX_ALPHABET]
        cdef uint8_t save_opp[MAX_ALPHABET]
        cdef ml_t actual[MAX_SEQ]
        cdef ml_t* seqs
        cdef int64_t* weights
        cdef int* reps
        cdef KeyIdx* keys
        cdef uint8_t* verdict
        cdef uint8_t* cur
        cdef ml_t cur_seq[MAX_SEQ]
        cdef uint64_t key = 0
        cdef NestEntry* e = NULL
        cdef int actual_idx, cached = -1
        cdef bint capped_before = self.capped, hit, hit_capped = False
        cdef uint8_t* copy
        cdef uint8_t* old
        self.nested_calls += 1
        self.g.bag_sequence(actual)
        memcpy(save_opp, self.g.racks[o], MAX_ALPHABET)
        memcpy(unseen, self.g.racks[o], MAX_ALPHABET)
        for i in range(k):
            unseen[actual[i]] += 1
        nq = _count_seqs(unseen, size, k)
        if self.use_nested_cache and not self.tracing and nq <= NEST_MAX_DRAWS:
            key = _mix(self.g.hash ^ self.g.rack_hash(o)
                       ^ _mix(<uint64_t> (self.g.score[1 - o] - self.g.score[o] + 100000))
                       ^ (<uint64_t> d << 56) ^ (<uint64_t> self.plies << 48)
                       ^ (<uint64_t> self.opp_solver << 47) ^ (<uint64_t> self.max_replies << 40)
                       ^ (<uint64_t> (self.max_nested + 1) << 32) ^ (<uint64_t> self.cap_outcome << 28))
            if key == 0:
                key = 1
            e = &self.ncache[key & (NEST_CACHE - 1)]
            _lock(self.nest_lock)
            hit = e.key == key and e.nq == nq and e.verdict != NULL
            macondo_unlock(self.nest_lock)
            if hit:
                seqs = <ml_t*> malloc(nq * MAX_SEQ)
                if seqs != NULL:
                    memset(cur_seq, 0, MAX_SEQ)
                    _fill_seqs(unseen, size, k, 0, cur_seq, seqs, NULL, 0, 1)
                    actual_idx = _seq_index(seqs, nq, k, actual)
                    free(seqs)
                    if actual_idx >= 0:
                        # (another thread may have replaced the entry meanwhile: checked again)
                        _lock(self.nest_lock)
                        if e.key == key and e.nq == nq and e.verdict != NULL:
                            cached = e.verdict[actual_idx]
                            hit_capped = e.capped
                        macondo_unlock(self.nest_lock)
                        if cached >= 0:
                            self.nested_hits += 1
                            self.capped = self.capped or hit_capped
                            return cached
        seqs = <ml_t*> malloc(nq * MAX_SEQ)
        weights = <int64_t*> malloc(nq * sizeof(int64_t))
        reps = <int*> malloc((k + 1) * nq * sizeof(int))
        keys = <KeyIdx*> malloc(nq * sizeof(KeyIdx))
        verdict = <uint8_t*> malloc(nq)
        cur = <uint8_t*> malloc(nq)
        if seqs == NULL or weights == NULL or reps == NULL or keys == NULL or verdict == NULL or cur == NULL:
            res = O_UNRES
        else:
            self.nest_ok = False
            self.capped = False
            res = self.nested_core(d, k, nq, unseen, actual, seqs, weights, reps, keys, verdict, cur)
            if e != NULL and self.nest_ok and not self.own_stop and memchr(verdict, O_UNRES, nq) == NULL:
                copy = <uint8_t*> malloc(nq)
                if copy != NULL:
                    memcpy(copy, verdict, nq)
                    _lock(self.nest_lock)
                    old = e.verdict
                    e.verdict = copy
                    e.key = key
                    e.nq = nq
                    e.capped = self.capped
                    macondo_unlock(self.nest_lock)
                    free(old)
        self.capped = self.capped or capped_before
        self.g.set_hidden(o, save_opp, actual, k)
        free(seqs)
        free(weights)
        free(reps)
        free(keys)
        free(verdict)
        free(cur)
        return res

    cdef int nested_core(self, int d, int k, int nq, uint8_t* unseen, const ml_t* actual, ml_t* seqs,
                         int64_t* weights, int* reps, KeyIdx* keys, uint8_t* verdict, uint8_t* cur) noexcept nogil:
        cdef int p = self.g.on_turn, o = 1 - p, size = self.g.ld.size
        cdef int i, j, t, qi, r, n_c, c, actual_idx = -1, best_c = -1
        cdef uint8_t opp_counts[MAX_ALPHABET]
        cdef ml_t cur_seq[MAX_SEQ]
        cdef ArenaMove* cands
        cdef int64_t best = 0, T
        cdef bint have_best = False, complete, all_win
        cdef Move m
        memset(cur_seq, 0, MAX_SEQ)
        _fill_seqs(unseen, size, k, 0, cur_seq, seqs, weights, 0, 1)
        actual_idx = _seq_index(seqs, nq, k, actual)
        _group_reps(seqs, nq, k, keys, reps)
        n_c = self.candidates(p, k, &cands)
        if n_c < 0:
            return O_UNRES
        for c in range(n_c):
            unpack_move(cands[c].move, self.g.board, &m)
            m.score = cands[c].score
            t = m.n_tiles if m.kind == MOVE_PLACE else 0
            if t > k:
                t = k
            T = 0
            complete = True
            all_win = True
            for qi in range(nq):
                r = reps[t * nq + qi]
                if r != qi:
                    cur[qi] = cur[r]
                else:
                    memcpy(opp_counts, unseen, MAX_ALPHABET)
                    for j in range(k):
                        opp_counts[seqs[qi * MAX_SEQ + j]] -= 1
                    self.g.set_hidden(o, opp_counts, &seqs[qi * MAX_SEQ], k)
                    cur[qi] = <uint8_t> self.solve_move(&m, d)
                if cur[qi] == O_LOSS:
                    T += 2 * weights[qi]
                elif cur[qi] == O_DRAW:
                    T += weights[qi]
                if cur[qi] != O_WIN:
                    all_win = False
                if self.own_stop or (have_best and T > best):
                    complete = False
                    break
            if self.own_stop:
                break
            if not complete:
                continue
            if not have_best or T < best:
                best = T
                memcpy(verdict, cur, nq)
                have_best = True
                best_c = c
            else:
                for qi in range(nq):
                    if cur[qi] > verdict[qi]:
                        verdict[qi] = cur[qi]
            if best == 0 and all_win:
                break
        if self.tracing and d == 1:
            self._free_trace()
            if have_best:
                unpack_move(cands[best_c].move, self.g.board, &self.trace_move)
                self.trace_move.score = cands[best_c].score
                self.trace_seqs = <ml_t*> malloc(nq * MAX_SEQ)
                self.trace_weights = <int64_t*> malloc(nq * sizeof(int64_t))
                self.trace_verdict = <uint8_t*> malloc(nq)
                if self.trace_seqs != NULL and self.trace_weights != NULL and self.trace_verdict != NULL:
                    memcpy(self.trace_seqs, seqs, nq * MAX_SEQ)
                    memcpy(self.trace_weights, weights, nq * sizeof(int64_t))
                    memcpy(self.trace_verdict, verdict, nq)
                    self.trace_n, self.trace_k, self.trace_actual = nq, k, actual_idx
                    self.trace_have = True
        free(cands)
        self.nest_ok = have_best and not self.own_stop
        if have_best and actual_idx >= 0:
            return verdict[actual_idx]
        if self.own_stop:
            return O_UNRES
        return O_LOSS

    # ------------------------------------------------------------ Python API

    cdef int setup(self, tuple move, seq, opp_counts, Move* m) except -1:
        cdef uint8_t counts[MAX_ALPHABET]
        cdef ml_t order[MAX_SEQ]
        cdef int i
        kind, row, col, vertical, tiles, score = move
        if len(seq) > MAX_SEQ:
            raise ValueError("the bag holds at most 8 tiles here")
        memset(counts, 0, MAX_ALPHABET)
        for i, c in enumerate(opp_counts):
            counts[i] = c
        for i, t in enumerate(seq):
            order[i] = t
        self.g.set_hidden(1 - self.me, counts, order, len(seq))
        move_from_fields(m, kind, row, col, vertical, tiles, score)
        return 0

    def solve_draw(self, tuple move, seq, opp_counts, bint exact=False):
        """Outcome (0 win, 1 draw, 2 unresolved, 3 loss) of playing `move` when the bag holds `seq` (first
        drawn first) and the opponent `opp_counts`; with exact, also the final spread of a bag-emptying
        play's endgame (full window). Returns (outcome, spread or None)."""
        cdef Move m
        cdef int o
        self.setup(move, seq, opp_counts, &m)
        self.exact = exact
        self.last_spread = 0
        self.capped = False
        self.eg_cache_on = True
        with nogil:
            o = self.solve_move(&m, 0)
        self.eg_cache_on = False
        self.exact = False
        return o, (self.last_spread if exact and o != O_UNRES else None)

    @property
    def last_capped(self):
        """Whether a continuation past the nesting limit took part in the last solve_draw's verdict (it may
        then differ from the verdict without the limit; otherwise it is the same)."""
        return self.capped


    # ------------------------------------------------------------ explanations (--eventuality)

    def reply_outcomes(self, tuple move, seq, opp_counts):
        """Play `move` with the bag `seq` and the opponent `opp_counts`. With the bag then empty (or the game
        over): ('endgame', outcome, spread). Otherwise ('replies', [(reply, outcome), ...]) for every reply
        of the opponent, in the order the solver examines them, each outcome for us; a reply is a tuple
        (kind, row, col, vertical, tiles, score)."""
        cdef Move m, r
        cdef int o, i, n, p
        cdef bint after_pass
        self.setup(move, seq, opp_counts, &m)
        self.g.play_c(&m)
        try:
            if self.g.over or self.g.bag_n == 0:
                with nogil:
                    o = self.endgame_outcome()
                return ("endgame", o, self.last_spread)
            p = self.g.on_turn
            after_pass = self.g.zeros + 1 >= self.g.max_zeros
            self.mg.gen_c(self.g.racks[p], self.g.bag_n, -1, RECORD_SMALL, 0, False)
            n = self.mg.n_moves
            found = []
            for i in range(n):
                packed = self.mg.small_buf[i]
                sc = self.mg.small_score[i]
                if packed_kind(packed) == MOVE_PASS:
                    est = (1 << 20) if after_pass else -1
                else:
                    est = sc
                found.append((est, packed, sc))
            found.sort(key=lambda x: -x[0])
            out = []
            for est, packed, sc in found:
                unpack_move(<uint64_t> packed, self.g.board, &r)
                r.score = sc
                with nogil:
                    o = self.solve_move(&r, 0)
                out.append((_move_tuple(&r), o))
            return ("replies", out)
        finally:
            self.g.undo_c()

    def opponent_choice(self, tuple move, seq, opp_counts):
        """Opponent model "solver", for explanations: after `move` with the bag `seq`, the opponent's own nested
        solve. None when the bag is empty then; else (expected losses x2 of their best plays, total weight,
        [(their tied play, our outcome on the actual bag, [(sub-draw, weight, their verdict), ...]), ...]) with
        sub-draws first drawn first (their view: what the bag may hold; our rack is the rest)."""
        cdef Move m, r
        cdef int n, i, qi, j, o, us, k, res, decided = -1
        cdef uint64_t* tm
        cdef int32_t* ts
        cdef uint8_t save_us[MAX_ALPHABET]
        cdef uint8_t counts[MAX_ALPHABET]
        cdef ml_t actual[MAX_SEQ]
        cdef ml_t order[MAX_SEQ]
        cdef int orig_me = self.me
        self.setup(move, seq, opp_counts, &m)
        self.g.play_c(&m)
        tm = <uint64_t*> malloc(MAX_MOVES_CHOICE * sizeof(uint64_t))
        ts = <int32_t*> malloc(MAX_MOVES_CHOICE * sizeof(int32_t))
        try:
            if tm == NULL or ts == NULL:
                raise MemoryError()
            if self.g.over or self.g.bag_n == 0 or self.g.on_turn == self.me:
                return None
            o = self.g.on_turn
            us = self.me
            k = self.g.bag_sequence(actual)
            memcpy(save_us, self.g.racks[us], MAX_ALPHABET)
            unseen = [self.g.racks[us][ml] for ml in range(self.g.ld.size)]
            for i in range(k):
                unseen[actual[i]] += 1
            self.tracing = True
            with nogil:
                n = self.opp_choice(0, tm, ts, &decided)
            self.tracing = False
            subs = []

            def rec(cur, left, w):
                if len(cur) == k:
                    subs.append((tuple(cur), w))
                    return
                for ml, c in enumerate(left):
                    if c:
                        left[ml] -= 1
                        rec(cur + [ml], left, w * c)
                        left[ml] += 1

            rec([], list(unseen), 1)
            total = sum(w for _, w in subs)
            tied = []
            best2 = None
            for i in range(n):
                unpack_move(tm[i], self.g.board, &r)
                r.score = ts[i]
                verdicts = []
                t2 = 0
                for sub, w in subs:
                    for ml in range(self.g.ld.size):
                        counts[ml] = unseen[ml]
                    for j in range(k):
                        order[j] = sub[j]
                        counts[sub[j]] -= 1
                    self.g.set_hidden(us, counts, order, k)
                    self.me = o
                    with nogil:
                        res = self.solve_move(&r, 1)
                    self.me = us
                    verdicts.append((sub, w, res))
                    t2 += 2 * w if res == O_LOSS else (w if res == O_DRAW else 0)
                self.g.set_hidden(us, save_us, actual, k)
                with nogil:
                    res = self.solve_move(&r, 0)
                best2 = t2 if best2 is None else min(best2, t2)
                tied.append((_move_tuple(&r), res, verdicts))
            return (best2 or 0, total, tied)
        finally:
            self.tracing = False
            self.me = orig_me
            free(tm)
            free(ts)
            self.g.undo_c()

    def nested_trace(self, tuple move, seq, opp_counts, tuple reply):
        """After `move` and the opponent's `reply`, our turn with tiles still in the bag: the nested solve's
        (outcome, our chosen play, [(sub-draw, weight, verdict), ...], index of the actual bag), or None
        when the bag is empty then or nesting is off."""
        cdef Move m, r
        cdef int o, qi, i
        self.setup(move, seq, opp_counts, &m)
        self.g.play_c(&m)
        kind, row, col, vertical, tiles, score = reply
        move_from_fields(&r, kind, row, col, vertical, tiles, score)
        self.g.play_c(&r)
        try:
            if self.g.over or self.g.bag_n == 0 or self.g.on_turn != self.me or self.max_nested == 0:
                return None
            self.tracing = True
            self._free_trace()
            with nogil:
                o = self.nested(1)
            self.tracing = False
            if not self.trace_have:
                return (o, None, [], -1)
            subs = []
            for qi in range(self.trace_n):
                subs.append((tuple(self.trace_seqs[qi * MAX_SEQ + i] for i in range(self.trace_k)),
                             self.trace_weights[qi], self.trace_verdict[qi]))
            return (o, _move_tuple(&self.trace_move), subs, self.trace_actual)
        finally:
            self.tracing = False
            self.g.undo_c()
            self.g.undo_c()


cdef tuple _move_tuple(Move* m):
    kinds = ("place", "exchange", "pass")
    return (kinds[m.kind], m.row, m.col, bool(m.vertical), tuple(m.tiles[j] for j in range(m.length)), m.score)
