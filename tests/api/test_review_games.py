"""ReviewGames (many games reviewed and summed up per player) and the server's review store (`serve
--review-store DIR`): the stream's games, errors and summary, reuse by AnalyzeGame and ReviewGames, refusals,
the Python client and the shell's `review` command."""

from __future__ import annotations

import io
import json

import grpc
import pytest
from macondo_client import Client
from macondo_client.shell import run_shell

from macondo_server.analysis.review_store import ReviewStore
from macondo_server.api.grpc_server import create_server
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

from conftest import GCG_DATA, needs_nwl20, shared_settings

GAMES = [GCG_DATA / n for n in ("missing_racks.gcg", "phony_withdrawn.gcg")]
TINY = dict(sim_iterations=8, sim_plays=2, sim_plies=1, peg_plays=1, peg_endgame_plies=1, endgame_plies=1,
            endgame_candidates=0, threads=2, seed=7)


@pytest.fixture(scope="module")
def store_server(tmp_path_factory):
    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=3)
    store = tmp_path_factory.mktemp("review-store")
    running.servicer.review_store = ReviewStore(store)
    yield running, store
    running.stop(1)


@pytest.fixture
def stub(store_server):
    with grpc.insecure_channel(f"127.0.0.1:{store_server[0].port}") as ch:
        yield pb_grpc.EngineStub(ch)


def _review(stub, games: list[pb.ReviewGame], **kw) -> tuple[list[pb.ReviewGamesProgress], pb.ReviewGamesProgress]:
    msgs = list(stub.ReviewGames(pb.ReviewGamesRequest(games=games, **kw), timeout=300))
    assert msgs[-1].final and all(not m.final for m in msgs[:-1])
    return msgs, msgs[-1]


def _games(*paths) -> list[pb.ReviewGame]:
    return [pb.ReviewGame(name=p.name, gcg=p.read_text(encoding="utf-8")) for p in paths]


@needs_nwl20
def test_review_games_streams_games_and_sums_them_up(stub, store_server):
    _, store = store_server
    bad = pb.ReviewGame(name="bad.gcg", gcg=">nobody: garbage\n")
    msgs, final = _review(stub, [*_games(*GAMES), bad], options=pb.AnalyzeGameRequest(**TINY), top=3)
    games = [g for m in msgs for g in m.games]
    errors = [e for m in msgs for e in m.errors]
    assert [g.game for g in games] == [p.name for p in GAMES] and all(g.final and g.json for g in games)
    assert [e.game for e in errors] == ["bad.gcg"] and "\n" not in errors[0].error
    s = final.summary
    assert (s.games, s.analysed, s.reused, s.failed) == (2, 2, 0, 1)
    assert final.games_done == final.games_total == 3
    assert {p.name for p in s.players} == {"bot1", "bot2"}
    assert all(len(p.biggest_mistakes) <= 3 and p.games == 2 for p in s.players)
    doc = json.loads(final.json)
    assert doc["games"] == 2 and {p["name"] for p in doc["players"]} == {"bot1", "bot2"}
    assert len(list(store.glob("*.json"))) == 2
    # again: both from the server's store, and AnalyzeGame answers from it too
    _, again = _review(stub, _games(*GAMES), options=pb.AnalyzeGameRequest(**TINY), top=3)
    assert (again.summary.analysed, again.summary.reused) == (0, 2)
    assert again.summary.players == s.players
    last = list(stub.AnalyzeGame(pb.AnalyzeGameRequest(gcg=GAMES[0].read_text(encoding="utf-8"), **TINY),
                                 timeout=120))[-1]
    assert last.final and last.reused and json.loads(last.json)["reused"] is True
    assert [t.event for t in last.turns] == [t.event for t in games[0].turns]


@pytest.mark.parametrize("request_fields, needle", [
    (dict(), "games: 1 to 1000 games, got 0"),
    (dict(games=[pb.ReviewGame(name="a", gcg="#player1 a a\n")], options=pb.AnalyzeGameRequest(gcg="x")),
     "options.gcg is not used"),
    (dict(games=[pb.ReviewGame(name="a", gcg="#player1 a a\n")], top=101), "top must be 0 to 100"),
    (dict(games=[pb.ReviewGame(name="a", gcg="#player1 a a\n")],
          options=pb.AnalyzeGameRequest(sim_iterations=2_000_000)), "sim iterations must be"),
])
def test_bad_requests_are_invalid_argument(stub, request_fields, needle):
    with pytest.raises(grpc.RpcError) as err:
        list(stub.ReviewGames(pb.ReviewGamesRequest(**request_fields), timeout=30))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in err.value.details() and "\n" not in err.value.details()


def test_unknown_lexicon_is_not_found(stub):
    with pytest.raises(grpc.RpcError) as err:
        list(stub.ReviewGames(pb.ReviewGamesRequest(games=[pb.ReviewGame(gcg="#player1 a a\n")],
                                                    options=pb.AnalyzeGameRequest(lexicon="NOPE")), timeout=30))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


@needs_nwl20
def test_python_client_and_shell(store_server, tmp_path):
    running, _ = store_server
    with Client(f"127.0.0.1:{running.port}") as c:
        final = c.review_games([(p.name, p.read_text(encoding="utf-8")) for p in GAMES], top=2, **TINY).result()
        assert final.summary.games == 2 and json.loads(final.json)["players"]
        folder = tmp_path / "games"
        folder.mkdir()
        for p in GAMES:
            (folder / p.name).write_bytes(p.read_bytes())
        out = io.StringIO()
        script = (f"review {folder} -iterations 8 -plays 2 -plies 1 -peg-plays 1 -endgameplies 1 -threads 2 "
                  f"-seed 7 -top 2\nreview {tmp_path / 'missing'}\nreview\nquit\n")
        run_shell(c, stdin=io.StringIO(script), stdout=out)
    text = out.getvalue()
    assert "Traceback" not in text and "internal error" not in text, text
    assert "Review of 2 games" in text and "Biggest mistakes of bot" in text
    assert "no such file or folder" in text and "review which games?" in text


def test_serve_refuses_a_missing_review_store(tmp_path, capsys):
    import signal

    from macondo_server.cli import main

    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        code = main(["serve", "--port", "0", "--review-store", str(tmp_path / "missing")])
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--review-store" in err and "is not a folder" in err
