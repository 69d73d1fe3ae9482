"""How well inference finds the opponent's true leave: the tolerance model against the softmax model, with and
without the opponent's earlier turns, on positions from seeded self-play where the true rack is known.

Each seed plays a game between two copies of a static bot (`--bot`: expert, the best play by static equity;
club and novice, the engine's weaker levels: part of the lexicon, choosing with noise, novice by score without
leave values). The position is the one after the first play, from move `--from-move` + seed % 10 on, that puts
down at least `--min-tiles` tiles (so that every leave is enumerated) with more than 14 tiles in the bag before it,
seen by the next player. Every rack the mover could have held is judged once, keeping its top `--top-n` moves'
equities; each model's posterior then follows without judging again (tolerance 0 and 3; softmax at several
temperatures and partition sizes, by equity and by static win percentage). For each model, the true leave's
rank (leaves ordered by posterior, then prior) against its rank by prior alone, its posterior against its
prior (bits), how often it is ruled out, and how often the model ranks it better than the tolerance model.
The earlier turns are weighed by the production inference (analysis/infer.py) for the models named in
`--history-models`.

Run:   .venv/bin/python bench/infer_quality.py --bot expert --positions 100
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from engine_cy.board import Board
from engine_cy.game import Game
from engine_cy.infer import enumerate_leaves
from macondo_server.analysis.infer import (
    InferOptions,
    LastPlay,
    _bag_before,
    _workers,
    infer,
    last_play_on,
)
from macondo_server.analysis.player import LEVELS, _static
from macondo_server.engine.facade import EQUITY_SCALE, Engine
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import play_move, position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.move import format_move
from macondo_server.model.tiles import RACK_SIZE

from _shared import shared_lexica


@dataclass
class Case:
    seed: int
    text: str
    target: LastPlay
    history: list[LastPlay]
    true_leave: np.ndarray           # counts by letter


def find_case(engine: Engine, lex: Lexicon, seed: int, bot: str, from_move: int, min_tiles: int) -> Case | None:
    """Self-play from `seed` until the first play wanted; the mover's turns before it as the other player saw
    them."""
    game = Game(lex.kwg, lex.ld, Board(), seed, 50, 6)
    game.fill_rack(0)
    game.fill_rack(1)
    turns: list[tuple[int, LastPlay | None]] = []
    ops = {"lex": lex.name}
    st = LEVELS[bot]
    while not game.game_over and game.bag_size > 0:
        p = game.on_turn
        pos = position_from_game(game, ops, show_opponent=True)
        move = _static(engine, game, lex, st).move
        rack = list(game.rack(p))
        bag = game.bag_size
        if move.kind == "place":
            text = format_move(move, lex.ld, pos.board, style="table").strip()
        elif move.kind == "exchange":
            text = f"exch {len(move.tiles)}"
        else:
            text = "pass"
        play_move(game, move)
        view = position_from_game(game, ops, show_opponent=False)
        try:
            lp = last_play_on(view, text, lex, allow_pass=True)
        except Exception:
            lp = None
        hit = (move.kind == "place" and game.history_length > from_move and min_tiles <= move.tiles_played < RACK_SIZE
               and bag > 14)
        if hit and lp is not None:
            history = [t for who, t in turns if who == p and t is not None]
            true = np.zeros(lex.ld.size, dtype=np.int64)
            for t in rack:
                true[t] += 1
            for t in move.rack_tiles():
                true[t] -= 1
            return Case(seed, text, lp, history, true)
        turns.append((p, lp))
    return None


def judge_all(engine: Engine, lex: Lexicon, case: Case, top_n: int, threads: int) -> dict:
    """Every leave the mover can have kept, judged once: its prior weight, the play's equity and the rack's
    top moves' equities (millipoints)."""
    lp = case.target
    pool = lp.before.unseen_counts(0)
    for t in lp.played:
        pool[t] -= 1
    k = RACK_SIZE - len(lp.played)
    cand, weights = enumerate_leaves(pool, k)
    cand = np.ascontiguousarray(cand)
    n = len(cand)
    opts = InferOptions(model="softmax", top_n=top_n, threads=threads, lexicon=lex.name)
    workers = _workers(lp, lex, opts, threads)
    accepted = np.zeros(n, dtype=np.uint8)
    kept = np.zeros((n, lex.ld.size), dtype=np.uint8)
    best_eq = np.zeros(n, dtype=np.int32)
    play_eq = np.zeros(n, dtype=np.int32)
    top_eq = np.zeros((n, top_n), dtype=np.int32)
    # the workers' run with the raw top equities (as _run_workers, slices by thread)
    bounds = [n * t // threads for t in range(threads + 1)]
    import threading

    def work(t: int) -> None:
        workers[t].run(cand, bounds[t], bounds[t + 1], accepted, kept, best_eq, play_eq, None, top_eq)

    ths = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    top_sorted = -np.sort(-top_eq.astype(np.int64), axis=1)
    return {"cand": cand, "weights": weights, "play_eq": play_eq.astype(np.int64), "top": top_sorted,
            "pool": pool, "spread": lp.spread, "bag": _bag_before(lp)}


def win_value(table: np.ndarray, spread: float, unseen: int, eq_mp: np.ndarray) -> np.ndarray:
    s = np.clip(spread + eq_mp / EQUITY_SCALE, -300.0, 300.0)
    row = 300.0 - s
    lo = np.minimum(np.floor(row).astype(np.int64), 599)
    frac = row - lo
    col = min(max(unseen, 0), 93)
    return 100.0 * (table[lo, col] * (1 - frac) + table[lo + 1, col] * frac)


def loglik(j: dict, model: tuple, table: np.ndarray) -> np.ndarray:
    kind = model[0]
    top, play = j["top"], j["play_eq"]
    valid = top > -(2 ** 31)
    if kind == "tolerance":
        return np.where(play + round(model[1] * EQUITY_SCALE) >= top[:, 0], 0.0, -np.inf)
    _, temp, n, value = model
    t = top[:, :n]
    ok = valid[:, :n]
    if value == "winpct":
        unseen = j["bag"] + RACK_SIZE
        vals = np.where(ok, win_value(table, j["spread"], unseen, np.where(ok, t, 0)), -np.inf)
        vp = win_value(table, j["spread"], unseen, play)
    else:
        vals = np.where(ok, t / EQUITY_SCALE, -np.inf)
        vp = play / EQUITY_SCALE
    m = vals.max(axis=1)
    if temp == 0:
        ties = (vals == m[:, None]).sum(axis=1)
        return np.where(vp >= m, -np.log(ties), -np.inf)
    z = np.exp((vals - m[:, None]) / temp).sum(axis=1)
    return (vp - m) / temp - np.log(z)


def rank_of(logpost: np.ndarray, logprior: np.ndarray, i: int) -> int:
    """1-based rank of leave i when ordered by posterior, then prior."""
    p, q = logpost[i], logprior[i]
    return int(1 + (logpost > p).sum() + ((logpost == p) & (logprior > q)).sum())


def summarize(name: str, rows: list[dict], base: str, ref: str) -> str:
    ratios = np.array([r[name]["rank"] / r[base]["rank"] for r in rows], dtype=np.float64)
    bits = np.array([r[name]["bits"] for r in rows])
    out = np.isinf(bits)
    better = np.mean([r[name]["rank"] < r[ref]["rank"] for r in rows])
    worse = np.mean([r[name]["rank"] > r[ref]["rank"] for r in rows])
    fin = bits[~out]
    return (f"{name:<34} rank/prior median {np.median(ratios):7.4f} geo {math.exp(np.log(ratios).mean()):7.4f}  "
            f"bits {fin.mean() if len(fin) else float('nan'):5.2f}  ruled out {100 * out.mean():5.1f}%  "
            f"better/worse than {ref} {100 * better:5.1f}%/{100 * worse:5.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bot", default="expert", choices=("expert", "club", "novice"))
    ap.add_argument("--positions", type=int, default=100)
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--from-move", type=int, default=4)
    ap.add_argument("--min-tiles", type=int, default=3)
    ap.add_argument("--top-n", type=int, default=100, help="moves kept per rack (the largest partition size)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--temperatures", default="0,0.5,1,2,3,4,6,8")
    ap.add_argument("--win-temperatures", default="0.5,1,2,4")
    ap.add_argument("--sizes", default="5,20,100", help="partition sizes (top N moves) compared, at --size-temperature")
    ap.add_argument("--size-temperature", type=float, default=4.0,
                    help="T of the partition sizes' comparison (the sum reaches further down at a higher T)")
    ap.add_argument("--history-models", default="tolerance,softmax",
                    help="models whose posterior is also computed with the earlier turns (production defaults)")
    ap.add_argument("--lexicon", default="NWL20")
    ap.add_argument("--data-dir", default=os.environ.get("MACONDO_DATA_DIR") or shared_lexica())
    args = ap.parse_args()
    engine = Engine(Settings.load(args.data_dir))
    lex = engine.lexicon(args.lexicon)
    table = lex.win_table()
    defaults = InferOptions()
    temps = [float(x) for x in args.temperatures.split(",") if x]
    models: dict[str, tuple] = {"tolerance 0": ("tolerance", 0.0), "tolerance 3": ("tolerance", 3.0)}
    for t in temps:
        models[f"softmax T {t:g} N {defaults.top_n}"] = ("softmax", t, defaults.top_n, "equity")
    for n in (int(x) for x in args.sizes.split(",") if x):
        if n <= args.top_n:
            models[f"softmax T {args.size_temperature:g} N {n}"] = ("softmax", args.size_temperature, n, "equity")
    for t in (float(x) for x in args.win_temperatures.split(",") if x):
        models[f"softmax win% T {t:g} N {defaults.top_n}"] = ("softmax", t, defaults.top_n, "winpct")
    hist_models = [m for m in args.history_models.split(",") if m]
    rows: list[dict] = []
    seed = args.seed
    t0 = time.monotonic()
    judge_s = hist_s = 0.0
    while len(rows) < args.positions and seed < args.seed + 20 * args.positions:
        seed += 1
        case = find_case(engine, lex, seed, args.bot, args.from_move + seed % 10, args.min_tiles)
        if case is None:
            continue
        t1 = time.monotonic()
        j = judge_all(engine, lex, case, args.top_n, args.threads)
        judge_s += time.monotonic() - t1
        cand = j["cand"].astype(np.int64)
        hit = np.nonzero((cand == case.true_leave[None, :]).all(axis=1))[0]
        if len(hit) != 1:
            continue
        i = int(hit[0])
        logprior = np.log(j["weights"])
        row: dict = {"prior": {"rank": rank_of(logprior, logprior, i), "bits": 0.0}}
        for name, model in models.items():
            lp_ = logprior + loglik(j, model, table)
            fin = np.isfinite(lp_)
            if not fin.any():
                row[name] = {"rank": rank_of(logprior, logprior, i), "bits": -math.inf}
                continue
            norm = np.log(np.exp(lp_[fin] - lp_[fin].max()).sum()) + lp_[fin].max()
            bits = (lp_[i] - norm - (logprior[i] - np.log(j["weights"].sum()))) / math.log(2)
            row[name] = {"rank": rank_of(np.where(fin, lp_, -np.inf), logprior, i), "bits": bits}
        t1 = time.monotonic()
        for hm in hist_models:
            opts = InferOptions(model=hm, threads=args.threads, lexicon=lex.name, max_racks=1_000_000)
            res = infer(engine, case.target, opts, history=case.history)
            counts = res.leave_counts.astype(np.int64) if res.leave_counts is not None else np.zeros((0, 1))
            w = res.leave_weights if res.leave_weights is not None else np.zeros(0)
            # the posterior over every candidate (the leaves not listed have none)
            key = {bytes(c.astype(np.uint8)): float(x) for c, x in zip(counts, w, strict=True)}
            tot = sum(key.values())
            post = np.array([key.get(bytes(c.astype(np.uint8)), 0.0) for c in cand]) / (tot or 1.0)
            with np.errstate(divide="ignore"):
                lpost = np.log(post)
            bits = (lpost[i] - (logprior[i] - np.log(j["weights"].sum()))) / math.log(2)
            row[f"{hm} + history"] = {"rank": rank_of(lpost, logprior, i), "bits": bits,
                                      "turns": len(res.history)}
        hist_s += time.monotonic() - t1
        rows.append(row)
        print(f"seed {seed} {case.text}: {len(cand)} leaves, prior rank {row['prior']['rank']}, "
              + ", ".join(f"{k} {v['rank']}" for k, v in row.items() if k in ("tolerance 3", f"softmax T "
                          f"{defaults.temperature:g} N {defaults.top_n}") or k.endswith("history")), flush=True)
    n = len(rows)
    print(f"\n{args.bot}: {n} positions in {time.monotonic() - t0:.0f} s (judging {judge_s:.0f} s, history "
          f"{hist_s:.0f} s); median prior rank {np.median([r['prior']['rank'] for r in rows]):.0f}; earlier turns "
          f"weighed per position {np.mean([r.get('softmax + history', {}).get('turns', 0) for r in rows]):.1f}")
    for name in list(models) + [f"{hm} + history" for hm in hist_models]:
        print(summarize(name, rows, "prior", "tolerance 3"))


if __name__ == "__main__":
    main()
