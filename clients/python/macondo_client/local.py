"""Connect to a server, or start one in the background of this process when no address is given (so a
single command gives a working shell or bot harness)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from .client import Client


@contextlib.contextmanager
def connect(address: str | None = None, data_dir: str | None = None, timeout: float = 600.0) -> Iterator[Client]:
    """A client for `address`; without one, a server on a free local port serves this process until the
    block ends (its jobs are stopped first)."""
    if address:
        with Client(address, timeout=timeout) as client:
            yield client
        return
    from macondo_server.config import Settings
    from macondo_server.server import create_server

    logging.getLogger("macondo").setLevel(logging.WARNING)
    running = create_server(Settings.load(data_dir), "127.0.0.1", 0, max_jobs=4)
    try:
        with Client(f"127.0.0.1:{running.port}", timeout=timeout) as client:
            yield client
    finally:
        running.stop(1.0)
