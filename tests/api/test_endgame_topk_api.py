"""SolveEndgame's runner-up lines over gRPC: top_k and also_solve give the CLI's lines; bad values are
INVALID_ARGUMENT with a message that names the problem."""

from __future__ import annotations

import json

import grpc
import pytest

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.api.grpc_server import create_server
from macondo_server.cli import main
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.replay import position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import write_cgp
from macondo_server.model.tiles import new_board
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc


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


@pytest.fixture(scope="module")
def cgp() -> str:
    """A bundled-lexicon endgame: a static-bot game played past the emptying of the bag to short racks."""
    lex = LexiconRegistry(Settings.load()).get("SCOWL70")
    for seed in range(50):
        g = Game(lex.kwg, lex.ld, new_board(), 900 + seed)
        g.fill_rack(0)
        g.fill_rack(1)
        gen = MoveGen(lex.kwg, lex.ld, None)
        while not g.game_over and (g.bag_size > 0 or len(g.rack(0)) + len(g.rack(1)) > 8):
            p = g.on_turn
            gen.generate(g.board, g.rack(p), g.bag_size, g.rack(1 - p) if g.bag_size == 0 else None, mode="best")
            kind, row, col, vert, tiles, score = gen.moves()[0][:6]
            g.play(kind, row, col, vert, tiles, score)
        if not g.game_over and min(len(g.rack(0)), len(g.rack(1))) >= 2:
            return write_cgp(position_from_game(g, {"lex": "SCOWL70"}))
    raise AssertionError("no game reached a short endgame")


def test_top_k_and_also_solve_match_the_cli(stub, cgp, capsys):
    req = pb.SolveEndgameRequest(position=pb.Position(cgp=cgp), plies=3, threads=1, tt_megabytes=16,
                                 disable_heuristics=True, top_k=4, also_solve=["pass"])
    final = list(stub.SolveEndgame(req, timeout=60))[-1]
    assert final.final and final.complete and len(final.top_lines) == 4
    assert final.top_lines[0].value == final.value and final.top_lines[0].loss == 0
    assert [m.move.notation for m in final.top_lines[0].line] == [m.move.notation for m in final.best_line]
    values = [t.value for t in final.top_lines]
    assert values == sorted(values, reverse=True)
    assert [t.loss for t in final.top_lines] == [final.value - v for v in values]
    also = final.also_solved[0]
    assert also.requested == "pass" and also.searched and also.line[0].move.notation == "pass"
    assert also.loss == final.value - also.value >= 0
    assert main(["endgame", cgp, "--plies", "3", "--threads", "1", "--tt-mb", "16", "--no-heuristics", "--top", "4",
                 "--also-solve", "pass", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert [t["value"] for t in cli["top_lines"]] == values
    assert cli["also_solved"][0]["value"] == also.value


@pytest.mark.parametrize("fields,needle", [
    (dict(top_k=65), "top must be 1 to 64"),
    (dict(top_k=-2), "top must be 1 to 64"),
    (dict(also_solve=["junk"]), "bad move"),
    (dict(also_solve=["pass", "15A ZZZZZZZZZZZZZZ"]), "15A"),
    (dict(top_k=3, first_win=True), "first-win"),
])
def test_bad_top_k_and_also_solve(stub, cgp, fields, needle):
    req = pb.SolveEndgameRequest(position=pb.Position(cgp=cgp), plies=2, threads=1, tt_megabytes=16, **fields)
    with pytest.raises(grpc.RpcError) as err:
        list(stub.SolveEndgame(req, timeout=30))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in err.value.details()


def test_shell_endgame_top_and_also_solve(server, cgp):
    import io

    from macondo_client import Client
    from macondo_client.shell import run_shell

    out = io.StringIO()
    with Client(f"127.0.0.1:{server.port}") as client:
        run_shell(client, stdin=io.StringIO(f"load cgp {cgp}\nendgame -plies 3 -threads 1 -tt-mb 16 -top 3 "
                                            "-also-solve pass\nendgame -top 0\nendgame -also-solve junk\n"
                                            "commit #3\nquit\n"), stdout=out)
    text = out.getvalue()
    assert "Traceback" not in text and "internal error" not in text, text
    solved = text.split("-also-solve pass\n", 1)[1].split("macondo> ", 1)[0]
    assert "Best 3 first moves at depth 3" in solved and "Also solved:" in solved and "  pass: value " in solved
    rows = [ln for ln in solved.splitlines() if ln[:3].strip() in ("1", "2", "3")]
    assert len(rows) == 3
    assert "top must be 1 to 64" in text and "bad move 'junk'" in text
    # commit #3 plays the third first move listed (the line's first move: after rank, value and loss)
    third = rows[2].split(None, 3)[3].split(" (")[0]
    played = text.split("macondo> commit #3\n", 1)[1].split("macondo> ", 1)[0]
    assert f"committing #3 of the endgame ranking: {third}" in played, (rows[2], played)
