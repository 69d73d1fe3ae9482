from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t, int64_t
from engine_cy.common cimport ml_t, equity_t, MAX_BOARD_DIM, MAX_ALPHABET, RACK_SIZE
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.wordmap cimport WordMap, WmSlot
from engine_cy.move cimport Move

cdef enum:
    RECORD_ALL = 0
    RECORD_BEST = 1
    RECORD_TOP_N = 2
    RECORD_SMALL = 3          # every move, packed in 64 bits (see move.pxd) with score and equity
    RECORD_EG_BEST = 4        # the first placement (generation order) of highest value (see set_eg_value),
                              # in move_buf[0] (n_moves 0 or 1); no pass, no exchange
    RECORD_USES = 5           # no moves: uses_mask gets the letters at least uses_min placed tiles use (bit 0
                              # a blank); the search stops once it holds every letter of uses_need

cdef enum:
    EXT_CACHE = 1024          # lane-extension sets cached by lane contents (direct-mapped)
    BINGO_KEYS = 64           # per-generation cache of word-map lookups, by played-through multiset
    BINGO_POOL = 4096

cdef enum:
    LEAVE_CACHE = 4           # recent racks' leave tables (a simulation alternates a few racks)

cdef struct LeaveTables:
    int valid
    uint8_t rack[MAX_ALPHABET]
    equity_t leave_value[128]
    int32_t kept_value[128]
    uint8_t sub_masks[128]
    uint8_t sub_sizes[128]
    int n_sub_masks

cdef struct ExtEntry:
    int dim                            # 0: empty entry
    uint8_t letters[MAX_BOARD_DIM]     # the lane's tiles as letters (blanks by their letter), 0 = empty
    uint64_t ext[MAX_BOARD_DIM]        # per square: letters that can extend the neighbouring runs

cdef struct OpenCand:
    equity_t bound            # upper bound on the equity of its plays
    uint64_t k0, k1           # word-map key of the played letters (blanks left out)
    uint8_t mask              # kept tiles (canonical leave mask)
    uint8_t k                 # tiles played
    uint8_t nb                # blanks played

cdef struct AnchorBound:
    int dir, lane, col, last  # last = previous anchor in the lane (bounds the left part)
    equity_t bound            # shadow upper bound on equity (millipoints) of the pass being searched
    equity_t bound2           # with a blank on the rack: the bound of plays that use a blank
    int id                    # row of MoveGen.anchor_kb holding the anchor's bounds by tiles played

cimport cython

@cython.final
cdef class MoveGen:
    cdef readonly Kwg kwg
    cdef readonly Klv klv
    cdef readonly LetterDistribution ld
    cdef const uint32_t* nodes
    cdef const uint64_t* child_masks      # Kwg.ensure_child_masks: O(1) child lookup
    cdef const uint64_t* mnodes           # Kwg.ensure_mnodes: nodes and masks in one array (NULL: > 32 tiles)
    cdef uint32_t root                    # the GADDAG root list (in mnodes when there is one)
    cdef const uint64_t* klv_masks        # the same for the leave graph (NULL without leaves)
    cdef int32_t scores[MAX_ALPHABET]
    cdef bint vowel[MAX_ALPHABET]
    cdef uint64_t all_letters
    cdef public int bingo_bonus
    # per-generation inputs
    cdef Board board
    cdef int dim
    cdef uint8_t rack[MAX_ALPHABET]
    cdef int rack_tiles
    cdef uint64_t rack_bits               # letters (not blank) with rack count > 0
    cdef int bag_tiles
    cdef int opp_rack_value               # points, -1 when unknown
    cdef int record_mode
    cdef int top_n
    cdef bint do_sort
    cdef bint board_empty
    # leaves: each rack tile instance has a bit; a canonical mask names a leave multiset
    cdef uint8_t first_bit[MAX_ALPHABET]
    cdef uint8_t rack_key[MAX_ALPHABET]   # rack for which leave tables are valid
    cdef int rack_key_valid
    cdef equity_t leave_value[128]        # millipoints
    cdef int32_t kept_value[128]          # face value of the kept tiles
    cdef uint8_t sub_masks[128]           # the canonical masks of the rack's sub-multisets
    cdef uint8_t sub_sizes[128]           # tiles in each
    cdef int n_sub_masks
    cdef uint8_t cur_mask
    cdef LeaveTables leave_cache[LEAVE_CACHE]
    cdef int leave_cache_next
    cdef equity_t* peg_table
    cdef int peg_len
    # lane cache
    cdef int dir
    cdef int lane
    cdef ml_t row_tiles[MAX_BOARD_DIM]
    cdef uint64_t row_cs[MAX_BOARD_DIM]
    cdef int32_t row_csc[MAX_BOARD_DIM]
    cdef int row_cap[MAX_BOARD_DIM]              # shadow: highest value of a rack letter the square accepts
    cdef uint8_t row_lm[MAX_BOARD_DIM]
    cdef uint8_t row_wm[MAX_BOARD_DIM]
    cdef uint32_t cross_bits                     # the cached lane's squares with a perpendicular neighbour
    cdef uint32_t anchor_bits                    # and its anchors (bit idx: run ends, lone touched squares)
    cdef uint32_t lane_tiles                     # and its occupied squares (bit idx)
    cdef int anchor_col
    cdef int last_anchor_col
    cdef ml_t strip[MAX_BOARD_DIM]
    cdef int tiles_played
    # output
    cdef Move* move_buf
    cdef int n_moves
    cdef int cap_moves
    cdef Move best
    cdef bint has_best
    cdef uint64_t* small_buf
    cdef int32_t* small_score
    cdef equity_t* small_equity
    cdef int cap_small
    # RECORD_EG_BEST: a placement's value is score * eg_mul + eg_out when it uses the whole rack
    # - eg_tile_pen * tiles placed - eg_face_pen * their face value (set_eg_value); eg_best_value: best's
    cdef int64_t eg_best_value
    cdef int64_t eg_mul, eg_out, eg_tile_pen, eg_face_pen
    # the best's place in the full generation's order (record_place's order key): among plays of equal value
    # the first in that order is kept whatever order they are found in (the shadow search goes best first)
    cdef int eg_best_key
    cdef public bint eg_shadow            # RECORD_EG_BEST searches anchors best bound first (gen_best_shadow)
    cdef public bint scores_only          # RECORD_SMALL lists carry no equity (0): no leave tables are made
    # a RECORD_EG_BEST generation may start from a best found elsewhere (value and order key): eg_found tells
    # whether it found a play that beats it
    cdef bint eg_seeded, eg_found
    cdef int64_t eg_seed_value
    cdef int eg_seed_key
    # a RECORD_EG_BEST search best bound first stops once its best reaches eg_stop_value (then only a lower
    # bound on the best); INT64_MAX: never
    cdef int64_t eg_stop_value
    cdef uint64_t uses_mask, uses_need    # RECORD_USES
    cdef int uses_min
    cdef int uses_cnt[MAX_ALPHABET]
    cdef bint uses_done
    cdef uint64_t letters_used(self, const uint8_t* rack, uint64_t need, int min_uses) noexcept nogil
    cdef int shadow_scale                 # shadow bounds' unit per point of score: EQUITY_SCALE, or eg_mul
    cdef void set_eg_value(self, int64_t mul, int64_t out, int64_t tile_pen, int64_t face_pen) noexcept nogil
    cdef readonly long n_placements
    cdef readonly long n_exchanges
    cdef readonly long n_passes

    cdef AnchorBound anchors[2 * MAX_BOARD_DIM * MAX_BOARD_DIM]
    # per anchor (AnchorBound.id): the bound of its plays of exactly k tiles (k < 8), without a blank and
    # with one; it caps the tiles the anchor's search places
    cdef equity_t anchor_kb[2 * MAX_BOARD_DIM * MAX_BOARD_DIM][8]
    cdef equity_t anchor_kb2[2 * MAX_BOARD_DIM * MAX_BOARD_DIM][8]
    cdef bint kb_blank_pass                # search_anchors reads anchor_kb2 (the pass of plays using a blank)
    cdef int rack_vals[8]                 # rack tile values, descending (blank 0)
    cdef equity_t best_extra[8]           # best leave/adjustment term by tiles played (plays without a blank)
    cdef equity_t best_extra_b[8]         # the same for plays that use a blank (-inf: no such play)
    cdef public bint use_shadow           # shadow-bounded anchor search in best mode
    cdef public bint use_word_map         # 7-tile plays of best-mode searches from the word map
    cdef WordMap wmap                     # None when the alphabet does not fit its keys
    cdef WordMap short_map                # words of 2..RACK_SIZE letters (the empty board); None: unusable
    cdef public bint use_opening_map      # empty-board plays from short_map (best, all and top modes)
    cdef bint gen_opening(self) noexcept nogil
    cdef void opening_dfs(self, int t, int k, int nvals, uint8_t mask, uint64_t k0, uint64_t k1,
                          int nb) noexcept nogil
    # gen_opening's scratch: the rack's letters (highest value first), the multipliers by play length, the
    # played values so far, and the candidate sub-multisets
    cdef int op_letters[RACK_SIZE]
    cdef int op_n_letters
    cdef int op_lm[RACK_SIZE + 1][RACK_SIZE]
    cdef int op_w[RACK_SIZE + 1]
    cdef int op_vals[RACK_SIZE]
    cdef OpenCand op_cand[128]
    cdef int op_n
    cdef int op_key_dim, op_key_sc          # op_lm / op_w are for this start row's premiums (dim 0: none)
    cdef uint8_t op_key_lm[MAX_BOARD_DIM]
    cdef uint8_t op_key_wm[MAX_BOARD_DIM]
    cdef void opening_words(self, const WmSlot* s, int k, int c1, int c2, uint8_t mask, int first,
                            int last) noexcept nogil
    cdef int max_tiles                    # the GADDAG search places at most this many tiles
    cdef uint64_t rack_k0, rack_k1        # word-map key of the rack's letters (blanks left out)
    cdef uint64_t bc_k0[BINGO_KEYS]
    cdef uint64_t bc_k1[BINGO_KEYS]
    cdef int bc_start[BINGO_KEYS]
    cdef int bc_count[BINGO_KEYS]
    cdef int bc_n
    cdef const WmSlot* bp_slot[BINGO_POOL]
    cdef uint8_t bp_blank[BINGO_POOL][2]  # the letters the blanks stand for in that class (0: none)
    cdef int bp_n
    cdef ExtEntry* ext_cache
    cdef ExtEntry* ext_lane               # per orientation and lane: the last sets lane_ext gave it, under the
                                          # lane's raw tiles (letters holds them, as the board does)
    cdef uint64_t precede1[MAX_ALPHABET]  # letters that come right before / after each letter in some word
    cdef uint64_t follow1[MAX_ALPHABET]
    cdef void prepare_bigrams(self) noexcept nogil
    cdef public bint use_ext              # restrict squares next to tiles by lane-direction extensions
    cdef void cache_lane(self, int d, int lane) noexcept nogil
    cdef bint lane_playable(self, int d, int lane) noexcept nogil
    cdef const uint64_t* lane_ext(self) noexcept nogil
    cdef void keep_lane_ext(self, ExtEntry* last, const ExtEntry* e, const ml_t* tiles) noexcept nogil
    cdef uint32_t walk_rev(self, const uint8_t* letters, int a, int b, int first) noexcept nogil
    cdef void shadow_bound(self, int anchor, int last_anchor, equity_t* bound, equity_t* bound2, equity_t* kb,
                           equity_t* kb2) noexcept nogil
    cdef bint begin_bingos(self) noexcept nogil
    cdef void gen_bingos(self) noexcept nogil
    cdef int bingo_classes(self, uint64_t k0, uint64_t k1) noexcept nogil
    cdef void place_bingos(self, int left, int right, int e) noexcept nogil
    cdef void record_bingo(self, int left, int right, const uint8_t* word, int score, int W, int b1,
                           int b2) noexcept nogil
    cdef inline bint eg_bounds_fit(self) noexcept nogil
    cdef inline int64_t shadow_best(self) noexcept nogil
    cdef void search_anchors(self, int n_anchors) noexcept nogil
    cdef void gen_best_shadow(self) noexcept nogil
    cdef void prepare_shadow(self) noexcept nogil
    cdef int generate_c(self) except -1 nogil
    cdef const uint8_t* lane_filter       # gen_best_shadow: only these lanes (NULL: all)
    cdef void record_pass(self) noexcept nogil
    cdef void begin_best(self, const uint8_t* rack, int bag_tiles) noexcept nogil
    cdef int seeded_best(self, const uint8_t* rack, int bag_tiles, const uint8_t* lanes, const Move* seed,
                         Move* best) except -1 nogil
    cdef int rack_counts(self, rack, uint8_t* counts) except -1
    cdef void set_rack_c(self, const uint8_t* rack) noexcept nogil
    cdef int lane_bests(self, const uint8_t* rack, int bag_tiles, const uint8_t* lanes, Move* out,
                        uint8_t* has) except -1 nogil
    cdef void tile_uses(self, int* uses) noexcept nogil
    cdef int gen_c(self, const uint8_t* rack, int bag_tiles, int opp_rack_value, int mode, int n,
                   bint sort) except -1 nogil
    cdef void prepare_leaves(self) noexcept nogil
    cdef void leave_dfs(self, int ml, uint32_t p, int64_t base, int64_t rank, uint8_t mask, int n,
                        int32_t kept) noexcept nogil
    cdef inline uint32_t usable_anchors(self, uint64_t usable) noexcept nogil
    cdef void gen_lane(self) noexcept nogil
    cdef void recursive_gen(self, int col, uint32_t node, int leftstrip, int rightstrip,
                            int main_score, int word_mult, int cross_total) noexcept nogil
    cdef inline void go_fresh(self, int col, uint32_t node, bint record, bint left, bint no_side, int leftstrip,
                              int rightstrip, int main_score, int word_mult, int cross_total) noexcept nogil
    cdef inline uint64_t usable_letters(self) noexcept nogil
    cdef inline uint64_t kids_of(self, uint32_t p) noexcept nogil
    cdef inline uint32_t node_at(self, uint32_t i) noexcept nogil
    cdef inline bint may_extend(self, int col, uint32_t node) noexcept nogil
    cdef inline void go_on(self, int col, ml_t letter, uint32_t node, bint accepts, int leftstrip, int rightstrip,
                    int main_score, int word_mult, int cross_total) noexcept nogil
    cdef void record_place(self, int leftstrip, int rightstrip, int score) noexcept nogil
    cdef void fill_place(self, Move* m, int leftstrip, int rightstrip, int score) noexcept nogil
    cdef void exchanges(self) noexcept nogil
    cdef void record(self, Move* m) noexcept nogil
    cdef bint grow_small(self) noexcept nogil
    cdef bint grow_moves(self) noexcept nogil
    cdef equity_t equity_for(self, int score, int n_tiles, uint8_t mask) noexcept nogil
