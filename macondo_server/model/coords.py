"""Board coordinates in the notation's two orders: `8G` across, `G8` down.
"""

from __future__ import annotations

import re

from macondo_server.model.text import FormatError, excerpt

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
