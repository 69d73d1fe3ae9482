"""Endgames in French (FRA20) and Catalan (DISC2, with the L·L, NY and QU tiles): empty-bag positions from
self-play with a few tiles left on each rack, solved to the end of the game by the engine's endgame search
(from the position's CGP, as a request gives it, and on the game directly) and by an exhaustive minimax over
every legal move (tests/helpers.py), which must agree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine_cy.endgame import EndgameSolver
from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.analysis.endgame import EndgameJob, EndgameOptions, game_length_bound
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import position_from_game
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.tiles import rack_tiles

from conftest import have_lexicon
from helpers import minimax_spread

LANGUAGES = [pytest.param("FRA20", "french", marks=pytest.mark.skipif(not have_lexicon("FRA20"),
                                                                       reason="shared FRA20 absent")),
             pytest.param("DISC2", "catalan", marks=pytest.mark.skipif(not have_lexicon("DISC2"),
                                                                        reason="shared DISC2 absent"))]
POSITIONS = 6             # per language
MOST_TILES = 4            # on both racks together: the minimax stays well under a second a position


def _self_play_endgames(lex: Lexicon, most: int) -> Iterator[tuple[int, Game]]:
    """(seed, game) for seeded static-bot games (the lexicon's leaves) that reach an empty bag and then, still
    played by the bots, a turn where both racks hold tiles, `most` at most together and three at most each;
    games that end first give none."""
    bot = MoveGen(lex.kwg, lex.ld, lex.klv)
    for seed in range(1000):
        g = Game(lex.kwg, lex.ld, lex.new_board(), seed)
        g.fill_rack(0)
        g.fill_rack(1)
        while not g.game_over:
            mine, theirs = len(g.rack(g.on_turn)), len(g.rack(1 - g.on_turn))
            if g.bag_size == 0 and mine and theirs and mine + theirs <= most and max(mine, theirs) <= 3:
                yield seed, g
                break
            bot.generate(g.board, g.rack(g.on_turn), g.bag_size, mode="best")
            kind, row, col, vert, tiles, score = bot.moves()[0][:6]
            g.play(kind, row, col, vert, tiles, score)


def _spread(g: Game) -> int:
    p = g.on_turn
    return g.scores[p] - g.scores[1 - p]


@pytest.mark.parametrize("lexicon,distribution", LANGUAGES)
def test_self_play_endgames_agree_with_exhaustive_minimax(registry, engine, lexicon, distribution):
    lex = registry.get(lexicon)
    assert lex.ld.name == distribution
    found = 0
    multi_on_board = 0
    for seed, g in _self_play_endgames(lex, MOST_TILES):
        plies = game_length_bound(len(g.rack(g.on_turn)), len(g.rack(1 - g.on_turn)))
        # the position as a request gives it: its CGP (multi-letter tiles in brackets), read back
        cgp = write_cgp(position_from_game(g, {"lex": lexicon}))
        pos = parse_cgp(cgp)
        assert pos.ld.name == distribution and pos.tiles_in_bag() == 0, cgp
        g.solver_mode()
        want = minimax_spread(g.clone(), MoveGen(lex.kwg, lex.ld, None), plies)
        res = EndgameJob(engine, pos, EndgameOptions(plies=plies, threads=1, heuristics=False)).run()
        assert res.solved and res.final_spread == want, (seed, cgp)
        assert res.value == want - _spread(g), (seed, cgp)
        solver = EndgameSolver(lex.kwg, lex.ld, 16)
        for use_tt, threads in ((True, 1), (False, 1), (True, 2)):
            got = solver.solve(g, plies, heuristics=False, use_tt=use_tt, threads=threads)
            assert got["final_spread"] == want, (seed, cgp, use_tt, threads)
        multi_on_board += any(len(lex.ld.label(t & 0x7F)) > 1 for row in pos.board.tiles_list() for t in row if t)
        found += 1
        if found == POSITIONS:
            break
    assert found == POSITIONS
    if distribution == "catalan":
        assert multi_on_board > 0          # cross-words through L·L, NY or QU on the board


# racks rebuilt to hold what the bots seldom keep to the end, blanks and in Catalan the multi-letter tiles (the
# rack of the player on turn, the other's): on the board of a self-play game at its last turn before the bag
# runs out with those tiles still unplayed; the rest of the bag is then set aside
REBUILT = {
    "FRA20": [("?E", "S"), ("ZE", "?"), ("AE", "WK")],
    "DISC2": [("?E", "[QU]"), ("[L·L]A", "[NY]"), ("[NY]A", "[QU]E"), ("Ç?", "A")],
}


def _board_with_tiles_unplayed(lex: Lexicon, wanted: list[int], busy: int = 30) -> tuple[int, Game]:
    """(seed, game): the first seeded static-bot game whose last turn before the bag runs out with every tile
    of `wanted` still in the bag or on a rack has `busy` tiles on the board or more; the racks are emptied
    into the bag."""
    bot = MoveGen(lex.kwg, lex.ld, lex.klv)
    for seed in range(1000):
        g = Game(lex.kwg, lex.ld, lex.new_board(), seed)
        g.fill_rack(0)
        g.fill_rack(1)
        last = None
        while not g.game_over and g.bag_size > 0:
            unplayed = g.bag_list() + g.rack(0) + g.rack(1)
            if all(unplayed.count(t) >= wanted.count(t) for t in set(wanted)):
                last = g.clone()
            bot.generate(g.board, g.rack(g.on_turn), g.bag_size, mode="best")
            kind, row, col, vert, tiles, score = bot.moves()[0][:6]
            g.play(kind, row, col, vert, tiles, score)
        if last is not None and last.board.n_tiles >= busy:
            last.set_rack(0, [])
            last.set_rack(1, [])
            return seed, last
    raise AssertionError("no game kept those tiles long enough")


@pytest.mark.parametrize("lexicon,distribution", LANGUAGES)
def test_blanks_and_multi_letter_tiles_on_the_racks(registry, lexicon, distribution):
    lex = registry.get(lexicon)
    for mine, theirs in REBUILT[lexicon]:
        racks = rack_tiles(lex.ld, mine, "rack"), rack_tiles(lex.ld, theirs, "rack")
        seed, g = _board_with_tiles_unplayed(lex, racks[0] + racks[1])
        p = g.on_turn
        g.set_rack(p, racks[0])
        g.set_rack(1 - p, racks[1])
        g.discard_bag()
        g.solver_mode()
        plies = game_length_bound(len(racks[0]), len(racks[1]))
        want = minimax_spread(g.clone(), MoveGen(lex.kwg, lex.ld, None), plies)
        got = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, plies, heuristics=False)
        assert got["final_spread"] == want, (seed, mine, theirs)
