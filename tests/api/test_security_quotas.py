"""Quotas per principal (a token's name; the address for requests without one), never per connection: games,
jobs, worker threads and table memory. A principal at its cap is refused with a message naming the cap; when
the game store is full, a principal below its fair share takes the place of the least recently used game of
the principal holding the most, so no principal can keep another out."""

from __future__ import annotations

import contextvars
import http.client
import json
import threading
import time

import grpc
import pytest

from macondo_server.api.auth import Security, Tokens
from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server
from macondo_server.api.sessions import SessionStore, TooManyGamesError, UnknownGameError
from macondo_server.engine.facade import Engine
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from macondo_server.runtime.jobs import JobRegistry
from macondo_server.runtime.limits import LimitError, Limits, ResourceLimitError, current_principal

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef00",
          "carol": "carol-token-0123456789abcde"}


def _md(name: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {TOKENS[name]}")]


def _start(**changes: int):
    limits = Limits.load(environ={}).with_changes(**{"max_jobs": 4, "auth_failures_per_minute": 1000, **changes})
    return create_server(Settings.load(), "127.0.0.1", 0, limits=limits, http=HttpOptions(port=0),
                         security=Security(tokens=Tokens(dict(TOKENS))))


def _channel(port: int) -> grpc.Channel:
    # a connection of its own (channels in one process share connections otherwise)
    return grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])


def _http_create(port: int, name: str, seed: int) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/macondo.v1.Engine/CreateGame", body=json.dumps({"seed": seed}).encode(),
                     headers={"content-type": "application/json", "connection": "close",
                              "authorization": f"Bearer {TOKENS[name]}"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server():
    running = _start(max_sessions=2000, max_sessions_per_client=100)
    yield running
    running.stop(1)


def _clear(server) -> None:
    store = server.servicer.sessions
    store.expire(time.monotonic() + server.servicer.limits.session_idle_seconds + 1)


def test_twenty_five_connections_of_one_principal_get_one_share(server):
    _clear(server)
    channels = [_channel(server.port) for _ in range(25)]
    made, refused = [0], []
    lock = threading.Lock()

    def fill(ch: grpc.Channel) -> None:
        stub = pb_grpc.EngineStub(ch)
        for i in range(100):
            try:
                stub.CreateGame(pb.CreateGameRequest(seed=i), timeout=20, metadata=_md("alice"))
                with lock:
                    made[0] += 1
            except grpc.RpcError as exc:
                with lock:
                    refused.append((exc.code(), exc.details()))

    try:
        threads = [threading.Thread(target=fill, args=(ch,)) for ch in channels]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        for ch in channels:
            ch.close()
    assert made[0] == 100 and len(refused) == 2400
    assert all(code == grpc.StatusCode.RESOURCE_EXHAUSTED and "max_sessions_per_client is 100" in details
               for code, details in refused)
    with _channel(server.port) as ch:
        g = pb_grpc.EngineStub(ch).CreateGame(pb.CreateGameRequest(seed=1), timeout=20, metadata=_md("bob"))
        assert g.game_id
    assert server.servicer.sessions.count() == 101


def test_two_thousand_short_http_connections_of_one_principal_get_one_share(server):
    _clear(server)
    port = server.http.port
    statuses: list[tuple[int, str]] = []
    lock = threading.Lock()

    def worker(first: int) -> None:
        for seed in range(first, 2000, 8):
            status, body = _http_create(port, "alice", seed)
            with lock:
                statuses.append((status, body.get("message", "")))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(statuses) == 2000
    assert sum(s == 200 for s, _ in statuses) == 100
    assert all(s == 429 and "max_sessions_per_client" in m for s, m in statuses if s != 200)
    status, body = _http_create(port, "bob", 1)
    assert status == 200 and body["gameId"]


def test_a_full_store_makes_room_for_a_principal_below_its_share():
    running = _start(max_sessions=60, max_sessions_per_client=40)
    try:
        store = running.servicer.sessions
        with _channel(running.port) as ch:
            stub = pb_grpc.EngineStub(ch)

            def create(name: str) -> str:
                return stub.CreateGame(pb.CreateGameRequest(seed=7), timeout=20, metadata=_md(name)).game_id

            alice = [create("alice") for _ in range(40)]
            bob = [create("bob") for _ in range(20)]
            assert store.count() == 60
            # the store is full: bob holds his share (60 / 3 with a newcomer), alice more, carol none
            carol = [create("carol") for _ in range(20)]
            assert store.count() == 60
            for name, cap in (("carol", "max_sessions"), ("bob", "max_sessions"), ("alice", "max_sessions")):
                with pytest.raises(grpc.RpcError) as exc:
                    create(name)
                assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, name
                assert f"the limit {cap} is 60" in exc.value.details() and "share" in exc.value.details()
            # carol's games came from alice, the one holding the most, her least recently used first
            gone = [g for g in alice if _missing(stub, g, "alice")]
            assert len(gone) == 20 and gone == alice[:20]
            e = _grpc_error(stub.GetGame, pb.GetGameRequest(game_id=alice[0]), metadata=_md("alice"))
            assert e.code() == grpc.StatusCode.NOT_FOUND and "make room" in e.details()
            assert all(not _missing(stub, g, "bob") for g in bob) and all(not _missing(stub, g, "carol") for g in carol)
            # a free place is anyone's; then the one above its share gives way again
            stub.DeleteGame(pb.DeleteGameRequest(game_id=bob[0]), timeout=10, metadata=_md("bob"))
            extra = create("alice")
            e = _grpc_error(stub.CreateGame, pb.CreateGameRequest(), metadata=_md("alice"))
            assert "max_sessions is 60, and this client holds 21" in e.details()
            create("bob")
            assert store.count() == 60 and _missing(stub, alice[20], "alice") and not _missing(stub, extra, "alice")
    finally:
        running.stop(1)


def _grpc_error(call, request, **kw) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as exc:
        call(request, timeout=10, **kw)
    return exc.value


def _missing(stub, game_id: str, name: str) -> bool:
    try:
        stub.GetGame(pb.GetGameRequest(game_id=game_id), timeout=10, metadata=_md(name))
        return False
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.NOT_FOUND
        return True


def test_jobs_and_threads_per_principal():
    running = _start(max_jobs=4, max_jobs_per_client=2, max_threads_total=4, max_threads_per_job=2,
                     max_threads_per_client=3)
    streams = []
    try:
        with _channel(running.port) as ch:
            stub = pb_grpc.EngineStub(ch)

            def autoplay(name: str, threads: int):
                stream = stub.Autoplay(pb.AutoplayRequest(games=1_000_000, threads=threads), timeout=60,
                                       metadata=_md(name))
                first = next(stream)
                streams.append((stream, first.job_id, name))
                return first

            autoplay("alice", 2)
            with pytest.raises(grpc.RpcError) as exc:
                autoplay("alice", 2)
            assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "max_threads_per_client is 3" in exc.value.details()
            autoplay("alice", 1)
            with pytest.raises(grpc.RpcError) as exc:
                autoplay("alice", 1)
            assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "max_jobs_per_client is 2" in exc.value.details()
            autoplay("bob", 1)             # alice at her caps keeps no one else out
            assert running.servicer.jobs.usage()[:2] == (3, 4)
            for stream, job_id, name in streams:
                stub.StopJob(pb.StopJobRequest(job_id=job_id), timeout=10, metadata=_md(name))
                assert list(stream)[-1].final
    finally:
        running.stop(1)


def test_table_memory_per_principal_and_principals_in_the_job_registry():
    lim = Limits.load(environ={}).with_changes(max_jobs=8, max_threads_total=8, max_threads_per_job=2,
                                               tt_megabytes_total=1000, tt_megabytes_per_job=400,
                                               tt_megabytes_per_client=600)
    reg = JobRegistry(lim)

    def start(principal: str, **kw: int):
        ctx = contextvars.copy_context()
        ctx.run(current_principal.set, principal)
        return ctx.run(reg.start, "endgame", **kw)

    a = start("alice", threads=1, tt_megabytes=400)
    with pytest.raises(ResourceLimitError, match="tt_megabytes_per_client is 600"):
        start("alice", threads=1, tt_megabytes=300)
    b = start("bob", threads=1, tt_megabytes=400)
    with pytest.raises(ResourceLimitError, match="tt_megabytes_total is 1000"):
        start("carol", threads=1, tt_megabytes=300)
    reg.finish(a)
    start("alice", threads=1, tt_megabytes=400)
    reg.finish(b)
    assert reg.usage() == (1, 1, 400)
    reg.close()
    with pytest.raises(LimitError, match="cannot exceed"):
        Limits.load({"max_jobs": "4", "max_jobs_per_client": "5"}, environ={})
    with pytest.raises(LimitError, match="max_threads_per_client cannot be below"):
        Limits.load({"max_threads_per_job": "4", "max_threads_per_client": "2"}, environ={})


def test_session_store_fair_share_directly():
    lim = Limits.load(environ={}).with_changes(max_sessions=10, max_sessions_per_client=8)
    store = SessionStore(Engine(Settings.load()), lim)
    a = [store.create(None, i, [], 0, client="a").game_id for i in range(8)]
    with pytest.raises(TooManyGamesError, match="max_sessions_per_client is 8"):
        store.create(None, 0, [], 0, client="a")
    b = [store.create(None, i, [], 0, client="b").game_id for i in range(2)]
    assert store.count() == 10
    # full: b holds 2 of its share of 5 and takes the place of a's least recently used games
    store.get(a[0])                                           # a's first game is used again: not the oldest
    b += [store.create(None, i, [], 0, client="b").game_id for i in range(3)]
    assert store.count() == 10
    gone = [g for g in a if not _present(store, g)]
    assert gone == a[1:4]
    with pytest.raises(UnknownGameError, match="make room"):
        store.get(a[1])
    for name in ("a", "b"):                                   # both hold their share of 5 now
        with pytest.raises(TooManyGamesError, match="max_sessions is 10"):
            store.create(None, 0, [], 0, client=name)
    # a third client (share 3) takes the place of the least recently used game of a and b (5 each): b's first
    # (a's were all read by the checks above, after b's were made)
    store.create(None, 0, [], 0, client="c")
    assert store.count() == 10 and not _present(store, b[0])
    assert all(_present(store, g) for g in [a[0], *a[4:], *b[1:]])
    assert not store.delete(b[0]) and store.delete(b[1]) and store.count() == 9


def _present(store: SessionStore, game_id: str) -> bool:
    try:
        store.get(game_id)
        return True
    except UnknownGameError:
        return False


def test_anonymous_requests_count_against_their_address(server):
    _clear(server)
    ctx = contextvars.copy_context()
    ctx.run(current_principal.set, "peer:10.1.2.3")
    state = ctx.run(server.servicer.sessions.create, None, 1, [], 0, client="ipv4:10.1.2.3:5555")
    assert state.client == "peer:10.1.2.3"
    assert server.servicer.sessions.delete(state.game_id)
