"""Self-play speed: games per second with one and two threads (static-equity bots, same lexicon and leaves).

Run: .venv/bin/python bench/autoplay.py [--lexicon NWL20] [--games 400] [--data-dir DIR]
"""

from __future__ import annotations

import argparse

from macondo_server.analysis.selfplay import BotSpec, run_autoplay
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.settings import Settings

from _shared import shared_lexica


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    lex = LexiconRegistry(Settings.load(args.data_dir)).get(args.lexicon)
    for threads in (1, 2):
        s = run_autoplay(BotSpec(lex, lex.klv, "a"), BotSpec(lex, lex.klv, "b"), args.games, seed=1, threads=threads)
        print(f"{args.lexicon} threads={threads} games={s.games} games_per_second={s.games_per_second:.1f} "
              f"mean_score={sum(s.mean_score) / 2:.1f} turns_per_game={s.turns_per_game:.1f}")


if __name__ == "__main__":
    main()
