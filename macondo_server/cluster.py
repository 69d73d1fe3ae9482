"""Pre-endgames and self-play on a Dask cluster (the optional `cluster` extra: dask[distributed]).

The client (the CLI or the server) connects to a running Dask scheduler (`--cluster ADDRESS`) or starts a
LocalCluster of N worker processes on this machine (`--cluster local:N`). Work goes out as plain tasks that
carry the position (CGP text), the lexicon's name and content fingerprint, the plays, draws and options, and
never a path: each worker loads the lexicon from its own data directories once per process (checking the
fingerprint) and keeps its solver state (game, transposition table, pre-endgame workers) for the solve
between tasks. Dask provides the rest: scheduling, work stealing, and re-running the tasks of a worker that
died on another one. A task's result depends only on what it carries (see PegJob), so the solve's result
does not depend on which worker ran what.

This module imports dask lazily: without the extra everything else runs in-process as before."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import __version__

# the task and result formats below; a client and its workers must agree on it (and on the package version)
PROTOCOL = 1
CONNECT_TIMEOUT = 10.0       # seconds to reach a scheduler and see a worker
MAX_LOCAL_WORKERS = 256
CONTEXTS_PER_WORKER = 2      # solves whose state a worker process keeps (the oldest goes first)
NO_WORKERS_SECONDS = 60.0    # a solve with work in flight and no worker for this long fails (never hangs)
# Dask settings of the local cluster's scheduler and workers. By default each worker's statistical profiler
# samples its threads 100 times a second and the event loops wake 50 times a second to time themselves:
# about 35 ms of CPU a second per worker process and as much in the scheduler, taken from the solver's
# cores (measured idle on local:2: 0.67 CPU s per worker in 20 s, 0.14 with these). Workers started with
# `dask worker` read the same settings from DASK_* variables (see the README).
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s"}


class ClusterError(OSError):
    """The cluster cannot be used: not installed, unreachable, no workers, a version or lexicon mismatch, or
    a task that failed on every worker it was tried on. One line, for the CLI and the RPC status
    (`precondition`: a set-up problem that retrying will not fix, FAILED_PRECONDITION; else UNAVAILABLE)."""

    def __init__(self, message: str, precondition: bool = False) -> None:
        super().__init__(message)
        self.precondition = precondition

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_ADDRESS_RE = re.compile(r"^(?:(tcp|tls|ucx|inproc)://)?[A-Za-z0-9._\-\[\]:]{1,200}:\d{1,5}$")


def parse_cluster_spec(spec: str) -> tuple[str, Any]:
    """("local", N) for 'local:N', else ("address", ADDRESS) for a scheduler address (host:port, with an
    optional tcp:// or tls:// scheme)."""
    text = (spec or "").strip()
    if text.startswith("local:") or text == "local":
        n_text = text[6:] if text.startswith("local:") else ""
        if not n_text.isdigit() or not 1 <= int(n_text) <= MAX_LOCAL_WORKERS:
            raise ClusterError(f"--cluster {spec!r}: local:N needs N from 1 to {MAX_LOCAL_WORKERS} worker processes")
        return "local", int(n_text)
    if not _ADDRESS_RE.match(text):
        raise ClusterError(f"--cluster {spec[:80]!r}: not a scheduler address (host:port or tcp://host:port) "
                           "nor local:N")
    return "address", text


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ClusterError("--cluster needs Dask: install the optional extra (pip install 'macondo-py[cluster]', "
                           "or pip install 'dask[distributed]')", precondition=True) from None
    return distributed


def _worker_info() -> dict:
    """Runs on each worker: what the client checks before sending work."""
    import sys

    return {"macondo": __version__, "protocol": PROTOCOL, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "pid": os.getpid()}


class Cluster:
    """A connection to a Dask scheduler, or a LocalCluster of N worker processes started for it. The workers
    find lexica in their own data directories (a LocalCluster's: this process's `data_dirs`)."""

    def __init__(self, spec: str, data_dirs: Iterable[str] | None = None, timeout: float = CONNECT_TIMEOUT) -> None:
        kind, value = parse_cluster_spec(spec)
        distributed = _import_distributed()
        self.spec = spec
        self.local = None
        self._lock = threading.Lock()
        try:
            if kind == "local":
                import dask

                env = {"MACONDO_DATA_DIR": os.pathsep.join(str(d) for d in data_dirs)} if data_dirs else {}
                for name in ("MACONDO_CACHE_DIR",):
                    if os.environ.get(name):
                        env[name] = os.environ[name]
                # one thread per process: the solver releases the GIL, but processes keep one worker's crash
                # from taking the others down, and N processes use N cores. The workers get this process's
                # Dask settings (an env variable set for them is read too late) with QUIET_WORKERS
                with dask.config.set(QUIET_WORKERS):
                    self.local = distributed.LocalCluster(n_workers=value, threads_per_worker=1, processes=True,
                                                          dashboard_address=":0", silence_logs=40, env=env,
                                                          worker_dashboard_address=None)
                self.client = distributed.Client(self.local, timeout=timeout)
            else:
                self.client = distributed.Client(value, timeout=timeout)
        except ClusterError:
            raise
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler at {spec}: {_one_line(exc)}") from None
        except Exception as exc:  # noqa: BLE001 (dask raises several kinds; all mean the same to the user)
            self.close()
            raise ClusterError(f"cannot start the cluster {spec}: {_one_line(exc)}") from None
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:  # noqa: BLE001
            self.close()
            raise ClusterError(f"the Dask scheduler at {spec} has no workers (start one with: "
                               f"dask worker {self.address_for_workers()})") from None
        self.check_versions()

    def address_for_workers(self) -> str:
        try:
            return str(self.client.scheduler.address)
        except Exception:  # noqa: BLE001
            return self.spec

    def check_versions(self) -> None:
        """Every worker runs this package's version and task protocol (else a clear error, no work sent)."""
        try:
            infos = self.client.run(_worker_info)
        except Exception as exc:  # noqa: BLE001
            raise ClusterError(f"a worker of {self.spec} cannot run the engine (is macondo-py installed there?): "
                               f"{_one_line(exc)}") from None
        for addr, info in infos.items():
            if info.get("macondo") != __version__ or info.get("protocol") != PROTOCOL:
                raise ClusterError(f"version mismatch: worker {addr} runs macondo {info.get('macondo')} "
                                   f"(task protocol {info.get('protocol')}), this machine {__version__} "
                                   f"(protocol {PROTOCOL}); install the same version on every worker",
                                   precondition=True)

    def nthreads(self) -> int:
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001
            return 1

    def workers(self) -> int:
        try:
            return len(self.client.nthreads())
        except Exception:  # noqa: BLE001
            return 0

    def watch_workers(self, last_seen: list[float]) -> None:
        """Called about once a second while work is in flight: a cluster without workers for
        NO_WORKERS_SECONDS is an error instead of a wait without end (last_seen[0]: when one was seen)."""
        now = time.monotonic()
        if now - last_seen[1] < 1.0:
            return
        last_seen[1] = now
        if self.workers() > 0:
            last_seen[0] = now
        elif now - last_seen[0] > NO_WORKERS_SECONDS:
            raise ClusterError(f"the cluster {self.spec} has had no workers for {NO_WORKERS_SECONDS:.0f} s "
                               "(work in flight is abandoned)")

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
        if self.local is not None:
            try:
                self.local.close()
            except Exception:  # noqa: BLE001
                pass
            self.local = None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


# ---------------------------------------------------------------------------------------- fingerprints

_FP_CACHE: dict[tuple, str] = {}


def lexicon_fingerprint(engine, name: str) -> str:
    """SHA-256 (16 hex digits) of the files that make up lexicon `name` in this process's data directories
    (word graph or word list, and leaves), cached by path, size and modification time."""
    reg = engine.registry
    parts = []
    for suffix in (".kwg", ".txt", ".klv2"):
        p = reg._find(name, suffix)
        if p is not None:
            st = p.stat()
            parts.append((suffix, str(p), st.st_size, st.st_mtime_ns))
    key = tuple(parts)
    fp = _FP_CACHE.get(key)
    if fp is None:
        h = hashlib.sha256()
        for suffix, path, _, _ in parts:
            if suffix == ".txt" and any(s == ".kwg" for s, *_ in parts):
                continue   # the word graph is what gets loaded
            h.update(suffix.encode())
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        fp = h.hexdigest()[:16]
        _FP_CACHE[key] = fp
    return fp


# ---------------------------------------------------------------------------------------- worker side

_W_LOCK = threading.Lock()
_W_ENGINE: list = []
_W_LEXICA: dict[tuple[str, str], Any] = {}
_W_CONTEXTS: OrderedDict[str, _PegContext] = OrderedDict()
_W_STOPPED: set[str] = set()
_W_LOADS = [0]               # lexicon loads in this process (tests: once per worker, not per task)


def _worker_engine():
    if not _W_ENGINE:
        from .engine import Engine

        _W_ENGINE.append(Engine())
    return _W_ENGINE[0]


def _worker_lexicon(name: str, fingerprint: str):
    with _W_LOCK:
        lex = _W_LEXICA.get((name, fingerprint))
        if lex is not None:
            return lex
        engine = _worker_engine()
        lex = engine.lexicon(name)
        have = lexicon_fingerprint(engine, name)
        if have != fingerprint:
            raise ClusterError(f"lexicon mismatch: worker pid {os.getpid()} has lexicon {name} with fingerprint "
                               f"{have}, the client {fingerprint}; give every worker the same lexicon files",
                               precondition=True)
        _W_LEXICA[(name, fingerprint)] = lex
        _W_LOADS[0] += 1
        return lex


SHM_DIR = "/dev/shm"           # where the worker processes of one machine share a solve's table
_RUN_RE = re.compile(r"^[0-9a-f]{32}$")


def _shm_prefix() -> str:
    return f"macondo-tt-{os.getuid()}-"


def _sweep_shared_tables(keep: set[str]) -> None:
    """Remove the shared table files of this user that no process maps any more (a client that died never
    asked its workers to forget its solve): a file is in use while a process holds a shared lock on it."""
    try:
        names = [n for n in os.listdir(SHM_DIR) if n.startswith(_shm_prefix())]
    except OSError:
        return
    for name in names:
        if name[len(_shm_prefix()):] in keep:
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
    import fcntl

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


class _SharedTT:
    """The solve's transposition table in a file every worker process of this machine maps (see
    engine_cy.sharedtt): the processes share entries as in-process threads do. A shared lock on the file
    marks it in use (for the sweep)."""

    def __init__(self, tt, run: str, megabytes: int) -> None:
        import fcntl

        from engine_cy.sharedtt import SharedTable, table_bytes

        self.path = os.path.join(SHM_DIR, _shm_prefix() + run)
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


class _PegContext:
    """One solve's state in a worker process: the game, one transposition table (shared with the solve's
    other worker processes on this machine when it can be), and a pre-endgame worker per task running at the
    same time (kept between tasks)."""

    def __init__(self, spec: dict) -> None:
        from engine_cy.endgame import TranspositionTable

        from .formats import parse_cgp
        from .gamestate import game_from_position

        lex = _worker_lexicon(spec["lexicon"], spec["fingerprint"])
        pos = parse_cgp(spec["cgp"])
        game = game_from_position(pos, lex)
        game.solver_mode()
        if spec.get("prune_lexicon", True):
            from engine_cy.prune import pruned_game

            game = pruned_game(game)
        self.lex = lex
        self.game = game
        self.bb = int(spec["bingo_bonus"])
        self.shared: _SharedTT | None = None
        run = spec["run"]
        if spec.get("shared_tt", True) and _RUN_RE.match(run) and os.path.isdir(SHM_DIR):
            _sweep_shared_tables({run} | set(_W_CONTEXTS))
            self.tt = TranspositionTable(1)   # its own entries while unshared: tiny
            try:
                self.shared = _SharedTT(self.tt, run, int(spec["tt_mb"]))
            except (OSError, ValueError):
                self.shared = None
        if self.shared is None:
            self.tt = TranspositionTable(int(spec["tt_mb"]))
        self.free: list = []
        self.all: list = []
        self.lock = threading.Lock()
        self.active = 0          # tasks using the table now
        self.closing = False
        self.unlink = True

    def acquire(self):
        from engine_cy.peg import PegWorker

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

    def release(self, w, keep: bool = True) -> None:
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


def _peg_context(spec: dict) -> _PegContext:
    run = spec["run"]
    with _W_LOCK:
        ctx = _W_CONTEXTS.get(run)
        if ctx is not None:
            _W_CONTEXTS.move_to_end(run)
            return ctx
    ctx = _PegContext(spec)
    evicted = []
    with _W_LOCK:
        have = _W_CONTEXTS.get(run)
        if have is None:
            _W_CONTEXTS[run] = ctx
            while len(_W_CONTEXTS) > CONTEXTS_PER_WORKER:
                evicted.append(_W_CONTEXTS.popitem(last=False)[1])
    if have is not None:
        ctx.close(unlink=False)   # another task of this run made it first (and maps the same file)
        return have
    for old in evicted:
        old.close()
    return ctx


RESULT_SECONDS = 2.0   # a finished task's result not fetched in this time went with its worker


def fetch_result(distributed, fut, timeout: float = RESULT_SECONDS) -> tuple[bool, Any]:
    """(True, the result) of a task reported finished, or (False, None) when its result cannot be fetched:
    it was kept on a worker that died since, and the task is pending again (to be re-run, or, with no worker
    left, to end the run by the no-worker watch instead of a wait without end). A task's own error is
    raised."""
    try:
        return True, fut.result(timeout=timeout)
    except (distributed.TimeoutError, TimeoutError):
        if fut.status == "error":
            raise
        return False, None



def _cancel_quietly(client, futures) -> None:
    """Cancel the tasks still out (a failure here changes nothing: the run is ending)."""
    if futures:
        try:
            client.cancel(list(futures))
        except Exception:  # noqa: BLE001
            pass


def _stop_quietly(client, run: str) -> None:
    """Ask every worker to stop its tasks of this run (a worker gone: nothing of this run runs there)."""
    try:
        client.run(_stop_run, run)
    except Exception:  # noqa: BLE001
        pass


def _stop_run(run: str) -> int:
    """Runs on each worker (client.run): stop the solve `run` now, in the tasks running and any to come."""
    with _W_LOCK:
        _W_STOPPED.add(run)
        ctx = _W_CONTEXTS.pop(run, None)
    if ctx is not None:
        ctx.stop()
        ctx.close()
    return 0


def _forget_run(run: str) -> int:
    """Runs on each worker at the end of a solve: its state goes, and a task of it still queued or running
    (cancelled too late) stops instead of building the state (and its table file) again."""
    with _W_LOCK:
        _W_STOPPED.add(run)
        while len(_W_STOPPED) > 10000:
            _W_STOPPED.pop()
        ctx = _W_CONTEXTS.pop(run, None)
    if ctx is not None:
        ctx.close()
    return 0


def _worker_stats() -> dict:
    return {"lexicon_loads": _W_LOADS[0], "contexts": len(_W_CONTEXTS), "pid": os.getpid(),
            "shared_tables": sum(1 for c in _W_CONTEXTS.values() if c.shared is not None)}


def peg_task(spec: dict, config: dict, items: list) -> dict:
    """Solve a batch of (play, draw) items of one pre-endgame on this worker. `items`: (play index, group
    index, move tuple, draw sequence, opponent counts, exact). Returns the verdicts of the items solved
    before a stop (a stopped item is never reported), the counters' increase and the time per item."""
    run = spec["run"]
    out: dict = {"results": [], "stopped": False, "endgames": 0, "nested_calls": 0, "nested_hits": 0,
                 "opp_solves": 0, "nodes": 0, "durations": [], "pid": os.getpid()}
    if run in _W_STOPPED:
        out["stopped"] = True
        return out
    ctx = _peg_context(spec)
    w = ctx.acquire()
    remaining = spec.get("deadline_in")
    try:
        for name in ("plies", "max_replies", "max_nested", "opp_solver", "leaf_mode", "risk_moves",
                     "skip_deep_pass"):
            setattr(w, name, config[name])
        before = (w.endgames, w.nested_calls, w.nested_hits, w.opp_solves, w.nodes)
        if remaining is not None:
            w.set_deadline(time.monotonic() + max(0.001, remaining - (time.time() - spec["sent_at"])))
        for pi, gi, move, seq, opp, exact in items:
            if run in _W_STOPPED:
                out["stopped"] = True
                break
            t0 = time.perf_counter()
            outcome, spread = w.solve_draw(tuple(move), tuple(seq), list(opp), exact=bool(exact))
            if w.stopped:
                out["stopped"] = True
                break
            out["durations"].append(time.perf_counter() - t0)
            out["results"].append((pi, gi, outcome, spread))
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


# ---------------------------------------------------------------------------------------- client side


@dataclass
class DispatchStats:
    tasks: int = 0
    items: int = 0
    retried: int = 0
    durations: list[float] | None = None


class Dispatcher:
    """Keeps a cluster busy with batches of items chosen on the client as results arrive (so best-first
    order and cut-offs use every result so far): at most two batches per worker thread in flight, each sized
    to take about `target` seconds from the item times measured so far."""

    def __init__(self, cluster: Cluster, spec: dict, target: float = 0.5) -> None:
        self.cluster = cluster
        self.spec = spec
        self.target = target
        self.stats = DispatchStats(durations=[])
        self.run = spec["run"]

    def batch_size(self, remaining: int, per_item: float | None, first: int) -> int:
        slots = 2 * self.cluster.nthreads()
        if per_item is None:
            size = first
        else:
            size = int(self.target / max(per_item, 1e-4))
        # never so large that some worker threads get nothing while items remain
        size = min(size, max(1, -(-remaining // slots)), 256)
        return max(1, size)

    def run_phase(self, config: dict, next_batch: Callable[[int], list | None], on_result: Callable[[dict], None],
                  tick: Callable[[], None], stopped: Callable[[], bool], remaining: Callable[[], int],
                  deadline_in: Callable[[], float | None], cancel_ids: Callable[[], set[int]] | None = None,
                  first: int = 1, affinity: Callable[[tuple], Any] | None = None) -> None:
        """Submit batches (next_batch(size) -> list of items or None when nothing is left) until none is left
        and every one has come back; on_result(task result) for each; tick() about ten times a second; a
        stop cancels what has not started and stops what runs. Items with the same affinity(item) go to the
        same worker when it is free to take them (they share table entries and nested solves there); any
        other worker may still run them."""
        distributed = _import_distributed()
        client = self.cluster.client
        inflight: dict = {}
        slots = 2 * self.cluster.nthreads()
        homes: dict = {}                 # affinity key -> worker address
        load: dict[str, int] = {}        # keys sent to each worker
        checked = [0.0]                  # when the worker list was last read
        alive: list[str] = []

        def home(key) -> list[str] | None:
            now = time.monotonic()
            if now - checked[0] > 1.0:
                try:
                    alive[:] = sorted(client.nthreads())
                except Exception:  # noqa: BLE001
                    alive[:] = []
                checked[0] = now
            if not alive:
                return None
            addr: str | None = homes.get(key)
            if addr is None or addr not in alive:
                addr = min(alive, key=lambda a: load.get(a, 0))
                homes[key] = addr
                load[addr] = load.get(addr, 0) + 1
            return [addr]
        exhausted = False
        per_item: float | None = None
        seen = [time.monotonic(), 0.0]
        try:
            while True:
                if stopped():
                    break
                while not exhausted and len(inflight) < slots:
                    batch = next_batch(self.batch_size(remaining(), per_item, first))
                    if not batch:
                        exhausted = True
                        break
                    spec = dict(self.spec, deadline_in=deadline_in(), sent_at=time.time())
                    # one task per batch (a task per affinity key made one task per item of the 1-in-the-bag
                    # plays: 8,785 tasks for ONYX's 8,792 tiny items, 11x the in-process time), sent where
                    # the batch's commonest key lives
                    where = None
                    if affinity is not None:
                        keys = Counter(affinity(item) for item in batch)
                        where = home(max(keys, key=lambda k: keys[k]))
                    fut = client.submit(peg_task, spec, config, batch, pure=False, workers=where,
                                        allow_other_workers=where is not None,
                                        key=f"peg-{self.run}-{uuid.uuid4().hex[:12]}")
                    inflight[fut] = batch
                    self.stats.tasks += 1
                if not inflight:
                    break
                try:
                    done = distributed.wait(list(inflight), timeout=0.2, return_when="FIRST_COMPLETED").done
                except distributed.TimeoutError:
                    done = set()
                except TimeoutError:
                    done = set()
                for fut in done:
                    try:
                        got, res = fetch_result(distributed, fut)
                    except distributed.client.FutureCancelledError:
                        inflight.pop(fut, None)
                        continue
                    except ClusterError as exc:   # a worker that cannot serve this solve (its lexicon differs)
                        raise ClusterError(str(exc), precondition=True) from None
                    except Exception as exc:  # noqa: BLE001 (a task failing on every worker tried)
                        raise ClusterError(f"a pre-endgame task failed on the cluster: {_one_line(exc)}") from None
                    if not got:
                        continue   # its result went with its worker: it runs again (or no worker is left)
                    inflight.pop(fut, None)
                    self.stats.items += len(res["results"])
                    self.stats.durations.extend(res["durations"])   # type: ignore[union-attr]
                    if res["durations"]:
                        d = self.stats.durations[-200:]   # type: ignore[index]
                        per_item = sum(d) / len(d)
                    on_result(res)
                if inflight:
                    self.cluster.watch_workers(seen)
                if cancel_ids is not None:
                    dead = cancel_ids()
                    if dead:
                        drop = [f for f, b in inflight.items() if all(item[0] in dead for item in b)]
                        for f in drop:
                            inflight.pop(f)
                        if drop:
                            client.cancel(drop)
                tick()
        finally:
            _cancel_quietly(client, inflight)
            if stopped():
                self.stop_workers()

    def stop_workers(self) -> None:
        _stop_quietly(self.cluster.client, self.run)

    def forget(self) -> None:
        try:
            self.cluster.client.run(_forget_run, self.run)
        except Exception:  # noqa: BLE001
            pass
        # workers that died kept their run's table file (a local cluster's are on this machine)
        if _RUN_RE.match(self.run):
            _remove_if_unused(os.path.join(SHM_DIR, _shm_prefix() + self.run))


def new_run_id() -> str:
    return uuid.uuid4().hex


# ---------------------------------------------------------------------------------------- self-play

_W_BOTS: OrderedDict[tuple, Any] = OrderedDict()


def _autoplay_worker(bots: list[dict]):
    """This process's self-play worker for the two bots (lexicon by name and fingerprint, leaves as bytes or
    the lexicon's own), kept between tasks."""
    from engine_cy.autoplay import AutoplayWorker
    from engine_cy.klv import Klv

    from .formats import new_board

    # one per thread (a worker process may run several tasks at once)
    key = (tuple((b["lexicon"], b["fingerprint"], b["leaves_sha"]) for b in bots), threading.get_ident())
    with _W_LOCK:
        have = _W_BOTS.get(key)
        if have is not None:
            _W_BOTS.move_to_end(key)
            return have
    lexes = [_worker_lexicon(b["lexicon"], b["fingerprint"]) for b in bots]
    klvs = [Klv(b["leaves"]) if b["leaves"] is not None else lex.klv for b, lex in zip(bots, lexes, strict=True)]
    made = (AutoplayWorker(lexes[0].kwg, klvs[0], lexes[1].kwg, klvs[1], lexes[0].ld, new_board()), lexes[0])
    with _W_LOCK:
        _W_BOTS[key] = made
        while len(_W_BOTS) > 16:
            _W_BOTS.popitem(last=False)
    return made


def autoplay_task(bots: list[dict], seed: int, pairs: bool, indices: list[int], names: tuple[str, str] | None,
                  run: str) -> list:
    """Play games `indices` (game g: tiles from (seed, g // 2 with pairs else g), bot 1 first when g is even),
    as the in-process harness does. Returns (g, first bot, scores, bingos, turns, end reason, GCG text or None)."""
    from engine_cy.autoplay import game_seed

    from .autoplay import history_to_gcg
    from .formats import write_gcg

    w, lex = _autoplay_worker(bots)
    out = []
    for g in indices:
        if run in _W_STOPPED:
            break
        first = g % 2
        scores, bingos, turns, reason = w.play(game_seed(seed, g // 2 if pairs else g), first)
        gcg = None
        if names is not None:
            rec = history_to_gcg(w.game_state(), lex.ld, names, first)
            rec.pragmas.append(("lexicon", lex.name))
            gcg = write_gcg(rec)
        out.append((g, first, tuple(scores), tuple(bingos), turns, reason, gcg))
    return out


def run_autoplay_tasks(cluster: Cluster, bots: list[dict], games: int, seed: int, pairs: bool,
                       names: tuple[str, str] | None, on_games: Callable[[list], None],
                       stopped: Callable[[], bool]) -> int:
    """Self-play split across the cluster in batches of games; on_games(list of game tuples) as batches come
    back. Returns the tasks sent."""
    distributed = _import_distributed()
    client = cluster.client
    run = new_run_id()
    slots = 2 * cluster.nthreads()
    size = max(1, min(200, games // (8 * slots) or 1))
    batches = [list(range(i, min(games, i + size))) for i in range(0, games, size)]
    batches.reverse()
    inflight: dict = {}
    sent = 0
    seen = [time.monotonic(), 0.0]
    try:
        while True:
            if inflight:
                cluster.watch_workers(seen)
            while batches and len(inflight) < slots and not stopped():
                b = batches.pop()
                inflight[client.submit(autoplay_task, bots, seed, pairs, b, names, run, pure=False,
                                       key=f"autoplay-{run}-{b[0]}")] = b
                sent += 1
            if not inflight or stopped():
                break
            try:
                done = distributed.wait(list(inflight), timeout=0.1, return_when="FIRST_COMPLETED").done
            except (distributed.TimeoutError, TimeoutError):
                done = set()
            for fut in done:
                try:
                    got, res = fetch_result(distributed, fut)
                except ClusterError as exc:
                    raise ClusterError(str(exc), precondition=True) from None
                except Exception as exc:  # noqa: BLE001
                    raise ClusterError(f"a self-play task failed on the cluster: {_one_line(exc)}") from None
                if got:
                    inflight.pop(fut)
                    on_games(res)
    finally:
        _cancel_quietly(client, inflight)
        _stop_quietly(client, run)
    return sent
