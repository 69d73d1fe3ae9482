# Type stub of the Cython module engine_cy.sim (sim.pyx): Monte Carlo simulation.
from collections.abc import Collection, Iterable, Sequence
from typing import final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from engine_cy.alphabet import LetterDistribution
from engine_cy.game import Game
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg

# per candidate: (iterations, equity sum, equity sum of squares, win sum, win sum of squares,
# [score sums by ply], [bingo counts by ply])
_CandidateStats = tuple[int, float, float, float, float, list[float], list[float]]
# enable_stats: score histograms [candidates, plies, bins], heatmaps [candidates, plies, dim * dim], the opponent's
# leave after their reply and their rack before it [candidates, letters], the iterations they replied in
_StatsArrays = tuple[NDArray[np.int64], NDArray[np.uint32], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]

SCORE_HISTOGRAM_BINS: int
SCORE_HISTOGRAM_WIDTH: int

@final
class SimWorker:
    plies: int
    iterations: int
    cut_iterations: int
    stop: int
    reuse_lanes: bool
    def __init__(
        self,
        root: Game,
        kwg: Kwg,
        klv: Klv | None,
        ld: LetterDistribution,
        candidates: Collection[tuple[str, int, int, bool, Sequence[int], int]],
        known_opp: Iterable[int],
        wintable: ArrayLike,
        seed: int,
        plies: int = 2,
        bingo_bonus: int = 50,
    ) -> None: ...
    def set_inferred_leaves(self, counts: ArrayLike, weights: ArrayLike) -> None: ...
    def affected_lanes(self, c: int) -> list[tuple[int, int]]: ...
    def set_active(self, i: int, on: bool) -> None: ...
    def win_at(self, spread: int, unseen: int) -> float: ...
    def track_pairs(self) -> None: ...
    def enable_stats(self) -> None: ...
    def stats_arrays(self) -> _StatsArrays | None: ...
    def pair_stats(self, a: int) -> list[tuple[int, float, float, float, float]]: ...
    def dealt_opponent_rack(self, index: int) -> list[int]: ...
    def run(self, first: int, step: int, count: int) -> int: ...
    def stats(self) -> list[_CandidateStats]: ...
