"""Long-running job registry: one stop event per job, a cap on concurrent jobs, stop-all on shutdown."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


class TooManyJobsError(RuntimeError):
    """The server already runs its maximum number of jobs."""


@dataclass
class Job:
    kind: str
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    stop: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class JobRegistry:
    def __init__(self, max_jobs: int) -> None:
        if max_jobs <= 0:
            raise ValueError(f"max jobs must be positive, got {max_jobs}")
        self.max_jobs = max_jobs
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def start(self, kind: str) -> Job:
        with self._lock:
            if len(self._jobs) >= self.max_jobs:
                raise TooManyJobsError(f"{len(self._jobs)} jobs are running; the limit is {self.max_jobs}")
            job = Job(kind)
            self._jobs[job.job_id] = job
            return job

    def finish(self, job: Job) -> None:
        with self._lock:
            self._jobs.pop(job.job_id, None)

    def stop(self, job_id: str) -> bool:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            return False
        job.stop.set()
        return True

    def stop_all(self) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.stop.set()

    def running(self) -> int:
        with self._lock:
            return len(self._jobs)


@contextmanager
def watch_stop(event: threading.Event | None, on_stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, call on_stop() as soon as `event` is set (the engine's stop flag lives in C,
    so a small watcher thread forwards the request)."""
    if event is None:
        yield
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
