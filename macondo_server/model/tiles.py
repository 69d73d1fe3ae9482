"""Tile strings: the only text <-> tile translator, with the letter distribution and board of a game (see
languages.py for where these come from).
"""

from __future__ import annotations

from engine_cy.alphabet import LetterDistribution, TileParseError
from engine_cy.board import Board
from macondo_server.model.languages import (
    DEFAULT_DISTRIBUTION,
    DEFAULT_LAYOUT,
    Catalog,
    environment_catalog,
)
from macondo_server.model.text import FormatError, excerpt

RACK_SIZE = 7
VARIANTS = ("classic",)


def get_distribution(name: str = DEFAULT_DISTRIBUTION, catalog: Catalog | None = None) -> LetterDistribution:
    """The named letter distribution (case-insensitive) of the catalog (default: MACONDO_DATA_DIR's and the
    package's tables). Distributions are immutable, so one instance per table file is shared."""
    return (catalog or environment_catalog()).distribution(name)


def new_board(layout: str = DEFAULT_LAYOUT, catalog: Catalog | None = None) -> Board:
    """An empty board of the named layout (standard15, standard21, CrosswordGame, SuperCrosswordGame or one
    added as data)."""
    return (catalog or environment_catalog()).board(layout)


# ------------------------------------------------------------------ tiles


def split_labels(text: str, what: str, ld: LetterDistribution | None = None) -> list[str]:
    """A tile string as labels: one character each, or `[XY]` for a multi-character tile (kept with its
    brackets so that callers can tell '[.]' from '.'). With a distribution, brackets must hold one of its
    multi-letter tiles, and those it reads without brackets (Catalan QU, NY, L·L) are grouped as `[XY]` too."""
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
    if ld is None or (not ld.multi and "[" not in text):
        return out
    try:
        return ld.tokens(text)
    except TileParseError as exc:
        raise FormatError(f"{what} {excerpt(text)}: {exc}") from None


def _strip(label: str) -> str:
    """A label without its brackets; a bracketed single character stays bracketed (and so unknown): brackets
    hold multi-letter tiles only."""
    return label[1:-1] if len(label) > 3 and label.startswith("[") and label.endswith("]") else label


def _lookup(ld: LetterDistribution, label: str) -> int | None:
    """Machine letter of an exact (uppercase) label, or None."""
    if len(label) > 3 and label[0] == "[" and label[-1] == "]":
        label = label[1:-1]
    return ld._index.get(label)


def _lookup_lower(ld: LetterDistribution, label: str) -> int | None:
    """Machine letter whose lowercase (blank) form the label is, or None."""
    return ld._lower_index.get(_strip(label))


def rack_tiles(ld: LetterDistribution, text: str, what: str, fold_case: bool = False) -> list[int]:
    """Rack tiles ('?' for a blank, capitals for letters; with fold_case a letter's lowercase form is read as
    the letter) -> machine letters; a FormatError naming `what` and the tile otherwise."""
    out = []
    for lab in split_labels(text, what, ld):
        ml = _lookup(ld, lab)
        if ml is None and fold_case:
            ml = _lookup_lower(ld, lab)
        if ml is None:
            hint = " (racks are written in capitals, '?' for a blank)" if _lookup_lower(ld, lab) else ""
            raise FormatError(f"{what} {excerpt(text)}: unknown rack tile {excerpt(lab)}{hint}")
        out.append(ml)
    return out


def board_tile(ld: LetterDistribution, label: str, what: str) -> int:
    """A board label: a capital is a tile, its lowercase form a blank played as it (ml | 0x80)."""
    ml = _lookup(ld, label)
    if ml:
        return ml
    if ml is None:
        ml = _lookup_lower(ld, label)
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
