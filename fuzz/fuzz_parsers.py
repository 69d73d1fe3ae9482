"""Mutation fuzzing of the text parsers: CGP positions, GCG records (parse, decode and replay) and move
notation (parsed against real boards, then committed).

Every input must either parse, round-trip and be usable by the engine without an exception, or raise
FormatError with a message of at most MAX_MESSAGE_CHARS characters, within HANG_SECONDS. Anything else is
a finding: an unexpected exception type (with a traceback summary), a slow input, an oversized message or
a round-trip failure. Offending inputs are saved to --out (raw UTF-8 bytes, surrogates passed through,
plus findings.jsonl).

Run: .venv/bin/python fuzz/fuzz_parsers.py [--per-parser N] [--seed S] [--parsers cgp,gcg,move] [--out DIR]

Prints one line per parser, `PARSER inputs=N seconds=T per_second=R parsed=P findings=F`, then the findings
grouped by signature. Exit status 1 when there are findings. tests/test_fuzz_parsers.py runs the same
campaign briefly in the default suite and longer under `-m slow`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine_cy.movegen import MoveGen
from macondo_server.engine.lexicon import Lexicon, LexiconRegistry
from macondo_server.engine.replay import commit, game_from_position, position_from_game, replay_gcg
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import decode_gcg, parse_gcg, write_gcg
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import (
    MAX_CGP_CHARS,
    MAX_GCG_LINE_CHARS,
    MAX_MOVE_CHARS,
    MAX_TILES_CHARS,
    FormatError,
)

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("MACONDO_SHARED_DIR", ROOT.parent / "shared"))

MAX_MESSAGE_CHARS = 300      # an error message must stay this short whatever the input
HANG_SECONDS = 2.0           # an input taking longer is a finding
ABORT_SECONDS = 30           # an input still running after this is interrupted (SIGALRM) and reported
EMPTY = "/".join(["15"] * 15)

# ------------------------------------------------------------------ seeds

BUILTIN_GCGS = [
    """#character-encoding UTF-8
#player1 ann Ann Smith
#player2 bob Bob
#lexicon NWL20
>ann: ADEIRTW 8D WAITED +28 28
#note nice
more note
>bob: EEGLNOS F5 LEG.ONS +12 12
>ann: ?CDEHRS -CDH +0 28
>bob: AIIOUUV - +0 12
>ann: ?EHRSTU -3 +0 28
>bob: AIIOUUV J2 VIA +14 26
>bob: AIIOUUV -- -14 12
>ann: ?EHRSTU (challenge) +5 33
>ann: (challenge) +5 38
>ann: ?EHRSTU (time) -10 28
>ann: (FIT) +12 40
""",
    "#player1 a A\n#player2 b B\n>a: ADEIRTW 8D WAITED +28 28\n>b: EEGLNOS F5 LEG.ONS +12 12\n",
    "\ufeff#character-encoding UTF-8\r\n#player1 a A\r\n#player2 b B\r\n>a: ADEIRTW 8D WAITED +28 28\r\n"
    ">b: AIIOUUV -AIIOUUV +0 0\r\n>a: EEGLNOS F5 LEG.ONS +12 40\r\n",
]

BUILTIN_CGPS = [
    f"{EMPTY} AEINRST/ 0/0 0",
    f"{EMPTY} ?AB/CD 10/-5 3 lex CSW21; bagorder EEZ;",
    "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
    "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0 lex NWL20;",
    "12D2/1U10O2/1p10L2/1R1C3KANJIS2/1I1O3A2U4/1G1T3I2I4/1H1E3Z2C1LOO/1TED3E1BYWORD/2Q4N3AXE1/"
    "1RuBIGOS3I3/F1A5WEAVE2/O1T8E3/V1E5LOURY2/ENSNARL2HM4/A6TEMP4 DEFNNPT/ 394/365 0 lex NWL20;",
    "BEDEL10/R1R9U2/O1IT1Q5OM2/W1BIDI4YUM2/N2XI5AT3/E3G4T1R3/S1VOILE2OKA3/T3T1DISPACED1/"
    "9AWE1O1/9Z1s1FA/14R/13GO/13AH/3JUVIE4UTA/INRO3FLENCHES ?ANNOPY/AEGILNS 344/368 0 lex CSW21;",
    f"{EMPTY} IQ/ 0/0 5 mcnz 6; bb 35; ld english; bdn CrosswordGame; var classic; gid abc; lm 8G QI;",
]

BUILTIN_MOVES = ["8G QI", "H8 QI", "2L P.ND", "2L P(O)ND", "8D WAtER", "exch ABC?", "(exch ?AB)", "pass",
                 "(Pass)", "14H .AX", "14H (T)AX", "exchange Q", "-", "15A ZZZ"]


def shared_cgps() -> list[str]:
    path = SHARED / "cases" / "cases.jsonl"
    out = []
    if path.is_file():
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                cgp = json.loads(line).get("cgp")
                if isinstance(cgp, str):
                    out.append(cgp)
    return out


def shared_gcgs() -> list[bytes]:
    folder = SHARED / "cases" / "gcg"
    return [p.read_bytes() for p in sorted(folder.glob("*.gcg"))] if folder.is_dir() else []


def autoplay_gcgs(lex: Lexicon, games: int, seed: int) -> list[str]:
    """Finished self-play games as GCG text (realistic, long records for replay)."""
    from macondo_server.analysis.selfplay import BotSpec, run_autoplay

    with tempfile.TemporaryDirectory() as d:
        run_autoplay(BotSpec(lex, lex.klv, "one"), BotSpec(lex, lex.klv, "two"), games, seed=seed, gcg_dir=d)
        return [p.read_text(encoding="utf-8") for p in sorted(Path(d).glob("*.gcg"))]


def random_cgp(rng: random.Random, ld) -> str:
    """A random position within the distribution: tiles on random squares, racks from the rest."""
    pool = [ml for ml in range(ld.size) for _ in range(ld.count(ml))]
    rng.shuffle(pool)
    rows = [["."] * 15 for _ in range(15)]
    n_board = rng.randint(0, 70)
    squares = rng.sample([(r, c) for r in range(15) for c in range(15)], n_board)
    for (r, c), t in zip(squares, pool, strict=False):
        rows[r][c] = ld.label((rng.randint(1, ld.size - 1) | 0x80) if t == 0 else t)
    rest = pool[n_board:]
    n1, n2 = rng.randint(0, 7), rng.randint(0, 7)
    board = []
    for row in rows:
        out, run = "", 0
        for ch in row:
            if ch == ".":
                run += 1
            else:
                out += (str(run) if run else "") + ch
                run = 0
        board.append(out + (str(run) if run else ""))
    mcnz = rng.choice([None, 1, 2, 6, 100])
    zeros = rng.randint(0, mcnz if mcnz else 6)
    ops = rng.choice(["", " lex NWL20;", " lex CSW21; ld english;", " bb 0;", " bb 1000;", " oru;"])
    if mcnz is not None:
        ops += f" mcnz {mcnz};"
    if rng.random() < 0.2 and len(rest) > n1 + n2:
        unseen = rest[n1:]
        ops += f" bagorder {ld.rack_str(rng.sample(unseen, rng.randint(0, min(10, len(unseen)))))};"
    s1, s2 = rng.randint(-300, 900), rng.randint(-300, 900)
    racks = f"{ld.rack_str(rest[:n1])}/{ld.rack_str(rest[n1:n1 + n2])}"
    return f"{'/'.join(board)} {racks} {s1}/{s2} {zeros}{ops}"


# ------------------------------------------------------------------ mutation

NUMBERS = [
    "0", "-0", "1", "-1", "2", "6", "7", "8", "14", "15", "16", "21", "22", "99", "1000", "1001", "99999",
    "100000", "-99999", "-100000", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
    "9" * 30, "9" * 5000, "²", "٣", "１", "1_0", "0x1", "1e3", "+5", "--10", "+-1", "-", "+", "00", "007",
    "٣٣", "𝟙",
]
TOKENS = [
    "/", "//", ";", ";;", " ", "  ", "\t", "\n", "\r\n", "\r", ":", ">", "#", "#note ", "#- ", "(", ")",
    "()", "[", "]", "[]", "[CH]", "[A]", "[a]", "[?]", "[[A]", "?", ".", "-", "--", "+", "(challenge)",
    "(time)", "(exch ", "exch ", "exchange ", "pass", "lex ", "ld ", "bdn ", "var ", "mcnz ", "bb ",
    "bagorder ", "-lex ", "LEX ", "gid ", "lm 8G QI", "oru", "english", "ENGLISH", "klingon", "CrosswordGame",
    "SuperCrosswordGame", "standard15", "classic", "wordsmog", "SCOWL70", "NWL20", "../x", "\x00", "\x01",
    "\x1a", "\x7f", "\x85", "\xa0", "\ufeff", "\u2028", "\u3000", "ı", "ß", "é", "É", "Ω", "ﬁ", "\u212a", "😀",
    "\ud800", "Z", "q", "?", "#player1 ", "#player2 ", "#character-encoding UTF-8",
    "#character-encoding latin-1", "#lexicon X", "#tile CH ch", "#incomplete", "#rack1 ABC", ">", ">a:", "A1",
    "O15", "P16", "V21", "8G", "G8",
    "ZZZZZ", "?????", "AEINRST", "AAAAAAAAAA",
]
CHARS = (
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789?./;:-+()[]# >\t\n\r\x00\x0b\x0c\x1c\x85"
    "\xa0²٣éßıΩ\ufeff\u2028😀\ud800"
)


class Mutator:
    """Stacked random edits of a text: deletions, insertions of interesting tokens and numbers, digit-run
    replacements, slice duplication and swaps, case changes, crossover with another seed, line edits and,
    rarely, blow-ups past the length limits."""

    def __init__(self, rng: random.Random, corpus: list[str]) -> None:
        self.rng = rng
        self.corpus = corpus
        self.ops: list[Callable[[str], str]] = [
            self.delete, self.insert_token, self.insert_char, self.replace_char, self.duplicate, self.swap,
            self.truncate, self.number, self.number, self.swap_tokens, self.case, self.crossover,
            self.line_op, self.line_op, self.token_op,
        ]

    def pos(self, s: str) -> int:
        return self.rng.randint(0, len(s))

    def span(self, s: str) -> tuple[int, int]:
        a = self.pos(s)
        return a, min(len(s), a + self.rng.choice([1, 1, 2, 3, 5, 8, 20, 100]))

    def delete(self, s: str) -> str:
        a, b = self.span(s)
        return s[:a] + s[b:]

    def insert_token(self, s: str) -> str:
        a = self.pos(s)
        return s[:a] + self.rng.choice(TOKENS) + s[a:]

    def insert_char(self, s: str) -> str:
        a = self.pos(s)
        return s[:a] + self.rng.choice(CHARS) + s[a:]

    def replace_char(self, s: str) -> str:
        if not s:
            return s
        a = self.rng.randrange(len(s))
        return s[:a] + self.rng.choice(CHARS) + s[a + 1:]

    def duplicate(self, s: str) -> str:
        a, b = self.span(s)
        return s[:b] + s[a:b] * self.rng.choice([1, 1, 2, 3, 10]) + s[b:]

    def swap(self, s: str) -> str:
        a, b = self.span(s)
        c, d = self.span(s)
        if b <= c:
            return s[:a] + s[c:d] + s[b:c] + s[a:b] + s[d:]
        return s

    def truncate(self, s: str) -> str:
        return s[: self.pos(s)]

    def number(self, s: str) -> str:
        runs = [i for i, ch in enumerate(s) if ch.isdigit() and (i == 0 or not s[i - 1].isdigit())]
        if not runs:
            return self.insert_token(s)
        a = self.rng.choice(runs)
        b = a
        while b < len(s) and s[b].isdigit():
            b += 1
        return s[:a] + self.rng.choice(NUMBERS) + s[b:]

    def swap_tokens(self, s: str) -> str:
        toks = s.split(" ")
        if len(toks) < 2:
            return s
        i, j = self.rng.randrange(len(toks)), self.rng.randrange(len(toks))
        toks[i], toks[j] = toks[j], toks[i]
        return " ".join(toks)

    def token_op(self, s: str) -> str:
        toks = s.split(" ")
        i = self.rng.randrange(len(toks))
        choice = self.rng.random()
        if choice < 0.4:
            toks[i] = self.rng.choice(TOKENS + NUMBERS)
        elif choice < 0.7:
            del toks[i]
        else:
            toks.insert(i, toks[self.rng.randrange(len(toks))])
        return " ".join(toks)

    def case(self, s: str) -> str:
        a, b = self.span(s)
        f = self.rng.choice([str.lower, str.upper, str.swapcase])
        return s[:a] + f(s[a:b]) + s[b:]

    def crossover(self, s: str) -> str:
        other = self.rng.choice(self.corpus)
        return s[: self.pos(s)] + other[self.pos(other):]

    def line_op(self, s: str) -> str:
        lines = s.split("\n")
        if len(lines) < 2:
            return self.token_op(s)
        i = self.rng.randrange(len(lines))
        choice = self.rng.random()
        if choice < 0.25:
            del lines[i]
        elif choice < 0.5:
            lines.insert(i, lines[self.rng.randrange(len(lines))])
        elif choice < 0.7:
            j = self.rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif choice < 0.9:
            other = self.rng.choice(self.corpus).split("\n")
            lines[i] = self.rng.choice(other)
        else:
            lines = lines[: i + 1]
        return "\n".join(lines)

    def blow_up(self, s: str, limit: int) -> str:
        """Past a length limit: a slice repeated, or one long token."""
        a, b = self.span(s)
        piece = s[a:b] or "A"
        target = self.rng.choice([limit, limit + 1, 2 * limit, 20 * limit])
        return s[:a] + piece * (target // len(piece) + 1) + s[b:]

    def mutate(self, s: str, limit: int) -> str:
        if self.rng.random() < 0.004:
            return self.blow_up(s, limit)
        for _ in range(self.rng.choice([1, 1, 1, 2, 2, 3, 4, 6])):
            s = self.rng.choice(self.ops)(s)
        return s


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Byte-level edits for decode_gcg: invalid UTF-8, other encodings' marks, stray high bytes."""
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4])):
        choice = rng.random()
        a = rng.randint(0, len(b))
        if choice < 0.3:
            b[a:a] = bytes([rng.randrange(256)])
        elif choice < 0.5 and b:
            b[min(a, len(b) - 1)] = rng.randrange(256)
        elif choice < 0.6:
            b[a:a] = rng.choice(
                [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\x85", b"\x00"]
            )
        elif choice < 0.7:
            b[0:0] = rng.choice([b"#character-encoding UTF-8\n", b"#character-encoding latin1\n",
                                 b"#character-encoding\n", b"\xef\xbb\xbf", b"#character-encoding utf_8\r\n"])
        elif b:
            del b[a:a + rng.choice([1, 2, 10])]
    return bytes(b)


# ------------------------------------------------------------------ the oracle


class RoundTripError(AssertionError):
    """A parsed input that does not come back the same, or an engine state the parsers refuse."""


class EngineRefusal(AssertionError):
    """A position that parses (tile counts checked) but cannot become an engine game."""


@dataclass
class Finding:
    parser: str
    kind: str                   # exception | hang | message | roundtrip | engine
    signature: str              # groups findings with one cause
    detail: str
    data: bytes

    def to_json(self) -> dict:
        return {"parser": self.parser, "kind": self.kind, "signature": self.signature, "detail": self.detail,
                "length": len(self.data)}


def _as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")


def _check_message(exc: FormatError) -> None:
    msg = str(exc)
    if len(msg) > MAX_MESSAGE_CHARS:
        raise _Oversized(msg)


class _Oversized(Exception):
    pass


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


class Oracle:
    """The properties each parser must keep, as check functions: each returns 0 when the input was refused
    with a FormatError, 1 when it parsed (and round-tripped) but the engine refused it with a FormatError,
    2 when the engine took it too (position built, move committed, record replayed); anything else raises.
    A CGP that parses must always become an engine game."""

    def __init__(self, lex: Lexicon) -> None:
        self.lex = lex
        self.ld = lex.ld
        self.gen = MoveGen(lex.kwg, lex.ld, lex.klv)

    def refuse(self, fn, *args):
        """fn(*args), or None when it raises FormatError (with a short message)."""
        try:
            return fn(*args)
        except FormatError as exc:
            _check_message(exc)
            return None

    def check_cgp(self, text: str) -> int:
        pos = self.refuse(parse_cgp, text)
        if pos is None:
            return 0
        self.cgp_roundtrip(pos)
        try:
            game = game_from_position(pos, self.lex, 1)
        except FormatError as exc:
            raise EngineRefusal(f"parsed, but the engine refuses it: {exc}") from None
        again = write_cgp(position_from_game(game, pos.ops))
        try:
            parse_cgp(again)
        except FormatError as exc:
            raise RoundTripError(f"the engine's state {again!r} does not parse: {exc}") from None
        rack = game.rack(0)
        if rack and not game.game_over:
            bag = max(0, game.bag_size)
            self.gen.bingo_bonus = pos.bingo_bonus
            self.gen.generate(game.board, rack, bag, None, mode="top", n=3)
        return 2

    def cgp_roundtrip(self, pos: Position) -> None:
        canonical = write_cgp(pos)
        try:
            pos2 = parse_cgp(canonical)
        except FormatError as exc:
            raise RoundTripError(f"written as {canonical!r}, which does not parse: {exc}") from None
        if pos2 != pos:
            raise RoundTripError(f"written as {canonical!r}, which parses to a different position")
        if write_cgp(pos2) != canonical:
            raise RoundTripError(f"{canonical!r} is written differently the second time")

    def check_move(self, text: str, pos: Position, tileorder: str | None = None) -> int:
        move = self.refuse(parse_move, text, pos.board, pos.ld)
        if move is None:
            return 0
        for style in ("short", "table"):
            written = format_move(move, pos.ld, pos.board, style=style)
            try:
                again = parse_move(written, pos.board, pos.ld)
            except FormatError as exc:
                raise RoundTripError(
                    f"written as {written!r} ({style}), which does not parse: {exc}"
                ) from None
            if again != move:
                raise RoundTripError(f"written as {written!r} ({style}), which parses to {again}, not {move}")
        res = self.refuse(commit, pos, self.lex, text, tileorder, 1)
        if res is not None:
            after = write_cgp(res.position)
            try:
                parse_cgp(after)
            except FormatError as exc:
                raise RoundTripError(f"the position after the move {after!r} does not parse: {exc}") from None
        return 1 if res is None else 2

    def check_gcg(self, text: str | bytes) -> int:
        if isinstance(text, bytes):
            decoded = self.refuse(decode_gcg, text)
            if decoded is None:
                return 0
            text = decoded
        game = self.refuse(parse_gcg, text)
        if game is None:
            return 0
        written = write_gcg(game)
        try:
            game2 = parse_gcg(written)
        except FormatError as exc:
            raise RoundTripError(f"written as {written[:200]!r}…, which does not parse: {exc}") from None
        if game2 != game or write_gcg(game2) != written:
            raise RoundTripError("the written record parses to a different game")
        res = self.refuse(replay_gcg, game, self.lex)
        if res is not None and res.positions:
            last = write_cgp(res.positions[-1])
            try:
                parse_cgp(last)
            except FormatError as exc:
                raise RoundTripError(f"the replayed position {last!r} does not parse: {exc}") from None
        return 1 if res is None else 2


def run_one(parser: str, fn: Callable[..., int], data, *args) -> tuple[int, Finding | None, float]:
    """(level reached as the oracle counts it, finding or None, seconds) for one input."""
    t0 = time.perf_counter()
    finding = None
    parsed = 0
    use_alarm = hasattr(signal, "SIGALRM") and signal.getsignal(signal.SIGALRM) is _alarm
    if use_alarm:
        signal.alarm(ABORT_SECONDS)
    try:
        parsed = fn(data, *args)
    except _Timeout:
        finding = Finding(parser, "hang", "interrupted", f"still running after {ABORT_SECONDS} s",
                          _as_bytes(data))
    except _Oversized as exc:
        finding = Finding(parser, "message", "oversized message", f"{len(str(exc))} chars: {str(exc)[:200]}",
                          _as_bytes(data))
    except RoundTripError as exc:
        finding = Finding(parser, "roundtrip", str(exc).split(":")[0][:80], str(exc)[:500], _as_bytes(data))
    except EngineRefusal as exc:
        finding = Finding(parser, "engine", str(exc)[:80], str(exc)[:500], _as_bytes(data))
    except Exception as exc:  # noqa: BLE001 - every other exception is what we are looking for
        tb = traceback.extract_tb(exc.__traceback__)
        frames = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in tb[-4:]]
        sig = f"{type(exc).__name__} at {frames[-1] if frames else '?'}"
        detail = f"{type(exc).__name__}: {str(exc)[:300]} | " + " <- ".join(reversed(frames))
        finding = Finding(parser, "exception", sig, detail, _as_bytes(data))
    finally:
        if use_alarm:
            signal.alarm(0)
    elapsed = time.perf_counter() - t0
    if finding is None and elapsed > HANG_SECONDS:
        finding = Finding(parser, "hang", "slow input", f"{elapsed:.2f} s", _as_bytes(data))
    return parsed, finding, elapsed


# ------------------------------------------------------------------ the campaign


@dataclass
class Stats:
    parser: str
    inputs: int = 0
    parsed: int = 0
    engine: int = 0             # taken by the engine too: position built, move committed, record replayed
    seconds: float = 0.0
    slowest: float = 0.0
    slowest_input: bytes = b""
    findings: list[Finding] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.inputs / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        return (f"{self.parser:<5} inputs={self.inputs} seconds={self.seconds:.1f}"
                f" per_second={self.per_second:.0f} parsed={self.parsed} engine={self.engine}"
                f" slowest={self.slowest * 1000:.0f}ms findings={len(self.findings)}")


class Campaign:
    """Seeds and mutators for the three parsers; `run(parser, n)` feeds n inputs to the oracle."""

    def __init__(self, lex: Lexicon, seed: int = 0, autoplay_games: int = 6) -> None:
        self.rng = random.Random(seed)
        self.lex = lex
        self.oracle = Oracle(lex)
        ld = lex.ld
        gcgs_bytes = shared_gcgs()
        self.gcg_seeds = (BUILTIN_GCGS + [decode_gcg(b) for b in gcgs_bytes]
                          + autoplay_gcgs(lex, autoplay_games, seed))
        self.gcg_bytes_seeds = gcgs_bytes + [s.encode("utf-8") for s in self.gcg_seeds] + [
            s.encode("iso-8859-1", "replace") for s in self.gcg_seeds
        ]
        cgps = BUILTIN_CGPS + shared_cgps() + [random_cgp(self.rng, ld) for _ in range(40)]
        # positions along real games: every replayed state of the self-play records
        for text in self.gcg_seeds[-autoplay_games:] if autoplay_games else []:
            try:
                cgps += [write_cgp(p) for p in replay_gcg(parse_gcg(text), lex).positions[::3]]
            except FormatError:
                pass
        self.cgp_seeds = cgps
        self.positions: list[Position] = []
        for c in cgps:
            try:
                self.positions.append(parse_cgp(c))
            except FormatError:
                pass
        # moves: the generator's own moves on each position (legal ones), in both notations, plus built-ins
        self.move_seeds: list[tuple[str, Position]] = []
        self.generated_moves: list[tuple[str, Position]] = []   # legal: each commits
        gen = MoveGen(lex.kwg, ld, lex.klv)
        for pos in self.positions:
            if pos.racks[0]:
                try:
                    game = game_from_position(pos, lex, 1)
                except FormatError:
                    continue
                if game.game_over:
                    continue
                gen.generate(game.board, game.rack(0), max(0, game.bag_size), None, mode="top", n=6)
                for kind, row, col, vertical, tiles, *_ in gen.moves():
                    m = Move(kind, row, col, vertical, tuple(tiles))
                    style = self.rng.choice(["short", "table"])
                    text = format_move(m, ld, pos.board, style=style)
                    self.generated_moves.append((text, pos))
                    self.move_seeds.append((text, pos))
            for text in BUILTIN_MOVES:
                self.move_seeds.append((text, pos))
        self.mut = {
            "cgp": Mutator(self.rng, self.cgp_seeds),
            "gcg": Mutator(self.rng, self.gcg_seeds),
            "move": Mutator(self.rng, [m for m, _ in self.move_seeds[:2000]] + BUILTIN_MOVES),
        }

    def inputs(self, parser: str):
        """An endless stream of (data, extra args) for a parser."""
        rng = self.rng
        ld = self.lex.ld
        while True:
            if parser == "cgp":
                r = rng.random()
                seed = random_cgp(rng, ld) if r < 0.1 else rng.choice(self.cgp_seeds)
                yield (seed if r < 0.15 else self.mut["cgp"].mutate(seed, MAX_CGP_CHARS)), ()
            elif parser == "move":
                text, pos = rng.choice(self.move_seeds)
                if rng.random() < 0.3:
                    pos = rng.choice(self.positions)  # the move on some other board
                tileorder = None
                if rng.random() < 0.2:
                    # a draw order of the right length from the unseen tiles, sometimes mutated
                    unseen = [ml for ml, k in enumerate(pos.unseen_counts(0)) for _ in range(max(0, k))]
                    rng.shuffle(unseen)
                    tileorder = ld.rack_str(unseen[: max(0, len(unseen) - 7)])
                    if rng.random() < 0.5:
                        tileorder = self.mut["move"].mutate(tileorder, MAX_TILES_CHARS)
                if rng.random() >= 0.1:
                    text = self.mut["move"].mutate(text, MAX_MOVE_CHARS)
                yield text, (pos, tileorder)
            else:
                r = rng.random()
                if r < 0.2:
                    yield mutate_bytes(rng, rng.choice(self.gcg_bytes_seeds)), ()
                else:
                    seed = rng.choice(self.gcg_seeds)
                    if r < 0.3:
                        # a valid prefix of a real game: every event replays
                        lines = seed.split("\n")
                        yield "\n".join(lines[: rng.randint(1, len(lines))]), ()
                    else:
                        yield self.mut["gcg"].mutate(seed, MAX_GCG_LINE_CHARS), ()

    def run(self, parser: str, n: int, on_finding: Callable[[Finding], None] | None = None) -> Stats:
        checks = {"cgp": self.oracle.check_cgp, "move": self.oracle.check_move, "gcg": self.oracle.check_gcg}
        fn = checks[parser]
        stats = Stats(parser)
        stream = self.inputs(parser)
        t0 = time.perf_counter()
        for _ in range(n):
            data, args = next(stream)
            parsed, finding, elapsed = run_one(parser, fn, data, *args)
            stats.inputs += 1
            stats.parsed += parsed >= 1
            stats.engine += parsed >= 2
            if elapsed > stats.slowest:
                stats.slowest, stats.slowest_input = elapsed, _as_bytes(data)
            if finding is not None:
                stats.findings.append(finding)
                if on_finding is not None:
                    on_finding(finding)
        stats.seconds = time.perf_counter() - t0
        return stats


def save_finding(out: Path, f: Finding) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(f.data).hexdigest()[:12]
    path = out / f"{f.parser}-{f.kind}-{digest}.txt"
    path.write_bytes(f.data)
    with open(out / "findings.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({**f.to_json(), "file": path.name}) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-parser", type=int, default=20000, help="inputs for each parser (default 20000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parsers", default="cgp,move,gcg", help="comma-separated: cgp, move, gcg")
    ap.add_argument("--out", default=None, help="directory for offending inputs (default: a new temp dir)")
    ap.add_argument("--autoplay-games", type=int, default=6, help="self-play GCG seeds (default 6)")
    ap.add_argument("--lexicon", default=None,
                    help="lexicon for replay and commits (default: the bundled one)")
    args = ap.parse_args(argv)
    parsers = [p.strip() for p in args.parsers.split(",") if p.strip()]
    for p in parsers:
        if p not in ("cgp", "move", "gcg"):
            ap.error(f"unknown parser {p!r}")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="macondo-fuzz-"))
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _alarm)
    lex = LexiconRegistry().get(args.lexicon)
    t0 = time.perf_counter()
    campaign = Campaign(lex, args.seed, args.autoplay_games)
    print(f"seeds: cgp={len(campaign.cgp_seeds)} gcg={len(campaign.gcg_seeds)}"
          f" move={len(campaign.move_seeds)}"
          f" lexicon={lex.name} setup={time.perf_counter() - t0:.1f}s out={out}", flush=True)
    all_findings: list[Finding] = []
    for p in parsers:
        stats = campaign.run(p, args.per_parser, on_finding=lambda f: save_finding(out, f))
        print(stats.line(), flush=True)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"slowest-{p}.txt").write_bytes(stats.slowest_input)
        all_findings += stats.findings
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for f in all_findings:
        groups.setdefault((f.parser, f.kind, f.signature), []).append(f)
    for (parser, kind, sig), fs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"FINDING {parser} {kind} x{len(fs)}: {sig}\n    e.g. {fs[0].detail[:400]}\n"
              f"    input {fs[0].data[:120]!r} ({len(fs[0].data)} bytes)")
    print(f"total findings={len(all_findings)} seconds={time.perf_counter() - t0:.1f}")
    return 1 if all_findings else 0


if __name__ == "__main__":
    sys.exit(main())
