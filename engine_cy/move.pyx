# Moves between their forms: the packed 64-bit form (see move.pxd) back to a Move on its board, a Move from
# its Python fields, and the Python-level pack / unpack of the packed form.
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memset

from engine_cy.common cimport ml_t, MAX_BOARD_DIM, RACK_SIZE
from engine_cy.board cimport Board


cdef int unpack_move(uint64_t packed, Board board, Move* m) noexcept nogil:
    """Rebuild a Move (tiles per square, played-through as 0) from its packed form on the same board.
    Score and equity are not part of the packing. Returns -1 when it does not fit the board."""
    cdef int slot, code, r, c, dim = board.dim, length = 0
    memset(m, 0, sizeof(Move))
    m.col = packed & 0x1F
    m.row = (packed >> 5) & 0x1F
    m.vertical = (packed >> 10) & 1
    m.kind = (packed >> 11) & 3
    if m.kind == MOVE_EXCHANGE:
        for slot in range(RACK_SIZE):
            code = (packed >> (13 + 7 * slot)) & 0x7F
            if code == 0:
                break
            m.tiles[slot] = <ml_t> (code - 1)
            m.length += 1
        m.n_tiles = m.length
        return 0
    if m.kind != MOVE_PLACE:
        return 0
    r = m.row
    c = m.col
    slot = 0
    while True:
        code = (packed >> (13 + 7 * slot)) & 0x7F if slot < RACK_SIZE else 0
        if r >= dim or c >= dim:
            break
        if board.get(r, c) != 0:
            m.tiles[length] = 0
        elif code != 0:
            m.tiles[length] = <ml_t> ((code & 0x3F) | (0x80 if (code & 0x40) else 0))
            slot += 1
        else:
            break
        length += 1
        if m.vertical:
            r += 1
        else:
            c += 1
    m.length = <uint8_t> length
    m.n_tiles = <uint8_t> slot
    return 0 if slot > 0 else -1


MOVE_KINDS = {"place": MOVE_PLACE, "exchange": MOVE_EXCHANGE, "pass": MOVE_PASS}


cdef int move_from_fields(Move* m, str kind, int row, int col, bint vertical, tiles, int score) except -1:
    """Fill a Move from its Python fields (tiles per square, 0 = played-through; exchanged tiles)."""
    cdef int i
    if len(tiles) > MAX_BOARD_DIM:
        raise ValueError(f"a move covers at most {MAX_BOARD_DIM} squares")
    memset(m, 0, sizeof(Move))
    m.kind = MOVE_KINDS[kind]
    m.row = row
    m.col = col
    m.vertical = vertical
    m.length = len(tiles)
    m.score = score
    for i, t in enumerate(tiles):
        m.tiles[i] = t
        if t or m.kind == MOVE_EXCHANGE:
            m.n_tiles += 1
    return 0


def pack(str kind, int row, int col, bint vertical, tiles):
    """The packed form (uint64) of a move given by its fields: kind 'place' | 'exchange' | 'pass', tiles per
    square for a placement (0 = played-through, blank = ml | 0x80), the exchanged tiles for an exchange."""
    cdef Move m
    move_from_fields(&m, kind, row, col, vertical, tiles, 0)
    return pack_move(&m)


def unpack(uint64_t packed, Board board):
    """(kind, row, col, vertical, tiles) of a packed move on the board it was generated on."""
    cdef Move m
    if unpack_move(packed, board, &m) != 0:
        raise ValueError("packed move does not fit the board")
    kinds = ("place", "exchange", "pass")
    return (kinds[m.kind], m.row, m.col, bool(m.vertical), tuple(m.tiles[i] for i in range(m.length)))
