# Type stub of the Cython module engine_cy.move (move.pyx): moves between their forms.
from collections.abc import Sequence
from typing import Literal

from engine_cy.board import Board

_MoveKind = Literal["place", "exchange", "pass"]

MOVE_KINDS: dict[str, int]

def pack(kind: _MoveKind, row: int, col: int, vertical: bool, tiles: Sequence[int]) -> int: ...
def unpack(packed: int, board: Board) -> tuple[_MoveKind, int, int, bool, tuple[int, ...]]: ...
