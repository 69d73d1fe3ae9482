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

Around the Connect application sits a small ASGI layer for what a port reached by browsers needs: an optional
bearer token (required when bound to a non-loopback address), a request size limit (the limit
max_request_bytes, checked on Content-Length and again by the Connect runtime on the bytes read), CORS for the
origins whoever starts the server names (none by default), `GET /healthz`, and, with `--web`, the analysis
board's static files from the package (nothing a request names is read from anywhere else).
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import ipaddress
import json
import logging
import mimetypes
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from concurrent import futures
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor

from macondo_server.engine.settings import PACKAGE_DATA

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
TOKEN_ENV = "MACONDO_HTTP_TOKEN"
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


def build_endpoints(service: ServiceDescriptor, servicer: object, pool: futures.Executor,
                    methods: Iterable[str] | None = None) -> dict[str, ServedEndpoint]:
    """URL path -> Connect endpoint for every unary and server-streaming method of `service` (or the named
    `methods`), each calling the servicer's method of the same name in `pool` with a ConnectServicerContext."""
    from connectrpc.server import Endpoint

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
            endpoints[path] = Endpoint.server_stream(info, _stream_handler(impl, pool))
        else:
            endpoints[path] = Endpoint.unary(info, _unary_handler(impl, pool))
    return endpoints


def _unary_handler(impl: UnaryImpl,
                   pool: futures.Executor) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
    async def handle(request: Any, rctx: RequestContext[Any, Any]) -> Any:
        ctx = _context_for(rctx)
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(pool, impl, request, ctx)
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


def _stream_handler(impl: StreamImpl,
                    pool: futures.Executor) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
    async def handle(request: Any, rctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        ctx = _context_for(rctx)
        loop = asyncio.get_running_loop()
        # the stream's messages, then _STREAM_END or the exception that ended it
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def pump() -> None:
            """The servicer's generator runs in a pool thread (it blocks between snapshots)."""
            try:
                for item in impl(request, ctx):
                    put(item)
                put(_STREAM_END)
            except BaseException as exc:  # noqa: BLE001 (handed to the event loop, raised there)
                put(exc)

        pool.submit(pump)
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
    token: str = ""
    cors_origins: tuple[str, ...] = ()
    web: bool = False
    max_request_bytes: int = 1024 * 1024


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _connect_app(endpoints: Mapping[str, ServedEndpoint],
                 max_request_bytes: int) -> ConnectASGIApplication[object]:
    from connectrpc.compat import google_protobuf_codecs
    from connectrpc.server import ConnectASGIApplication

    class _App(ConnectASGIApplication[object]):
        @property
        def path(self) -> str:
            return "/"

    return _App(service=object(), endpoints=lambda _svc: endpoints, read_max_bytes=max_request_bytes,
                codecs=google_protobuf_codecs())


@dataclass
class Gateway:
    """The ASGI application of the HTTP port: security layer + Connect endpoints + health + web board."""

    endpoints: dict[str, ServedEndpoint]
    options: HttpOptions
    healthy: Callable[[], bool] = lambda: True
    _connect: Any = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._connect = _connect_app(self.endpoints, self.options.max_request_bytes)
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
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        origin = headers.get("origin")
        allowed = origin is not None and self._origin_allowed(origin)
        method, path = scope["method"], scope["path"]

        if method == "OPTIONS":
            await self._preflight(send, origin if allowed else None, headers)
            return
        send = self._with_cors(send, origin if allowed else None)
        if method == "GET" and path == HEALTH_PATH:
            if not self._authorised(headers):
                await _error(send, 401, "unauthenticated", "a bearer token is required (Authorization: Bearer ...)")
                return
            ok = self.healthy()
            await _plain(send, 200 if ok else 503, "application/json",
                         json.dumps({"status": "SERVING" if ok else "NOT_SERVING"}).encode())
            return
        if path in self.endpoints:
            if not self._authorised(headers):
                await _error(send, 401, "unauthenticated", "a bearer token is required (Authorization: Bearer ...)")
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

    def _authorised(self, headers: Mapping[str, str]) -> bool:
        if not self.options.token:
            return True
        auth = headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.options.token.encode())

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


async def _plain(send: AsgiSend, status: int, ctype: str, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _error(send: AsgiSend, status: int, code: str, message: str) -> None:
    """An error before the Connect runtime: HTTP status (which Connect clients map to a code) and the Connect
    error body {"code", "message"} (which unary clients read)."""
    await _plain(send, status, "application/json", json.dumps({"code": code, "message": message}).encode())


# ---------------------------------------------------------------------------------------------- the server

class HttpServer:
    """uvicorn serving a Gateway on its own thread and event loop, beside the gRPC server."""

    def __init__(self, app: Gateway, options: HttpOptions, pool: futures.ThreadPoolExecutor,
                 grace: float = 3.0) -> None:
        import uvicorn

        self.options = options
        self.pool = pool
        self._sock = _bind(options.host, options.port)
        self.port = self._sock.getsockname()[1]
        # httptools parses HTTP/1.1 when installed (a dependency); connections beyond limit_concurrency get 503
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=int(max(1, grace)), server_header=False,
                                ws="none", loop="asyncio", http="auto",
                                limit_concurrency=max(64, 2 * pool._max_workers))
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="http-server", daemon=True)

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
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
        sock.listen(128)
    except OSError as exc:
        sock.close()
        what = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise HttpStartError(f"cannot listen on {host}:{port} for HTTP ({what})") from None
    sock.set_inheritable(True)
    return sock


def create_http_server(servicer: object, health_servicer: object, options: HttpOptions, workers: int,
                       healthy: Callable[[], bool] = lambda: True) -> HttpServer:
    """The HTTP port for `servicer` (every RPC of macondo.v1.Engine) and the health service's Check."""
    from grpc_health.v1 import health_pb2

    from macondo_server.pb.macondo.v1 import engine_pb2

    if not is_loopback(options.host) and not options.token:
        raise HttpStartError(f"the HTTP port binds to {options.host}, which is not a loopback address: give a "
                             f"token (--http-token or {TOKEN_ENV}) that clients must send as a bearer token")
    pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="http-rpc")
    endpoints = build_endpoints(engine_pb2.DESCRIPTOR.services_by_name["Engine"], servicer, pool)
    endpoints.update(build_endpoints(health_pb2.DESCRIPTOR.services_by_name["Health"], health_servicer, pool,
                                     methods=("Check",)))
    app = Gateway(endpoints, options, healthy)
    server = HttpServer(app, options, pool)
    server.start()
    return server
