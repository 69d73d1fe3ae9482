"""Pre-endgame solver timings on the reference positions (the shared peg cases).

Default: ONYX (1 in the bag, every play, early cut-off) and AXE (2 in the bag, 6F .X.). --full adds the
4-in-the-bag position: 2L P.ND alone, and every bag-emptying play (--max-tiles-left 0), at 4 plies. --slow adds
Macondo's slow pre-endgame benchmark: ?AENORW, 1 in the bag, every play at 4 plies without early cut-off, so that
every play's tally is complete (several minutes).

Run: .venv/bin/python bench/peg.py [--threads 2] [--full] [--slow] [--prune on,off] [--endgame-cache on,off]
     [--per-play N] [--data-dir DIR]

--prune on,off runs each position both ways (the lexicon pruned to the board, the default, and the full one):
the same results, the time is what changes. --endgame-cache on,off likewise with and without the workers'
cache of endgame verdicts (engine_cy.peg: draws that differ only in the tile left in the bag share the
endgames of the replies that do not need it); `cached` counts the endgames it answered.

--per-play N (instead of the runs above): where the ?AENORW solve spends its time. Every Nth of its plays (the
generator's order) is solved alone on one thread; prints the sample's CPU time and its heaviest plays with
their share of it, endgames and nodes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.engine.facade import Engine
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.move import format_move

from _shared import shared_lexica

CASES = Path(__file__).resolve().parent.parent.parent / "shared" / "cases" / "cases.jsonl"

# positions besides the shared cases: Macondo's slow pre-endgame benchmark (its preendgame tests; it reports
# 14M (B)O, 7 of 8)
EXTRA_CGPS = {
    "aenorw-nwl20": "AnORETIC7/7R7/2C1EMEU7/1JANNY1X7/2P12/1SIDELING6/2ZAG7Q2/3MOVED3AA2/6FEAL1IT2/2NEGATES2D3/"
                    "3DOH2KEEFS2/WITH7UN2/I10LO2/LABOUR6B2/Y6POTTOS2 ?AENORW/ 332/384 0 lex NWL20;",
}

# (position id, options, which runs it: "" always, "full" with --full, "slow" with --slow)
RUNS = [
    ("peg-onyx-nwl20", dict(endgame_plies=3, early_cutoff=True), ""),
    ("peg-onyx-nwl20", dict(endgame_plies=4, early_cutoff=True), ""),
    ("peg-axe-2bag-csw21", dict(endgame_plies=2, only_solve=["6F .X."]), ""),
    ("peg-doc1-pond-nwl20", dict(endgame_plies=4, only_solve=["2L P.ND"]), "full"),
    ("peg-doc1-bagempty-nwl20", dict(endgame_plies=4, max_tiles_left=0, early_cutoff=True), "full"),
    ("aenorw-nwl20", dict(endgame_plies=4, max_tiles_left=-1), "slow"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--full", action="store_true", help="include the 4-in-the-bag runs (minutes)")
    ap.add_argument("--slow", action="store_true", help="include ?AENORW over every play (several minutes)")
    ap.add_argument("--prune", default="on", help="on, off or on,off: search in the lexicon pruned to the board")
    ap.add_argument("--endgame-cache", default="on", help="on, off or on,off: the workers' endgame verdict cache")
    ap.add_argument("--per-play", type=int, default=0, metavar="N",
                    help="time every Nth ?AENORW play alone on one thread (instead of the runs)")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    if args.per_play < 0:
        ap.error("--per-play must be at least 1")
    prunes = [{"on": True, "off": False}[x] for x in args.prune.split(",")]
    caches = [{"on": True, "off": False}[x] for x in args.endgame_cache.split(",")]
    engine = Engine(Settings.load(args.data_dir))
    if args.per_play:
        per_play(engine, args.per_play)
        return
    cases = {json.loads(line)["id"]: json.loads(line) for line in CASES.read_text().splitlines()}
    for cid, kw, which in RUNS:
        if (which == "full" and not args.full) or (which == "slow" and not args.slow):
            continue
        cgp = EXTRA_CGPS[cid] if cid in EXTRA_CGPS else cases[cid]["cgp"]
        for prune in prunes:
            for cache in caches:
                opts = PegOptions(threads=args.threads, prune_lexicon=prune, **kw)
                job = PegJob(engine, parse_cgp(cgp), opts)
                for worker in job.workers:
                    worker.use_endgame_cache = cache
                res = job.run()
                w = res.winner
                hits = sum(worker.endgame_hits for worker in job.workers)
                print(f"{cid:26s} {kw} threads={args.threads} prune={'on' if prune else 'off'} "
                      f"cache={'on' if cache else 'off'} winner={w.text if w else None} "
                      f"wins={w.points if w else 0}/{res.total_permutations} endgames={res.endgames} "
                      f"cached={hits} nested={res.nested_calls} nodes={sum(wk.nodes for wk in job.workers)} "
                      f"seconds={res.seconds:.2f}", flush=True)


def per_play(engine: Engine, step: int, show: int = 12) -> None:
    """Every `step`th ?AENORW play solved alone (one thread, 4 plies, no quick pass): the heaviest first."""
    pos = parse_cgp(EXTRA_CGPS["aenorw-nwl20"])
    moves = [m.move for m in engine.generate(pos, lexicon="NWL20").moves if m.move.kind == "place"]
    texts = [format_move(m, pos.ld, pos.board) for m in moves][::step]
    rows = []
    for text in texts:
        opts = PegOptions(threads=1, endgame_plies=4, only_solve=[text], max_tiles_left=-1, quick_pass=False)
        job = PegJob(engine, pos, opts)
        t0 = time.process_time()
        res = job.run()
        rows.append((time.process_time() - t0, text, res.endgames, sum(w.nodes for w in job.workers)))
    rows.sort(key=lambda r: -r[0])
    total = sum(r[0] for r in rows)
    print(f"{len(rows)} of {len(moves)} plays (every {step}th), {total:.1f} s of CPU", flush=True)
    acc = 0.0
    for cpu, text, endgames, nodes in rows[:show]:
        acc += cpu
        print(f"{text:14s} {cpu:6.2f} s  cumulative {acc / total:6.1%}  endgames={endgames} nodes={nodes}")


if __name__ == "__main__":
    main()
