"""Text formats: CGP positions, move notation and GCG game records (reference §5, §6, §7).

This is the only text <-> tile translator on the Python side; it uses the engine's alphabet and board.

Every input is untrusted. Every parse error is a FormatError whose message names the field at fault and
quotes at most a short excerpt of the input (`excerpt`); every number is ASCII digits within the range its
consumer accepts; every text is refused beyond the MAX_* bounds below before any work is done on it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import STANDARD15, Board

RACK_SIZE = 7
DEFAULT_LAYOUT = "CrosswordGame"
LAYOUTS = {"CrosswordGame": STANDARD15, "standard15": STANDARD15}
DISTRIBUTIONS = {"english": LetterDistribution.english}
VARIANTS = ("classic",)

# ------------------------------------------------------------------ bounds on untrusted text and numbers

# A move: a coordinate (3), a space and at most 21 squares, each played-through run in parentheses
# (21 + 22), or 'exchange ' and 7 tiles; 64 leaves room for stray spaces.
MAX_MOVE_CHARS = 64
# A position: 15 rows of at most 15 labels (up to 4 characters with [XY] tiles), racks, scores, ops.
MAX_CGP_CHARS = 4096
# A tile string in a CGP op or a request (bagorder, tile order): 100 tiles, [XY] labels included.
MAX_TILES_CHARS = 512
# A GCG record (real ones, notes included, are under 20 kB), one of its lines, and its events. A finished
# game has at most about 1,200 events: each of at most 100 plays can be followed by a challenge bonus and
# at most 5 scoreless turns of a phony and its withdrawal, before the end-of-game events.
MAX_GCG_CHARS = 262_144
MAX_GCG_LINE_CHARS = 4096
MAX_GCG_EVENTS = 2000
# Names: lexicon, distribution, layout, variant, GCG nicknames.
MAX_NAME_CHARS = 64
# A player's score, an event's score and a cumulative total, in points. The engine keeps scores in C
# ints and equities in int32 millipoints (score x 1000), so this is far inside both; real games stay
# under a few thousand.
MAX_SCORE = 99_999
MAX_BINGO_BONUS = 1000            # the `bb` op (game sessions accept the same range)
MAX_SCORELESS_TURNS = 100         # the `mcnz` op; the zeros field is 0..mcnz
DEFAULT_BINGO_BONUS = 50
DEFAULT_SCORELESS_TURNS = 6


class FormatError(ValueError):
    """Malformed CGP, move notation or GCG; the message names the problem."""


def excerpt(text: str, limit: int = 40) -> str:
    """A short quoted excerpt of untrusted input for error messages: a drop-in for `{text!r}`.

    At most `limit` characters of `text` are shown (control and other unprintable characters escaped, each
    escape counting its own length); a cut excerpt ends in '…' and is followed by the total length, e.g.
    `'8G QIIIIIII…' (1048576 chars)`. The result is never longer than about `limit + 30` characters."""
    if not isinstance(text, str):
        text = repr(text)
    limit = max(1, limit)
    out: list[str] = []
    used = 0
    cut = False
    for ch in text:
        if ch.isprintable() and ch not in "'\\":
            esc = ch
        else:
            esc = repr(ch)[1:-1] if ch != "'" else "\\'"
        if used + len(esc) > limit:
            cut = True
            break
        out.append(esc)
        used += len(esc)
    body = "".join(out)
    if cut:
        return f"'{body}…' ({len(text)} chars)"
    return f"'{body}'"


def check_text(text: object, what: str, limit: int) -> str:
    """`text` as a str of at most `limit` characters, or a FormatError naming `what`."""
    if not isinstance(text, str):
        raise FormatError(f"{what} must be text, not {type(text).__name__}")
    if len(text) > limit:
        raise FormatError(f"{what} {excerpt(text)} is too long: at most {limit} characters")
    return text


_INT = {
    "none": re.compile(r"[0-9]+"),
    "optional": re.compile(r"[+-]?[0-9]+"),
    "minus": re.compile(r"-?[0-9]+"),
    "required": re.compile(r"[+-][0-9]+"),
}
_INT_WORDS = {
    "none": "a whole number (digits 0-9)",
    "optional": "a whole number (digits 0-9, optional sign)",
    "minus": "a whole number (digits 0-9, optional '-')",
    "required": "a signed whole number (+ or -, then digits 0-9)",
}


def parse_int(text: str, what: str, lo: int, hi: int,
              sign: Literal["none", "optional", "minus", "required"] = "none") -> int:
    """An integer written in ASCII digits (str.isdigit and int() would take '²' or Arabic-Indic digits),
    with a sign only where `sign` allows one, within lo..hi; else a FormatError naming `what`."""
    if not isinstance(text, str) or _INT[sign].fullmatch(text) is None:
        raise FormatError(f"{what} {excerpt(text)}: expected {_INT_WORDS[sign]}")
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 12:
        raise FormatError(f"{what} {excerpt(text)}: out of range ({lo} to {hi})")
    value = int(text)
    if not lo <= value <= hi:
        raise FormatError(f"{what} {value}: out of range ({lo} to {hi})")
    return value


_DISTRIBUTION_CACHE: dict[str, LetterDistribution] = {}


def get_distribution(name: str = "english") -> LetterDistribution:
    """The named letter distribution (case-insensitive). Distributions are immutable, so one instance
    per name is shared."""
    key = name.lower() if isinstance(name, str) else ""
    ld = _DISTRIBUTION_CACHE.get(key)
    if ld is not None:
        return ld
    factory = DISTRIBUTIONS.get(key)
    if factory is None:
        known = ", ".join(sorted(DISTRIBUTIONS))
        raise FormatError(f"unknown letter distribution {excerpt(name)} (known: {known})")
    ld = _DISTRIBUTION_CACHE[key] = factory()
    return ld


def new_board(layout: str = DEFAULT_LAYOUT) -> Board:
    text = LAYOUTS.get(layout) if isinstance(layout, str) else None
    if text is None:
        raise FormatError(f"unknown board layout {excerpt(layout)} (known: {', '.join(sorted(LAYOUTS))})")
    return Board(text, layout)


# ------------------------------------------------------------------ tiles


def split_labels(text: str, what: str) -> list[str]:
    """A tile string as labels: one character each, or `[XY]` for a multi-character tile (kept with its
    brackets so that callers can tell '[.]' from '.')."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "[":
            j = text.find("]", i + 1)
            if j < 0:
                raise FormatError(f"{what} {excerpt(text)}: unclosed '['")
            inner = text[i + 1 : j]
            if not inner or "[" in inner:
                bad = excerpt(text[i : j + 1])
                raise FormatError(f"{what} {excerpt(text)}: bad multi-character tile {bad}")
            out.append(text[i : j + 1])
            i = j + 1
        else:
            if ch == "]":
                raise FormatError(f"{what} {excerpt(text)}: unbalanced ']'")
            out.append(ch)
            i += 1
    return out


def _lookup(ld: LetterDistribution, label: str) -> int | None:
    """Machine letter of an exact (uppercase) label, or None."""
    if label.startswith("[") and label.endswith("]") and len(label) > 2:
        label = label[1:-1]
    ml = ld._index.get(label)
    return None if ml is None else int(ml)


def _ascii_upper(label: str) -> str:
    """Uppercase for ASCII labels only: str.upper() maps 'ß' to 'SS' and the dotless 'ı' to 'I'."""
    return label.upper() if label.isascii() else label


def rack_tiles(ld: LetterDistribution, text: str, what: str, fold_case: bool = False) -> list[int]:
    """Rack tiles ('?' for a blank, capitals for letters; with fold_case ASCII lowercase is read as
    capitals) -> machine letters; a FormatError naming `what` and the tile otherwise."""
    out = []
    for lab in split_labels(text, what):
        if fold_case:
            lab = _ascii_upper(lab)
        ml = _lookup(ld, lab)
        if ml is None:
            hint = " (racks are written in capitals, '?' for a blank)" if lab != _ascii_upper(lab) else ""
            raise FormatError(f"{what} {excerpt(text)}: unknown rack tile {excerpt(lab)}{hint}")
        out.append(ml)
    return out


def board_tile(ld: LetterDistribution, label: str, what: str) -> int:
    """A board label: a capital is a tile, its lowercase a blank played as it (ml | 0x80)."""
    ml = _lookup(ld, label)
    if ml:
        return ml
    up = label.upper()
    if ml is None and up != label and up.lower() == label:  # exact lowercase of a label ('ı' is not)
        ml = _lookup(ld, up)
        if ml:
            return ml | 0x80
    raise FormatError(f"{what}: unknown tile {excerpt(label)}")


def count_excess(ld: LetterDistribution, counts: list[int], what: str) -> None:
    """Refuse tile counts (distribution less the tiles in use) below zero, naming the letters."""
    over = [i for i in range(ld.size) if counts[i] < 0]
    if over:
        detail = ", ".join(
            f"{ld.label(i)} ({ld.count(i) - counts[i]} where the distribution has {ld.count(i)})"
            for i in over[:3]
        )
        more = f" and {len(over) - 3} more letters" if len(over) > 3 else ""
        raise FormatError(f"{what} more tiles than the distribution holds: {detail}{more}")


# ------------------------------------------------------------------ coordinates


def col_letter(col: int) -> str:
    return chr(ord("A") + col)


def format_coord(row: int, col: int, vertical: bool) -> str:
    return f"{col_letter(col)}{row + 1}" if vertical else f"{row + 1}{col_letter(col)}"


_COORD_H = re.compile(r"([0-9]{1,2})([A-Za-z])")
_COORD_V = re.compile(r"([A-Za-z])([0-9]{1,2})")


def parse_coord(text: str, dim: int = 15) -> tuple[int, int, bool]:
    """'8G' -> (7, 6, False) horizontal; 'H8' -> (7, 7, True) vertical."""
    m = _COORD_H.fullmatch(text) if isinstance(text, str) else None
    vertical = False
    if m:
        row_s, col_s = m.group(1), m.group(2)
    else:
        m = _COORD_V.fullmatch(text) if isinstance(text, str) else None
        if not m:
            raise FormatError(
                f"bad coordinate {excerpt(text)}: expected row-then-column (8G) or column-then-row (H8)"
            )
        col_s, row_s = m.group(1), m.group(2)
        vertical = True
    row = int(row_s) - 1
    col = ord(col_s.upper()) - ord("A")
    if not (0 <= row < dim and 0 <= col < dim):
        raise FormatError(f"coordinate {excerpt(text)} is off the {dim}x{dim} board")
    return row, col, vertical


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
    for lab in split_labels(word, f"bad move {q}:"):
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


# ------------------------------------------------------------------ CGP


@dataclass
class Position:
    """A CGP position: racks[0] belongs to the player on turn."""

    board: Board
    racks: tuple[list[int], list[int]]
    scores: tuple[int, int]
    zeros: int
    ops: dict[str, str] = field(default_factory=dict)
    ld: LetterDistribution = field(default_factory=LetterDistribution.english)

    @property
    def lexicon(self) -> str | None:
        return self.ops.get("lex")

    @property
    def bag_order(self) -> list[int] | None:
        if "bagorder" not in self.ops:
            return None
        return rack_tiles(self.ld, check_text(self.ops["bagorder"], "CGP op bagorder", MAX_TILES_CHARS),
                          "CGP op bagorder")

    @property
    def bingo_bonus(self) -> int:
        """The `bb` op (default 50), checked."""
        return op_int(self.ops, "bb")

    @property
    def max_scoreless_turns(self) -> int:
        """The `mcnz` op (default 6), checked."""
        return op_int(self.ops, "mcnz")

    def unseen_counts(self, for_player: int = 0) -> list[int]:
        """Tiles not on the board and not on `for_player`'s rack (bag + opponent rack)."""
        counts = self.bag_counts()
        for t in self.racks[1 - for_player]:
            counts[t] += 1
        return counts

    def bag_counts(self) -> list[int]:
        """The distribution minus board tiles minus both written racks."""
        ld = self.ld
        counts = [ld.count(i) for i in range(ld.size)]
        dim = self.board.dim
        for r in range(dim):
            for c in range(dim):
                t = self.board.tile(r, c)
                if t:
                    counts[0 if t & 0x80 else t] -= 1
        for rack in self.racks:
            for t in rack:
                counts[t] -= 1
        return counts

    def bag_size(self) -> int:
        """The distribution minus the board and both written racks (the bag and the unknown part of the
        opponent's rack when that rack is written partly or not at all)."""
        return sum(self.bag_counts())

    @property
    def known_opp(self) -> list[int]:
        """The opponent's tiles the player on turn knows of (CGP's second rack, which may be partial or
        empty: e.g. the tiles of a withdrawn phony; every unseen tile once the bag is empty)."""
        return list(self.racks[1])

    def tiles_in_bag(self) -> int:
        """The bag as the player on turn counts it: the unseen tiles less the opponent's rack, which holds
        a full rack (or every unseen tile when fewer remain) whether or not the CGP writes it."""
        return max(0, sum(self.unseen_counts(0)) - max(RACK_SIZE, len(self.racks[1])))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (
            self.board == other.board
            and [sorted(r) for r in self.racks] == [sorted(r) for r in other.racks]
            and self.scores == other.scores
            and self.zeros == other.zeros
            and self.ops == other.ops
        )


# Integer ops: (lowest, highest, default)
_OP_INTS = {
    "bb": (0, MAX_BINGO_BONUS, DEFAULT_BINGO_BONUS),
    "mcnz": (1, MAX_SCORELESS_TURNS, DEFAULT_SCORELESS_TURNS),
}
_OP_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.+-]{{0,{MAX_NAME_CHARS - 1}}}")


def op_int(ops: dict[str, str], key: str) -> int:
    """The integer op `key` (bb, mcnz) or its default, checked against its range."""
    lo, hi, default = _OP_INTS[key]
    if key not in ops:
        return default
    return parse_int(ops[key], f"CGP op {key}", lo, hi)


_ROW_TOKEN = re.compile(r"[0-9]+|\[[^\[\]]*\]|.", re.DOTALL)


def parse_cgp(text: str, check_counts: bool = True) -> Position:
    """Parse a CGP line (reference §5) with validation; opcodes lex, ld, bdn, var, mcnz, bb, bagorder are
    checked, others kept as written.

    check_counts=False admits boards with more tiles of a kind than the distribution holds (test
    boards built to probe cross-sets); positions for play are always checked."""
    text = check_text(text, "CGP", MAX_CGP_CHARS)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise FormatError("CGP is empty")
    fields = text.strip().split(None, 4)
    if len(fields) < 4:
        raise FormatError(
            f"CGP has {len(fields)} fields; expected 'BOARD RACKS SCORES ZEROS [OPS]'"
            " (e.g. '15/.../15 AEINRST/ 0/0 0')"
        )
    board_s, racks_s, scores_s, zeros_s = fields[:4]
    ops = _parse_ops(fields[4] if len(fields) > 4 else "")
    ld = get_distribution(ops.get("ld", "english"))
    board = new_board(ops.get("bdn", DEFAULT_LAYOUT))
    rows = board_s.split("/")
    dim = board.dim
    if len(rows) != dim:
        raise FormatError(f"CGP board has {len(rows)} rows; expected {dim}")
    for r, row in enumerate(rows):
        c = 0
        for tok in _ROW_TOKEN.findall(row):
            if tok[0] in "0123456789":  # the pattern took ASCII digits only
                digits = tok.lstrip("0") or "0"
                n = int(digits) if len(digits) <= 3 else 1000
                if n == 0:
                    raise FormatError(f"CGP board row {r + 1}: a run of {excerpt(tok)} empty squares")
                if c + n > dim:
                    raise FormatError(f"CGP board row {r + 1} has {c + n} squares or more; expected {dim}")
                c += n
                continue
            if c >= dim:
                raise FormatError(f"CGP board row {r + 1} is wider than {dim} squares")
            board.set_tile(r, c, board_tile(ld, tok, f"CGP board row {r + 1}"))
            c += 1
        if c != dim:
            raise FormatError(f"CGP board row {r + 1} has {c} squares; expected {dim}")
    if racks_s.count("/") != 1:
        raise FormatError(f"CGP racks {excerpt(racks_s)}: expected 'ONTURN/OTHER' with one '/'")
    racks: list[list[int]] = []
    for i, part in enumerate(racks_s.split("/")):
        rack = rack_tiles(ld, part, f"CGP rack {i + 1}")
        if len(rack) > RACK_SIZE:
            raise FormatError(f"CGP rack {i + 1} {excerpt(part)} has {len(rack)} tiles; at most {RACK_SIZE}")
        racks.append(rack)
    if scores_s.count("/") != 1:
        raise FormatError(f"CGP scores {excerpt(scores_s)}: expected 'ONTURN/OTHER'")
    s1, s2 = (
        parse_int(x, f"CGP scores {excerpt(scores_s)}: the {('first', 'second')[i]} score",
                  -MAX_SCORE, MAX_SCORE, "minus")
        for i, x in enumerate(scores_s.split("/"))
    )
    mcnz = op_int(ops, "mcnz")
    zeros = parse_int(zeros_s, "CGP consecutive zero turns", -MAX_SCORE, MAX_SCORE, "minus")
    if zeros < 0:
        raise FormatError(f"CGP consecutive zero turns {zeros}: must not be negative")
    if zeros > mcnz:
        raise FormatError(
            f"CGP consecutive zero turns {zeros}: more than the limit of {mcnz} that ends the game (op mcnz)"
        )
    pos = Position(board=board, racks=(racks[0], racks[1]), scores=(s1, s2), zeros=zeros, ops=ops, ld=ld)
    counts = pos.bag_counts()
    if check_counts:
        count_excess(ld, counts, "CGP has")
    order = rack_tiles(ld, ops["bagorder"], "CGP op bagorder") if "bagorder" in ops else None
    if order is not None and check_counts:
        need = [0] * ld.size
        for t in order:
            need[t] += 1
        unseen = pos.unseen_counts(0) if not racks[1] else counts
        short = [ld.label(i) for i in range(ld.size) if need[i] > unseen[i]]
        if short:
            raise FormatError(
                f"CGP op bagorder {excerpt(ops['bagorder'])}: more {', '.join(short)} than are unseen"
            )
    return pos


def _parse_ops(text: str) -> dict[str, str]:
    """`name value; name; ...`: names are lowercased (a MAGPIE-style leading '-' is dropped), each given
    once; values are printable; the ops this engine reads are checked, others kept as written."""
    ops: dict[str, str] = {}
    text = text.strip()
    if not text:
        return ops
    if not text.endswith(";"):
        raise FormatError(f"CGP operations {excerpt(text)}: each must end with ';'")
    for raw in text[:-1].split(";"):
        raw = raw.strip()
        if not raw:
            raise FormatError("CGP operations: empty operation")
        parts = raw.split(None, 1)
        name = parts[0].lstrip("-").lower()
        if not _OP_NAME.fullmatch(name):
            raise FormatError(f"CGP operation {excerpt(parts[0])}: not an operation name")
        if name in ops:
            raise FormatError(f"CGP operation {name} is given twice")
        value = parts[1].strip() if len(parts) > 1 else ""
        if not value.isprintable():
            raise FormatError(f"CGP operation {name} {excerpt(value)}: control or unprintable characters")
        if name in ("lex", "ld", "bdn", "var") and not _NAME.fullmatch(value):
            raise FormatError(f"CGP operation {name} {excerpt(value)}: not a name")
        if name == "var" and value.lower() not in VARIANTS:
            known = ", ".join(VARIANTS)
            raise FormatError(f"CGP operation var {excerpt(value)}: unsupported variant (known: {known})")
        if name in _OP_INTS:
            lo, hi, _ = _OP_INTS[name]
            value = str(parse_int(value, f"CGP op {name}", lo, hi))
        if name == "bagorder" and len(value) > MAX_TILES_CHARS:
            raise FormatError(f"CGP op bagorder {excerpt(value)}: at most {MAX_TILES_CHARS} characters")
        ops[name] = value
    return ops


def write_cgp(pos: Position) -> str:
    ld = pos.ld
    board = pos.board
    rows = []
    for r in range(board.dim):
        out = []
        run = 0
        for c in range(board.dim):
            t = board.tile(r, c)
            if t == 0:
                run += 1
                continue
            if run:
                out.append(str(run))
                run = 0
            out.append(ld.label(t))
        if run:
            out.append(str(run))
        rows.append("".join(out))
    racks = "/".join(ld.rack_str(r) for r in pos.racks)
    text = f"{'/'.join(rows)} {racks} {pos.scores[0]}/{pos.scores[1]} {pos.zeros}"
    if pos.ops:
        text += " " + " ".join(f"{k} {v};" if v else f"{k};" for k, v in pos.ops.items())
    return text


# ------------------------------------------------------------------ GCG

EventType = Literal[
    "play", "pass", "exchange", "phony_returned", "challenge_bonus", "end_rack_points", "end_rack_penalty",
    "time_penalty",
]


@dataclass
class GcgEvent:
    type: EventType
    nick: str
    rack: str = ""              # mover's rack before the event, as written
    position: str = ""          # play: coordinate
    word: str = ""              # play: word ('.' through, lowercase blanks)
    exchanged: str = ""         # exchange: tiles, or a count for hidden exchanges
    score: int = 0              # signed change of the mover's score in this event
    cumulative: int = 0
    note: str = ""
    line: int = field(default=0, compare=False)  # line in the file it was read from (0: not read from a file)


@dataclass
class GcgGame:
    players: list[tuple[str, str]] = field(default_factory=list)  # (nickname, real name)
    pragmas: list[tuple[str, str]] = field(default_factory=list)  # other pragmas in file order
    events: list[GcgEvent] = field(default_factory=list)

    def pragma(self, name: str) -> str | None:
        for k, v in self.pragmas:
            if k == name:
                return v
        return None


_EVENT = re.compile(r">([^:]+):(.*)", re.DOTALL)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_KNOWN_PRAGMAS = {
    "player1", "player2", "title", "description", "id", "lexicon", "game-type", "board-layout",
    "tile-distribution", "tile-set", "tile", "rack1", "rack2", "incomplete", "character-encoding",
}
_SINGLE_PRAGMAS = _KNOWN_PRAGMAS - {"tile", "player1", "player2", "character-encoding"}
# pragmas that may follow the events: the last known racks of an unfinished game, and its mark
_LATE_PRAGMAS = {"rack1", "rack2", "incomplete"}
_UTF8_BOM = b"\xef\xbb\xbf"


def decode_gcg(data: bytes) -> str:
    """UTF-8 when the file starts with a UTF-8 byte-order mark or its first line declares UTF-8, ISO-8859-1
    otherwise; any other declared encoding, and UTF-16/32 files, are rejected."""
    if not isinstance(data, (bytes, bytearray)):
        raise FormatError(f"GCG data must be bytes, not {type(data).__name__}")
    if len(data) > MAX_GCG_CHARS:
        raise FormatError(f"GCG is {len(data)} bytes long; at most {MAX_GCG_CHARS}")
    data = bytes(data)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:4] in (b"\x00\x00\xfe\xff",):
        raise FormatError("GCG is UTF-16 or UTF-32 encoded; only UTF-8 and ISO-8859-1 are supported")
    bom = data.startswith(_UTF8_BOM)
    if bom:
        data = data[len(_UTF8_BOM):]
    first = data.split(b"\n", 1)[0].strip()
    if first.lower().startswith(b"#character-encoding"):
        words = first.split(None, 1)
        enc = words[1].decode("ascii", "replace").strip() if len(words) > 1 else ""
        if enc.upper().replace("_", "-") not in ("UTF-8", "UTF8"):
            raise FormatError(f"GCG line 1: unsupported character encoding {excerpt(enc)} (only UTF-8)")
    elif not bom:
        return data.decode("iso-8859-1")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"GCG: invalid UTF-8 at byte {exc.start}") from None


class _Note:
    """A note under construction: pieces joined once at the end (appending to a growing string is
    quadratic in a file of many short continuation lines)."""

    def __init__(self, event: GcgEvent) -> None:
        self.event = event
        self.parts: list[str] = [event.note] if event.note else []
        self.size = len(event.note)

    def add(self, piece: str) -> None:
        self.parts.append(piece)
        self.size += len(piece)

    def close(self) -> None:
        self.event.note = "".join(self.parts)


def parse_gcg(text: str) -> GcgGame:
    """Parse a GCG record (reference §6). Lines may end in LF, CRLF or CR; a leading byte-order mark is
    ignored. Records beyond MAX_GCG_CHARS, lines beyond MAX_GCG_LINE_CHARS and more than MAX_GCG_EVENTS
    events are refused, as are control characters other than tab."""
    text = check_text(text, "GCG", MAX_GCG_CHARS)
    if text.startswith("\ufeff"):
        text = text[1:]
    # whole-text checks first (C-speed scans), so that the line loop only reads well-formed lines
    lines = _LINE_BREAK.split(text)
    bad = _CONTROL.search(text)
    if bad:
        lineno = len(_LINE_BREAK.findall(text, 0, bad.start())) + 1
        raise FormatError(f"GCG line {lineno}: control character U+{ord(bad.group()):04X}")
    if max(map(len, lines)) > MAX_GCG_LINE_CHARS:
        lineno, size = next((i, n) for i, n in enumerate(map(len, lines), 1) if n > MAX_GCG_LINE_CHARS)
        raise FormatError(f"GCG line {lineno} has {size} characters; at most {MAX_GCG_LINE_CHARS}")
    game = GcgGame()
    note: _Note | None = None
    in_note = False
    seen_event = False
    seen_pragmas: set[str] = set()
    try:
        for lineno, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                in_note = False
                body = line[1:]
                if body.startswith("- ") or body == "-":
                    if note is None:
                        raise FormatError(f"GCG line {lineno}: continuation line with nothing to continue")
                    note.add("\n" + body[2:])
                    in_note = True
                    continue
                if not body or body[0].isspace():
                    name, value = "", body.strip()
                else:
                    words = body.split(None, 1)
                    name, value = words[0], (words[1].strip() if len(words) > 1 else "")
                if name == "note":
                    if note is None:
                        raise FormatError(f"GCG line {lineno}: #note before any event")
                    if note.size:
                        note.add("\n" + value)
                    else:
                        note.parts, note.size = [value], len(value)
                    in_note = True
                    continue
                if name == "character-encoding":
                    if lineno != 1:
                        raise FormatError(f"GCG line {lineno}: #character-encoding must be the first line")
                    continue
                if seen_event and name not in _LATE_PRAGMAS:
                    raise FormatError(
                        f"GCG line {lineno}: pragma #{excerpt(name)[1:-1]} after the first event"
                    )
                if name in _SINGLE_PRAGMAS:
                    if name in seen_pragmas:
                        raise FormatError(f"GCG line {lineno}: #{name} is given twice")
                    seen_pragmas.add(name)
                if name in ("player1", "player2"):
                    _parse_player(game, name, value, lineno)
                    continue
                game.pragmas.append((name, value))
                continue
            if not line.startswith(">"):
                if in_note and note is not None:
                    note.add("\n" + line)
                    continue
                raise FormatError(
                    f"GCG line {lineno}: expected an event ('>NICK: ...') or a pragma ('#...'):"
                    f" {excerpt(line)}"
                )
            in_note = False
            seen_event = True
            if len(game.events) >= MAX_GCG_EVENTS:
                raise FormatError(f"GCG line {lineno}: more than {MAX_GCG_EVENTS} events")
            ev = _parse_event(line, lineno, game)
            game.events.append(ev)
            if note is not None:
                note.close()
            note = _Note(ev)
    finally:
        if note is not None:
            note.close()
    if len(game.players) != 2:
        raise FormatError(f"GCG has {len(game.players)} #player lines; expected 2")
    return game


def _parse_player(game: GcgGame, name: str, value: str, lineno: int) -> None:
    parts = value.split(None, 1)
    if not parts:
        raise FormatError(f"GCG line {lineno}: #{name} needs a nickname")
    idx = int(name[-1]) - 1
    if len(game.players) > idx:
        raise FormatError(f"GCG line {lineno}: #{name} is given twice")
    if len(game.players) != idx:
        raise FormatError(f"GCG line {lineno}: #{name} before #player1")
    nick = parts[0]
    if len(nick) > MAX_NAME_CHARS or ":" in nick or not nick.isprintable():
        raise FormatError(
            f"GCG line {lineno}: nickname {excerpt(nick)} must be at most {MAX_NAME_CHARS} printable"
            " characters without ':'"
        )
    if idx == 1 and nick == game.players[0][0]:
        raise FormatError(f"GCG line {lineno}: both players are named {excerpt(nick)}")
    game.players.append((nick, parts[1] if len(parts) > 1 else nick))


def _parse_event(line: str, lineno: int, game: GcgGame) -> GcgEvent:
    m = _EVENT.fullmatch(line)
    where = f"GCG line {lineno}"
    if not m:
        raise FormatError(f"{where}: malformed event {excerpt(line)}")
    nick = m.group(1).strip()
    nicks = [p[0] for p in game.players]
    if nick not in nicks:
        known = ", ".join(excerpt(n) for n in nicks) or "none"
        raise FormatError(f"{where}: unknown player {excerpt(nick)} (players: {known})")
    toks = m.group(2).split()
    if len(toks) < 2:
        raise FormatError(f"{where}: event must end with a signed score and a cumulative score")
    if toks[-2].startswith("+-") and "(time)" in toks:
        toks[-2] = toks[-2][1:]  # '(time) +-10', as some programs write a time penalty
    score = parse_int(toks[-2], f"{where}: the event's signed score", -MAX_SCORE, MAX_SCORE, "required")
    cum = parse_int(toks[-1], f"{where}: the cumulative score", -MAX_SCORE, MAX_SCORE, "minus")
    mid = toks[:-2]
    ev = GcgEvent(type="pass", nick=nick, score=score, cumulative=cum, line=lineno)
    tok = mid[-1] if mid else ""
    if len(mid) in (1, 2) and tok in ("(challenge)", "(time)"):
        ev.type = "challenge_bonus" if tok == "(challenge)" else "time_penalty"
        ev.rack = mid[0] if len(mid) == 2 else ""
        return ev
    if len(mid) in (1, 2) and tok.startswith("(") and tok.endswith(")"):
        ev.exchanged = tok[1:-1]
        if not ev.exchanged or "(" in ev.exchanged or ")" in ev.exchanged:
            raise FormatError(f"{where}: bad end-of-game rack {excerpt(tok)}")
        if len(mid) == 1:
            ev.type = "end_rack_points"
        else:
            ev.type = "end_rack_penalty"
            ev.rack = mid[0]
        return ev
    if len(mid) in (1, 2) and tok.startswith("-"):
        # pass, phony withdrawn or exchange; the rack may be missing ('>b:  - +0 0')
        ev.rack = mid[0] if len(mid) == 2 else ""
        if tok == "-":
            ev.type = "pass"
        elif tok == "--":
            ev.type = "phony_returned"
        else:
            ev.type = "exchange"
            ev.exchanged = tok[1:]
            if ev.exchanged[0] in "0123456789":
                parse_int(ev.exchanged, f"{where}: the number of exchanged tiles", 1, RACK_SIZE)
        return ev
    if len(mid) in (2, 3):
        # a tile play; the rack may be missing ('>a: 8D WAITED +28 28')
        ev.type = "play"
        if len(mid) == 3:
            ev.rack, ev.position, ev.word = mid
        else:
            ev.position, ev.word = mid
        try:
            parse_coord(ev.position, 21)
        except FormatError as exc:
            raise FormatError(f"{where}: {exc}") from None
        if "(" in ev.word or ")" in ev.word:
            raise FormatError(f"{where}: played-through tiles are written '.', not in parentheses")
        return ev
    raise FormatError(f"{where}: cannot read event {excerpt(line)}")


def write_gcg(game: GcgGame) -> str:
    lines = ["#character-encoding UTF-8"]
    for i, (nick, real) in enumerate(game.players):
        lines.append(f"#player{i + 1} {nick} {real}".rstrip())
    for name, value in game.pragmas:
        lines.append(f"#{name} {value}".rstrip())
    for ev in game.events:
        sc = f"{ev.score:+d}"
        head = f">{ev.nick}:"
        if ev.type == "play":
            body = f"{ev.rack} {ev.position} {ev.word}"
        elif ev.type == "pass":
            body = f"{ev.rack} -"
        elif ev.type == "exchange":
            body = f"{ev.rack} -{ev.exchanged}"
        elif ev.type == "phony_returned":
            body = f"{ev.rack} --"
        elif ev.type == "challenge_bonus":
            body = f"{ev.rack} (challenge)".strip()
        elif ev.type == "time_penalty":
            body = f"{ev.rack} (time)".strip()
        elif ev.type == "end_rack_points":
            body = f"({ev.exchanged})"
        else:
            body = f"{ev.rack} ({ev.exchanged})"
        lines.append(f"{head} {body} {sc} {ev.cumulative}")
        if ev.note:
            note_lines = ev.note.split("\n")
            lines.append(f"#note {note_lines[0]}".rstrip())
            lines.extend(f"#- {nl}".rstrip() for nl in note_lines[1:])
    return "\n".join(lines) + "\n"


def read_gcg_file(path: str) -> GcgGame:
    """Read a GCG file (at most MAX_GCG_CHARS bytes; larger files are refused unread)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_GCG_CHARS:
            raise FormatError(f"GCG file is {size} bytes long; at most {MAX_GCG_CHARS}")
        data = fh.read(MAX_GCG_CHARS + 1)
    return parse_gcg(decode_gcg(data))
