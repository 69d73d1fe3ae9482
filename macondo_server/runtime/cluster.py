"""A generic Dask executor (the optional `cluster` extra: dask[distributed]). It knows no solver: the
solvers' tasks (analysis/peg/task.py, analysis/selfplay.py, analysis/leavetrain.py) use its public API.

The client (the CLI or the server) connects to a running Dask scheduler (`--cluster ADDRESS`) or starts a
LocalCluster of N worker processes on this machine (`--cluster local:N`). Work goes out as plain tasks that
carry what the task needs (a position as CGP text, the lexicon's name and content fingerprint, ...) and
never a path: each worker loads a lexicon from its own data directories once per process (checking the
fingerprint, worker_lexicon) and may keep a solve's state between tasks (worker_context). Dask provides the
rest: scheduling, work stealing, and re-running the tasks of a worker that died on another one.

Client side: Cluster, Dispatcher (batches chosen on the client as results arrive), map_batches (a fixed
list of items in batches), fetch_result, cancel_quietly, stop_quietly, new_run_id.
Worker side: worker_engine, worker_lexicon, run_stopped, worker_context, worker_contexts, stop_run,
forget_run, worker_stats.

This module imports dask lazily (import_distributed): without the extra everything else runs in-process."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypedDict, TypeVar, cast

from macondo_server import __version__
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

# the task and result formats (this module's and the solvers' tasks); a client and its workers must agree
# on it (and on the package version)
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


def import_distributed() -> ModuleType:
    """The `distributed` module, or a ClusterError naming the extra to install."""
    try:
        import distributed
    except ImportError:
        raise ClusterError("--cluster needs Dask: install the optional extra (pip install 'macondo-py[cluster]', "
                           "or pip install 'dask[distributed]')", precondition=True) from None
    return distributed


class WorkerInfo(TypedDict):
    """What a worker reports before it is sent work (_worker_info)."""

    macondo: str
    protocol: int
    python: str
    pid: int


def _worker_info() -> WorkerInfo:
    """Runs on each worker: what the client checks before sending work."""
    import sys

    return {"macondo": __version__, "protocol": PROTOCOL, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "pid": os.getpid()}


class Cluster:
    """A connection to a Dask scheduler, or a LocalCluster of N worker processes started for it. The workers
    find lexica in their own data directories (a LocalCluster's: this process's `data_dirs`)."""

    def __init__(self, spec: str, data_dirs: Iterable[str] | None = None, timeout: float = CONNECT_TIMEOUT) -> None:
        kind, value = parse_cluster_spec(spec)
        distributed = import_distributed()
        self.spec = spec
        self.local: LocalCluster | None = None
        self.client: Client
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
            raise ClusterError(f"cannot reach the Dask scheduler at {spec}: {one_line(exc)}") from None
        except Exception as exc:  # noqa: BLE001 (dask raises several kinds; all mean the same to the user)
            self.close()
            raise ClusterError(f"cannot start the cluster {spec}: {one_line(exc)}") from None
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:  # noqa: BLE001
            self.close()
            raise ClusterError(f"the Dask scheduler at {spec} has no workers (start one with: "
                               f"dask worker {self.address_for_workers()})") from None
        self.check_versions()

    def address_for_workers(self) -> str:
        try:
            scheduler = self.client.scheduler
            return str(scheduler.address) if scheduler is not None else self.spec
        except Exception:  # noqa: BLE001
            return self.spec

    def check_versions(self) -> None:
        """Every worker runs this package's version and task protocol (else a clear error, no work sent)."""
        try:
            infos: dict[str, WorkerInfo] = self.client.run(_worker_info)
        except Exception as exc:  # noqa: BLE001
            raise ClusterError(f"a worker of {self.spec} cannot run the engine (is macondo-py installed there?): "
                               f"{one_line(exc)}") from None
        for addr, info in infos.items():
            if info.get("macondo") != __version__ or info.get("protocol") != PROTOCOL:
                raise ClusterError(f"version mismatch: worker {addr} runs macondo {info.get('macondo')} "
                                   f"(task protocol {info.get('protocol')}), this machine {__version__} "
                                   f"(protocol {PROTOCOL}); install the same version on every worker",
                                   precondition=True)

    def nthreads(self) -> int:
        try:
            threads: dict[str, int] = self.client.nthreads()
            return max(1, sum(threads.values()))
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


def one_line(exc: BaseException) -> str:
    """An exception as one short line (for ClusterError messages)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


# ---------------------------------------------------------------------------------------- fingerprints

# (suffix, path, size, modification time) of each file of a lexicon -> its fingerprint
_FP_CACHE: dict[tuple[tuple[str, str, int, int], ...], str] = {}


def lexicon_fingerprint(engine: Engine, name: str) -> str:
    """SHA-256 (16 hex digits) of the files that make up lexicon `name` in this process's data directories
    (word graph or word list, and leaves), cached by path, size and modification time."""
    reg = engine.registry
    parts: list[tuple[str, str, int, int]] = []
    for suffix in (".kwg", ".txt", ".klv2", ".distribution"):
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


class WorkerContext(Protocol):
    """A solve's state kept by a worker process between its tasks (see worker_context)."""

    def stop(self) -> None:
        """Stop the tasks of the solve running now (they return what they have)."""

    def close(self, unlink: bool = True) -> None:
        """The solve is over here (forgotten, stopped or evicted): let its resources go once no task uses
        them. unlink=False: a duplicate made by a task that lost the race to register it; resources named
        after the run (shared with the registered context) stay."""


C = TypeVar("C", bound=WorkerContext)

_W_LOCK = threading.Lock()
_W_ENGINE: list[Engine] = []
_W_LEXICA: dict[tuple[str, str], Lexicon] = {}
_W_CONTEXTS: OrderedDict[str, WorkerContext] = OrderedDict()
_W_STOPPED: set[str] = set()
_W_LOADS = [0]               # lexicon loads in this process (tests: once per worker, not per task)


def worker_engine() -> Engine:
    """This process's Engine (its own data directories), made once."""
    if not _W_ENGINE:
        _W_ENGINE.append(Engine())
    return _W_ENGINE[0]


def worker_lexicon(name: str, fingerprint: str) -> Lexicon:
    """Lexicon `name` from this process's data directories, loaded once per process; a ClusterError
    (precondition) when its content differs from the client's (`fingerprint`, see lexicon_fingerprint)."""
    with _W_LOCK:
        lex = _W_LEXICA.get((name, fingerprint))
        if lex is not None:
            return lex
        engine = worker_engine()
        lex = engine.lexicon(name)
        have = lexicon_fingerprint(engine, name)
        if have != fingerprint:
            raise ClusterError(f"lexicon mismatch: worker pid {os.getpid()} has lexicon {name} with fingerprint "
                               f"{have}, the client {fingerprint}; give every worker the same lexicon files",
                               precondition=True)
        _W_LEXICA[(name, fingerprint)] = lex
        _W_LOADS[0] += 1
        return lex


def run_stopped(run: str) -> bool:
    """The run was stopped or forgotten on this worker (stop_run, forget_run): its tasks end now."""
    return run in _W_STOPPED


def worker_context(run: str, make: Callable[[], C]) -> C:
    """The context this worker process keeps for `run`, made by make() (outside the lock) if it has none;
    the oldest beyond CONTEXTS_PER_WORKER are closed. A context made by a task that lost the race to register
    it is closed with unlink=False and the registered one is returned."""
    with _W_LOCK:
        ctx = _W_CONTEXTS.get(run)
        if ctx is not None:
            _W_CONTEXTS.move_to_end(run)
            return cast(C, ctx)
    made = make()
    evicted = []
    with _W_LOCK:
        have = _W_CONTEXTS.get(run)
        if have is None:
            _W_CONTEXTS[run] = made
            while len(_W_CONTEXTS) > CONTEXTS_PER_WORKER:
                evicted.append(_W_CONTEXTS.popitem(last=False)[1])
    if have is not None:
        made.close(unlink=False)   # another task of this run made it first (and holds the same resources)
        return cast(C, have)
    for old in evicted:
        old.close()
    return made


def worker_contexts() -> dict[str, WorkerContext]:
    """The contexts this worker process keeps, by run (a copy)."""
    with _W_LOCK:
        return dict(_W_CONTEXTS)


def stop_run(run: str) -> int:
    """Runs on each worker (client.run): stop the run `run` now, in the tasks running and any to come."""
    with _W_LOCK:
        _W_STOPPED.add(run)
        ctx = _W_CONTEXTS.pop(run, None)
    if ctx is not None:
        ctx.stop()
        ctx.close()
    return 0


def forget_run(run: str) -> int:
    """Runs on each worker at the end of a run: its state goes, and a task of it still queued or running
    (cancelled too late) stops instead of building the state again."""
    with _W_LOCK:
        _W_STOPPED.add(run)
        while len(_W_STOPPED) > 10000:
            _W_STOPPED.pop()
        ctx = _W_CONTEXTS.pop(run, None)
    if ctx is not None:
        ctx.close()
    return 0


class WorkerStats(TypedDict):
    """What worker_stats reports."""

    lexicon_loads: int
    contexts: int
    pid: int


def worker_stats() -> WorkerStats:
    """Runs on each worker (client.run): lexicon loads and contexts kept in this process."""
    return {"lexicon_loads": _W_LOADS[0], "contexts": len(_W_CONTEXTS), "pid": os.getpid()}


# ---------------------------------------------------------------------------------------- client side

RESULT_SECONDS = 2.0   # a finished task's result not fetched in this time went with its worker


T = TypeVar("T")


def fetch_result(distributed: ModuleType, fut: Future[T],
                 timeout: float = RESULT_SECONDS) -> tuple[Literal[True], T] | tuple[Literal[False], None]:
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


def cancel_quietly(client: Client, futures: Collection[Future[Any]]) -> None:
    """Cancel the tasks still out (a failure here changes nothing: the run is ending)."""
    if futures:
        try:
            client.cancel(list(futures))
        except Exception:  # noqa: BLE001
            pass


def stop_quietly(client: Client, run: str) -> None:
    """Ask every worker to stop its tasks of this run (a worker gone: nothing of this run runs there)."""
    try:
        client.run(stop_run, run)
    except Exception:  # noqa: BLE001
        pass


def new_run_id() -> str:
    return uuid.uuid4().hex


@dataclass
class DispatchStats:
    tasks: int = 0
    items: int = 0
    retried: int = 0
    durations: list[float] = field(default_factory=list)


class BatchResult(TypedDict):
    """What a Dispatcher's task returns (at least): one result per item finished, and its seconds."""

    results: list[Any]
    durations: list[float]


S = TypeVar("S", bound=Mapping[str, Any])         # a Dispatcher's spec (run: the run id)
Cfg = TypeVar("Cfg")                             # a phase's config
Item = TypeVar("Item", bound=tuple[Any, ...])    # an item (its first field: its id)
R = TypeVar("R", bound=BatchResult)              # a task's result


class Dispatcher(Generic[S, Cfg, Item, R]):
    """Keeps a cluster busy with batches of items chosen on the client as results arrive (so best-first
    order and cut-offs use every result so far): at most two batches per worker thread in flight, each sized
    to take about `target` seconds from the item times measured so far.

    Each batch runs as task(spec, config, batch) on a worker, `spec` with `deadline_in` (seconds left, or
    None) and `sent_at` (time.time()) added; the task returns a dict with "results" (one per item finished)
    and "durations" (seconds per item finished), and ends early once run_stopped(spec["run"]). An item's
    first field is its id (cancel_ids). `label` names the task in errors ("a {label} task failed on the
    cluster"), `key` (default: label) starts its Dask keys; after_forget(run) runs on the client after
    forget() (to remove what workers that died left behind)."""

    def __init__(self, cluster: Cluster, task: Callable[[S, Cfg, list[Item]], R], spec: S, label: str,
                 key: str | None = None, target: float = 0.5,
                 after_forget: Callable[[str], None] | None = None) -> None:
        self.cluster = cluster
        self.task = task
        self.spec = spec
        self.label = label
        self.key = key or label
        self.target = target
        self.after_forget = after_forget
        self.stats = DispatchStats()
        self.run: str = spec["run"]

    def batch_size(self, remaining: int, per_item: float | None, first: int) -> int:
        slots = 2 * self.cluster.nthreads()
        if per_item is None:
            size = first
        else:
            size = int(self.target / max(per_item, 1e-4))
        # never so large that some worker threads get nothing while items remain
        size = min(size, max(1, -(-remaining // slots)), 256)
        return max(1, size)

    def run_phase(self, config: Cfg, next_batch: Callable[[int], list[Item] | None], on_result: Callable[[R], None],
                  tick: Callable[[], None], stopped: Callable[[], bool], remaining: Callable[[], int],
                  deadline_in: Callable[[], float | None], cancel_ids: Callable[[], set[int]] | None = None,
                  first: int = 1, affinity: Callable[[Item], Hashable] | None = None) -> None:
        """Submit batches (next_batch(size) -> list of items or None when nothing is left) until none is left
        and every one has come back; on_result(task result) for each; tick() about ten times a second; a
        stop cancels what has not started and stops what runs. Items with the same affinity(item) go to the
        same worker when it is free to take them (they share table entries and nested solves there); any
        other worker may still run them."""
        distributed = import_distributed()
        client = self.cluster.client
        inflight: dict[Future[R], list[Item]] = {}
        slots = 2 * self.cluster.nthreads()
        homes: dict[Hashable, str] = {}  # affinity key -> worker address
        load: dict[str, int] = {}        # keys sent to each worker
        checked = [0.0]                  # when the worker list was last read
        alive: list[str] = []

        def home(key: Hashable) -> list[str] | None:
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
                    # the spec with deadline_in and sent_at added (S declares them)
                    spec = cast(S, dict(self.spec, deadline_in=deadline_in(), sent_at=time.time()))
                    # one task per batch (a task per affinity key made one task per item of the 1-in-the-bag
                    # plays: 8,785 tasks for ONYX's 8,792 tiny items, 11x the in-process time), sent where
                    # the batch's commonest key lives
                    where: list[str] | None = None
                    if affinity is not None:
                        keys = Counter(affinity(item) for item in batch)
                        where = home(max(keys, key=lambda k: keys[k]))
                    fut = client.submit(self.task, spec, config, batch, pure=False, workers=where,
                                        allow_other_workers=where is not None,
                                        key=f"{self.key}-{self.run}-{uuid.uuid4().hex[:12]}")
                    inflight[fut] = batch
                    self.stats.tasks += 1
                if not inflight:
                    break
                done: set[Future[R]]
                try:
                    done = distributed.wait(list(inflight), timeout=0.2, return_when="FIRST_COMPLETED").done
                except distributed.TimeoutError:
                    done = set()
                except TimeoutError:
                    done = set()
                for fut in done:
                    try:
                        fetched = fetch_result(distributed, fut)
                    except distributed.client.FutureCancelledError:
                        inflight.pop(fut, None)
                        continue
                    except ClusterError as exc:   # a worker that cannot serve this run (its lexicon differs)
                        raise ClusterError(str(exc), precondition=True) from None
                    except Exception as exc:  # noqa: BLE001 (a task failing on every worker tried)
                        raise ClusterError(f"a {self.label} task failed on the cluster: {one_line(exc)}") from None
                    if not fetched[0]:
                        continue   # its result went with its worker: it runs again (or no worker is left)
                    res = fetched[1]
                    inflight.pop(fut, None)
                    self.stats.items += len(res["results"])
                    self.stats.durations.extend(res["durations"])
                    if res["durations"]:
                        d = self.stats.durations[-200:]
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
            cancel_quietly(client, inflight)
            if stopped():
                self.stop_workers()

    def stop_workers(self) -> None:
        stop_quietly(self.cluster.client, self.run)

    def forget(self) -> None:
        try:
            self.cluster.client.run(forget_run, self.run)
        except Exception:  # noqa: BLE001
            pass
        if self.after_forget is not None:
            self.after_forget(self.run)


def map_batches(cluster: Cluster, task: Callable[..., T], items: list[Any], args: tuple[Any, ...],
                on_result: Callable[[T], None], stopped: Callable[[], bool], label: str, key: str | None = None,
                max_batch: int = 200) -> int:
    """Run task(*args, batch, run) over `items` in batches (each of at most max_batch items, small enough
    that every worker thread gets several), at most two per worker thread in flight, in order;
    on_result(task result) as batches come back; a stop sends no more and stops what runs. `label` names the
    task in errors, `key` (default: label) starts its Dask keys. Returns the tasks sent."""
    distributed = import_distributed()
    client = cluster.client
    run = new_run_id()
    slots = 2 * cluster.nthreads()
    size = max(1, min(max_batch, len(items) // (8 * slots) or 1))
    batches = [(i, items[i:i + size]) for i in range(0, len(items), size)]
    batches.reverse()
    prefix = key or label
    inflight: dict[Future[T], list[Any]] = {}
    sent = 0
    seen = [time.monotonic(), 0.0]
    try:
        while True:
            if inflight:
                cluster.watch_workers(seen)
            while batches and len(inflight) < slots and not stopped():
                start, b = batches.pop()
                inflight[client.submit(task, *args, b, run, pure=False, key=f"{prefix}-{run}-{start}")] = b
                sent += 1
            if not inflight or stopped():
                break
            done: set[Future[T]]
            try:
                done = distributed.wait(list(inflight), timeout=0.1, return_when="FIRST_COMPLETED").done
            except (distributed.TimeoutError, TimeoutError):
                done = set()
            for fut in done:
                try:
                    fetched = fetch_result(distributed, fut)
                except ClusterError as exc:
                    raise ClusterError(str(exc), precondition=True) from None
                except Exception as exc:  # noqa: BLE001
                    raise ClusterError(f"a {label} task failed on the cluster: {one_line(exc)}") from None
                if fetched[0]:
                    inflight.pop(fut)
                    on_result(fetched[1])
    finally:
        cancel_quietly(client, inflight)
        stop_quietly(client, run)
    return sent
