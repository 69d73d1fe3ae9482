# Type stub of the Cython module engine_cy.peg (peg.pyx): the pre-endgame solver core.
from collections.abc import Iterable, Sequence
from typing import Literal, final

from engine_cy.alphabet import LetterDistribution
from engine_cy.endgame import TranspositionTable
from engine_cy.game import Game
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg

OUTCOME_NAMES: tuple[str, str, str, str]

# a move given to the worker: (kind, row, col, vertical, tiles, score), kind 'place' | 'exchange' | 'pass'
_MoveIn = tuple[str, int, int, bool, Sequence[int], int]
# a move the worker reports, in the same form
_MoveOut = tuple[Literal["place", "exchange", "pass"], int, int, bool, tuple[int, ...], int]
# (sub-draw, first drawn first; its weight; the verdict there)
_SubDraw = tuple[tuple[int, ...], int, int]

@final
class PegWorker:
    """One thread's pre-endgame state: a game copy in solver mode, a move generator (with leaves, to order
    our nested candidates) and an endgame worker sharing the solve's transposition table."""

    plies: int
    max_nested: int
    cap_outcome: int
    cap_hits: int
    skip_deep_pass: bool
    endgames: int
    nested_calls: int
    nested_hits: int
    use_nested_cache: bool
    max_replies: int
    opp_solver: bool
    opp_solves: int
    opp_solve_hits: int
    choice_skips: int
    skip_won_choice: bool
    leaf_mode: int
    risk_moves: int
    playout_endgames: int
    use_endgame_cache: bool
    endgame_hits: int
    heuristics: bool
    def __init__(
        self,
        root: Game,
        kwg: Kwg,
        klv: Klv | None,
        ld: LetterDistribution,
        tt: TranspositionTable,
        bingo_bonus: int = 50,
    ) -> None: ...
    def share_endgame_cache(self, owner: PegWorker) -> None: ...
    def request_stop(self) -> None: ...
    def set_deadline(self, deadline: float) -> None: ...
    def endgame_options(
        self,
        lane_reuse: bool | None = None,
        d1_cut: bool | None = None,
        probe_first: bool | None = None,
        last_ply_bounded: bool | None = None,
    ) -> tuple[bool, bool, bool, bool]: ...
    @property
    def last_ply_bounded_nodes(self) -> int: ...
    @property
    def grand_stats(self) -> tuple[int, int]: ...
    @property
    def stopped(self) -> bool: ...
    @property
    def nodes(self) -> int: ...
    @property
    def last_capped(self) -> bool: ...
    def solve_draw(
        self, move: _MoveIn, seq: Sequence[int], opp_counts: Iterable[int], exact: bool = False
    ) -> tuple[int, int | None]: ...
    def reply_outcomes(
        self, move: _MoveIn, seq: Sequence[int], opp_counts: Iterable[int]
    ) -> tuple[Literal["endgame"], int, int] | tuple[Literal["replies"], list[tuple[_MoveOut, int]]]: ...
    def opponent_choice(
        self, move: _MoveIn, seq: Sequence[int], opp_counts: Iterable[int]
    ) -> tuple[int, int, list[tuple[_MoveOut, int, list[_SubDraw]]]] | None: ...
    def nested_trace(
        self, move: _MoveIn, seq: Sequence[int], opp_counts: Iterable[int], reply: _MoveIn
    ) -> tuple[int, _MoveOut | None, list[_SubDraw], int] | None: ...
