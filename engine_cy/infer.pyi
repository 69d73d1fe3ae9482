# Type stub of the Cython module engine_cy.infer (infer.pyx): inference of the opponent's kept tiles.
from collections.abc import Iterable, Sequence
from typing import Literal, final

import numpy as np
from numpy.typing import NDArray

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg

def count_leaves(pool: Iterable[int], k: int) -> int: ...
def enumerate_leaves(pool: Sequence[int], k: int) -> tuple[NDArray[np.uint8], NDArray[np.float64]]: ...
def sample_leaves(pool: Sequence[int], k: int, count: int, seed: int) -> NDArray[np.uint8]: ...
def split_racks(
    racks: NDArray[np.uint8], k: int, played: Sequence[int], avail: Sequence[int]
) -> tuple[NDArray[np.int64], NDArray[np.uint8], NDArray[np.float64]]: ...

@final
class InferWorker:
    """Evaluates candidate racks on one board (the board before the opponent's play, cross-sets valid)."""

    stop: int
    def __init__(
        self,
        board: Board,
        kwg: Kwg,
        klv: Klv | None,
        ld: LetterDistribution,
        mode: Literal["place", "exchange", "pass"],
        played: Iterable[int],
        play_score: int,
        n_exchanged: int,
        bag_tiles: int,
        tolerance_mp: int,
        bingo_bonus: int = 50,
        *,
        model: Literal["tolerance", "softmax"] = "tolerance",
        temperature: float = 0.0,
        top_n: int = 20,
        win_table: NDArray[np.float64] | None = None,
        spread: float = 0.0,
        unseen: int = 0,
        phony: bool = False,
        play_adjust: int = 0,
    ) -> None: ...
    def run(
        self,
        leaves: NDArray[np.uint8],
        start: int,
        end: int,
        accepted: NDArray[np.uint8],
        kept: NDArray[np.uint8],
        best_eq: NDArray[np.int32],
        play_eq: NDArray[np.int32],
        loglik: NDArray[np.float64] | None = None,
        top_eq: NDArray[np.int32] | None = None,
    ) -> int: ...
