"""Catalan and Polish positions through a running server, from the Python client and the shell: a CGP sent in
comes back as the same position (multi-letter tiles in brackets, either spelling taken in), its moves are the
engine's own, and a move played on it gives the position the engine gives. The server info names each
lexicon's letter distribution and board, and the client's and the shell's `info` show them."""

from __future__ import annotations

import dataclasses
import io
import os

import pytest
from macondo_client import Client
from macondo_client.__main__ import main as client_main
from macondo_client.shell import MacondoShell

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.api.convert import generate_to_pb
from macondo_server.api.grpc_server import create_server
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import commit, position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.position import Position

from conftest import CASES_DIR, LEXICA, have_lexicon

POLISH_GAME = CASES_DIR / "languages" / "macondo_polish_endgame.gcg"
# a tiny Polish lexicon (no public one is at hand): the name says its distribution
POLISH_WORDS = "ŻABA\nABA\nBAŁ\nŁAŃ\nĆMA\nMAĆ\nŹLE\nŁAĆ\nŻAŁ\nMAŁA\nBAĆ\nĄŁ\n"
POLISH_CGP = ("15/15/15/15/15/15/15/7ŻABA4/15/15/15/15/15/15/15 AĆMŁŃ?Ź/ĘŚLEÓBA 10/24 0 lex OSPSTINY;")
needs_disc2 = pytest.mark.skipif(not have_lexicon("DISC2"), reason="shared DISC2 absent")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    own = tmp_path_factory.mktemp("lang-client")
    (own / "OSPSTINY.txt").write_text(POLISH_WORDS, encoding="utf-8")
    dirs = [str(own)] + ([str(LEXICA)] if LEXICA.is_dir() else [])
    return os.pathsep.join(dirs)


@pytest.fixture(scope="module")
def lang_engine(data):
    return Engine(Settings.load(data))


@pytest.fixture(scope="module")
def lang_server(data):
    running = create_server(Settings.load(data), "127.0.0.1", 0, max_jobs=2)
    yield running
    running.stop(1)


@pytest.fixture
def lang_client(lang_server):
    with Client(f"127.0.0.1:{lang_server.port}") as c:
        yield c


def _seen_by_mover(pos: Position) -> str:
    """The CGP a game session shows the player on turn: the opponent's rack hidden."""
    return write_cgp(dataclasses.replace(pos, racks=(pos.racks[0], [])))


def _catalan_position(lex: Lexicon, seed: int) -> Position:
    """A self-play position (DISC2's static bots, seeded) with L·L, NY and QU each on the board or on the rack
    of the player on turn, one of them on that rack."""
    ld = lex.ld
    multi = {ld.letter_ml(x) for x in ("L·L", "NY", "QU")}
    bot = MoveGen(lex.kwg, ld, lex.klv)
    g = Game(lex.kwg, ld, lex.new_board(), seed)
    g.fill_rack(0)
    g.fill_rack(1)
    while not g.game_over and g.bag_size > 0:
        board = {t & 0x7F for row in g.board.tiles_list() for t in row if t}
        rack = set(g.rack(g.on_turn))
        if multi <= board | rack and rack & multi:
            return position_from_game(g, {"lex": lex.name})
        bot.generate(g.board, g.rack(g.on_turn), g.bag_size, mode="best")
        kind, row, col, vert, tiles, score = bot.moves()[0][:6]
        g.play(kind, row, col, vert, tiles, score)
    raise AssertionError(f"seed {seed}: no such position")


def _round_trip(client: Client, engine: Engine, cgp: str, lexicon: str, distribution: str,
                spellings: list[str]) -> None:
    """The position through the client: a game from it shows the same position (from each spelling), its
    moves are the engine's, and the best one played gives the engine's position."""
    pos = parse_cgp(cgp)
    lex = engine.lexicon_for(pos, lexicon)
    assert pos.ld.name == distribution
    want = _seen_by_mover(pos)
    for text in [cgp, *spellings]:
        state = client.create_game(cgp=text, lexicon=lexicon)
        assert state.cgp == want and state.distribution == distribution and state.layout == "standard15"
        again = client.create_game(cgp=state.cgp, lexicon=lexicon)
        assert again.cgp == want
        client.delete_game(again.game_id)
        client.delete_game(state.game_id)
    state = client.create_game(cgp=cgp, lexicon=lexicon)
    served = client.generate(state.cgp, num_plays=20, lexicon=lexicon)
    seen = parse_cgp(state.cgp)
    local = generate_to_pb(engine.generate(seen, lexicon=lexicon, n=20), seen, lexicon)
    assert [(m.notation, m.score, m.equity) for m in served.moves] == \
        [(m.notation, m.score, m.equity) for m in local.moves]
    best = served.moves[0].notation
    after = client.play_move(state.game_id, best)
    done = commit(pos, lex, best).position
    # the opponent's rack shows once the bag is empty
    assert after.cgp in (_seen_by_mover(done), write_cgp(done))
    assert list(after.scores)[::-1 if after.on_turn else 1] == list(done.scores)
    client.delete_game(state.game_id)


@needs_disc2
@pytest.mark.parametrize("seed", [0, 1, 5])
def test_catalan_positions_round_trip_through_the_client(lang_client, lang_engine, seed):
    pos = _catalan_position(lang_engine.lexicon("DISC2"), seed)
    cgp = write_cgp(pos)
    for tile in ("[L·L]", "[NY]", "[QU]"):
        assert tile in cgp
    # the same position written as Macondo writes it: multi-letter tiles without brackets (Catalan has no Q,
    # Y or · alone), and the ld op left to the lexicon
    bare = cgp.replace("[", "").replace("]", "").replace(" ld catalan;", "")
    _round_trip(lang_client, lang_engine, cgp, "DISC2", "catalan", [bare])


def test_polish_positions_round_trip_through_the_client(lang_client, lang_engine):
    _round_trip(lang_client, lang_engine, POLISH_CGP, "OSPSTINY", "polish",
                [POLISH_CGP.replace(" lex OSPSTINY;", " lex OSPSTINY; ld polish;")])


@pytest.mark.skipif(not POLISH_GAME.is_file(), reason="shared Polish game absent")
def test_the_polish_game_through_the_client(lang_client, lang_engine):
    """The Polish tournament game replayed on the server (plays not checked: the tiny lexicon is not OSPS);
    each position along it comes back as sent."""
    text = POLISH_GAME.read_text(encoding="utf-8")
    for turn in (10, 30, 53):
        state = lang_client.create_game(gcg=text, lexicon="OSPSTINY", turn=turn)
        assert state.distribution == "polish" and "ld polish;" in state.cgp
        again = lang_client.create_game(cgp=state.cgp, lexicon="OSPSTINY")
        assert again.cgp == state.cgp and again.display.splitlines()[:17] == state.display.splitlines()[:17]
        lang_client.delete_game(again.game_id)
        lang_client.delete_game(state.game_id)
    assert state.game_over and list(state.scores) == [316, 323]


def _shell(client: Client) -> tuple[MacondoShell, io.StringIO]:
    out = io.StringIO()
    return MacondoShell(client, stdin=io.StringIO(), stdout=out, interactive=False), out


def _run(shell: MacondoShell, out: io.StringIO, line: str) -> str:
    start = len(out.getvalue())
    shell.onecmd(line)
    text = out.getvalue()[start:]
    assert "internal error" not in text and "Traceback" not in text, text
    return text


def _shell_round_trip(client: Client, cgp: str, lexicon: str, letters: str) -> None:
    shell, out = _shell(client)
    _run(shell, out, f"set lexicon {lexicon}")
    shown = _run(shell, out, f"load cgp {cgp}")
    assert shell.game is not None and shell.game.cgp == _seen_by_mover(parse_cgp(cgp))
    assert any(x in shown for x in letters), shown
    moves = _run(shell, out, "gen 5")
    served = client.generate(shell.game.cgp, num_plays=5, lexicon=lexicon)
    for m in served.moves:
        assert m.display.strip() in moves
    before = shell.game.cgp
    _run(shell, out, "commit #1")
    after = shell.game.cgp
    pos = parse_cgp(cgp)
    assert after != before and sorted(parse_cgp(after).racks[0]) == sorted(pos.racks[1])
    _run(shell, out, "quit")


@needs_disc2
def test_the_shell_round_trips_a_catalan_position(lang_client, lang_engine):
    cgp = write_cgp(_catalan_position(lang_engine.lexicon("DISC2"), 5))
    _shell_round_trip(lang_client, cgp, "DISC2", ["L·L", "NY", "QU"])


def test_the_shell_round_trips_a_polish_position(lang_client):
    _shell_round_trip(lang_client, POLISH_CGP, "OSPSTINY", ["Ż"])


# ------------------------------------------------------------------ the server info


def test_server_info_names_each_lexicons_distribution_and_board(lang_client, lang_server, capsys):
    info = {lx.name: lx for lx in lang_client.server_info().lexica}
    assert (info["OSPSTINY"].distribution, info["OSPSTINY"].layout) == ("polish", "standard15")
    assert (info["SCOWL70"].distribution, info["SCOWL70"].layout) == ("english", "standard15")
    expected = {"DISC2": ("catalan", "standard15"), "FRA20": ("french", "standard15"),
                "CEL_super": ("english_super", "standard21")}
    for name, board in expected.items():
        if have_lexicon(name):
            assert (info[name].distribution, info[name].layout) == board
    shell, out = _shell(lang_client)
    rows = {line.split()[0]: line.split() for line in _run(shell, out, "info").splitlines()[1:]
            if line.startswith("  ")}
    assert rows["OSPSTINY"][1:3] == ["polish", "standard15"]
    assert client_main(["info", "--server", f"127.0.0.1:{lang_server.port}"]) == 0
    line = capsys.readouterr().out
    assert "OSPSTINY (polish, standard15)" in line and "SCOWL70 (english, standard15)" in line
    if have_lexicon("CEL_super"):
        assert rows["CEL_super"][1:3] == ["english_super", "standard21"]
        assert "CEL_super (english_super, standard21)" in line
