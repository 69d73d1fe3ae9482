"""The ports cannot be starved: idle, slow and oversized connections are closed within their bounds while
others are served; a burst beyond the RPC threads waits briefly instead of failing; health checks on both
ports are never held back by the request caps; the HTTP port answers only to its own names and decodes
requests strictly (gRPC's content type, a JSON body that is not an object, enum values the API lacks)."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from macondo_server.api.auth import Security, Tokens
from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from macondo_server.runtime.limits import Limits

EMPTY = "/".join(["15"] * 15)
OPENING = f"{EMPTY} AEINQST/ 0/0 0"
MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
           "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0")
TOKEN = "alice-token-0123456789abcdef"
AUTH = {"authorization": f"Bearer {TOKEN}"}


def _start(workers: int | None = None, tokens: dict[str, str] | None = None, allowed_hosts: tuple[str, ...] = (),
           **limits: int):
    lim = Limits.load(environ={}).with_changes(max_jobs=2, **limits)
    security = Security(tokens=Tokens(dict(tokens or {})))
    return create_server(Settings.load(), "127.0.0.1", 0, limits=lim, workers=workers, security=security,
                         http=HttpOptions(port=0, allowed_hosts=allowed_hosts))


def _http(port: int, path: str, body: bytes = b"{}", headers: dict[str, str] | None = None, method: str = "POST",
          timeout: float = 10.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body if method == "POST" else None,
                     headers={"content-type": "application/json", "connection": "close", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _closed_at(sock: socket.socket, deadline: float) -> tuple[float | None, bytes]:
    """When the server closed `sock` (monotonic time), waiting until `deadline`, and what it sent."""
    got = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, got
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except TimeoutError:
            return None, got
        except OSError:                       # reset by the server
            return time.monotonic(), got
        if not data:
            return time.monotonic(), got
        got += data


@pytest.fixture(scope="module")
def guarded():
    running = _start(tokens={"alice": TOKEN}, http_idle_seconds=2, http_header_seconds=3, http_body_seconds=2,
                     allowed_hosts=("board.example",))
    yield running
    running.stop(1)


def test_idle_and_slow_header_connections_cannot_starve_the_port(guarded):
    port = guarded.http.port
    opened = time.monotonic()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(150)]
    for s in slow:
        s.sendall(b"POST /macondo.v1.Engine/GetServerInfo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    stop = threading.Event()

    def trickle() -> None:                    # a byte per connection every half second, never the header's end
        while not stop.wait(0.5):
            for s in slow:
                try:
                    s.send(b"a")
                except OSError:
                    pass

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        time.sleep(0.3)
        t0 = time.monotonic()
        status, body = _http(port, "/healthz", method="GET", headers=AUTH, timeout=5)
        health_seconds = time.monotonic() - t0
        assert status == 200 and json.loads(body) == {"status": "SERVING"}
        t0 = time.monotonic()
        status, body = _http(port, "/macondo.v1.Engine/GetServerInfo", headers=AUTH, timeout=5)
        rpc_seconds = time.monotonic() - t0
        assert status == 200 and json.loads(body)["apiVersion"] == "macondo.v1"
        assert health_seconds < 1.0 and rpc_seconds < 1.0, (health_seconds, rpc_seconds)
        # the attacker's connections are closed by the server within its timeouts (2 s idle, 3 s for headers)
        deadline = opened + 8
        idle_closed = [_closed_at(s, deadline)[0] for s in idle]
        slow_results = [_closed_at(s, deadline) for s in slow]
    finally:
        stop.set()
        trickler.join(2)
        for s in idle + slow:
            s.close()
    assert all(t is not None for t in idle_closed), sum(t is None for t in idle_closed)
    assert max(t for t in idle_closed if t is not None) - opened < 2 + 2.5
    assert all(t is not None for t, _ in slow_results), sum(t is None for t, _ in slow_results)
    assert max(t for t, _ in slow_results if t is not None) - opened < 3 + 2.5
    assert all(got.startswith(b"HTTP/1.1 408") for _, got in slow_results)


def test_silent_connections_to_the_grpc_port_are_closed_after_the_handshake_time(guarded):
    opened = time.monotonic()
    silent = [socket.create_connection(("127.0.0.1", guarded.port)) for _ in range(100)]
    try:
        with grpc.insecure_channel(f"127.0.0.1:{guarded.port}") as ch:
            reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=1,
                                                         metadata=[("authorization", f"Bearer {TOKEN}")])
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        closed = [_closed_at(s, opened + 8)[0] for s in silent]
    finally:
        for s in silent:
            s.close()
    assert all(t is not None for t in closed), sum(t is None for t in closed)
    assert max(t for t in closed if t is not None) - opened < 3 + 2.5


def test_a_64_megabyte_header_is_refused_without_reading_it(guarded):
    port = guarded.http.port
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(10)
    sent = 0
    chunk = b"a" * 65536
    t0 = time.monotonic()
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        while sent < 64 * 1024 * 1024:
            sock.sendall(chunk)
            sent += len(chunk)
        refused_by_server = False
    except OSError:
        refused_by_server = True
    elapsed = time.monotonic() - t0
    try:
        answer = sock.recv(4096)
    except OSError:
        answer = b""                          # reset: the answer may be lost with the unread bytes
    sock.close()
    assert refused_by_server, "the server read a 64 MB header to its end"
    assert sent < 16 * 1024 * 1024 and elapsed < 5, (sent, elapsed)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 431")
    assert guarded.http.bounds.refused.get("headers too large", 0) >= 1
    assert _http(port, "/healthz", method="GET", headers=AUTH)[0] == 200


def test_a_body_that_does_not_arrive_in_time_is_refused(guarded):
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("uvicorn.error", "uvicorn", "macondo.http")]
    for lg in loggers:
        lg.addHandler(handler)
    sock = socket.create_connection(("127.0.0.1", guarded.http.port))
    try:
        t0 = time.monotonic()
        sock.sendall(b"POST /macondo.v1.Engine/GetServerInfo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"authorization: Bearer " + TOKEN.encode() + b"\r\ncontent-type: application/json\r\n"
                     b"content-length: 100\r\n\r\n{")
        closed, got = _closed_at(sock, t0 + 6)
    finally:
        sock.close()
        for lg in loggers:
            lg.removeHandler(handler)
    assert closed is not None and closed - t0 < 2 + 1.5, closed
    assert got.startswith(b"HTTP/1.1 408") and b"http_body_seconds" in got
    assert not [r for r in records if r.exc_info or r.levelno >= logging.ERROR], [r.getMessage() for r in records]
    assert _http(guarded.http.port, "/healthz", method="GET", headers=AUTH)[0] == 200


def test_beyond_the_connection_limit_the_longest_idle_connection_gives_way():
    running = _start(http_max_connections=40)
    try:
        port = running.http.port
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
        time.sleep(0.3)
        for _ in range(5):
            assert _http(port, "/macondo.v1.Engine/GetServerInfo")[0] == 200
        assert _http(port, "/healthz", method="GET")[0] == 200
        bounds = running.http.bounds
        assert bounds.open <= 40 + 1
        assert bounds.refused.get("idle connection closed for a new one", 0) >= 20
        # the first connections opened are the ones closed
        first_closed = _closed_at(idle[0], time.monotonic() + 1)[0]
        last_open = _closed_at(idle[-1], time.monotonic() + 0.2)[0]
        assert first_closed is not None and last_open is None
        for s in idle:
            s.close()
    finally:
        running.stop(1)


def test_a_rebinding_host_is_refused(guarded):
    port = guarded.http.port
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "localhost.evil.example"):
        status, body = _http(port, "/macondo.v1.Engine/GetServerInfo", headers={**AUTH, "host": host})
        assert status == 403, host
        assert json.loads(body)["code"] == "permission_denied"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST", "board.example"):
        status, _ = _http(port, "/macondo.v1.Engine/GetServerInfo", headers={**AUTH, "host": host})
        assert status == 200, host


def test_grpc_over_http1_is_a_clean_refusal(guarded):
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("uvicorn.error", "uvicorn", "macondo.http")]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        for ctype in ("application/grpc", "application/grpc+proto", "application/grpc; charset=x"):
            status, body = _http(guarded.http.port, "/macondo.v1.Engine/GetServerInfo", b"\x00\x00\x00\x00\x00",
                                 headers={**AUTH, "content-type": ctype})
            assert status == 415 and json.loads(body)["code"] == "unimplemented", (ctype, status, body)
            assert b"HTTP/2" in body
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
    assert not [r for r in records if r.exc_info or r.levelno >= logging.ERROR], [r.getMessage() for r in records]


@pytest.mark.parametrize("body,needle", [(b"null", "got null"), (b"[]", "got an array"), (b"1", "got a number"),
                                         (b'"x"', "got a string"), (b"{", "not JSON")])
def test_json_body_that_is_not_an_object(guarded, body, needle):
    status, reply = _http(guarded.http.port, "/macondo.v1.Engine/GenerateMoves", body, headers=AUTH)
    err = json.loads(reply)
    assert status == 400 and err["code"] == "invalid_argument" and needle in err["message"], err
    assert "Error" not in err["message"] and "Traceback" not in err["message"]


@pytest.mark.parametrize("body,needle", [
    ({"numPlays": {}}, "num_plays: expected a number, got an object"),
    ({"position": []}, "position: expected an object, got an array"),
    ({"position": "x"}, "position: expected an object, got a string"),
    ({"position": {"cgp": 5}}, "position.cgp: expected a string, got a number"),
    ({"all": "yes"}, "all: expected true or false, got a string"),
    ({"sort": True}, "sort: expected a name of SortBy, got true or false"),
    ({"numPlays": 1.5}, "num_plays: expected a whole number, got 1.5"),
])
def test_json_values_of_the_wrong_type_are_named(guarded, body, needle):
    status, reply = _http(guarded.http.port, "/macondo.v1.Engine/GenerateMoves", json.dumps(body).encode(),
                          headers=AUTH)
    err = json.loads(reply)
    assert status == 400 and err["code"] == "invalid_argument" and err["message"] == needle, err


def test_json_in_the_forms_proto3_allows_is_taken(guarded):
    body = {"position": {"cgp": OPENING, "lexicon": None}, "numPlays": "3", "sort": 1, "all": False,
            "unknownField": {"ignored": True}}
    status, reply = _http(guarded.http.port, "/macondo.v1.Engine/GenerateMoves", json.dumps(body).encode(),
                          headers=AUTH)
    assert status == 200 and len(json.loads(reply)["moves"]) == 3


def test_unknown_enum_values_are_refused_on_every_encoding(guarded):
    port = guarded.http.port
    for sort in ('"SORT_NOPE"', "77", '"sort_score"'):
        body = b'{"position": {"cgp": "%s"}, "sort": %s}' % (OPENING.encode(), sort.encode())
        status, reply = _http(port, "/macondo.v1.Engine/GenerateMoves", body, headers=AUTH)
        err = json.loads(reply)
        assert status == 400 and err["code"] == "invalid_argument" and "SortBy" in err["message"], (sort, err)
    good = b'{"position": {"cgp": "%s"}, "sort": "SORT_SCORE", "numPlays": 1}' % OPENING.encode()
    assert _http(port, "/macondo.v1.Engine/GenerateMoves", good, headers=AUTH)[0] == 200
    binary = pb.GenerateMovesRequest(position=pb.Position(cgp=OPENING), sort=77).SerializeToString()  # type: ignore[arg-type]
    status, reply = _http(port, "/macondo.v1.Engine/GenerateMoves", binary,
                          headers={**AUTH, "content-type": "application/proto"})
    assert status == 400 and "sort: 77 is not a value of SortBy" in json.loads(reply)["message"]
    with grpc.insecure_channel(f"127.0.0.1:{guarded.port}") as ch:
        stub = pb_grpc.EngineStub(ch)
        with pytest.raises(grpc.RpcError) as exc:
            stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=OPENING), sort=77),  # type: ignore[arg-type]
                               timeout=10, metadata=[("authorization", f"Bearer {TOKEN}")])
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "SortBy" in exc.value.details()


def test_a_burst_beyond_the_threads_waits_instead_of_failing():
    """300 requests at once, each on its own connection, against 4 RPC threads: every one is served."""
    running = _start(workers=4)
    try:
        port = running.http.port
        body = json.dumps({"position": {"cgp": MIDGAME}, "numPlays": 15}).encode()
        barrier = threading.Barrier(300)
        results: list[int] = []
        lock = threading.Lock()

        def one() -> None:
            barrier.wait(30)
            try:
                status, _ = _http(port, "/macondo.v1.Engine/GenerateMoves", body, timeout=30)
            except OSError as exc:
                status = -1
                print(exc)
            with lock:
                results.append(status)

        threads = [threading.Thread(target=one) for _ in range(300)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        elapsed = time.monotonic() - t0
        assert results.count(200) == 300, {s: results.count(s) for s in set(results)}
        assert elapsed < 30
    finally:
        running.stop(1)


def test_beyond_the_queue_a_request_is_refused_at_once():
    running = _start(workers=1, max_queued_requests=1, queue_seconds=1)
    try:
        port = running.http.port
        game = json.loads(_http(port, "/macondo.v1.Engine/CreateGame", b'{"seed": 1}')[1])["gameId"]
        slow = json.dumps({"gameId": game, "strategy": "sim:iterations=10000000,max_time=4,stop=none"}).encode()
        holder = threading.Thread(target=_http, args=(port, "/macondo.v1.Engine/EngineMove", slow), daemon=True)
        holder.start()                        # holds the one RPC thread for ~4 s
        time.sleep(0.5)
        waiting: list[tuple[int, bytes]] = []
        waiter = threading.Thread(target=lambda: waiting.append(_http(port, "/macondo.v1.Engine/GetServerInfo")))
        waiter.start()                        # waits for the thread: the one place in the queue
        time.sleep(0.3)
        t0 = time.monotonic()
        status, body = _http(port, "/macondo.v1.Engine/GetServerInfo")
        assert status == 429 and json.loads(body)["code"] == "resource_exhausted", (status, body)
        assert "max_queued_requests" in json.loads(body)["message"] and time.monotonic() - t0 < 0.5
        waiter.join(5)
        status, body = waiting[0]             # the waiting one gave up after queue_seconds
        assert status == 429 and "queue_seconds" in json.loads(body)["message"], (status, body)
        # health is not a request the caps hold back
        t0 = time.monotonic()
        assert _http(port, "/healthz", method="GET")[0] == 200 and time.monotonic() - t0 < 0.5
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            t0 = time.monotonic()
            reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=1)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING and time.monotonic() - t0 < 0.5
        holder.join(10)
    finally:
        running.stop(1)


def test_grpc_calls_cancelled_while_they_wait_give_their_place_back():
    running = _start(workers=1, max_queued_requests=2, queue_seconds=5)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
            stub = pb_grpc.EngineStub(ch)
            game = stub.CreateGame(pb.CreateGameRequest(seed=1), timeout=10)
            holder = stub.EngineMove.future(pb.EngineMoveRequest(game_id=game.game_id,
                                                                 strategy="sim:iterations=10000000,max_time=2,stop=none"),
                                            timeout=20)
            time.sleep(0.3)                   # the one RPC thread is busy for ~2 s
            for _ in range(2):                # two calls give up while they wait for it
                with pytest.raises(grpc.RpcError) as exc:
                    stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=0.3)
                assert exc.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert holder.result().move.notation
            # one running and two waiting fit exactly: none of the places was lost to the calls given up (each
            # burst after the last one's threads are done: a reply reaches the client just before)
            for _ in range(3):
                time.sleep(0.2)
                calls = [stub.GetServerInfo.future(pb.GetServerInfoRequest(), timeout=10) for _ in range(3)]
                assert all(c.result().api_version == "macondo.v1" for c in calls)
    finally:
        running.stop(1)


POLLS = 120


def test_health_checks_never_fail_under_load():
    """50 clients keep both ports busy beyond their threads and queues; POLLS health polls on each port all
    answer SERVING within a second."""
    running = _start(workers=6, max_queued_requests=8, queue_seconds=1)
    stop = threading.Event()
    done = {"ok": 0, "refused": 0, "other": 0}
    lock = threading.Lock()
    request = pb.GenerateMovesRequest(position=pb.Position(cgp=MIDGAME), num_plays=15)
    body = json.dumps({"position": {"cgp": MIDGAME}, "numPlays": 15}).encode()

    def grpc_client() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}",
                                   options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
            stub = pb_grpc.EngineStub(ch)
            while not stop.is_set():
                try:
                    stub.GenerateMoves(request, timeout=10)
                    kind = "ok"
                except grpc.RpcError as exc:
                    kind = "refused" if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else "other"
                with lock:
                    done[kind] += 1

    def http_client() -> None:
        while not stop.is_set():
            try:
                status, _ = _http(running.http.port, "/macondo.v1.Engine/GenerateMoves", body, timeout=10)
                kind = "ok" if status == 200 else "refused" if status in (429, 503) else "other"
            except OSError:
                kind = "other"
            with lock:
                done[kind] += 1

    clients = [threading.Thread(target=grpc_client if i % 2 else http_client, daemon=True) for i in range(50)]
    failures: list[str] = []
    latencies: list[float] = []

    def poll_grpc() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}",
                                   options=[("grpc.use_local_subchannel_pool", 1)]) as monitor:
            health = health_pb2_grpc.HealthStub(monitor)
            for i in range(POLLS):
                t0 = time.monotonic()
                try:
                    if health.Check(health_pb2.HealthCheckRequest(), timeout=1).status != \
                            health_pb2.HealthCheckResponse.SERVING:
                        failures.append(f"grpc {i}: not serving")
                except grpc.RpcError as exc:
                    failures.append(f"grpc {i}: {exc.code().name}")
                latencies.append(time.monotonic() - t0)

    def poll_http() -> None:
        for i in range(POLLS):
            t0 = time.monotonic()
            try:
                status, _ = _http(running.http.port, "/healthz", method="GET", timeout=1)
                if status != 200:
                    failures.append(f"http {i}: {status}")
            except OSError as exc:
                failures.append(f"http {i}: {exc}")
            latencies.append(time.monotonic() - t0)

    try:
        for c in clients:
            c.start()
        time.sleep(1.0)
        pollers = [threading.Thread(target=poll_grpc), threading.Thread(target=poll_http)]
        for t in pollers:
            t.start()
        for t in pollers:
            t.join(120)
    finally:
        stop.set()
        for c in clients:
            c.join(15)
        running.stop(1)
    assert len(latencies) == 2 * POLLS
    assert not failures, failures[:10]
    assert done["ok"] > 100 and done["other"] == 0, done
    assert max(latencies) < 1.0
