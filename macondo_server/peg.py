"""Pre-endgame solving (1 to 6 tiles in the bag): candidates, draw orders and their weights, outcome labels,
the thread pool, early cut-off, the spread tiebreak and the result table. The per-draw search (every
opponent reply, nested solves, endgames) runs in engine_cy.peg with the GIL released."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine_cy.endgame import TranspositionTable
from engine_cy.peg import PegWorker
from engine_cy.prune import pruned_game

from .checkpoint import CheckpointStore, solve_key
from .cluster import Cluster, Dispatcher, lexicon_fingerprint, new_run_id
from .engine import Engine, find_move, known_opponent_tiles
from .formats import (
    RACK_SIZE,
    FormatError,
    Move,
    Position,
    check_text,
    excerpt,
    format_move,
    rack_tiles,
    write_cgp,
)
from .gamestate import game_from_position
from .jobs import watch_stop

WIN, DRAW, UNRESOLVED, LOSS = 0, 1, 2, 3
OUTCOME_NAMES = ("win", "draw", "unresolved", "loss")
TIEBREAK_POOL = 20


EVENTUALITY_TT_MB = 64   # the table of the endgames an eventuality explanation solves

# The quick pass: every candidate on every draw at low fidelity, before the full solve, so that a complete
# ranking exists from the first seconds on. Its endgames are searched QUICK_PLIES deep and each decision
# (opponent replies, our nested candidates) looks at its QUICK_REPLIES best moves only, so a quick "win" is a
# win against those replies: a preview, never a bound on the full solve.
QUICK_PLIES = 1
QUICK_REPLIES = 8
OPPONENT_MODELS = ("pessimistic", "solver")
LEAF_MODES = {"static": 0, "playout": 1, "auto": 2}
RISK_MOVES = 2


@dataclass
class PegOptions:
    endgame_plies: int = 4
    only_solve: list[str] = field(default_factory=list)
    max_tiles_left: int = 1
    max_nested_depth: int = 1
    skip_deep_pass: bool = True
    early_cutoff: bool = False
    skip_tiebreaker: bool = False
    opp_rack: str | None = None
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    max_time: float = 0.0
    tt_megabytes: int = 256
    lexicon: str | None = None
    endgame_heuristics: bool = False   # a greedy playout at every endgame leaf (Macondo's choice; ~7x slower)
    # endgame leaves: "auto" = a greedy playout in the endgames where a tile is stuck or at risk at the root
    # (RISK_MOVES plays or fewer use it), the spread elsewhere; "playout" = everywhere; "static" = nowhere
    endgame_leaf: str = "auto"
    opponent_model: str = "pessimistic"  # or "solver": the opponent solves their own pre-endgame (see PegWorker)
    quick_pass: bool = True              # a complete low-fidelity pass first (anytime ranking)
    # search in the lexicon pruned to the board (engine_cy.prune): the same results, less work per node
    prune_lexicon: bool = True

    def validate(self) -> None:
        if not 1 <= self.endgame_plies <= 30:
            raise ValueError(f"endgame plies must be 1 to 30, got {self.endgame_plies}")
        if self.max_tiles_left < -1 or self.max_tiles_left > 6:
            raise ValueError(f"max tiles left must be -1 to 6, got {self.max_tiles_left}")
        if self.max_nested_depth < -1:
            raise ValueError(f"max nested depth must be -1 (unlimited) or more, got {self.max_nested_depth}")
        if not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be 1 to 256, got {self.threads}")
        if self.max_time < 0:
            raise ValueError(f"max time must not be negative, got {self.max_time}")
        if self.endgame_leaf not in LEAF_MODES:
            raise ValueError(f"endgame leaf must be one of {', '.join(LEAF_MODES)}, got {excerpt(self.endgame_leaf)}")
        if self.opponent_model not in OPPONENT_MODELS:
            raise ValueError(f"opponent model must be one of {', '.join(OPPONENT_MODELS)}, "
                             f"got {excerpt(self.opponent_model)}")
        if not 1 <= self.tt_megabytes <= 65536:
            raise ValueError(f"transposition table size must be 1 to 65536 MB, got {self.tt_megabytes}")


def ordered_draws(counts: list[int], k: int) -> list[tuple[tuple[int, ...], int]]:
    """Every distinct ordered draw of k tiles from `counts`, with its weight: the number of ordered draws of
    distinguishable tiles it stands for (the product of the falling multiplicities)."""
    out: list[tuple[tuple[int, ...], int]] = []
    cur: list[int] = []
    c = list(counts)

    def rec(weight: int) -> None:
        if len(cur) == k:
            out.append((tuple(cur), weight))
            return
        for ml, n in enumerate(c):
            if n:
                c[ml] -= 1
                cur.append(ml)
                rec(weight * n)
                cur.pop()
                c[ml] += 1

    rec(1)
    return out


def group_key(seq: tuple[int, ...], tiles_played: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Draws that give the same position after a play of `tiles_played` tiles: what we draw (a multiset)
    and what stays in the bag (in order)."""
    t = min(tiles_played, len(seq))
    return tuple(sorted(seq[:t])), seq[t:]


def draw_label(ld, seq: tuple[int, ...], tiles_played: int) -> str:
    head, rest = group_key(seq, tiles_played)
    return "[" + "".join(ld.label(t) for t in head) + "]" + "".join(ld.label(t) for t in rest)


@dataclass
class DrawGroup:
    label: str
    seq: tuple[int, ...]      # a representative draw order (first drawn first)
    weight: int
    outcome: int | None = None
    spread: int | None = None
    quick: int | None = None  # the quick pass's verdict (a preview at low fidelity)


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
                return (f"Leader: {p.table} ({self.leader_reason}: quick {_pts(p.quick_points)} of "
                        f"{self.total_permutations}; at full depth so far {_pts(p.lower)} to {_pts(p.upper)})")
            if len(self.plays) == 1:
                return (f"Leader: {p.table} (the only play; so far {_pts(p.lower)} to {_pts(p.upper)} of "
                        f"{self.total_permutations})")
            return (f"Leader: {p.table} ({self.leader_reason}: at least {_pts(p.lower)} of {self.total_permutations}, "
                    f"every other play at most {_pts(self._others_upper(p))})")
        return (f"No leader yet: {self.no_leader_reason} (best lower bound {_pts(self.best_lower)}, "
                f"best upper bound {_pts(self.best_upper)} of {self.total_permutations})")

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


def _pts(x: float) -> str:
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


_VERB = {WIN: "win", DRAW: "draw", UNRESOLVED: "cannot tell (unresolved)", LOSS: "lose"}


def _lightest_first(groups: list[DrawGroup]) -> list[int]:
    order = sorted(range(len(groups)), key=lambda gi: (-groups[gi].weight, gi))
    return order[::-1]


def _counts_str(ld, counts: list[int]) -> str:
    return "".join(ld.label(m) * n for m, n in enumerate(counts))


def _ordered_groups(p: PegPlay) -> list[DrawGroup]:
    order = {WIN: 0, DRAW: 1, LOSS: 2, UNRESOLVED: 3}
    return sorted((g for g in p.groups if g.outcome is not None), key=lambda g: (order[g.outcome or 0], g.label))


class PegJob:
    """One pre-endgame solve: validated on construction; run() from any thread, stop() from any other."""

    def __init__(self, engine: Engine, pos: Position, opts: PegOptions,
                 stop: threading.Event | None = None, cluster: Cluster | None = None,
                 checkpoint: CheckpointStore | None = None, resume: bool = False) -> None:
        """`stop` (optional) is checked while the plays are set up; once set, the setup ends early. With
        `cluster`, the passes run as tasks on its workers (same verdicts, see macondo_server.cluster); with
        `checkpoint`, every verdict is recorded there and `resume` takes the ones recorded before."""
        opts.validate()
        self.cluster = cluster
        self.checkpoint = checkpoint
        self.resume = resume
        self.reused = 0
        self.checkpointed = 0
        self._ckpt_rows: list[tuple[str, str, str, int, int | None]] = []
        self._ckpt_key = ""
        self._ckpt_flushed = 0.0
        self._remote = [0, 0, 0, 0, 0]   # endgames, nested calls, nested cache hits, opponent solves, nodes (cluster)
        self._dispatch: Dispatcher | None = None
        self._exact_done: dict[tuple[str, str], int] = {}   # (play, draw) -> exact spread (the tiebreak)
        self.opts = opts
        self.pos = pos
        self._engine = engine
        lex = engine.lexicon_for(pos, opts.lexicon)
        self.lex = lex
        ld = pos.ld
        if len(pos.racks[0]) != RACK_SIZE:
            raise FormatError(f"the player on turn must hold {RACK_SIZE} tiles, not {len(pos.racks[0])}")
        unseen = pos.unseen_counts(0)
        k = sum(unseen) - RACK_SIZE
        if not 1 <= k <= 6:
            raise FormatError(f"the bag must hold 1 to 6 tiles for a pre-endgame, not {max(k, 0)}"
                              + (" (use endgame)" if k <= 0 else ""))
        self.k = k
        known = known_opponent_tiles(pos, opts.opp_rack) if opts.opp_rack else []
        pool = list(unseen)
        for t in known:
            pool[t] -= 1
        self.unseen = unseen
        self.pool = pool
        self.known = known
        self.draws = ordered_draws(pool, k)
        self.total = sum(w for _, w in self.draws)
        bb = int(pos.ops.get("bb", "50"))
        self.bingo_bonus = bb
        gen = engine.generate(pos, lexicon=lex.name)
        cands = gen.moves
        if opts.only_solve:
            cands = [find_move(cands, text, pos) for text in opts.only_solve]
        else:
            cands = [c for c in cands if c.move.kind != "exchange"
                     and (opts.max_tiles_left < 0 or k - min(c.tiles_played, k) <= opts.max_tiles_left)]
        self.plays: list[PegPlay] = []
        # the draw groups depend only on how many tiles a play draws: worked out once per count, then copied
        templates: dict[int, list[tuple[str, tuple[int, ...], int]]] = {}
        for c in cands:
            if stop is not None and stop.is_set():
                break   # stopped during the setup: the plays listed so far, none solved
            t = c.tiles_played if c.move.kind == "place" else 0
            if min(t, k) not in templates:
                groups: dict = {}
                for seq, w in self.draws:
                    gk = group_key(seq, t)
                    if gk in groups:
                        groups[gk][2] += w
                    else:
                        groups[gk] = [draw_label(ld, seq, t), seq, w]
                templates[min(t, k)] = [(lab, seq, w) for lab, seq, w in groups.values()]
            self.plays.append(PegPlay(c.move, format_move(c.move, ld, pos.board),
                                      format_move(c.move, ld, pos.board, style="table").strip(),
                                      c.score, t, t >= k,
                                      [DrawGroup(lab, seq, w) for lab, seq, w in templates[min(t, k)]]))
        game = game_from_position(pos, lex)
        game.solver_mode()
        if opts.prune_lexicon:
            game = pruned_game(game)
        self.game = game
        # on a cluster the workers' tables do the work; the local worker only serves explanations
        self.tt = TranspositionTable(opts.tt_megabytes if cluster is None else min(opts.tt_megabytes, 16))
        self.workers = [PegWorker(game, game.kwg, lex.klv, lex.ld, self.tt, bb)
                        for _ in range(opts.threads if cluster is None else 1)]
        for w in self.workers:
            w.skip_deep_pass = opts.skip_deep_pass
        self._configure(quick=False)   # the full solve's settings (an eventuality uses them as they are)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.done_jobs = 0
        self.quick_jobs_done = 0
        self.phase = "setup"     # then "quick", "full", "done"
        self._last_progress = 0.0
        self._eg_quick = 0
        self.total_jobs = sum(len(p.groups) for p in self.plays)
        self.t0 = time.monotonic()

    # ------------------------------------------------------------------ running

    def stop(self) -> None:
        self._stop.set()
        for w in self.workers:
            w.request_stop()

    def _opp_counts(self, seq: tuple[int, ...]) -> list[int]:
        rest = list(self.pool)
        for t in seq:
            rest[t] -= 1
        for t in self.known:
            rest[t] += 1
        return rest

    @staticmethod
    def _move_tuple(p: PegPlay) -> tuple:
        m = p.move
        return (m.kind, m.row, m.col, m.vertical, tuple(m.tiles), p.score)

    def _lower2(self, p: PegPlay) -> int:
        """Twice the points p has for certain (wins and draws found so far)."""
        return 2 * p.wins + p.draws

    def _upper2(self, p: PegPlay) -> int:
        """Twice the most points p can still reach: everything not yet lost, drawn or left unresolved."""
        return 2 * (self.total - p.unresolved) - p.found_losses2

    def _phase_config(self, quick: bool) -> dict:
        """The worker settings of the quick pass or the full solve (everything a verdict depends on besides
        the position, the play and the draw)."""
        opts = self.opts
        if quick:
            cfg = {"plies": QUICK_PLIES, "max_replies": QUICK_REPLIES,
                   "max_nested": 1 if opts.max_nested_depth < 0 else min(opts.max_nested_depth, 1),
                   "opp_solver": False, "leaf_mode": LEAF_MODES["static"], "risk_moves": RISK_MOVES}
        else:
            cfg = {"plies": opts.endgame_plies, "max_replies": 0, "max_nested": opts.max_nested_depth,
                   "opp_solver": opts.opponent_model == "solver",
                   "leaf_mode": LEAF_MODES["playout" if opts.endgame_heuristics else opts.endgame_leaf],
                   "risk_moves": RISK_MOVES}
        cfg["skip_deep_pass"] = opts.skip_deep_pass
        return cfg

    def _configure(self, quick: bool) -> None:
        """Set every worker for the quick pass or the full solve."""
        cfg = self._phase_config(quick)
        for w in self.workers:
            for name, value in cfg.items():
                setattr(w, name, value)

    def _run_pool(self, work: Callable[[PegWorker], None], progress: Callable[[PegResult], None] | None,
                  interval: float, deadline: float | None) -> None:
        """Run `work` on every worker's thread until they end; progress on a steady beat; the time limit and
        Ctrl-C stop the solve (what is solved is kept)."""
        pool = [threading.Thread(target=work, args=(w,), daemon=True) for w in self.workers]
        for th in pool:
            th.start()
        try:
            while any(th.is_alive() for th in pool):
                for th in pool:
                    th.join(0.05)
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    self.stop()
                self._flush_checkpoint()   # at most once a second: a killed solve loses at most that
                if progress is not None and now - self._last_progress >= interval:
                    self._last_progress = now
                    progress(self.snapshot(final=False))
        except KeyboardInterrupt:
            self.stop()
            for th in pool:
                th.join()

    def run(self, progress: Callable[[PegResult], None] | None = None, interval: float = 1.0,
            stop: threading.Event | None = None) -> PegResult:
        """The anytime solve: the quick pass (every play, every draw, low fidelity), then the full solve at
        the requested plies, best-first; a stop or the time limit returns what is known at that moment."""
        opts = self.opts
        deadline = self.t0 + opts.max_time if opts.max_time > 0 else None
        if deadline is not None:
            for w in self.workers:
                w.set_deadline(deadline)  # endgames in flight stop at the deadline
        self._last_progress = time.monotonic()
        if self.checkpoint is not None:
            self._open_checkpoint()
        if self.cluster is not None:
            self._dispatch = Dispatcher(self.cluster, self._cluster_spec())
        try:
            with watch_stop(stop, self.stop):
                if opts.quick_pass and len(self.plays) > 1:   # one play: nothing to rank, no preview needed
                    self._quick_pass(progress, interval, deadline)
                if not self._stop.is_set():
                    self._full_pass(progress, interval, deadline)
                self.phase = "done"
                if not self._stop.is_set() and not opts.skip_tiebreaker:
                    self._tiebreak()
        finally:
            self._flush_checkpoint(force=True)
            if self._dispatch is not None:
                self._dispatch.forget()
        return self.snapshot(final=True)

    # ------------------------------------------------------------------ checkpoints and the cluster

    def nodes(self) -> int:
        """Endgame search nodes so far, here and on the cluster (benchmarks: work independent of the load)."""
        return sum(w.nodes for w in self.workers) + self._remote[4]

    def checkpoint_key(self) -> str:
        """The checkpoint key: the position, the lexicon's and leaves' content, and every option that changes
        a verdict (plies, nesting, passes, opponent model, endgame leaves, known opponent tiles, the quick
        pass's settings). Options that only choose which plays are solved or when to stop are not in it:
        each verdict is recorded under its play and draw."""
        return solve_key({
            "cgp": write_cgp(self.pos),
            "lexicon": self.lex.name,
            "lexicon_fingerprint": lexicon_fingerprint(self._engine, self.lex.name),
            "known_opponent_tiles": sorted(self.known),
            "quick": self._phase_config(quick=True),
            "full": self._phase_config(quick=False),
        })

    def _open_checkpoint(self) -> None:
        assert self.checkpoint is not None
        self._ckpt_key = self.checkpoint_key()
        stored = self.checkpoint.begin(self._ckpt_key, write_cgp(self.pos), self.resume)
        reused = 0
        with self._lock:
            for p in self.plays:
                for g in p.groups:
                    q = stored.get(("quick", p.text, g.label))
                    if q is not None and g.quick is None:
                        p.record_quick(g, q[0])
                        self.quick_jobs_done += 1
                        reused += 1
                    f = stored.get(("full", p.text, g.label))
                    if f is not None and g.outcome is None:
                        p.record(g, f[0])
                        self.done_jobs += 1
                        reused += 1
                    e = stored.get(("exact", p.text, g.label))
                    if e is not None and e[1] is not None:
                        self._exact_done[(p.text, g.label)] = e[1]
                        reused += 1
        self.reused = reused
        self.checkpointed = len(stored)

    def _note(self, phase: str, p: PegPlay, g: DrawGroup, outcome: int, spread: int | None = None) -> None:
        """A verdict to record in the checkpoint (called with the lock held)."""
        if self.checkpoint is not None:
            self._ckpt_rows.append((phase, p.text, g.label, outcome, spread))

    def _flush_checkpoint(self, force: bool = False) -> None:
        if self.checkpoint is None:
            return
        now = time.monotonic()
        if not force and now - self._ckpt_flushed < 1.0:
            return
        self._ckpt_flushed = now
        with self._lock:
            rows, self._ckpt_rows = self._ckpt_rows, []
        if rows:
            self.checkpoint.put(self._ckpt_key, rows)
            self.checkpointed += len(rows)

    def _cluster_spec(self) -> dict:
        return {"run": new_run_id(), "cgp": write_cgp(self.pos), "lexicon": self.lex.name,
                "fingerprint": lexicon_fingerprint(self._engine, self.lex.name), "bingo_bonus": self.bingo_bonus,
                "tt_mb": self.opts.tt_megabytes, "prune_lexicon": self.opts.prune_lexicon,
                # the worker processes of one machine share one table as threads do (off: one table each,
                # for comparisons; the verdicts are the same)
                "shared_tt": os.environ.get("MACONDO_CLUSTER_SHARED_TT", "1") != "0"}

    def _cluster_pass(self, quick: bool, next_item: Callable[[], tuple[int, int] | None],
                      on_item: Callable[[int, int, int, int | None], None], remaining: Callable[[], int],
                      progress, interval: float, deadline: float | None, exact: bool = False,
                      first: int = 1) -> None:
        """One pass on the cluster: items (play, group) from next_item() as slots free up, each verdict to
        on_item(pi, gi, outcome, spread); progress on the same beat as in-process; the time limit stops it."""
        assert self._dispatch is not None
        cfg = self._phase_config(quick)

        def next_batch(size: int) -> list | None:
            batch = []
            for _ in range(size):
                job = next_item()
                if job is None:
                    break
                pi, gi = job
                p = self.plays[pi]
                g = p.groups[gi]
                batch.append((pi, gi, self._move_tuple(p), g.seq, self._opp_counts(g.seq), exact))
            return batch or None

        def on_result(res: dict) -> None:
            with self._lock:
                self._remote[0] += res["endgames"]
                self._remote[1] += res["nested_calls"]
                self._remote[2] += res["nested_hits"]
                self._remote[3] += res["opp_solves"]
                self._remote[4] += res.get("nodes", 0)
            for pi, gi, outcome, spread in res["results"]:
                on_item(pi, gi, outcome, spread)

        def tick() -> None:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self.stop()
            self._flush_checkpoint()
            if progress is not None and now - self._last_progress >= interval:
                self._last_progress = now
                progress(self.snapshot(final=False))

        def cut_plays() -> set[int]:
            return {pi for pi, p in enumerate(self.plays) if p.cut_off}

        def deadline_in() -> float | None:
            return None if deadline is None else deadline - time.monotonic()

        def affinity(item: tuple) -> tuple:
            # the draws of one play that leave us the same rack share nested solves and table entries
            pi, _, _, seq, _, _ = item
            t = min(self.plays[pi].tiles_played, self.k)
            return pi, tuple(sorted(seq[:t]))

        try:
            self._dispatch.run_phase(cfg, next_batch, on_result, tick, self._stop.is_set, remaining, deadline_in,
                                     cancel_ids=None if quick else cut_plays, first=first, affinity=affinity)
        except KeyboardInterrupt:
            self.stop()

    def _quick_pass(self, progress, interval, deadline) -> None:
        self.phase = "quick"
        self._configure(quick=True)
        items = [(pi, gi) for pi, p in enumerate(self.plays) for gi in range(len(p.groups))
                 if p.groups[gi].quick is None]   # (a resumed solve: those not recorded yet)
        items.reverse()   # popped from the end: plays in static-equity order
        if self.cluster is not None:
            def next_item() -> tuple[int, int] | None:
                with self._lock:
                    return items.pop() if items else None

            def on_item(pi: int, gi: int, outcome: int, spread: int | None) -> None:
                with self._lock:
                    p = self.plays[pi]
                    p.record_quick(p.groups[gi], outcome)
                    self.quick_jobs_done += 1
                    self._note("quick", p, p.groups[gi], outcome)

            self._cluster_pass(True, next_item, on_item, lambda: len(items), progress, interval, deadline, first=4)
            self._flush_checkpoint(force=True)
            return

        def work(w: PegWorker) -> None:
            while not self._stop.is_set():
                with self._lock:
                    if not items:
                        return
                    pi, gi = items.pop()
                p = self.plays[pi]
                g = p.groups[gi]
                outcome, _ = w.solve_draw(self._move_tuple(p), g.seq, self._opp_counts(g.seq))
                if w.stopped:
                    return
                with self._lock:
                    p.record_quick(g, outcome)
                    self.quick_jobs_done += 1
                    self._note("quick", p, g, outcome)

        self._run_pool(work, progress, interval, deadline)
        self._flush_checkpoint(force=True)

    def _full_pass(self, progress, interval, deadline) -> None:
        opts = self.opts
        self.phase = "full"
        self._configure(quick=False)
        rank = {WIN: 0, UNRESOLVED: 1, DRAW: 2, LOSS: 3}

        def order(p: PegPlay) -> list[int]:
            # a loss on a heavy draw rules a play out soonest: the draws the quick pass lost first, then the
            # heaviest (popped from the end, so the list runs the other way)
            key = sorted((gi for gi in range(len(p.groups)) if p.groups[gi].outcome is None),  # (resumed: not yet)
                         key=lambda gi: (-rank.get(p.groups[gi].quick, 1),  # type: ignore[arg-type]
                                         -p.groups[gi].weight, gi))
            return key[::-1]

        pending = [order(p) for p in self.plays]

        def take() -> tuple[int, int] | None:
            """Best-first: the next draw of the play that can still reach the most points (ties: the better
            quick-pass result, then a bag-emptying play, then the earlier play by static equity). With early cut-off, a play whose best
            reachable total is below what another play has for certain is abandoned (reference 11.5, checked
            at every draw)."""
            with self._lock:
                best_lower = max((self._lower2(p) for p in self.plays), default=0)
                choice, choice_key = -1, (-1, -1.0, False)
                for pi, p in enumerate(self.plays):
                    if p.cut_off or not pending[pi]:
                        continue
                    upper = self._upper2(p)
                    if opts.early_cutoff and upper < best_lower:
                        p.cut_off = True
                        continue
                    # equal so far: the cheaper play first (a bag-emptying play costs one endgame per draw;
                    # any other, an endgame per opponent reply), to prove a leader as soon as possible
                    k = (upper, p.quick_points, p.empties_bag)
                    if k > choice_key:
                        choice, choice_key = pi, k
                if choice < 0:
                    return None
                return choice, pending[choice].pop()

        def work(w: PegWorker) -> None:
            while not self._stop.is_set():
                job = take()
                if job is None:
                    return
                pi, gi = job
                p = self.plays[pi]
                g = p.groups[gi]
                outcome, _ = w.solve_draw(self._move_tuple(p), g.seq, self._opp_counts(g.seq))
                if w.stopped or (outcome == UNRESOLVED and deadline is not None and time.monotonic() >= deadline):
                    return  # cut short by a stop or the time limit: the draw stays unsolved, not a verdict
                with self._lock:
                    p.record(g, outcome)
                    self.done_jobs += 1
                    self._note("full", p, g, outcome)

        if self.cluster is not None:
            def on_item(pi: int, gi: int, outcome: int, spread: int | None) -> None:
                if outcome == UNRESOLVED and deadline is not None and time.monotonic() >= deadline:
                    return   # cut short by the time limit: the draw stays unsolved, not a verdict
                with self._lock:
                    p = self.plays[pi]
                    p.record(p.groups[gi], outcome)
                    self.done_jobs += 1
                    self._note("full", p, p.groups[gi], outcome)

            def remaining() -> int:
                with self._lock:
                    return sum(len(x) for pi, x in enumerate(pending) if not self.plays[pi].cut_off)

            self._cluster_pass(False, take, on_item, remaining, progress, interval, deadline)
        else:
            self._run_pool(work, progress, interval, deadline)
        self._flush_checkpoint(force=True)
        with self._lock:
            if opts.early_cutoff:
                best_lower = max((self._lower2(p) for p in self.plays), default=0)
                for p in self.plays:
                    if not p.cut_off and p.pending and self._upper2(p) < best_lower:
                        p.cut_off = True

    def _tiebreak(self) -> None:
        ranked = self._ranked()
        if not ranked:
            return
        top = ranked[0].points
        tied = [p for p in ranked if p.points == top and not p.cut_off and p.unresolved == 0]
        emptying = sorted((p for p in tied if p.empties_bag), key=lambda p: -p.score)[:TIEBREAK_POOL]
        if len(emptying) < 2:
            return
        if self.cluster is not None:
            self._cluster_exact(emptying)
        w = self.workers[0]
        for p in emptying:
            total = 0
            weight = 0
            for g in p.groups:
                if self._stop.is_set():
                    return
                spread = self._exact_done.get((p.text, g.label))
                if spread is None:
                    if self.cluster is not None:
                        return   # stopped on the cluster before this draw was solved
                    outcome, spread = w.solve_draw(self._move_tuple(p), g.seq, self._opp_counts(g.seq), exact=True)
                    if spread is None:
                        return
                    with self._lock:
                        self._note("exact", p, g, outcome, spread)
                g.spread = spread
                total += g.weight * spread
                weight += g.weight
            p.spread_sum, p.spread_weight = total, weight
        for p in emptying:
            p.tiebroken = True

    def _cluster_exact(self, emptying: list[PegPlay]) -> None:
        """The tiebreak's exact spreads of the tied bag-emptying plays, solved on the cluster."""
        index = {id(p): pi for pi, p in enumerate(self.plays)}
        items = [(index[id(p)], gi) for p in emptying for gi, g in enumerate(p.groups)
                 if (p.text, g.label) not in self._exact_done]
        items.reverse()

        def next_item() -> tuple[int, int] | None:
            with self._lock:
                return items.pop() if items else None

        def on_item(pi: int, gi: int, outcome: int, spread: int | None) -> None:
            if spread is None:
                return
            p = self.plays[pi]
            with self._lock:
                self._exact_done[(p.text, p.groups[gi].label)] = spread
                self._note("exact", p, p.groups[gi], outcome, spread)

        self._cluster_pass(False, next_item, on_item, lambda: len(items), None, 1.0, None, exact=True, first=4)
        self._flush_checkpoint(force=True)

    # ------------------------------------------------------------------ --eventuality

    def parse_order(self, letters: str) -> tuple[int, ...]:
        """A draw order (first drawn first) of exactly the bag's size, from the possible bag tiles."""
        ld = self.pos.ld
        check_text(letters, "eventuality", 64)
        seq = tuple(rack_tiles(ld, letters, "eventuality", fold_case=True))
        if len(seq) != self.k:
            raise FormatError(f"eventuality {excerpt(letters)} has {len(seq)} tiles; the bag holds {self.k}")
        left = list(self.pool)
        for t in seq:
            if left[t] <= 0:
                raise FormatError(f"eventuality {excerpt(letters)}: no {ld.label(t)} can be in the bag "
                                  f"(possible bag tiles: {_counts_str(ld, self.pool)})")
            left[t] -= 1
        return seq

    def eventuality(self, letters: str) -> str:
        """Solve one draw order for each candidate play and explain every verdict: racks and bag before
        and after, the replies checked and the decisive one, and the nested solve with each sub-draw's
        verdict (the actual one marked)."""
        from .gamestate import commit

        seq = self.parse_order(letters)
        ld, pos, opts = self.pos.ld, self.pos, self.opts
        w = self.workers[0]
        opp = self._opp_counts(seq)
        bag_txt = "".join(ld.label(t) for t in seq)
        blocks = []
        for p in self.plays:
            if self._stop.is_set():
                break
            mt = self._move_tuple(p)
            t = min(p.tiles_played, self.k)
            ours_after = list(pos.racks[0])
            for tile in p.move.rack_tiles():
                ours_after.remove(tile)
            ours_after += list(seq[:t])
            lines = [f"Eventuality {bag_txt} (first drawn first) for {p.table} ({p.score}):",
                     f"  before: we hold {ld.rack_str(pos.racks[0])}; the bag is {bag_txt}; the opponent holds "
                     f"{_counts_str(ld, opp)}",
                     f"  after {p.table}: we draw {ld.rack_str(list(seq[:t])) or 'nothing'} and hold "
                     f"{ld.rack_str(ours_after) or '(nothing)'}; the bag is "
                     f"{''.join(ld.label(x) for x in seq[t:]) or 'empty'}; the opponent is to move"]
            after_pos = commit(pos, self.lex, p.text, tileorder=bag_txt).position
            # in solver mode with tiles left in the bag the opponent's own solve decides (their every reply
            # need not be judged)
            choice = w.opponent_choice(mt, seq, opp) if opts.opponent_model == "solver" and t < self.k else None
            if choice is not None and not choice[2]:
                choice = None   # no play of theirs to choose from: every reply is judged, as the solver does
            kind, *rest = ("choice",) if choice is not None else w.reply_outcomes(mt, seq, opp)
            if kind == "endgame":
                outcome, spread = rest
                line, final = self._endgame_line(after_pos)
                lines.append(f"  the bag is empty: an endgame with the opponent to move, {opts.endgame_plies} "
                             f"plies: best line {line}; final spread for us {-final:+d}")
            elif choice is not None:
                lines += self._choice_lines(choice, after_pos, ld)
                outcome = max((o for _, o, _ in choice[2]), default=WIN)
            else:
                replies = rest[0]
                tally = {WIN: 0, DRAW: 0, UNRESOLVED: 0, LOSS: 0}
                for _, o in replies:
                    tally[o] += 1
                outcome = max((o for _, o in replies), default=WIN)
                decisive = next((r for r, o in replies if o == outcome), None)
                lines.append(f"  replies checked: {len(replies)} ({tally[WIN]} we win against, {tally[DRAW]} draw, "
                             f"{tally[LOSS]} we lose to, {tally[UNRESOLVED]} unresolved)")
                if decisive is not None:
                    dmove = Move(decisive[0], decisive[1], decisive[2], decisive[3], tuple(decisive[4]))
                    dtext = format_move(dmove, ld, after_pos.board, style="table").strip()
                    lines.append(f"  the decisive reply: {dtext} ({decisive[5]}), after which we "
                                 f"{_VERB[outcome]}")
                    trace = w.nested_trace(mt, seq, opp, decisive)
                    if trace is not None:
                        lines += self._nested_lines(trace, after_pos, dmove, ld)
                    elif dmove.kind == "place" and outcome != UNRESOLVED:
                        # the reply emptied the bag: the endgame that decides it, with us to move
                        staged = dataclasses.replace(after_pos, ops=dict(after_pos.ops))
                        staged.ops["bagorder"] = "".join(ld.label(x) for x in seq[t:])
                        then = commit(staged, self.lex, format_move(dmove, ld, after_pos.board)).position
                        if not then.racks[0] or not then.racks[1]:
                            lines.append(f"    the game ends: final spread for us {then.scores[0] - then.scores[1]:+d}")
                        else:
                            line, final = self._endgame_line(then)
                            lines.append(f"    then the bag is empty and we move first in the endgame: best line "
                                         f"{line}; final spread for us {final:+d}")
            lines.append(f"  verdict: {OUTCOME_NAMES[outcome].upper()}")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def _choice_lines(self, choice, after_pos: Position, ld) -> list[str]:
        """The opponent's own nested solve (opponent model "solver"), shown as ours is."""
        best2, total, tied = choice
        out = [f"  the opponent solves their own pre-endgame (they cannot see our rack or the bag): "
               f"{len(tied)} play{'s' if len(tied) != 1 else ''} tie with the fewest expected losses "
               f"({_pts(best2 / 2)} of {total} orderings of what they cannot see, a draw counting half); "
               "ties go against us"]
        if not tied:
            out.append("    no play of theirs could be fully examined: every reply is checked instead")
            return out
        for reply, ours, verdicts in tied[:5]:
            dmove = Move(reply[0], reply[1], reply[2], reply[3], tuple(reply[4]))
            text = format_move(dmove, ld, after_pos.board, style="table").strip()
            t = dmove.tiles_played if dmove.kind == "place" else 0
            groups: dict[str, list] = {}
            for sub, weight, verdict in verdicts:
                g = groups.setdefault(draw_label(ld, sub, t), [0, verdict])
                g[0] += weight
            by = ", ".join(f"{lab} {OUTCOME_NAMES[LOSS - v] if v in (WIN, LOSS) else OUTCOME_NAMES[v]}"
                           for lab, (_, v) in list(groups.items())[:12])
            more = f" (+{len(groups) - 12} more)" if len(groups) > 12 else ""
            out.append(f"    {text} ({reply[5]}): for us on the actual bag: {OUTCOME_NAMES[ours]}; by what they "
                       f"think is in the bag (our result): {by}{more}")
        if len(tied) > 5:
            out.append(f"    ... {len(tied) - 5} more tied plays")
        return out

    def _endgame_line(self, pos: Position) -> tuple[str, int]:
        """The best line (text) and final spread (for the player on turn) of an endgame at the PEG's depth."""
        from .endgame import EndgameJob, EndgameOptions

        eg = EndgameJob(self._engine, pos, EndgameOptions(
            plies=self.opts.endgame_plies, threads=1, heuristics=self.opts.endgame_heuristics, tt_megabytes=EVENTUALITY_TT_MB,
            lexicon=self.lex.name)).run()
        line = " ".join(("~" if m.estimated else "") + f"{m.table.strip()} ({m.score})" for m in eg.line)
        return line or "(none)", eg.final_spread

    def _nested_lines(self, trace, after_pos: Position, reply: Move, ld) -> list[str]:
        from .gamestate import commit

        outcome, chosen, subs, actual = trace
        out = ["  our turn again with tiles in the bag: a nested solve over what we cannot see"]
        if chosen is None:
            out.append("    no play could be fully examined (time limit or nesting cap): unresolved")
            return out
        board = commit(after_pos, self.lex, format_move(reply, ld, after_pos.board)).position.board
        cmove = Move(chosen[0], chosen[1], chosen[2], chosen[3], tuple(chosen[4]))
        ct = cmove.tiles_played if cmove.kind == "place" else 0
        out.append(f"    we would play {format_move(cmove, ld, board, style='table').strip()} ({chosen[5]}), "
                   "the fewest expected losses (worst case over tied plays); by sub-draw:")
        groups: dict = {}
        for qi, (sub, weight, verdict) in enumerate(subs):
            label = draw_label(ld, sub, ct)
            g = groups.setdefault(label, [0, verdict, False])
            g[0] += weight
            g[2] = g[2] or qi == actual
        for label, (weight, verdict, is_actual) in groups.items():
            mark = "   <- the actual bag" if is_actual else ""
            out.append(f"      {label:<10} {OUTCOME_NAMES[verdict]:<10} weight {weight}{mark}")
        return out

    def _ranked(self) -> list[PegPlay]:
        def key(p: PegPlay):
            return (p.cut_off, -p.points, -(p.spread if p.spread is not None else float("-inf")), -p.score)

        return sorted(self.plays, key=key)

    def _ranked_by_knowledge(self) -> list[PegPlay]:
        """Before the solve finishes: by the best knowledge so far (each draw's full verdict where it has one,
        else its quick-pass verdict), then the most points still reachable; plays cut off last."""
        def key(p: PegPlay):
            return (p.cut_off, -p.estimate, -p.upper, -p.lower, -p.score)

        return sorted(self.plays, key=key)

    def snapshot(self, final: bool) -> PegResult:
        with self._lock:
            # finished: every draw of every play not cut off has a verdict (complete: and none is unresolved)
            finished = all(p.pending == 0 for p in self.plays if not p.cut_off) and self.phase in ("full", "done")
            plays = [dataclasses.replace(p) for p in (self._ranked() if finished else self._ranked_by_knowledge())]
            complete = finished and all(p.unresolved == 0 for p in plays)
            done_jobs = self.done_jobs
            quick_done = self.quick_jobs_done
            phase = self.phase
            if phase == "quick" or phase == "setup":
                groups_left = self.total_jobs - quick_done
                per_group_done = quick_done
            else:
                groups_left = sum(p.groups_total - p.groups_done for p in plays if not p.cut_off)
                per_group_done = done_jobs
        endgames = sum(w.endgames for w in self.workers) + self._remote[0]
        if phase in ("quick", "setup"):
            self._eg_quick = endgames
        pass_endgames = endgames - (self._eg_quick if phase not in ("quick", "setup") else 0)
        seconds = time.monotonic() - self.t0
        res = PegResult(
            plays=plays,
            total_permutations=self.total,
            endgames=endgames,
            nested_calls=sum(w.nested_calls for w in self.workers) + self._remote[1],
            nested_hits=sum(w.nested_hits for w in self.workers) + self._remote[2],
            seconds=seconds,
            done_jobs=done_jobs,
            total_jobs=self.total_jobs,
            complete=complete,
            final=final,
            finished=finished,
            endgames_per_second=endgames / seconds if seconds > 0 else 0.0,
            groups_left=groups_left,
            endgames_left=round(groups_left * pass_endgames / per_group_done) if per_group_done else 0,
            phase=phase,
            quick_done_jobs=quick_done,
            opponent_model=self.opts.opponent_model,
            opp_solves=sum(w.opp_solves for w in self.workers) + self._remote[3],
            endgame_plies=self.opts.endgame_plies,
            reused=self.reused,
            checkpointed=self.checkpointed,
            cluster_workers=self.cluster.workers() if self.cluster is not None else 0,
            cluster_tasks=self._dispatch.stats.tasks if self._dispatch is not None else 0,
        )
        _name_leader(res)
        return res


QUICK_LABEL = f"quick pass ({QUICK_PLIES}-ply endgames, the {QUICK_REPLIES} best replies per turn)"


def _name_leader(res: PegResult) -> None:
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
