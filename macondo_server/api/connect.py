"""The browser-reachable port: the Connect protocol (and gRPC-Web, and gRPC over HTTP/2 where the ASGI server
offers it) over HTTP, from the same service definition and the same servicer as the gRPC port.

The Connect runtime is the Connect project's own Python implementation (`connectrpc`, ASGI), served by
uvicorn. Every RPC of every service given here is routed from its descriptor to the servicer's method of the
same name, so RPCs added to the proto later are served without a change here. The servicer is written for
gRPC: each call gets a `ConnectServicerContext`, which implements what the servicer uses of
`grpc.ServicerContext` (abort and abort_with_status, set_code/set_details, is_active, add_callback,
time_remaining, peer, invocation_metadata) on top of the Connect request, so validation, limits, the job
registry, stop and deadlines are those of the gRPC port. gRPC status codes map to the Connect codes of the
same name; the google.rpc.ErrorInfo detail the servicer attaches travels as a Connect error detail.

Around the Connect application sits a small ASGI layer for what a port reached by browsers needs, in the
order a request meets it: the Host header checked against the names the server answers to (loopback names
by default: a page on another site cannot reach the port by rebinding its own name to 127.0.0.1); an address
with too many failed authentications refused; CORS preflights; the bearer token, when the server has tokens
(required off loopback), checked before any body is read; `GET /healthz` and the health service's Check,
answered on the event loop and never held back by the request caps (with --web, the board's static files
are served without a token: a browser's navigation sends none); gRPC's own content type refused
(it needs HTTP/2: the gRPC port); a request size limit (max_request_bytes, checked on Content-Length and
again by the Connect runtime on the bytes read); and, with `--web`, the analysis board's static files from
the package (nothing a request names is read from anywhere else). Request bodies are decoded strictly: a
JSON body must be an object, and an enum value the API does not define is refused on either encoding.

An RPC runs on a pool thread; beyond the pool's threads, requests wait up to `queue_seconds` (at most
`max_queued_requests` of them) rather than fail at once. The connections themselves (timeouts, header size,
their number) are bounded in api/httpd.py. Each request runs as its principal (a token's name, or the client's
address), whose quotas the servicer counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno
import json
import logging
import mimetypes
import socket
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from concurrent import futures
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from macondo_server.api.auth import (
    LEGACY_TOKEN_ENV,
    LEGACY_TOKEN_NAME,
    AuthConfigError,
    Security,
    anonymous_principal,
    bearer,
    is_loopback,
    is_wildcard,
)
from macondo_server.api.guard import unknown_enum
from macondo_server.api.httpd import ConnectionBounds, GuardedHttpProtocol, new_loop
from macondo_server.engine.settings import PACKAGE_DATA
from macondo_server.runtime.limits import Limits, current_principal

if TYPE_CHECKING:
    from connectrpc._server_shared import EndpointServerStream, EndpointUnary
    from connectrpc.method import MethodInfo
    from connectrpc.request import RequestContext
    from connectrpc.server import ConnectASGIApplication

    # the endpoints served here (connectrpc.server.Endpoint's kinds that a ConnectASGIApplication takes)
    ServedEndpoint = EndpointUnary[Any, Any] | EndpointServerStream[Any, Any]

log = logging.getLogger("macondo.http")

WEB_DIR = PACKAGE_DATA / "web"
HEALTH_PATH = "/healthz"
HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check"
TOKEN_ENV = LEGACY_TOKEN_ENV
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
CORS_MAX_AGE = 600
# headers a Connect / gRPC-Web client sends and reads (what CORS has to allow and expose)
CORS_ALLOW_HEADERS = ("content-type", "connect-protocol-version", "connect-timeout-ms", "connect-accept-encoding",
                      "connect-content-encoding", "grpc-timeout", "x-grpc-web", "x-user-agent", "authorization")
CORS_EXPOSE_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin", "grpc-encoding",
                       "connect-content-encoding", "content-encoding")
_STREAM_END = object()

# ASGI (https://asgi.readthedocs.io): the connection scope and the events are dicts of JSON-like values
AsgiMessage = dict[str, Any]
AsgiReceive = Callable[[], Awaitable[AsgiMessage]]
AsgiSend = Callable[[AsgiMessage], Awaitable[None]]
# a servicer method (request message, context) -> response message, or an iterator of them (streams)
UnaryImpl = Callable[[Any, "ConnectServicerContext"], Any]
StreamImpl = Callable[[Any, "ConnectServicerContext"], Iterable[Any]]


class HttpStartError(OSError):
    """The HTTP port cannot start (address in use, a non-loopback address without a token, no web build)."""


class AsyncAdmission:
    """RPCs on the pool's threads (the event loop's side): up to `capacity` at once, then up to `max_waiting`
    waiting at most `wait` seconds each for a slot, in order; beyond that, refused at once."""

    def __init__(self, capacity: int, max_waiting: int, wait: float) -> None:
        self.capacity = capacity
        self.max_waiting = max_waiting
        self.wait = wait
        self.active = 0
        self._waiters: deque[asyncio.Future[bool]] = deque()

    async def acquire(self) -> None:
        """Take a slot, or raise the Connect error saying why not (RESOURCE_EXHAUSTED)."""
        if self.active < self.capacity and not self._waiters:
            self.active += 1
            return
        if len(self._waiters) >= self.max_waiting:
            raise _busy_error(f"{self.capacity} requests are running and {len(self._waiters)} waiting (limit "
                              "max_queued_requests)")
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, self.wait)     # release() hands over its slot with set_result
            return
        except TimeoutError:
            raise _busy_error(f"no thread came free within {self.wait:g} s (limit queue_seconds)") from None
        except BaseException:
            if fut.done() and not fut.cancelled():
                self.release()                         # handed over just as the request went away
            raise
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(fut)

    def release(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(True)
                return
        self.active -= 1


def _release_soon(loop: asyncio.AbstractEventLoop, admission: AsyncAdmission) -> None:
    """Give back a slot from a pool thread (the admission belongs to the event loop)."""
    with contextlib.suppress(RuntimeError):          # the loop closed at shutdown
        loop.call_soon_threadsafe(admission.release)


def _busy_error(why: str) -> Exception:
    from connectrpc.code import Code
    from connectrpc.errors import ConnectError

    return ConnectError(Code.RESOURCE_EXHAUSTED, f"the server is busy: {why}; retry shortly")


# ---------------------------------------------------------------------------------------------- the context

class _Metadatum(NamedTuple):
    key: str
    value: str


class ConnectAbort(grpc.RpcError):  # type: ignore[misc]  # (grpc ships no type information: RpcError is Any)
    """Raised by ConnectServicerContext.abort: the servicer's error, turned into a Connect error by the
    endpoint (a grpc.RpcError so the servicer's guard lets it through as it does gRPC's own abort)."""

    def __init__(self, code: grpc.StatusCode, details: str,
                 trailing: tuple[tuple[str, str | bytes], ...] = ()) -> None:
        super().__init__(details)
        self.status_code = code
        self.details_text = details
        self.trailing = trailing


class ConnectServicerContext:
    """What EngineServicer uses of grpc.ServicerContext, for one Connect request."""

    def __init__(self, client_address: str | None, headers: Iterable[tuple[str, str]],
                 timeout_ms: float | None) -> None:
        self._peer = f"http:{client_address}" if client_address else "http:unknown"
        self._metadata = tuple(_Metadatum(k.lower(), v) for k, v in headers)
        self._deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        self._callbacks: list[Callable[[], Any]] = []
        self._lock = threading.Lock()
        self._done = False
        self.code: grpc.StatusCode | None = None
        self.details = ""

    # ---- grpc.ServicerContext
    def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        raise ConnectAbort(code, details)

    def abort_with_status(self, status: Any) -> None:
        raise ConnectAbort(status.code, status.details, tuple(status.trailing_metadata or ()))

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, details: str) -> None:
        self.details = details

    def is_active(self) -> bool:
        return not self._done and (self._deadline is None or time.monotonic() < self._deadline)

    def add_callback(self, callback: Callable[[], Any]) -> bool:
        with self._lock:
            if self._done:
                return False
            self._callbacks.append(callback)
        return True

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[_Metadatum, ...]:
        return self._metadata

    # ---- the request's end (as gRPC runs its callbacks when an RPC terminates)
    def finish(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # noqa: BLE001 (a callback's failure must not hide the RPC's result)
                log.exception("RPC end callback failed")


def _connect_error(exc: ConnectAbort) -> Exception:
    from connectrpc.code import Code
    from connectrpc.errors import ConnectError, ErrorDetail
    from google.rpc import status_pb2
    from protobuf.wkt import Any as PbAny

    name = exc.status_code.name if isinstance(exc.status_code, grpc.StatusCode) else "UNKNOWN"
    code = Code.CANCELED if name == "CANCELLED" else Code.__members__.get(name, Code.UNKNOWN)
    details = []
    for key, value in exc.trailing:
        if key == "grpc-status-details-bin" and isinstance(value, bytes | bytearray):
            try:
                status = status_pb2.Status.FromString(bytes(value))
            except Exception:  # noqa: BLE001 (the message alone still says what went wrong)
                continue
            details = [ErrorDetail(PbAny(type_url=d.type_url, value=d.value)) for d in status.details]
    return ConnectError(code, exc.details_text, details)


def _status_error(ctx: ConnectServicerContext) -> Exception | None:
    """A status set with set_code (not aborted) that is not OK, as a Connect error."""
    if ctx.code is None or ctx.code == grpc.StatusCode.OK:
        return None
    return _connect_error(ConnectAbort(ctx.code, ctx.details or ctx.code.name.lower()))


def _unexpected(ctx: ConnectServicerContext, exc: Exception) -> Exception:
    """An exception the servicer's guard did not turn into a status: the status it set (a method generated
    but not implemented sets UNIMPLEMENTED), or INTERNAL, logged (never a traceback to the client)."""
    error = _status_error(ctx)
    if error is not None:
        return error
    from connectrpc.code import Code
    from connectrpc.errors import ConnectError

    log.error("internal error in an RPC over HTTP", exc_info=exc)
    return ConnectError(Code.INTERNAL, f"internal error ({type(exc).__name__}); it is logged on the server")


# ---------------------------------------------------------------------------------------------- endpoints

def _context_for(rctx: RequestContext[Any, Any]) -> ConnectServicerContext:
    hdrs = rctx.request_headers
    headers = list(hdrs.allitems() if hasattr(hdrs, "allitems") else hdrs.items())
    return ConnectServicerContext(rctx.client_address, headers, rctx.timeout_ms)


def method_info(service: ServiceDescriptor, name: str) -> MethodInfo[Any, Any]:
    """connectrpc's MethodInfo of one method, from its descriptor (google.protobuf message classes)."""
    from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType

    md = service.methods_by_name[name]
    stream = {(False, False): StreamType.UNARY, (False, True): StreamType.SERVER_STREAM,
              (True, False): StreamType.CLIENT_STREAM, (True, True): StreamType.BIDI_STREAM}
    return MethodInfo(name=md.name, service_name=service.full_name,
                      input=message_factory.GetMessageClass(md.input_type),
                      output=message_factory.GetMessageClass(md.output_type),
                      idempotency_level=IdempotencyLevel.UNKNOWN,
                      stream_type=stream[(md.client_streaming, md.server_streaming)])


def build_endpoints(service: ServiceDescriptor, servicer: object, pool: futures.Executor | None,
                    methods: Iterable[str] | None = None,
                    admission: AsyncAdmission | None = None) -> dict[str, ServedEndpoint]:
    """URL path -> Connect endpoint for every unary and server-streaming method of `service` (or the named
    `methods`), each calling the servicer's method of the same name in `pool` with a ConnectServicerContext,
    once `admission` lets it (None: on the event loop itself, for what never blocks: the health check)."""
    from connectrpc.server import Endpoint

    admission = admission or AsyncAdmission(1 << 30, 0, 0.0)
    endpoints: dict[str, ServedEndpoint] = {}
    for md in service.methods:
        if methods is not None and md.name not in methods:
            continue
        if md.client_streaming:
            continue   # no client-streaming RPC in this API (a browser cannot send one anyway)
        impl = getattr(servicer, md.name, None)
        if impl is None:
            continue
        info = method_info(service, md.name)
        path = f"/{service.full_name}/{md.name}"
        if md.server_streaming:
            endpoints[path] = Endpoint.server_stream(info, _stream_handler(impl, pool, admission))
        else:
            endpoints[path] = Endpoint.unary(info, _unary_handler(impl, pool, admission))
    return endpoints


def _unary_handler(impl: UnaryImpl, pool: futures.Executor | None,
                   admission: AsyncAdmission) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
    async def handle(request: Any, rctx: RequestContext[Any, Any]) -> Any:
        ctx = _context_for(rctx)
        loop = asyncio.get_running_loop()
        if pool is not None:
            await admission.acquire()
        try:
            if pool is None:
                response = impl(request, ctx)
            else:
                # the principal set by the Gateway travels to the pool thread; the slot is held until the
                # thread is done, even when the client has gone
                try:
                    work = pool.submit(contextvars.copy_context().run, impl, request, ctx)
                except BaseException:
                    admission.release()                  # not submitted (the pool is shutting down)
                    raise
                work.add_done_callback(lambda _: _release_soon(loop, admission))
                response = await asyncio.wrap_future(work)
        except ConnectAbort as exc:
            raise _connect_error(exc) from None
        except Exception as exc:
            raise _unexpected(ctx, exc) from None
        finally:
            ctx.finish()
        error = _status_error(ctx)
        if error is not None:
            raise error
        return response

    return handle


def _stream_handler(impl: StreamImpl, pool: futures.Executor | None,
                    admission: AsyncAdmission) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
    async def handle(request: Any, rctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        assert pool is not None, "a streaming RPC runs on a pool"
        ctx = _context_for(rctx)
        loop = asyncio.get_running_loop()
        # the stream's messages, then _STREAM_END or the exception that ended it
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):      # the loop closed at shutdown
                loop.call_soon_threadsafe(queue.put_nowait, item)

        def pump() -> None:
            """The servicer's generator runs in a pool thread (it blocks between snapshots)."""
            try:
                for item in impl(request, ctx):
                    put(item)
                put(_STREAM_END)
            except BaseException as exc:  # noqa: BLE001 (handed to the event loop, raised there)
                put(exc)
            finally:
                _release_soon(loop, admission)

        await admission.acquire()
        try:
            pool.submit(contextvars.copy_context().run, pump)
        except BaseException:
            admission.release()
            raise
        try:
            while True:
                item = await queue.get()
                if item is _STREAM_END:
                    break
                if isinstance(item, ConnectAbort):
                    raise _connect_error(item) from None
                if isinstance(item, Exception):
                    raise _unexpected(ctx, item) from None
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            # a disconnect, a cancel or the deadline: the job's stop callbacks run as in gRPC
            ctx.finish()
        error = _status_error(ctx)
        if error is not None:
            raise error

    return handle


# ---------------------------------------------------------------------------------------------- the ASGI app

@dataclass
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8080
    token: str = ""                          # a single token named "http" (the server's tokens: auth.Security)
    cors_origins: tuple[str, ...] = ()
    web: bool = False
    max_request_bytes: int = 1024 * 1024
    allowed_hosts: tuple[str, ...] = ()      # names the Host header may carry besides the defaults; "*": any


def allowed_host_names(options: HttpOptions) -> frozenset[str] | None:
    """The names (lower case, no port) a request's Host may carry: the loopback names, the address bound
    unless it is a wildcard, and `allowed_hosts`; None when any is allowed ("*")."""
    if "*" in options.allowed_hosts:
        return None
    names = set(LOOPBACK_NAMES)
    host = options.host.strip("[]").lower()
    if not is_wildcard(host):
        names.add(host)
    names.update(h.strip().strip("[]").lower().rstrip(".") for h in options.allowed_hosts if h.strip())
    return frozenset(names)


def host_name(value: str) -> str:
    """The name of a Host header value, without its port: "Example.org:8080" -> "example.org",
    "[::1]:8080" -> "::1"."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        return name.rstrip(".")
    return value.rstrip(".")


# ---- request bodies, strictly

class _Codec:
    """Decoding that refuses what the API does not define (Connect's codec protocol: name, encode, decode)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name

    def encode(self, message: Message) -> bytes:
        if self._name == "json":
            text: str = json_format.MessageToJson(message)
            return text.encode()
        data: bytes = message.SerializeToString()
        return data

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message:
        from connectrpc.code import Code
        from connectrpc.errors import ConnectError

        message = message_class()
        if self._name == "json":
            try:
                obj = json.loads(bytes(data) or b"{}")
            except (ValueError, UnicodeError) as exc:
                raise ConnectError(Code.INVALID_ARGUMENT, f"the request body is not JSON ({exc})"[:300]) from None
            if not isinstance(obj, dict):
                kind = ("null" if obj is None else "a boolean" if isinstance(obj, bool) else "a string"
                        if isinstance(obj, str) else "an array" if isinstance(obj, list) else "a number")
                raise ConnectError(Code.INVALID_ARGUMENT, f"the request body must be a JSON object, got {kind}")
            bad = _json_shape_error(obj, message.DESCRIPTOR)
            if bad is None:
                try:
                    json_format.ParseDict(obj, message, ignore_unknown_fields=True)
                except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
                    text = str(exc).removeprefix("Failed to parse ")
                    raise ConnectError(Code.INVALID_ARGUMENT, f"the request does not fit {message.DESCRIPTOR.name}: "
                                       f"{text}"[:300]) from None
        else:
            try:
                message.ParseFromString(bytes(data))
            except (DecodeError, ValueError, RecursionError) as exc:
                raise ConnectError(Code.INVALID_ARGUMENT, f"the request is not a {message.DESCRIPTOR.name} "
                                   f"message ({exc})"[:300]) from None
            bad = None
        bad = bad or unknown_enum(message)
        if bad:
            raise ConnectError(Code.INVALID_ARGUMENT, bad)
        return message


def _json_kind(value: Any) -> str:
    return ("null" if value is None else "true or false" if isinstance(value, bool) else "a string"
            if isinstance(value, str) else "an array" if isinstance(value, list) else "an object"
            if isinstance(value, dict) else "a number")


def _json_shape_error(obj: Mapping[str, Any], desc: Descriptor, path: str = "", depth: int = 0) -> str | None:
    """The first value of a JSON request whose JSON type does not fit its field (an object for a message, an
    array for a repeated field, a defined name or number for an enum, ...), as a message; None when all fit.
    Unknown fields are left to the parser (ignored); null stands for the default."""
    if depth > 32:
        return f"{path.rstrip('.') or 'the request'} is nested too deeply"
    for key, value in obj.items():
        fd = desc.fields_by_camelcase_name.get(key) or desc.fields_by_name.get(key)
        if fd is None or value is None:
            continue
        name = f"{path}{fd.name}"
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            if not isinstance(value, dict):
                return f"{name}: expected an object, got {_json_kind(value)}"
            value_fd = fd.message_type.fields_by_name["value"]
            items: list[tuple[str, Any]] = [(f"{name}[{str(k)[:40]!r}]", v) for k, v in value.items()]
            checked = value_fd
        elif fd.is_repeated:
            if not isinstance(value, list):
                return f"{name}: expected an array, got {_json_kind(value)}"
            items, checked = [(name, v) for v in value], fd
        else:
            items, checked = [(name, value)], fd
        for where, v in items:
            found = _json_value_error(checked, v, where, depth)
            if found:
                return found
    return None


def _json_value_error(fd: FieldDescriptor, value: Any, name: str, depth: int) -> str | None:
    kind = _json_kind(value)
    if fd.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        if not isinstance(value, dict):
            return f"{name}: expected an object, got {kind}"
        return _json_shape_error(value, fd.message_type, f"{name}.", depth + 1)
    if fd.type == FieldDescriptor.TYPE_ENUM:
        enum = fd.enum_type
        if isinstance(value, str):
            known = value in enum.values_by_name
        elif isinstance(value, int) and not isinstance(value, bool):
            known = value in enum.values_by_number
        else:
            return f"{name}: expected a name of {enum.name}, got {kind}"
        if not known:
            shown = repr(value[:40]) if isinstance(value, str) else str(value)
            return f"{name}: {shown} is not a value of {enum.name} ({', '.join(e.name for e in enum.values)})"
        return None
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return None if isinstance(value, bool) else f"{name}: expected true or false, got {kind}"
    if fd.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return None if isinstance(value, str) else f"{name}: expected a string, got {kind}"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return f"{name}: expected a number, got {kind}"
    if fd.type not in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE) and isinstance(value, float) \
            and not value.is_integer():
        return f"{name}: expected a whole number, got {value!r}"
    return None          # numbers in strings: the parser checks them


_CODECS = (_Codec("proto"), _Codec("json"))


def _connect_app(endpoints: Mapping[str, ServedEndpoint],
                 max_request_bytes: int) -> ConnectASGIApplication[object]:
    from connectrpc.server import ConnectASGIApplication

    class _App(ConnectASGIApplication[object]):
        @property
        def path(self) -> str:
            return "/"

    return _App(service=object(), endpoints=lambda _svc: endpoints, read_max_bytes=max_request_bytes,
                codecs=list(_CODECS))


@dataclass
class Gateway:
    """The ASGI application of the HTTP port: security layer + Connect endpoints + health + web board."""

    endpoints: dict[str, ServedEndpoint]
    options: HttpOptions
    healthy: Callable[[], bool] = lambda: True
    security: Security = field(default_factory=Security)
    _connect: Any = field(init=False, default=None)
    _hosts: frozenset[str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._connect = _connect_app(self.endpoints, self.options.max_request_bytes)
        self._hosts = allowed_host_names(self.options)
        if self.options.web and not (WEB_DIR / "index.html").is_file():
            raise HttpStartError(f"--web: the board is not built ({WEB_DIR / 'index.html'} is missing; "
                                 "`python3 dev.py install` or `python3 web/build.py` builds it)")

    async def __call__(self, scope: AsgiMessage, receive: AsgiReceive, send: AsgiSend) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        headers: dict[str, str] = {}
        for k, v in scope.get("headers", []):
            key = k.decode("latin-1").lower()
            if key not in headers:                   # the first of repeated headers counts
                headers[key] = v.decode("latin-1")
        method, path = scope["method"], scope["path"]
        client = scope.get("client")
        address = str(client[0]) if client else ""

        host = headers.get("host")
        if self._hosts is not None and (host is None or host_name(host) not in self._hosts):
            await _error(send, 403, "permission_denied",
                         f"this server does not answer to the host {host_name(host or '')[:100]!r} (names it "
                         "answers to: the loopback names, its address and serve --allow-host)")
            return
        security = self.security
        wait = security.limiter.blocked(address) if security.tokens else 0.0
        if wait > 0:
            await _error(send, 429, "resource_exhausted", f"too many failed authentications from this address; "
                         f"retry in {wait:.0f} s (limit auth_failures_per_minute)",
                         [(b"retry-after", str(int(wait) + 1).encode())])
            return
        origin = headers.get("origin")
        allowed = origin is not None and self._origin_allowed(origin)
        if method == "OPTIONS":
            await self._preflight(send, origin if allowed else None, headers)
            return
        send = self._with_cors(send, origin if allowed else None)
        token_name = None
        # every RPC and health request carries the token; the board's own files (public package files a
        # browser fetches by navigation, which sends no Authorization header) and a 404 do not need it
        if security.tokens and (path in self.endpoints or path == HEALTH_PATH or not self.options.web
                                or method not in ("GET", "HEAD")):
            given = headers.get("authorization")
            token = bearer(given) if given is not None else None
            token_name = security.tokens.authenticate(token)
            if token_name is None:
                security.limiter.failed(address)
                log.info("refused peer=%s reason=UNAUTHENTICATED", address)
                why = ("a bearer token is required (Authorization: Bearer ...)" if given is None else
                       "the bearer token is not one this server accepts" if token is not None else
                       "the Authorization header is not 'Bearer TOKEN'")
                await _error(send, 401, "unauthenticated", why, [(b"www-authenticate", b"Bearer")])
                return
        current_principal.set(token_name or anonymous_principal(address))
        if method == "GET" and path == HEALTH_PATH:
            ok = self.healthy()
            await _plain(send, 200 if ok else 503, "application/json",
                         json.dumps({"status": "SERVING" if ok else "NOT_SERVING"}).encode())
            return
        if path in self.endpoints:
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype.startswith("application/grpc") and not ctype.startswith("application/grpc-web") \
                    and scope.get("http_version") != "2":
                await _error(send, 415, "unimplemented", "gRPC needs HTTP/2: call the gRPC port, or use Connect "
                             "(application/json, application/proto) or gRPC-Web here")
                return
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > self.options.max_request_bytes:
                await _error(send, 413, "resource_exhausted",
                             f"the request is larger than the limit max_request_bytes ({int(length)} > "
                             f"{self.options.max_request_bytes} bytes)")
                return
            await self._connect(scope, receive, send)
            return
        if self.options.web and method in ("GET", "HEAD"):
            await self._static(send, path, head=method == "HEAD")
            return
        await _error(send, 404, "unimplemented", f"no such procedure or page: {path[:100]}")

    # ---- pieces
    def _origin_allowed(self, origin: str) -> bool:
        return "*" in self.options.cors_origins or origin in self.options.cors_origins

    async def _preflight(self, send: AsgiSend, origin: str | None, headers: Mapping[str, str]) -> None:
        out = [(b"content-length", b"0")]
        if origin is not None:
            out += [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin"),
                    (b"access-control-allow-methods", b"POST, GET"),
                    (b"access-control-allow-headers", ", ".join(CORS_ALLOW_HEADERS).encode()),
                    (b"access-control-max-age", str(CORS_MAX_AGE).encode())]
        await send({"type": "http.response.start", "status": 204 if origin is not None else 403, "headers": out})
        await send({"type": "http.response.body", "body": b""})

    @staticmethod
    def _with_cors(send: AsgiSend, origin: str | None) -> AsgiSend:
        if origin is None:
            return send

        async def cors_send(message: AsgiMessage) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []),
                                      (b"access-control-allow-origin", origin.encode("latin-1")),
                                      (b"vary", b"Origin"),
                                      (b"access-control-expose-headers", ", ".join(CORS_EXPOSE_HEADERS).encode())]
            await send(message)

        return cors_send

    async def _static(self, send: AsgiSend, path: str, head: bool) -> None:
        rel = path.lstrip("/") or "index.html"
        root = WEB_DIR.resolve()
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            await _error(send, 404, "not_found", "no such page")
            return
        body = target.read_bytes()
        ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype in ("application/javascript", "image/svg+xml"):
            ctype += "; charset=utf-8"
        headers = [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode()),
                   (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                   (b"content-security-policy",
                    b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                    b"object-src 'none'; frame-ancestors 'none'; base-uri 'none'"),
                   (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else body})


async def _plain(send: AsgiSend, status: int, ctype: str, body: bytes,
                 extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": body})


async def _error(send: AsgiSend, status: int, code: str, message: str,
                 extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """An error before the Connect runtime: HTTP status (which Connect clients map to a code), the Connect
    error body {"code", "message"} (which unary Connect clients read) and the message in `grpc-message`
    (percent-encoded, which gRPC-Web clients read: they see no body)."""
    encoded = urllib.parse.quote(message, safe=_GRPC_MESSAGE_SAFE).encode("ascii")
    await _plain(send, status, "application/json", json.dumps({"code": code, "message": message}).encode(),
                 [*extra, (b"grpc-message", encoded)])


_GRPC_MESSAGE_SAFE = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "%")


# ---------------------------------------------------------------------------------------------- the server

class HttpServer:
    """uvicorn serving a Gateway on its own thread and event loop, beside the gRPC server: HTTP/1.1 parsed by
    httptools under the connection bounds of api/httpd.py, over TLS when the server has a certificate.
    Forwarded-for headers are not trusted (a request's address is the connection's)."""

    def __init__(self, app: Gateway, options: HttpOptions, pool: futures.ThreadPoolExecutor,
                 grace: float = 3.0, limits: Limits | None = None) -> None:
        import uvicorn

        limits = limits or Limits.load(environ={})
        self.options = options
        self.pool = pool
        self.tls = app.security.tls
        ssl_context = self.tls.server_context() if self.tls is not None else None
        self.bounds = ConnectionBounds.from_limits(limits)
        self._handshake_seconds = float(limits.http_header_seconds)
        self._sock = _bind(options.host, options.port)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=int(max(1, grace)), server_header=False,
                                ws="none", http=GuardedHttpProtocol, proxy_headers=False,
                                limit_concurrency=None, timeout_keep_alive=limits.http_idle_seconds,
                                backlog=min(4096, max(128, limits.http_max_connections)))
        config.load()
        config.macondo_bounds = self.bounds  # type: ignore[attr-defined]  # read by GuardedHttpProtocol
        config.ssl = ssl_context
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="http-server", daemon=True)

    def _run(self) -> None:
        try:
            with asyncio.Runner(loop_factory=lambda: new_loop(self._handshake_seconds)) as runner:
                runner.run(self._server.serve(sockets=[self._sock]))
        except Exception:  # noqa: BLE001 (logged; the gRPC port goes on)
            log.exception("the HTTP server failed")

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self._server.started:
            raise HttpStartError(f"the HTTP port {self.options.host}:{self.port} did not start")

    def stop(self, timeout: float = 4.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(1.0)
        self.pool.shutdown(wait=False, cancel_futures=True)
        try:
            self._sock.close()
        except OSError:
            pass


def _bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise HttpStartError(f"cannot listen on {host}:{port} for HTTP: {exc}") from None
    family, type_, proto, _, addr = infos[0]
    sock = socket.socket(family, type_, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        what = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise HttpStartError(f"cannot listen on {host}:{port} for HTTP ({what})") from None
    sock.set_inheritable(True)
    return sock


def create_http_server(servicer: object, health_servicer: object, options: HttpOptions, workers: int,
                       healthy: Callable[[], bool] = lambda: True, security: Security | None = None,
                       limits: Limits | None = None) -> HttpServer:
    """The HTTP port for `servicer` (every RPC of macondo.v1.Engine) and the health service's Check. `workers`
    RPC threads; `security` the server's tokens and TLS (options.token adds a token named "http")."""
    from grpc_health.v1 import health_pb2

    from macondo_server.pb.macondo.v1 import engine_pb2

    limits = limits or Limits.load(environ={})
    security = security or Security()
    if options.token and LEGACY_TOKEN_NAME not in security.tokens.by_name:
        try:
            security.tokens.add(LEGACY_TOKEN_NAME, options.token, "--http-token")
        except AuthConfigError as exc:
            raise HttpStartError(str(exc)) from None
    if not is_loopback(options.host) and not security.tokens and not security.allow_open:
        raise HttpStartError(f"the HTTP port binds to {options.host}, which is not a loopback address: give "
                             f"tokens (--token-file, MACONDO_TOKENS, --http-token or {TOKEN_ENV}) that clients must "
                             "send as bearer tokens, or --allow-open to serve everyone who reaches it")
    pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="http-rpc")
    admission = AsyncAdmission(workers, limits.max_queued_requests, float(limits.queue_seconds))
    endpoints = build_endpoints(engine_pb2.DESCRIPTOR.services_by_name["Engine"], servicer, pool,
                                admission=admission)
    # the health check answers on the event loop: no request cap or busy pool holds it back
    endpoints.update(build_endpoints(health_pb2.DESCRIPTOR.services_by_name["Health"], health_servicer, None,
                                     methods=("Check",)))
    app = Gateway(endpoints, options, healthy, security)
    try:
        server = HttpServer(app, options, pool, limits=limits)
    except AuthConfigError as exc:
        pool.shutdown(wait=False)
        raise HttpStartError(str(exc)) from None
    server.start()
    return server
