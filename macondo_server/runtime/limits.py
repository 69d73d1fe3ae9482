"""Every bound a request can hit, derived from the machine and overridable by whoever starts the server.

Defaults (a 2-core, 24 GiB machine in brackets):
- max_jobs: long jobs running at once (sim, endgame, pre-endgame, autoplay, engine moves that simulate or
  solve): 4 x cores, at least 4 [8].
- max_threads_per_job: worker threads one job may ask for: the cores [2].
- max_threads_total: worker threads of all running jobs together: 4 x cores [8]. A job that leaves its
  thread count unset gets min(cores, what is free).
- tt_megabytes_total: transposition-table memory of all running jobs together: a quarter of physical
  memory [6,144]; tt_megabytes_per_job: the same unless set lower.
- max_plays: plays a request may name or simulate (sim candidates, only-solve lists) [1,000].
- max_field_chars: any text field of a request not listed below [256]; max_cgp_chars [4,096];
  max_gcg_chars [262,144]; max_request_bytes: a whole request [1 MiB]; max_response_bytes [16 MiB].
- max_sessions: game sessions in all [2,000]; max_sessions_per_client: per client [100];
  session_idle_seconds: a session not touched for this long is closed [1,800].
- max_jobs_per_client, max_threads_per_client, tt_megabytes_per_client: what one client may hold of the
  jobs, worker threads and table memory [the totals: no tighter bound unless set].
- max_autoplay_games: games one Autoplay request may ask for [1,000,000].
- max_infer_racks: racks one inference may judge (sim's infer_max_racks; default per request 50,000) [200,000].
- max_job_seconds: wall time of one job, after which it stops and delivers its best result [86,400].
- max_cluster_jobs: jobs that may use the server's Dask cluster (--cluster) at the same time [1].
- max_queued_requests: requests waiting for a free RPC thread (beyond them: refused at once) [1,000];
  queue_seconds: how long one may wait [5].
- http_max_connections: connections the HTTP port keeps open (beyond them the longest-idle one is
  closed) [1,024]; http_max_header_bytes: a request's line and headers [65,536];
  http_header_seconds: time to send them, and on both ports to finish a new connection's handshake (TLS,
  HTTP/2's preface) [10]; http_body_seconds: time to send a body [30]; http_idle_seconds: an idle
  connection is closed after [5].
- auth_failures_per_minute: failed authentications one address may make before it is refused for the
  rest of the minute [10].

A client (a principal) is the name of the token a request carries, or the address it comes from when the
server takes requests without tokens (loopback use): never a connection, so opening more connections
gives no more games, jobs or threads.

Override with `macondo serve --limit NAME=VALUE` (repeatable) or MACONDO_LIMIT_NAME=VALUE in the
environment; `macondo serve --print-limits` shows the values in force.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, fields, replace

from macondo_server.model.text import MAX_CGP_CHARS, MAX_GCG_CHARS

ENV_PREFIX = "MACONDO_LIMIT_"
_INT = re.compile(r"[0-9]{1,12}")

# The principal of the request in flight, whose quotas it counts against: a token's name, or "peer:ADDRESS"
# for a request without a token. Set by the ports (api.guard, api.connect) around every RPC; empty for calls
# from inside the process, which only the server-wide limits bound.
current_principal: ContextVar[str] = ContextVar("macondo_principal", default="")

# per-client limits that follow their server-wide total unless set (name -> total)
PER_CLIENT = {"max_jobs_per_client": "max_jobs", "max_threads_per_client": "max_threads_total",
              "tt_megabytes_per_client": "tt_megabytes_total"}


class LimitError(ValueError):
    """A request (or a limit setting) is outside a bound; `limit` names the bound."""

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message)
        self.limit = limit


class ResourceLimitError(RuntimeError):
    """A shared resource (jobs, threads, table memory, sessions) is used up for now; retry later."""

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message)
        self.limit = limit


def cpu_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def physical_memory_mb() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024))
    except (AttributeError, ValueError, OSError):
        return 8192


@dataclass(frozen=True)
class Limits:
    max_jobs: int
    max_threads_per_job: int
    max_threads_total: int
    tt_megabytes_total: int
    tt_megabytes_per_job: int
    max_plays: int = 1000
    max_field_chars: int = 256
    max_cgp_chars: int = MAX_CGP_CHARS
    max_gcg_chars: int = MAX_GCG_CHARS
    max_request_bytes: int = 1024 * 1024
    max_response_bytes: int = 16 * 1024 * 1024
    max_sessions: int = 2000
    max_sessions_per_client: int = 100
    session_idle_seconds: int = 1800
    max_autoplay_games: int = 1_000_000
    max_infer_racks: int = 200_000
    max_job_seconds: int = 86_400
    max_cluster_jobs: int = 1
    max_jobs_per_client: int = 0           # 0 here: the total (set in __post_init__)
    max_threads_per_client: int = 0
    tt_megabytes_per_client: int = 0
    max_queued_requests: int = 1000
    queue_seconds: int = 5
    http_max_connections: int = 1024
    http_max_header_bytes: int = 64 * 1024
    http_header_seconds: int = 10
    http_body_seconds: int = 30
    http_idle_seconds: int = 5
    auth_failures_per_minute: int = 10

    def __post_init__(self) -> None:
        for name, total in PER_CLIENT.items():
            if getattr(self, name) == 0:
                object.__setattr__(self, name, getattr(self, total))

    @classmethod
    def from_machine(cls, cores: int | None = None, memory_mb: int | None = None) -> Limits:
        cores = cores or cpu_cores()
        memory_mb = memory_mb or physical_memory_mb()
        tt = max(64, memory_mb // 4)
        return cls(max_jobs=max(4, 4 * cores), max_threads_per_job=cores, max_threads_total=4 * cores,
                   tt_megabytes_total=tt, tt_megabytes_per_job=tt)

    @classmethod
    def load(cls, overrides: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None,
             **fixed: int | None) -> Limits:
        """Machine defaults < MACONDO_LIMIT_* environment < `overrides` (NAME=VALUE strings from the command
        line) < keyword arguments that are not None (e.g. --max-jobs)."""
        limits = cls.from_machine()
        env = os.environ if environ is None else environ
        names = {f.name for f in fields(cls)}
        changes: dict[str, int] = {}
        for key, value in env.items():
            if key.startswith(ENV_PREFIX):
                name = key[len(ENV_PREFIX):].lower()
                if name not in names:
                    raise LimitError(f"{key}: unknown limit (known: {', '.join(sorted(names))})")
                changes[name] = _parse_value(key, value)
        for name, value in (overrides or {}).items():
            if name not in names:
                raise LimitError(f"unknown limit {name[:40]!r} (known: {', '.join(sorted(names))})")
            changes[name] = _parse_value(name, value)
        for key, number in fixed.items():
            if number is not None:
                if key not in names:
                    raise LimitError(f"unknown limit {key!r}")
                changes[key] = int(number)
        return limits.with_changes(**changes)

    def check(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not 1 <= value <= 1 << 40:
                raise LimitError(f"limit {f.name} must be 1 to 2^40, got {value}", f.name)
        if self.max_threads_per_job > self.max_threads_total:
            raise LimitError("max_threads_per_job cannot exceed max_threads_total", "max_threads_per_job")
        if self.tt_megabytes_per_job > self.tt_megabytes_total:
            raise LimitError("tt_megabytes_per_job cannot exceed tt_megabytes_total", "tt_megabytes_per_job")
        if self.max_sessions_per_client > self.max_sessions:
            raise LimitError("max_sessions_per_client cannot exceed max_sessions", "max_sessions_per_client")
        for name, total in PER_CLIENT.items():
            if getattr(self, name) > getattr(self, total):
                raise LimitError(f"{name} cannot exceed {total}", name)
        if self.max_threads_per_client < self.max_threads_per_job:
            raise LimitError("max_threads_per_client cannot be below max_threads_per_job (no job could run)",
                             "max_threads_per_client")
        if self.tt_megabytes_per_client < self.tt_megabytes_per_job:
            raise LimitError("tt_megabytes_per_client cannot be below tt_megabytes_per_job",
                             "tt_megabytes_per_client")
        if self.http_max_header_bytes < 4096:
            raise LimitError("http_max_header_bytes must be at least 4096", "http_max_header_bytes")
        for name, ceiling in (("max_cgp_chars", MAX_CGP_CHARS), ("max_gcg_chars", MAX_GCG_CHARS)):
            if getattr(self, name) > ceiling:
                raise LimitError(f"{name} cannot exceed {ceiling}, what the parser reads at most", name)
        if self.max_request_bytes < 64 * 1024:
            raise LimitError("max_request_bytes must be at least 65536", "max_request_bytes")

    def with_changes(self, **changes: int) -> Limits:
        """A copy with some limits changed (a new table total also sets the per-job table limit, unless given;
        a new total sets the per-client limit that followed it or would now exceed it, unless given)."""
        if "tt_megabytes_total" in changes and "tt_megabytes_per_job" not in changes:
            changes["tt_megabytes_per_job"] = changes["tt_megabytes_total"]
        for name, total in PER_CLIENT.items():
            if total in changes and name not in changes:
                mine, old = getattr(self, name), getattr(self, total)
                if mine == old or mine > changes[total]:
                    changes[name] = changes[total]
        # a per-job limit raised past a per-client one that followed its total raises it too
        for name, job in (("tt_megabytes_per_client", "tt_megabytes_per_job"),
                          ("max_threads_per_client", "max_threads_per_job")):
            if job in changes and name not in changes:
                changes[name] = max(getattr(self, name), changes[job])
        limits = replace(self, **changes)
        limits.check()
        return limits

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    # ------------------------------------------------------------------ request checks

    def threads(self, requested: int, what: str = "threads") -> int:
        """A job's thread request: 0 means 'as many as the per-job limit allows'."""
        if requested < 0 or requested > self.max_threads_per_job:
            raise LimitError(f"{what} must be 1 to {self.max_threads_per_job} (limit max_threads_per_job), "
                             f"got {requested}", "max_threads_per_job")
        return requested

    def tt_megabytes(self, requested: int) -> int:
        if not 1 <= requested <= self.tt_megabytes_per_job:
            raise LimitError(f"tt_megabytes must be 1 to {self.tt_megabytes_per_job} (limit tt_megabytes_per_job), "
                             f"got {requested}", "tt_megabytes_per_job")
        return requested

    def infer_racks(self, requested: int) -> int:
        """Racks an inference may judge: 0 means the default (50,000, or the limit when lower)."""
        if requested == 0:
            return min(50_000, self.max_infer_racks)
        if not 1 <= requested <= self.max_infer_racks:
            raise LimitError(f"infer_max_racks must be 1 to {self.max_infer_racks} (limit max_infer_racks), "
                             f"got {requested}", "max_infer_racks")
        return requested

    def plays(self, count: int, what: str) -> None:
        if count > self.max_plays:
            raise LimitError(f"{what}: {count} plays asked for; the limit max_plays is {self.max_plays}",
                             "max_plays")


def _parse_value(name: str, text: str) -> int:
    text = text.strip()
    if not _INT.fullmatch(text):
        raise LimitError(f"limit {name}: {text[:20]!r} is not a whole number of 1 to 12 digits", name)
    return int(text)


def parse_assignments(items: list[str]) -> dict[str, str]:
    """['max_jobs=8', ...] -> {'max_jobs': '8'} (the --limit option)."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise LimitError(f"--limit {item[:40]!r}: expected NAME=VALUE")
        out[name.strip().lower().replace("-", "_")] = value
    return out
