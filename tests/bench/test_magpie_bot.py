"""bench/magpie_bot.py, the adapter that lets MAGPIE's bot play in the bot arena, run against a MAGPIE build:
every phase of its play (the opening, a sim with tiles in the bag, the pre-endgame, the endgame) answers with a
move that is legal in the position, within the budget; exchanges and passes come back in our notation; bad
requests get an error line and the adapter keeps serving. Skipped without a MAGPIE binary (MAGPIE_BIN, else
the adapter's default path) or without its data for NWL20."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.engine.facade import Engine, find_move
from macondo_server.engine.replay import position_from_game
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.move import parse_move
from macondo_server.model.position import Position
from macondo_server.model.tiles import RACK_SIZE, new_board

from conftest import needs_nwl20

ADAPTER = Path(__file__).resolve().parents[2] / "bench" / "magpie_bot.py"
MAGPIE = Path(os.environ.get("MAGPIE_BIN") or "/tmp/magpie_build/src15/bin/magpie")
MAGPIE_DATA = MAGPIE.resolve().parent.parent / "data"
NEEDED = ["lexica/NWL20.kwg", "lexica/NWL20.klv2", "strategy/winpct.csv", "letterdistributions/english.csv"]
MISSING = [name for name in NEEDED if not (MAGPIE_DATA / name).is_file()]
MARGIN = 0.25   # seconds past the budget a reply may take (the pipes, Python, a loaded machine)
EMPTY = "/".join(["15"] * 15)

pytestmark = [
    needs_nwl20,
    pytest.mark.skipif(not MAGPIE.is_file(), reason=f"no MAGPIE binary at {MAGPIE} (MAGPIE_BIN)"),
    pytest.mark.skipif(MAGPIE.is_file() and bool(MISSING), reason=f"MAGPIE's data lacks {', '.join(MISSING)}"),
]


class Adapter:
    def __init__(self) -> None:
        args = [sys.executable, str(ADAPTER), "--magpie", str(MAGPIE), "--lexicon", "NWL20"]
        if not (MAGPIE_DATA / "lexica" / "NWL20.wmp").is_file():
            args.append("--no-wmp")
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, line: str) -> tuple[dict, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.monotonic()
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        elapsed = time.monotonic() - t0
        assert reply, f"the adapter ended (status {self.proc.poll()})"
        return json.loads(reply), elapsed

    def close(self) -> int:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
            self.proc.stdin.flush()
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        return self.proc.returncode


@pytest.fixture(scope="module")
def adapter():
    a = Adapter()
    # the first reply waits for MAGPIE to start (seconds: it loads the lexicon and zeroes its tables): untimed
    reply, _ = a.ask(json.dumps({"cgp": f"{EMPTY} AEINRST/ 0/0 0", "seconds": 0.1, "seed": 0}))
    assert "move" in reply, reply
    yield a
    a.close()


@pytest.fixture(scope="module")
def nwl(registry):
    return registry.get("NWL20")


def self_play(lex, seed: int, stop_bag: int) -> Game:
    """A game of best-static-move self-play stopped once the bag holds stop_bag tiles or fewer."""
    g = Game(lex.kwg, lex.ld, new_board(), seed)
    g.fill_rack(0)
    g.fill_rack(1)
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    while g.bag_size > stop_bag and not g.game_over:
        gen.generate(g.board, g.rack(g.on_turn), g.bag_size, None, mode="best")
        kind, row, col, vert, tiles, score = gen.moves()[0][:6]
        g.play(kind, row, col, vert, tiles, score)
    return g


def position(lex, lo: int, hi: int) -> str:
    """The CGP, as the player on turn sees it, of a self-play position with lo..hi tiles in the bag."""
    for seed in range(1, 200):
        g = self_play(lex, seed, hi)
        if not g.game_over and lo <= g.bag_size <= hi:
            return write_cgp(position_from_game(g, {"lex": "NWL20"}, show_opponent=g.bag_size == 0))
    raise AssertionError(f"no self-play game reached {lo}..{hi} tiles in the bag")


def check_legal(engine: Engine, cgp: str, reply: dict) -> str:
    assert set(reply) <= {"move", "detail"} and isinstance(reply.get("move"), str), reply
    pos = parse_cgp(cgp)
    parse_move(reply["move"], pos.board, pos.ld)
    moves = engine.generate(pos, "NWL20").moves
    find_move(moves, reply["move"], pos)     # a FormatError unless it is one of the legal moves
    return reply["move"]


def ask_move(adapter: Adapter, engine: Engine, cgp: str, seconds: float, seed: int) -> str:
    reply, elapsed = adapter.ask(json.dumps({"cgp": cgp, "seconds": seconds, "seed": seed}))
    move = check_legal(engine, cgp, reply)
    print(f"{seconds:.2f} s budget: {move!r} in {elapsed:.3f} s")
    assert elapsed <= seconds + MARGIN, f"{elapsed:.3f} s for a budget of {seconds} s"
    return move


def test_opening(adapter, engine):
    ask_move(adapter, engine, f"{EMPTY} AEINQST/ 0/0 0 lex NWL20;", 0.5, 1)


def test_midgame_sim(adapter, engine, nwl):
    ask_move(adapter, engine, position(nwl, 30, 60), 1.0, 2)


def test_pre_endgame(adapter, engine, nwl):
    cgp = position(nwl, 1, 2)
    assert 1 <= parse_cgp(cgp).tiles_in_bag() <= 2
    ask_move(adapter, engine, cgp, 1.5, 3)


def test_endgame(adapter, engine, nwl):
    cgp = position(nwl, 0, 0)
    pos = parse_cgp(cgp)
    assert pos.tiles_in_bag() == 0 and pos.racks[1]
    ask_move(adapter, engine, cgp, 1.0, 4)


def test_exchange_comes_back_in_our_notation(adapter, engine):
    # no word can be made from these on an empty board: every move is an exchange (or the pass)
    move = ask_move(adapter, engine, f"{EMPTY} UUUVVWW/ 0/0 0 lex NWL20;", 0.5, 5)
    assert move.startswith("exch ")


def test_pass_comes_back_in_our_notation(adapter, engine, nwl):
    # a board filled row by row (no words: nothing can be played next to it), three tiles in the bag (no
    # exchange): the pass is the only move
    ld = nwl.ld
    tiles = [ml for ml in range(ld.size) for _ in range(ld.count(ml))]
    rack = [ld.letter_ml(c) for c in "UUUVVWW"]
    for t in rack:
        tiles.remove(t)
    tiles = [t if t else 0x80 | 1 for t in tiles]        # the blanks on the board as a
    board = new_board()
    for i, t in enumerate(tiles[RACK_SIZE + 3:]):
        board.set_tile(i // board.dim, i % board.dim, t)
    cgp = write_cgp(Position(board=board, racks=(rack, []), scores=(300, 280), zeros=0, ops={"lex": "NWL20"},
                             ld=ld))
    assert parse_cgp(cgp).tiles_in_bag() == 3
    assert ask_move(adapter, engine, cgp, 0.5, 6) == "pass"


@pytest.mark.parametrize("line", [
    "this is not JSON",
    "[1, 2, 3]",
    json.dumps({"seconds": 1.0, "seed": 1}),
    json.dumps({"cgp": f"{EMPTY} AEINQST/ 0/0 0", "seconds": "soon", "seed": 1}),
    json.dumps({"cgp": f"{EMPTY} AEINQST/ 0/0 0", "seconds": 0, "seed": 1}),
    json.dumps({"cgp": f"{EMPTY} AEINQST/ 0/0 0", "seconds": 1.0, "seed": 1.5}),
    json.dumps({"cgp": "15/15 AEINQST/ 0/0 0", "seconds": 1.0, "seed": 1}),
    json.dumps({"cgp": f"{EMPTY} AEINQST/ 0/0 0 lex CSW21;", "seconds": 1.0, "seed": 1}),
    json.dumps({"cgp": f"{EMPTY} AEINQSTZZ/ 0/0 0", "seconds": 1.0, "seed": 1}),
])
def test_malformed_request_gets_an_error_and_the_adapter_keeps_serving(adapter, engine, line):
    reply, _ = adapter.ask(line)
    assert set(reply) == {"error"} and reply["error"] and "\n" not in reply["error"], reply
    ask_move(adapter, engine, f"{EMPTY} DEIORST/ 0/0 0 lex NWL20;", 0.3, 7)


def test_magpie_dying_gets_an_error_and_a_new_magpie(adapter, engine):
    children = Path(f"/proc/{adapter.proc.pid}/task/{adapter.proc.pid}/children")
    if not children.is_file():
        pytest.skip("no /proc children list here")
    pids = [int(p) for p in children.read_text().split()]
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    reply, _ = adapter.ask(json.dumps({"cgp": f"{EMPTY} AEINRST/ 0/0 0", "seconds": 0.3, "seed": 9}))
    assert set(reply) == {"error"} and "MAGPIE" in reply["error"], reply
    # the adapter starts MAGPIE again before it reads the next request (untimed: the start-up)
    reply, _ = adapter.ask(json.dumps({"cgp": f"{EMPTY} AEINRST/ 0/0 0", "seconds": 0.3, "seed": 10}))
    assert "move" in reply, reply
    ask_move(adapter, engine, f"{EMPTY} DEIORST/ 0/0 0 lex NWL20;", 0.3, 11)


def test_quit_ends_the_adapter(adapter):
    # the last test of the module: the adapter ends, and MAGPIE with it
    assert adapter.close() == 0
