"""Server factory and the blocking `macondo serve` entry point: thread pool sized from the limits, health
checking on a lane of its own, reflection, message-size limits, keepalive for long streams, an exclusive
port, tokens and TLS (api/auth.py, enforced by api/guard.py's interceptor before any work), a refusal to
leave loopback without tokens unless told to, and a shutdown that stops every job and ends the process within
a few seconds whatever is running."""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import sys
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from macondo_server.api.auth import (
    LEGACY_TOKEN_NAME,
    AuthConfigError,
    FailureLimiter,
    Security,
    exposure_lines,
    is_loopback,
)
from macondo_server.api.connect import HttpOptions, HttpServer, HttpStartError, create_http_server
from macondo_server.api.guard import CountingPool, guard
from macondo_server.api.service import EngineServicer
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2, engine_pb2_grpc
from macondo_server.runtime.limits import Limits

log = logging.getLogger("macondo.server")

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
GRACE_SECONDS = 3.0       # running RPCs get this long to deliver their final results at shutdown
EXIT_SECONDS = 4.5        # after a stop signal the process ends by then, whatever still runs
SIGNAL_POLL_SECONDS = 0.2  # the main thread looks for a stop signal this often
SPARE_RPC_THREADS = 32    # threads for short RPCs (health, moves, sessions) beside the long jobs
SWEEP_SECONDS = 30.0      # idle game sessions are closed at least this often


class ServerStartError(OSError):
    """The server cannot start (the port is in use, the address is invalid)."""


@dataclass
class RunningServer:
    server: grpc.Server
    port: int
    servicer: EngineServicer
    health: health.HealthServicer
    sweeper: threading.Event
    http: HttpServer | None = None    # the Connect / gRPC-Web / web-board port (macondo_server.api.connect)
    healthy: bool = False
    host: str = "127.0.0.1"
    security: Security = field(default_factory=Security)
    lane: futures.ThreadPoolExecutor | None = None    # health checks and refusals (api/guard.py)

    def exposure(self) -> list[str]:
        """What this server exposes, in words: its ports, TLS and authentication."""
        ports = [("gRPC", self.host, self.port)]
        if self.http is not None:
            ports.append(("HTTP (Connect, gRPC-Web" + (", web board)" if self.http.options.web else ")"),
                          self.http.options.host, self.http.port))
        return exposure_lines(ports, self.security)

    def serving(self, ok: bool = True) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if ok else health_pb2.HealthCheckResponse.NOT_SERVING
        self.healthy = ok
        for name in ("", SERVICE_NAME):
            self.health.set(name, status)

    def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Refuse new jobs and stop the running ones (their streams deliver a final result), then the server."""
        self.health.enter_graceful_shutdown()
        self.servicer.jobs.close()
        self.sweeper.set()
        if self.http is not None:
            self.http.stop(grace)
        self.server.stop(grace).wait()
        if self.lane is not None:
            self.lane.shutdown(wait=False, cancel_futures=True)


def create_server(settings: Settings, host: str = "127.0.0.1", port: int = 50051, max_jobs: int | None = None,
                  workers: int | None = None, limits: Limits | None = None, serving: bool = True,
                  http: HttpOptions | None = None, security: Security | None = None) -> RunningServer:
    """Build, bind and start a server. `limits` default to the machine's (`max_jobs` overrides theirs).
    Health says NOT_SERVING until `serving` (the default) or a later RunningServer.serving().
    With `http`, the same servicer is also served over Connect / gRPC-Web on an HTTP port of its own.
    `security`: tokens required on both ports, TLS, and whether to serve off loopback without tokens."""
    if limits is None:
        limits = Limits.load(max_jobs=max_jobs)
    elif max_jobs is not None:
        limits = limits.with_changes(max_jobs=max_jobs)
    security = security or Security()
    security.limiter = FailureLimiter(limits.auth_failures_per_minute)
    if http is not None and http.token and LEGACY_TOKEN_NAME not in security.tokens.by_name:
        try:
            security.tokens.add(LEGACY_TOKEN_NAME, http.token, "--http-token")
        except AuthConfigError as exc:
            raise ServerStartError(str(exc)) from None
    options = [
        ("grpc.max_send_message_length", limits.max_response_bytes),
        ("grpc.max_receive_message_length", limits.max_request_bytes),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.so_reuseport", 0),   # a second server on the same port fails instead of sharing its traffic
        # a connection that has not finished its handshake (TLS, the HTTP/2 preface) by then is closed
        ("grpc.server_handshake_timeout_ms", limits.http_header_seconds * 1000),
    ]
    # every long job holds an RPC thread (streams and simulating engine moves): leave room for the rest; calls
    # beyond the threads wait (up to max_queued_requests of them), health checks run on a lane of their own
    threads = workers or limits.max_jobs + SPARE_RPC_THREADS
    pool = CountingPool(max_workers=threads, thread_name_prefix="grpc")
    interceptor, lane = guard(security, pool, limits)
    server = grpc.server(pool, options=options, interceptors=[interceptor])
    servicer = EngineServicer(settings, limits)
    engine_pb2_grpc.add_EngineServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    try:
        _check_port_free(host, port)
        if not is_loopback(host) and not security.tokens and not security.allow_open:
            raise ServerStartError(f"the gRPC port binds to {host}, which is not a loopback address: give tokens "
                                   "(--token-file or MACONDO_TOKENS) that clients must send as bearer tokens, or "
                                   "--allow-open to serve everyone who reaches it")
        credentials = _credentials(security)
    except (ServerStartError, AuthConfigError) as exc:
        lane.shutdown(wait=False)
        raise ServerStartError(str(exc)) from None
    try:
        if credentials is None:
            bound = server.add_insecure_port(f"{_grpc_host(host)}:{port}")
        else:
            bound = server.add_secure_port(f"{_grpc_host(host)}:{port}", credentials)
    except RuntimeError:
        bound = 0
    if bound == 0:
        lane.shutdown(wait=False)
        raise ServerStartError(f"cannot listen on {host}:{port} (the port is in use or the address is invalid)")
    running = RunningServer(server, bound, servicer, health_servicer, threading.Event(), host=host,
                            security=security, lane=lane)
    if http is not None:
        try:
            running.http = create_http_server(servicer, health_servicer,
                                              replace(http, max_request_bytes=limits.max_request_bytes), threads,
                                              healthy=lambda: running.healthy, security=security, limits=limits)
        except HttpStartError as exc:
            server.stop(0)
            lane.shutdown(wait=False)
            raise ServerStartError(str(exc)) from None
    server.start()
    sweeper = running.sweeper
    running.serving(serving)

    def sweep() -> None:
        while not sweeper.wait(min(SWEEP_SECONDS, limits.session_idle_seconds / 2)):
            closed = servicer.sessions.expire()
            if closed:
                log.info("closed %d idle game sessions", closed)

    threading.Thread(target=sweep, name="session-sweeper", daemon=True).start()
    return running


def _credentials(security: Security) -> grpc.ServerCredentials | None:
    """The gRPC port's TLS credentials, None for plain text."""
    if security.tls is None:
        return None
    cert, key, ca = security.tls.read()
    security.tls.server_context()          # the same files the HTTP port uses: a bad pair fails the start here
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=ca is not None)


def _grpc_host(host: str) -> str:
    """An address as gRPC's listener takes it (an IPv6 address in brackets)."""
    host = host.strip("[]")
    return f"[{host}]" if ":" in host else host


def _check_port_free(host: str, port: int) -> None:
    """Refuse a port another process listens on, with a clear message (gRPC would log its own error first)."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ServerStartError(f"cannot listen on {host}:{port}: {exc}") from None
    family, type_, proto, _, addr = infos[0]
    with socket.socket(family, type_, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as exc:
            what = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise ServerStartError(f"cannot listen on {host}:{port} ({what})") from None


def attach_cluster(running: RunningServer, settings: Settings, cluster: str | None,
                   checkpoint_dir: str | None) -> None:
    """serve --cluster / --checkpoint-dir: the Dask cluster and the checkpoint store that requests
    opt in to with use_cluster / checkpoint / resume (a request never names either)."""
    from macondo_server.runtime.checkpoint import CheckpointError, CheckpointStore
    from macondo_server.runtime.cluster import Cluster, ClusterError

    store = None
    try:
        if checkpoint_dir:
            folder = Path(checkpoint_dir)
            if not folder.is_dir():
                raise ServerStartError(f"--checkpoint-dir {folder} is not a folder")
            store = CheckpointStore(folder / "peg.sqlite")
        running.servicer.attach_cluster(
            Cluster(cluster, data_dirs=[str(d) for d in settings.data_dirs]) if cluster else None, store)
    except (ClusterError, CheckpointError) as exc:
        raise ServerStartError(str(exc)) from None


def serve(settings: Settings, host: str, port: int, limits: Limits, http: HttpOptions | None = None,
          cluster: str | None = None, checkpoint_dir: str | None = None, security: Security | None = None,
          review_store: str | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s level=%(levelname)s logger=%(name)s %(message)s")
    # A plain flag, polled: the handler runs in the main thread between bytecodes, and the kernel may deliver
    # the signal to any engine or gRPC thread, which does not wake a main thread blocked on a lock (an
    # Event.wait() without a timeout then never returns); nor may the handler take a lock the main thread holds.
    signalled: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        signalled.append(signum)

    # handlers first: a signal during start-up (lexicon loading) already shuts down cleanly
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    running = create_server(settings, host, port, limits=limits, serving=False, http=http, security=security)
    if review_store:
        from macondo_server.analysis.review_store import ReviewStore, ReviewStoreError

        try:
            running.servicer.review_store = ReviewStore(review_store)
        except ReviewStoreError as exc:
            running.stop(0)
            raise ServerStartError(f"--review-store: {exc}") from None
        log.info("review_store=%s", review_store)
    if cluster or checkpoint_dir:
        try:
            attach_cluster(running, settings, cluster, checkpoint_dir)
        except ServerStartError:
            running.stop(0)
            raise
        if cluster:
            log.info("cluster=%s workers=%d", cluster, running.servicer.cluster.workers() if running.servicer.cluster
                     else 0)
    log.info("starting host=%s port=%d (loading the default lexicon %s)", host, running.port,
             settings.default_lexicon)
    _say(f"gRPC server at {address(host, running.port)} (loading the lexicon {settings.default_lexicon})")
    if running.http is not None:
        log.info("http host=%s port=%d connect=yes grpc-web=yes web=%s cors=%s token=%s tls=%s",
                 running.http.options.host, running.http.port, "yes" if running.http.options.web else "no",
                 ",".join(running.http.options.cors_origins) or "none",
                 "yes" if running.security.tokens else "no", "yes" if running.security.tls else "no")
    log.info("exposure grpc=%s:%d tls=%s tokens=%s open=%s", host, running.port,
             "yes" if running.security.tls else "no", ",".join(running.security.tokens.names) or "none",
             "yes" if running.security.allow_open else "no")
    for line in running.exposure():
        _say(line)
    try:
        # the default lexicon is loaded before health reports SERVING
        running.servicer.engine.lexicon(settings.default_lexicon)
        if not signalled:
            running.serving(True)
            log.info("serving host=%s port=%d limits=%s lexica=%s", host, running.port,
                     ",".join(f"{k}={v}" for k, v in limits.as_dict().items()),
                     ",".join(running.servicer.engine.registry.available()))
            _say(f"serving on {address(host, running.port)}; Ctrl-C stops the server")
            if running.http is not None and running.http.options.web:
                _say(f"web board at http://{address(running.http.options.host, running.http.port)}/ "
                     "(open it in a browser)")
        while not signalled:
            time.sleep(SIGNAL_POLL_SECONDS)
        log.info("signal=%d shutting down", signalled[0])
    finally:
        _exit_by(time.monotonic() + EXIT_SECONDS)
        running.stop()
        if running.servicer.cluster is not None:
            running.servicer.cluster.close()
    log.info("stopped")
    return 0


def address(host: str, port: int) -> str:
    """HOST:PORT to connect to: a wildcard listening address (every interface) reads as this machine's
    loopback, an IPv6 address in brackets."""
    host = host.strip("[]")
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _say(text: str) -> None:
    """A plain line for the person who started the server (the log lines are for machines)."""
    print(f"macondo: {text}", file=sys.stderr, flush=True)


def _exit_by(deadline: float) -> None:
    """Make sure the process ends by `deadline`: engine threads that do not stop in time (a job still in
    its setup) are not waited for."""
    def watchdog() -> None:
        time.sleep(max(0.0, deadline - time.monotonic()))
        log.warning("jobs still running at the shutdown deadline: exiting anyway")
        logging.shutdown()
        os._exit(0)

    threading.Thread(target=watchdog, name="exit-watchdog", daemon=True).start()
