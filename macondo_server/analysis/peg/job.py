"""The pre-endgame solve (1 to 6 tiles in the bag): the candidates and their draw groups, the thread pool,
the quick pass, the best-first full solve with early cut-off, the spread tiebreak, checkpoints and the
cluster. The per-draw search (every opponent reply, nested solves, endgames) runs in engine_cy.peg with
the GIL released. Options: options.py; draws: draws.py; the result and its text: result.py; the
eventuality explanation: explain.py; what a cluster worker runs: task.py."""

from __future__ import annotations

import heapq
import os
import threading
import time
from collections.abc import Callable, Sequence

from engine_cy.endgame import TranspositionTable
from engine_cy.peg import PegWorker
from engine_cy.prune import pruned_game
from macondo_server.analysis.peg.draws import (
    DrawGroup,
    GroupTemplate,
    draw_groups,
    made_groups,
    ordered_draws,
)
from macondo_server.analysis.peg.options import (
    CAPPED,
    DRAW,
    LEAF_MODES,
    LOSS,
    OUTCOME_MASK,
    QUICK2_PLIES,
    QUICK2_REPLIES,
    QUICK_PLIES,
    QUICK_REPLIES,
    RISK_MOVES,
    UNRESOLVED,
    WIN,
    PegOptions,
)
from macondo_server.analysis.peg.result import (
    PegPlay,
    PegResult,
    estimate_plays,
    make_play,
    name_leader,
    quick_key,
)
from macondo_server.analysis.peg.task import (
    MoveTuple,
    PegConfig,
    PegItem,
    PegSpec,
    PegTaskResult,
    peg_task,
    remove_run_table,
)
from macondo_server.engine.facade import Engine, find_move, known_opponent_tiles
from macondo_server.engine.replay import game_from_position
from macondo_server.model.cgp import write_cgp
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import RACK_SIZE
from macondo_server.runtime.checkpoint import CheckpointStore, solve_key
from macondo_server.runtime.cluster import Cluster, Dispatcher, lexicon_fingerprint, new_run_id
from macondo_server.runtime.jobs import watch_stop

TIEBREAK_POOL = 20


def split_runs(order: list[int], n_draws: int, n: int) -> list[list[int]]:
    """The draw indices of `order` (the first to be taken first) in n lists by index, list i holding the
    indices from i * n_draws / n on, each in the order given but reversed (taken by popping from the end)."""
    parts: list[list[int]] = [[] for _ in range(n)]
    for gi in reversed(order):
        parts[gi * n // n_draws].append(gi)
    return parts


class PegJob:
    """One pre-endgame solve: validated on construction; run() from any thread, stop() from any other."""

    def __init__(self, engine: Engine, pos: Position, opts: PegOptions,
                 stop: threading.Event | None = None, cluster: Cluster | None = None,
                 checkpoint: CheckpointStore | None = None, resume: bool = False) -> None:
        """`stop` (optional) is checked while the plays are set up; once set, the setup ends early. With
        `cluster`, the passes run as tasks on its workers (same verdicts; the task: analysis/peg/task.py); with
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
        self._dispatch: Dispatcher[PegSpec, PegConfig, PegItem, PegTaskResult] | None = None
        self._exact_done: dict[tuple[str, str], int] = {}   # (play, draw) -> exact spread (the tiebreak)
        self.opts = opts
        self.pos = pos
        self.engine = engine
        lex = engine.lexicon_for(pos, opts.lexicon)
        self.t0 = time.monotonic()       # the time limit counts the setup too (not loading the lexicon)
        self.lex = lex
        ld = pos.ld
        unseen = pos.unseen_counts(0)
        k = sum(unseen) - RACK_SIZE
        if k <= 0:
            # the opponent holds every unseen tile (a short rack of the mover means this too): the bag is the
            # problem, not the rack
            raise FormatError("the bag is empty: a pre-endgame needs 1 to 6 tiles in the bag (solve an empty "
                              "bag with the endgame solver: macondo endgame)")
        if len(pos.racks[0]) != RACK_SIZE:
            raise FormatError(f"the player on turn must hold {RACK_SIZE} tiles, not {len(pos.racks[0])}")
        if k > 6:
            raise FormatError(f"the bag must hold 1 to 6 tiles for a pre-endgame, not {k}")
        self.k = k
        known = known_opponent_tiles(pos, opts.opp_rack) if opts.opp_rack else []
        pool = list(unseen)
        for t in known:
            pool[t] -= 1
        self.unseen = unseen
        self.pool = pool
        self.known = known
        deadline = self.t0 + opts.max_time if opts.max_time > 0 else None

        def stopping() -> bool:
            return (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() >= deadline)

        # (with 6 in the bag there can be a million ordered draws: a stop or the time limit ends the setup)
        self.draws = ordered_draws(pool, k, stopping) or []
        self.total = sum(w for _, w in self.draws)
        bb = int(pos.ops.get("bb", "50"))
        self.bingo_bonus = bb
        gen = engine.generate(pos, lexicon=lex.name)
        cands = gen.moves
        legal = [c for c in cands if c.move.kind != "exchange"]   # (no exchange with fewer than 7 in the bag)
        if opts.only_solve:
            cands = [find_move(cands, text, pos) for text in opts.only_solve]
            self.out_of_scope = len(legal) - len(cands)
            self.scope_note = (f"only the plays given with --only-solve are solved; {self.out_of_scope} other "
                               f"plays are left out" if self.out_of_scope > 0 else "")
        else:
            cands = [c for c in legal
                     if opts.max_tiles_left < 0 or k - min(c.tiles_played, k) <= opts.max_tiles_left]
            self.out_of_scope = len(legal) - len(cands)
            self.scope_note = ""
            if self.out_of_scope:
                m = opts.max_tiles_left
                self.scope_note = (f"{self.out_of_scope} plays that leave {m + 1} to {k} tiles in the bag are "
                                   f"not solved (--max-tiles-left {m}); --max-tiles-left {k} or -1 solves them too")
        self.plays: list[PegPlay] = []
        # the draw groups depend only on how many tiles a play draws: worked out once per count and shared
        templates: dict[int, GroupTemplate] = {}
        for i, c in enumerate(cands):
            t = c.tiles_played if c.move.kind == "place" else 0
            template = None if stopping() else templates.get(min(t, k))
            if template is None and self.draws and not stopping():
                template = draw_groups(self.draws, t, stopping)
                if template is not None:
                    templates[min(t, k)] = template
            if template is None:
                # stopped or out of time during the setup: the plays listed so far (the best by static equity
                # first), none solved
                left = len(cands) - i
                self.scope_note = "; ".join(x for x in (self.scope_note, (
                    f"the time limit ended the setup: {left} of {len(cands)} plays were not set up "
                    "(a longer time limit takes them in)") if deadline is not None and not
                    (stop is not None and stop.is_set()) else "") if x)
                break
            self.plays.append(make_play(c.move, c.score, t, k, template, ld, pos.board))
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
            w.share_endgame_cache(self.workers[0])
        self._configure(quick=False)   # the full solve's settings (an eventuality uses them as they are)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.done_jobs = 0
        self.quick_jobs_done = 0
        self.quick2_jobs_done = 0
        self.quick2_jobs = 0     # draw groups of the plays the quick pass's second level has taken
        self.phase = "setup"     # then "quick", "quick2", "full", "done"
        self._last_progress = 0.0
        self._eg_phase_start = 0  # endgames solved before the current phase began
        self.total_jobs = sum(len(p.groups) for p in self.plays)
        self.calibrated_on = 0   # full verdicts the plays' estimates rest on (result.estimate_plays)

    # ------------------------------------------------------------------ running

    def stop(self) -> None:
        self._stop.set()
        for w in self.workers:
            w.request_stop()

    def stopped(self) -> bool:
        """A stop was asked for (stop(), the time limit, or the caller's stop event)."""
        return self._stop.is_set()

    def opp_counts(self, seq: tuple[int, ...]) -> list[int]:
        """The tiles the opponent may hold when we draw `seq` (first drawn first): the bag's possible tiles
        less the draw, with the opponent's known tiles."""
        rest = list(self.pool)
        for t in seq:
            rest[t] -= 1
        for t in self.known:
            rest[t] += 1
        return rest

    @staticmethod
    def move_tuple(p: PegPlay) -> MoveTuple:
        """The play as engine_cy.peg takes it: (kind, row, column, vertical, tiles, score)."""
        m = p.move
        return (m.kind, m.row, m.col, m.vertical, tuple(m.tiles), p.score)

    def _lower2(self, p: PegPlay) -> int:
        """Twice the points p has for certain (wins and draws found so far)."""
        return 2 * p.wins + p.draws

    def _upper2(self, p: PegPlay) -> int:
        """Twice the most points p can still reach: everything not yet lost, drawn or left unresolved."""
        return 2 * (self.total - p.unresolved) - p.found_losses2

    def _phase_config(self, quick: bool, level: int = 1) -> PegConfig:
        """The worker settings of the quick pass (at its first or second level) or the full solve (everything a
        verdict depends on besides the position, the play and the draw)."""
        opts = self.opts
        cap_outcome = WIN if opts.nesting_cap == "skip" else UNRESOLVED
        if quick:
            return {"plies": QUICK2_PLIES if level == 2 else QUICK_PLIES,
                    "max_replies": QUICK2_REPLIES if level == 2 else QUICK_REPLIES,
                    "max_nested": 1 if opts.max_nested_depth < 0 else min(opts.max_nested_depth, 1),
                    "cap_outcome": cap_outcome,
                    "opp_solver": False, "leaf_mode": LEAF_MODES["static"], "risk_moves": RISK_MOVES,
                    "skip_deep_pass": opts.skip_deep_pass}
        return {"plies": opts.endgame_plies, "max_replies": 0, "max_nested": opts.max_nested_depth,
                "cap_outcome": cap_outcome,
                "opp_solver": opts.opponent_model == "solver",
                "leaf_mode": LEAF_MODES["playout" if opts.endgame_heuristics else opts.endgame_leaf],
                "risk_moves": RISK_MOVES, "skip_deep_pass": opts.skip_deep_pass}

    def _configure(self, quick: bool, level: int = 1) -> None:
        """Set every worker for the quick pass (at `level`) or the full solve."""
        cfg = self._phase_config(quick, level)
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
            self._dispatch = Dispatcher(self.cluster, peg_task, self._cluster_spec(), label="pre-endgame",
                                        key="peg", after_forget=remove_run_table)
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
            "lexicon_fingerprint": lexicon_fingerprint(self.engine, self.lex.name),
            "known_opponent_tiles": sorted(self.known),
            "quick": self._phase_config(quick=True),
            "quick2": self._phase_config(quick=True, level=2),
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
                    q = stored.get(("quick2", p.text, g.label))
                    if q is not None and g.quick2 is None:
                        p.record_quick(g, q[0], level=2)
                        self.quick2_jobs_done += 1
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

    def _cluster_spec(self) -> PegSpec:
        return {"run": new_run_id(), "cgp": write_cgp(self.pos), "lexicon": self.lex.name,
                "fingerprint": lexicon_fingerprint(self.engine, self.lex.name), "bingo_bonus": self.bingo_bonus,
                "tt_mb": self.opts.tt_megabytes, "prune_lexicon": self.opts.prune_lexicon,
                # the worker processes of one machine share one table as threads do (off: one table each,
                # for comparisons; the verdicts are the same)
                "shared_tt": os.environ.get("MACONDO_CLUSTER_SHARED_TT", "1") != "0"}

    def _cluster_pass(self, quick: bool, next_item: Callable[[], tuple[int, int] | None],
                      on_item: Callable[[int, int, int, int | None], None], remaining: Callable[[], int],
                      progress: Callable[[PegResult], None] | None, interval: float, deadline: float | None,
                      exact: bool = False, first: int = 1, level: int = 1) -> None:
        """One pass on the cluster: items (play, group) from next_item() as slots free up, each verdict to
        on_item(pi, gi, outcome, spread); progress on the same beat as in-process; the time limit stops it."""
        assert self._dispatch is not None
        cfg = self._phase_config(quick, level)

        def next_batch(size: int) -> list[PegItem] | None:
            batch: list[PegItem] = []
            for _ in range(size):
                job = next_item()
                if job is None:
                    break
                pi, gi = job
                p = self.plays[pi]
                g = p.groups[gi]
                batch.append((pi, gi, self.move_tuple(p), g.seq, self.opp_counts(g.seq), exact))
            return batch or None

        def on_result(res: PegTaskResult) -> None:
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

        def affinity(item: PegItem) -> tuple[int, tuple[int, ...]]:
            # the draws of one play that leave us the same rack share nested solves and table entries
            pi, _, _, seq, _, _ = item
            t = min(self.plays[pi].tiles_played, self.k)
            return pi, tuple(sorted(seq[:t]))

        try:
            self._dispatch.run_phase(cfg, next_batch, on_result, tick, self._stop.is_set, remaining, deadline_in,
                                     cancel_ids=None if quick else cut_plays, first=first, affinity=affinity)
        except KeyboardInterrupt:
            self.stop()

    def _quick_pass(self, progress: Callable[[PegResult], None] | None, interval: float,
                    deadline: float | None) -> None:
        """The quick pass: every play on every draw at its first level, then the second level where the first
        cannot separate the plays (_quick2_pass)."""
        self.phase = "quick"
        self._configure(quick=True)
        # plays in static-equity order; a resumed solve: the draws not recorded yet
        next_item, remaining = self._items(range(len(self.plays)), lambda g: g.quick is not None)
        self._quick_items(1, next_item, remaining, progress, interval, deadline)
        if not self._stop.is_set():
            self._quick2_pass(progress, interval, deadline)

    def _quick2_pass(self, progress: Callable[[PegResult], None] | None, interval: float,
                     deadline: float | None) -> None:
        """The quick pass's second level (QUICK2_PLIES-deep endgames) on the plays the first level cannot
        separate from the top, among those that leave tiles in the bag (a bag-emptying play's full solve is
        one endgame a draw, soon done: the second level would cost a good part of it). The plays go in rounds,
        each the plays tied at the best first-level points not taken yet, while those points are at least the
        best second-level result of the rounds before: a deeper look finds losses a shallower one missed far
        more often than the reverse, so a play already below that result at the first level is not expected
        to top it. Where the first level gives every play the same count, this ranks them; where it separates
        them, only the plays at the top are judged. A round ends before the next is chosen, so the plays
        judged do not depend on the threads or the cluster."""
        self.phase = "quick2"
        self._eg_phase_start = self._endgames_now()
        self._configure(quick=True, level=2)
        left = sorted((pi for pi, p in enumerate(self.plays) if p.quick_complete and not p.empties_bag),
                      key=lambda pi: -self.plays[pi].quick_points)   # (stable: static equity on ties)
        best2: float | None = None
        while left and not self._stop.is_set():
            top = self.plays[left[0]].quick_points
            if best2 is not None and top < best2:
                return
            batch = [pi for pi in left if self.plays[pi].quick_points == top]
            left = left[len(batch):]
            with self._lock:
                self.quick2_jobs += sum(len(self.plays[pi].groups) for pi in batch)
            next_item, remaining = self._items(batch, lambda g: g.quick2 is not None)
            self._quick_items(2, next_item, remaining, progress, interval, deadline)
            if self._stop.is_set():
                return
            round_best = max(self.plays[pi].quick2_points for pi in batch)
            best2 = round_best if best2 is None else max(best2, round_best)

    def _items(self, plays: Sequence[int], done: Callable[[DrawGroup], bool]
               ) -> tuple[Callable[[], tuple[int, int] | None], Callable[[], int]]:
        """The items (play, draw group) of `plays`, in order, but those `done` says are judged already (a
        resumed solve): the next one (under the lock; None once they are all taken), and how many are left.
        A play's draw groups are made when its first item is solved, not before."""
        def made(pi: int) -> Sequence[DrawGroup] | None:
            return made_groups(self.plays[pi].groups)

        left = [sum(len(self.plays[pi].groups) if made(pi) is None else
                    sum(not done(g) for g in self.plays[pi].groups) for pi in plays)]
        at = [0, 0]   # the index in `plays`, the draw group

        def next_item() -> tuple[int, int] | None:
            with self._lock:
                while at[0] < len(plays):
                    pi, gi = plays[at[0]], at[1]
                    if gi >= len(self.plays[pi].groups):
                        at[0], at[1] = at[0] + 1, 0
                        continue
                    at[1] += 1
                    groups = made(pi)
                    if groups is not None and done(groups[gi]):
                        continue
                    left[0] -= 1
                    return pi, gi
                return None

        return next_item, lambda: left[0]

    def _popper(self, items: list[tuple[int, int]]) -> Callable[[], tuple[int, int] | None]:
        """The next item of `items` (popped from the end under the lock), None once they are all taken."""
        def next_item() -> tuple[int, int] | None:
            with self._lock:
                return items.pop() if items else None

        return next_item

    def _quick_items(self, level: int, next_item: Callable[[], tuple[int, int] | None], remaining: Callable[[], int],
                     progress: Callable[[PegResult], None] | None, interval: float, deadline: float | None) -> None:
        """Judge the items (play, draw group) next_item() gives at the quick pass's `level`, in-process or on
        the cluster."""
        phase = "quick" if level == 1 else "quick2"

        def on_item(pi: int, gi: int, outcome: int, spread: int | None) -> None:
            outcome &= OUTCOME_MASK
            with self._lock:
                p = self.plays[pi]
                p.record_quick(p.groups[gi], outcome, level)
                if level == 1:
                    self.quick_jobs_done += 1
                else:
                    self.quick2_jobs_done += 1
                self._note(phase, p, p.groups[gi], outcome)

        if self.cluster is not None:
            self._cluster_pass(True, next_item, on_item, remaining, progress, interval, deadline, first=4,
                               level=level)
            self._flush_checkpoint(force=True)
            return

        def work(w: PegWorker) -> None:
            while not self._stop.is_set():
                job = next_item()
                if job is None:
                    return
                pi, gi = job
                p = self.plays[pi]
                g = p.groups[gi]
                outcome, _ = w.solve_draw(self.move_tuple(p), g.seq, self.opp_counts(g.seq))
                if w.stopped:
                    return
                on_item(pi, gi, outcome, None)

        self._run_pool(work, progress, interval, deadline)
        self._flush_checkpoint(force=True)

    def _full_pass(self, progress: Callable[[PegResult], None] | None, interval: float,
                   deadline: float | None) -> None:
        opts = self.opts
        self.phase = "full"
        self._eg_phase_start = self._endgames_now()
        self._configure(quick=False)
        rank: dict[int | None, int] = {WIN: 0, UNRESOLVED: 1, DRAW: 2, LOSS: 3}   # None: no quick verdict

        n_parts = len(self.workers)

        def order(p: PegPlay) -> list[list[int]]:
            # a loss on a heavy draw rules a play out soonest: the draws the quick pass lost first, then the
            # heaviest (popped from the end, so the lists run the other way). Neighbouring draws in the
            # enumeration (the same first tiles) share work through the caches and the table when solved one
            # after the other, and lose it when solved at the same time, so with n threads the draws are cut
            # into n runs of neighbours, each thread taking from its own
            key = sorted((gi for gi in range(len(p.groups)) if p.groups[gi].outcome is None),  # (resumed: not yet)
                         key=lambda gi: (-rank.get(quick_key(p.groups[gi])[1], 1), -p.groups[gi].weight, gi))
            return split_runs(key, len(p.groups), n_parts)

        # each play's draws in the order they are taken, one list per thread, worked out when the play is first
        # taken (None before)
        pending: list[list[list[int]] | None] = [None] * len(self.plays)
        refreshed = [-1.0]
        # draws that cost other plays a loss or a draw at full depth, by the bag's tiles (a multiset): a bag that
        # sinks one play (we draw a bad rack, the opponent a good one) tends to sink others, so those draws are
        # tried first; a play that has such a loss is passed over soonest
        sank: dict[tuple[int, ...], int] = {}

        def bag_key(g: DrawGroup) -> tuple[int, ...]:
            return tuple(sorted(g.seq))

        def note_sank(g: DrawGroup, outcome: int) -> None:
            if outcome & OUTCOME_MASK in (LOSS, DRAW):
                sank[bag_key(g)] = sank.get(bag_key(g), 0) + 1

        def next_draw(pi: int, part: int) -> int:
            """The play's next draw: the one whose bag sank the most other plays, else the static order, from the
            asking thread's own list; when that is empty, the last of the longest list (the farthest from where
            its thread works)."""
            parts = pending[pi]
            if parts is None:
                parts = pending[pi] = order(self.plays[pi])
            groups = self.plays[pi].groups
            todo = parts[part] or max(parts, key=len)
            if sank:
                best, best_n = -1, 0
                for j in range(len(todo) - 1, -1, -1):
                    n = sank.get(bag_key(groups[todo[j]]), 0)
                    if n > best_n:
                        best, best_n = j, n
                if best >= 0:
                    return todo.pop(best)
            return todo.pop() if todo is parts[part] else todo.pop(0)

        def refresh_estimates() -> bool:
            """The plays' estimates (result.estimate_plays), at most four times a second (lock held); True when
            they were refreshed."""
            now = time.monotonic()
            if now - refreshed[0] < 0.25:
                return False
            refreshed[0] = now
            self.calibrated_on = estimate_plays(self.plays)
            return True

        # take() below chooses the play with the best key without looking at every play: a heap of keys, each
        # no lower than its play's key now (between refreshes of the estimates a key only falls: a verdict
        # lowers the play's upper bound, a higher lower bound elsewhere can put it behind), so the top is
        # checked against its play's key now and pushed back when it has fallen
        quick_best = [p.quick_best for p in self.plays]   # (the quick pass is over: fixed)
        best_lower = [max((self._lower2(p) for p in self.plays), default=0)]
        heap: list[tuple[bool, float, int, float, bool, int]] = []

        def has_draws(pi: int) -> bool:
            parts = pending[pi]
            # (a play not taken yet has its unsolved draws to take)
            return any(parts) if parts is not None else self.plays[pi].pending > 0

        def key(pi: int) -> tuple[bool, float, int, float, bool, int]:
            """The play's rank, least first: not behind, the best estimate, the highest upper bound, the best
            quick result, a bag-emptying play, the earliest play (see take)."""
            p = self.plays[pi]
            upper = self._upper2(p)
            return (upper < best_lower[0], -round(p.est, 6), -upper, -quick_best[pi], not p.empties_bag, pi)

        def behind(p: PegPlay) -> bool:
            return opts.early_cutoff and self._upper2(p) < best_lower[0]

        def rebuild() -> None:
            for p in self.plays:
                if not p.cut_off and behind(p):
                    p.cut_off = True
            heap[:] = [key(pi) for pi, p in enumerate(self.plays) if not p.cut_off and has_draws(pi)]
            heapq.heapify(heap)

        def take(part: int = 0) -> tuple[int, int] | None:
            """Best-first by the best knowledge: the next draw of the play with the best estimate (full-depth
            verdicts where they exist, the calibrated quick pass elsewhere) among the plays that the bounds do
            not show to be behind, so that the full-depth work goes to the plays that could be named, and a
            leader's estimate is tested before another is preferred to it. Ties: the play that can still reach
            the most points, the better quick-pass result, a bag-emptying play (one endgame per draw, where
            any other costs one per opponent reply), the earlier play by static equity. With early cut-off, a
            play whose best reachable total is below what another play has for certain is abandoned. `part`: the
            asking thread's own list of draws (next_draw)."""
            with self._lock:
                if refresh_estimates() or not heap:
                    rebuild()
                while heap:
                    top = heapq.heappop(heap)
                    pi = top[-1]
                    p = self.plays[pi]
                    if p.cut_off or not has_draws(pi):
                        continue
                    if behind(p):
                        p.cut_off = True
                        continue
                    now = key(pi)
                    if now != top:
                        heapq.heappush(heap, now)   # fallen since it was pushed
                        continue
                    gi = next_draw(pi, part)
                    if has_draws(pi):
                        heapq.heappush(heap, now)
                    return pi, gi
                return None

        def recorded(p: PegPlay) -> None:
            """A full verdict of p's came in (lock held)."""
            best_lower[0] = max(best_lower[0], self._lower2(p))

        def work(w: PegWorker) -> None:
            part = self.workers.index(w)
            while not self._stop.is_set():
                job = take(part)
                if job is None:
                    return
                pi, gi = job
                p = self.plays[pi]
                g = p.groups[gi]
                outcome, _ = w.solve_draw(self.move_tuple(p), g.seq, self.opp_counts(g.seq))
                if w.stopped or (outcome == UNRESOLVED and deadline is not None and time.monotonic() >= deadline):
                    return  # cut short by a stop or the time limit: the draw stays unsolved, not a verdict
                if w.last_capped:
                    outcome |= CAPPED
                with self._lock:
                    p.record(g, outcome)
                    recorded(p)
                    note_sank(g, outcome)
                    self.done_jobs += 1
                    self._note("full", p, g, outcome)

        if self.cluster is not None:
            def on_item(pi: int, gi: int, outcome: int, spread: int | None) -> None:
                if outcome & OUTCOME_MASK == UNRESOLVED and deadline is not None and time.monotonic() >= deadline:
                    return   # cut short by the time limit: the draw stays unsolved, not a verdict
                with self._lock:
                    p = self.plays[pi]
                    p.record(p.groups[gi], outcome)
                    recorded(p)
                    note_sank(p.groups[gi], outcome)
                    self.done_jobs += 1
                    self._note("full", p, p.groups[gi], outcome)

            def remaining() -> int:
                with self._lock:
                    return sum(sum(map(len, x)) if x is not None else p.groups_total - p.groups_done
                               for x, p in zip(pending, self.plays, strict=True) if not p.cut_off)

            self._cluster_pass(False, take, on_item, remaining, progress, interval, deadline)
        else:
            self._run_pool(work, progress, interval, deadline)
        self._flush_checkpoint(force=True)
        with self._lock:
            for p in self.plays:
                if not p.cut_off and p.pending and behind(p):
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
                    outcome, spread = w.solve_draw(self.move_tuple(p), g.seq, self.opp_counts(g.seq), exact=True)
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
        next_item = self._popper(items)

        def on_item(pi: int, gi: int, outcome: int, spread: int | None) -> None:
            if spread is None:
                return
            p = self.plays[pi]
            with self._lock:
                self._exact_done[(p.text, p.groups[gi].label)] = spread
                self._note("exact", p, p.groups[gi], outcome, spread)

        self._cluster_pass(False, next_item, on_item, lambda: len(items), None, 1.0, None, exact=True, first=4)
        self._flush_checkpoint(force=True)

    def _ranked(self) -> list[PegPlay]:
        def key(p: PegPlay) -> tuple[bool, float, float, int]:
            return (p.cut_off, -p.points, -(p.spread if p.spread is not None else float("-inf")), -p.score)

        return sorted(self.plays, key=key)

    def _ranked_by_knowledge(self) -> list[PegPlay]:
        """Before the solve finishes: by the best knowledge so far, as the leader is named (the estimate less
        its uncertainty, see result.name_leader), then the estimate, the most points still reachable; plays
        cut off last."""
        def key(p: PegPlay) -> tuple[bool, float, float, float, float, int]:
            return (p.cut_off, -round(p.conservative, 6), -round(p.est, 6), -p.upper, -p.lower, -p.score)

        return sorted(self.plays, key=key)

    def snapshot(self, final: bool) -> PegResult:
        with self._lock:
            self.calibrated_on = estimate_plays(self.plays)
            # finished: every draw of every play not cut off has a verdict (complete: and none is unresolved)
            finished = all(p.pending == 0 for p in self.plays if not p.cut_off) and self.phase in ("full", "done")
            plays = [p.copy() for p in (self._ranked() if finished else self._ranked_by_knowledge())]
            complete = finished and all(p.unresolved == 0 for p in plays)
            done_jobs = self.done_jobs
            quick_done = self.quick_jobs_done
            quick2_done = self.quick2_jobs_done
            quick2_jobs = self.quick2_jobs
            phase = self.phase
            if phase == "quick" or phase == "setup":
                groups_left = self.total_jobs - quick_done
                per_group_done = quick_done
            elif phase == "quick2":
                groups_left = quick2_jobs - quick2_done
                per_group_done = quick2_done
            else:
                groups_left = sum(p.groups_total - p.groups_done for p in plays if not p.cut_off)
                per_group_done = done_jobs
        endgames = self._endgames_now()
        pass_endgames = endgames - self._eg_phase_start
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
            quick2_done_jobs=quick2_done,
            quick2_jobs=quick2_jobs,
            opponent_model=self.opts.opponent_model,
            opp_solves=sum(w.opp_solves for w in self.workers) + self._remote[3],
            endgame_plies=self.opts.endgame_plies,
            reused=self.reused,
            checkpointed=self.checkpointed,
            cluster_workers=self.cluster.workers() if self.cluster is not None else 0,
            cluster_tasks=self._dispatch.stats.tasks if self._dispatch is not None else 0,
            scope_note=self.scope_note,
            plays_out_of_scope=self.out_of_scope,
            nesting_cap=self.opts.nesting_cap,
            max_nested_depth=self.opts.max_nested_depth,
            nesting_note=self.nesting_note(plays),
            calibrated_on=self.calibrated_on,
            stop_reason=self._stop_reason(finished) if final else "",
        )
        name_leader(res)
        return res

    def _endgames_now(self) -> int:
        return sum(w.endgames for w in self.workers) + self._remote[0]

    def _stop_reason(self, finished: bool) -> str:
        """What ended the solve: "finished", "time limit" or "stopped"."""
        if finished and not self._stop.is_set():
            return "finished"
        if self.opts.max_time > 0 and time.monotonic() >= self.t0 + self.opts.max_time:
            return "time limit"
        return "stopped" if self._stop.is_set() else "finished"

    def nesting_note(self, plays: list[PegPlay]) -> str:
        """What the nesting cap did, in one line ("" when it took part in no verdict)."""
        groups = sum(p.capped_groups for p in plays)
        if not groups:
            return ""
        weight = sum(p.capped_weight for p in plays)
        n_plays = sum(1 for p in plays if p.capped_weight)
        how = ("were skipped (the reference engines' semantics: such a draw can count as a win it is not)"
               if self.opts.nesting_cap == "skip" else "are unresolved and count as non-wins")
        return (f"nesting cap {self.opts.max_nested_depth}: {groups} draw group{'s' if groups > 1 else ''} "
                f"({weight} ordered draws) of {n_plays} play{'s' if n_plays > 1 else ''} reached it and their "
                f"continuations past it {how}; the bounds beside a count "
                f"take those draws as losses and as wins; --max-nested-depth -1 solves them completely")
