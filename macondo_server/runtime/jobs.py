"""The one job system for long computations (sim, endgame, pre-endgame, autoplay, engine moves that simulate
or solve): a job is registered before its setup starts, holds its share of the server's threads and
transposition-table memory while it runs, and has one stop event that cancellation, StopJob, its deadline,
the server's job time limit and shutdown all set. Engines poll a C flag; `watch_stop` forwards the event."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from macondo_server.runtime.limits import Limits, ResourceLimitError, current_principal

DEADLINE_TICK = 0.02   # seconds between deadline checks


class StopEvent(threading.Event):
    """A stop flag that also runs callbacks when set: the engines' C stop flags are forwarded at once, with no
    watcher thread polling (sixteen jobs polling would keep taking the GIL from short RPCs)."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._cb_lock = threading.Lock()

    def set(self) -> None:
        super().set()
        with self._cb_lock:
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()

    def add_callback(self, cb: Callable[[], None]) -> None:
        with self._cb_lock:
            if not self.is_set():
                self._callbacks.append(cb)
                return
        cb()

    def remove_callback(self, cb: Callable[[], None]) -> None:
        with self._cb_lock:
            if cb in self._callbacks:
                self._callbacks.remove(cb)


class TooManyJobsError(ResourceLimitError):
    """The server already runs its maximum number of jobs."""


class ShuttingDownError(RuntimeError):
    """The server is stopping and takes no new jobs."""


@dataclass
class Job:
    kind: str
    threads: int = 1
    tt_megabytes: int = 0
    deadline: float | None = None            # time.monotonic() at which the job is stopped
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    stop: StopEvent = field(default_factory=StopEvent)
    started: float = field(default_factory=time.monotonic)
    stop_reason: str = ""
    principal: str = ""                      # whose quotas it counts against (limits.current_principal)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def request_stop(self, reason: str) -> None:
        if not self.stop.is_set():
            self.stop_reason = self.stop_reason or reason
            self.stop.set()

    def stop_at(self, deadline: float | None) -> None:
        """Stop the job at `deadline` (monotonic seconds) if that is earlier than its current deadline."""
        if deadline is not None and (self.deadline is None or deadline < self.deadline):
            self.deadline = deadline


class JobRegistry:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._threads_used = 0
        self._tt_used = 0
        self._by_principal: dict[str, list[int]] = {}   # principal -> [jobs, threads, table megabytes]
        self._ticker: threading.Thread | None = None
        self._tick_stop = threading.Event()

    # ------------------------------------------------------------------ life cycle of a job

    def start(self, kind: str, threads: int = 1, tt_megabytes: int = 0, max_seconds: float | None = None) -> Job:
        """Register a job holding `threads` worker threads (0: as many as the per-job limit allows of what is
        free) and `tt_megabytes` of table memory; RESOURCE_EXHAUSTED-style errors when the server is full or
        the request's principal (limits.current_principal) holds its own share."""
        lim = self.limits
        threads = lim.threads(threads)
        if tt_megabytes:
            lim.tt_megabytes(tt_megabytes)
        principal = current_principal.get()
        with self._lock:
            if self._closed:
                raise ShuttingDownError("the server is shutting down and takes no new jobs")
            if len(self._jobs) >= lim.max_jobs:
                raise TooManyJobsError(f"{len(self._jobs)} jobs are running; the limit max_jobs is {lim.max_jobs}",
                                       "max_jobs")
            mine = self._by_principal.get(principal, [0, 0, 0]) if principal else [0, 0, 0]
            if principal and mine[0] >= lim.max_jobs_per_client:
                raise TooManyJobsError(f"this client runs {mine[0]} jobs; the limit max_jobs_per_client is "
                                       f"{lim.max_jobs_per_client}", "max_jobs_per_client")
            free_threads = lim.max_threads_total - self._threads_used
            my_free = lim.max_threads_per_client - mine[1] if principal else free_threads
            if threads == 0:
                threads = min(lim.max_threads_per_job, free_threads, my_free)
            if free_threads <= 0 or threads > free_threads:
                raise ResourceLimitError(
                    f"{self._threads_used} worker threads are in use; the limit max_threads_total is "
                    f"{lim.max_threads_total} (asked for {max(threads, 1)})", "max_threads_total")
            if threads <= 0 or threads > my_free:
                raise ResourceLimitError(
                    f"this client's jobs use {mine[1]} worker threads; the limit max_threads_per_client is "
                    f"{lim.max_threads_per_client} (asked for {max(threads, 1)})", "max_threads_per_client")
            if tt_megabytes > lim.tt_megabytes_total - self._tt_used:
                raise ResourceLimitError(
                    f"{self._tt_used} MB of transposition tables are in use; the limit tt_megabytes_total is "
                    f"{lim.tt_megabytes_total} (asked for {tt_megabytes})", "tt_megabytes_total")
            if principal and tt_megabytes > lim.tt_megabytes_per_client - mine[2]:
                raise ResourceLimitError(
                    f"this client's jobs use {mine[2]} MB of transposition tables; the limit "
                    f"tt_megabytes_per_client is {lim.tt_megabytes_per_client} (asked for {tt_megabytes})",
                    "tt_megabytes_per_client")
            job = Job(kind, threads=threads, tt_megabytes=tt_megabytes, principal=principal)
            seconds = lim.max_job_seconds if max_seconds is None else min(max_seconds, lim.max_job_seconds)
            job.stop_at(job.started + seconds)
            self._jobs[job.job_id] = job
            self._threads_used += threads
            self._tt_used += tt_megabytes
            if principal:
                use = self._by_principal.setdefault(principal, [0, 0, 0])
                use[0] += 1
                use[1] += threads
                use[2] += tt_megabytes
            self._ensure_ticker()
            return job

    def finish(self, job: Job) -> None:
        with self._lock:
            if self._jobs.pop(job.job_id, None) is not None:
                self._threads_used -= job.threads
                self._tt_used -= job.tt_megabytes
                use = self._by_principal.get(job.principal)
                if use is not None:
                    use[0] -= 1
                    use[1] -= job.threads
                    use[2] -= job.tt_megabytes
                    if use[0] <= 0:
                        del self._by_principal[job.principal]

    @contextmanager
    def job(self, kind: str, threads: int = 1, tt_megabytes: int = 0) -> Iterator[Job]:
        job = self.start(kind, threads, tt_megabytes)
        try:
            yield job
        finally:
            job.request_stop("finished")
            self.finish(job)

    # ------------------------------------------------------------------ stopping

    def stop(self, job_id: str) -> bool:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            return False
        job.request_stop("stopped")
        return True

    def stop_all(self, reason: str = "stopped") -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.request_stop(reason)

    def close(self) -> None:
        """Shutdown: refuse new jobs, stop the running ones (they still deliver their best result)."""
        with self._lock:
            self._closed = True
        self.stop_all("shutdown")
        self._tick_stop.set()

    @property
    def closed(self) -> bool:
        return self._closed

    def running(self) -> int:
        with self._lock:
            return len(self._jobs)

    def usage(self) -> tuple[int, int, int]:
        """(jobs, threads, table megabytes) in use."""
        with self._lock:
            return len(self._jobs), self._threads_used, self._tt_used

    def _ensure_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="job-deadlines", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._tick_stop.wait(DEADLINE_TICK):
            now = time.monotonic()
            with self._lock:
                due = [j for j in self._jobs.values() if j.deadline is not None and now >= j.deadline]
            for job in due:
                job.request_stop("deadline")


@contextmanager
def watch_stop(event: threading.Event | None, on_stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, call on_stop() as soon as `event` is set (the engine's stop flag lives in C):
    through the event's callbacks for a job's StopEvent, by a small watcher thread for a plain Event."""
    if event is None:
        yield
        return
    if isinstance(event, StopEvent):
        event.add_callback(on_stop)
        try:
            yield
        finally:
            event.remove_callback(on_stop)
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if event.wait(0.02):
                on_stop()
                return

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()
