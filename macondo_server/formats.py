"""Text formats: CGP positions, move notation and GCG game records (reference §5, §6, §7).

This is the only text <-> tile translator on the Python side; it uses the engine's alphabet and board.
Every parse error is a FormatError whose message names the field at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import STANDARD15, Board

RACK_SIZE = 7
DEFAULT_LAYOUT = "CrosswordGame"
LAYOUTS = {"CrosswordGame": STANDARD15, "standard15": STANDARD15}
DISTRIBUTIONS = {"english": LetterDistribution.english}


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


def get_distribution(name: str = "english") -> LetterDistribution:
    factory = DISTRIBUTIONS.get(name.lower())
    if factory is None:
        raise FormatError(f"unknown letter distribution {name!r} (known: {', '.join(sorted(DISTRIBUTIONS))})")
    return factory()


def new_board(layout: str = DEFAULT_LAYOUT) -> Board:
    text = LAYOUTS.get(layout)
    if text is None:
        raise FormatError(f"unknown board layout {layout!r} (known: {', '.join(sorted(LAYOUTS))})")
    return Board(text, layout)


# ------------------------------------------------------------------ coordinates


def col_letter(col: int) -> str:
    return chr(ord("A") + col)


def format_coord(row: int, col: int, vertical: bool) -> str:
    return f"{col_letter(col)}{row + 1}" if vertical else f"{row + 1}{col_letter(col)}"


_COORD_H = re.compile(r"^(\d+)([A-Za-z])$")
_COORD_V = re.compile(r"^([A-Za-z])(\d+)$")


def parse_coord(text: str, dim: int = 15) -> tuple[int, int, bool]:
    """'8G' -> (7, 6, False) horizontal; 'H8' -> (7, 7, True) vertical."""
    m = _COORD_H.match(text)
    vertical = False
    if m:
        row_s, col_s = m.group(1), m.group(2)
    else:
        m = _COORD_V.match(text)
        if not m:
            raise FormatError(f"bad coordinate {text!r}: expected row-then-column (8G) or column-then-row (H8)")
        col_s, row_s = m.group(1), m.group(2)
        vertical = True
    row = int(row_s) - 1
    col = ord(col_s.upper()) - ord("A")
    if not (0 <= row < dim and 0 <= col < dim):
        raise FormatError(f"coordinate {text!r} is off the {dim}x{dim} board")
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
    to the board's tiles, new tiles only on empty squares, and the word not running on into tiles."""
    s = " ".join(text.strip().split())
    if not s:
        raise FormatError("empty move")
    low = s.lower()
    if low in ("pass", "(pass)", "-"):
        return Move("pass")
    parts = s.split(" ")
    if parts[0].lower() in ("exch", "exchange") or (s.startswith("(exch ") and s.endswith(")")):
        if s.startswith("("):
            parts = s[1:-1].split(" ")
        if len(parts) != 2:
            raise FormatError(f"bad exchange {text!r}: expected 'exch TILES'")
        try:
            exchanged = ld.parse_rack(parts[1].upper())
        except ValueError as exc:
            raise FormatError(f"bad exchange {text!r}: {exc}") from None
        if not 1 <= len(exchanged) <= RACK_SIZE:
            raise FormatError(f"bad exchange {text!r}: exchange 1 to {RACK_SIZE} tiles")
        return Move("exchange", tiles=tuple(sorted(exchanged)))
    if len(parts) != 2:
        raise FormatError(f"bad move {text!r}: expected 'COORD WORD', 'exch TILES' or 'pass'")
    dim = board.dim
    row, col, vertical = parse_coord(parts[0], dim)
    word = parts[1]
    # expand parentheses: P(O)ND -> letters marked as played-through
    labels: list[tuple[str, bool]] = []  # (label, through)
    depth = 0
    i = 0
    while i < len(word):
        ch = word[i]
        if ch == "(":
            if depth:
                raise FormatError(f"bad move {text!r}: nested parentheses")
            depth = 1
        elif ch == ")":
            if not depth:
                raise FormatError(f"bad move {text!r}: unbalanced ')'")
            depth = 0
        elif ch == "[":
            j = word.find("]", i)
            if j < 0:
                raise FormatError(f"bad move {text!r}: unclosed '['")
            labels.append((word[i : j + 1], bool(depth)))
            i = j
        else:
            labels.append((ch, bool(depth) or ch == "."))
        i += 1
    if depth:
        raise FormatError(f"bad move {text!r}: unclosed '('")
    if not labels:
        raise FormatError(f"bad move {text!r}: no tiles")
    dr, dc = (1, 0) if vertical else (0, 1)
    end_r, end_c = row + dr * (len(labels) - 1), col + dc * (len(labels) - 1)
    if end_r >= dim or end_c >= dim:
        raise FormatError(f"bad move {text!r}: the word runs off the board")
    tiles: list[int] = []
    for k, (lab, through) in enumerate(labels):
        r, c = row + dr * k, col + dc * k
        on_board = board.tile(r, c)
        sq = format_coord(r, c, False)
        if through:
            if on_board == 0:
                raise FormatError(f"bad move {text!r}: square {sq} is empty but the move plays through it")
            if lab != ".":
                try:
                    want = ld.parse_board_tile(lab.strip("[]") if len(lab) > 1 else lab)
                except ValueError as exc:
                    raise FormatError(f"bad move {text!r}: {exc}") from None
                if (want & 0x7F) != (on_board & 0x7F):
                    raise FormatError(
                        f"bad move {text!r}: square {sq} holds {ld.label(on_board)}, not {lab}"
                    )
            tiles.append(0)
        else:
            try:
                ml = ld.parse_board_tile(lab.strip("[]") if len(lab) > 1 else lab)
            except ValueError as exc:
                raise FormatError(f"bad move {text!r}: {exc}") from None
            if on_board != 0:
                # a letter written over a board tile is read as played-through when it matches
                if (on_board & 0x7F) != (ml & 0x7F):
                    raise FormatError(f"bad move {text!r}: square {sq} is occupied by {ld.label(on_board)}")
                tiles.append(0)
                continue
            tiles.append(ml)
    if all(t == 0 for t in tiles):
        raise FormatError(f"bad move {text!r}: it places no tiles")
    before = (row - dr, col - dc)
    after = (end_r + dr, end_c + dc)
    for r, c in (before, after):
        if 0 <= r < dim and 0 <= c < dim and board.tile(r, c) != 0:
            raise FormatError(
                f"bad move {text!r}: the word continues into the tile at {format_coord(r, c, False)}"
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
        return self.ld.parse_rack(self.ops["bagorder"])

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
        return sum(self.bag_counts())

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


_ROW_TOKEN = re.compile(r"\d+|\[[^\]]*\]|.")


def parse_cgp(text: str, check_counts: bool = True) -> Position:
    """Parse a CGP line (reference §5) with validation; opcodes lex, ld, bdn, var, mcnz, bb, bagorder.

    check_counts=False admits boards with more tiles of a kind than the distribution holds (test
    boards built to probe cross-sets); positions for play are always checked."""
    if not isinstance(text, str) or not text.strip():
        raise FormatError("CGP is empty")
    fields = text.strip().split(None, 4)
    if len(fields) < 4:
        raise FormatError(
            f"CGP has {len(fields)} fields; expected 'BOARD RACKS SCORES ZEROS [OPS]' (e.g. '15/.../15 AEINRST/ 0/0 0')"
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
            if tok.isdigit():
                n = int(tok)
                if n == 0:
                    raise FormatError(f"CGP board row {r + 1}: a run of 0 empty squares")
                c += n
                continue
            if c >= dim:
                raise FormatError(f"CGP board row {r + 1} is wider than {dim} squares")
            label = tok[1:-1] if tok.startswith("[") else tok
            try:
                ml = ld.parse_board_tile(label)
            except ValueError:
                raise FormatError(f"CGP board row {r + 1}: unknown tile {tok!r}") from None
            board.set_tile(r, c, ml)
            c += 1
        if c != dim:
            raise FormatError(f"CGP board row {r + 1} has {c} squares; expected {dim}")
    if racks_s.count("/") != 1:
        raise FormatError(f"CGP racks {racks_s!r}: expected 'ONTURN/OTHER' with one '/'")
    racks: list[list[int]] = []
    for i, part in enumerate(racks_s.split("/")):
        try:
            rack = ld.parse_rack(part)
        except ValueError as exc:
            raise FormatError(f"CGP rack {i + 1} {part!r}: {exc}") from None
        if len(rack) > RACK_SIZE:
            raise FormatError(f"CGP rack {i + 1} {part!r} has {len(rack)} tiles; at most {RACK_SIZE}")
        racks.append(rack)
    if scores_s.count("/") != 1:
        raise FormatError(f"CGP scores {scores_s!r}: expected 'ONTURN/OTHER'")
    try:
        s1, s2 = (int(x) for x in scores_s.split("/"))
    except ValueError:
        raise FormatError(f"CGP scores {scores_s!r}: not integers") from None
    try:
        zeros = int(zeros_s)
    except ValueError:
        raise FormatError(f"CGP consecutive zero turns {zeros_s!r}: not an integer") from None
    if zeros < 0:
        raise FormatError(f"CGP consecutive zero turns {zeros}: must not be negative")
    for key in ("mcnz", "bb"):
        if key in ops:
            try:
                v = int(ops[key])
            except ValueError:
                raise FormatError(f"CGP opcode {key} {ops[key]!r}: not an integer") from None
            if v < 0 or (key == "mcnz" and v == 0):
                raise FormatError(f"CGP opcode {key} {v}: out of range")
    pos = Position(board=board, racks=(racks[0], racks[1]), scores=(s1, s2), zeros=zeros, ops=ops, ld=ld)
    counts = pos.bag_counts()
    over = [ld.label(i) for i in range(ld.size) if counts[i] < 0]
    if over and check_counts:
        detail = ", ".join(f"{lab} ({ld.count(ld.letter_ml(lab) if lab != '?' else 0)} in the bag)" for lab in over)
        raise FormatError(f"CGP has more tiles than the distribution holds: {detail}")
    if "bagorder" in ops and check_counts:
        try:
            order = ld.parse_rack(ops["bagorder"])
        except ValueError as exc:
            raise FormatError(f"CGP opcode bagorder: {exc}") from None
        need = [0] * ld.size
        for t in order:
            need[t] += 1
        unseen = pos.unseen_counts(0) if not racks[1] else counts
        if any(need[i] > unseen[i] for i in range(ld.size)):
            raise FormatError(f"CGP opcode bagorder {ops['bagorder']!r}: tiles that are not unseen")
    return pos


def _parse_ops(text: str) -> dict[str, str]:
    ops: dict[str, str] = {}
    text = text.strip()
    if not text:
        return ops
    if not text.endswith(";"):
        raise FormatError(f"CGP operations {text!r}: each must end with ';'")
    for raw in text[:-1].split(";"):
        raw = raw.strip()
        if not raw:
            raise FormatError("CGP operations: empty operation")
        parts = raw.split(None, 1)
        name = parts[0].lstrip("-")
        ops[name] = parts[1].strip() if len(parts) > 1 else ""
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


_EVENT = re.compile(r"^>([^:]+):(.*)$")
_SCORE = re.compile(r"^[+-]\d+$")
_KNOWN_PRAGMAS = {
    "player1", "player2", "title", "description", "id", "lexicon", "game-type", "board-layout",
    "tile-distribution", "tile-set", "tile", "rack1", "rack2", "incomplete", "character-encoding",
}


def decode_gcg(data: bytes) -> str:
    """UTF-8 when the first line declares it, ISO-8859-1 otherwise; any other declared encoding is rejected."""
    first = data.split(b"\n", 1)[0].strip()
    if first.lower().startswith(b"#character-encoding"):
        enc = first.split(None, 1)[1].decode("ascii", "replace").strip() if len(first.split()) > 1 else ""
        if enc.upper().replace("_", "-") not in ("UTF-8", "UTF8"):
            raise FormatError(f"GCG line 1: unsupported character encoding {enc!r} (only UTF-8)")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"GCG: invalid UTF-8 at byte {exc.start}") from None
    return data.decode("iso-8859-1")


def parse_gcg(text: str) -> GcgGame:
    game = GcgGame()
    last_note_target: GcgEvent | None = None
    in_note = False
    seen_event = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            in_note = False
            body = line[1:]
            if body.startswith("- ") or body == "-":
                if last_note_target is None:
                    raise FormatError(f"GCG line {lineno}: continuation line with nothing to continue")
                last_note_target.note += "\n" + body[2:]
                in_note = True
                continue
            name, _, value = body.partition(" ")
            value = value.strip()
            if name == "note":
                if last_note_target is None:
                    raise FormatError(f"GCG line {lineno}: #note before any event")
                last_note_target.note = (last_note_target.note + "\n" + value) if last_note_target.note else value
                in_note = True
                continue
            if name == "character-encoding":
                if lineno != 1:
                    raise FormatError(f"GCG line {lineno}: #character-encoding must be the first line")
                continue
            if seen_event:
                raise FormatError(f"GCG line {lineno}: pragma #{name} after the first event")
            if name in ("player1", "player2"):
                parts = value.split(None, 1)
                if not parts:
                    raise FormatError(f"GCG line {lineno}: #{name} needs a nickname")
                idx = int(name[-1]) - 1
                if len(game.players) != idx:
                    raise FormatError(f"GCG line {lineno}: #{name} out of order")
                nick = parts[0]
                if idx == 1 and nick == game.players[0][0]:
                    raise FormatError(f"GCG line {lineno}: both players are named {nick!r}")
                game.players.append((nick, parts[1] if len(parts) > 1 else nick))
                continue
            game.pragmas.append((name, value))
            continue
        if not line.startswith(">"):
            if in_note and last_note_target is not None:
                last_note_target.note += "\n" + line
                continue
            raise FormatError(f"GCG line {lineno}: expected an event ('>NICK: ...') or a pragma ('#...'): {line!r}")
        in_note = False
        seen_event = True
        ev = _parse_event(line, lineno, game)
        game.events.append(ev)
        last_note_target = ev
    if len(game.players) != 2:
        raise FormatError(f"GCG has {len(game.players)} #player lines; expected 2")
    return game


def _parse_event(line: str, lineno: int, game: GcgGame) -> GcgEvent:
    m = _EVENT.match(line)
    if not m:
        raise FormatError(f"GCG line {lineno}: malformed event {line!r}")
    nick = m.group(1).strip()
    nicks = [p[0] for p in game.players]
    if nick not in nicks:
        raise FormatError(f"GCG line {lineno}: unknown player {nick!r} (players: {', '.join(nicks) or 'none'})")
    toks = m.group(2).split()
    if len(toks) < 2 or not _SCORE.match(toks[-2]) or not toks[-1].lstrip("-").isdigit():
        raise FormatError(f"GCG line {lineno}: event must end with a signed score and a cumulative score")
    score, cum = int(toks[-2]), int(toks[-1])
    mid = toks[:-2]
    ev = GcgEvent(type="pass", nick=nick, score=score, cumulative=cum)
    if len(mid) == 1:
        tok = mid[0]
        if tok == "(challenge)":
            ev.type = "challenge_bonus"
        elif tok == "(time)":
            ev.type = "time_penalty"
        elif tok.startswith("(") and tok.endswith(")"):
            ev.type = "end_rack_points"
            ev.exchanged = tok[1:-1]
        else:
            raise FormatError(f"GCG line {lineno}: cannot read event {line!r}")
        return ev
    if len(mid) == 2:
        ev.rack, tok = mid
        if tok == "-":
            ev.type = "pass"
        elif tok == "--":
            ev.type = "phony_returned"
        elif tok.startswith("-"):
            ev.type = "exchange"
            ev.exchanged = tok[1:]
        elif tok == "(challenge)":
            ev.type = "challenge_bonus"
        elif tok == "(time)":
            ev.type = "time_penalty"
        elif tok.startswith("(") and tok.endswith(")"):
            ev.type = "end_rack_penalty"
            ev.exchanged = tok[1:-1]
        else:
            raise FormatError(f"GCG line {lineno}: cannot read event {line!r}")
        return ev
    if len(mid) == 3:
        ev.type = "play"
        ev.rack, ev.position, ev.word = mid
        try:
            parse_coord(ev.position, 21)
        except FormatError as exc:
            raise FormatError(f"GCG line {lineno}: {exc}") from None
        if "(" in ev.word or ")" in ev.word:
            raise FormatError(f"GCG line {lineno}: played-through tiles are written '.', not in parentheses")
        return ev
    raise FormatError(f"GCG line {lineno}: cannot read event {line!r}")


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
    with open(path, "rb") as fh:
        return parse_gcg(decode_gcg(fh.read()))
