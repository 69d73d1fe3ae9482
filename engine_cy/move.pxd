# The move as the engine's modules pass it around: the Move struct, its ranking, and its 64-bit packed form.
# Game state (game.pxd) and the searches share it without depending on the move generator.
from libc.stdint cimport uint8_t, int32_t, uint64_t
from engine_cy.common cimport ml_t, equity_t, MAX_BOARD_DIM, RACK_SIZE
from engine_cy.board cimport Board

cdef enum:
    MOVE_PLACE = 0
    MOVE_EXCHANGE = 1
    MOVE_PASS = 2

cdef struct Move:
    equity_t equity            # millipoints
    int32_t score              # points
    uint8_t kind               # MOVE_PLACE / MOVE_EXCHANGE / MOVE_PASS
    uint8_t row, col, vertical # start square (0-based) and direction
    uint8_t length             # squares covered (placements) or tiles exchanged
    uint8_t n_tiles            # tiles from the rack
    uint8_t leave_mask         # rack-instance bits kept (see MoveGen.first_bit)
    ml_t tiles[MAX_BOARD_DIM]  # placement: per square, 0 = played-through, blank = ml|0x80; exchange: tiles

cdef inline int move_cmp(const Move* a, const Move* b) noexcept nogil:
    """< 0 when a ranks before b. The order: higher equity, higher score, kind (placements, exchanges,
    passes), lower row, lower column, across before down, fewer tiles, shorter, then lower tiles square by
    square."""
    cdef int i, n
    if a.equity != b.equity:
        return -1 if a.equity > b.equity else 1
    if a.score != b.score:
        return -1 if a.score > b.score else 1
    if a.kind != b.kind:
        return -1 if a.kind < b.kind else 1
    if a.row != b.row:
        return -1 if a.row < b.row else 1
    if a.col != b.col:
        return -1 if a.col < b.col else 1
    if a.vertical != b.vertical:
        return -1 if a.vertical < b.vertical else 1
    if a.n_tiles != b.n_tiles:
        return -1 if a.n_tiles < b.n_tiles else 1
    if a.length != b.length:
        return -1 if a.length < b.length else 1
    n = a.length
    for i in range(n):
        if a.tiles[i] != b.tiles[i]:
            return -1 if a.tiles[i] < b.tiles[i] else 1
    return 0

# Packed move (SmallMove), 62 of 64 bits:
#   bits 0..4   column          bits 5..9   row          bit 10  vertical
#   bits 11..12 kind (0 place, 1 exchange, 2 pass)
#   bits 13..61 seven 7-bit slots, one per tile taken from the rack, in board order:
#               placement: machine letter | 0x40 for a blank (0 = no tile); exchange: letter + 1
# Played-through squares are not stored: unpack_move walks the board to put them back.
# Score and equity are not part of the packing.

cdef inline uint64_t pack_move(const Move* m) noexcept nogil:
    cdef uint64_t v = <uint64_t> m.col | (<uint64_t> m.row << 5) | (<uint64_t> m.vertical << 10) | \
        (<uint64_t> m.kind << 11)
    cdef int i, slot = 0
    cdef uint64_t code
    if m.kind == MOVE_PLACE:
        for i in range(m.length):
            if m.tiles[i] != 0 and slot < RACK_SIZE:
                code = (m.tiles[i] & 0x3F) | (0x40 if (m.tiles[i] & 0x80) else 0)
                v |= code << (13 + 7 * slot)
                slot += 1
    elif m.kind == MOVE_EXCHANGE:
        for i in range(m.length):
            if slot < RACK_SIZE:
                v |= (<uint64_t> (m.tiles[i] + 1)) << (13 + 7 * slot)
                slot += 1
    return v

cdef int unpack_move(uint64_t packed, Board board, Move* m) noexcept nogil

cdef inline int packed_kind(uint64_t mv) noexcept nogil:
    return (mv >> 11) & 3

cdef inline int packed_lane(uint64_t mv) noexcept nogil:
    """A packed placement's lane as the endgame's lane sets index it: its row, or MAX_BOARD_DIM + its column
    when vertical."""
    if (mv >> 10) & 1:
        return MAX_BOARD_DIM + <int> (mv & 0x1F)
    return <int> ((mv >> 5) & 0x1F)

cdef inline int packed_tiles(uint64_t mv) noexcept nogil:
    """Tiles taken from the rack by a packed move (the filled 7-bit slots)."""
    cdef int n = 0, slot
    for slot in range(7):
        if (mv >> (13 + 7 * slot)) & 0x7F:
            n += 1
        else:
            break
    return n

cdef int move_from_fields(Move* m, str kind, int row, int col, bint vertical, tiles, int score) except -1
