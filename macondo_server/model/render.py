"""Text rendering of positions (Python renders; the engine owns the state)."""

from __future__ import annotations

from macondo_server.model.coords import col_letter
from macondo_server.model.position import Position

_PREMIUM_MARK = {(1, 3): "=", (1, 2): "-", (3, 1): '"', (2, 1): "'", (1, 4): "~", (4, 1): "^"}


def render_board(pos: Position) -> str:
    """The board as text: a column per square, as wide as the widest tile on the board (a multi-letter tile such
    as Catalan L·L without its brackets; a blank played as one in lowercase), premiums marked on empty squares
    (= triple word, - double word, " triple letter, ' double letter, ~ quadruple word, ^ quadruple letter)."""
    board, ld = pos.board, pos.ld
    dim = board.dim
    tiles = [[board.tile(r, c) for c in range(dim)] for r in range(dim)]
    width = max((len(ld.plain_label(t)) for row in tiles for t in row if t), default=1)
    rule = "   " + "-" * ((width + 1) * dim - 1)
    lines = ["   " + " ".join(col_letter(c).ljust(width) for c in range(dim)).rstrip(), rule]
    for r in range(dim):
        cells = []
        for c in range(dim):
            t = tiles[r][c]
            if t:
                cells.append(ld.plain_label(t).ljust(width))
            else:
                cells.append(_PREMIUM_MARK.get(board.premium(r, c), " ").ljust(width))
        lines.append(f"{r + 1:>2}|" + " ".join(cells) + "|")
    lines.append(rule)
    return "\n".join(lines)


def render_position(pos: Position, names: tuple[str, str] = ("player on turn", "opponent"),
                    bag: int | None = None) -> str:
    """The board, both racks (an unknown one as such), scores, and the tiles unseen by the player on turn.
    The bag is the unseen tiles less the opponent's rack (a full one, known or not) unless `bag` gives it."""
    ld = pos.ld
    out = [render_board(pos), ""]
    for i in range(2):
        rack = ld.rack_str(pos.racks[i]) or "(unknown)"
        out.append(f"{names[i]:<15} {rack:<9} {pos.scores[i]:>4}")
    counts = pos.unseen_counts(0)
    unseen = "".join(ld.label(m) * counts[m] for m in range(ld.size))
    in_bag = pos.tiles_in_bag() if bag is None else bag
    out.append(f"bag {in_bag} tiles; unseen to the player on turn ({sum(counts)}): {unseen}")
    if pos.lexicon:
        out.append(f"lexicon {pos.lexicon}")
    return "\n".join(out)
