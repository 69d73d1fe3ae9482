"""Simulation speed: iterations per second (one iteration = every candidate played out) at 2 plies on a
midgame position, 15 candidates, on 1 and 2 threads; --stats collects the per-play statistics too (score
histograms, heatmaps, the opponent's leave).

Run: .venv/bin/python bench/sim.py [--iterations 2000] [--stats] [--data-dir DIR]
"""

from __future__ import annotations

import argparse

from macondo_server.analysis.sim import SimJob, SimOptions
from macondo_server.engine.facade import Engine
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp

from _shared import shared_lexica

# a midgame position (the shared movegen case 'vsmatt', NWL20)
MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/"
           "5I1N3N3/3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 302/300 0 lex NWL20;")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--plies", type=int, default=2)
    ap.add_argument("--stats", action="store_true", help="collect the per-play statistics")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    engine = Engine(Settings.load(args.data_dir))
    pos = parse_cgp(MIDGAME)
    for threads in (1, 2):
        job = SimJob(engine, pos, SimOptions(plies=args.plies, iterations=args.iterations, threads=threads, seed=1,
                                                stats=args.stats))
        res = job.run()
        print(f"midgame plies={args.plies} stats={'on' if args.stats else 'off'} candidates={len(res.plays)} threads={threads} "
              f"iterations={res.iterations} seconds={res.seconds:.2f} "
              f"iterations_per_second={res.iterations / res.seconds:.0f} leader={res.plays[0].text}", flush=True)


if __name__ == "__main__":
    main()
