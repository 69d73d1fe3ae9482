# Type stub of the Cython module engine_cy.leavegen (leavegen.pyx): leave-value training by self-play.
from collections.abc import Iterable
from typing import final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg

def decode_rack(code: int) -> bytes: ...
def encode_rack(tiles: Iterable[int]) -> int: ...

@final
class LeaveGenWorker:
    """One process's game and bot for a training round (one Klv: the round's current values)."""

    stop: bool
    def __init__(
        self,
        kwg: Kwg,
        klv: Klv | None,
        ld: LetterDistribution,
        board: Board,
        forced_leaves: ArrayLike | None = None,
        forced_per_turn: float = 0.0,
        bingo_bonus: int = 50,
    ) -> None: ...
    def play(self, seed: int) -> tuple[NDArray[np.uint64], NDArray[np.int32], NDArray[np.uint8], int]: ...

def accumulate(
    graph: Klv,
    ld: LetterDistribution,
    codes: NDArray[np.uint64],
    means: NDArray[np.float64],
    counts: NDArray[np.int64],
    wsum: NDArray[np.float64],
    esum: NDArray[np.float64],
    nobs: NDArray[np.int64],
) -> tuple[float, float]: ...
def enumerate_leaves(
    ld: LetterDistribution, max_len: int = 6
) -> tuple[NDArray[np.uint8], NDArray[np.int8]]: ...
def sub_leave_ranks(
    graph: Klv, tiles: NDArray[np.uint8], lengths: NDArray[np.int8]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...
