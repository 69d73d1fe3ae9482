"""What stands before the servicer on the gRPC port: one interceptor that, for every call,

- checks the bearer token (`authorization` metadata) before any work, refusing a wrong, missing or
  misplaced one with UNAUTHENTICATED, and an address with too many recent failures with RESOURCE_EXHAUSTED;
- names the call's principal (the token's name, or the peer's address) for the quotas (limits.current_principal);
- refuses a request naming an enum value the API does not define (INVALID_ARGUMENT);
- admits calls up to the RPC threads plus `max_queued_requests` waiting ones, each waiting at most
  `queue_seconds` (RESOURCE_EXHAUSTED beyond), so that an ordinary burst waits briefly instead of failing;
- runs health checks, and the refusals themselves, on a small pool of their own that no request cap touches,
  so a loaded server still answers its health checks at once.

`unknown_enum` is shared with the HTTP port.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from macondo_server.api.auth import Security, anonymous_principal, bearer, peer_address
from macondo_server.runtime.limits import Limits, current_principal

log = logging.getLogger("macondo.server")

HEALTH_PREFIX = "/grpc.health.v1.Health/"
LANE_THREADS = 4               # the health lane: health checks and refusals


# ---------------------------------------------------------------------------------------------- validation

_HAS_ENUMS: dict[str, bool] = {}


def _has_enums(desc: Any, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a message type holds an enum field, itself or in a message it contains (cached per request
    type)."""
    found = _HAS_ENUMS.get(desc.full_name) if not seen else None
    if found is None:
        inside = seen | {desc.full_name}
        found = any(fd.type == fd.TYPE_ENUM or (fd.type == fd.TYPE_MESSAGE and fd.message_type.full_name not in inside
                                                and _has_enums(fd.message_type, inside))
                    for fd in desc.fields)
        if not seen:
            _HAS_ENUMS[desc.full_name] = found
    return found


def unknown_enum(msg: Message, path: str = "") -> str | None:
    """A description of the first enum field of `msg` (nested messages included) whose value its enum does
    not define, or None. Proto3 keeps such values, so without this check they would silently act as the
    default."""
    if not _has_enums(msg.DESCRIPTOR):
        return None
    for fd, value in msg.ListFields():
        name = f"{path}{fd.name}"
        if fd.type == fd.TYPE_ENUM:
            for number in (value if fd.is_repeated else [value]):
                if number not in fd.enum_type.values_by_number:
                    known = ", ".join(v.name for v in fd.enum_type.values)
                    return f"{name}: {number} is not a value of {fd.enum_type.name} ({known})"
        elif fd.type == fd.TYPE_MESSAGE:
            if fd.message_type.GetOptions().map_entry:
                items = list(value.values()) if fd.message_type.fields_by_name["value"].type == fd.TYPE_MESSAGE \
                    else []
            else:
                items = list(value) if fd.is_repeated else [value]
            for sub in items:
                found = unknown_enum(sub, f"{name}.")
                if found:
                    return found
    return None


def status(code: grpc.StatusCode, message: str, reason: str) -> grpc.Status:
    """A status with the google.rpc.ErrorInfo detail the servicer's errors carry."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain="macondo.v1")
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(status_pb2.Status(code=getattr(code_pb2, code.name), message=message,
                                                  details=[detail]))


# ---------------------------------------------------------------------------------------------- admission

class CountingPool(futures.ThreadPoolExecutor):
    """The server's RPC threads, counting the calls handed to them and not finished (running or waiting for a
    thread). A call cancelled while it waits still passes through here, so the count cannot drift."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self.in_flight = 0
        self._count_lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> futures.Future[Any]:
        def counted() -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                self._done()

        with self._count_lock:
            self.in_flight += 1
        try:
            future = super().submit(counted)
        except BaseException:
            self._done()
            raise
        # a task cancelled before it started (shutdown) never runs `counted`
        future.add_done_callback(lambda f: self._done() if f.cancelled() else None)
        return future

    def _done(self) -> None:
        with self._count_lock:
            self.in_flight -= 1


class Admission:
    """Calls in flight on the RPC threads (not the health lane): up to the threads plus max_queued_requests."""

    def __init__(self, pool: CountingPool, limits: Limits) -> None:
        self.pool = pool
        self.limit = pool._max_workers + limits.max_queued_requests
        self.wait = float(limits.queue_seconds)

    def admits(self) -> bool:
        # gRPC hands calls to the pool from one serving thread, right after the interceptor: no race
        return self.pool.in_flight < self.limit


# ---------------------------------------------------------------------------------------------- interceptor

class GuardInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]  # (grpc ships no type information)
    def __init__(self, security: Security, admission: Admission, lane: futures.ThreadPoolExecutor) -> None:
        self.security = security
        self.admission = admission
        self.lane = lane

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        """Runs on gRPC's serving thread before the call is queued: only cheap checks here; everything that
        needs the peer or the request runs in the wrapped behaviour."""
        handler = continuation(details)
        if handler is None:
            return None
        method: str = details.method or ""
        token_name: str | None = None
        if self.security.tokens:
            values = [v for k, v in (details.invocation_metadata or ()) if k == "authorization"]
            token = bearer(values[0]) if len(values) == 1 and isinstance(values[0], str) else None
            token_name = self.security.tokens.authenticate(token)
            if token_name is None:
                why = ("no bearer token (metadata authorization: Bearer TOKEN)" if not values else
                       "the bearer token is not one this server accepts" if token is not None else
                       "the authorization metadata is not 'Bearer TOKEN'")
                return self._refusal(handler, grpc.StatusCode.UNAUTHENTICATED, why, "UNAUTHENTICATED", failed=True)
        if method.startswith(HEALTH_PREFIX):
            return self._wrap(handler, token_name, lane=True)
        if not self.admission.admits():
            return self._refusal(handler, grpc.StatusCode.RESOURCE_EXHAUSTED,
                                 f"the server is busy: {self.admission.limit} calls are running or waiting (limits "
                                 "max_queued_requests and the RPC threads); retry shortly", "MAX_QUEUED_REQUESTS")
        return self._wrap(handler, token_name, lane=False)

    # ---- the behaviours
    def _checks(self, context: grpc.ServicerContext, token_name: str | None) -> str:
        """In the call's thread, before the servicer: the address's failure count (a server with tokens),
        then the principal."""
        peer = _peer(context)
        wait = self.security.limiter.blocked(peer_address(peer)) if self.security.tokens else 0.0
        if wait > 0:
            context.abort_with_status(status(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many failed authentications from this address; retry in {wait:.0f} s "
                "(limit auth_failures_per_minute)", "AUTH_FAILURES_PER_MINUTE"))
        return token_name or anonymous_principal(peer)

    def _wrap(self, handler: Any, token_name: str | None, lane: bool) -> Any:
        queued = time.monotonic()
        wait = self.admission.wait

        def prepare(request: Any, context: grpc.ServicerContext) -> contextvars.Context:
            if not lane and time.monotonic() - queued > wait:
                context.abort_with_status(status(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the server was busy: no RPC thread came free within {wait:g} s (limit queue_seconds); "
                    "retry shortly", "QUEUE_SECONDS"))
            principal = self._checks(context, token_name)
            if isinstance(request, Message):
                bad = unknown_enum(request)
                if bad:
                    context.abort_with_status(status(grpc.StatusCode.INVALID_ARGUMENT, bad, "INVALID_ARGUMENT"))
            ctx = contextvars.copy_context()
            ctx.run(current_principal.set, principal)
            return ctx

        def unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
            def run(request: Any, context: grpc.ServicerContext, *more: Any, **kw: Any) -> Any:
                ctx = prepare(request, context)
                return ctx.run(behavior, request, context, *more, **kw)
            return _like(run, behavior, self.lane if lane else None)

        def stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
            if getattr(behavior, "experimental_non_blocking", False):
                # (health Watch) returns at once and answers through a callback: no thread is held
                def run_non_blocking(request: Any, context: grpc.ServicerContext, *more: Any, **kw: Any) -> Any:
                    # gRPC passes the response callback as a third argument
                    ctx = prepare(request, context)
                    return ctx.run(behavior, request, context, *more, **kw)
                return _like(run_non_blocking, behavior, self.lane if lane else None)

            def run(request: Any, context: grpc.ServicerContext, *more: Any, **kw: Any) -> Iterator[Any]:
                iterator: Any = None
                ctx: contextvars.Context | None = None
                try:
                    ctx = prepare(request, context)
                    items = ctx.run(behavior, request, context, *more, **kw)
                    if items is None:
                        return
                    iterator = iter(items)
                    while True:
                        item = ctx.run(next, iterator, _END)
                        if item is _END:
                            return
                        yield item
                finally:
                    # a cancelled call: the servicer's stream ends here (its job stops and is released)
                    if iterator is not None and ctx is not None and hasattr(iterator, "close"):
                        ctx.run(iterator.close)
            return _like(run, behavior, self.lane if lane else None)

        return _replace_behaviours(handler, unary, stream)

    def _refusal(self, handler: Any, code: grpc.StatusCode, message: str, reason: str, failed: bool = False) -> Any:
        """A handler of the same shape that refuses the call on the health lane (it does no other work)."""
        limiter = self.security.limiter

        def refuse(request: Any, context: grpc.ServicerContext, *more: Any, **kw: Any) -> Any:
            address = peer_address(_peer(context))
            wait = limiter.blocked(address)
            if wait > 0:
                context.abort_with_status(status(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"too many failed authentications from this address; retry in {wait:.0f} s "
                    "(limit auth_failures_per_minute)", "AUTH_FAILURES_PER_MINUTE"))
            if failed:
                limiter.failed(address)
                log.info("refused peer=%s reason=%s", address, reason)
            context.abort_with_status(status(code, message, reason))

        def unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
            return _like(refuse, None, self.lane)

        def stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
            def refuse_stream(request: Any, context: grpc.ServicerContext, *more: Any, **kw: Any) -> Iterator[Any]:
                refuse(request, context)
                yield from ()
            return _like(refuse_stream, None, self.lane)

        return _replace_behaviours(handler, unary, stream)


_END = object()


def _peer(context: grpc.ServicerContext) -> str:
    try:
        return str(context.peer() or "")
    except Exception:  # noqa: BLE001 (a context without a peer)
        return ""


def _like(fn: Callable[..., Any], original: Callable[..., Any] | None,
          pool: futures.ThreadPoolExecutor | None) -> Callable[..., Any]:
    """`fn` with the attributes gRPC reads from a behaviour: non-blocking streaming, and the thread pool it
    runs on (the health lane, or the server's own)."""
    if original is not None and getattr(original, "experimental_non_blocking", False):
        fn.experimental_non_blocking = True  # type: ignore[attr-defined]
    fn.experimental_thread_pool = pool  # type: ignore[attr-defined]
    return fn


def _replace_behaviours(handler: Any, unary: Callable[[Callable[..., Any]], Callable[..., Any]],
                        stream: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Any:
    """The handler with its behaviour wrapped (unary responses by `unary`, streamed ones by `stream`)."""
    des, ser = handler.request_deserializer, handler.response_serializer
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(unary(handler.unary_unary), des, ser)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(stream(handler.unary_stream), des, ser)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(unary(handler.stream_unary), des, ser)
    return grpc.stream_stream_rpc_method_handler(stream(handler.stream_stream), des, ser)


def guard(security: Security, pool: CountingPool, limits: Limits) -> tuple[GuardInterceptor, futures.ThreadPoolExecutor]:
    """The interceptor for a server whose RPC threads are `pool`, and its health lane (shut it down with the
    server)."""
    lane = futures.ThreadPoolExecutor(max_workers=LANE_THREADS, thread_name_prefix="grpc-health")
    return GuardInterceptor(security, Admission(pool, limits), lane), lane
