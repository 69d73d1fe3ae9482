"""The pre-endgame's result: per-play tallies and bounds (PegPlay), the solve's snapshot (PegResult) and naming
a leader only from what is known. Plain data: api/convert.py turns a result into its PreEndgameProgress
message, which the client's renderers (macondo_client.render) draw as text and JSON."""

from __future__ import annotations

from dataclasses import dataclass

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from macondo_server.analysis.peg.draws import DrawGroup
from macondo_server.analysis.peg.options import (
    DRAW,
    LOSS,
    QUICK_PLIES,
    QUICK_REPLIES,
    UNRESOLVED,
    WIN,
)
from macondo_server.model.move import Move, format_move


@dataclass
class PegPlay:
    move: Move
    text: str
    table: str
    score: int
    tiles_played: int
    empties_bag: bool
    groups: list[DrawGroup]
    wins: int = 0
    draws: int = 0
    losses: int = 0
    unresolved: int = 0
    cut_off: bool = False
    tiebroken: bool = False
    spread_sum: int = 0
    spread_weight: int = 0
    pending: int = -1         # weight of the draws not solved yet (set from the groups on construction)
    groups_done: int = 0      # draw groups with a verdict (win, draw, loss or unresolved)
    quick_points: float = 0.0 # wins + draws / 2 at the quick pass, over the groups it has judged
    quick_done: int = 0       # draw groups the quick pass has judged

    def __post_init__(self) -> None:
        if self.pending < 0:
            self.pending = sum(g.weight for g in self.groups if g.outcome is None)
            self.groups_done = sum(g.outcome is not None for g in self.groups)

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def lower(self) -> float:
        """Points this play has for certain: wins and half the draws among the draws resolved so far."""
        return self.wins + self.draws / 2

    @property
    def upper(self) -> float:
        """The most points it can end with: the lower bound plus every draw not yet resolved (not solved
        yet, or solved as unresolved)."""
        return self.lower + self.pending + self.unresolved

    @property
    def settled(self) -> bool:
        """Every draw has a verdict that is a win, draw or loss (its bounds meet)."""
        return self.pending == 0 and self.unresolved == 0

    @property
    def groups_total(self) -> int:
        return len(self.groups)

    @property
    def quick_complete(self) -> bool:
        return self.quick_done == len(self.groups)

    @property
    def complete_at(self) -> str:
        """The deepest level this play's tally is complete at: "full" (every draw has a full-depth verdict),
        "quick" (the quick pass judged every draw) or "" (neither yet)."""
        if self.pending == 0:
            return "full"
        return "quick" if self.quick_complete else ""

    @property
    def estimate(self) -> float:
        """Points by the best knowledge so far: each draw's full verdict where it has one, else its quick
        verdict, else nothing (only for ordering and display; the bounds are lower and upper)."""
        pts = 0.0
        for g in self.groups:
            o = g.outcome if g.outcome is not None and g.outcome != UNRESOLVED else g.quick
            if o == WIN:
                pts += g.weight
            elif o == DRAW:
                pts += g.weight / 2
        return pts

    def record_quick(self, g: DrawGroup, outcome: int) -> None:
        if g.quick is None:
            self.quick_done += 1
        g.quick = outcome
        if outcome == WIN:
            self.quick_points += g.weight
        elif outcome == DRAW:
            self.quick_points += g.weight / 2

    @property
    def found_losses2(self) -> int:
        """Losses plus half the draws, doubled to stay an integer."""
        return 2 * self.losses + self.draws

    @property
    def spread(self) -> float | None:
        return self.spread_sum / self.spread_weight if self.tiebroken and self.spread_weight else None

    def record(self, g: DrawGroup, outcome: int) -> None:
        if g.outcome is None:
            self.pending -= g.weight
            self.groups_done += 1
        g.outcome = outcome
        if outcome == WIN:
            self.wins += g.weight
        elif outcome == DRAW:
            self.draws += g.weight
        elif outcome == LOSS:
            self.losses += g.weight
        else:
            self.unresolved += g.weight


def make_play(move: Move, score: int, tiles_played: int, bag: int, groups: list[tuple[str, tuple[int, ...], int]],
              ld: LetterDistribution, board: Board) -> PegPlay:
    """A candidate play's row: its notation and its table text (rendered here, once), whether it empties a
    bag of `bag` tiles, and a fresh copy of its draw groups ((label, draw, weight), see draws.draw_groups)."""
    return PegPlay(move, format_move(move, ld, board), format_move(move, ld, board, style="table").strip(),
                   score, tiles_played, tiles_played >= bag, [DrawGroup(lab, seq, w) for lab, seq, w in groups])


@dataclass
class PegResult:
    plays: list[PegPlay]
    total_permutations: int
    endgames: int
    nested_calls: int
    seconds: float
    done_jobs: int
    total_jobs: int
    complete: bool
    final: bool = True
    nested_hits: int = 0       # nested solves answered from the cache
    finished: bool = False     # every play not cut off has a verdict on every draw (no stop, no time limit)
    leader: PegPlay | None = None
    leader_reason: str = ""    # "complete" or "proven by bounds"; "" with no leader
    no_leader_reason: str = "" # why no play is named yet
    best_lower: float = 0.0    # the highest lower bound of any play
    best_upper: float = 0.0    # the highest upper bound of any play
    endgames_per_second: float = 0.0
    groups_left: int = 0       # draw groups not solved yet, over the plays not cut off
    endgames_left: int = 0     # an estimate: groups left x endgames per solved group so far
    phase: str = "done"        # "setup", "quick" (the quick pass), "full" (the full solve), "done"
    quick_done_jobs: int = 0   # draw groups the quick pass has judged
    opponent_model: str = "pessimistic"
    opp_solves: int = 0        # the opponent's own nested solves (opponent model "solver")
    endgame_plies: int = 0
    leader_depth: str = ""     # "full": named from full-depth verdicts; "quick": best at the complete quick pass;
                               # "only": the only candidate
    reused: int = 0            # verdicts taken from the checkpoint (--resume) instead of solved again
    checkpointed: int = 0      # verdicts recorded in the checkpoint so far (with those reused)
    cluster_workers: int = 0   # Dask worker processes the solve ran on (0: in-process)
    cluster_tasks: int = 0     # tasks sent to them

    @property
    def winner(self) -> PegPlay | None:
        """The play named as leader: the best play of a finished solve, or one whose lower bound beats
        every other play's upper bound; None while the bounds do not decide it."""
        return self.leader

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left at the current rate if every remaining group is solved (the cut-off usually needs fewer)."""
        if self.finished or self.endgames_per_second <= 0:
            return None if not self.finished else 0.0
        return self.endgames_left / self.endgames_per_second


def points_text(x: float) -> str:
    """Points as shown: whole numbers without a decimal."""
    return f"{x:.1f}" if x != int(x) else str(int(x))


QUICK_LABEL = f"quick pass ({QUICK_PLIES}-ply endgames, the {QUICK_REPLIES} best replies per turn)"


def name_leader(res: PegResult) -> None:
    """Name a leader only from what is known (see PegResult.winner)."""
    plays = res.plays
    if not plays:
        res.no_leader_reason = "no candidate plays"
        return
    res.best_lower = max(p.lower for p in plays)
    res.best_upper = max(p.upper for p in plays)
    contenders = [p for p in plays if not p.cut_off]
    if res.finished:
        res.leader = plays[0]
        res.leader_depth = "full"
        res.leader_reason = "complete" if res.complete else "finished; unresolved draws count as non-wins"
        return
    if len(plays) == 1:
        res.leader, res.leader_reason, res.leader_depth = plays[0], "the only play", "only"
        return
    top = max(plays, key=lambda p: (p.lower, -plays.index(p)))
    others = max((q.upper for q in plays if q is not top), default=float("-inf"))
    if top.lower > others or (top.lower == others and top.lower > 0):
        # no other play can end above it (an equal bound: at best a tie)
        res.leader, res.leader_depth = top, "full"
        res.leader_reason = "proven by bounds" if top.lower > others else "proven by bounds: no play can beat it"
        return
    if contenders and all(p.quick_complete for p in contenders):
        best = max(contenders, key=lambda p: (p.quick_points, -plays.index(p)))
        res.leader, res.leader_depth = best, "quick"
        res.leader_reason = f"best at the {QUICK_LABEL}; the full {res.endgame_plies}-ply solve is under way"
        return
    if top.lower == others and top.settled and all(q.settled for q in plays if q.upper == others and q is not top):
        res.no_leader_reason = "tied"
    else:
        res.no_leader_reason = "the bounds overlap" if res.phase != "quick" else "the quick pass is under way"
