"""Close positions at the start of the pre-endgame, for arena runs that compare players where they differ.

Plays static-equity self-play games and keeps, from each, the first position with --min-bag to --max-bag tiles
in the bag (a game that passes over that range gives none) whose spread is within --max-spread, as a CGP with
both racks (the arena's referee needs them; each bot still sees only its own). Prints one CGP a line.

Run: .venv/bin/python bench/arena_positions.py --lexicon NWL20 --count 300 --seed 1 > /tmp/peg_positions.cgp
then: .venv/bin/macondo bots --positions /tmp/peg_positions.cgp --strategy1 best --strategy2 sim --clock 20
"""

from __future__ import annotations

import argparse
import sys

from engine_cy.game import Game
from macondo_server.engine.facade import Engine
from macondo_server.engine.replay import play_move, position_from_game
from macondo_server.model.cgp import write_cgp
from macondo_server.model.move import Move


def positions(engine: Engine, lexicon: str, count: int, seed: int, max_bag: int, max_spread: int,
              min_bag: int = 1) -> list[str]:
    lex = engine.lexicon(lexicon)
    gen = engine.movegen(lex, lex.klv)
    out: list[str] = []
    g = 0
    while len(out) < count and g < 50 * count:
        game = Game(lex.kwg, lex.ld, lex.new_board(), seed * 1_000_003 + g, 50, 6)
        g += 1
        game.fill_rack(0)
        game.fill_rack(1)
        while not game.game_over:
            bag = game.bag_size
            if bag <= max_bag:
                p = game.on_turn
                if bag >= min_bag and abs(game.scores[p] - game.scores[1 - p]) <= max_spread:
                    out.append(write_cgp(position_from_game(game, {"lex": lex.name}, show_opponent=True)))
                break
            p = game.on_turn
            gen.generate(game.board, list(game.rack(p)), bag, None, mode="best")
            kind, row, col, vertical, tiles = gen.moves(1)[0][:5]
            play_move(game, Move(kind, row, col, vertical, tuple(tiles)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-bag", type=int, default=1)
    ap.add_argument("--max-bag", type=int, default=6)
    ap.add_argument("--max-spread", type=int, default=40)
    args = ap.parse_args()
    found = positions(Engine(), args.lexicon, args.count, args.seed, args.max_bag, args.max_spread, args.min_bag)
    for cgp in found:
        print(cgp)
    print(f"{len(found)} positions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
