"""Simulation with inference against the same simulation without, in game pairs.

Each pair plays two games from one tile seed (the game's draws come from that seed, as autoplay's pairs),
the inferring bot moving first in one and second in the other. While the bag holds tiles both bots
simulate their top static plays (same iterations, plies, candidates and sim seed); the inferring bot's
simulation draws the opponent's rack from the inference on the opponent's last play (`sim --infer`). With
the bag empty both play the best static move. Results go to a JSON-lines file one game pair per line, so a
run can be stopped and resumed (pairs already there are skipped) and several processes can share the work
(--worker i --workers n).

Run:    nice -n 10 .venv/bin/python bench/infer.py run --pairs 500 --out /tmp/infer_pairs.jsonl
Report: .venv/bin/python bench/infer.py report /tmp/infer_pairs.jsonl
Reveal: .venv/bin/python bench/infer.py reveal --positions 40   (self-play positions with a known rack: the true
        leave's posterior against its prior, and its rank among the inferred leaves)
Speed:  .venv/bin/python bench/infer.py speed --positions 6   (racks judged per second of CPU by each model, one
        thread, on midgame positions after a 3-tile play; bench/infer_quality.py measures how good each model is)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

from engine_cy.autoplay import game_seed
from engine_cy.board import Board
from engine_cy.game import Game
from macondo_server.analysis.infer import InferOptions, infer, last_play_on
from macondo_server.analysis.sim import SimJob, SimOptions
from macondo_server.engine.facade import Engine
from macondo_server.engine.replay import play_move, position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.move import format_move

from _shared import shared_lexica


def play_game(engine: Engine, lexicon: str, tile_seed: int, infer_seat: int, args) -> dict:
    lex = engine.lexicon(lexicon)
    game = Game(lex.kwg, lex.ld, Board(), tile_seed, 50, 6)
    game.fill_rack(0)
    game.fill_rack(1)
    last: list[str | None] = [None, None]     # each player's last play, as the other saw it
    inferred = judged_s = 0.0
    moves = 0
    ops = {"lex": lex.name}
    while not game.game_over:
        p = game.on_turn
        if game.bag_size > 0:
            pos = position_from_game(game, ops, show_opponent=False)
            infer_play = last[1 - p] if p == infer_seat else None
            opts = SimOptions(plies=args.plies, num_plays=args.num_plays, iterations=args.iterations, threads=1,
                              seed=tile_seed ^ (moves * 7919), infer_play=infer_play,
                              infer_tolerance=args.tolerance, infer_max_racks=args.max_racks,
                              infer_model=args.model)
            t = time.monotonic()
            res = SimJob(engine, pos, opts).run()
            if infer_play is not None:
                inferred += 1
                judged_s += time.monotonic() - t
            move = res.plays[0].gen.move
            board = pos.board
        else:
            pos = position_from_game(game, ops, show_opponent=True)
            move = engine.generate(pos, n=1).moves[0].move
            board = pos.board
        if move.kind == "place":
            last[p] = format_move(move, lex.ld, board, style="table").strip()
        elif move.kind == "exchange":
            last[p] = f"exch {len(move.tiles)}"
        else:
            last[p] = None
        play_move(game, move)
        moves += 1
    s = game.scores
    return {"infer_seat": infer_seat, "scores": list(s), "spread": s[infer_seat] - s[1 - infer_seat],
            "inferred_moves": int(inferred), "infer_sim_seconds": round(judged_s, 2)}


def cmd_run(args) -> None:
    engine = Engine(Settings.load(args.data_dir))
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                done.add(json.loads(line)["pair"])
    for pair in range(args.pairs):
        if pair % args.workers != args.worker or pair in done:
            continue
        seed = game_seed(args.seed, pair)
        t = time.monotonic()
        games = [play_game(engine, args.lexicon, seed, seat, args) for seat in (0, 1)]
        rec = {"pair": pair, "seed": seed, "games": games, "seconds": round(time.monotonic() - t, 1)}
        with out.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)


def cmd_report(args) -> None:
    pairs = [json.loads(x) for x in Path(args.file).read_text().splitlines() if x.strip()]
    wins = []
    pair_means = []
    spreads = []
    secs = 0.0
    for p in pairs:
        ws = [1.0 if g["spread"] > 0 else (0.5 if g["spread"] == 0 else 0.0) for g in p["games"]]
        wins += ws
        pair_means.append(sum(ws) / 2)
        spreads += [g["spread"] for g in p["games"]]
        secs += p["seconds"]
    n = len(pair_means)
    if n < 2:
        print(f"{n} pairs: too few")
        return
    mean = sum(pair_means) / n
    var = sum((x - mean) ** 2 for x in pair_means) / (n - 1)
    half = 1.96 * math.sqrt(var / n)
    sm = sum(spreads) / len(spreads)
    sv = sum((x - sm) ** 2 for x in spreads) / (len(spreads) - 1)
    print(f"{n} pairs ({len(wins)} games, {secs / 3600:.2f} hours of game wall time summed): inferring bot wins "
          f"{100 * mean:.2f}% (95% interval {100 * (mean - half):.2f} to {100 * (mean + half):.2f}, by pair); "
          f"mean spread {sm:+.1f} (± {1.96 * math.sqrt(sv / len(spreads)):.1f})")


def cmd_reveal(args) -> None:
    """Static self-play; at the first move of a game that plays `--tiles` tiles with the bag holding more than 10
    (and, with --min-sacrifice S, scores at least S points less than the top-scoring play: a play made for its
    leave), infer from the next player's view and compare with the true leave."""
    engine = Engine(Settings.load(args.data_dir))
    lex = engine.lexicon(args.lexicon)
    rows = []
    seed = args.seed
    t0 = time.monotonic()
    while len(rows) < args.positions and seed < args.seed + 50 * args.positions:
        seed += 1
        game = Game(lex.kwg, lex.ld, Board(), seed, 50, 6)
        game.fill_rack(0)
        game.fill_rack(1)
        while not game.game_over and game.bag_size > 10:
            pos = position_from_game(game, {"lex": lex.name}, show_opponent=True)
            best = engine.generate(pos, n=1).moves[0]
            hit = best.move.kind == "place" and best.tiles_played == args.tiles and game.history_length >= 2
            if hit and args.min_sacrifice > 0:
                hit = engine.generate(pos, sort="score", n=1).moves[0].score - best.score >= args.min_sacrifice
            text = format_move(best.move, lex.ld, pos.board, style="table").strip()
            play_move(game, best.move)
            if not hit:
                continue
            now = position_from_game(game, {"lex": lex.name}, show_opponent=False)
            res = infer(engine, last_play_on(now, text, lex), InferOptions(threads=args.threads, lexicon=lex.name,
                                                                           max_racks=args.max_racks,
                                                                           model=args.model))
            order = [v.tiles for v in res.leaves]
            true = tuple(sorted(best.leave))
            if true in order:
                v = res.leaves[order.index(true)]
                rows.append((v.posterior / v.prior, order.index(true) + 1, len(order), res.method))
            else:
                rows.append((0.0, 0, len(order), res.method))
            print(f"seed {seed} {text} kept {lex.ld.rack_str(list(best.leave))}: ratio {rows[-1][0]:.1f}, "
                  f"rank {rows[-1][1]} of {rows[-1][2]} ({res.method}, {res.seconds:.1f} s)", flush=True)
            break
    ratios = sorted(r[0] for r in rows)
    n = len(rows)
    print(f"{n} positions in {time.monotonic() - t0:.0f} s: true leave posterior/prior median {ratios[n // 2]:.1f}, "
          f"geometric mean {math.exp(sum(math.log(max(r, 1e-9)) for r in ratios) / n):.1f}, "
          f"above 1 in {sum(r > 1 for r in ratios)}/{n}, missing in {sum(r == 0 for r in ratios)}/{n}; "
          f"in the top 10 in {sum(1 <= r[1] <= 10 for r in rows)}/{n}")


def cmd_speed(args) -> None:
    """Static self-play; the first 3-tile play after move 8 of each game, inferred by each model on one thread:
    racks judged per second of process CPU time."""
    engine = Engine(Settings.load(args.data_dir))
    lex = engine.lexicon(args.lexicon)
    models = {"tolerance": {"model": "tolerance"}, "softmax": {"model": "softmax"},
              "softmax, top 100 moves": {"model": "softmax", "top_n": 100}}
    rates: dict[str, list[float]] = {k: [] for k in models}
    seed = args.seed
    found = 0
    while found < args.positions and seed < args.seed + 50 * args.positions:
        seed += 1
        game = Game(lex.kwg, lex.ld, Board(), seed, 50, 6)
        game.fill_rack(0)
        game.fill_rack(1)
        text = None
        while not game.game_over and game.bag_size > 10:
            pos = position_from_game(game, {"lex": lex.name}, show_opponent=True)
            best = engine.generate(pos, n=1).moves[0]
            text = format_move(best.move, lex.ld, pos.board, style="table").strip()
            play_move(game, best.move)
            if game.history_length >= 8 and best.move.kind == "place" and best.tiles_played == 3:
                break
            text = None
        if text is None:
            continue
        found += 1
        lp = last_play_on(position_from_game(game, {"lex": lex.name}, show_opponent=False), text, lex)
        for name, kw in models.items():
            t = time.process_time()
            res = infer(engine, lp, InferOptions(threads=1, lexicon=lex.name, **kw))
            rates[name].append(res.racks_judged / max(1e-9, time.process_time() - t))
        print(f"seed {seed} {text}: {res.racks_judged} racks; " + ", ".join(
            f"{k} {v[-1]:,.0f}/s" for k, v in rates.items()), flush=True)
    print(f"{found} positions, racks judged per CPU second (one thread), mean: " + ", ".join(
        f"{k} {sum(v) / len(v):,.0f}" for k, v in rates.items() if v))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--pairs", type=int, default=100)
    r.add_argument("--out", required=True)
    r.add_argument("--seed", type=int, default=21)
    r.add_argument("--lexicon", default="NWL20")
    r.add_argument("--iterations", type=int, default=150)
    r.add_argument("--plies", type=int, default=2)
    r.add_argument("--num-plays", type=int, default=8)
    r.add_argument("--tolerance", type=float, default=3.0)
    r.add_argument("--model", default="softmax", choices=("softmax", "tolerance"))
    r.add_argument("--max-racks", type=int, default=20_000)
    r.add_argument("--worker", type=int, default=0)
    r.add_argument("--workers", type=int, default=1)
    r.add_argument("--data-dir", default=os.environ.get("MACONDO_DATA_DIR") or shared_lexica())
    rp = sub.add_parser("report")
    rp.add_argument("file")
    rv = sub.add_parser("reveal")
    rv.add_argument("--positions", type=int, default=40)
    rv.add_argument("--tiles", type=int, default=3, help="tiles played (7 - leave size)")
    rv.add_argument("--min-sacrifice", type=int, default=0)
    rv.add_argument("--seed", type=int, default=1000)
    rv.add_argument("--threads", type=int, default=2)
    rv.add_argument("--max-racks", type=int, default=50_000)
    rv.add_argument("--model", default="softmax", choices=("softmax", "tolerance"))
    rv.add_argument("--lexicon", default="NWL20")
    rv.add_argument("--data-dir", default=os.environ.get("MACONDO_DATA_DIR") or shared_lexica())
    sp = sub.add_parser("speed")
    sp.add_argument("--positions", type=int, default=6)
    sp.add_argument("--seed", type=int, default=300)
    sp.add_argument("--lexicon", default="NWL20")
    sp.add_argument("--data-dir", default=os.environ.get("MACONDO_DATA_DIR") or shared_lexica())
    args = ap.parse_args()
    {"run": cmd_run, "report": cmd_report, "reveal": cmd_reveal, "speed": cmd_speed}[args.cmd](args)


if __name__ == "__main__":
    main()
