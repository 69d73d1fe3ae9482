# A lexicon pruned to one board: the words that can ever lie along any row or column of this board from now
# on, when the tiles still to be placed are at most the game's tiles in play (both racks and the bag).
#
# The endgame and the pre-endgame search positions that only add tiles to one board, so every word formed in
# their searches, a main word or a cross-word, lies along some lane of the starting board: its squares hold
# either the board's tiles or tiles from the unplayed ones (a blank standing for any letter), and the squares
# just before and after it are empty on the starting board (tiles are never removed). This module lists
# exactly those words (over-approximated: lanes are read without their cross-checks and a word on empty
# squares only needs to fit the longest empty run of any lane), so a move generator and cross-sets built on the
# pruned graph see the same legal moves, in the same order, as on the full lexicon, with far fewer arcs to
# try at each step (a blank on a rack no longer sweeps the whole alphabet at every node).
#
# The pruned lexicon changes only the work, never a result: a search in it sees exactly the moves it would see
# in the full lexicon. (In a real game the tiles in play are the distribution's tiles not on the board, the same
# for both players.)
cimport cython
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcpy, memset, memcmp

from engine_cy.common cimport ml_t, MAX_ALPHABET, MAX_BOARD_DIM
from engine_cy.kwg cimport Kwg
from engine_cy.kwg_node cimport kwg_tile, kwg_accepts, kwg_is_end, kwg_arc, kwg_seek
from engine_cy.board cimport Board
from engine_cy.game cimport Game
from engine_cy.kwg_build import build_kwg


cdef struct Ctx:
    const uint32_t* nodes
    int dim
    ml_t line[MAX_BOARD_DIM + 1]      # unblanked letters of the lane, 0 for an empty square
    ml_t sq[MAX_BOARD_DIM + 1]        # the letters on the lane's squares of the word being built (_left, _right)
    bint tile_at_or_after[MAX_BOARD_DIM + 1]
    int counts[MAX_ALPHABET]          # unplayed tiles by machine letter (0: blanks)
    uint8_t* out                      # words as (length, letters...) records
    size_t n_out, cap_out
    bint failed                       # out of memory


cdef bint _emit(Ctx* c, const ml_t* word, int length) noexcept nogil:
    cdef size_t need = c.n_out + <size_t> length + 1
    cdef size_t cap
    cdef uint8_t* grown
    if need > c.cap_out:
        cap = c.cap_out * 2 if c.cap_out else 4096
        while cap < need:
            cap *= 2
        grown = <uint8_t*> realloc(c.out, cap)
        if grown == NULL:
            c.failed = True
            return False
        c.out = grown
        c.cap_out = cap
    c.out[c.n_out] = <uint8_t> length
    memcpy(c.out + c.n_out + 1, word, length)
    c.n_out = need
    return True


cdef inline int _source(Ctx* c, int t) noexcept nogil:
    """Which unplayed tile can stand for letter t: its own (t), else a blank (0), else none (-1)."""
    if c.counts[t] > 0:
        return t
    return 0 if c.counts[0] > 0 else -1


cdef int _record_cmp(const void* x, const void* y) noexcept nogil:
    """Two (length, letters) records in the order of their letters as bytes (a prefix first)."""
    cdef const uint8_t* a = (<const uint8_t**> x)[0]
    cdef const uint8_t* b = (<const uint8_t**> y)[0]
    cdef int r = memcmp(a + 1, b + 1, min(a[0], b[0]))
    if r != 0:
        return r
    return <int> a[0] - <int> b[0]


cdef inline bint _emit_span(Ctx* c, int st, int en) noexcept nogil:
    """Record the word on squares st..en (c.sq)."""
    return _emit(c, c.sq + st, en - st + 1)


cdef void _left(Ctx* c, int a, int pos, uint32_t q, int placed) noexcept nogil:
    """Words whose leftmost run of the lane's tiles starts at square a, walked in the GADDAG from that tile
    leftwards: squares pos..a are filled (c.sq), q is the arc of square pos's letter. The word may start at
    pos (when the square before it is empty) and go on right of a after the separator, or reach one more
    empty square to the left (one that can start a word: the square before it is empty as well)."""
    cdef uint32_t p, r
    cdef int t, use, dim = c.dim
    if c.failed:
        return
    if pos == 0 or c.line[pos - 1] == 0:
        # the path so far is the reversed word up to a: a word that ends at a ends here, one that goes on
        # takes the separator (tile 0, first in its list)
        if placed > 0 and (a + 1 == dim or c.line[a + 1] == 0) and kwg_accepts(c.nodes, q):
            _emit_span(c, pos, a)
        p = kwg_arc(c.nodes, q)
        if p != 0 and a + 1 < dim and kwg_tile(c.nodes, p) == 0:
            _right(c, pos, a + 1, kwg_arc(c.nodes, p), placed, True)
    if pos == 0 or c.line[pos - 1] != 0 or (pos >= 2 and c.line[pos - 2] != 0):
        return
    p = kwg_arc(c.nodes, q)
    if p == 0:
        return
    r = p
    while True:
        t = kwg_tile(c.nodes, r)
        if t != 0:
            use = _source(c, t)
            if use >= 0:
                c.counts[use] -= 1
                c.sq[pos - 1] = <ml_t> t
                _left(c, a, pos - 1, r, placed + 1)
                c.counts[use] += 1
        if kwg_is_end(c.nodes, r):
            break
        r += 1


cdef void _right(Ctx* c, int st, int pos, uint32_t p, int placed, bint touched) noexcept nogil:
    """A word started at st (squares st..pos - 1 filled, c.sq) goes on rightwards: fill square pos from list p
    (of the DAWG, or of the GADDAG past the separator), and record the word where it may end (the next square
    empty or the edge) with at least one tile placed and one of the lane's tiles in it (`touched`: one is
    already). On a lane of empty squares only, started with touched set, this lists the words of unplayed
    tiles that fit the lane."""
    cdef uint32_t q
    cdef int t, use
    cdef bint ends
    if pos >= c.dim or p == 0 or c.failed:
        return
    ends = pos + 1 == c.dim or c.line[pos + 1] == 0
    if c.line[pos]:
        q = kwg_seek(c.nodes, p, c.line[pos])
        if q == 0:
            return
        c.sq[pos] = c.line[pos]
        if ends and placed > 0 and kwg_accepts(c.nodes, q):
            _emit_span(c, st, pos)
        _right(c, st, pos + 1, kwg_arc(c.nodes, q), placed, True)
        return
    if not touched and not c.tile_at_or_after[pos]:
        return            # this word can never reach one of the lane's tiles: the empty-lane pass covers it
    q = p
    while True:
        t = kwg_tile(c.nodes, q)
        if t != 0:        # (the GADDAG's separator)
            use = _source(c, t)
            if use >= 0:
                c.counts[use] -= 1
                c.sq[pos] = <ml_t> t
                if ends and touched and pos > st and kwg_accepts(c.nodes, q):
                    _emit_span(c, st, pos)
                _right(c, st, pos + 1, kwg_arc(c.nodes, q), placed + 1, touched)
                c.counts[use] += 1
        if kwg_is_end(c.nodes, q):
            break
        q += 1


cdef int _lanes(Board board, ml_t* lanes) noexcept nogil:
    """Every row and column of the board as unblanked letters, duplicates dropped; returns their number."""
    cdef int dim = board.dim, d, lane, i, k, n = 0
    cdef ml_t* cur
    cdef bint dup
    for d in range(2):
        for lane in range(dim):
            cur = lanes + n * MAX_BOARD_DIM
            for i in range(dim):
                cur[i] = board.tiles[d][lane * dim + i] & 0x7F
            dup = False
            for k in range(n):
                dup = True
                for i in range(dim):
                    if lanes[k * MAX_BOARD_DIM + i] != cur[i]:
                        dup = False
                        break
                if dup:
                    break
            if not dup:
                n += 1
    return n


# Above this many tiles in play (not an endgame or a pre-endgame) pruning costs more than it saves: the
# full lexicon is used.
PRUNE_MAX_TILES = 32


def pruned_words(Game game, counts=None, bint gaddag=True):
    """The words (machine letters, bytes) that can ever lie along a lane of `game`'s board when at most
    `counts` tiles (by machine letter, 0: blanks; default: the game's tiles in play, both racks and the bag)
    are still to be placed. Sorted, without duplicates. The words through a lane's tiles come from a GADDAG
    walk from the first tile of their leftmost run; gaddag=False (or a lexicon without a GADDAG) lists them by
    a DAWG walk from every start square instead (the same words, slower: the reference for tests)."""
    cdef Ctx* c
    cdef Board board = game.board
    cdef Kwg kwg = game.kwg
    cdef int dim = board.dim, n_lanes, k, i, s, run, max_run = 0, size = game.ld.size
    cdef ml_t* lanes
    cdef size_t off, n_rec
    cdef const uint8_t** recs = NULL
    cdef uint32_t q
    cdef bint use_gaddag = kwg.gaddag_root != 0 and gaddag
    cdef const unsigned char* rp
    if counts is None:
        counts = unplayed_counts(game)
    if len(counts) != size or any(x < 0 for x in counts):
        raise ValueError(f"counts must give {size} non-negative tile counts")
    c = <Ctx*> malloc(sizeof(Ctx))
    lanes = <ml_t*> malloc(2 * MAX_BOARD_DIM * MAX_BOARD_DIM * sizeof(ml_t))
    if c == NULL or lanes == NULL:
        free(c)
        free(lanes)
        raise MemoryError()
    c.nodes = kwg.nodes
    c.dim = dim
    c.out = NULL
    c.n_out = 0
    c.cap_out = 0
    c.failed = False
    for i in range(MAX_ALPHABET):
        c.counts[i] = counts[i] if i < size else 0
    try:
        with nogil:
            n_lanes = _lanes(board, lanes)
            for k in range(n_lanes):
                memcpy(c.line, lanes + k * MAX_BOARD_DIM, dim * sizeof(ml_t))
                c.line[dim] = 0
                c.tile_at_or_after[dim] = False
                run = 0
                for i in range(dim - 1, -1, -1):
                    c.tile_at_or_after[i] = c.line[i] != 0 or c.tile_at_or_after[i + 1]
                    run = 0 if c.line[i] else run + 1
                    if run > max_run:
                        max_run = run
                for s in range(dim):
                    if s == 0 or c.line[s - 1] == 0:
                        if use_gaddag:
                            # each word through the lane's tiles once, from the first tile of its leftmost
                            # run: the GADDAG walks from that tile, so no letter is tried that the tile
                            # does not allow (a walk from each start square tries every prefix first)
                            if c.line[s] != 0:
                                q = kwg_seek(c.nodes, kwg.gaddag_root, c.line[s])
                                if q != 0:
                                    c.sq[s] = c.line[s]
                                    _left(c, s, s, q, 0)
                        else:
                            _right(c, s, s, kwg.dawg_root, 0, False)
            # words of unplayed tiles only: those that fit the longest run of empty squares of any lane
            memset(c.line, 0, sizeof(c.line))
            c.dim = max_run
            _right(c, 0, 0, kwg.dawg_root, 0, True)
        if c.failed:
            raise MemoryError()
        # the records sorted (as bytes sort) without duplicates, before any Python object is made
        n_rec = 0
        off = 0
        while off < c.n_out:
            n_rec += 1
            off += c.out[off] + 1
        recs = <const uint8_t**> malloc(max(n_rec, 1) * sizeof(uint8_t*))
        if recs == NULL:
            raise MemoryError()
        rp = c.out
        with nogil:
            off = 0
            i = 0
            while off < c.n_out:
                recs[i] = c.out + off
                i += 1
                off += c.out[off] + 1
            qsort(recs, n_rec, sizeof(uint8_t*), _record_cmp)
        words = []
        for i in range(n_rec):
            if i > 0 and _record_cmp(&recs[i - 1], &recs[i]) == 0:
                continue
            off = recs[i] - rp
            k = rp[off]
            words.append(rp[off + 1:off + 1 + k])
        return words
    finally:
        free(recs)
        free(c.out)
        free(c)
        free(lanes)


def unplayed_counts(Game game):
    """The game's tiles in play (both racks and the bag) by machine letter (0: blanks): every tile that can
    still be placed on the board."""
    cdef int ml, i
    counts = [0] * game.ld.size
    for ml in range(game.ld.size):
        counts[ml] = game.racks[0][ml] + game.racks[1][ml]
    for i in range(game.bag_n):
        counts[game.bag[i]] += 1
    return counts


def pruned_kwg(Game game, counts=None):
    """A KWG (DAWG and GADDAG) of pruned_words(game, counts), validated like any loaded lexicon; the game's
    own lexicon when more than PRUNE_MAX_TILES tiles are in play."""
    if counts is None:
        counts = unplayed_counts(game)
    if sum(counts) > PRUNE_MAX_TILES:
        return game.kwg
    return Kwg(build_kwg(pruned_words(game, counts), True), "gaddag")


def pruned_game(Game game):
    """A copy of `game` whose lexicon is pruned to its board (engine_cy.prune): what the endgame and
    pre-endgame searches use from it (the same moves, in the same order, as in the full lexicon)."""
    return game.with_lexicon(pruned_kwg(game))
