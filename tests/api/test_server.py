from __future__ import annotations

import json
import threading
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from macondo_server.api.grpc_server import create_server
from macondo_server.cli import main
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

EMPTY = "/".join(["15"] * 15)
VSMATT = (
    "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
    "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0"
)


@pytest.fixture(scope="module")
def server():
    running = create_server(Settings.load(), "127.0.0.1", 0, max_jobs=2)
    yield running
    running.stop(1)


@pytest.fixture
def stub(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield pb_grpc.EngineStub(channel)
    channel.close()


def _health(server) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        return health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status


def test_server_info(stub):
    info = stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=30)
    assert info.api_version == "macondo.v1" and info.default_lexicon == "SCOWL70"
    assert "SCOWL70" in [lx.name for lx in info.lexica]
    assert info.limits.max_jobs == 2


def test_generate_matches_cli(stub, capsys):
    cgp = f"{EMPTY} AEINQST/ 0/0 0"
    resp = stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=cgp), num_plays=5), timeout=10)
    assert main(["gen", cgp, "-n", "5", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert [m.notation for m in resp.moves] == [m["move"] for m in cli["moves"]]
    assert [round(m.equity, 3) for m in resp.moves] == [m["equity"] for m in cli["moves"]]
    assert resp.counts.placements == cli["counts"]["placements"]
    assert resp.moves[0].display == " 8G QI" and resp.moves[0].type == pb.TILE_PLACEMENT
    assert resp.lexicon == "SCOWL70"
    everything = stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=VSMATT), all=True), timeout=10)
    assert len(everything.moves) == sum((everything.counts.placements, everything.counts.exchanges,
                                         everything.counts.passes))


@pytest.mark.parametrize(
    "request_kwargs,code,needle",
    [
        ({"position": pb.Position(cgp="")}, grpc.StatusCode.INVALID_ARGUMENT, "cgp is empty"),
        ({"position": pb.Position(cgp="nonsense")}, grpc.StatusCode.INVALID_ARGUMENT, "CGP has 1 fields"),
        ({"position": pb.Position(cgp=f"{EMPTY} A/ 0/0 0", lexicon="NOPE")}, grpc.StatusCode.NOT_FOUND,
         "unknown lexicon"),
        ({"position": pb.Position(cgp=f"{EMPTY} A/ 0/0 0"), "num_plays": -1}, grpc.StatusCode.INVALID_ARGUMENT,
         "num_plays"),
        ({"position": pb.Position(cgp="x" * 5000)}, grpc.StatusCode.INVALID_ARGUMENT, "longer than"),
    ],
)
def test_bad_requests(stub, server, request_kwargs, code, needle):
    with pytest.raises(grpc.RpcError) as exc:
        stub.GenerateMoves(pb.GenerateMovesRequest(**request_kwargs), timeout=10)
    assert exc.value.code() == code and needle in exc.value.details()
    status = rpc_status.from_call(exc.value)
    assert status is not None and status.details  # rich error details carry an ErrorInfo
    assert _health(server) == health_pb2.HealthCheckResponse.SERVING


def test_autoplay_stream_and_stop(stub, server):
    stream = stub.Autoplay(pb.AutoplayRequest(games=100000, seed=3, threads=1), timeout=60)
    first = next(stream)
    assert not first.final and first.job_id
    t0 = time.monotonic()
    assert stub.StopJob(pb.StopJobRequest(job_id=first.job_id), timeout=5).found
    rest = list(stream)
    assert rest[-1].final and rest[-1].stopped and rest[-1].games_done < 100000
    assert time.monotonic() - t0 < 1.0
    assert not stub.StopJob(pb.StopJobRequest(job_id=first.job_id), timeout=5).found
    assert _health(server) == health_pb2.HealthCheckResponse.SERVING


def test_autoplay_complete_matches_cli(stub, capsys):
    msgs = list(stub.Autoplay(pb.AutoplayRequest(games=8, seed=5, threads=2), timeout=60))
    final = msgs[-1]
    assert final.final and not final.stopped and final.games_done == 8
    assert main(["autoplay", "--games", "8", "--seed", "5", "--threads", "2", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert list(final.wins) == cli["wins"] and [round(x, 3) for x in final.mean_score] == cli["mean_score"]


def test_deadline_and_cancel(stub, server):
    t0 = time.monotonic()
    msgs = list(stub.Autoplay(pb.AutoplayRequest(games=100000, seed=1, threads=1), timeout=1.0))
    assert msgs and msgs[-1].final and msgs[-1].stopped
    assert time.monotonic() - t0 < 1.5
    stream = stub.Autoplay(pb.AutoplayRequest(games=100000, seed=2, threads=1), timeout=30)
    next(stream)
    stream.cancel()
    deadline = time.monotonic() + 2
    while server.servicer.jobs.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.servicer.jobs.running() == 0


def test_too_many_jobs(stub, server):
    streams = [stub.Autoplay(pb.AutoplayRequest(games=100000, threads=1), timeout=30) for _ in range(2)]
    firsts = [next(s) for s in streams]
    with pytest.raises(grpc.RpcError) as exc:
        next(stub.Autoplay(pb.AutoplayRequest(games=10), timeout=10))
    assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    for f in firsts:
        stub.StopJob(pb.StopJobRequest(job_id=f.job_id))
    for s in streams:
        assert list(s)[-1].final


def test_load_generate_with_running_job(stub, server):
    """50 concurrent GenerateMoves clients while a self-play job runs; health stays SERVING."""
    job = stub.Autoplay(pb.AutoplayRequest(games=100000, threads=1, seed=9), timeout=60)
    first = next(job)
    expected = stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=VSMATT), num_plays=3), timeout=10)
    errors: list[str] = []

    def client() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
            s = pb_grpc.EngineStub(ch)
            for _ in range(4):
                r = s.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=VSMATT), num_plays=3), timeout=30)
                if [m.notation for m in r.moves] != [m.notation for m in expected.moves]:
                    errors.append("mismatch")

    threads = [threading.Thread(target=client) for _ in range(50)]
    for t in threads:
        t.start()
    assert _health(server) == health_pb2.HealthCheckResponse.SERVING
    for t in threads:
        t.join(60)
    assert not errors
    stub.StopJob(pb.StopJobRequest(job_id=first.job_id))
    assert list(job)[-1].final


def test_reflection_lists_services(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                              timeout=5)
        names = [s.name for r in responses for s in r.list_services_response.service]
    assert "macondo.v1.Engine" in names and "grpc.health.v1.Health" in names


def test_game_sessions(stub):
    g = stub.CreateGame(pb.CreateGameRequest(seed=11, players=["ann", "bob"]), timeout=10)
    assert g.game_id and g.players == ["ann", "bob"] and g.on_turn == 0 and g.bag_count == 86
    assert not g.game_over and g.lexicon == "SCOWL70"
    # a bad move is refused and changes nothing
    with pytest.raises(grpc.RpcError) as exc:
        stub.PlayMove(pb.PlayMoveRequest(game_id=g.game_id, move="8A ZZZZZZZ"), timeout=10)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert stub.GetGame(pb.GetGameRequest(game_id=g.game_id), timeout=10).cgp == g.cgp
    # the engine moves for both sides until the game ends
    turns = 0
    state = g
    while not state.game_over and turns < 100:
        resp = stub.EngineMove(pb.EngineMoveRequest(game_id=g.game_id, strategy="static"), timeout=10)
        state = resp.game
        turns += 1
    assert state.game_over and state.end_reason in ("standard", "consecutive_zeros")
    assert len(state.history) == turns
    assert sum(h.move.score for h in state.history if h.player == 0) <= state.scores[0] + 200
    with pytest.raises(grpc.RpcError) as exc:
        stub.EngineMove(pb.EngineMoveRequest(game_id=g.game_id), timeout=10)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "over" in exc.value.details()
    assert stub.DeleteGame(pb.DeleteGameRequest(game_id=g.game_id), timeout=10).found
    with pytest.raises(grpc.RpcError) as exc:
        stub.GetGame(pb.GetGameRequest(game_id=g.game_id), timeout=10)
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND


def test_game_session_moves_and_errors(stub):
    g = stub.CreateGame(pb.CreateGameRequest(seed=5), timeout=10)
    rack = g.cgp.split()[1].split("/")[0]
    # a human-style move from the engine's own list is accepted
    gen = stub.GenerateMoves(pb.GenerateMovesRequest(position=pb.Position(cgp=g.cgp), num_plays=1), timeout=10)
    state = stub.PlayMove(pb.PlayMoveRequest(game_id=g.game_id, move=gen.moves[0].notation), timeout=10)
    assert state.on_turn == 1 and state.history[0].rack == rack
    for kwargs, code in [
        ({"players": ["a"]}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"players": ["a", "a"]}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"lexicon": "NOPE"}, grpc.StatusCode.NOT_FOUND),
    ]:
        with pytest.raises(grpc.RpcError) as exc:
            stub.CreateGame(pb.CreateGameRequest(**kwargs), timeout=10)
        assert exc.value.code() == code
    with pytest.raises(grpc.RpcError) as exc:
        stub.EngineMove(pb.EngineMoveRequest(game_id=g.game_id, strategy="montecarlo"), timeout=10)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "unknown strategy" in exc.value.details()
