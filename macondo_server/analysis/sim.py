"""Monte Carlo simulation of candidate plays: candidates, the thread pool run in
deterministic rounds, statistics, ranking, pruning and confidence stopping. The playouts run in
engine_cy.sim with the GIL released."""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from engine_cy.sim import SCORE_HISTOGRAM_WIDTH, SimWorker
from macondo_server.analysis import bai
from macondo_server.engine.facade import Engine, GeneratedMove, bag_for_mover, known_opponent_tiles
from macondo_server.engine.lexicon import DEFAULT_WINPCT, load_win_table
from macondo_server.engine.replay import game_from_position
from macondo_server.model.move import format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError, excerpt
from macondo_server.runtime.jobs import watch_stop

if TYPE_CHECKING:
    from macondo_server.analysis.infer import InferOptions, InferResult, LastPlay

ROUND_PER_THREAD = 64          # iterations per thread between statistics checks
Z_SCORES = {95: 1.96, 98: 2.326, 99: 2.576}
MAX_ITERATIONS = 10_000_000
DEFAULT_ITERATIONS = 1000      # the cap when neither an iteration count nor a time limit is given
MIN_PRUNE_SAMPLES = 128
SIMILAR_PRUNE_AFTER = 750
SCORE_BIN_WIDTH = SCORE_HISTOGRAM_WIDTH   # points per bin of SimPlay.ply_histograms (the last bin open-ended)
STOP_RULES = ("z", "bai")      # the z-test (pruning at a confidence level) or best-arm identification (bai.py)
DEFAULT_BAI_CONFIDENCE = 0.95


def win_table() -> np.ndarray:
    """The default win-probability table (fitted on NWL20 self-play): 601 x 94, rows spread +300..-300, columns
    unseen tiles 0..93 (see scripts/make_winpct.py); a lexicon's own is Lexicon.win_table()."""
    return load_win_table(str(DEFAULT_WINPCT))


@dataclass
class SimOptions:
    plies: int = 2
    num_plays: int = 15
    plays: list[str] = field(default_factory=list)
    iterations: int | None = None        # hard cap; None: see iteration_cap()
    stop: int | None = None              # 95, 98 or 99: stop once the leader is separated at that level
    stop_rule: str = "z"                 # "z": the z-test of `stop`; "bai": best-arm identification (bai.py)
    confidence: float | None = None      # bai: 1 - the error probability (default: stop / 100, else 0.95); z: the
                                         # same as stop (0.95, 0.98 or 0.99)
    max_time: float = 0.0
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    seed: int = 0
    opp_rack: str | None = None
    lexicon: str | None = None
    # inference: the opponent's last play as it stands on the board (see infer.last_play_on); the
    # opponent's rack is drawn from the leaves it suggests
    infer_play: str | None = None
    infer_withdrawn: bool = False        # that play was a phony challenged off
    infer_tolerance: float = 3.0
    infer_max_racks: int = 50_000
    infer_model: str | None = None       # tolerance | softmax (None: the inference's default, infer.DEFAULT_MODEL)
    infer_temperature: float | None = None   # the softmax's (None: infer.DEFAULT_TEMPERATURE)
    # the opponent's turns before infer_play, oldest first, each as the player on turn saw it (infer.LastPlay;
    # infer.history_from_record reads them from a game record): weighed with it
    infer_history: list[LastPlay] = field(default_factory=list)
    # statistics per play and ply (SimPlay's score histograms and heatmaps, the opponent's leave after their reply)
    stats: bool = False

    def validate(self) -> None:
        if not 0 <= self.plies <= 15:
            raise ValueError(f"plies must be 0 to 15, got {self.plies}")
        if not 1 <= self.num_plays <= 500:
            raise ValueError(f"number of plays must be 1 to 500, got {self.num_plays}")
        if self.iterations is not None and not 1 <= self.iterations <= MAX_ITERATIONS:
            raise ValueError(f"iterations must be 1 to {MAX_ITERATIONS}, got {self.iterations}")
        if self.stop is not None and self.stop not in Z_SCORES:
            raise ValueError(f"stop must be 95, 98 or 99, got {self.stop}")
        if self.stop_rule not in STOP_RULES:
            raise ValueError(f"stop rule must be z or bai, got {excerpt(self.stop_rule)}")
        c = self.confidence
        if c is not None:
            if self.stop_rule == "bai":
                if not bai.MIN_CONFIDENCE <= c <= bai.MAX_CONFIDENCE:
                    raise ValueError(f"confidence must be {bai.MIN_CONFIDENCE} to {bai.MAX_CONFIDENCE}, got {c}")
            elif not any(abs(c - z / 100) < 1e-9 for z in Z_SCORES):
                raise ValueError(f"the z-test's confidence must be 0.95, 0.98 or 0.99 (any from "
                                 f"{bai.MIN_CONFIDENCE} to {bai.MAX_CONFIDENCE} with the bai stop rule), got {c}")
            if self.stop is not None and abs(c - self.stop / 100) > 1e-9:
                raise ValueError(f"stop {self.stop} and confidence {c} disagree: give one of them")
        if self.max_time < 0:
            raise ValueError(f"max time must not be negative, got {self.max_time}")
        if not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be 1 to 256, got {self.threads}")
        if self.infer_play is None and self.infer_withdrawn:
            raise ValueError("a withdrawn phony needs the play to infer from")
        if self.infer_play is None and self.infer_history:
            raise ValueError("the opponent's earlier turns need their last play to infer from")
        if self.stats and self.plies == 0:
            raise ValueError("statistics need at least 1 ply of look-ahead (plies 0 plays nothing after the candidate)")

    def z_stop(self) -> int | None:
        """The z-test's level (95, 98, 99) when the z-test stops the run, else None."""
        if self.stop_rule != "z":
            return None
        if self.stop is None and self.confidence is not None:
            return round(self.confidence * 100)
        return self.stop

    def bai_confidence(self) -> float | None:
        """Best-arm identification's confidence when it stops the run, else None."""
        if self.stop_rule != "bai":
            return None
        if self.confidence is not None:
            return self.confidence
        return self.stop / 100 if self.stop is not None else DEFAULT_BAI_CONFIDENCE

    def iteration_cap(self) -> tuple[int, str]:
        """The iterations the run may take and where that bound comes from: "given" (an explicit count),
        "maximum" (a time limit without a count: the run ends by the time or the stopping rule, bounded only by
        MAX_ITERATIONS) or "default" (neither: DEFAULT_ITERATIONS)."""
        if self.iterations is not None:
            return self.iterations, "given"
        if self.max_time > 0:
            return MAX_ITERATIONS, "maximum"
        return DEFAULT_ITERATIONS, "default"


@dataclass
class SimPlay:
    text: str
    table: str
    score: int
    leave: str
    gen: GeneratedMove
    pos: Position
    protected: bool = False
    pruned: bool = False
    n: int = 0
    equity: float = 0.0
    equity_stderr: float = 0.0
    win_pct: float = 0.0           # 0..100
    win_pct_stderr: float = 0.0
    ply_scores: list[float] = field(default_factory=list)
    ply_bingo_pct: list[float] = field(default_factory=list)
    # statistics (SimOptions.stats), empty without them; per ply: iterations by the score of that ply's move in
    # bins of SCORE_BIN_WIDTH points, the last open-ended (a ply after the game ended counts as 0 points,
    # as in ply_scores), and the tiles its moves put on each square (row-major, dim x dim)
    ply_histograms: list[list[int]] = field(default_factory=list)
    ply_heatmaps: list[list[int]] = field(default_factory=list)
    # the opponent's reply (ply 1), per machine letter: the mean count on their rack before it (held) and left on
    # it after (kept), over the `replies` iterations in which they replied
    opp_held: list[float] = field(default_factory=list)
    opp_kept: list[float] = field(default_factory=list)
    replies: int = 0

    @property
    def win(self) -> float:
        return self.win_pct / 100


@dataclass
class SimResult:
    plays: list[SimPlay]
    iterations: int
    seconds: float
    final: bool
    stopped_reason: str        # "iterations", "time limit", "N% confidence", "one play left", "iteration cutoff",
                               # "stopped" (a stop from outside); "" while running
    inference: InferResult | None = None   # the inference the opponent's racks were drawn from
    iteration_cap: int = DEFAULT_ITERATIONS
    cap_source: str = "default"            # see SimOptions.iteration_cap
    samples: int = 0                       # playouts: one play simulated for one draw, over every play
    stop_rule: str = "z"
    confidence: float = 0.0                # the stopping rule's confidence (0: no stopping rule)
    stats: bool = False                    # the plays carry their statistics (SimOptions.stats)

    @property
    def stop_text(self) -> str:
        """What ended the run, with the iteration cap when it is the default one (a cap nobody asked for)."""
        if not self.stopped_reason:
            return ""
        cap = f"iterations cap {self.iteration_cap}" + (" (default)" if self.cap_source == "default" else "")
        if self.stopped_reason == "iterations":
            return cap
        return self.stopped_reason + (f"; {cap}" if self.cap_source == "default" else "")


def infer_options(opts: SimOptions, lexicon: str, threads: int) -> InferOptions:
    """The inference options a simulation's options ask for (the inference's defaults where they say nothing)."""
    from macondo_server.analysis.infer import InferOptions

    io = InferOptions(tolerance=opts.infer_tolerance, max_racks=opts.infer_max_racks, threads=threads,
                      seed=opts.seed, lexicon=lexicon)
    if opts.infer_model is not None:
        io.model = opts.infer_model
    if opts.infer_temperature is not None:
        io.temperature = opts.infer_temperature
    return io


def _mean_se(n: int, s: float, sq: float) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    mean = s / n
    if n < 2:
        return mean, 0.0
    var = max(0.0, (sq - s * s / n) / (n - 1))
    return mean, math.sqrt(var / n)


def _compare(a: SimPlay, b: SimPlay) -> int:
    wa, wb = a.win, b.win
    same = abs(wa - wb) <= 1e-9 or (wa > 0.995 and wb > 0.995) or (wa < 0.005 and wb < 0.005)
    if not same:
        return -1 if wa > wb else 1
    if a.equity != b.equity:
        return -1 if a.equity > b.equity else 1
    return 0


class SimJob:
    """One simulation: validated on construction; run() from any thread, stop() from any other."""

    def __init__(self, engine: Engine, pos: Position, opts: SimOptions,
                 stop: threading.Event | None = None) -> None:
        """`stop` (optional) is checked during the setup: once set, no more named plays are looked up and the
        job ends at once when run."""
        opts.validate()
        self.opts = opts
        lex = engine.lexicon_for(pos, opts.lexicon)
        ld = pos.ld
        if not pos.racks[0]:
            raise FormatError("the player on turn has no tiles on the rack")
        if bag_for_mover(pos) == 0:
            raise FormatError("the bag is empty: simulate needs tiles to draw (use endgame)")
        # known opponent tiles come only from the explicit field: a rack that merely stands in the CGP (a
        # replayed record's later reveal, a commit's random fill) is not something the player on turn knows
        known = known_opponent_tiles(pos, opts.opp_rack) if opts.opp_rack else []
        self.inference: InferResult | None = None
        last_play = None
        if opts.infer_play is not None:
            from macondo_server.analysis.infer import last_play_on

            last_play = last_play_on(pos, opts.infer_play, lex, withdrawn=opts.infer_withdrawn)
            if last_play.withdrawn:
                if not known:
                    known = last_play.played
            elif known:
                raise FormatError("known opponent tiles and inference go together only for a withdrawn phony "
                                  "(its tiles)")
            # checked before the candidates are generated, so a bad option is refused at once
            infer_options(opts, lex.name, 1).validate()
        gen = engine.generate(pos, lexicon=lex.name)
        chosen: list[tuple[GeneratedMove, bool]] = [(m, False) for m in gen.moves[:opts.num_plays]]
        if opts.plays:
            # one index of the generated moves by notation (find_move per named play would format every move
            # each time: quadratic, half an hour for every legal play of an open board)
            by_text: dict[str, GeneratedMove] = {}
            for m in gen.moves:
                by_text.setdefault(format_move(m.move, ld, pos.board), m)
            where = {id(m): i for i, (m, _) in enumerate(chosen)}
            for text in opts.plays:
                if stop is not None and stop.is_set():
                    break
                named = by_text.get(format_move(parse_move(text, pos.board, ld), ld, pos.board))
                if named is None:
                    raise FormatError(f"move {excerpt(text)} is not a legal play here")
                i = where.get(id(named))
                if i is None:
                    where[id(named)] = len(chosen)
                    chosen.append((named, True))
                else:
                    chosen[i] = (named, True)
        self.plays = [
            SimPlay(format_move(m.move, ld, pos.board), format_move(m.move, ld, pos.board, style="table").strip(),
                    m.score, ld.rack_str(list(m.leave)), m, pos, protected)
            for m, protected in chosen
        ]
        game = game_from_position(pos, lex, seed=opts.seed)
        tuples = [(p.gen.move.kind, p.gen.move.row, p.gen.move.col, p.gen.move.vertical, tuple(p.gen.move.tiles),
                   p.score) for p in self.plays]
        table = lex.win_table()   # the lexicon's own table (NAME.winpct.csv) or the default
        bb = int(pos.ops.get("bb", "50"))
        self.workers = [SimWorker(game, lex.kwg, lex.klv, lex.ld, tuples, known, table, opts.seed, opts.plies, bb)
                        for _ in range(opts.threads)]
        if opts.stats:
            for w in self.workers:
                w.enable_stats()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.iterations = 0
        t_start = time.monotonic()
        if last_play is not None and not (stop is not None and stop.is_set()):
            from macondo_server.analysis.infer import infer

            iopts = infer_options(opts, lex.name, opts.threads)
            # with a time limit the inference takes at most half of it (the simulation needs the rest)
            deadline = t_start + opts.max_time / 2 if opts.max_time > 0 else None
            self.inference = infer(engine, last_play, iopts, known=known, stop=stop, deadline=deadline,
                                   history=opts.infer_history)
            counts, weights = self.inference.leave_counts, self.inference.leave_weights
            if counts is not None and weights is not None and len(counts):
                for w in self.workers:
                    w.set_inferred_leaves(counts, weights)
        self.t0 = t_start          # the time limit counts the inference too
        self.reason = ""
        if stop is not None and stop.is_set():
            self.stop()

    def stop(self) -> None:
        self._stop.set()
        for w in self.workers:
            w.stop = True

    def _update_stats(self) -> None:
        n_threads = len(self.workers)
        stats = [w.stats() for w in self.workers]
        for i, p in enumerate(self.plays):
            n = sum(s[i][0] for s in stats)
            eq_s = sum(s[i][1] for s in stats)
            eq_q = sum(s[i][2] for s in stats)
            w_s = sum(s[i][3] for s in stats)
            w_q = sum(s[i][4] for s in stats)
            p.n = n
            p.equity, p.equity_stderr = _mean_se(n, eq_s, eq_q)
            win, win_se = _mean_se(n, w_s, w_q)
            p.win_pct, p.win_pct_stderr = 100 * win, 100 * win_se
            plies = len(stats[0][i][5]) if n_threads else 0
            p.ply_scores = [sum(s[i][5][k] for s in stats) / n if n else 0.0 for k in range(plies)]
            p.ply_bingo_pct = [100 * sum(s[i][6][k] for s in stats) / n if n else 0.0 for k in range(plies)]

    def _update_play_stats(self) -> None:
        """The statistics of SimOptions.stats, summed over the threads."""
        arrays = [a for a in (w.stats_arrays() for w in self.workers) if a is not None]
        if not arrays:
            return
        hist = np.sum([a[0] for a in arrays], axis=0)
        heat = np.sum([a[1].astype(np.int64) for a in arrays], axis=0)
        kept = np.sum([a[2] for a in arrays], axis=0)
        held = np.sum([a[3] for a in arrays], axis=0)
        replies = np.sum([a[4] for a in arrays], axis=0)
        for i, p in enumerate(self.plays):
            p.ply_histograms = hist[i].tolist()
            p.ply_heatmaps = heat[i].tolist()
            r = int(replies[i])
            p.replies = r
            p.opp_held = (held[i] / r).tolist() if r else [0.0] * held.shape[1]
            p.opp_kept = (kept[i] / r).tolist() if r else [0.0] * kept.shape[1]

    def _ranked(self) -> list[SimPlay]:
        def cmp(a: SimPlay, b: SimPlay) -> int:
            return (int(a.pruned) - int(b.pruned)) or _compare(a, b)

        return sorted(self.plays, key=functools.cmp_to_key(cmp))

    def _prune_and_check(self) -> bool:
        """The stopping rule (with --stop): prune the plays the leader is separated from at the confidence level,
        and stop once one play is left or past the iteration cutoff; returns True when the simulation should
        stop."""
        opts = self.opts
        level = opts.z_stop()
        if level is None:
            return False
        live = [p for p in self._ranked() if not p.pruned]
        if len(live) < 2:
            self.reason = "one play left"
            return True
        if self.iterations > 2000 + 625 * opts.plies:
            self.reason = "iteration cutoff"
            return True
        z = Z_SCORES[level]
        delta = 1 - level / 100
        leader = live[0]
        on_equity = (leader.win + z * leader.win_pct_stderr / 100 < 0.005) or (
            leader.win - z * leader.win_pct_stderr / 100 > 0.995
            and live[-1].win - z * live[-1].win_pct_stderr / 100 > 0.995)
        if on_equity:
            leader = max(live, key=lambda p: p.equity)

        def mean_se(p: SimPlay) -> tuple[float, float]:
            return (p.equity, p.equity_stderr) if on_equity else (p.win, p.win_pct_stderr / 100)

        c = math.sqrt(2 * math.log(max(2, len(live)) / delta))
        lm, lse = mean_se(leader)
        for p in live:
            if p is leader or p.protected or p.n < MIN_PRUNE_SAMPLES:
                continue
            m, se = mean_se(p)
            if m + c * se < lm - c * lse:
                p.pruned = True
            elif self.iterations > SIMILAR_PRUNE_AFTER and self._similar(p, leader):
                p.pruned = True
        for i, p in enumerate(self.plays):
            if p.pruned:
                for w in self.workers:
                    w.set_active(i, False)
        live = [p for p in live if not p.pruned]
        if len(live) == 1:
            self.reason = f"{level}% confidence"
            return True
        rest = [p for p in live if p is not leader]
        if rest and all(p.protected for p in rest):
            if all(mean_se(p)[0] + c * mean_se(p)[1] < lm - c * lse for p in rest):
                self.reason = f"{level}% confidence"
                return True
        return False

    # -- best-arm identification (stop_rule "bai"; see bai.py)

    def _bai_pairs(self, leader: int) -> list[bai.Pair]:
        """The leader's differences with every play on their common draws, on the win probability, or on equity
        once every game is decided (every play wins, or the best loses, nearly surely), as the z-test judges
        them."""
        wins = [p.win for p in self.plays]
        on_equity = all(w > 0.995 for w in wins) or max(wins) < 0.005
        rows = [w.pair_stats(leader) for w in self.workers]
        sums = []
        for b in range(len(self.plays)):
            n = sum(r[b][0] for r in rows)
            if on_equity:
                sums.append((n, sum(r[b][3] for r in rows), sum(r[b][4] for r in rows)))
            else:
                sums.append((n, sum(r[b][1] for r in rows), sum(r[b][2] for r in rows)))
        if on_equity:
            own = [p.equity_stderr ** 2 * p.n for p in self.plays]
        else:
            own = [(p.win_pct_stderr / 100) ** 2 * p.n for p in self.plays]
        return bai.pairs_from_sums(sums, bai.variance_floor(own))

    def _bai_batch(self, tasks: list[tuple[list[int], int, int]], deadline: float | None) -> list[int]:
        """Run each task (plays, first draw, draws): those plays simulated for draws first, first + 1, ... The
        draws of a task are split among the threads in contiguous parts; returns the draws completed per task
        (fewer after a stop or at the time limit)."""
        n_threads = len(self.workers)
        plan: list[list[tuple[int, int, int]]] = [[] for _ in range(n_threads)]
        for ti, (_, first, count) in enumerate(tasks):
            per = -(-count // n_threads)
            for t in range(n_threads):
                lo, hi = t * per, min(count, (t + 1) * per)
                if hi > lo:
                    plan[t].append((ti, first + lo, hi - lo))
        done = [[0] * len(tasks) for _ in range(n_threads)]

        def work(t: int) -> None:
            w = self.workers[t]
            for ti, first, count in plan[t]:
                active = set(tasks[ti][0])
                for i in range(len(self.plays)):
                    w.set_active(i, i in active)
                d = w.run(first, 1, count)
                done[t][ti] += d
                if d < count:
                    return

        pool = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(n_threads)]
        for th in pool:
            th.start()
        while any(th.is_alive() for th in pool):
            for th in pool:
                th.join(0.05)
            if deadline is not None and time.monotonic() >= deadline and not self._stop.is_set():
                self.reason = "time limit"
                self.stop()
        return [sum(done[t][ti] for t in range(n_threads)) for ti in range(len(tasks))]

    def _run_bai(self, progress: Callable[[SimResult], None] | None, interval: float,
                 stop: threading.Event | None) -> SimResult:
        """Best-arm identification: every play on the first bai.INITIAL_SAMPLES draws, then rounds of bai.BATCH
        draws each simulating the empirical leader and its challenger (Top-Two), until the leader is separated
        from every other play at the confidence asked (the GLR test on their differences over common draws),
        the iteration cap, the time limit or a stop. An iteration is a draw; the rounds do not depend on the
        thread count, so neither does the result (but for the order in which the threads' sums are added)."""
        opts = self.opts
        conf = opts.bai_confidence() or DEFAULT_BAI_CONFIDENCE
        delta = 1 - conf
        pct = f"{100 * conf:g}"
        deadline = self.t0 + opts.max_time if opts.max_time > 0 else None
        cap, _ = opts.iteration_cap()
        k = len(self.plays)
        for w in self.workers:
            w.track_pairs()
        last = time.monotonic()
        with watch_stop(stop, self.stop):
            first = min(bai.INITIAL_SAMPLES, cap)
            drawn = self._bai_batch([(list(range(k)), 0, first)], deadline)[0]   # draws used so far
            with self._lock:
                self.iterations = drawn
            complete = drawn == first
            while complete and not self._stop.is_set():
                with self._lock:
                    self._update_stats()
                if k == 1:
                    self.reason = "one play left"
                    break
                on_equity = all(p.win > 0.995 for p in self.plays) or max(p.win for p in self.plays) < 0.005
                lead = bai.leader_of([p.equity if on_equity else p.win for p in self.plays],
                                     [p.n for p in self.plays])
                pairs = self._bai_pairs(lead)
                # a play of the leader's tiles on the leader's squares in another order is as good as settled once
                # the leader is well known (as the z-test prunes it)
                similar = [i for i in range(k) if i != lead and self.plays[lead].n > SIMILAR_PRUNE_AFTER
                           and self._similar(self.plays[i], self.plays[lead])]
                settled, _, _ = bai.separated(pairs, lead, sum(p.n for p in self.plays), delta, similar)
                if settled:
                    self.reason = f"{pct}% confidence (best-arm identification)"
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    self.reason = "time limit"
                    break
                if drawn >= cap:
                    self.reason = "iterations"
                    break
                ch = bai.challenger_of(pairs, lead, similar)
                n = min(bai.BATCH, cap - drawn)
                got = self._bai_batch([([lead, ch], drawn, n)], deadline)[0]
                complete = got == n
                drawn += got
                with self._lock:
                    self.iterations = drawn
                now = time.monotonic()
                if progress is not None and now - last >= interval:
                    last = now
                    progress(self.snapshot(final=False))
            if self._stop.is_set() and not self.reason:
                self.reason = "stopped"
        return self.snapshot(final=True)

    @staticmethod
    def _similar(a: SimPlay, b: SimPlay) -> bool:
        ma, mb = a.gen.move, b.gen.move
        return (ma.kind == mb.kind == "place" and (ma.row, ma.col, ma.vertical) == (mb.row, mb.col, mb.vertical)
                and a.gen.tiles_played == b.gen.tiles_played and len(ma.tiles) == len(mb.tiles)
                and sorted(t for t in ma.tiles if t) == sorted(t for t in mb.tiles if t))

    def snapshot(self, final: bool) -> SimResult:
        with self._lock:
            self._update_stats()
            if self.opts.stats:
                self._update_play_stats()
            cap, source = self.opts.iteration_cap()
            o = self.opts
            conf = o.bai_confidence() if o.stop_rule == "bai" else ((o.z_stop() or 0) / 100)
            return SimResult(self._ranked(), self.iterations, time.monotonic() - self.t0, final, self.reason,
                             self.inference, cap, source, sum(p.n for p in self.plays), o.stop_rule, conf or 0.0,
                             o.stats)

    def run(self, progress: Callable[[SimResult], None] | None = None, interval: float = 0.5,
            stop: threading.Event | None = None) -> SimResult:
        if self.opts.stop_rule == "bai":
            return self._run_bai(progress, interval, stop)
        opts = self.opts
        n_threads = len(self.workers)
        deadline = self.t0 + opts.max_time if opts.max_time > 0 else None
        cap, _ = opts.iteration_cap()
        last = time.monotonic()
        rnd = 0
        with watch_stop(stop, self.stop):
            while not self._stop.is_set():
                if deadline is not None and time.monotonic() >= deadline:
                    self.reason = "time limit"
                    break
                remaining = cap - self.iterations
                if remaining <= 0:
                    self.reason = "iterations"
                    break
                per = min(ROUND_PER_THREAD, -(-remaining // n_threads))
                base = rnd * n_threads * ROUND_PER_THREAD
                counts = [min(per, max(0, -(-(remaining - t) // n_threads))) for t in range(n_threads)]
                done = [0] * n_threads

                def work(t: int, base: int = base, counts: list[int] = counts, done: list[int] = done) -> None:
                    done[t] = self.workers[t].run(base + t, n_threads, counts[t])

                pool = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(n_threads)]
                for th in pool:
                    th.start()
                while any(th.is_alive() for th in pool):
                    for th in pool:
                        th.join(0.05)
                    if deadline is not None and time.monotonic() >= deadline:
                        self.reason = "time limit"
                        self.stop()
                with self._lock:
                    self.iterations += sum(done)
                    if opts.z_stop() is not None:   # only the auto-stop needs them here; snapshot() updates too
                        self._update_stats()
                    if self._prune_and_check():
                        break
                rnd += 1
                now = time.monotonic()
                if progress is not None and now - last >= interval:
                    last = now
                    progress(self.snapshot(final=False))
            if self._stop.is_set() and not self.reason:
                self.reason = "stopped"
        return self.snapshot(final=True)
