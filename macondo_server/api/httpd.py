"""The HTTP port's connections: uvicorn's HTTP/1.1 protocol (httptools) with the bounds a port reached by
untrusted clients needs, so that no number of idle, slow or oversized connections keeps others out.

- A connection that sends nothing for `http_idle_seconds` is closed (before its first request too, where
  uvicorn's keep-alive timer alone would wait forever).
- A request's line and headers must arrive within `http_header_seconds` of the connection waiting for them,
  however slowly they trickle in (408), and fit in `http_max_header_bytes`: the bytes are counted as they
  arrive and a request past the bound is refused (431) and its connection closed without reading the rest.
- A request body must arrive within `http_body_seconds` of its headers (408).
- At most `http_max_connections` connections are open: a new one beyond them closes the connection that has
  been idle longest (no request in flight), so idle connections can never lock out a new client; only when
  every connection has a request in flight is the newcomer refused (503).
- With TLS, a connection that has not finished its handshake within `http_header_seconds` is closed.

Load shedding of requests (waiting briefly for an RPC thread rather than failing) is the Gateway's
(api/connect.py); these bounds are per connection and apply to every request, health checks included.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from macondo_server.runtime.limits import Limits

log = logging.getLogger("macondo.http")


@dataclass
class ConnectionBounds:
    """The bounds of one HTTP port, and its idle connections in the order they became idle."""

    max_connections: int = 1024
    max_header_bytes: int = 64 * 1024
    header_seconds: float = 10.0
    body_seconds: float = 30.0
    idle_seconds: float = 5.0
    idle: dict[GuardedHttpProtocol, None] = field(default_factory=dict)
    open: int = 0
    refused: dict[str, int] = field(default_factory=dict)    # reason -> connections refused or closed

    @classmethod
    def from_limits(cls, limits: Limits) -> ConnectionBounds:
        return cls(max_connections=limits.http_max_connections, max_header_bytes=limits.http_max_header_bytes,
                   header_seconds=float(limits.http_header_seconds), body_seconds=float(limits.http_body_seconds),
                   idle_seconds=float(limits.http_idle_seconds))

    def count(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1


def error_bytes(status: int, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 error response with the Connect error body, closing the connection."""
    body = json.dumps({"code": code, "message": message}).encode()
    return b"".join([STATUS_LINE[status], b"content-type: application/json\r\n",
                     b"content-length: ", str(len(body)).encode(), b"\r\n", b"connection: close\r\n\r\n", body])


def _header_end(buf: bytes) -> int:
    """The index just past the blank line ending a header block in `buf`, or -1."""
    ends = [i + len(m) for m in (b"\r\n\r\n", b"\n\n") if (i := buf.find(m)) >= 0]
    return min(ends) if ends else -1


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol under ConnectionBounds (the uvicorn Config carries them as
    `macondo_bounds`)."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.bounds: ConnectionBounds = config.macondo_bounds
        self._in_headers = True         # between requests: the next one's line and headers are arriving
        self._header_bytes = 0
        self._tail = b""
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._refusing = False
        self._counted = False
        self._requests = 0              # header blocks parsed on this connection

    # ---- the connection
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        bounds = self.bounds
        bounds.open += 1
        self._counted = True
        if bounds.open > bounds.max_connections:
            if bounds.idle:
                oldest = next(iter(bounds.idle))
                bounds.idle.pop(oldest, None)
                bounds.count("idle connection closed for a new one")
                oldest.transport.close()
            else:
                bounds.count("too many connections")
                self._refuse(503, "unavailable", f"the server has {bounds.max_connections} connections with requests "
                             "in flight (limit http_max_connections); retry shortly")
                return
        self._waiting()
        # the first byte must come within the idle time, as between requests
        self._unset_keepalive_if_required()
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted:
            self._counted = False
            self.bounds.open -= 1
        self.bounds.idle.pop(self, None)
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refusing:
            return
        if self._in_headers:
            limit = self.bounds.max_header_bytes
            window = self._tail + data
            end = _header_end(window)
            used = end - len(self._tail) if end >= 0 else len(data)
            if self._header_bytes + used > limit:
                self.bounds.count("headers too large")
                self._refuse(431, "resource_exhausted", f"the request line and headers are larger than the limit "
                             f"http_max_header_bytes ({limit} bytes)")
                return
            before = self._header_bytes
            self._header_bytes += used
            self._tail = window[-3:]
            started = self._requests
            super().data_received(data)
            if self._in_headers and self._requests == started:
                # still in the same header block (a blank line the parser did not take as its end): all of it
                self._header_bytes = before + len(data)
                if self._header_bytes > limit:
                    self.bounds.count("headers too large")
                    self._refuse(431, "resource_exhausted", "the request line and headers are larger than the "
                                 f"limit http_max_header_bytes ({limit} bytes)")
            return
        super().data_received(data)

    # ---- parser callbacks
    def on_headers_complete(self) -> None:
        self._requests += 1
        self._in_headers = False
        self._header_bytes = 0
        self._tail = b""
        self._cancel(self._header_timer)
        self._header_timer = None
        self.bounds.idle.pop(self, None)
        super().on_headers_complete()
        if not self._refusing:
            self._body_timer = self.loop.call_later(self.bounds.body_seconds, self._body_timeout)

    def on_message_complete(self) -> None:
        self._cancel(self._body_timer)
        self._body_timer = None
        self._in_headers = True
        super().on_message_complete()

    def on_response_complete(self) -> None:
        pipelined = bool(self.pipeline)
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._waiting()

    # ---- timers
    def _waiting(self) -> None:
        """Idle, waiting for the next request: it must arrive whole within header_seconds."""
        self.bounds.idle.pop(self, None)
        self.bounds.idle[self] = None
        self._cancel(self._header_timer)
        self._header_timer = self.loop.call_later(self.bounds.header_seconds, self._header_timeout)

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or not self._in_headers:
            return
        if self._header_bytes or self._tail:
            self.bounds.count("headers too slow")
            self._refuse(408, "deadline_exceeded", f"the request line and headers did not arrive within the limit "
                         f"http_header_seconds ({self.bounds.header_seconds:g} s)")
        else:
            self.bounds.count("idle")
            self.transport.close()

    def _body_timeout(self) -> None:
        self._body_timer = None
        if self.transport.is_closing():
            return
        self.bounds.count("body too slow")
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            self._refuse(408, "deadline_exceeded", f"the request body did not arrive within the limit "
                         f"http_body_seconds ({self.bounds.body_seconds:g} s)")
        else:
            self.transport.close()

    def _refuse(self, status: int, code: str, message: str) -> None:
        """Answer with an error and close, reading nothing more."""
        self._refusing = True
        self._cancel_timers()
        self.bounds.idle.pop(self, None)
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.response_started = True       # the application's answer, if any, goes nowhere
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        if not self.transport.is_closing():
            self.transport.write(error_bytes(status, code, message))
            self.transport.close()

    def _cancel_timers(self) -> None:
        self._cancel(self._header_timer)
        self._cancel(self._body_timer)
        self._header_timer = self._body_timer = None
        self._unset_keepalive_if_required()

    @staticmethod
    def _cancel(timer: asyncio.TimerHandle | None) -> None:
        if timer is not None:
            timer.cancel()


class _Loop(asyncio.SelectorEventLoop):
    """The HTTP server's event loop: TLS handshakes bounded in time (asyncio's default is a minute)."""

    handshake_seconds = 10.0

    async def create_server(self, protocol_factory: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("ssl") is not None:
            kwargs.setdefault("ssl_handshake_timeout", self.handshake_seconds)
        return await super().create_server(protocol_factory, *args, **kwargs)


def new_loop(handshake_seconds: float) -> asyncio.AbstractEventLoop:
    loop = _Loop()
    loop.handshake_seconds = handshake_seconds
    return loop
