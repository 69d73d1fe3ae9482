"""Bounds on untrusted text and numbers, and the error every parser raises.

Every input is untrusted. Every parse error is a FormatError whose message names the field at fault and
quotes at most a short excerpt of the input (`excerpt`); every number is ASCII digits within the range its
consumer accepts; every text is refused beyond the MAX_* bounds below before any work is done on it.
"""

from __future__ import annotations

import re
from typing import Literal

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
