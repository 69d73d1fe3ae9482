"""Fit the simulation's win-probability table from the engine's own self-play.

Plays N static-equity games (both sides the same bot), and at every turn records, for the player about to
move, (spread, unseen tiles = bag + opponent rack, won: 1 / 0.5 / 0). For every unseen count u it fits a
logistic curve P(win) = 1 / (1 + exp(-(a_u * spread + b_u))) by Newton's method, smooths a_u and b_u across
u (neighbouring counts pooled with weights), and writes the table the simulation reads, as CSV: 601 rows
(spread +300 down to -300), a column for each count of unseen tiles the game can have after the opening rack
(0..93 for a 100-tile game, 0..193 for the 21x21 game's 200).

Run: .venv/bin/python scripts/make_winpct.py --lexicon NWL20 --games 20000 -o macondo_server/data/winpct.csv
     .venv/bin/python scripts/make_winpct.py --lexicon SCOWL70 --distribution english_super \
         -o macondo_server/data/lexica/SCOWL70.english_super.winpct.csv       (the 21x21 game)
"""

from __future__ import annotations

import argparse
import math
import threading
import time

import numpy as np

from engine_cy.autoplay import AutoplayWorker, game_seed
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.settings import Settings

RACK = 7


def turn_samples(history, final_scores, total_tiles: int = 100) -> list[tuple[int, int, float]]:
    """(spread for the mover, unseen tiles for the mover, result for the mover) at every turn of a game of
    `total_tiles` tiles."""
    out = []
    scores = [0, 0]
    on_board = 0
    for player, kind, _row, _col, _vert, tiles, score, rack in history:
        unseen = total_tiles - on_board - len(rack)
        spread = scores[player] - scores[1 - player]
        diff = final_scores[player] - final_scores[1 - player]
        out.append((spread, max(0, unseen), 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0))
        scores[player] += score
        if kind == "place":
            on_board += sum(1 for t in tiles if t)
    return out


def fit_logistic(s: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    a, b = 0.02, 0.0
    x = s / 100.0
    for _ in range(50):
        z = a * 100 * x + b
        p = 1 / (1 + np.exp(-z))
        g_a = np.sum(w * (y - p) * x)
        g_b = np.sum(w * (y - p))
        h = w * p * (1 - p)
        h_aa = np.sum(h * x * x) + 1e-6
        h_ab = np.sum(h * x)
        h_bb = np.sum(h) + 1e-6
        det = h_aa * h_bb - h_ab * h_ab
        if det <= 0:
            break
        da = (h_bb * g_a - h_ab * g_b) / det
        db = (h_aa * g_b - h_ab * g_a) / det
        a += da / 100
        b += db
        if abs(da) < 1e-9 and abs(db) < 1e-9:
            break
    return a, b


def self_play_samples(lex, games: int, seed: int, threads: int = 1) -> np.ndarray:
    """turn_samples of `games` static-bot games of `lex` (its leaves on both sides, its board), seeded from
    `seed`, played on `threads` threads: rows (spread, unseen, result) for the player on turn."""
    total = lex.ld.total_tiles()
    samples: list[tuple[int, int, float]] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        w = AutoplayWorker(lex.kwg, lex.klv, lex.kwg, lex.klv, lex.ld, lex.new_board())
        local = []
        for g in range(t, games, threads):
            scores, _b, _t, _r = w.play(game_seed(seed, g), g % 2)
            # history players are seats; scores are by bot: map bots to seats
            first = g % 2
            local.extend(turn_samples(w.game_state().history(), [scores[first], scores[1 - first]], total))
        with lock:
            samples.extend(local)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return np.array(samples, dtype=np.float64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--games", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("-o", "--output", default="macondo_server/data/winpct.csv")
    ap.add_argument("--data-dir")
    ap.add_argument("--distribution", help="play the lexicon with this distribution (english_super: the 21x21 game)")
    args = ap.parse_args()
    lex = LexiconRegistry(Settings.load(args.data_dir)).get(args.lexicon, args.distribution)
    cols = lex.ld.total_tiles() - RACK + 1          # unseen tiles 0 .. total - 7
    t0 = time.time()
    arr = self_play_samples(lex, args.games, args.seed, args.threads)
    print(f"{args.games} games, {len(arr)} turn samples in {time.time() - t0:.1f} s")
    spread, unseen, won = arr[:, 0], arr[:, 1].astype(int), arr[:, 2]
    params = np.zeros((cols, 2))
    counts = np.zeros(cols)
    for u in range(1, cols):
        # pool neighbouring unseen counts (triangular weights) so sparse columns stay smooth
        sel = np.abs(unseen - u) <= 3
        if sel.sum() < 200:
            sel = np.abs(unseen - u) <= 8
        wts = 4.0 - np.minimum(np.abs(unseen[sel] - u), 3)
        counts[u] = sel.sum()
        if counts[u] >= 50:
            params[u] = fit_logistic(spread[sel], won[sel], wts)
        else:
            params[u] = params[u - 1]
    # no unseen tiles: the game is decided by the sign of the spread
    table = np.zeros((601, cols))
    for row in range(601):
        s = 300 - row
        table[row, 0] = 1.0 if s > 0 else 0.5 if s == 0 else 0.0
        for u in range(1, cols):
            a, b = params[u]
            if a <= 0:
                a = params[max(1, u - 1), 0]
            table[row, u] = 1 / (1 + math.exp(-(a * s + b)))
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(f"# win probability for the player on turn: rows spread +300..-300, columns unseen tiles "
                 f"0..{cols - 1}\n")
        fh.write(f"# fitted by scripts/make_winpct.py from {args.games} {args.lexicon} static-bot games "
                 f"({lex.ld.name}, seed {args.seed})\n")
        for row in range(601):
            fh.write(",".join(f"{v:.4f}" for v in table[row]) + "\n")
    for u in (7, 20, 50, 86, cols - 8):
        a, b = params[u]
        print(f"unseen {u:2d}: a={a:.4f} b={b:+.3f}; P(win | +20) = {1 / (1 + math.exp(-(a * 20 + b))):.3f} "
              f"(samples {int(counts[u])})")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
