"""An engine server in the background of this process, for `macondo shell` and `macondo bots` without
`--server`: one command gives a working shell or bot harness. The client package never starts an engine;
the engine side starts it here and hands the client an address."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from macondo_client import Client
from macondo_client import connect as connect_to

from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings


@contextlib.contextmanager
def connect(address: str | None = None, data_dir: str | None = None, timeout: float = 600.0,
            token: str | None = None, ca_file: str | None = None) -> Iterator[Client]:
    """A client for `address` (with a bearer token and a CA file for TLS when given); without one, a server
    on a free local port serves this process until the block ends (its jobs are stopped first)."""
    if address:
        with connect_to(address, timeout=timeout, token=token, ca_file=ca_file) as client:
            yield client
        return
    logging.getLogger("macondo").setLevel(logging.WARNING)
    running = create_server(Settings.load(data_dir), "127.0.0.1", 0, max_jobs=4)
    try:
        with connect_to(f"127.0.0.1:{running.port}", timeout=timeout) as client:
            yield client
    finally:
        running.stop(1.0)
