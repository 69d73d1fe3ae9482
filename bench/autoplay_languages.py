"""Self-play speed per language: games per second of static-equity bots (one thread) in English (NWL20, the
reference), French (FRA20), Catalan (DISC2) and on the 21x21 board (CEL_super, with NWL20's leaves: none are
published for it), each lexicon's games against themselves, the same seed for all. Games per second of CPU
time (of every thread of the process: with one thread, the games' own), so that other work on the machine
moves the figures less. The rounds run the lexica in turn; each figure is the median over the rounds, and the
ratio to the first lexicon is the median of the rounds' ratios.

Run: .venv/bin/python bench/autoplay_languages.py [--games 400] [--rounds 3] [--threads 1]
     [--lexica NWL20,FRA20,DISC2,CEL_super] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import time

from macondo_server.analysis.selfplay import BotSpec, run_autoplay
from macondo_server.engine.lexicon import LexiconRegistry, load_klv
from macondo_server.engine.settings import Settings

from _shared import shared_lexica

# leaves for a lexicon that has none of its own (a leave file of the same letters)
BORROWED_LEAVES = {"CEL_super": "NWL20"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=400, help="games per round (default 400)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per lexicon, interleaved; the median is shown")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lexica", default="NWL20,FRA20,DISC2,CEL_super")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    reg = LexiconRegistry(Settings.load(args.data_dir))
    bots = {}
    for name in args.lexica.split(","):
        lex = reg.get(name)
        klv, leaves = lex.klv, name
        if klv is None and name in BORROWED_LEAVES:
            leaves = BORROWED_LEAVES[name]
            klv = load_klv(reg.find_leaves(leaves), f"{leaves} leaves: ", lex.ld)
        bots[name] = (BotSpec(lex, klv, "a"), BotSpec(lex, klv, "b"), leaves if klv is not None else "none")
    rates: dict[str, list[float]] = {name: [] for name in bots}
    last = {}
    for _ in range(args.rounds):
        for name, (a, b, _leaves) in bots.items():
            cpu = time.process_time()
            s = run_autoplay(a, b, args.games, seed=1, threads=args.threads)
            rates[name].append(s.games / (time.process_time() - cpu))
            last[name] = s
    first = next(iter(bots))
    print(f"{'lexicon':<10} {'distribution':<14} {'board':<11} {'leaves':<7} {'games/s':>8} "
          f"{'vs ' + first:>9} {'turns/game':>10} {'mean score':>10}")
    for name, (a, _b, leaves) in bots.items():
        s = last[name]
        # the ratio of each round's rates (the rounds are interleaved), then the median: steadier than the rates
        ratio = statistics.median(x / y for x, y in zip(rates[name], rates[first], strict=True))
        print(f"{name:<10} {a.lexicon.ld.name:<14} {a.lexicon.layout:<11} {leaves:<7} "
              f"{statistics.median(rates[name]):>8.0f} {ratio:>9.2f} {s.turns_per_game:>10.1f} "
              f"{sum(s.mean_score) / 2:>10.1f}")


if __name__ == "__main__":
    main()
