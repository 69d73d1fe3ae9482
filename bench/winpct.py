"""How well win-probability tables predict games they were not fitted on: static-bot self-play games of a
lexicon (a seed other than the tables' own), and at every turn the table's probability that the player on turn
wins, against what happened. Prints, per table, the mean log loss and Brier score over those turns (lower is
better) and the calibration: the mean prediction and the win rate in bins of the prediction.

Run: .venv/bin/python bench/winpct.py --lexicon FR_DEBIAN [--distribution english_super] [--games 4000]
     [--seed 77] [--tables own,default]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from macondo_server.engine.lexicon import DEFAULT_WINPCT, LexiconRegistry, load_win_table
from macondo_server.engine.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from make_winpct import self_play_samples  # noqa: E402  (the fit's own games and reading of them)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--distribution")
    ap.add_argument("--games", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=77, help="not the tables' fitting seed (2026)")
    ap.add_argument("--tables", default="own,default", help="own (the lexicon's), default, or CSV paths")
    ap.add_argument("--data-dir")
    args = ap.parse_args()
    lex = LexiconRegistry(Settings.load(args.data_dir)).get(args.lexicon, args.distribution)
    arr = self_play_samples(lex, args.games, args.seed)
    spread = np.clip(arr[:, 0], -300, 300).astype(int)
    unseen, won = arr[:, 1].astype(int), arr[:, 2]
    print(f"{lex.name} ({lex.ld.name}, {lex.layout}): {args.games} games, {len(arr)} turns, seed {args.seed}")
    for name in args.tables.split(","):
        path = lex.winpct if name == "own" else DEFAULT_WINPCT if name == "default" else Path(name)
        table = load_win_table(str(path))
        p = table[300 - spread, np.minimum(unseen, table.shape[1] - 1)]
        p = np.clip(p, 1e-6, 1 - 1e-6)
        log_loss = -np.mean(won * np.log(p) + (1 - won) * np.log(1 - p))
        brier = np.mean((p - won) ** 2)
        bins = np.minimum((p * 10).astype(int), 9)
        calib = ", ".join(f"{np.mean(p[bins == b]):.2f}:{np.mean(won[bins == b]):.2f}" for b in range(10)
                          if np.any(bins == b))
        print(f"  {name:8s} {path.name:36s} log loss {log_loss:.4f}  Brier {brier:.4f}  "
              f"({table.shape[1]} columns)\n           predicted:won by decile  {calib}")


if __name__ == "__main__":
    main()
