"""The pre-endgame's cluster task: what a Dask worker runs for PegJob (see macondo_server.runtime.cluster).

A task carries the position (CGP text), the lexicon's name and content fingerprint, the plays, draws and
options, and never a path. Each worker process keeps one context per solve between tasks (the game, one
transposition table and a pre-endgame worker per task running at the same time); the worker processes of
one machine share the solve's table through a file in SHM_DIR. A task's result depends only on what it
carries, so the solve's result does not depend on which worker ran what."""

from __future__ import annotations

import os
import re
import threading
import time
from typing import NotRequired, TypedDict, cast

from engine_cy.endgame import TranspositionTable
from engine_cy.peg import PegWorker
from engine_cy.prune import pruned_game
from macondo_server.analysis.peg.options import CAPPED
from macondo_server.engine.replay import game_from_position
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.move import MoveKind
from macondo_server.runtime.cluster import (
    WorkerStats,
    run_stopped,
    worker_context,
    worker_contexts,
    worker_lexicon,
)
from macondo_server.runtime.cluster import worker_stats as runtime_worker_stats

SHM_DIR = "/dev/shm"           # where the worker processes of one machine share a solve's table
_RUN_RE = re.compile(r"^[0-9a-f]{32}$")

# a play as engine_cy.peg takes it: (kind, row, column, vertical, tiles, score)
MoveTuple = tuple[MoveKind, int, int, bool, tuple[int, ...], int]
# an item of a task: (play index, group index, the play, draw sequence, opponent counts, exact)
PegItem = tuple[int, int, MoveTuple, tuple[int, ...], list[int], bool]
# a verdict: (play index, group index, outcome, spread (exact items; else None))
PegItemResult = tuple[int, int, int, int | None]


class PegSpec(TypedDict):
    """What every task of one solve carries (the Dispatcher adds deadline_in and sent_at to each task's)."""

    run: str
    cgp: str
    lexicon: str
    fingerprint: str
    bingo_bonus: int
    tt_mb: int
    prune_lexicon: bool
    shared_tt: bool
    deadline_in: NotRequired[float | None]   # seconds left when sent (None: no time limit)
    sent_at: NotRequired[float]              # time.time() when sent


class PegConfig(TypedDict):
    """The worker settings of a pass (PegWorker attributes; see PegJob._phase_config)."""

    plies: int
    max_replies: int
    max_nested: int
    cap_outcome: int      # what a continuation past the nesting cap counts as (engine_cy.peg)
    opp_solver: bool
    leaf_mode: int
    risk_moves: int
    skip_deep_pass: bool


class PegTaskResult(TypedDict):
    """What peg_task returns."""

    results: list[PegItemResult]
    stopped: bool
    endgames: int
    nested_calls: int
    nested_hits: int
    opp_solves: int
    nodes: int
    durations: list[float]
    pid: int


class PegWorkerStats(WorkerStats):
    """What worker_stats reports: the runtime's, and the solves whose table this process shares."""

    shared_tables: int


def shm_prefix() -> str:
    """The start of this user's shared table file names (the run id follows)."""
    return f"macondo-tt-{os.getuid()}-"


def _sweep_shared_tables(keep: set[str]) -> None:
    """Remove the shared table files of this user that no process maps any more (a client that died never
    asked its workers to forget its solve): a file is in use while a process holds a shared lock on it."""
    try:
        names = [n for n in os.listdir(SHM_DIR) if n.startswith(shm_prefix())]
    except OSError:
        return
    for name in names:
        if name[len(shm_prefix()):] in keep:
            continue
        path = os.path.join(SHM_DIR, name)
        try:
            if time.time() - os.stat(path).st_mtime < 60:
                continue   # being created: its creator may not hold its lock yet
        except OSError:
            continue
        _remove_if_unused(path)


def _remove_if_unused(path: str) -> None:
    """Remove a shared table file that no process holds (each mapping process holds a shared lock)."""
    import fcntl  # POSIX only (as the shared table): imported where used

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(path)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_run_table(run: str) -> None:
    """On the client after a solve (Dispatcher's after_forget): workers that died kept their run's table
    file (a local cluster's are on this machine); remove it when no process holds it."""
    if _RUN_RE.match(run):
        _remove_if_unused(os.path.join(SHM_DIR, shm_prefix() + run))


class _SharedTT:
    """The solve's transposition table in a file every worker process of this machine maps (see
    engine_cy.sharedtt): the processes share entries as in-process threads do. A shared lock on the file
    marks it in use (for the sweep)."""

    def __init__(self, tt: TranspositionTable, run: str, megabytes: int) -> None:
        import fcntl  # POSIX only (as engine_cy.sharedtt, mmap): imported where used

        from engine_cy.sharedtt import SharedTable, table_bytes

        self.path = os.path.join(SHM_DIR, shm_prefix() + run)
        size = table_bytes(megabytes)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            have = os.fstat(fd).st_size
            if have != size:
                if have > size:
                    raise OSError("a shared table of another size")
                os.posix_fallocate(fd, 0, size)   # the memory now, or ENOSPC now (never SIGBUS later)
            self.table = SharedTable(tt, fd, size)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def close(self, unlink: bool = True) -> None:
        """Unmap (no search may use the table) and release the file, removing its name (the other processes
        keep their mappings)."""
        self.table.detach()
        if unlink:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        os.close(self.fd)


class PegContext:
    """One solve's state in a worker process (a WorkerContext of macondo_server.runtime.cluster): the game,
    one transposition table (shared with the solve's other worker processes on this machine when it can be),
    and a pre-endgame worker per task running at the same time (kept between tasks)."""

    def __init__(self, spec: PegSpec) -> None:
        lex = worker_lexicon(spec["lexicon"], spec["fingerprint"])
        pos = parse_cgp(spec["cgp"])
        game = game_from_position(pos, lex)
        game.solver_mode()
        if spec.get("prune_lexicon", True):
            game = pruned_game(game)
        self.lex = lex
        self.game = game
        self.bb = int(spec["bingo_bonus"])
        self.shared: _SharedTT | None = None
        run = spec["run"]
        if spec.get("shared_tt", True) and _RUN_RE.match(run) and os.path.isdir(SHM_DIR):
            _sweep_shared_tables({run} | set(worker_contexts()))
            self.tt = TranspositionTable(1)   # its own entries while unshared: tiny
            try:
                self.shared = _SharedTT(self.tt, run, int(spec["tt_mb"]))
            except (OSError, ValueError):
                self.shared = None
        if self.shared is None:
            self.tt = TranspositionTable(int(spec["tt_mb"]))
        self.free: list[PegWorker] = []
        self.all: list[PegWorker] = []
        self.lock = threading.Lock()
        self.active = 0          # tasks using the table now
        self.closing = False
        self.unlink = True

    def acquire(self) -> PegWorker:
        with self.lock:
            self.active += 1
            if self.free:
                return self.free.pop()
            try:
                w = PegWorker(self.game, self.game.kwg, self.lex.klv, self.lex.ld, self.tt, self.bb)
            except BaseException:
                self.active -= 1
                raise
            self.all.append(w)
            return w

    def release(self, w: PegWorker, keep: bool = True) -> None:
        with self.lock:
            if keep:
                self.free.append(w)
            self.active -= 1
            last = self.closing and self.active == 0
        if last:
            self._unshare()

    def stop(self) -> None:
        with self.lock:
            for w in self.all:
                w.request_stop()

    def close(self, unlink: bool = True) -> None:
        """The solve is over here (forgotten, stopped or evicted): the shared table is let go as soon as no
        task of this worker uses it."""
        with self.lock:
            self.closing = True
            self.unlink = unlink
            idle = self.active == 0
        if idle:
            self._unshare()

    def _unshare(self) -> None:
        with self.lock:
            shared, self.shared = self.shared, None
        if shared is not None:
            shared.close(self.unlink)


def peg_context(spec: PegSpec) -> PegContext:
    """This worker process's context of the solve `spec["run"]` (made on its first task here)."""
    return worker_context(spec["run"], lambda: PegContext(spec))


def worker_stats() -> PegWorkerStats:
    """Runs on each worker (client.run): the runtime's worker_stats, and the solves whose table this process
    shares with the others ("shared_tables")."""
    shared = sum(1 for c in worker_contexts().values() if isinstance(c, PegContext) and c.shared is not None)
    return {**runtime_worker_stats(), "shared_tables": shared}


def peg_task(spec: PegSpec, config: PegConfig, items: list[PegItem]) -> PegTaskResult:
    """Solve a batch of (play, draw) items of one pre-endgame on this worker. `items`: (play index, group
    index, move tuple, draw sequence, opponent counts, exact). Returns the verdicts of the items solved
    before a stop (a stopped item is never reported), the counters' increase and the time per item."""
    run = spec["run"]
    out: PegTaskResult = {"results": [], "stopped": False, "endgames": 0, "nested_calls": 0, "nested_hits": 0,
                          "opp_solves": 0, "nodes": 0, "durations": [], "pid": os.getpid()}
    if run_stopped(run):
        out["stopped"] = True
        return out
    ctx = peg_context(spec)
    w = ctx.acquire()
    remaining = spec.get("deadline_in")
    try:
        w.plies = config["plies"]
        w.max_replies = config["max_replies"]
        w.max_nested = config["max_nested"]
        w.cap_outcome = config["cap_outcome"]
        w.opp_solver = config["opp_solver"]
        w.leaf_mode = config["leaf_mode"]
        w.risk_moves = config["risk_moves"]
        w.skip_deep_pass = config["skip_deep_pass"]
        before = (w.endgames, w.nested_calls, w.nested_hits, w.opp_solves, w.nodes)
        if remaining is not None:
            w.set_deadline(time.monotonic() + max(0.001, remaining - (time.time() - spec["sent_at"])))
        for pi, gi, move, seq, opp, exact in items:
            if run_stopped(run):
                out["stopped"] = True
                break
            t0 = time.perf_counter()
            # (tuple(): PegWorker takes a tuple, whatever sequence the item arrived as)
            outcome, spread = w.solve_draw(cast(MoveTuple, tuple(move)), tuple(seq), list(opp), exact=bool(exact))
            if w.stopped:
                out["stopped"] = True
                break
            out["durations"].append(time.perf_counter() - t0)
            # a full verdict the nesting cap took part in carries the CAPPED flag (see options.CAPPED)
            out["results"].append((pi, gi, outcome | (CAPPED if w.last_capped else 0), spread))
        out["endgames"] = w.endgames - before[0]
        out["nested_calls"] = w.nested_calls - before[1]
        out["nested_hits"] = w.nested_hits - before[2]
        out["opp_solves"] = w.opp_solves - before[3]
        out["nodes"] = w.nodes - before[4]
    finally:
        if remaining is not None:
            w.set_deadline(0.0)
        ctx.release(w, keep=not w.stopped)
    return out
