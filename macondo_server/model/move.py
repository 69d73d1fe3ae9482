"""Moves and their notation: `8G QI`, `2L P(O)ND`, `exch ABC?`, `pass`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from macondo_server.model.coords import format_coord, parse_coord
from macondo_server.model.text import MAX_MOVE_CHARS, FormatError, check_text, excerpt
from macondo_server.model.tiles import RACK_SIZE, board_tile, rack_tiles, split_labels

# ------------------------------------------------------------------ moves

MoveKind = Literal["place", "exchange", "pass"]


@dataclass(frozen=True)
class Move:
    """A move. For placements `tiles` has one entry per covered square, 0 = played-through;
    blanks are ml | 0x80. For exchanges `tiles` are the exchanged rack tiles (0 = blank)."""

    kind: MoveKind
    row: int = 0
    col: int = 0
    vertical: bool = False
    tiles: tuple[int, ...] = ()

    @property
    def tiles_played(self) -> int:
        if self.kind == "place":
            return sum(1 for t in self.tiles if t != 0)
        if self.kind == "exchange":
            return len(self.tiles)
        return 0

    def squares(self) -> list[tuple[int, int]]:
        dr, dc = (1, 0) if self.vertical else (0, 1)
        return [(self.row + i * dr, self.col + i * dc) for i in range(len(self.tiles))]

    def rack_tiles(self) -> list[int]:
        """The rack tiles this move uses (blanks as 0)."""
        if self.kind == "place":
            return [0 if t & 0x80 else t for t in self.tiles if t != 0]
        if self.kind == "exchange":
            return list(self.tiles)
        return []


def parse_move(text: str, board: Board, ld: LetterDistribution) -> Move:
    """Parse `8G QI`, `H8 QI`, `2L P.ND`, `2L P(O)ND`, `8D WAtER`, `exch ABC?`, `pass`.

    The placement is checked against the board: squares on the board, played-through letters equal
    to the board's tiles, new tiles only on empty squares, and the word not running on into tiles.
    Moves longer than MAX_MOVE_CHARS are refused unread."""
    text = check_text(text, "move", MAX_MOVE_CHARS)
    s = " ".join(text.split())
    if not s:
        raise FormatError("empty move")
    q = excerpt(text)
    low = s.lower()
    if low in ("pass", "(pass)", "-"):
        return Move("pass")
    parts = s.split(" ")
    if parts[0].lower() in ("exch", "exchange") or (low.startswith("(exch ") and s.endswith(")")):
        if s.startswith("("):
            parts = s[1:-1].split(" ")
        if len(parts) != 2:
            raise FormatError(f"bad exchange {q}: expected 'exch TILES'")
        exchanged = rack_tiles(ld, parts[1], "bad exchange", fold_case=True)
        if not 1 <= len(exchanged) <= RACK_SIZE:
            raise FormatError(f"bad exchange {q}: exchange 1 to {RACK_SIZE} tiles")
        return Move("exchange", tiles=tuple(sorted(exchanged)))
    if len(parts) != 2:
        raise FormatError(f"bad move {q}: expected 'COORD WORD', 'exch TILES' or 'pass'")
    dim = board.dim
    row, col, vertical = parse_coord(parts[0], dim)
    word = parts[1]
    # expand parentheses: P(O)ND -> letters marked as played-through
    labels: list[tuple[str, bool]] = []  # (label, through)
    inside = False
    opened_at = 0
    for lab in split_labels(word, f"bad move {q}:", ld):
        if lab == "(":
            if inside:
                raise FormatError(f"bad move {q}: nested parentheses")
            inside = True
            opened_at = len(labels)
        elif lab == ")":
            if not inside:
                raise FormatError(f"bad move {q}: unbalanced ')'")
            if opened_at == len(labels):
                raise FormatError(f"bad move {q}: empty parentheses")
            inside = False
        else:
            labels.append((lab, inside or lab == "."))
    if inside:
        raise FormatError(f"bad move {q}: unclosed '('")
    if not labels:
        raise FormatError(f"bad move {q}: no tiles")
    dr, dc = (1, 0) if vertical else (0, 1)
    end_r, end_c = row + dr * (len(labels) - 1), col + dc * (len(labels) - 1)
    if end_r >= dim or end_c >= dim:
        raise FormatError(f"bad move {q}: the word runs off the board")
    tiles: list[int] = []
    for k, (lab, through) in enumerate(labels):
        r, c = row + dr * k, col + dc * k
        on_board = board.tile(r, c)
        sq = format_coord(r, c, False)
        if through:
            if on_board == 0:
                raise FormatError(f"bad move {q}: square {sq} is empty but the move plays through it")
            if lab != ".":
                want = board_tile(ld, lab, f"bad move {q}")
                if (want & 0x7F) != (on_board & 0x7F):
                    raise FormatError(f"bad move {q}: square {sq} holds {ld.label(on_board)}, not {lab}")
            tiles.append(0)
        else:
            ml = board_tile(ld, lab, f"bad move {q}")
            if on_board != 0:
                # a letter written over a board tile is read as played-through when it matches
                if (on_board & 0x7F) != (ml & 0x7F):
                    raise FormatError(f"bad move {q}: square {sq} is occupied by {ld.label(on_board)}")
                tiles.append(0)
                continue
            tiles.append(ml)
    if all(t == 0 for t in tiles):
        raise FormatError(f"bad move {q}: it places no tiles")
    if sum(1 for t in tiles if t) > RACK_SIZE:
        placed = sum(1 for t in tiles if t)
        raise FormatError(f"bad move {q}: it places {placed} tiles; a rack holds {RACK_SIZE}")
    before = (row - dr, col - dc)
    after = (end_r + dr, end_c + dc)
    for r, c in (before, after):
        if 0 <= r < dim and 0 <= c < dim and board.tile(r, c) != 0:
            raise FormatError(
                f"bad move {q}: the word continues into the tile at {format_coord(r, c, False)}"
            )
    return Move("place", row, col, vertical, tuple(tiles))


def format_move(move: Move, ld: LetterDistribution, board: Board | None = None, style: str = "short") -> str:
    """style 'short': `8G QI`, `2L P.ND`, `exch ABC`, `pass`;
    style 'table': ` 2L P(O)ND` (needs the board), `(exch ABC)`, `(Pass)`;
    style 'gcg': like short without padding."""
    if move.kind == "pass":
        return "(Pass)" if style == "table" else "pass"
    if move.kind == "exchange":
        tiles = ld.rack_str(list(move.tiles))
        return f"(exch {tiles})" if style == "table" else f"exch {tiles}"
    coord = format_coord(move.row, move.col, move.vertical)
    if style == "table":
        if board is None:
            raise ValueError("table style needs the board")
        out = []
        inside = False
        for (r, c), t in zip(move.squares(), move.tiles, strict=True):
            if t == 0:
                if not inside:
                    out.append("(")
                    inside = True
                out.append(ld.label(board.tile(r, c)))
            else:
                if inside:
                    out.append(")")
                    inside = False
                out.append(ld.label(t))
        if inside:
            out.append(")")
        return f"{coord:>3} {''.join(out)}"
    return f"{coord} {ld.word_str(list(move.tiles))}"
