from libc.stdint cimport uint8_t, int32_t, uint64_t, int64_t
from engine_cy.common cimport MAX_BOARD_DIM
from engine_cy.move cimport Move
from engine_cy.game cimport Game
from engine_cy.movegen cimport MoveGen

cdef enum:
    EG_MAX_PLY = 64
    EG_INF = 1000000          # beyond any spread; also the "aborted" sentinel's magnitude
    EG_MAX_TOP = 64           # first moves a top-k search keeps
    EG_MAX_FORCED = 64        # first moves searched with a full window besides them (also-solve)

cdef struct TTEntry:
    uint64_t check            # key ^ move ^ data: a torn (racing) write fails verification
    uint64_t move             # packed best move (move.pack_move), 0 = none
    uint64_t data             # score - mover's spread (int32, low bits) | depth << 32 | flag << 40

cdef struct ArenaMove:
    uint64_t move
    int32_t score
    int32_t est

# one first move of a top-k search: its exact value and its principal line (the move first)
cdef struct RootLine:
    uint64_t move[EG_MAX_PLY]
    int32_t score[EG_MAX_PLY]
    int length
    int value                 # final spread for the player to move at the root

cdef int arena_cmp_desc(const void* a, const void* b) noexcept nogil   # by est, highest first

cimport cython

@cython.final
cdef class TranspositionTable:
    cdef TTEntry* entries
    cdef void* mem_base                   # the allocation holding entries (macondo_huge_alloc)
    cdef size_t mem_len
    cdef uint64_t mask                    # the entries in use: a prefix of the allocation, grown as it fills
    cdef uint64_t max_mask                # the whole allocation's mask (growth stops there)
    cdef uint64_t sampled_fills           # stores into empty entries among the sampled keys (approximate)
    cdef int growing                      # a thread is doubling the part in use (macondo_try_lock)
    cdef readonly uint64_t n_entries
    cdef void grow(self) noexcept nogil
    cdef bint probe(self, uint64_t key, int* score, int* depth, int* flag, uint64_t* move) noexcept nogil
    cdef void store(self, uint64_t key, int score, int depth, int flag, uint64_t move) noexcept nogil

@cython.final
cdef class EndgameWorker:
    cdef Game g
    cdef MoveGen mg
    cdef TranspositionTable tt
    cdef ArenaMove* arena
    cdef int acap
    cdef int atop
    cdef uint64_t pv[EG_MAX_PLY][EG_MAX_PLY]
    cdef int32_t pv_score[EG_MAX_PLY][EG_MAX_PLY]
    cdef int pv_len[EG_MAX_PLY]
    cdef public long long nodes
    cdef int* stop_flag       # shared with the other threads of a solve (owned by the caller)
    cdef int own_stop
    cdef double deadline      # monotonic seconds; 0 = none
    cdef bint aborted
    cdef bint no_abort        # no stop checks (cleared by the root after its first move when root_guard)
    cdef bint root_guard      # iterative deepening's depth 1: stoppable once one root move is searched
    cdef double stop_seen     # when depth 1 first saw the stop (it may finish within DEPTH1_GRACE)
    # the best fully searched root move of the current search (what a stop during depth 1 reports)
    cdef bint root_have
    cdef int root_best
    cdef uint64_t root_move
    cdef int32_t root_score
    cdef public int helper_id # Lazy SMP helpers vary their move ordering
    cdef public bint use_tt     # off only to test the table against plain search
    cdef public bint heuristics  # leaves not at the end of the game are scored by a greedy playout
    cdef int solver_player
    # top-k root search (multi_k > 0): the best multi_k first moves with exact values, and the forced first
    # moves (always searched with a full window) with theirs; the previous depth's best are searched first
    cdef public int multi_k
    cdef int n_forced
    cdef uint64_t forced[EG_MAX_FORCED]
    cdef bint forced_done[EG_MAX_FORCED]
    cdef RootLine* top_lines  # EG_MAX_TOP entries, best first
    cdef int n_top
    cdef RootLine* forced_lines  # EG_MAX_FORCED entries, in the order of forced
    cdef uint64_t prev_top[EG_MAX_TOP]
    cdef int n_prev_top
    # lane reuse: the children of one node all generate for the same rack on boards that differ from the
    # parent's by one move each, so lanes neither the first generating child's move nor this child's move
    # touched keep that child's moves (per parent ply: per-lane segments of packed moves and scores)
    cdef public bint lane_reuse
    cdef Move path_move[EG_MAX_PLY]          # the move that led to the node at this ply
    cdef bint lc_valid[EG_MAX_PLY]
    cdef uint8_t lc_dirty[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef int lc_start[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef int lc_count[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef uint64_t* lc_mv[EG_MAX_PLY]
    cdef int32_t* lc_sc[EG_MAX_PLY]
    cdef int lc_cap[EG_MAX_PLY]
    cdef int lc_len[EG_MAX_PLY]               # entries in use in lc_mv / lc_sc
    cdef public long long lanes_generated, lanes_reused
    cdef public bint d1_cut     # the last ply stops once a value reaches beta (the pass first: it needs no generation)
    cdef public bint probe_first  # off the principal line, a node's first move is searched before its moves are listed
    cdef public long long probes, probe_cuts
    # per parent ply and lane: the first placement of highest estimate keeping a tile, and of highest score
    # going out, among the sibling lists (lane_maxima; lc_max_k: the per-tile term they were taken with)
    cdef bint lc_max_valid[EG_MAX_PLY]
    cdef int lc_max_k[EG_MAX_PLY]
    cdef int lc_no_i[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef int64_t lc_no_v[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef int lc_out_i[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef int64_t lc_out_v[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef bint d1_first[EG_MAX_PLY]     # a child at the last ply has searched best bound first (no lists)
    # the first child at the last ply is searched best bound first from alpha up, without lists for its
    # siblings (for single null-window searches, the pre-endgame's: their last ply's exact values are not
    # asked for again); last_ply_bounded_nodes counts those searches
    cdef public bint last_ply_bounded
    cdef public long long last_ply_bounded_nodes
    # with last_ply_bounded: the moves a node of depth 3 listed (generation order), for its grandchildren at
    # the last ply, the same mover with a sub-rack: lanes neither move since touched keep those moves that the
    # sub-rack can still play (grand_best); grand_nodes counts the last-ply nodes that used them, grand_cuts
    # those they alone decided
    cdef bint gl_valid[EG_MAX_PLY]
    cdef int gl_n[EG_MAX_PLY]
    cdef int gl_cap[EG_MAX_PLY]
    cdef uint64_t* gl_mv[EG_MAX_PLY]
    cdef int32_t* gl_sc[EG_MAX_PLY]
    cdef public long long grand_nodes, grand_cuts
    # (a node of depth 1 keeps its list too when the leaves are greedy playouts: the playout's second move,
    # by that node's mover, starts from it; gl_seg_*: each lane's run of that list, gl_seg_ok: found)
    cdef bint gl_seg_ok[EG_MAX_PLY]
    cdef int gl_seg_st[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    cdef int gl_seg_n[EG_MAX_PLY][2 * MAX_BOARD_DIM]
    # greedy playouts (with lane_reuse): each step lists the mover's moves from the list two steps back (the
    # same mover, a superset rack): lanes neither move since touched keep the plays of that list the rack
    # still holds, the rest are generated. Three steps' lists in turn (pl_*[step % 3]), each lane's run in
    # pl_seg_*; playout_lists counts the steps listed, playout_lanes_kept the lanes taken from a list
    cdef uint64_t* pl_mv[3]
    cdef int32_t* pl_sc[3]
    cdef int pl_n[3]
    cdef int pl_cap[3]
    cdef bint pl_valid[3]
    cdef int pl_seg_st[3][2 * MAX_BOARD_DIM]
    cdef int pl_seg_n[3][2 * MAX_BOARD_DIM]
    cdef public long long playout_lists, playout_lanes_kept
    cdef bint keep_grand_list(self, int ply) noexcept nogil
    cdef void playout_list(self, int k, const uint64_t* smv, const int32_t* ssc, const int* sst, const int* sn,
                           const Move* m1, const Move* m2) noexcept nogil
    cdef bint keep_playout_list(self, int slot, bint segments) noexcept nogil
    cdef bint playout_pick(self, int64_t pass_val, Move* m) noexcept nogil
    cdef bint grand_best(self, int ply, int p, int64_t out, int rack_n, uint8_t* lanes, uint64_t* best_mv,
                         int32_t* best_sc, int64_t* best_val, int* best_lane) noexcept nogil
    cdef inline void pv_extend(self, int ply, uint64_t mv, int32_t score) noexcept nogil
    cdef inline int list_moves(self, int depth, int rack_n, int opp_val, uint64_t tt_move) noexcept nogil
    cdef inline bint depth1_stop(self, int depth, int i) noexcept nogil
    cdef void lane_maxima(self, int c, int k, int rack_n) noexcept nogil
    cdef bint first_move(self, int ply, int depth, int p, int opp_val, int rack_n, uint64_t* mv_out,
                         int32_t* score) noexcept nogil
    cdef void move_lanes(self, const Move* m, uint8_t* dirty) noexcept nogil
    cdef bint lc_patch(self, int c, int idx, int st, int n) noexcept nogil
    cdef public bint patch_probes
    cdef void patch_lanes(self, int c, int p, int opp_val, const uint8_t* dirty) noexcept nogil
    cdef void begin_lane_lists(self, int p, int opp_val) noexcept nogil
    cdef int gen_reuse(self, int ply, int p, int opp_val, bint best_only, int64_t out, int rack_n,
                       uint64_t* best_mv, int32_t* best_sc, int64_t* best_val, int64_t stop_at,
                       bint* stopped) noexcept nogil

    cdef void attach(self, Game g)
    cdef int negamax(self, int depth, int ply, int alpha, int beta, bint pv) noexcept nogil
    cdef bint grace_over(self) noexcept nogil
    cdef int search_c(self, int plies, int alpha, int beta) noexcept nogil
    cdef int multi_search_c(self, int plies) noexcept nogil
    cdef int root_multi(self, int depth) noexcept nogil
    cdef void keep_line(self, RootLine* dst, uint64_t mv, int32_t score, int value) noexcept nogil
    cdef int id_search_c(self, int plies, int alpha, int beta) noexcept nogil
    cdef bint grow_arena(self, int need) noexcept nogil
    cdef int stuck_value(self, int player) noexcept nogil
    cdef int playout(self, uint64_t* rec_moves, int32_t* rec_scores, int* rec_n, int ply) noexcept nogil
