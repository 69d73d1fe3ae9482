# Type stub of the Cython module engine_cy.endgame (endgame.pyx): the endgame solver.
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NotRequired, TypedDict, final

from engine_cy.alphabet import LetterDistribution
from engine_cy.game import Game
from engine_cy.kwg import Kwg

# a principal variation: (packed move, score) pairs
_Line = list[tuple[int, int]]

class _LineResult(TypedDict):
    value: int
    final_spread: int
    line: _Line
    estimated: _Line

class _SolveResult(TypedDict):
    value: int
    final_spread: int
    line: _Line
    depth: int
    nodes: int
    seconds: float
    complete: bool
    stopped: bool
    estimated: NotRequired[_Line]
    # top-k solves (top_k > 1 or also): the best first moves, and one entry per also move (None: not searched)
    lines: NotRequired[list[_LineResult]]
    also: NotRequired[list[_LineResult | None]]

def monotonic() -> float: ...

@final
class TranspositionTable:
    """A power-of-two table of 24-byte entries shared by every thread (no locks: each entry verifies
    itself, so a torn write is a miss). The part in use grows with the search (see TT_GROW_LOAD)."""

    def __init__(self, megabytes: int = 256) -> None: ...
    @property
    def n_entries(self) -> int: ...
    @property
    def megabytes(self) -> float: ...
    @property
    def active_megabytes(self) -> float: ...
    def clear(self) -> None: ...

@final
class EndgameWorker:
    nodes: int
    helper_id: int
    use_tt: bool
    heuristics: bool
    lane_reuse: bool
    lanes_generated: int
    lanes_reused: int
    d1_cut: bool
    probe_first: bool
    patch_probes: bool
    playout_lists: int
    playout_lanes_kept: int
    probes: int
    probe_cuts: int
    last_ply_bounded: bool
    last_ply_bounded_nodes: int
    grand_nodes: int
    grand_cuts: int
    multi_k: int
    def __init__(
        self, kwg: Kwg, ld: LetterDistribution, tt: TranspositionTable, bingo_bonus: int = 50
    ) -> None: ...
    def set_multi(self, k: int, forced: Sequence[int] = ()) -> None: ...
    def multi_lines(self) -> tuple[list[tuple[int, _Line]], list[tuple[int, _Line] | None]]: ...
    def bind_game(self, g: Game) -> None: ...
    def search(self, plies: int, alpha: int = ..., beta: int = ..., iterative: bool = True) -> int: ...
    def principal_variation(self) -> _Line: ...
    def partial_root(self) -> tuple[int, _Line] | None: ...
    def set_deadline(self, deadline: float) -> None: ...
    def request_stop(self) -> None: ...
    def clear_stop(self) -> None: ...
    def playout_line(self, game: Game) -> _Line: ...

def decode_line(
    game: Game, line: Iterable[tuple[int, int]]
) -> list[tuple[Literal["place", "exchange", "pass"], int, int, bool, tuple[int, ...], int]]: ...

@final
class EndgameSolver:
    """Iterative deepening over a shared table with Lazy SMP helper threads. Reusable across positions."""

    lane_reuse: bool
    d1_cut: bool
    probe_first: bool
    patch_probes: bool
    last_ply_bounded: bool
    def __init__(
        self, kwg: Kwg, ld: LetterDistribution, tt_megabytes: int = 256, bingo_bonus: int = 50
    ) -> None: ...
    @property
    def tt(self) -> TranspositionTable: ...
    @property
    def nodes(self) -> int: ...
    @property
    def lane_stats(self) -> tuple[int, int]: ...
    @property
    def probe_stats(self) -> tuple[int, int]: ...
    @property
    def playout_stats(self) -> tuple[int, int]: ...
    @property
    def bounded_stats(self) -> tuple[int, int, int]: ...
    def stop(self) -> None: ...
    def clear_table(self) -> None: ...
    def solve(
        self,
        game: Game,
        plies: int,
        max_time: float = 0.0,
        threads: int = 1,
        first_win: bool = False,
        heuristics: bool = True,
        use_tt: bool = True,
        progress: Callable[[_SolveResult], object] | None = None,
        prune: bool = True,
        top_k: int = 0,
        also: Sequence[int] = (),
    ) -> _SolveResult: ...
