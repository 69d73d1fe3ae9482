"""The pre-endgame's result: per-play tallies and bounds (PegPlay), the solve's snapshot (PegResult), naming
a leader only from what is known, and the result's text (the leader line, the table) and JSON."""

from __future__ import annotations

from dataclasses import dataclass

from macondo_server.analysis.peg.draws import DrawGroup
from macondo_server.analysis.peg.options import (
    DRAW,
    LOSS,
    OUTCOME_NAMES,
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
              ld, board) -> PegPlay:
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

    def leader_line(self) -> str:
        if self.leader is not None:
            p = self.leader
            if self.finished:
                return f"Winner: {p.table} ({self.leader_reason})"
            if self.leader_depth == "quick":
                return (f"Leader: {p.table} ({self.leader_reason}: quick {points_text(p.quick_points)} of "
                        f"{self.total_permutations}; at full depth so far {points_text(p.lower)} to {points_text(p.upper)})")
            if len(self.plays) == 1:
                return (f"Leader: {p.table} (the only play; so far {points_text(p.lower)} to {points_text(p.upper)} of "
                        f"{self.total_permutations})")
            return (f"Leader: {p.table} ({self.leader_reason}: at least {points_text(p.lower)} of {self.total_permutations}, "
                    f"every other play at most {points_text(self._others_upper(p))})")
        return (f"No leader yet: {self.no_leader_reason} (best lower bound {points_text(self.best_lower)}, "
                f"best upper bound {points_text(self.best_upper)} of {self.total_permutations})")

    def _others_upper(self, p: PegPlay) -> float:
        return max((q.upper for q in self.plays if q is not p), default=0.0)

    def work_line(self) -> str:
        """Rate and work left (in the current pass), for progress lines."""
        eta = self.eta_seconds
        what = "quick pass" if self.phase in ("quick", "setup") else f"{self.endgame_plies}-ply solve"
        left = f", {what}: at most {self.groups_left} draw groups (~{self.endgames_left} endgames) left"
        if eta is not None and not self.finished:
            left += f", ~{_duration(eta)} at this rate"
        return f"{self.endgames_per_second:.0f} endgames/s{left if not self.finished else ''}"

    def to_json(self) -> dict:
        tot = self.total_permutations
        return {
            "winner": self.winner.text if self.winner else None,
            "leader": self.leader.text if self.leader else None,
            "leader_reason": self.leader_reason or None,
            "leader_depth": self.leader_depth or None,
            "phase": self.phase,
            "opponent_model": self.opponent_model,
            "endgame_plies": self.endgame_plies,
            "quick_pass": {"endgame_plies": QUICK_PLIES, "replies_per_turn": QUICK_REPLIES,
                           "draws_done": self.quick_done_jobs},
            "no_leader_reason": self.no_leader_reason or None,
            "best_lower": self.best_lower,
            "best_upper": self.best_upper,
            "total_permutations": tot,
            "plays": [
                {
                    "move": p.text,
                    "display": p.table,
                    "score": p.score,
                    "wins": p.points,
                    "win_pct": round(100 * p.points / tot, 2) if tot else 0.0,
                    "lower": p.lower,
                    "upper": p.upper,
                    "draws_done": p.groups_done,
                    "draws_total": p.groups_total,
                    "complete_at": p.complete_at or None,
                    "quick_wins": p.quick_points,
                    "quick_draws_done": p.quick_done,
                    "estimate": p.estimate,
                    "pending_weight": p.pending,
                    "spread": round(p.spread, 2) if p.spread is not None else None,
                    "cut_off": p.cut_off,
                    "unresolved": p.unresolved,
                    "outcome_counts": outcome_counts(p),
                    "outcomes": [
                        {"draw": g.label, "result": OUTCOME_NAMES[g.outcome or 0], "weight": g.weight}
                        for g in _ordered_groups(p)
                    ],
                }
                for p in self.plays
            ],
            "endgames": self.endgames,
            "nested_calls": self.nested_calls,
            "nested_cache_hits": self.nested_hits,
            "opponent_solves": self.opp_solves,
            "seconds": round(self.seconds, 3),
            "endgames_per_second": round(self.endgames_per_second, 1),
            "draw_groups_left": self.groups_left,
            "endgames_left_estimate": self.endgames_left,
            "complete": self.complete,
            "checkpoint": {"reused": self.reused, "recorded": self.checkpointed},
            "cluster": {"workers": self.cluster_workers, "tasks": self.cluster_tasks} if self.cluster_workers else None,
        }


def points_text(x: float) -> str:
    """Points as shown: whole numbers without a decimal."""
    return f"{x:.1f}" if x != int(x) else str(int(x))


def _duration(sec: float) -> str:
    if sec < 90:
        return f"{sec:.0f} s"
    if sec < 5400:
        return f"{sec / 60:.0f} min"
    return f"{sec / 3600:.1f} h"


def outcome_counts(p: PegPlay) -> dict:
    """Draw groups and their weight per verdict, plus those not solved yet ("pending")."""
    out = {name: {"draws": 0, "weight": 0} for name in ("win", "draw", "loss", "unresolved", "pending")}
    for g in p.groups:
        name = "pending" if g.outcome is None else OUTCOME_NAMES[g.outcome]
        out[name]["draws"] += 1
        out[name]["weight"] += g.weight
    return out


def _ordered_groups(p: PegPlay) -> list[DrawGroup]:
    order = {WIN: 0, DRAW: 1, LOSS: 2, UNRESOLVED: 3}
    return sorted((g for g in p.groups if g.outcome is not None), key=lambda g: (order[g.outcome or 0], g.label))


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


_MARKS = {WIN: "👍", DRAW: "🤝", LOSS: "👎", UNRESOLVED: "?"}
SUMMARY_AT = 6   # a verdict with more draws than this is shown as a count and weight unless verbose


def outcome_text(p: PegPlay, verbose: bool = False) -> str:
    """The Outcomes column: the draws of each verdict, or their count and weight when there are many."""
    parts = []
    groups = _ordered_groups(p)
    for code in (WIN, DRAW, LOSS, UNRESOLVED):
        gs = [g for g in groups if g.outcome == code]
        if not gs:
            continue
        if verbose or len(gs) <= SUMMARY_AT:
            parts.append(f"{_MARKS[code]}: " + " ".join(g.label for g in gs))
        else:
            parts.append(f"{_MARKS[code]}: {len(gs)} draws (weight {sum(g.weight for g in gs)})")
    if p.pending and not p.cut_off:
        parts.append(f"not solved yet: {p.groups_total - p.groups_done} draws (weight {p.pending})")
    return " ".join(parts)


def format_table(res: PegResult, rows: int = 30, verbose: bool = False) -> str:
    tot = res.total_permutations
    lines = [res.leader_line()]
    exact = res.finished and all(p.cut_off or p.settled for p in res.plays)
    if exact:
        lines.append(f"{'Play':<20}{'Wins':<8}{'%Win':<8}{'Spread':<9}{'Outcomes':<32}")
    else:
        lines.append(f"{'Play':<20}{'Wins (min-max)':<18}{'%Win (min-max)':<17}{'Quick':<10}{'Draws':<12}"
                     f"{'Outcomes':<32}")
    shown = res.plays[:rows]
    if not exact and res.plays and rows < len(res.plays):
        # the play with the most points for certain is always shown, even when plays it has not beaten yet
        # (their draws still unsolved) sort above it
        best = max(res.plays, key=lambda p: p.lower)
        if best not in shown:
            shown = shown[:-1] + [best] if rows > 1 else [best]
    for p in shown:
        spread = f"{p.spread:.2f}" if p.spread is not None else ""
        mark = " ❌" if p.cut_off else ""
        if exact:
            if p.cut_off:
                wins, pct = "---", "---"
            else:
                wins, pct = f"{p.points:.1f}", f"{100 * p.points / tot:.2f}"
            extra = f" (unresolved {p.unresolved})" if p.unresolved else ""
            lines.append(f"{p.table:<20}{wins:<8}{pct:<8}{spread:<9}{outcome_text(p, verbose)}{extra}{mark}")
            continue
        if p.lower == p.upper:
            wins, pct = f"{p.lower:.1f}", f"{100 * p.lower / tot:.2f}"
        else:
            wins = f"{p.lower:.1f}-{p.upper:.1f}"
            pct = f"{100 * p.lower / tot:.1f}-{100 * p.upper / tot:.1f}"
        done = f"{p.groups_done}/{p.groups_total}"
        extra = f" (unresolved {p.unresolved})" if p.unresolved else ""
        quick = (f"{100 * p.quick_points / tot:.1f}%" if p.quick_complete else
                 f"{p.quick_done}/{p.groups_total}" if p.quick_done else "")
        lines.append(f"{p.table:<20}{wins:<18}{pct:<17}{quick:<10}{done:<12}{outcome_text(p, verbose)}{extra}{mark}")
    if len(res.plays) > len(shown):
        lines.append(f"... {len(res.plays) - len(shown)} more plays")
    lines.append("❌ marks plays cut off early (they cannot beat the leader).")
    if not exact:
        lines.append(f"min-max: wins certain so far at {res.endgame_plies} plies - wins if every draw not yet "
                     "resolved were won; Draws: draw groups with a verdict / all; Quick: win % at the "
                     f"{QUICK_LABEL} (a preview, not a bound).")
    lines.append("[XY]Z: we draw X and Y in any order and Z stays in the bag for the opponent; "
                 f"{tot} ordered draws in all.")
    return "\n".join(lines)

