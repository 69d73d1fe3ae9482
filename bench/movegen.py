"""Move generation speed: one line per fixed position,
`NAME us_all=X us_best=Y moves=N` (median CPU microseconds per generation, single thread: process time,
so other load on the machine counts little).

us_all records every move (unsorted, as the search modules use it); us_best keeps only the best.
Run: .venv/bin/python bench/movegen.py [--data-dir DIR] [--reps R]
"""

from __future__ import annotations

import argparse
import statistics
import time

from engine_cy.movegen import MoveGen
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp

from _shared import shared_lexica

EMPTY = "/".join(["15"] * 15)
POSITIONS = [
    ("empty-AEINQST", f"{EMPTY} AEINQST/ 0/0 0 lex NWL20;"),
    ("empty-two-blanks", f"{EMPTY} ??AEIRS/ 0/0 0 lex NWL20;"),
    ("vsmatt-AABDELT", "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/"
     "5I1N3N3/3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0 lex NWL20;"),
    ("peg-DEFNNPT", "12D2/1U10O2/1p10L2/1R1C3KANJIS2/1I1O3A2U4/1G1T3I2I4/1H1E3Z2C1LOO/1TED3E1BYWORD/2Q4N3AXE1/"
     "1RuBIGOS3I3/F1A5WEAVE2/O1T8E3/V1E5LOURY2/ENSNARL2HM4/A6TEMP4 DEFNNPT/ 394/365 0 lex NWL20;"),
    ("peg-ANNOPY-csw", "BEDEL10/R1R9U2/O1IT1Q5OM2/W1BIDI4YUM2/N2XI5AT3/E3G4T1R3/S1VOILE2OKA3/T3T1DISPACED1/"
     "9AWE1O1/9Z1s1FA/14R/13GO/13AH/3JUVIE4UTA/INRO3FLENCHES ?ANNOPY/AEGILNS 344/368 0 lex CSW21;"),
]


def median_us(fn, reps: int, batch: int) -> float:
    samples = []
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(batch):
            fn()
        samples.append((time.process_time() - t0) / batch * 1e6)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--batch", type=int, default=200)
    args = ap.parse_args()
    reg = LexiconRegistry(Settings.load(args.data_dir))
    for name, cgp in POSITIONS:
        pos = parse_cgp(cgp)
        try:
            lex = reg.get(pos.lexicon)
        except ValueError as exc:
            print(f"{name} skipped: {exc}")
            continue
        gen = MoveGen(lex.kwg, lex.ld, lex.klv)
        rack = pos.racks[0]
        bag = max(0, sum(pos.unseen_counts(0)) - 7)
        n = gen.generate(pos.board, rack, bag, sort=False)
        board = pos.board

        def run_all(gen=gen, board=board, rack=rack, bag=bag):
            gen.generate(board, rack, bag, sort=False)

        def run_best(gen=gen, board=board, rack=rack, bag=bag):
            gen.generate(board, rack, bag, mode="best")

        us_all = median_us(run_all, args.reps, args.batch)
        us_best = median_us(run_best, args.reps, args.batch)
        print(f"{name} us_all={us_all:.1f} us_best={us_best:.1f} moves={n}")


if __name__ == "__main__":
    main()
