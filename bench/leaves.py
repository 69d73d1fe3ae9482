"""Leave sets against each other: static bots in game pairs with identical draws (bot 1 moves first in one game
of each pair, second in the other), win rate with a 95% interval computed over pairs.

Run: .venv/bin/python bench/leaves.py --lexicon NWL20 --leaves A.klv2 --leaves2 B.klv2 --pairs 20000
     .venv/bin/python bench/leaves.py --lexicon SCOWL70 --leaves2 zero   (bot 2 without leaves)
     .venv/bin/python bench/leaves.py --lexicon SCOWL70 --distribution english_super --leaves2 zero  (21x21)

`--leaves` / `--leaves2` take a KLV2 path, `default` (the lexicon's own NAME.klv2) or `zero` (no leave values).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from macondo_server.analysis.selfplay import BotSpec, run_autoplay
from macondo_server.engine.lexicon import LexiconRegistry, load_klv
from macondo_server.engine.settings import Settings

from _shared import shared_lexica


def pair_stats(records) -> dict:
    """Per-pair scores of bot 1 (wins of the pair's two games, draws half, divided by 2) and spreads: mean and
    95% interval half-widths over pairs (the two games of a pair share their draws, so pairs are the
    independent units)."""
    by_pair: dict[int, list] = {}
    for r in records:
        by_pair.setdefault(r.index // 2, []).append(r)
    points, spreads = [], []
    for games in by_pair.values():
        if len(games) != 2:
            continue
        pts = 0.0
        spr = 0
        for g in games:
            s = g.scores[0] - g.scores[1]
            pts += 1.0 if s > 0 else 0.5 if s == 0 else 0.0
            spr += s
        points.append(pts / 2)
        spreads.append(spr / 2)
    n = len(points)

    def mean_ci(xs: list[float]) -> tuple[float, float]:
        m = sum(xs) / n
        var = sum((x - m) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
        return m, 1.96 * math.sqrt(var / n) if n else 0.0

    wr, wr_ci = mean_ci(points)
    sp, sp_ci = mean_ci(spreads)
    return {"pairs": n, "win_rate": round(wr, 5), "win_rate_ci95": round(wr_ci, 5),
            "mean_spread": round(sp, 3), "mean_spread_ci95": round(sp_ci, 3),
            "split_pairs": sum(1 for p in points if p == 0.5)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--leaves", default="default", help="bot 1: KLV2 path, 'default' or 'zero'")
    ap.add_argument("--leaves2", default="default", help="bot 2: KLV2 path, 'default' or 'zero'")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    ap.add_argument("--distribution", help="play the lexicon with this distribution (english_super: the 21x21 "
                    "board)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    lex = LexiconRegistry(Settings.load(args.data_dir)).get(args.lexicon, args.distribution)

    def leaves(spec: str):
        if spec == "default":
            return lex.klv
        if spec == "zero":
            return None
        return load_klv(Path(spec), "", lex.ld)

    b1 = BotSpec(lex, leaves(args.leaves), "bot1")
    b2 = BotSpec(lex, leaves(args.leaves2), "bot2")

    def progress(done: int, total: int) -> None:
        if done % 2000 == 0:
            print(f"  {done}/{total} games", file=sys.stderr, flush=True)

    s = run_autoplay(b1, b2, 2 * args.pairs, seed=args.seed, threads=args.threads, pairs=True, progress=progress)
    out = {"lexicon": args.lexicon, "distribution": lex.ld.name, "layout": lex.layout, "leaves": args.leaves, "leaves2": args.leaves2, "seed": args.seed,
           "games": s.games, "seconds": round(s.seconds, 1), **pair_stats(s.records),
           "mean_score": [round(x, 2) for x in s.mean_score],
           "bingos_per_game": [round(x, 3) for x in s.bingos_per_game]}
    print(json.dumps(out))
    print(f"bot1 ({args.leaves}) vs bot2 ({args.leaves2}) on {args.lexicon}: {out['pairs']} pairs, win rate "
          f"{100 * out['win_rate']:.2f}% ± {100 * out['win_rate_ci95']:.2f} (95%), mean spread "
          f"{out['mean_spread']:+.2f} ± {out['mean_spread_ci95']:.2f}, {s.seconds:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
