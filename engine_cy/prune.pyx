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
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset

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
    bint tile_at_or_after[MAX_BOARD_DIM + 1]
    int start
    int counts[MAX_ALPHABET]          # unplayed tiles by machine letter (0: blanks)
    ml_t word[MAX_BOARD_DIM + 1]
    uint8_t* out                      # words as (length, letters...) records
    size_t n_out, cap_out
    bint failed                       # out of memory


cdef bint _emit(Ctx* c, int length) noexcept nogil:
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
    memcpy(c.out + c.n_out + 1, c.word, length)
    c.n_out = need
    return True


cdef void _through(Ctx* c, int pos, uint32_t p, int placed, bint touched) noexcept nogil:
    """Words starting at c.start that use at least one of the lane's tiles (`touched`: one is already in the
    word): fill square pos from list p. On a lane of empty squares only, started with touched set, this lists
    the words of unplayed tiles that fit the lane."""
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
        c.word[pos - c.start] = c.line[pos]
        if ends and placed > 0 and kwg_accepts(c.nodes, q):
            _emit(c, pos - c.start + 1)
        _through(c, pos + 1, kwg_arc(c.nodes, q), placed, True)
        return
    if not touched and not c.tile_at_or_after[pos]:
        return            # this word can never reach one of the lane's tiles: the empty-lane pass covers it
    q = p
    while True:
        t = kwg_tile(c.nodes, q)
        use = t if c.counts[t] > 0 else (0 if c.counts[0] > 0 else -1)
        if use >= 0:
            c.counts[use] -= 1
            c.word[pos - c.start] = <ml_t> t
            if ends and touched and pos > c.start and kwg_accepts(c.nodes, q):
                _emit(c, pos - c.start + 1)
            _through(c, pos + 1, kwg_arc(c.nodes, q), placed + 1, touched)
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


def pruned_words(Game game, counts=None):
    """The words (machine letters, bytes) that can ever lie along a lane of `game`'s board when at most
    `counts` tiles (by machine letter, 0: blanks; default: the game's tiles in play, both racks and the bag)
    are still to be placed. Sorted, without duplicates."""
    cdef Ctx* c
    cdef Board board = game.board
    cdef Kwg kwg = game.kwg
    cdef int dim = board.dim, n_lanes, k, i, s, run, max_run = 0, size = game.ld.size
    cdef ml_t* lanes
    cdef size_t off
    cdef bytes raw
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
                        c.start = s
                        _through(c, s, kwg.dawg_root, 0, False)
            # words of unplayed tiles only: those that fit the longest run of empty squares of any lane
            memset(c.line, 0, sizeof(c.line))
            c.dim = max_run
            c.start = 0
            _through(c, 0, kwg.dawg_root, 0, True)
        if c.failed:
            raise MemoryError()
        words = set()
        rp = c.out
        off = 0
        while off < c.n_out:
            k = rp[off]
            words.add(rp[off + 1:off + 1 + k])
            off += k + 1
        return sorted(words)
    finally:
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
