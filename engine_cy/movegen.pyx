# Move generation (Gordon's GADDAG algorithm over cached lanes) and static equity.
#
# One MoveGen per thread; all scratch is preallocated and reused. generate_c runs without the GIL.
# Lanes: dir 0 scans rows (across plays), dir 1 scans the transposed board (down plays), so one
# generator serves both directions. A play is generated from its leftmost anchor only; one-tile
# plays that form an across word are recorded by the across pass only.
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.string cimport memset, memcpy, memcmp

from engine_cy.common cimport ml_t, equity_t, MAX_BOARD_DIM, MAX_ALPHABET, RACK_SIZE, EQUITY_SCALE
from engine_cy.board cimport Board
from engine_cy.kwg cimport Kwg
from engine_cy.kwg_node cimport (kwg_seek, kwg_arc, kwg_accepts, kwg_is_end, kwg_tile, KWG_IS_END, KWG_ARC_MASK,
                                 KWG_ACCEPTS, KWG_NOT_FOUND)
from engine_cy.klv cimport Klv
from engine_cy.alphabet cimport LetterDistribution
from engine_cy.wordmap cimport WordMap, WmSlot, wm_add
from engine_cy.move cimport Move, MOVE_PLACE, MOVE_EXCHANGE, MOVE_PASS, move_cmp, pack_move, packed_kind
from engine_cy.wordmap import short_word_map
from engine_cy.cross_set import compute_all as _compute_cross_sets
# the explicit-play helpers' old import path, for callers not yet moved to engine_cy.rules / engine_cy.move

cdef extern from "portable.h":
    int ctz64 "macondo_ctz64"(uint64_t) nogil
    int popcount64 "macondo_popcount64"(uint64_t) nogil
    void prefetch "macondo_prefetch"(const void*) nogil

cdef enum:
    NON_OUT_PENALTY = 10 * EQUITY_SCALE

cdef inline void _shadow_insert(int c, int cap, int vmax, int j, const int* rv, int* sorted_c, int* sorted_u,
                                int* u, int* capped, int64_t* sum_c, int64_t* sum_u) noexcept nogil:
    """Shadow bound: insert an empty square's coefficient c into sorted_c (holding j entries, descending), and
    into sorted_u (u[0] entries) when the square accepts the rack's highest value (cap >= vmax), else add
    c * cap (its best accepted value) to capped[0]. sum_c / sum_u keep each list paired with the rack's values
    rv (descending), entry by entry: an entry moved one place down is paired with the next value."""
    cdef int t = j
    while t > 0 and sorted_c[t - 1] < c:
        sorted_c[t] = sorted_c[t - 1]
        sum_c[0] += <int64_t> sorted_c[t] * (rv[t] - rv[t - 1])
        t -= 1
    sorted_c[t] = c
    sum_c[0] += <int64_t> c * rv[t]
    if cap < vmax:
        capped[0] += c * cap
        return
    t = u[0]
    while t > 0 and sorted_u[t - 1] < c:
        sorted_u[t] = sorted_u[t - 1]
        sum_u[0] += <int64_t> sorted_u[t] * (rv[t] - rv[t - 1])
        t -= 1
    sorted_u[t] = c
    sum_u[0] += <int64_t> c * rv[t]
    u[0] += 1


cdef inline int _letters_by_value(const uint8_t* rack, const int32_t* scores, int lo, int size,
                                  int* out) noexcept nogil:
    """The letters lo..size-1 the rack holds, highest tile value first (equal values in letter order), in out;
    returns how many."""
    cdef int ml, t, n = 0
    for ml in range(lo, size):
        if rack[ml] > 0:
            t = n
            while t > 0 and scores[out[t - 1]] < scores[ml]:
                out[t] = out[t - 1]
                t -= 1
            out[t] = ml
            n += 1
    return n


cdef inline void _heap_sift(const equity_t* key, uint8_t* h, int i, int n) noexcept nogil:
    """Sift entry i down a max-heap (by key[h[.]]) of n indices."""
    cdef int c
    cdef uint8_t t = h[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and key[h[c + 1]] > key[h[c]]:
            c += 1
        if key[h[c]] <= key[t]:
            break
        h[i] = h[c]
        i = c
    h[i] = t


cdef int _qsort_cmp(const void* a, const void* b) noexcept nogil:
    return move_cmp(<const Move*> a, <const Move*> b)


cdef int _anchor_cmp(const void* a, const void* b) noexcept nogil:
    cdef const AnchorBound* x = <const AnchorBound*> a
    cdef const AnchorBound* y = <const AnchorBound*> b
    if x.bound != y.bound:
        return -1 if x.bound > y.bound else 1
    if x.dir != y.dir:
        return x.dir - y.dir
    if x.lane != y.lane:
        return x.lane - y.lane
    return x.col - y.col


cdef inline void _anchor_sift(AnchorBound* h, int i, int n) noexcept nogil:
    """Sift entry i down a heap of n anchors whose top is the first in _anchor_cmp order."""
    cdef int c
    cdef AnchorBound t = h[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _anchor_cmp(&h[c + 1], &h[c]) < 0:
            c += 1
        if _anchor_cmp(&h[c], &t) >= 0:
            break
        h[i] = h[c]
        i = c
    h[i] = t


@cython.final
cdef class MoveGen:
    """Generates every legal play for a rack on a board, scored and valued (millipoints)."""

    def __cinit__(self):
        self.eg_stop_value = 0x7FFFFFFFFFFFFFFF
        self.small_buf = NULL
        self.small_score = NULL
        self.small_equity = NULL
        self.cap_small = 0
        self.move_buf = NULL
        self.n_moves = 0
        self.cap_moves = 0
        self.peg_table = NULL
        self.peg_len = 0
        self.ext_cache = NULL
        self.ext_lane = NULL

    def __init__(self, Kwg kwg, LetterDistribution ld, Klv klv=None, int bingo_bonus=50,
                 bint opening_map=True):
        """opening_map=False: no word map of short words for the empty board (a generator that never sees one,
        such as the endgame's, skips building it; an empty board is then generated by the GADDAG)."""
        cdef int i
        if kwg.gaddag_root == 0:
            raise ValueError("move generation needs a KWG with a GADDAG")
        self.kwg = kwg
        self.klv = klv
        self.ld = ld
        self.nodes = kwg.nodes
        kwg.ensure_child_masks()
        self.child_masks = kwg.child_masks
        self.mnodes = kwg.mnodes if kwg.ensure_mnodes() else NULL
        self.root = kwg.mnodes_root if self.mnodes != NULL else kwg.gaddag_root
        for i in range(MAX_ALPHABET):
            self.scores[i] = ld.scores[i] if i < ld.size else 0
            self.vowel[i] = ld.vowels[i] if i < ld.size else False
        self.all_letters = ((<uint64_t> 1 << ld.size) - 1) & ~(<uint64_t> 1)
        self.bingo_bonus = bingo_bonus
        self.cap_moves = 4096
        self.move_buf = <Move*> malloc(self.cap_moves * sizeof(Move))
        if self.move_buf == NULL:
            raise MemoryError()
        self.rack_key_valid = 0
        self.leave_cache_next = 0
        for i in range(LEAVE_CACHE):
            self.leave_cache[i].valid = 0
        self.use_shadow = True
        self.scores_only = False
        self.use_word_map = True
        self.use_ext = True
        self.ext_cache = <ExtEntry*> calloc(EXT_CACHE, sizeof(ExtEntry))
        self.ext_lane = <ExtEntry*> calloc(2 * MAX_BOARD_DIM, sizeof(ExtEntry))
        if self.ext_cache == NULL or self.ext_lane == NULL:
            raise MemoryError()
        self.prepare_bigrams()
        self.max_tiles = RACK_SIZE
        wm = kwg.word_map()
        self.wmap = wm if wm.usable and ld.size <= 33 else None
        self.use_opening_map = True
        self.op_key_dim = 0
        self.short_map = None
        if ld.size <= 33 and opening_map:
            wm = short_word_map(kwg)
            self.short_map = wm if wm.usable else None
        self.klv_masks = NULL
        if klv is not None:
            klv.kwg.ensure_counts()
            klv.kwg.ensure_child_masks()
            self.klv_masks = klv.kwg.child_masks

    @property
    def interleaved(self):
        """Whether the generator reads the word graph's nodes and child masks from one interleaved array
        (alphabets of at most 32 tiles; larger ones use the separate arrays)."""
        return self.mnodes != NULL

    def __dealloc__(self):
        free(self.small_buf)
        free(self.small_score)
        free(self.small_equity)
        free(self.move_buf)
        free(self.peg_table)
        free(self.ext_cache)
        free(self.ext_lane)

    def set_preendgame_table(self, values):
        """Optional equity adjustment by tiles the opponent will see unseen (points per index)."""
        free(self.peg_table)
        self.peg_table = NULL
        self.peg_len = 0
        if values:
            self.peg_table = <equity_t*> malloc(len(values) * sizeof(equity_t))
            for i, v in enumerate(values):
                self.peg_table[i] = <equity_t> round(v * EQUITY_SCALE)
            self.peg_len = len(values)

    # ------------------------------------------------------------ leaves

    cdef void prepare_leaves(self) noexcept nogil:
        """Leave value and kept face value for every canonical sub-multiset of the rack (<= 128); the tables
        of the last few racks are kept, since a simulation alternates between a few racks. The endgame
        searcher's best-value mode (RECORD_EG_BEST) and score-only lists (scores_only) read none of them: only
        the rack's bits are set."""
        cdef int ml, b = 0, i
        cdef int size = self.ld.size
        cdef LeaveTables* e
        cdef bint same = self.rack_key_valid != 0
        for ml in range(size):
            self.first_bit[ml] = b
            b += self.rack[ml]
        self.cur_mask = <uint8_t> ((1 << b) - 1) if b < 8 else 0xFF
        if self.record_mode == RECORD_EG_BEST or (self.scores_only and self.record_mode == RECORD_SMALL):
            return
        for ml in range(size):
            if self.rack_key[ml] != self.rack[ml]:
                same = False
        if same:
            return
        for ml in range(MAX_ALPHABET):
            self.rack_key[ml] = self.rack[ml] if ml < size else 0
        self.rack_key_valid = 1
        for i in range(LEAVE_CACHE):
            e = &self.leave_cache[i]
            if e.valid and memcmp(e.rack, self.rack_key, MAX_ALPHABET) == 0:
                memcpy(self.leave_value, e.leave_value, sizeof(self.leave_value))
                memcpy(self.kept_value, e.kept_value, sizeof(self.kept_value))
                memcpy(self.sub_masks, e.sub_masks, sizeof(self.sub_masks))
                memcpy(self.sub_sizes, e.sub_sizes, sizeof(self.sub_sizes))
                self.n_sub_masks = e.n_sub_masks
                return
        self.n_sub_masks = 0
        if self.klv is not None and self.klv.kwg.dawg_root != 0:
            self.leave_dfs(0, self.klv.kwg.dawg_root, 0, -1, 0, 0, 0)
        else:
            self.leave_dfs(0, 0, 0, -1, 0, 0, 0)
        e = &self.leave_cache[self.leave_cache_next]
        self.leave_cache_next = (self.leave_cache_next + 1) % LEAVE_CACHE
        e.valid = 1
        memcpy(e.rack, self.rack_key, MAX_ALPHABET)
        memcpy(e.leave_value, self.leave_value, sizeof(self.leave_value))
        memcpy(e.kept_value, self.kept_value, sizeof(self.kept_value))
        memcpy(e.sub_masks, self.sub_masks, sizeof(self.sub_masks))
        memcpy(e.sub_sizes, self.sub_sizes, sizeof(self.sub_sizes))
        e.n_sub_masks = self.n_sub_masks

    cdef void leave_dfs(self, int ml, uint32_t p, int64_t base, int64_t rank, uint8_t mask, int n,
                        int32_t kept) noexcept nogil:
        """Every sub-multiset of the rack, letters in ascending order, walking the leave graph along the way
        (the rank arithmetic of Kwg.index_of_ml, shared by common prefixes): p is the list that continues
        the letters chosen so far (0: none), base the rank offset there, rank the leave's rank (-1: absent)."""
        cdef int size = self.ld.size, c
        cdef const uint32_t* nodes
        cdef const uint32_t* counts
        cdef uint32_t q
        cdef uint64_t cm
        cdef int64_t b
        while ml < size and self.rack[ml] == 0:
            ml += 1
        if ml == size:
            self.kept_value[mask] = kept
            self.sub_masks[self.n_sub_masks] = mask
            self.sub_sizes[self.n_sub_masks] = <uint8_t> n
            self.n_sub_masks += 1
            if 0 < n <= RACK_SIZE and 0 <= rank < self.klv.n_values:
                self.leave_value[mask] = self.klv.values[rank]
            else:
                self.leave_value[mask] = 0
            return
        self.leave_dfs(ml + 1, p, base, rank, mask, n, kept)
        nodes = self.klv.kwg.nodes if p != 0 else NULL
        counts = self.klv.kwg.counts if p != 0 else NULL
        for c in range(1, self.rack[ml] + 1):
            if p != 0:
                b = base + counts[p]
                cm = self.klv_masks[p]    # the list's tiles: the node of ml is found by counting the smaller
                q = p + <uint32_t> popcount64(cm & (((<uint64_t> 1) << ml) - 1)) if (cm >> ml) & 1 else 0
                if q == 0:
                    p = 0
                    rank = -1
                else:
                    b -= counts[q]
                    rank = b if kwg_accepts(nodes, q) else -1
                    if kwg_accepts(nodes, q):
                        b += 1
                    p = kwg_arc(nodes, q)
                    base = b
            else:
                rank = -1
            self.leave_dfs(ml + 1, p, base, rank, mask | <uint8_t> (((1 << c) - 1) << self.first_bit[ml]),
                           n + c, kept + c * self.scores[ml])

    cdef equity_t equity_for(self, int score, int n_tiles, uint8_t mask) noexcept nogil:
        cdef equity_t eq = score * EQUITY_SCALE
        cdef int idx
        if self.bag_tiles > 0:
            eq += self.leave_value[mask]
            if self.peg_len > 0:
                idx = self.bag_tiles - n_tiles + RACK_SIZE
                if 0 <= idx < self.peg_len:
                    eq += self.peg_table[idx]
        else:
            if mask == 0 and n_tiles > 0:   # nothing kept: the play goes out
                if self.opp_rack_value > 0:
                    eq += 2 * self.opp_rack_value * EQUITY_SCALE
            else:
                eq -= 2 * self.kept_value[mask] * EQUITY_SCALE + NON_OUT_PENALTY
        return eq

    # ------------------------------------------------------------ recording

    cdef void record(self, Move* m) noexcept nogil:
        cdef int i, parent, child, smallest, n
        cdef Move tmp
        if self.record_mode == RECORD_EG_BEST or self.record_mode == RECORD_USES:
            return                  # placements are kept by record_place; passes and exchanges are not wanted
        if self.record_mode == RECORD_BEST:
            if not self.has_best or move_cmp(m, &self.best) < 0:
                self.best = m[0]
                self.has_best = True
            return
        if self.record_mode == RECORD_SMALL:
            if self.n_moves >= self.cap_small:
                if not self.grow_small():
                    return
            self.small_buf[self.n_moves] = pack_move(m)
            self.small_score[self.n_moves] = m.score
            self.small_equity[self.n_moves] = m.equity
            self.n_moves += 1
            return
        if self.record_mode == RECORD_TOP_N and self.n_moves >= self.top_n:
            # min-heap on rank: moves[0] is the worst kept move
            if self.top_n == 0 or move_cmp(m, &self.move_buf[0]) >= 0:
                return
            self.move_buf[0] = m[0]
            i = 0
            n = self.n_moves
            while True:
                child = 2 * i + 1
                if child >= n:
                    break
                smallest = child
                if child + 1 < n and move_cmp(&self.move_buf[child + 1], &self.move_buf[child]) > 0:
                    smallest = child + 1
                if move_cmp(&self.move_buf[smallest], &self.move_buf[i]) > 0:
                    tmp = self.move_buf[i]
                    self.move_buf[i] = self.move_buf[smallest]
                    self.move_buf[smallest] = tmp
                    i = smallest
                else:
                    break
            return
        if self.n_moves >= self.cap_moves and not self.grow_moves():
            return  # out of memory: the move is dropped rather than crashing the process
        self.move_buf[self.n_moves] = m[0]
        self.n_moves += 1
        if self.record_mode == RECORD_TOP_N:
            i = self.n_moves - 1
            while i > 0:
                parent = (i - 1) // 2
                if move_cmp(&self.move_buf[i], &self.move_buf[parent]) > 0:
                    tmp = self.move_buf[i]
                    self.move_buf[i] = self.move_buf[parent]
                    self.move_buf[parent] = tmp
                    i = parent
                else:
                    break

    cdef bint grow_moves(self) noexcept nogil:
        cdef Move* grown = <Move*> realloc(self.move_buf, 2 * self.cap_moves * sizeof(Move))
        if grown == NULL:
            return False
        self.move_buf = grown
        self.cap_moves *= 2
        return True

    cdef bint grow_small(self) noexcept nogil:
        cdef int cap = self.cap_small * 2 if self.cap_small else 4096
        cdef uint64_t* a = <uint64_t*> realloc(self.small_buf, cap * sizeof(uint64_t))
        if a == NULL:
            return False
        self.small_buf = a
        cdef int32_t* b = <int32_t*> realloc(self.small_score, cap * sizeof(int32_t))
        if b == NULL:
            return False
        self.small_score = b
        cdef equity_t* e = <equity_t*> realloc(self.small_equity, cap * sizeof(equity_t))
        if e == NULL:
            return False
        self.small_equity = e
        self.cap_small = cap
        return True

    cdef inline void fill_place(self, Move* m, int leftstrip, int rightstrip, int score) noexcept nogil:
        """A placement of the strip's tiles leftstrip..rightstrip, as found in the current lane (equity unset)."""
        cdef int i
        m.kind = MOVE_PLACE
        m.score = score
        m.n_tiles = <uint8_t> self.tiles_played
        m.length = <uint8_t> (rightstrip - leftstrip + 1)
        m.vertical = <uint8_t> self.dir
        if self.dir == 0:
            m.row = <uint8_t> self.lane
            m.col = <uint8_t> leftstrip
        else:
            m.row = <uint8_t> leftstrip
            m.col = <uint8_t> self.lane
        for i in range(leftstrip, rightstrip + 1):
            m.tiles[i - leftstrip] = self.strip[i]
        m.leave_mask = self.cur_mask

    cdef void record_place(self, int leftstrip, int rightstrip, int score) noexcept nogil:
        cdef Move tmp
        cdef Move* m
        cdef int i, pen = 0
        cdef ml_t t
        cdef equity_t eq
        cdef bint direct = self.record_mode == RECORD_ALL
        cdef int64_t value
        cdef int face = 0, key
        if self.dir == 1 and self.tiles_played == 1:
            # one-tile play: recorded once, by the across pass when it forms an across word
            for i in range(leftstrip, rightstrip + 1):
                if self.strip[i] != 0 and ((self.cross_bits >> i) & 1):
                    return
        self.n_placements += 1
        if self.record_mode == RECORD_USES:
            for i in range(leftstrip, rightstrip + 1):
                t = self.strip[i]     # 0 on played-through squares
                if t != 0:
                    key = 0 if (t & 0x80) else t
                    self.uses_cnt[key] += 1
                    if self.uses_cnt[key] >= self.uses_min:
                        self.uses_mask |= (<uint64_t> 1) << key
            if (self.uses_mask & self.uses_need) == self.uses_need:
                # every letter asked about is used: no further tile is placed, and no further lane searched
                self.uses_done = True
                self.max_tiles = 0
            return
        if self.record_mode == RECORD_EG_BEST:
            # the searcher's value of the play (set_eg_value): only a strictly better one replaces the best
            value = score * self.eg_mul
            if self.cur_mask == 0:
                value += self.eg_out
            if self.eg_tile_pen != 0 or self.eg_face_pen != 0:
                for i in range(leftstrip, rightstrip + 1):
                    t = self.strip[i]     # 0 on played-through squares
                    if t != 0 and not (t & 0x80):
                        face += self.scores[t]
                value -= self.eg_tile_pen * self.tiles_played + self.eg_face_pen * face
            # the order of the full generation: lane by lane, each lane's 7-tile plays from the word map
            # (anchor_col -1) before its anchors, anchors left to right; within an anchor, the order found
            key = (self.dir * MAX_BOARD_DIM + self.lane) * 64 + self.anchor_col + 1
            if self.has_best and (value < self.eg_best_value or
                                  (value == self.eg_best_value and key >= self.eg_best_key)):
                return
            self.eg_best_value = value
            self.eg_best_key = key
            self.eg_found = True
            self.has_best = True
            m = &self.best
            self.fill_place(m, leftstrip, rightstrip, score)
            m.equity = 0
            return
        if self.scores_only and self.record_mode == RECORD_SMALL:
            eq = 0
        else:
            eq = self.equity_for(score, self.tiles_played, self.cur_mask)
        if self.record_mode == RECORD_BEST and self.has_best and eq < self.best.equity:
            return  # cannot win (the opening's vowel penalty below only lowers it): not worth building
        if direct:
            # all-moves mode writes straight into the list (no intermediate copy)
            if self.n_moves >= self.cap_moves and not self.grow_moves():
                return
            m = &self.move_buf[self.n_moves]
        else:
            m = &tmp
        self.fill_place(m, leftstrip, rightstrip, score)
        m.equity = eq
        if self.board_empty:
            # opening placement penalty: vowels on the squares beside premiums next to the start lane
            for i in range(leftstrip, rightstrip + 1):
                t = self.strip[i]
                if t != 0 and self.vowel[t & 0x7F]:
                    pen += self.board.opening_pen[self.dir * MAX_BOARD_DIM + i]
            m.equity -= pen
        if direct:
            self.n_moves += 1
        else:
            self.record(m)

    # ------------------------------------------------------------ Gordon recursion

    cdef void recursive_gen(self, int col, uint32_t node, int leftstrip, int rightstrip,
                            int main_score, int word_mult, int cross_total) noexcept nogil:
        cdef ml_t cur = self.row_tiles[col]
        cdef uint32_t i, child
        cdef uint64_t cs, kids, pf
        cdef ml_t ml, t
        cdef uint8_t bit
        cdef uint32_t n
        cdef bint acc, left, no_side, can_record
        cdef int lm, wm_sq, wm, cross_lm, val, dim
        if node == 0:
            return
        kids = self.kids_of(node)
        if cur != 0:
            ml = cur & 0x7F
            if (kids >> ml) & 1:
                i = node + <uint32_t> popcount64(kids & (((<uint64_t> 1) << ml) - 1))
                n = self.node_at(i)
                self.go_on(col, cur, n & KWG_ARC_MASK, (n & KWG_ACCEPTS) != 0, leftstrip, rightstrip,
                           main_score, word_mult, cross_total)
            return
        if self.rack_tiles == 0 or self.tiles_played >= self.max_tiles:
            return
        cs = self.row_cs[col] & kids & self.usable_letters()
        if cs == 0:
            return
        # what every tile placed on this square shares: its multipliers, its cross word's fixed part, and
        # which side of the anchor it extends (go_fresh)
        lm = self.row_lm[col]
        wm_sq = self.row_wm[col]
        wm = word_mult * wm_sq
        cross_lm = 0
        if (self.cross_bits >> col) & 1:
            cross_total += self.row_csc[col] * wm_sq
            cross_lm = lm * wm_sq
        dim = self.dim
        left = col <= self.anchor_col
        if left:
            no_side = col == 0 or self.row_tiles[col - 1] == 0
            can_record = no_side and (self.anchor_col == dim - 1 or self.row_tiles[self.anchor_col + 1] == 0)
        else:
            no_side = col == dim - 1 or self.row_tiles[col + 1] == 0
            can_record = no_side
        if self.mnodes != NULL:
            # start loading every child's sibling list now: each is a likely cache miss, and the misses overlap
            pf = cs
            while pf != 0:
                i = node + <uint32_t> popcount64(kids & ((pf & (~pf + 1)) - 1))
                pf &= pf - 1
                prefetch(&self.mnodes[<uint32_t> self.mnodes[i] & KWG_ARC_MASK])
        while cs != 0:
            ml = <ml_t> ctz64(cs)
            cs &= cs - 1
            i = node + <uint32_t> popcount64(kids & (((<uint64_t> 1) << ml) - 1))
            n = self.node_at(i)
            child = n & KWG_ARC_MASK
            acc = (n & KWG_ACCEPTS) != 0
            # the letter from the rack's own tile, then as a blank (worth 0): one call site for both, so the
            # compiler can inline go_fresh into this loop
            t = ml if self.rack[ml] > 0 else 0
            while True:
                if t == 0 and self.rack[0] == 0:
                    break
                val = self.scores[t] if t != 0 else 0
                bit = <uint8_t> (1 << (self.first_bit[t] + self.rack[t] - 1))
                self.rack[t] -= 1
                if t != 0 and self.rack[t] == 0:
                    self.rack_bits ^= (<uint64_t> 1) << t
                self.rack_tiles -= 1
                self.tiles_played += 1
                self.cur_mask ^= bit
                self.strip[col] = ml if t != 0 else (ml | 0x80)
                self.go_fresh(col, child, acc and can_record, left, no_side, leftstrip, rightstrip,
                              main_score + val * lm, wm, cross_total + val * cross_lm)
                self.cur_mask ^= bit
                self.tiles_played -= 1
                self.rack_tiles += 1
                if t != 0 and self.rack[t] == 0:
                    self.rack_bits ^= (<uint64_t> 1) << t
                self.rack[t] += 1
                if t == 0:
                    break
                t = 0

    cdef inline void go_fresh(self, int col, uint32_t node, bint record, bint left, bint no_side, int leftstrip,
                              int rightstrip, int main_score, int word_mult, int cross_total) noexcept nogil:
        """The rest of go_on once square col's letter is counted (strip and scores updated; a tile placed from
        the rack comes here directly): record the play when `record` (the word ends here and the squares past
        both ends are free), then extend it left (or across the separator) or right. no_side: the square
        beyond col on its side is free."""
        cdef int score
        if left:
            if record:
                score = main_score * word_mult + cross_total
                if self.tiles_played == RACK_SIZE:
                    score += self.bingo_bonus
                self.record_place(col, rightstrip, score)
            if node == 0:
                return
            if col > 0 and col - 1 != self.last_anchor_col and self.may_extend(col - 1, node):
                self.recursive_gen(col - 1, node, col, rightstrip, main_score, word_mult, cross_total)
            # the separator, when present, is the first sibling (tile 0 sorts first)
            if (self.node_at(node) >> 24) == 0 and no_side and self.anchor_col < self.dim - 1:
                self.recursive_gen(self.anchor_col + 1, self.node_at(node) & KWG_ARC_MASK, col, rightstrip,
                                   main_score, word_mult, cross_total)
        else:
            if record:
                score = main_score * word_mult + cross_total
                if self.tiles_played == RACK_SIZE:
                    score += self.bingo_bonus
                self.record_place(leftstrip, col, score)
            if node != 0 and col < self.dim - 1 and self.may_extend(col + 1, node):
                self.recursive_gen(col + 1, node, leftstrip, col, main_score, word_mult, cross_total)

    cdef inline bint may_extend(self, int col, uint32_t node) noexcept nogil:
        """False when recursive_gen(col, node, ...) would return at once: col is empty and no rack tile can
        go there (no tile left to place, or none that both continues the node's words and fits the square)."""
        if self.row_tiles[col] != 0:
            return True
        if self.rack_tiles == 0 or self.tiles_played >= self.max_tiles:
            return False
        return (self.row_cs[col] & self.kids_of(node) &
                self.usable_letters()) != 0

    cdef inline uint64_t usable_letters(self) noexcept nogil:
        """The letters the rack can place now: every letter while it holds a blank, else its own."""
        return self.all_letters if self.rack[0] > 0 else self.rack_bits

    cdef inline uint64_t kids_of(self, uint32_t p) noexcept nogil:
        """The tiles of the sibling list from node p on (bit t for tile t)."""
        if self.mnodes != NULL:
            return self.mnodes[p] >> 32
        return self.child_masks[p]

    cdef inline uint32_t node_at(self, uint32_t i) noexcept nogil:
        """Node i of the word graph (read from the interleaved array when there is one: same cache line)."""
        if self.mnodes != NULL:
            return <uint32_t> self.mnodes[i]
        return self.nodes[i]

    cdef inline void go_on(self, int col, ml_t letter, uint32_t node, bint accepts, int leftstrip, int rightstrip,
                    int main_score, int word_mult, int cross_total) noexcept nogil:
        cdef int lm, wm, val, dim = self.dim
        cdef bint fresh = self.row_tiles[col] == 0
        cdef bint no_side, record, left
        if fresh:
            val = 0 if (letter & 0x80) else self.scores[letter]
            lm = self.row_lm[col]
            wm = self.row_wm[col]
            main_score += val * lm
            word_mult *= wm
            if ((self.cross_bits >> col) & 1):
                cross_total += (self.row_csc[col] + val * lm) * wm
            self.strip[col] = letter
        else:
            main_score += 0 if (letter & 0x80) else self.scores[letter & 0x7F]
            self.strip[col] = 0
        if col <= self.anchor_col:
            no_side = col == 0 or self.row_tiles[col - 1] == 0
            # (a search from a run's last tile has placed nothing until it leaves the run)
            record = accepts and no_side and self.tiles_played > 0 and \
                (self.anchor_col == dim - 1 or self.row_tiles[self.anchor_col + 1] == 0)
            left = True
            leftstrip = col
        else:
            no_side = col == dim - 1 or self.row_tiles[col + 1] == 0
            record = accepts and no_side
            left = False
            rightstrip = col
        self.go_fresh(col, node, record, left, no_side, leftstrip, rightstrip, main_score, word_mult, cross_total)

    cdef void cache_lane(self, int d, int lane) noexcept nogil:
        """Copy lane `lane` of orientation d (tiles, cross-sets, premiums, anchors) into the row cache."""
        cdef int dim = self.dim, idx, sq
        self.dir = d
        self.lane = lane
        cdef const uint64_t* ext
        cdef const uint32_t* occ = &self.board.occ[d][0]
        cdef uint32_t t = occ[lane], cross = 0, anchors
        if lane > 0:
            cross |= occ[lane - 1]
        if lane < dim - 1:
            cross |= occ[lane + 1]
        if self.board_empty:
            if d == 0 and lane == self.board.start_row:
                anchors = <uint32_t> 1 << self.board.start_col
            elif d == 1 and lane == self.board.start_col and self.board.open_down:
                anchors = <uint32_t> 1 << self.board.start_row
            else:
                anchors = 0
        else:
            # the last tile of each run, and each empty square touched across but by no tile along the lane:
            # every play covers one (it places a tile next to a tile), and a play through a run is searched
            # from the run's own letters first, which the GADDAG constrains at once, rather than from an
            # empty square beside the run, whose first letters only the rack constrains
            anchors = ((t & ~(t >> 1)) | (cross & ~(t | (t << 1) | (t >> 1)))) & ((<uint32_t> 1 << dim) - 1)
        sq = lane * dim
        memcpy(self.row_tiles, &self.board.tiles[d][sq], dim * sizeof(ml_t))
        memcpy(self.row_cs, &self.board.cross_set[d][sq], dim * sizeof(uint64_t))
        memcpy(self.row_csc, &self.board.cross_score[d][sq], dim * sizeof(int32_t))
        memcpy(self.row_lm, &self.board.letter_mult[d][sq], dim * sizeof(uint8_t))
        memcpy(self.row_wm, &self.board.word_mult[d][sq], dim * sizeof(uint8_t))
        self.cross_bits = cross
        self.anchor_bits = anchors
        self.lane_tiles = t
        if t != 0 and self.use_ext:
            ext = self.lane_ext()
            for idx in range(dim):
                self.row_cs[idx] &= ext[idx]

    cdef const uint64_t* lane_ext(self) noexcept nogil:
        """For the cached lane: per square, the letters that can stand there given the runs of tiles next to
        it in the lane (left of a run: letters that precede it in some word; right of a run: letters that
        follow it; between two runs: both). Other squares: every letter. A play along the lane covering such
        a square covers the run too, so any legal play obeys these sets; the move generator intersects them
        with the cross-sets, which prunes searches and tightens shadow bounds. They depend only on the
        lane's letters, so they are cached by them (the same lanes recur across plies and undos)."""
        cdef uint8_t letters[MAX_BOARD_DIM]
        cdef uint64_t h = 0x84222325CBF29CE4ULL, fol, cand
        cdef int dim = self.dim, idx, a, b, c
        cdef uint32_t cur
        cdef ExtEntry* e
        cdef uint64_t w[3]
        # most lanes are as they were at this generator's last look (a play changes a few): then the sets it
        # gave are still right, compared on the board's own tiles (written long before, so read at full speed)
        cdef ExtEntry* last = &self.ext_lane[self.dir * MAX_BOARD_DIM + self.lane]
        cdef const ml_t* tiles = &self.board.tiles[self.dir][self.lane * dim]
        if last.dim == dim and memcmp(last.letters, tiles, dim) == 0:
            return last.ext
        # the lane's letters (blanks by their letter), 0 past the lane's end, hashed 8 at a time
        memset(w, 0, sizeof(w))
        memcpy(w, self.row_tiles, dim * sizeof(ml_t))
        w[0] &= 0x7F7F7F7F7F7F7F7FULL
        w[1] &= 0x7F7F7F7F7F7F7F7FULL
        w[2] &= 0x7F7F7F7F7F7F7F7FULL
        memcpy(letters, w, MAX_BOARD_DIM)
        h = (w[0] * 0x9E3779B97F4A7C15ULL) ^ (w[1] * 0xC2B2AE3D27D4EB4FULL) ^ (w[2] * 0x165667B19E3779F9ULL)
        h ^= h >> 29
        h *= 0xBF58476D1CE4E5B9ULL
        h ^= h >> 32
        e = &self.ext_cache[h & (EXT_CACHE - 1)]
        if e.dim == dim and memcmp(e.letters, letters, MAX_BOARD_DIM) == 0:
            self.keep_lane_ext(last, e, tiles)
            return e.ext
        memcpy(e.letters, letters, MAX_BOARD_DIM)
        e.dim = dim
        for idx in range(MAX_BOARD_DIM):
            e.ext[idx] = self.all_letters
        a = 0
        while a < dim:
            if letters[a] == 0:
                a += 1
                continue
            b = a
            while b + 1 < dim and letters[b + 1] != 0:
                b += 1
            if a > 0:
                if a == b:
                    e.ext[a - 1] &= self.precede1[letters[a]]
                else:
                    cur = self.walk_rev(letters, a, b, 0)
                    e.ext[a - 1] &= (self.kids_of(cur) & self.all_letters) \
                        if cur != 0 and cur != KWG_NOT_FOUND else 0
            if b < dim - 1:
                fol = self.follow1[letters[b]]   # what can follow the run's last letter at all
                if a < b:
                    cand = fol
                    fol = 0
                    while cand != 0:
                        c = ctz64(cand)
                        cand &= cand - 1
                        if self.walk_rev(letters, a, b, c) != KWG_NOT_FOUND:
                            fol |= (<uint64_t> 1) << c
                e.ext[b + 1] &= fol
            a = b + 1
        self.keep_lane_ext(last, e, tiles)
        return e.ext

    cdef inline void keep_lane_ext(self, ExtEntry* last, const ExtEntry* e, const ml_t* tiles) noexcept nogil:
        """Remember the sets e for the cached lane, under its raw tiles (blanks marked, as the board has them)."""
        memcpy(last.ext, e.ext, sizeof(e.ext))
        memcpy(last.letters, tiles, self.dim)
        last.dim = self.dim

    cdef void prepare_bigrams(self) noexcept nogil:
        """precede1[x] / follow1[x]: the letters that come right before / after x in some word."""
        cdef int x, c
        cdef uint8_t pair[2]
        cdef uint32_t cur
        for x in range(MAX_ALPHABET):
            self.precede1[x] = 0
            self.follow1[x] = 0
        for x in range(1, self.ld.size):
            pair[0] = <uint8_t> x
            cur = self.walk_rev(pair, 0, 0, 0)
            if cur != 0 and cur != KWG_NOT_FOUND:
                self.precede1[x] = self.kids_of(cur) & self.all_letters
            for c in range(1, self.ld.size):
                if self.walk_rev(pair, 0, 0, c) != KWG_NOT_FOUND:
                    self.follow1[x] |= (<uint64_t> 1) << c

    cdef uint32_t walk_rev(self, const uint8_t* letters, int a, int b, int first) noexcept nogil:
        """Follow `first` (when > 0), then letters[b], letters[b-1], ..., letters[a] from the GADDAG root: the
        list reached (0: the path ends there), or KWG_NOT_FOUND when no word has that substring."""
        cdef uint32_t cur = self.root, i
        cdef uint64_t kids
        cdef int x, pos = b + 1 if first > 0 else b
        while pos >= a:
            x = first if pos == b + 1 else letters[pos]
            if cur == 0:
                return KWG_NOT_FOUND
            kids = self.kids_of(cur)
            if not ((kids >> x) & 1):
                return KWG_NOT_FOUND
            i = cur + <uint32_t> popcount64(kids & (((<uint64_t> 1) << x) - 1))
            cur = self.node_at(i) & KWG_ARC_MASK
            pos -= 1
        return cur

    cdef bint lane_playable(self, int d, int lane) noexcept nogil:
        """False when no tile of the rack can go on any anchor of the lane (no play there at all: every play
        puts a tile on an anchor, and that tile must be in the square's cross-set). Reads the board's lane
        occupancy bits only, without caching the lane. The empty board's one playable lane is the start row.

        A rack of one tile is held to its one-tile plays: in an across lane, a square beside a tile of the
        lane; in a down lane, a square beside a tile of the lane and beside none across (a one-tile play that
        forms an across word is recorded by the across pass); the tile in the square's cross-sets of both
        directions (the other one checks the word along the lane)."""
        cdef int dim = self.dim, sq = lane * dim, i
        cdef uint32_t t, near, side = 0, anchors
        cdef uint64_t usable = self.usable_letters(), cs
        cdef bint one = self.rack_tiles == 1
        cdef const uint32_t* occ = &self.board.occ[d][0]
        if self.board.n_tiles == 0:
            return (d == 0 and lane == self.board.start_row) or \
                (d == 1 and lane == self.board.start_col and self.board.open_down)
        t = occ[lane]
        near = (t << 1) | (t >> 1)
        if lane > 0:
            side |= occ[lane - 1]
        if lane < dim - 1:
            side |= occ[lane + 1]
        if not one:
            anchors = near | side
        elif d == 0:
            anchors = near
        else:
            anchors = near & ~side
        anchors &= ~t & ((<uint32_t> 1 << dim) - 1)
        while anchors != 0:
            i = ctz64(anchors)
            anchors &= anchors - 1
            cs = self.board.cross_set[d][sq + i]
            if one:
                cs &= self.board.cross_set[1 - d][i * dim + lane]
            if cs & usable:
                return True
        return False

    cdef inline uint32_t usable_anchors(self, uint64_t usable) noexcept nogil:
        """The cached lane's anchors from which some play can exist (usable: the tiles the rack can place): an
        empty anchor on which a usable tile fits; a run's last tile when one fits right before or right after
        the run (every play through the run covers one of those squares). Unusable anchors still bound the
        next anchor's left part (no play covers them, so this only prunes)."""
        cdef uint32_t t = self.lane_tiles, fits = 0, left_ok
        cdef int i
        for i in range(self.dim):
            fits |= (<uint32_t> ((self.row_cs[i] & usable) != 0)) << i
        fits &= ~t
        # runs with a usable square before their first tile: adding that first tile's bit carries through
        # the run into the square after its last tile
        left_ok = t & ~(t << 1) & (fits << 1)
        left_ok = ((t + left_ok) & ~t) >> 1
        return self.anchor_bits & ((~t & fits) | (t & (left_ok | (fits >> 1))))

    cdef void gen_lane(self) noexcept nogil:
        cdef int idx
        cdef uint64_t anchors
        cdef uint64_t usable = self.usable_letters()
        cdef uint32_t ok
        if not self.lane_playable(self.dir, self.lane):
            return                  # (search_anchors, the one user of a cached lane, re-caches after dir = -1)
        self.cache_lane(self.dir, self.lane)
        if self.max_tiles < RACK_SIZE:
            self.gen_bingos()
        self.last_anchor_col = -100
        anchors = self.anchor_bits
        ok = self.usable_anchors(usable)
        while anchors != 0:
            idx = ctz64(anchors)
            anchors &= anchors - 1
            if (ok >> idx) & 1:
                self.anchor_col = idx
                self.recursive_gen(idx, self.root, idx, idx, 0, 1, 0)
            self.last_anchor_col = idx

    cdef void shadow_bound(self, int anchor, int last_anchor, equity_t* bound, equity_t* bound2, equity_t* kb,
                           equity_t* kb2) noexcept nogil:
        """Upper bounds on the equity of the plays generated from this anchor (row cache must hold its lane):
        `bound` for plays that use no blank, `bound2` for plays that use one (best_extra / best_extra_b hold
        the leave terms; -inf where no such play can exist).

        Every span [left, right] around the anchor that a play could cover is bounded by pairing the
        rack's highest tile values with the squares' highest coefficients (rearrangement inequality),
        ignoring which letters fit, plus the best leave term for that many tiles played. kb[k] / kb2[k]
        receive the same bounds for the plays of exactly k tiles."""
        cdef int dim = self.dim, n = self.rack_tiles, left, i, j, k, W, fixed, cross_const, capped, x
        cdef int sorted_c[RACK_SIZE + 1]
        cdef int sorted_u[RACK_SIZE + 1]
        cdef int empties[RACK_SIZE + 1]
        cdef int vmax = self.rack_vals[0], u, wm
        cdef int64_t score, unrestricted, sum_c, sum_u
        cdef equity_t eq, best = -2147483647, best2 = -2147483647
        cdef uint64_t usable = self.usable_letters()
        if n > self.max_tiles:
            n = self.max_tiles
        for k in range(RACK_SIZE + 1):
            kb[k] = -2147483647
            kb2[k] = -2147483647
        left = anchor
        while left > last_anchor and left >= 0:
            if self.row_tiles[left] == 0 and (self.row_cs[left] & usable) == 0:
                break
            if left > 0 and self.row_tiles[left - 1] != 0:
                left -= 1
                continue  # a span cannot start right after a tile
            k = 0
            u = 0
            W = 1
            fixed = 0
            cross_const = 0
            capped = 0
            sum_c = 0
            sum_u = 0
            for i in range(left, dim):
                if self.row_tiles[i] != 0:
                    if not (self.row_tiles[i] & 0x80):
                        fixed += self.scores[self.row_tiles[i]]
                else:
                    if (self.row_cs[i] & usable) == 0 or k == n:
                        break
                    wm = self.row_wm[i]
                    if ((self.cross_bits >> i) & 1):
                        cross_const += self.row_csc[i] * wm
                    empties[k] = i
                    k += 1
                    if wm != 1:
                        # the word multiplier changes every square's coefficient: rebuild the lists
                        W *= wm
                        u = 0
                        capped = 0
                        sum_c = 0
                        sum_u = 0
                        for j in range(k):
                            x = empties[j]
                            _shadow_insert(self.row_lm[x] * W + (self.row_lm[x] * self.row_wm[x]
                                                                 if ((self.cross_bits >> x) & 1) else 0),
                                           self.row_cap[x], vmax, j, self.rack_vals, sorted_c, sorted_u, &u,
                                           &capped, &sum_c, &sum_u)
                    else:
                        _shadow_insert(self.row_lm[i] * W + (self.row_lm[i] * wm
                                                             if ((self.cross_bits >> i) & 1) else 0),
                                       self.row_cap[i], vmax, k - 1, self.rack_vals, sorted_c, sorted_u, &u,
                                       &capped, &sum_c, &sum_u)
                if i < anchor or k == 0 or i == left:
                    continue  # a one-square span forms no word in this lane (a one-tile play is a cross play)
                if i < dim - 1 and self.row_tiles[i + 1] != 0:
                    continue  # a span cannot end right before a tile
                # the letters' contribution is at most the rack's highest values paired with the highest
                # coefficients (sorted_c); and at most the squares whose cross-set excludes the rack's best
                # tile taken at the best letter they admit (capped) plus the rest paired (sorted_u)
                score = sum_c
                unrestricted = capped + sum_u
                if unrestricted < score:
                    score = unrestricted
                score += <int64_t> fixed * W + cross_const
                if k == RACK_SIZE:
                    score += self.bingo_bonus
                eq = <equity_t> (score * self.shadow_scale)
                if self.best_extra[k] > -2147483647 and eq + self.best_extra[k] > kb[k]:
                    kb[k] = eq + self.best_extra[k]
                if self.best_extra_b[k] > -2147483647 and eq + self.best_extra_b[k] > kb2[k]:
                    kb2[k] = eq + self.best_extra_b[k]
            left -= 1
        for k in range(RACK_SIZE + 1):
            if kb[k] > best:
                best = kb[k]
            if kb2[k] > best2:
                best2 = kb2[k]
        bound[0] = best
        bound2[0] = best2

    cdef void gen_best_shadow(self) noexcept nogil:
        """Best-move generation. With a full rack and a usable word map, every 7-tile play comes from the
        word map first and the GADDAG search places at most 6 tiles. Anchors are then bounded by
        shadow_bound and searched best bound first, skipped once the bound falls below the best move found
        (ties are still searched for the tie-break). With a blank on the rack the search runs twice: first
        the plays that keep every blank (the blank held back, which prunes most of the tree), then the
        plays that use one, bounded by the leaves without it."""
        cdef int d, lane, idx, last, n_anchors = 0, a, nb = self.rack[0], ml
        cdef uint64_t anchors
        cdef uint32_t ok
        cdef AnchorBound* anc = self.anchors
        cdef bint bingos = self.begin_bingos()
        cdef equity_t b1, b2
        cdef int by_value[MAX_ALPHABET]     # the rack's letters (not the blank), highest value first
        cdef uint64_t tier_mask[RACK_SIZE]  # ... grouped by value: the letters of each value, highest first
        cdef int tier_val[RACK_SIZE]
        cdef int n_by_value, t, n_tiers = 0
        cdef uint64_t usable = self.usable_letters(), cs
        self.prepare_shadow()
        n_by_value = _letters_by_value(self.rack, self.scores, 1, self.ld.size, by_value)
        for t in range(n_by_value):
            if n_tiers == 0 or tier_val[n_tiers - 1] != self.scores[by_value[t]]:
                tier_val[n_tiers] = self.scores[by_value[t]]
                tier_mask[n_tiers] = 0
                n_tiers += 1
            tier_mask[n_tiers - 1] |= (<uint64_t> 1) << by_value[t]
        for d in range(2):
            if self.board_empty and d == 1 and not self.board.open_down:
                break
            for lane in range(self.dim):
                if self.lane_filter != NULL and not self.lane_filter[d * MAX_BOARD_DIM + lane]:
                    continue
                if not self.lane_playable(d, lane):
                    continue
                self.cache_lane(d, lane)
                if bingos:
                    self.gen_bingos()
                for idx in range(self.dim):
                    # the highest value of a rack letter (not the blank) the square accepts
                    self.row_cap[idx] = 0
                    if self.row_tiles[idx] == 0:
                        cs = self.row_cs[idx]
                        for t in range(n_tiers):
                            if cs & tier_mask[t]:
                                self.row_cap[idx] = tier_val[t]
                                break
                last = -100
                anchors = self.anchor_bits
                ok = self.usable_anchors(usable)
                while anchors != 0:
                    idx = ctz64(anchors)
                    anchors &= anchors - 1
                    if (ok >> idx) & 1:
                        self.shadow_bound(idx, last, &b1, &b2, &self.anchor_kb[n_anchors][0],
                                          &self.anchor_kb2[n_anchors][0])
                        if b1 > -2147483647 or b2 > -2147483647:
                            anc[n_anchors].dir = d
                            anc[n_anchors].lane = lane
                            anc[n_anchors].col = idx
                            anc[n_anchors].last = last
                            anc[n_anchors].bound = b1
                            anc[n_anchors].bound2 = b2
                            anc[n_anchors].id = n_anchors
                            n_anchors += 1
                    last = idx
        self.dir = -1
        self.kb_blank_pass = False
        if nb > 0 and self.record_mode != RECORD_EG_BEST:
            # plays that keep the blanks: search with them held back (the leave masks still count them).
            # (Not for RECORD_EG_BEST: its value does not depend on the blank, and one pass keeps the order
            # of its plays within an anchor, which breaks its ties, the full generation's.)
            self.rack[0] = 0
            self.rack_tiles -= nb
            self.search_anchors(n_anchors)
            self.rack[0] = nb
            self.rack_tiles += nb
            for a in range(n_anchors):
                anc[a].bound = anc[a].bound2
            self.kb_blank_pass = True
        self.search_anchors(n_anchors)

    cdef inline bint eg_bounds_fit(self) noexcept nogil:
        """Whether RECORD_EG_BEST's value can be bounded by shadow_bound: a positive multiplier, a face-value
        term that only subtracts, and terms small enough for the bounds' 32-bit arithmetic."""
        return 0 < self.eg_mul <= 65536 and 0 <= self.eg_face_pen and -(1 << 24) < self.eg_out < (1 << 24) \
            and -(1 << 20) < self.eg_tile_pen < (1 << 20)

    cdef inline int64_t shadow_best(self) noexcept nogil:
        """The value of the best play so far, in the shadow bounds' unit (when has_best)."""
        if self.record_mode == RECORD_EG_BEST:
            return self.eg_best_value
        return self.best.equity

    cdef void search_anchors(self, int n_anchors) noexcept nogil:
        """Search the anchors best `bound` first while the bound can still reach the best move."""
        cdef AnchorBound* anc = self.anchors
        cdef AnchorBound top
        cdef int a, n = n_anchors, k, saved_max = self.max_tiles
        cdef const equity_t* kb
        # a binary heap in _anchor_cmp order (a total order, so anchors come out exactly as a full sort would
        # give them), popped lazily: the search usually stops long before the last anchor; popping swaps the
        # top to the end, so every entry stays in the array for the blank pass
        for a in range(n // 2 - 1, -1, -1):
            _anchor_sift(anc, a, n)
        while n > 0:
            top = anc[0]
            if top.bound == -2147483647 or (self.has_best and top.bound < self.shadow_best()):
                break
            n -= 1
            anc[0] = anc[n]
            anc[n] = top
            _anchor_sift(anc, 0, n)
            if top.dir != self.dir or top.lane != self.lane:
                self.cache_lane(top.dir, top.lane)
            self.anchor_col = top.col
            self.last_anchor_col = top.last
            # no play of more tiles than the largest count whose bound still reaches the best move
            k = saved_max
            if self.has_best:
                kb = &self.anchor_kb2[top.id][0] if self.kb_blank_pass else &self.anchor_kb[top.id][0]
                while k > 0 and kb[k] < self.shadow_best():
                    k -= 1
            self.max_tiles = k
            self.recursive_gen(top.col, self.root, top.col, top.col, 0, 1, 0)
            self.max_tiles = saved_max
            if self.record_mode == RECORD_EG_BEST and self.eg_found and self.eg_best_value >= self.eg_stop_value:
                break

    cdef void prepare_shadow(self) noexcept nogil:
        """Rack values sorted descending and the best leave term for each number of tiles played, for plays
        that keep every blank (best_extra) and plays that use one (best_extra_b), up to max_tiles."""
        cdef int ml, i, j, n = 0, k, tmp, kept, nb = self.rack[0], kept_blanks
        cdef int size = self.ld.size
        cdef equity_t e
        for ml in range(size):
            for i in range(self.rack[ml]):
                self.rack_vals[n] = self.scores[ml] if ml != 0 else 0
                j = n
                while j > 0 and self.rack_vals[j - 1] < self.rack_vals[j]:
                    tmp = self.rack_vals[j - 1]
                    self.rack_vals[j - 1] = self.rack_vals[j]
                    self.rack_vals[j] = tmp
                    j -= 1
                n += 1
        for k in range(RACK_SIZE + 1):
            self.best_extra[k] = -2147483647
            self.best_extra_b[k] = -2147483647
        if self.record_mode == RECORD_EG_BEST:
            # score * eg_mul, + eg_out going out, - eg_tile_pen per tile (- a face-value term, at most 0)
            self.shadow_scale = <int> self.eg_mul
            for k in range(1, min(n, self.max_tiles) + 1):
                e = <equity_t> (-self.eg_tile_pen * k + (self.eg_out if k == n else 0))
                self.best_extra[k] = e
                self.best_extra_b[k] = e
            return
        self.shadow_scale = EQUITY_SCALE
        for i in range(self.n_sub_masks):   # every kept sub-multiset (prepare_leaves listed them)
            kept = self.sub_sizes[i]
            if n - kept == 0 or n - kept > self.max_tiles:
                continue
            e = self.equity_for(0, n - kept, self.sub_masks[i])
            # blanks are machine letter 0: their instance bits are the mask's lowest nb bits
            kept_blanks = popcount64(self.sub_masks[i] & ((1 << nb) - 1))
            if kept_blanks == nb:
                if e > self.best_extra[n - kept]:
                    self.best_extra[n - kept] = e
            elif e > self.best_extra_b[n - kept]:
                self.best_extra_b[n - kept] = e

    # ------------------------------------------------------------ the empty board from the short word map

    cdef bint gen_opening(self) noexcept nogil:
        """Empty board (best, all and top modes): every play is a word of 2..RACK_SIZE rack tiles through the
        start square along its row, so each sub-multiset of the rack (opening_dfs lists them) is looked up in
        the short word map, once per naming of the blanks it plays, and its words
        are placed at every start that covers the start square. In best mode the sub-multisets go best upper
        bound first (their tile values against the highest letter multipliers a span of that length reaches,
        times its highest word multiplier, plus the leave term) and the search stops once the bound falls
        below the best move so far (equal bounds are still searched, for the tie-break). Returns False (nothing
        done) when this path does not apply."""
        cdef int dim = self.dim, sc = self.board.start_col, size = self.ld.size
        cdef int i, j, t, k, s, ml, c1, c2, first, last, n_cand
        cdef int span_lm[RACK_SIZE]
        cdef int w
        cdef equity_t bound[128]
        cdef uint8_t heap[128]
        cdef uint64_t k0, k1, a0, a1, b0, b1
        cdef uint8_t mask
        cdef bint best = self.record_mode == RECORD_BEST
        cdef const WmSlot* slot
        cdef OpenCand* cand
        if self.short_map is None or not self.use_opening_map or not self.use_word_map or dim > 32 or \
                self.board.open_down or \
                self.rack[0] > 2 or \
                not (best or self.record_mode == RECORD_ALL or self.record_mode == RECORD_TOP_N):
            return False
        self.max_tiles = RACK_SIZE
        self.cache_lane(0, self.board.start_row)
        # per play length: the highest word multiplier of a span through the start square, and the
        # elementwise highest of its letter multipliers sorted descending (kept while the start row's
        # premiums and start square stay the same)
        if self.op_key_dim == dim and self.op_key_sc == sc and \
                memcmp(self.op_key_lm, self.row_lm, dim) == 0 and memcmp(self.op_key_wm, self.row_wm, dim) == 0:
            k = RACK_SIZE + 1      # (skips the loop)
        else:
            k = 2
            self.op_key_dim = dim
            self.op_key_sc = sc
            memcpy(self.op_key_lm, self.row_lm, dim)
            memcpy(self.op_key_wm, self.row_wm, dim)
        while k <= RACK_SIZE:
            self.op_w[k] = 0
            for j in range(RACK_SIZE):
                self.op_lm[k][j] = 0
            for s in range(max(0, sc - k + 1), min(sc, dim - k) + 1):
                w = 1
                for j in range(k):
                    w *= self.row_wm[s + j]
                    t = j
                    while t > 0 and span_lm[t - 1] < self.row_lm[s + j]:
                        span_lm[t] = span_lm[t - 1]
                        t -= 1
                    span_lm[t] = self.row_lm[s + j]
                if w > self.op_w[k]:
                    self.op_w[k] = w
                for j in range(k):
                    if span_lm[j] > self.op_lm[k][j]:
                        self.op_lm[k][j] = span_lm[j]
            k += 1
        # the rack's letters, highest value first (so the played values come out sorted)
        self.op_n_letters = _letters_by_value(self.rack, self.scores, 0, size, self.op_letters)
        self.op_n = 0
        self.opening_dfs(0, 0, 0, 0, 0, 0, 0)
        n_cand = self.op_n
        for i in range(n_cand):
            bound[i] = self.op_cand[i].bound
            heap[i] = <uint8_t> i
        if best:
            for j in range(n_cand // 2 - 1, -1, -1):
                _heap_sift(bound, heap, j, n_cand)
        while n_cand > 0:
            if best:
                i = heap[0]
                if self.has_best and bound[i] < self.best.equity:
                    break
                n_cand -= 1
                heap[0] = heap[n_cand]
                _heap_sift(bound, heap, 0, n_cand)
            else:
                n_cand -= 1
                i = heap[n_cand]
            cand = &self.op_cand[i]
            mask = cand.mask
            k = cand.k
            first = max(0, sc - k + 1)
            last = min(sc, dim - k)
            if cand.nb == 0:
                slot = self.short_map.find(cand.k0, cand.k1)
                if slot != NULL:
                    self.opening_words(slot, k, 0, 0, mask, first, last)
                continue
            for c1 in range(1, size):
                a0 = cand.k0
                a1 = cand.k1
                wm_add(&a0, &a1, c1)
                if cand.nb == 1:
                    slot = self.short_map.find(a0, a1)
                    if slot != NULL:
                        self.opening_words(slot, k, c1, 0, mask, first, last)
                    continue
                for c2 in range(c1, size):
                    b0 = a0
                    b1 = a1
                    wm_add(&b0, &b1, c2)
                    slot = self.short_map.find(b0, b1)
                    if slot != NULL:
                        self.opening_words(slot, k, c1, c2, mask, first, last)
        return True

    cdef void opening_dfs(self, int t, int k, int nvals, uint8_t mask, uint64_t k0, uint64_t k1,
                          int nb) noexcept nogil:
        """gen_opening's candidates: every way to play c copies of each rack letter (letters op_letters[t:]),
        with k tiles played so far, their values in op_vals[:nvals] (descending), kept mask, key and blanks."""
        cdef int ml, r, c, j
        cdef int64_t score
        cdef OpenCand* cand
        if t == self.op_n_letters:
            if k < 2:
                return
            score = 0
            for j in range(nvals):
                score += self.op_vals[j] * self.op_lm[k][j]
            score *= self.op_w[k]
            if k == RACK_SIZE:
                score += self.bingo_bonus
            cand = &self.op_cand[self.op_n]
            self.op_n += 1
            cand.bound = <equity_t> (score * EQUITY_SCALE) + self.equity_for(0, k, mask)
            cand.k0 = k0
            cand.k1 = k1
            cand.mask = mask
            cand.k = <uint8_t> k
            cand.nb = <uint8_t> nb
            return
        ml = self.op_letters[t]
        r = self.rack[ml]
        for c in range(r + 1):
            # c copies played, r - c kept (the lowest bits of the letter's block: the canonical mask)
            self.opening_dfs(t + 1, k + c, nvals if ml == 0 else nvals + c,
                             mask | <uint8_t> (((1 << (r - c)) - 1) << self.first_bit[ml]), k0, k1,
                             c if ml == 0 else nb)
            if ml != 0 and c < r:
                self.op_vals[nvals + c] = self.scores[ml]
                wm_add(&k0, &k1, ml)

    cdef void opening_words(self, const WmSlot* s, int k, int c1, int c2, uint8_t mask, int first,
                            int last) noexcept nogil:
        """Record every word of class s (k letters) at each start first..last of the cached start row, the
        played multiset leaving `mask`; c1 / c2 (0: none) are the letters the played blanks stand for (at most two), put on
        every choice of copies of them."""
        cdef int w, j, j2, sq, sq2, st, main, W, score, b
        cdef const uint8_t* word
        cdef ml_t x
        cdef bint ok
        cdef uint8_t saved_mask = self.cur_mask
        self.tiles_played = k
        self.cur_mask = mask
        for w in range(<int> s.count):
            word = &self.short_map.letters[s.start + w * k]
            for st in range(first, last + 1):
                ok = True
                main = 0
                W = 1
                for j in range(k):
                    sq = st + j
                    x = word[j]
                    if not ((self.row_cs[sq] >> x) & 1):
                        ok = False
                        break
                    main += self.scores[x] * self.row_lm[sq]
                    W *= self.row_wm[sq]
                    self.strip[sq] = x
                if not ok:
                    continue
                score = main * W
                if k == RACK_SIZE:
                    score += self.bingo_bonus
                if c1 == 0:
                    self.record_place(st, st + k - 1, score)
                    continue
                for j in range(k):
                    if word[j] != c1:
                        continue
                    sq = st + j
                    b = score - self.scores[c1] * self.row_lm[sq] * W
                    self.strip[sq] = <ml_t> (c1 | 0x80)
                    if c2 == 0:
                        self.record_place(st, st + k - 1, b)
                    else:
                        for j2 in range(j + 1 if c2 == c1 else 0, k):
                            if word[j2] != c2 or j2 == j:
                                continue
                            sq2 = st + j2
                            self.strip[sq2] = <ml_t> (c2 | 0x80)
                            self.record_place(st, st + k - 1, b - self.scores[c2] * self.row_lm[sq2] * W)
                            self.strip[sq2] = <ml_t> c2
                    self.strip[sq] = <ml_t> c1
        self.tiles_played = 0
        self.cur_mask = saved_mask

    # ------------------------------------------------------------ 7-tile plays from the word map

    cdef bint begin_bingos(self) noexcept nogil:
        """Set up a generation: with a full rack and a usable word map the 7-tile plays come from the word
        map (gen_bingos, called per lane) and the GADDAG search stops at 6 tiles (max_tiles)."""
        cdef int ml, k
        self.max_tiles = RACK_SIZE
        if not (self.use_word_map and self.wmap is not None and self.dim <= 15 and self.rack_tiles == RACK_SIZE
                and self.rack[0] <= 2):   # (blanks are named by at most two nested loops)
            return False
        self.max_tiles = RACK_SIZE - 1
        self.bc_n = 0
        self.bp_n = 0
        self.rack_k0 = 0
        self.rack_k1 = 0
        for ml in range(1, self.ld.size):
            for k in range(self.rack[ml]):
                wm_add(&self.rack_k0, &self.rack_k1, ml)
        return True

    cdef void gen_bingos(self) noexcept nogil:
        """Every 7-tile play in the cached lane: each span of seven empty squares (with the tiles it plays
        through) that touches the board, looked up as rack + through letters in the word map."""
        cdef int dim = self.dim, left = 0, i, k, e
        cdef uint64_t k0, k1, usable = self.usable_letters()
        cdef bint touches
        cdef ml_t t
        self.anchor_col = -1       # (the order key of RECORD_EG_BEST: a lane's 7-tile plays come first)
        while left < dim:
            if left > 0 and self.row_tiles[left - 1] != 0:
                left += 1
                continue
            k = 0
            k0 = self.rack_k0
            k1 = self.rack_k1
            touches = False
            i = left
            while i < dim:
                t = self.row_tiles[i]
                if t != 0:
                    wm_add(&k0, &k1, t & 0x7F)
                    touches = True
                else:
                    if k == RACK_SIZE or (self.row_cs[i] & usable) == 0:
                        break
                    if ((self.cross_bits >> i) & 1):
                        touches = True
                    k += 1
                i += 1
            if k < RACK_SIZE:
                if i >= dim:
                    return          # too few squares left in the lane
                left = i + 1        # square i takes no rack letter: no span can cover it
                continue
            if self.board_empty:
                touches = (self.dir == 0 and self.lane == self.board.start_row and
                           left <= self.board.start_col < i) or \
                    (self.dir == 1 and self.lane == self.board.start_col and self.board.open_down and
                     left <= self.board.start_row < i)
            if touches:
                e = self.bingo_classes(k0, k1)
                if self.bc_count[e] > 0:
                    self.place_bingos(left, i - 1, e)
            left += 1

    cdef int bingo_classes(self, uint64_t k0, uint64_t k1) noexcept nogil:
        """Cache entry (bc_*) listing the word-map classes of this multiset with each way to name the rack's
        blanks (bp_slot / bp_blank), looked up once per generation."""
        cdef int e, c1, c2, size = self.ld.size, nb = self.rack[0]
        cdef uint64_t a0, a1, b0, b1
        cdef const WmSlot* s
        for e in range(self.bc_n):
            if self.bc_k0[e] == k0 and self.bc_k1[e] == k1:
                return e
        if self.bc_n == BINGO_KEYS or self.bp_n + size * size > BINGO_POOL:
            self.bc_n = 0
            self.bp_n = 0
        e = self.bc_n
        self.bc_n += 1
        self.bc_k0[e] = k0
        self.bc_k1[e] = k1
        self.bc_start[e] = self.bp_n
        if nb == 0:
            s = self.wmap.find(k0, k1)
            if s != NULL:
                self.bp_slot[self.bp_n] = s
                self.bp_blank[self.bp_n][0] = 0
                self.bp_blank[self.bp_n][1] = 0
                self.bp_n += 1
        else:
            for c1 in range(1, size):
                a0 = k0
                a1 = k1
                wm_add(&a0, &a1, c1)
                if nb == 1:
                    s = self.wmap.find(a0, a1)
                    if s != NULL:
                        self.bp_slot[self.bp_n] = s
                        self.bp_blank[self.bp_n][0] = <uint8_t> c1
                        self.bp_blank[self.bp_n][1] = 0
                        self.bp_n += 1
                    continue
                for c2 in range(c1, size):
                    b0 = a0
                    b1 = a1
                    wm_add(&b0, &b1, c2)
                    s = self.wmap.find(b0, b1)
                    if s != NULL:
                        self.bp_slot[self.bp_n] = s
                        self.bp_blank[self.bp_n][0] = <uint8_t> c1
                        self.bp_blank[self.bp_n][1] = <uint8_t> c2
                        self.bp_n += 1
        self.bc_count[e] = self.bp_n - self.bc_start[e]
        return e

    cdef void place_bingos(self, int left, int right, int e) noexcept nogil:
        """Record every word of cache entry e that fits the span: the through tiles match and each new
        letter is in its square's cross-set; every choice of which copies the blanks stand for."""
        cdef int q, w, j, sq, L = right - left + 1, main, W, cross, val, c1, c2, j2, score
        cdef const WmSlot* s
        cdef const uint8_t* word
        cdef ml_t t, x
        cdef bint ok
        for q in range(self.bc_start[e], self.bc_start[e] + self.bc_count[e]):
            s = self.bp_slot[q]
            c1 = self.bp_blank[q][0]
            c2 = self.bp_blank[q][1]
            for w in range(<int> s.count):
                word = &self.wmap.letters[s.start + w * L]
                ok = True
                main = 0
                W = 1
                cross = 0
                for j in range(L):
                    sq = left + j
                    x = word[j]
                    t = self.row_tiles[sq]
                    if t != 0:
                        if (t & 0x7F) != x:
                            ok = False
                            break
                        if not (t & 0x80):
                            main += self.scores[x]
                    else:
                        if not ((self.row_cs[sq] >> x) & 1):
                            ok = False
                            break
                        val = self.scores[x] * self.row_lm[sq]
                        main += val
                        W *= self.row_wm[sq]
                        if ((self.cross_bits >> sq) & 1):
                            cross += (self.row_csc[sq] + val) * self.row_wm[sq]
                if not ok:
                    continue
                score = main * W + cross + self.bingo_bonus
                if c1 == 0:
                    self.record_bingo(left, right, word, score, W, -1, -1)
                    continue
                for j in range(L):
                    if word[j] != c1 or self.row_tiles[left + j] != 0:
                        continue
                    if c2 == 0:
                        self.record_bingo(left, right, word, score, W, j, -1)
                        continue
                    for j2 in range(j + 1 if c2 == c1 else 0, L):
                        if word[j2] == c2 and j2 != j and self.row_tiles[left + j2] == 0:
                            self.record_bingo(left, right, word, score, W, j, j2)

    cdef void record_bingo(self, int left, int right, const uint8_t* word, int score, int W, int b1,
                           int b2) noexcept nogil:
        """Record one 7-tile play: word over [left, right], blanks at word positions b1 and b2 (-1: none)."""
        cdef int j, sq, b, saved_played = self.tiles_played
        cdef uint8_t saved_mask = self.cur_mask
        for j in range(right - left + 1):
            sq = left + j
            self.strip[sq] = 0 if self.row_tiles[sq] != 0 else word[j]
        for j in range(2):
            b = b1 if j == 0 else b2
            if b >= 0:
                sq = left + b
                self.strip[sq] = word[b] | 0x80
                score -= self.scores[word[b]] * self.row_lm[sq] * \
                    (W + (self.row_wm[sq] if ((self.cross_bits >> sq) & 1) else 0))
        self.tiles_played = RACK_SIZE
        self.cur_mask = 0
        self.record_place(left, right, score)
        self.tiles_played = saved_played
        self.cur_mask = saved_mask

    cdef void exchanges(self) noexcept nogil:
        """Every exchange (a kept sub-multiset other than the whole rack, as prepare_leaves listed them),
        exchanged tiles in letter order; in best mode only those whose equity can still win are built."""
        cdef int i, ml, k, n_exch, kept
        cdef uint8_t mask
        cdef equity_t eq, top = -2147483647
        cdef Move m
        cdef bint best = self.record_mode == RECORD_BEST
        if best:
            # only the exchanges of the highest equity can be the best move: find it first
            for i in range(self.n_sub_masks):
                n_exch = self.rack_tiles - self.sub_sizes[i]
                if n_exch != 0:
                    eq = self.equity_for(0, n_exch, self.sub_masks[i])
                    if eq > top:
                        top = eq
        for i in range(self.n_sub_masks):
            mask = self.sub_masks[i]
            n_exch = self.rack_tiles - self.sub_sizes[i]
            if n_exch == 0:
                continue
            self.n_exchanges += 1
            eq = self.equity_for(0, n_exch, mask)
            if best and (eq < top or (self.has_best and eq < self.best.equity)):
                continue
            m.kind = MOVE_EXCHANGE
            m.score = 0
            m.row = 0
            m.col = 0
            m.vertical = 0
            m.length = <uint8_t> n_exch
            m.n_tiles = <uint8_t> n_exch
            m.leave_mask = mask
            m.equity = eq
            n_exch = 0
            for ml in range(self.ld.size):
                kept = popcount64((mask >> self.first_bit[ml]) & ((1 << self.rack[ml]) - 1))
                for k in range(self.rack[ml] - kept):
                    m.tiles[n_exch] = <ml_t> ml
                    n_exch += 1
            self.record(&m)

    cdef int generate_c(self) except -1 nogil:
        cdef int d, lane
        self.n_moves = 0
        self.has_best = False
        self.eg_found = False
        self.uses_mask = 0
        self.uses_done = False
        if self.record_mode == RECORD_EG_BEST and self.eg_seeded:
            self.has_best = True
            self.eg_best_value = self.eg_seed_value
            self.eg_best_key = self.eg_seed_key
        self.n_placements = 0
        self.n_exchanges = 0
        self.n_passes = 0
        self.tiles_played = 0
        self.prepare_leaves()
        self.board_empty = self.board.n_tiles == 0
        if self.bag_tiles >= RACK_SIZE and self.rack_tiles > 0:
            self.exchanges()
        if self.rack_tiles > 0 and self.board_empty and self.gen_opening():
            pass
        elif self.rack_tiles > 0 and ((self.record_mode == RECORD_BEST and self.use_shadow) or
                                      (self.record_mode == RECORD_EG_BEST and self.eg_shadow and
                                       self.eg_bounds_fit())):
            self.gen_best_shadow()
        elif self.rack_tiles > 0:
            self.begin_bingos()
            for d in range(2):
                if self.board_empty and d == 1 and not self.board.open_down:
                    break
                self.dir = d
                for lane in range(self.dim):
                    self.lane = lane
                    self.gen_lane()
                    if self.uses_done:
                        break
                if self.uses_done:
                    break
        if self.uses_done:
            self.max_tiles = RACK_SIZE
            self.uses_done = False
        self.record_pass()
        if (self.record_mode == RECORD_BEST and self.has_best) or (self.record_mode == RECORD_EG_BEST and self.eg_found):
            self.move_buf[0] = self.best
            self.n_moves = 1
        elif self.n_moves > 1 and self.do_sort and self.record_mode != RECORD_SMALL:
            qsort(self.move_buf, self.n_moves, sizeof(Move), _qsort_cmp)
        return 0

    cdef void record_pass(self) noexcept nogil:
        cdef Move m
        self.n_passes = 1
        m.kind = MOVE_PASS
        m.score = 0
        m.row = 0
        m.col = 0
        m.vertical = 0
        m.length = 0
        m.n_tiles = 0
        m.leave_mask = self.cur_mask
        m.equity = self.equity_for(0, 0, self.cur_mask)
        self.record(&m)

    cdef void begin_best(self, const uint8_t* rack, int bag_tiles) noexcept nogil:
        """Set up a best-move search of `rack` with a positive bag (lane_bests, seeded_best)."""
        self.set_rack_c(rack)
        self.bag_tiles = bag_tiles
        self.opp_rack_value = -1
        self.record_mode = RECORD_BEST
        self.n_moves = 0
        self.tiles_played = 0
        self.prepare_leaves()
        self.board_empty = self.board.n_tiles == 0

    cdef int lane_bests(self, const uint8_t* rack, int bag_tiles, const uint8_t* lanes, Move* out,
                        uint8_t* has) except -1 nogil:
        """The best placement (move_cmp order) in each lane flagged in lanes[d * MAX_BOARD_DIM + lane], into
        out/has at the same index; no exchanges or pass. With a positive bag the equity of a placement
        depends only on the rack and its own lane, so a search that changes a few lanes of the board can
        reuse the other lanes' results (the simulation's first reply to each candidate does)."""
        cdef int d, lane, idx
        self.begin_best(rack, bag_tiles)
        self.begin_bingos()
        for d in range(2):
            for lane in range(self.dim):
                idx = d * MAX_BOARD_DIM + lane
                if not lanes[idx]:
                    continue
                has[idx] = 0
                if self.rack_tiles == 0 or (self.board_empty and d == 1 and not self.board.open_down):
                    continue
                self.has_best = False
                self.dir = d
                self.lane = lane
                self.gen_lane()
                if self.has_best:
                    out[idx] = self.best
                    has[idx] = 1
        return 0

    cdef int seeded_best(self, const uint8_t* rack, int bag_tiles, const uint8_t* lanes, const Move* seed,
                         Move* best) except -1 nogil:
        """The best move of `rack` given `seed` (the best placement elsewhere, or NULL): the exchanges and
        the pass, then the placements of the flagged lanes, their anchors searched by shadow bound while
        they can still beat the best so far."""
        self.begin_best(rack, bag_tiles)
        self.has_best = seed != NULL
        if seed != NULL:
            self.best = seed[0]
        if self.bag_tiles >= RACK_SIZE and self.rack_tiles > 0:
            self.exchanges()
        self.record_pass()
        if self.rack_tiles > 0 and not self.board_empty:
            self.lane_filter = lanes
            self.gen_best_shadow()
            self.lane_filter = NULL
        best[0] = self.best
        return 0

    cdef void set_rack_c(self, const uint8_t* rack) noexcept nogil:
        cdef int ml, size = self.ld.size
        self.rack_tiles = 0
        self.rack_bits = 0
        for ml in range(MAX_ALPHABET):
            self.rack[ml] = rack[ml] if ml < size else 0
            self.rack_tiles += self.rack[ml]
            if ml > 0 and self.rack[ml] > 0:
                self.rack_bits |= (<uint64_t> 1) << ml

    def bind(self, Board board):
        """Attach the board that gen_c generates on (the search modules bind their game's board once)."""
        self.board = board
        self.dim = board.dim

    cdef void tile_uses(self, int* uses) noexcept nogil:
        """After a 'small' generation: uses[ml] = how many of the placements use a tile of machine letter ml (a
        designated blank counts as the blank, 0); uses must hold MAX_ALPHABET ints, set to zero here."""
        cdef uint64_t mv, code
        cdef int i, slot
        memset(uses, 0, MAX_ALPHABET * sizeof(int))
        for i in range(self.n_moves):
            mv = self.small_buf[i]
            if packed_kind(mv) != MOVE_PLACE:
                continue
            for slot in range(RACK_SIZE):
                code = (mv >> (13 + 7 * slot)) & 0x7F
                if code == 0:
                    break
                uses[0 if (code & 0x40) else <int> (code & 0x3F)] += 1

    cdef void set_eg_value(self, int64_t mul, int64_t out, int64_t tile_pen, int64_t face_pen) noexcept nogil:
        """The value RECORD_EG_BEST maximises: score * mul, + out for a play that uses the whole rack, - tile_pen
        per tile placed, - face_pen per point of face value placed (blanks 0)."""
        self.eg_mul = mul
        self.eg_out = out
        self.eg_tile_pen = tile_pen
        self.eg_face_pen = face_pen

    cdef int gen_c(self, const uint8_t* rack, int bag_tiles, int opp_rack_value, int mode, int n,
                   bint sort) except -1 nogil:
        """C entry point for the search modules: rack as counts by machine letter, on the bound board,
        whose cross-sets must be valid."""
        self.set_rack_c(rack)
        self.bag_tiles = bag_tiles
        self.opp_rack_value = opp_rack_value
        self.record_mode = mode
        self.top_n = n
        self.do_sort = sort
        return self.generate_c()

    # ------------------------------------------------------------ Python API

    cdef int rack_counts(self, rack, uint8_t* counts) except -1:
        """A Python rack (machine letters, 0 = blank) as counts by machine letter, checked."""
        cdef int ml
        if len(rack) > RACK_SIZE:
            raise ValueError(f"a rack holds at most {RACK_SIZE} tiles")
        memset(counts, 0, MAX_ALPHABET * sizeof(uint8_t))
        for t in rack:
            ml = t
            if ml < 0 or ml >= self.ld.size:
                raise ValueError(f"rack tile {ml} is not in the alphabet")
            counts[ml] += 1
        return 0

    def generate(self, Board board, rack, int bag_tiles, opp_rack=None, str mode="all", int n=0,
                 bint sort=True):
        """Generate for `rack` (machine letters, 0 = blank). bag_tiles: tiles in the bag as the mover sees it.
        opp_rack: the opponent's tiles when known (bag-empty equity). mode: 'all', 'best' or 'top' (n).

        sort=False leaves 'all' and 'top' results unordered (cheaper when order is not needed).
        Returns the number of moves held; read them with moves()."""
        cdef int record_mode, opp_value
        cdef uint8_t counts[MAX_ALPHABET]
        self.rack_counts(rack, counts)
        modes = {"all": RECORD_ALL, "best": RECORD_BEST, "small": RECORD_SMALL, "top": RECORD_TOP_N}
        if mode not in modes:
            raise ValueError(f"unknown record mode {mode!r}")
        if mode == "top" and n <= 0:
            raise ValueError("top mode needs n > 0")
        record_mode = modes[mode]
        opp_value = -1 if opp_rack is None else sum(self.scores[t] for t in opp_rack)
        if not board.cross_valid:
            _compute_cross_sets(board, self.kwg, self.ld)
        self.bind(board)
        with nogil:
            self.gen_c(counts, bag_tiles, opp_value, record_mode, n, sort)
        return self.n_moves

    def eg_best(self, Board board, rack, int opp_rack_value, long mul, long out=0, long tile_pen=0,
                long face_pen=0, bint shadow=True):
        """The endgame searcher's best placement (RECORD_EG_BEST, empty bag): the first in generation order of
        highest value, score * mul, + out when it uses the whole rack, - tile_pen per tile, - face_pen per point
        of face value placed. shadow: find it best bound first (the same play). Returns (move tuple as
        moves() gives it, value), or None when no placement exists."""
        cdef uint8_t counts[MAX_ALPHABET]
        self.rack_counts(rack, counts)
        if not board.cross_valid:
            _compute_cross_sets(board, self.kwg, self.ld)
        self.bind(board)
        self.set_eg_value(mul, out, tile_pen, face_pen)
        saved = self.eg_shadow
        self.eg_shadow = shadow
        try:
            with nogil:
                self.gen_c(counts, 0, opp_rack_value, RECORD_EG_BEST, 0, False)
        finally:
            self.eg_shadow = saved
        if self.n_moves == 0:
            return None
        return self.moves()[0], self.eg_best_value

    cdef uint64_t letters_used(self, const uint8_t* rack, uint64_t need, int min_uses) noexcept nogil:
        """The letters of `need` (bit ml; bit 0 a blank, whatever it stands for) that at least min_uses tiles of
        the legal placements of `rack` use, counting each placed tile (RECORD_USES: the search stops once all
        of `need` is seen; the bound board's cross-sets must be valid)."""
        self.uses_need = need
        self.uses_min = min_uses if min_uses > 1 else 1
        memset(self.uses_cnt, 0, sizeof(self.uses_cnt))
        self.gen_c(rack, 0, -1, RECORD_USES, 0, False)
        return self.uses_mask & need

    def used_letters(self, Board board, rack, letters, int min_uses=1):
        """Which of `letters` (machine letters; 0 = a blank, whatever it stands for) at least `min_uses` placed
        tiles of the legal placements of `rack` on `board` use (the search stops once it has seen all of
        them). Returns a set."""
        cdef uint8_t counts[MAX_ALPHABET]
        cdef uint64_t need = 0, used
        self.rack_counts(rack, counts)
        for ml in letters:
            if not 0 <= ml < self.ld.size:
                raise ValueError(f"letter {ml} is not in the alphabet")
            need |= (<uint64_t> 1) << <int> ml
        if not board.cross_valid:
            _compute_cross_sets(board, self.kwg, self.ld)
        self.bind(board)
        with nogil:
            used = self.letters_used(counts, need, min_uses)
        return {ml for ml in letters if (used >> <int> ml) & 1}

    def packed_moves(self):
        """After a 'small' generation: (packed uint64, score int32, equity int32 millipoints) numpy arrays."""
        import numpy as np
        if self.record_mode != RECORD_SMALL:
            raise ValueError("packed_moves needs a generation with mode='small'")
        n = self.n_moves
        packed = np.empty(n, dtype=np.uint64)
        scores = np.empty(n, dtype=np.int32)
        equities = np.empty(n, dtype=np.int32)
        cdef int i
        for i in range(n):
            packed[i] = self.small_buf[i]
            scores[i] = self.small_score[i]
            equities[i] = self.small_equity[i]
        return packed, scores, equities

    def counts(self):
        """(placements, exchanges, passes) over all legal moves of the last generation."""
        return (self.n_placements, self.n_exchanges, self.n_passes)

    def moves(self, int limit=-1):
        """The recorded moves, best first: tuples (kind, row, col, vertical, tiles, score, equity_millipoints,
        tiles_played, leave) with kind 'place' | 'exchange' | 'pass'; leave as machine letters."""
        cdef int i, k, j, n = self.n_moves if limit < 0 else min(limit, self.n_moves)
        cdef Move* m
        out = []
        kinds = ("place", "exchange", "pass")
        for i in range(n):
            m = &self.move_buf[i]
            leave = []
            for k in range(self.ld.size):
                for j in range(self.rack_key[k]):
                    if (m.leave_mask >> (self.first_bit[k] + j)) & 1:
                        leave.append(k)
            out.append((kinds[m.kind], m.row, m.col, bool(m.vertical), tuple(m.tiles[j] for j in range(m.length)),
                        m.score, m.equity, m.n_tiles, tuple(leave)))
        return out
