# Type stub of the Cython module engine_cy.movegen (movegen.pyx): move generation and static equity.
from collections.abc import Collection, Iterable, Sequence
from typing import Literal, final

import numpy as np
from numpy.typing import NDArray

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg

# a generated move: (kind, row, col, vertical, tiles, score, equity in millipoints, tiles played, leave);
# tiles per square for a placement (0 = played-through, blank = ml | 0x80), the exchanged tiles for an
# exchange; the leave as machine letters
_GeneratedMove = tuple[
    Literal["place", "exchange", "pass"], int, int, bool, tuple[int, ...], int, int, int, tuple[int, ...]
]

@final
class MoveGen:
    """Generates every legal play for a rack on a board, scored and valued (millipoints)."""

    bingo_bonus: int
    eg_shadow: bool
    use_shadow: bool
    use_word_map: bool
    use_opening_map: bool
    use_ext: bool
    def __init__(
        self,
        kwg: Kwg,
        ld: LetterDistribution,
        klv: Klv | None = None,
        bingo_bonus: int = 50,
        opening_map: bool = True,
    ) -> None: ...
    @property
    def kwg(self) -> Kwg: ...
    @property
    def klv(self) -> Klv | None: ...
    @property
    def ld(self) -> LetterDistribution: ...
    @property
    def n_placements(self) -> int: ...
    @property
    def n_exchanges(self) -> int: ...
    @property
    def n_passes(self) -> int: ...
    @property
    def interleaved(self) -> bool: ...
    def set_preendgame_table(self, values: Sequence[float] | None) -> None: ...
    def bind(self, board: Board) -> None: ...
    def generate(
        self,
        board: Board,
        rack: Collection[int],
        bag_tiles: int,
        opp_rack: Iterable[int] | None = None,
        mode: Literal["all", "best", "small", "top"] = "all",
        n: int = 0,
        sort: bool = True,
    ) -> int: ...
    def used_letters(
        self, board: Board, rack: Sequence[int], letters: Iterable[int], min_uses: int = 1
    ) -> set[int]: ...
    def eg_best(
        self,
        board: Board,
        rack: Collection[int],
        opp_rack_value: int,
        mul: int,
        out: int = 0,
        tile_pen: int = 0,
        face_pen: int = 0,
        shadow: bool = True,
    ) -> tuple[_GeneratedMove, int] | None: ...
    def packed_moves(self) -> tuple[NDArray[np.uint64], NDArray[np.int32], NDArray[np.int32]]: ...
    def counts(self) -> tuple[int, int, int]: ...
    def moves(self, limit: int = -1) -> list[_GeneratedMove]: ...
