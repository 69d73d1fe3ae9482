"""The pre-endgame's result: per-play tallies and bounds (PegPlay), the solve's snapshot (PegResult) and naming
a leader only from what is known. Plain data: api/convert.py turns a result into its PreEndgameProgress
message, which the client's renderers (macondo_client.render) draw as text and JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from macondo_server.analysis.peg.draws import DrawGroup, GroupTemplate, LazyGroups, made_groups
from macondo_server.analysis.peg.options import (
    CAPPED,
    DRAW,
    LOSS,
    OUTCOME_MASK,
    QUICK2_PLIES,
    QUICK2_REPLIES,
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
    groups: Sequence[DrawGroup]   # a LazyGroups, or a list (tests)
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
    quick2_points: float = 0.0  # the same at the quick pass's second level (only some plays have one)
    quick2_done: int = 0
    capped_weight: int = 0    # weight of the draws whose full verdict a continuation past the nesting cap took part in
    capped_points: float = 0.0  # wins + draws / 2 among them
    est: float = 0.0          # points by the best knowledge (set by estimate_plays)
    est_sd: float = 0.0       # its standard deviation (the draws without a full verdict)
    # kept as verdicts arrive, so that a snapshot costs O(plays), not O(draw groups) (see _tally):
    total_weight: int = 0     # the weight of every draw group
    judged: int = 0           # draw groups with a full verdict that is a win, draw or loss
    capped_groups: int = 0    # draw groups whose full verdict a continuation past the nesting cap took part in
    outcome_groups: dict[int, int] = field(default_factory=dict)   # draw groups by full verdict
    # by quick knowledge (quick_key): the weight and the squared weights of the draw groups without a win, draw
    # or loss verdict; and among those with one, their weight and twice their points
    open_weight: dict[tuple[int, int | None], int] = field(default_factory=dict)
    open_squares: dict[tuple[int, int | None], int] = field(default_factory=dict)
    judged_weight: dict[tuple[int, int | None], int] = field(default_factory=dict)
    judged_points2: dict[tuple[int, int | None], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.pending >= 0:
            return   # a copy (a snapshot): the tallies come with it
        made = made_groups(self.groups)
        if made is None:
            # not made yet: every draw group is open and has no verdict
            t = self.groups.template if isinstance(self.groups, LazyGroups) else None
            assert t is not None
            self.pending = self.total_weight = t.total
            self.open_weight[(0, None)] = t.total
            self.open_squares[(0, None)] = t.weight_squares
            return
        self.pending = 0
        for g in made:
            self.total_weight += g.weight
            if g.outcome is None:
                self.pending += g.weight
            else:
                self.groups_done += 1
                self.outcome_groups[g.outcome] = self.outcome_groups.get(g.outcome, 0) + 1
            self.capped_groups += g.capped
            self._tally(g, 1)

    def copy(self) -> PegPlay:
        """A copy for a snapshot: its tallies do not change as the solve goes on (the draw groups are shared)."""
        return dataclasses.replace(self, outcome_groups=dict(self.outcome_groups),
                                   open_weight=dict(self.open_weight), open_squares=dict(self.open_squares),
                                   judged_weight=dict(self.judged_weight), judged_points2=dict(self.judged_points2))

    def _tally(self, g: DrawGroup, sign: int) -> None:
        """Add (sign 1) or take away (-1) a draw group's share of the sums by quick knowledge."""
        key = quick_key(g)
        v2 = _points2(g.outcome)
        w = g.weight
        if v2 is None:
            self.open_weight[key] = self.open_weight.get(key, 0) + sign * w
            self.open_squares[key] = self.open_squares.get(key, 0) + sign * w * w
        else:
            self.judged += sign
            self.judged_weight[key] = self.judged_weight.get(key, 0) + sign * w
            self.judged_points2[key] = self.judged_points2.get(key, 0) + sign * v2 * w

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
    def quick2_complete(self) -> bool:
        return self.quick2_done == len(self.groups)

    @property
    def quick_level(self) -> int:
        """The deepest quick level complete for this play: 2, 1 or 0 (none yet)."""
        return 2 if self.quick2_complete else 1 if self.quick_complete else 0

    @property
    def quick_best(self) -> float:
        """Its points at the deepest quick level complete (the first level's while the second runs)."""
        return self.quick2_points if self.quick2_complete else self.quick_points

    @property
    def complete_at(self) -> str:
        """The deepest level this play's tally is complete at: "full" (every draw has a full-depth verdict),
        "quick" (the quick pass judged every draw) or "" (neither yet)."""
        if self.pending == 0:
            return "full"
        return "quick" if self.quick_complete else ""

    @property
    def estimate(self) -> float:
        """Points by the best knowledge so far (see estimate_plays)."""
        return self.est

    @property
    def conservative(self) -> float:
        """The estimate less one standard deviation: what a leader is named by, so that a play known at full
        depth is not passed over for one whose estimate rests mostly on the quick pass."""
        return self.est - self.est_sd

    @property
    def cap_low(self) -> float:
        """The count with every draw a continuation past the nesting cap took part in counted as a loss: a
        lower bound on the count without the cap."""
        return self.lower - self.capped_points

    @property
    def cap_high(self) -> float:
        """The count with each of those draws counted as a win (and the draws not solved yet too): an upper
        bound on the count without the cap."""
        return self.lower - self.capped_points + self.capped_weight + self.pending

    def record_quick(self, g: DrawGroup, outcome: int, level: int = 1) -> None:
        """A verdict of the quick pass at `level` (1, or 2: its second level); a draw judged again at the same
        level replaces the verdict before."""
        old = g.quick if level == 1 else g.quick2
        delta = g.weight * ((_points(outcome) or 0.0) - (_points(old) or 0.0))
        self._tally(g, -1)
        if level == 1:
            g.quick = outcome
            self.quick_done += old is None
            self.quick_points += delta
        else:
            g.quick2 = outcome
            self.quick2_done += old is None
            self.quick2_points += delta
        self._tally(g, 1)

    @property
    def found_losses2(self) -> int:
        """Losses plus half the draws, doubled to stay an integer."""
        return 2 * self.losses + self.draws

    @property
    def spread(self) -> float | None:
        return self.spread_sum / self.spread_weight if self.tiebroken and self.spread_weight else None

    def record(self, g: DrawGroup, outcome: int) -> None:
        """A full-depth verdict (an outcome, with the CAPPED flag when the nesting cap took part in it)."""
        capped = bool(outcome & CAPPED)
        outcome &= OUTCOME_MASK
        self._tally(g, -1)
        if g.outcome is None:
            self.pending -= g.weight
            self.groups_done += 1
        else:
            self.outcome_groups[g.outcome] -= 1
        g.outcome = outcome
        self.outcome_groups[outcome] = self.outcome_groups.get(outcome, 0) + 1
        self._tally(g, 1)
        if capped and not g.capped:
            g.capped = True
            self.capped_groups += 1
            self.capped_weight += g.weight
            self.capped_points += g.weight if outcome == WIN else g.weight / 2 if outcome == DRAW else 0
        if outcome == WIN:
            self.wins += g.weight
        elif outcome == DRAW:
            self.draws += g.weight
        elif outcome == LOSS:
            self.losses += g.weight
        else:
            self.unresolved += g.weight


def make_play(move: Move, score: int, tiles_played: int, bag: int, template: GroupTemplate,
              ld: LetterDistribution, board: Board) -> PegPlay:
    """A candidate play's row: its notation and its table text (rendered here, once), whether it empties a
    bag of `bag` tiles, and its draw groups (made from `template` when a pass first takes the play)."""
    return PegPlay(move, format_move(move, ld, board), format_move(move, ld, board, style="table").strip(),
                   score, tiles_played, tiles_played >= bag, LazyGroups(template, ld))


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
    leader: PegPlay | None = None  # the play named by the best knowledge so far (see name_leader)
    leader_reason: str = ""    # why it is named ("complete", "proven by bounds", "best estimate: ..."); ""
    no_leader_reason: str = "" # why no play is named yet
    best_lower: float = 0.0    # the highest lower bound of any play
    best_upper: float = 0.0    # the highest upper bound of any play
    endgames_per_second: float = 0.0
    groups_left: int = 0       # draw groups not solved yet, over the plays not cut off
    endgames_left: int = 0     # an estimate: groups left x endgames per solved group so far
    phase: str = "done"        # "setup", "quick" (the quick pass), "quick2" (its second level), "full" (the
                               # full solve), "done"
    quick_done_jobs: int = 0   # draw groups the quick pass has judged
    quick2_done_jobs: int = 0  # draw groups its second level has judged
    quick2_jobs: int = 0       # draw groups of the plays its second level has taken so far
    opponent_model: str = "pessimistic"
    opp_solves: int = 0        # the opponent's own nested solves (opponent model "solver")
    endgame_plies: int = 0
    leader_depth: str = ""     # "full": finished or proven by bounds; "estimate": the best estimate (full-depth
                               # verdicts where they exist, the calibrated quick pass elsewhere); "quick": best at
                               # the complete quick pass, no full verdict yet; "only": the only candidate
    leader_ties: list[PegPlay] = field(default_factory=list)  # plays tied with the leader by everything known
    calibrated_on: int = 0     # full-depth verdicts the quick pass's calibration rests on
    scope_note: str = ""       # plays the options leave out, and the option that takes them in
    plays_out_of_scope: int = 0
    nesting_cap: str = "skip"  # what a continuation past the nesting cap counts as (options.NESTING_CAP_MODES)
    max_nested_depth: int = 1
    nesting_note: str = ""     # what the nesting cap did, when it took part in a verdict
    stop_reason: str = ""      # final snapshots: "finished", "time limit" or "stopped"
    reused: int = 0            # verdicts taken from the checkpoint (--resume) instead of solved again
    checkpointed: int = 0      # verdicts recorded in the checkpoint so far (with those reused)
    cluster_workers: int = 0   # Dask worker processes the solve ran on (0: in-process)
    cluster_tasks: int = 0     # tasks sent to them

    @property
    def winner(self) -> PegPlay | None:
        """The best play when it is known: that of a finished solve, one whose lower bound no other play's
        upper bound exceeds, or the only candidate; None before (the leader is then the best estimate)."""
        return self.leader if self.leader_depth in ("full", "only") else None

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
QUICK2_LABEL = f"quick pass's second level ({QUICK2_PLIES}-ply endgames, the {QUICK2_REPLIES} best replies per turn)"


def quick_key(g: DrawGroup) -> tuple[int, int | None]:
    """A draw's best quick knowledge: (level, verdict), the second level's where it has one; (0, None) with
    neither."""
    if g.quick2 is not None:
        return 2, g.quick2
    if g.quick is not None:
        return 1, g.quick
    return 0, None


def _points2(outcome: int | None) -> int | None:
    """Twice _points: 2 for a win, 1 for a draw, 0 for a loss (None: no win, draw or loss verdict)."""
    return 2 if outcome == WIN else 1 if outcome == DRAW else 0 if outcome == LOSS else None


def _points(outcome: int | None) -> float | None:
    """A full verdict's share of its draw's weight (None: no win, draw or loss verdict)."""
    return 1.0 if outcome == WIN else 0.5 if outcome == DRAW else 0.0 if outcome == LOSS else None


def calibration(plays: list[PegPlay]) -> tuple[dict[tuple[int, int | None], float], int]:
    """How often the full solve confirms each quick-pass verdict: for each quick level and verdict (see
    quick_key; (0, None): not judged), the share of points the full verdicts gave the draws that had it, over
    every play's draws solved at both depths, weighted by the draws' weights; a prior worth two average draw
    groups keeps a rate with few full verdicts near the quick verdict's value. Returns the rates and the full
    verdicts counted. From the plays' running sums: no draw group is visited."""
    num2: dict[tuple[int, int | None], int] = {}
    den: dict[tuple[int, int | None], int] = {}
    n = 0
    weight = 0
    groups = 0
    for p in plays:
        groups += len(p.groups)
        weight += p.total_weight
        n += p.judged
        for key, w in p.judged_weight.items():
            den[key] = den.get(key, 0) + w
        for key, v2 in p.judged_points2.items():
            num2[key] = num2.get(key, 0) + v2
    prior_w = 2 * weight / groups if groups else 1.0
    all_pts = sum(num2.values()) / 2
    all_w = sum(den.values())
    rates: dict[tuple[int, int | None], float] = {}
    keys = [(0, None)] + [(level, q) for level in (1, 2) for q in (WIN, DRAW, LOSS, UNRESOLVED)]
    for key in keys:
        # the prior: halfway between the quick verdict's value and a coin toss (never certain, so that a rate
        # confirmed on every draw so far keeps some doubt); without a quick verdict, the full solve's rate
        # over every draw so far
        value = _points(key[1])
        prior = (value + 0.5) / 2 if value is not None else (all_pts + 0.5 * prior_w) / (all_w + prior_w)
        rates[key] = (num2.get(key, 0) / 2 + prior * prior_w) / (den.get(key, 0) + prior_w)
    return rates, n


def estimate_plays(plays: list[PegPlay]) -> int:
    """Set each play's estimate: each draw's full verdict where it has one (win, draw or loss), else the rate
    at which the full solve confirms its quick verdict (see calibration), with the standard deviation of
    those guesses taken as independent. Returns the full verdicts the calibration rests on. From the plays'
    running sums: no draw group is visited."""
    rates, n = calibration(plays)
    for p in plays:
        pts = sum(p.judged_points2.values()) / 2
        var = 0.0
        for key, w in p.open_weight.items():
            if w:
                r = rates[key]
                pts += w * r
                var += p.open_squares[key] * r * (1 - r)
        p.est, p.est_sd = pts, var ** 0.5
    return n


def name_leader(res: PegResult) -> None:
    """Name a leader from what is known (the plays' estimates set by estimate_plays). A finished solve names
    its best play; before that, a play whose lower bound no other play's upper bound exceeds is proven.
    Otherwise the leader is the play with the best conservative estimate (full-depth verdicts where they
    exist, the calibrated quick pass elsewhere, less one standard deviation) among the plays the bounds do
    not show to be behind; plays tied with it by everything known are listed, not hidden."""
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
        res.leader_ties = [p for p in plays[1:] if not p.cut_off and p.points == plays[0].points
                           and p.spread == plays[0].spread]
        return
    if len(plays) == 1:
        res.leader, res.leader_reason, res.leader_depth = plays[0], "the only play", "only"
        return
    top = plays[max(range(len(plays)), key=lambda i: (plays[i].lower, -i))]   # the first of the highest
    others = max((q.upper for q in plays if q is not top), default=float("-inf"))
    if top.lower > others or (top.lower == others and top.lower > 0):
        # no other play can end above it (an equal bound: at best a tie)
        res.leader, res.leader_depth = top, "full"
        res.leader_reason = "proven by bounds" if top.lower > others else "proven by bounds: no play can beat it"
        res.leader_ties = [q for q in plays if q is not top and q.settled and top.settled and q.lower == top.lower]
        return
    full = sum(p.judged for p in plays)
    if full == 0 and not all(p.quick_complete for p in contenders):
        # nothing to rank the plays by yet
        res.no_leader_reason = ("the quick pass is under way" if res.phase in ("setup", "quick")
                                else "stopped before the quick pass judged every play")
        return
    # the plays the bounds do not show to be behind another
    alive = [p for p in contenders if p.upper >= res.best_lower] or contenders
    if not alive:
        res.no_leader_reason = "every play is cut off"
        return
    index = {id(p): i for i, p in enumerate(plays)}

    def key(p: PegPlay) -> tuple[float, float, float, float, float]:
        return (round(p.conservative, 6), round(p.est, 6), p.lower, p.quick_best, -index[id(p)])

    best = max(alive, key=key)
    res.leader = best
    res.leader_ties = [p for p in alive if p is not best and key(p)[:4] == key(best)[:4] and p.upper == best.upper]
    if full == 0:
        res.leader_depth = "quick"
        label = QUICK2_LABEL if best.quick_level == 2 else QUICK_LABEL
        res.leader_reason = f"best at the {label}; the full {res.endgame_plies}-ply solve is under way"
    else:
        res.leader_depth = "estimate"
        where = (f"full-depth verdicts on all its {best.groups_total} draw groups" if best.pending == 0 else
                 f"full-depth verdicts on {best.groups_done} of its {best.groups_total} draw groups, the quick "
                 f"pass elsewhere (calibrated on {res.calibrated_on} full verdicts)")
        res.leader_reason = f"best estimate less its uncertainty: {where}"
