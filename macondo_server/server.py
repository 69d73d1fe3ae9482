"""Server factory and the blocking `macondo serve` entry point: thread pool, health checking, reflection,
explicit message-size limits, keepalive for long streams, graceful shutdown on SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import os
import signal
import threading
from concurrent import futures
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from .config import Settings
from .pb.macondo.v1 import engine_pb2, engine_pb2_grpc
from .service import MAX_MESSAGE_BYTES, EngineServicer

log = logging.getLogger("macondo.server")

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
GRACE_SECONDS = 5.0


@dataclass
class RunningServer:
    server: grpc.Server
    port: int
    servicer: EngineServicer
    health: health.HealthServicer

    def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop jobs (their streams deliver a final result), then the server."""
        self.health.enter_graceful_shutdown()
        self.servicer.jobs.stop_all()
        self.server.stop(grace).wait()


def create_server(settings: Settings, host: str = "127.0.0.1", port: int = 50051, max_jobs: int = 4,
                  workers: int | None = None) -> RunningServer:
    options = [
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ]
    pool = futures.ThreadPoolExecutor(max_workers=workers or max(16, 4 * (os.cpu_count() or 1)),
                                      thread_name_prefix="grpc")
    server = grpc.server(pool, options=options, maximum_concurrent_rpcs=256)
    servicer = EngineServicer(settings, max_jobs)
    engine_pb2_grpc.add_EngineServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen on {host}:{port}")
    server.start()
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server, bound, servicer, health_servicer)


def serve(settings: Settings, host: str, port: int, max_jobs: int) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s level=%(levelname)s logger=%(name)s %(message)s")
    running = create_server(settings, host, port, max_jobs)
    # the default lexicon is loaded before the first request
    running.servicer.engine.lexicon(settings.default_lexicon)
    log.info("serving host=%s port=%d max_jobs=%d lexica=%s", host, running.port, max_jobs,
             ",".join(running.servicer.engine.registry.available()))
    done = threading.Event()

    def on_signal(signum, frame) -> None:
        log.info("signal=%d shutting down", signum)
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    done.wait()
    running.stop()
    log.info("stopped")
    return 0
