"""Streaming analysis RPCs (Simulate, SolveEndgame, SolvePreEndgame) and the sim strategy for game sessions."""

from __future__ import annotations

import json
import time

import grpc
import pytest

from macondo_server.api.grpc_server import create_server
from macondo_server.cli import main
from macondo_server.engine.settings import Settings
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

from conftest import load_cases, needs_cases, needs_nwl20

EMPTY = "/".join(["15"] * 15)
OPENING = f"{EMPTY} AEINQST/ 0/0 0 lex NWL20;"
CASES = {c["id"]: c for kind in ("endgame", "peg") for c in load_cases(kind)}


@pytest.fixture(scope="module")
def server():
    running = create_server(Settings.load(), "127.0.0.1", 0, max_jobs=3)
    yield running
    running.stop(1)


@pytest.fixture
def stub(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield pb_grpc.EngineStub(channel)
    channel.close()


@needs_nwl20
def test_simulate_streams_and_matches_cli(stub, capsys):
    req = pb.SimulateRequest(position=pb.Position(cgp=OPENING), num_plays=5, iterations=1024, seed=4, threads=2)
    msgs = list(stub.Simulate(req, timeout=120))
    assert msgs[-1].final and not msgs[-1].stopped and msgs[-1].iterations == 1024
    assert all(not m.final for m in msgs[:-1])
    assert main(["sim", OPENING, "--num-plays", "5", "--iterations", "1024", "--seed", "4", "--threads", "2",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert [p.move.notation for p in msgs[-1].plays] == [p["move"] for p in cli["plays"]]
    assert [round(p.equity, 3) for p in msgs[-1].plays] == [p["equity"] for p in cli["plays"]]
    assert len(msgs[-1].plays[0].ply_stats) == 2


@needs_nwl20
def test_simulate_statistics_match_cli(stub, capsys):
    """stats: per play and ply a score histogram and a heatmap, the opponent's rack around their reply; the same as
    `macondo sim --stats --json`; without stats none of them."""
    req = pb.SimulateRequest(position=pb.Position(cgp=OPENING), num_plays=3, iterations=300, seed=6, threads=1,
                             stats=True)
    msgs = list(stub.Simulate(req, timeout=120))
    final = msgs[-1]
    assert final.final and final.score_bin_width == 10
    for p in final.plays:
        assert len(p.ply_stats) == 2
        for ply in p.ply_stats:
            assert len(ply.score_histogram) == 16 and sum(ply.score_histogram) == p.iterations == 300
            assert len(ply.heatmap) == 225
        assert [t.tile for t in p.opponent_leave][:3] == ["?", "A", "B"] and len(p.opponent_leave) == 27
        assert sum(t.held for t in p.opponent_leave) == pytest.approx(7.0)
    assert main(["sim", OPENING, "--num-plays", "3", "--iterations", "300", "--seed", "6", "--threads", "1",
                 "--stats", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["score_bin_width"] == 10
    for p, c in zip(final.plays, cli["plays"], strict=True):
        assert p.move.notation == c["move"]
        assert [list(s.score_histogram) for s in p.ply_stats] == [s["score_histogram"] for s in c["ply_stats"]]
        assert [list(s.heatmap) for s in p.ply_stats] == [sum(s["heatmap"], []) for s in c["ply_stats"]]
        assert {t.tile: round(t.kept, 4) for t in p.opponent_leave} == {k: v["kept"] for k, v in c["opponent_leave"].items()}
    plain = list(stub.Simulate(pb.SimulateRequest(position=pb.Position(cgp=OPENING), num_plays=2, iterations=50,
                                                  threads=1), timeout=60))[-1]
    assert plain.score_bin_width == 0
    assert all(not s.score_histogram and not s.heatmap for p in plain.plays for s in p.ply_stats)
    assert all(not p.opponent_leave for p in plain.plays)


@needs_nwl20
def test_simulate_stop_job_and_cancel(stub, server):
    req = pb.SimulateRequest(position=pb.Position(cgp=OPENING), iterations=10_000_000, threads=1)
    stream = stub.Simulate(req, timeout=60)
    first = next(stream)
    assert first.job_id and not first.final
    t0 = time.monotonic()
    assert stub.StopJob(pb.StopJobRequest(job_id=first.job_id), timeout=5).found
    rest = list(stream)
    assert time.monotonic() - t0 < 1.5
    assert rest[-1].final and rest[-1].stopped and rest[-1].iterations > 0 and rest[-1].plays
    # a short deadline returns the best so far before it expires, or DEADLINE_EXCEEDED, promptly
    t0 = time.monotonic()
    try:
        last = list(stub.Simulate(req, timeout=1.0))[-1]
        assert last.final
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - t0 < 2.0
    # cancellation frees the job slot
    stream = stub.Simulate(req, timeout=60)
    next(stream)
    stream.cancel()
    deadline = time.monotonic() + 3
    while server.servicer.jobs.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.servicer.jobs.running() == 0


@needs_cases
def test_solve_endgame_matches_cli(stub, capsys):
    c = CASES["eg-canik-nwl20"]
    msgs = list(stub.SolveEndgame(pb.SolveEndgameRequest(position=pb.Position(cgp=c["cgp"]), plies=4, threads=1),
                                  timeout=60))
    final = msgs[-1]
    assert final.final and final.complete and final.value == 11 and final.depth == 4
    assert main(["endgame", c["cgp"], "--plies", "4", "--threads", "1", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert [m.move.notation for m in final.best_line] == [m["move"] for m in cli["best_line"]]
    assert final.final_spread == cli["final_spread"]


@needs_nwl20
def test_simulate_max_time_without_iterations_uses_the_time(stub):
    req = pb.SimulateRequest(position=pb.Position(cgp=OPENING), num_plays=3, max_time=2, threads=1)
    t0 = time.monotonic()
    final = list(stub.Simulate(req, timeout=30))[-1]
    elapsed = time.monotonic() - t0
    assert final.final and 1.5 <= elapsed < 4 and 1.5 <= final.elapsed_seconds < 4, elapsed
    assert final.stop_reason == "time limit" and final.iterations > 0
    plain = pb.SimulateRequest(position=pb.Position(cgp=OPENING), num_plays=2, plies=1, threads=1)
    final = list(stub.Simulate(plain, timeout=60))[-1]
    assert final.iterations == 1000 and final.stop_reason == "iterations cap 1000 (default)"


@needs_cases
def test_solve_endgame_max_time_without_plies_deepens(stub):
    c = CASES["eg-canik-nwl20"]
    req = pb.SolveEndgameRequest(position=pb.Position(cgp=c["cgp"]), max_time=3, threads=1)
    final = list(stub.SolveEndgame(req, timeout=30))[-1]
    assert final.final and final.depth > 4 and final.stop_reason in ("solved", "time limit")
    assert final.value == 11
    plain = list(stub.SolveEndgame(pb.SolveEndgameRequest(position=pb.Position(cgp=c["cgp"]), threads=1),
                                   timeout=30))[-1]
    assert plain.depth == 4 and plain.complete and plain.stop_reason == "plies cap 4 (default)"


@needs_cases
def test_solve_pre_endgame_matches_cli(stub, capsys):
    c = CASES["peg-onyx-nwl20"]
    req = pb.SolvePreEndgameRequest(position=pb.Position(cgp=c["cgp"]), endgame_plies=2,
                                    only_solve=["13L ONYX", "13L OXY"], threads=2)
    final = list(stub.SolvePreEndgame(req, timeout=120))[-1]
    assert final.final and final.complete and final.total_permutations == 8
    assert main(["peg", c["cgp"], "--endgame-plies", "2", "--only-solve", "13L ONYX", "--only-solve", "13L OXY",
                 "--threads", "2", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert final.winner == cli["winner"]
    assert [(p.move.notation, p.wins) for p in final.plays] == [(p["move"], p["wins"]) for p in cli["plays"]]
    assert sum(o.weight for o in final.plays[0].outcomes) == 8


@pytest.mark.parametrize("rpc,request_obj,needle", [
    ("SolveEndgame", pb.SolveEndgameRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0")), "bag is not empty"),
    ("SolveEndgame", pb.SolveEndgameRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0"), plies=99), "plies"),
    ("SolvePreEndgame", pb.SolvePreEndgameRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0")), "1 to 6"),
    ("Simulate", pb.SimulateRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0"), stop=90), "stop"),
    ("Simulate", pb.SimulateRequest(position=pb.Position(cgp="garbage")), "CGP"),
    ("Simulate", pb.SimulateRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0", lexicon="NOPE")), "NOPE"),
    ("Simulate", pb.SimulateRequest(position=pb.Position(cgp=f"{EMPTY} AEINQST/ 0/0 0"), plies=0, stats=True),
     "at least 1 ply"),
])
def test_bad_analysis_requests(stub, server, rpc, request_obj, needle):
    with pytest.raises(grpc.RpcError) as err:
        list(getattr(stub, rpc)(request_obj, timeout=30))
    code = err.value.code()
    assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
    assert needle.lower() in err.value.details().lower()


def test_engine_move_sim_strategy(stub):
    game = stub.CreateGame(pb.CreateGameRequest(seed=11), timeout=10)
    resp = stub.EngineMove(pb.EngineMoveRequest(game_id=game.game_id, strategy="sim:iterations=32,num_plays=4"),
                           timeout=60)
    assert resp.move.notation and len(resp.game.history) == 1
    with pytest.raises(grpc.RpcError) as err:
        stub.EngineMove(pb.EngineMoveRequest(game_id=game.game_id, strategy="sim:bogus=1"), timeout=10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
