"""Other languages over the API: a position's letter distribution comes from its `distribution` field, its CGP's
ld op or its lexicon; a distribution that does not fit is INVALID_ARGUMENT with a one-line message."""

from __future__ import annotations

import grpc
import pytest

from macondo_server.api.grpc_server import create_server
from macondo_server.engine.settings import Settings
from macondo_server.model.languages import PACKAGE_CATALOG
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc

EMPTY = "/".join(["15"] * 15)


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    data = tmp_path_factory.mktemp("lang-data")
    (data / "DISCTINY.txt").write_text("AL·LA\n[QU]E\nANY\nES\n", encoding="utf-8")
    (data / "letterdistributions").mkdir()
    # the same tiles as catalan (so the same tile numbers), fewer of some
    table = PACKAGE_CATALOG.distribution("catalan").table().replace("\nA,12,1,1", "\nA,6,1,1")
    (data / "letterdistributions" / "catalan_small.csv").write_text(table, encoding="utf-8")
    running = create_server(Settings.load(str(data)), "127.0.0.1", 0, max_jobs=2)
    channel = grpc.insecure_channel(f"127.0.0.1:{running.port}")
    yield pb_grpc.EngineStub(channel)
    channel.close()
    running.stop(1)


def _gen(stub, cgp: str, lexicon: str = "", distribution: str = "") -> pb.GenerateMovesResponse:
    return stub.GenerateMoves(pb.GenerateMovesRequest(
        position=pb.Position(cgp=cgp, lexicon=lexicon, distribution=distribution), num_plays=5), timeout=60)


def _error(stub, cgp: str, lexicon: str = "", distribution: str = "") -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        _gen(stub, cgp, lexicon, distribution)
    return info.value


def test_a_position_in_catalan(stub):
    by_lexicon = _gen(stub, f"{EMPTY} AL·L?QUE/ 0/0 0", lexicon="DISCTINY")
    by_field = _gen(stub, f"{EMPTY} AL·L?QUE/ 0/0 0", lexicon="DISCTINY", distribution="catalan")
    by_op = _gen(stub, f"{EMPTY} A[L·L]?[QU]E/ 0/0 0 ld catalan;", lexicon="DISCTINY")
    assert [m.notation for m in by_lexicon.moves] == [m.notation for m in by_field.moves] == \
        [m.notation for m in by_op.moves]
    assert "[L·L]" in by_lexicon.moves[0].notation and by_lexicon.lexicon == "DISCTINY"
    # a distribution the server's data directory adds, of the same language as the lexicon's own
    small = _gen(stub, f"{EMPTY} A[L·L]?[QU]E/ 0/0 0", lexicon="DISCTINY", distribution="catalan_small")
    assert [m.notation for m in small.moves] == [m.notation for m in by_lexicon.moves]
    e = _error(stub, f"{EMPTY} AAAAAAA/ 0/0 0", lexicon="DISCTINY", distribution="catalan_small")
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "A (7 where the distribution has 6)" in e.details()


@pytest.mark.parametrize("cgp,lexicon,distribution,needle", [
    (f"{EMPTY} AEI/ 0/0 0", "DISCTINY", "english", "DISCTINY is for the catalan letter distribution"),
    (f"{EMPTY} AEI/ 0/0 0 ld french;", "DISCTINY", "catalan", "but CGP op ld names french"),
    (f"{EMPTY} AEI/ 0/0 0", "DISCTINY", "klingon", "unknown letter distribution 'klingon'"),
    (f"{EMPTY} A[QU]/ 0/0 0", "", "", "not a multi-letter tile of the 'english' distribution"),
])
def test_distributions_that_do_not_fit_are_invalid_arguments(stub, cgp, lexicon, distribution, needle):
    e = _error(stub, cgp, lexicon, distribution)
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in e.details() and "\n" not in e.details()


def test_a_game_session_in_catalan(stub):
    game = stub.CreateGame(pb.CreateGameRequest(cgp=f"{EMPTY} AL·L?QUE/ESNNSAA 0/0 0", lexicon="DISCTINY"),
                           timeout=60)
    moved = stub.EngineMove(pb.EngineMoveRequest(game_id=game.game_id), timeout=60)
    assert "[L·L]" in moved.move.notation
    assert "L·L" in moved.game.display


def test_the_game_state_names_the_board_and_its_squares(stub):
    """What a client needs to draw the board: the distribution, the layout and its premium squares by row."""
    for rows, layout, corner, quad_words, quad_letters in ((15, "standard15", "=", 0, 0), (21, "standard21", "~", 4, 8)):
        game = stub.CreateGame(pb.CreateGameRequest(cgp=f"{'/'.join([str(rows)] * rows)} AL·L?QUE/ 0/0 0",
                                                    lexicon="DISCTINY"), timeout=60)
        assert (game.distribution, game.layout) == ("catalan", layout)
        assert len(game.premiums) == rows and all(len(row) == rows for row in game.premiums)
        assert game.premiums[0][0] == game.premiums[-1][-1] == corner
        squares = "".join(game.premiums)
        assert (squares.count("~"), squares.count("^")) == (quad_words, quad_letters)
        assert set(squares) <= set("=-\"'~^ ")
        stub.DeleteGame(pb.DeleteGameRequest(game_id=game.game_id), timeout=10)


def test_the_server_info_names_each_lexicons_distribution_and_board(stub):
    info = {lx.name: lx for lx in stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).lexica}
    assert (info["DISCTINY"].distribution, info["DISCTINY"].layout) == ("catalan", "standard15")
    assert (info["SCOWL70"].distribution, info["SCOWL70"].layout) == ("english", "standard15")
