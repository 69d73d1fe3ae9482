"""The player's pre-endgame with 3 to 6 tiles in the bag, under a move's budget: the seconds it takes against
the budget, how many plays its quick pass judged on every draw, and the play it makes.

Positions: self-play games of the static `expert` level from seeds 1, 2, ... (NWL20), stopped at the first
turn with at most 6 tiles in the bag; the first --per-bag of them for each bag size from 3 to 6. Each move is
`best:peg=6` with a fixed budget (--budget seconds, default the pre-endgame's default of 8 s) on --threads
threads.

Run: .venv/bin/python bench/peg_large_bag.py [--budget 8] [--per-bag 2] [--threads 1] [--data-dir DIR]
"""

from __future__ import annotations

import argparse

from engine_cy.game import Game
from macondo_server.analysis.player import LEVELS, choose, parse_strategy
from macondo_server.engine.facade import Engine
from macondo_server.engine.replay import play_move
from macondo_server.engine.settings import Settings

from _shared import shared_lexica


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=8.0)
    ap.add_argument("--per-bag", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-seed", type=int, default=60)
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    engine = Engine(Settings.load(args.data_dir))
    lex = engine.lexicon("NWL20")
    expert = LEVELS["expert"]
    st = parse_strategy(f"best:peg=6,max_time={args.budget},threads={args.threads}")
    found = {bag: 0 for bag in range(3, 7)}
    print(f"{'seed':>4} {'bag':>3} {'seconds':>7}  choice")
    for seed in range(1, args.max_seed + 1):
        if all(n >= args.per_bag for n in found.values()):
            break
        game = Game(lex.kwg, lex.ld, lex.new_board(), seed, 50, 6)
        game.fill_rack(0)
        game.fill_rack(1)
        while not game.game_over and game.bag_size > 6:
            play_move(game, choose(engine, game, lex, expert).move)
        bag = game.bag_size
        if game.game_over or bag < 3 or found[bag] >= args.per_bag:
            continue
        found[bag] += 1
        choice = choose(engine, game, lex, st)
        print(f"{seed:>4} {bag:>3} {choice.seconds:>7.2f}  {choice.phase}: {choice.detail}", flush=True)


if __name__ == "__main__":
    main()
