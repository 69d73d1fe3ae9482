"""The bot levels measured: each level against the level below it, in seeded game pairs with the seats swapped.

Plays --games games for each adjacent pair of levels (beginner < novice < club < expert < champion) through
the arena (macondo_client.bots.run_bots) on a server in this process, --parallel games at a time, and prints
the upper level's win rate with its 95% interval, the mean spread and the mean scores. The champion searches:
its pairing plays --champion-games games with each player on a --clock clock.

Run: .venv/bin/python bench/ladder.py [--games 200] [--champion-games 100] [--clock 60] [--parallel 2]
     [--lexicon NWL20] [--levels beginner,novice,club,expert,champion]
"""

from __future__ import annotations

import argparse
import json
import os
import time

from macondo_client.bots import Bot, run_bots

from macondo_server.analysis.player import LEVEL_NAMES
from macondo_server.api.inprocess import connect


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--champion-games", type=int, default=100)
    ap.add_argument("--clock", type=float, default=60.0, help="each player's clock in the champion's games")
    ap.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--levels", default=",".join(LEVEL_NAMES))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    levels = [x.strip() for x in args.levels.split(",") if x.strip()]
    unknown = [x for x in levels if x not in LEVEL_NAMES]
    if unknown or len(levels) < 2:
        ap.error(f"--levels: two or more of {', '.join(LEVEL_NAMES)}")
    rows = []
    with connect(None, None) as client:
        for lower, upper in zip(levels, levels[1:], strict=False):
            searching = "champion" in (lower, upper)
            games = args.champion_games if searching else args.games
            clock = args.clock if searching else 0.0
            t0 = time.monotonic()
            _, s = run_bots(client, (Bot("upper", client, upper), Bot("lower", client, lower)), games, args.seed,
                            args.lexicon, parallel=args.parallel, clock=clock)
            rows.append({"upper": upper, "lower": lower, "games": s.games, "win_rate": round(s.win_rate, 4),
                         "win_rate_ci95": round(s.win_rate_ci95, 4), "mean_spread": round(s.mean_spread, 1),
                         "mean_score": [round(x, 1) for x in s.mean_score], "clock": clock,
                         "overtime_games": list(s.overtime_games), "seconds": round(time.monotonic() - t0, 1)})
            if not args.json:
                r = rows[-1]
                print(f"{upper:>9} vs {lower:<9} {r['games']:>5} games  {100 * s.win_rate:5.1f}% "
                      f"± {100 * s.win_rate_ci95:4.1f}  spread {s.mean_spread:+6.1f}  scores "
                      f"{s.mean_score[0]:5.1f} - {s.mean_score[1]:5.1f}" + (f"  clock {clock:g} s" if clock else ""),
                      flush=True)
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
