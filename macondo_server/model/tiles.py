"""Letter distributions, board layouts and tile strings: the only text <-> tile translator.
"""

from __future__ import annotations

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import STANDARD15, Board
from macondo_server.model.text import FormatError, excerpt

RACK_SIZE = 7
DEFAULT_LAYOUT = "CrosswordGame"
LAYOUTS = {"CrosswordGame": STANDARD15, "standard15": STANDARD15}
DISTRIBUTIONS = {"english": LetterDistribution.english}
VARIANTS = ("classic",)

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
