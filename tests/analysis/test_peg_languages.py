"""Pre-endgames in French (FRA20), Catalan (DISC2, with the L·L, NY and QU tiles) and on the 21x21 board
(CEL_super), checked draw by draw: one, two or three tiles in the bag, a seeded sample of the plays that empty
the bag (blank plays included), and for each draw of the bag's tiles the verdict the pre-endgame gives that
draw must be the one of solving, on its own, the endgame that draw leaves (the position as the player on turn
sees it, the drawn tiles put in the bag with the `bagorder` op, the play made, the opponent's endgame searched
to the same depth in the whole lexicon, where the pre-endgame searches the lexicon pruned to the board).
Plays that leave tiles in the bag (the opponent's own pre-endgame follows) are not checked here.

English has the same check on the shared ONYX case."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from engine_cy.endgame import EndgameSolver
from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import DRAW, LOSS, WIN, PegOptions
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import game_from_position, position_from_game
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.move import Move, format_move
from macondo_server.model.position import Position

from conftest import have_lexicon, load_cases, needs_cases

PLIES = 2
LANGUAGES = [pytest.param(name, marks=pytest.mark.skipif(not have_lexicon(name), reason=f"shared {name} absent"))
             for name in ("FRA20", "DISC2", "CEL_super")]
POSITIONS = 2     # per lexicon and bag size
PLAYS = 60        # per position (a rack with a blank has thousands); divided by the square of the bag size
CLOSE = 40        # points between the scores at most


def _in_the_bag(lex: Lexicon, count: int, bag: int) -> Iterator[Position]:
    """Positions of seeded static-bot games at the turn where `bag` tiles are left in the bag and the scores
    are within CLOSE points (so that draws are both won and lost), as the player on turn sees them (the
    opponent's rack unknown)."""
    bot = MoveGen(lex.kwg, lex.ld, lex.klv)
    found = 0
    for seed in range(200):
        g = Game(lex.kwg, lex.ld, lex.new_board(), seed)
        g.fill_rack(0)
        g.fill_rack(1)
        while not g.game_over and g.bag_size > bag:
            bot.generate(g.board, g.rack(g.on_turn), g.bag_size, mode="best")
            kind, row, col, vert, tiles, score = bot.moves()[0][:6]
            g.play(kind, row, col, vert, tiles, score)
        if g.game_over or g.bag_size != bag or abs(g.scores[0] - g.scores[1]) > CLOSE:
            continue
        bot.generate(g.board, g.rack(g.on_turn), bag)
        if sum(m[0] == "place" and sum(t != 0 for t in m[4]) >= bag for m in bot.moves()) < 10:
            continue        # too few plays that empty the bag to check
        pos = parse_cgp(write_cgp(position_from_game(g, {"lex": lex.name})), lex.ld)
        yield dataclasses.replace(pos, racks=(pos.racks[0], []))
        found += 1
        if found == count:
            return


def _sample_plays(lex: Lexicon, pos: Position, n: int, seed: int) -> list[str]:
    """`n` of the placements of the rack on turn that empty the bag, drawn with the seed (all of them when
    fewer)."""
    bag = pos.tiles_in_bag()
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    gen.generate(pos.board, list(pos.racks[0]), bag)
    places = [Move("place", row, col, vert, tuple(tiles)) for kind, row, col, vert, tiles, *_ in gen.moves()
              if kind == "place" and sum(t != 0 for t in tiles) >= bag]
    chosen = places if len(places) <= n else random.Random(seed).sample(places, n)
    return [format_move(m, lex.ld) for m in chosen]


def _check_draw_by_draw(engine, pos: Position, plies: int, seed: int, plays_wanted: int = PLAYS) -> Counter[int]:
    """Solve the pre-endgame of `pos` for a sample of its plays that empty the bag and check each play's
    verdict on each draw against the endgame that draw leaves; the (play, draw) verdicts checked, by verdict."""
    lex = engine.registry.get(pos.ops["lex"])
    bag = pos.tiles_in_bag()
    unseen = sum(pos.unseen_counts(0))
    orders = 1
    for k in range(bag):
        orders *= unseen - k          # the ordered draws of the bag's tiles from the unseen ones
    plays = _sample_plays(lex, pos, plays_wanted, seed)
    opts = PegOptions(endgame_plies=plies, threads=1, endgame_leaf="static", quick_pass=False, only_solve=plays,
                      max_tiles_left=0)
    res = PegJob(engine, pos, opts).run()
    assert res.finished and unseen == 7 + bag and res.total_permutations == orders
    assert sorted(p.text for p in res.plays) == sorted(plays)
    solver = EndgameSolver(lex.kwg, lex.ld, 16)
    checked: Counter[int] = Counter()
    for play in res.plays:
        if play.move.kind != "place":
            continue
        assert play.empties_bag and sum(g.weight for g in play.groups) == orders
        for group in play.groups:
            ops = dict(pos.ops, bagorder="".join(lex.ld.label(t) for t in group.seq))   # first drawn first
            game = game_from_position(dataclasses.replace(pos, ops=ops), lex)
            m = play.move
            game.play(m.kind, m.row, m.col, m.vertical, list(m.tiles), play.score)
            assert game.bag_size == 0 and game.on_turn == 1
            r = solver.solve(game, plies, threads=1, heuristics=False, prune=False)
            ours = -r["final_spread"]
            expected = WIN if ours > 0 else DRAW if ours == 0 else LOSS
            assert group.outcome == expected, (play.text, group.label, group.outcome, ours)
            checked[expected] += 1
        wins = sum(g.weight for g in play.groups if g.outcome == WIN)
        draws = sum(g.weight for g in play.groups if g.outcome == DRAW)
        assert play.points == wins + draws / 2
    return checked


@pytest.mark.parametrize("bag", [1, 2, 3])
@pytest.mark.parametrize("lexicon", LANGUAGES)
def test_every_draw_verdict_is_its_endgame(engine, registry, lexicon, bag):
    lex = registry.get(lexicon)
    positions = list(_in_the_bag(lex, POSITIONS, bag))
    assert len(positions) == POSITIONS
    verdicts: Counter[int] = Counter()
    for i, pos in enumerate(positions):
        assert pos.tiles_in_bag() == bag
        checked = _check_draw_by_draw(engine, pos, PLIES, i, PLAYS // bag ** 2)
        assert checked.total() > 20
        verdicts += checked
    assert verdicts[WIN] > 0 and verdicts[LOSS] > 0      # the sample holds both won and lost draws


@needs_cases
def test_english_onyx_draw_by_draw(engine):
    (case,) = [c for c in load_cases("peg") if c["id"] == "peg-onyx-nwl20"]
    pos = parse_cgp(case["cgp"])
    pos = dataclasses.replace(pos, racks=(pos.racks[0], []))    # as the player on turn sees it
    assert _check_draw_by_draw(engine, pos, 3, 0).total() > 300   # a group per distinct unseen tile
