"""The simulation's two stopping rules side by side: best-arm identification (--stop-rule bai) against the z-test
(--stop), at the same confidence, on positions where a long fixed simulation decides the best play.

Positions: seeded NWL20 games of the static bot, cut after a seeded number of turns (bag well filled). For each,
a reference simulation of --ref-iterations iterations (its own seed) ranks the --num-plays candidates; a position
is kept when it decides the best play: the leader's win rate is above the runner-up's by more than --ref-sigmas
standard errors of their difference (each play's standard error, added in quadrature: conservative, the draws
are shared). Then each rule runs --runs times (seeds 1..runs, other draws than the reference's) with the same
cap, and names the play it ranks first.

Reported per rule: how often it named the reference's best play (with a 95% Wilson interval), how often it ended
by its own stopping rule rather than a cap, and its mean cost: playouts (one play simulated for one draw: the
unit both rules spend, counted as MAGPIE's BAI counts its iterations; a z-test iteration simulates every play
still in the race, so its cost is the sum of its plays' iterations), iterations as each run reports them (draws
used by the most simulated play) and CPU seconds. The ratio line divides the BAI figures by the z-test's.

Run: .venv/bin/python bench/sim_bai.py [--positions 12] [--runs 10] [--confidence 0.95] [--num-plays 8]
     [--plies 2] [--ref-iterations 6000] [--threads 1]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.analysis.sim import SimJob, SimOptions
from macondo_server.engine.facade import Engine
from macondo_server.engine.replay import position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.position import Position
from macondo_server.model.tiles import new_board

from _shared import shared_lexica


@dataclass
class Run:
    named: str
    playouts: int
    iterations: int
    cpu: float
    by_rule: bool         # ended by its stopping rule (not a cap)


def positions(engine: Engine, n: int, seed: int) -> list[Position]:
    lex = engine.lexicon("NWL20")
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    rng = random.Random(seed)
    out = []
    s = seed
    while len(out) < n:
        s += 1
        g = Game(lex.kwg, lex.ld, new_board(), s)
        g.fill_rack(0)
        g.fill_rack(1)
        for _ in range(rng.randint(2, 9)):
            gen.generate(g.board, g.rack(g.on_turn), g.bag_size, mode="best")
            kind, row, col, vert, tiles, score = gen.moves()[0][:6]
            g.play(kind, row, col, vert, tiles, score)
        if not g.game_over and g.bag_size > 20:
            out.append(position_from_game(g, {"lex": "NWL20"}, show_opponent=False))
    return out


def simulate(engine: Engine, pos: Position, args: argparse.Namespace, seed: int, iterations: int,
             rule: str | None) -> tuple[Run, SimJob]:
    kw: dict[str, object] = {}
    if rule == "z":
        kw = {"stop": round(args.confidence * 100)}
    elif rule == "bai":
        kw = {"stop_rule": "bai", "confidence": args.confidence}
    job = SimJob(engine, pos, SimOptions(plies=args.plies, num_plays=args.num_plays, iterations=iterations,
                                         threads=args.threads, seed=seed, **kw))  # type: ignore[arg-type]
    t0 = time.process_time()
    res = job.run()
    cpu = time.process_time() - t0
    by_rule = "confidence" in res.stopped_reason or res.stopped_reason == "one play left"
    return Run(res.plays[0].text, res.samples, res.iterations, cpu, by_rule), job


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=12)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--confidence", type=float, default=0.95, help="0.95, 0.98 or 0.99 (the z-test's levels)")
    ap.add_argument("--num-plays", type=int, default=8)
    ap.add_argument("--plies", type=int, default=2)
    ap.add_argument("--ref-iterations", type=int, default=6000)
    ap.add_argument("--ref-sigmas", type=float, default=3.0)
    ap.add_argument("--cap", type=int, default=20000, help="iteration cap of both rules (the z-test's own cutoff, "
                    "2000 + 625 x plies iterations, also applies)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1, help="the positions' seed")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    engine = Engine(Settings.load(args.data_dir))
    results: dict[str, list[tuple[Run, bool]]] = {"z": [], "bai": []}
    kept = 0
    candidates = positions(engine, args.positions * 3, args.seed)
    for i, pos in enumerate(candidates):
        if kept == args.positions:
            break
        _, ref = simulate(engine, pos, args, 10_000 + i, args.ref_iterations, None)
        ranked = ref.snapshot(final=True).plays
        a, b = ranked[0], ranked[1]
        gap = (a.win_pct - b.win_pct) / max(1e-9, math.hypot(a.win_pct_stderr, b.win_pct_stderr))
        if gap <= args.ref_sigmas:
            print(f"position {i}: not decided by the reference ({a.text} {a.win_pct:.2f}% vs {b.text} "
                  f"{b.win_pct:.2f}%, {gap:.1f} sigmas): skipped", flush=True)
            continue
        kept += 1
        line = [f"position {i}: best {a.text} ({a.win_pct:.2f}% vs {b.win_pct:.2f}%, {gap:.1f} sigmas)"]
        for rule in ("z", "bai"):
            runs = [simulate(engine, pos, args, r, args.cap, rule)[0] for r in range(1, args.runs + 1)]
            results[rule].extend((run, run.named == a.text) for run in runs)
            right = sum(run.named == a.text for run in runs)
            line.append(f"{rule}: {right}/{len(runs)} right, {statistics.fmean(r.playouts for r in runs):8.0f} "
                        f"playouts, {statistics.fmean(r.cpu for r in runs):6.2f} s")
        print("  ".join(line), flush=True)
    means = {}
    print(f"\n{kept} positions, {args.runs} runs each, confidence {args.confidence}, {args.num_plays} plays, "
          f"{args.plies} plies")
    for rule, rows in results.items():
        if not rows:
            continue
        n = len(rows)
        right = sum(ok for _, ok in rows)
        lo, hi = wilson(right, n)
        playouts = statistics.fmean(r.playouts for r, _ in rows)
        iters = statistics.fmean(r.iterations for r, _ in rows)
        cpu = statistics.fmean(r.cpu for r, _ in rows)
        means[rule] = (playouts, iters, cpu)
        print(f"{rule:>3}: named the best {right}/{n} = {right / n:.3f} (95% interval {lo:.3f}-{hi:.3f}); "
              f"ended by its rule {sum(r.by_rule for r, _ in rows)}/{n}; mean playouts {playouts:.0f}, "
              f"iterations {iters:.0f}, CPU {cpu:.2f} s")
    if len(means) == 2:
        (pb, ib, cb), (pz, iz, cz) = means["bai"], means["z"]
        print(f"bai / z: playouts {pb / pz:.3f}, iterations {ib / iz:.3f}, CPU {cb / cz:.3f}")


if __name__ == "__main__":
    main()
