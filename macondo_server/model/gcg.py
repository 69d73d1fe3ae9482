"""GCG game records: read (UTF-8 or the Latin-1 legacy encoding), validated and written back.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

from macondo_server.model.coords import parse_coord
from macondo_server.model.text import (
    MAX_GCG_CHARS,
    MAX_GCG_EVENTS,
    MAX_GCG_LINE_CHARS,
    MAX_NAME_CHARS,
    MAX_SCORE,
    FormatError,
    check_text,
    excerpt,
    parse_int,
)
from macondo_server.model.tiles import RACK_SIZE

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
    """Parse a GCG record. Lines may end in LF, CRLF or CR; a leading byte-order mark is
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
