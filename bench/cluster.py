"""Pre-endgames on a Dask cluster: throughput, parallel efficiency, task sizes and a projection.

  scaling   the same solve in-process (1 thread) and on local:1 .. local:N worker processes (each run after a
            warm-up solve, so worker start and lexicon loading are not counted): endgames/s, parallel
            efficiency T(in-process, 1 thread) / (n x T(n)), tasks, and the distribution of item (play x draw
            group) and task durations on the workers.
  overhead  in-process with 2 threads against local:2 on one solve (default: the 1-in-the-bag ONYX case at
            2 plies; --pnd: 2L P.ND at 4 plies, the reference comparison: 636 s on one thread, so about 6 min per
            solve with both cores of an idle 2-core machine and 12 min a round): wall and CPU seconds (the cluster's: worker, nanny and client
            processes), endgame search nodes, overhead in %; --rounds N interleaves N rounds (medians).
  project   times a random sample of (play x draw group) items of a 3-in-the-bag position, each solved alone on
            one core with a cap, and projects the whole solve onto 16, 64 and 256 cores (assumptions printed).

Run: .venv/bin/python bench/cluster.py scaling [--workers 2] | overhead [--pnd] [--rounds N] | project [--sample 40 --cap 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.engine.facade import Engine
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp
from macondo_server.runtime.cluster import Cluster

from _shared import SHARED, shared_lexica

CASES = SHARED / "cases" / "cases.jsonl"
# 3 in the bag: the pond position (DEFNNPT, 4 in the bag) after 9L ...D with the draw order IAET, the
# opponent to move with AGIIRSU (macondo commit CGP '9L ...D' --tileorder IAET)
THREE_IN_BAG = ("12D2/1U10O2/1p10L2/1R1C3KANJIS2/1I1O3A2U4/1G1T3I2I4/1H1E3Z2C1LOO/1TED3E1BYWORD/2Q4N3AXED/"
                "1RuBIGOS3I3/F1A5WEAVE2/O1T8E3/V1E5LOURY2/ENSNARL2HM4/A6TEMP4 AGIIRSU/ 365/411 0 lex NWL20;")


def _case(name: str) -> dict:
    for line in Path(CASES).read_text().splitlines():
        c = json.loads(line)
        if c["id"] == name:
            return c
    raise SystemExit(f"case {name} not found in {CASES}")


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def _dist(xs: list[float]) -> str:
    if not xs:
        return "none"
    return (f"n={len(xs)} mean {statistics.mean(xs) * 1000:.1f} ms, p50 {_pct(xs, .5) * 1000:.1f}, "
            f"p90 {_pct(xs, .9) * 1000:.1f}, p99 {_pct(xs, .99) * 1000:.1f}, max {max(xs) * 1000:.1f} ms")


def _solve(engine, cgp: str, opts: dict, threads: int, cluster=None):
    job = PegJob(engine, parse_cgp(cgp), PegOptions(threads=threads, **opts), cluster=cluster)
    t0 = time.perf_counter()
    res = job.run()
    return res, time.perf_counter() - t0, job


def _signature(res) -> list:
    return [(p.text, p.points, sorted((g.label, g.outcome) for g in p.groups)) for p in res.plays]


def scaling(engine, args) -> None:
    c = _case(args.case)
    opts = json.loads(args.opts)
    cpu0 = time.process_time()
    ref, t1, _ = _solve(engine, c["cgp"], opts, 1)
    cpu1 = time.process_time() - cpu0
    print(f"{args.case} {opts}: in-process 1 thread {t1:.2f} s ({cpu1:.2f} CPU s), {ref.endgames} endgames, "
          f"{ref.endgames / t1:.0f} endgames/s")
    rows = []
    for n in range(1, args.workers + 1):
        with Cluster(f"local:{n}", data_dirs=[str(d) for d in engine.settings.data_dirs]) as cl:
            _solve(engine, c["cgp"], opts, 1, cl)          # warm-up: worker lexicon loads and first tables
            before = _tree_cpu()
            here = time.process_time()
            res, tn, job = _solve(engine, c["cgp"], opts, 1, cl)
            here = time.process_time() - here
            after = _tree_cpu()
            cpu_w = sum(after[k] - before.get(k, 0.0) for k in after)
        same = _signature(res) == _signature(ref)
        d = job._dispatch.stats.durations if job._dispatch else []
        eff = t1 / (n * tn)
        rows.append((n, tn, res.endgames / tn, eff, job._dispatch.stats.tasks if job._dispatch else 0, same))
        print(f"local:{n}: {tn:.2f} s, {res.endgames} endgames, {res.endgames / tn:.0f} endgames/s, "
              f"efficiency {eff:.2f}, tasks {rows[-1][4]}, identical result {same}")
        print(f"   item durations on the workers: {_dist(d)}")
        print(f"   CPU seconds: workers and nannies {cpu_w:.2f}, client and scheduler {here:.2f}; CPU efficiency (in-process CPU / cluster "
              f"CPU) {cpu1 / (cpu_w + here):.2f}; a machine with {n} free cores would take about "
              f"{max(cpu_w / n, here):.2f} s")
    print("\n| workers | seconds | endgames/s | parallel efficiency | tasks | identical |")
    print("|---|---|---|---|---|---|")
    print(f"| in-process, 1 thread | {t1:.2f} | {ref.endgames / t1:.0f} | 1.00 | - | - |")
    for n, tn, rate, eff, tasks, same in rows:
        print(f"| local:{n} | {tn:.2f} | {rate:.0f} | {eff:.2f} | {tasks} | {same} |")


def _tree_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of every process below this one (the local cluster's nannies and workers)."""
    import psutil

    out = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
            out[proc.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def overhead(engine, args) -> None:
    """In-process with 2 threads against local:2 on one solve: wall, CPU (this process; the cluster's worker
    and nanny processes), endgame search nodes, and the overhead in %."""
    if args.pnd:
        c = _case("peg-doc1-pond-nwl20")
        opts = dict(endgame_plies=4, only_solve=["2L P.ND"])
    else:
        c = _case(args.case)
        opts = json.loads(args.opts)
    if args.private_tables:
        os.environ["MACONDO_CLUSTER_SHARED_TT"] = "0"
    print(f"{c['id']} {opts}, {args.rounds} round(s); load average now {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    rows = []
    with Cluster("local:2", data_dirs=[str(d) for d in engine.settings.data_dirs]) as cl:
        # warm-up: the workers load the lexicon (the in-process engine has it loaded before the clock starts)
        _solve(engine, c["cgp"], {**opts, "endgame_plies": 1}, 1, cl)
        for _ in range(args.rounds):
            cpu = time.process_time()
            a, ta, ja = _solve(engine, c["cgp"], opts, 2)
            cpu_a = time.process_time() - cpu
            before = _tree_cpu()
            cpu = time.process_time()
            b, tb, jb = _solve(engine, c["cgp"], opts, 1, cl)
            cpu_b = time.process_time() - cpu
            after = _tree_cpu()
            cpu_w = sum(after[k] - before.get(k, 0.0) for k in after)
            same = _signature(a) == _signature(b)
            rows.append((ta, cpu_a, ja.nodes(), tb, cpu_w, cpu_b, jb.nodes(), same, jb))
            print(f"  in-process 2 threads {ta:.2f} s ({cpu_a:.2f} CPU s, {ja.nodes():,} nodes); local:2 {tb:.2f} s "
                  f"(workers and nannies {cpu_w:.2f} + client and scheduler {cpu_b:.2f} CPU s, {jb.nodes():,} "
                  f"nodes, {jb._dispatch.stats.tasks if jb._dispatch else 0} tasks); identical {same}")
    ta = statistics.median(r[0] for r in rows)
    tb = statistics.median(r[3] for r in rows)
    ca = statistics.median(r[1] for r in rows)
    cb = statistics.median(r[4] + r[5] for r in rows)
    d = rows[-1][8]._dispatch.stats.durations if rows[-1][8]._dispatch else []
    print(f"   item durations on the workers (last round): {_dist(d)}")
    print("\n| run | wall s | CPU s | endgame nodes | identical |")
    print("|---|---|---|---|---|")
    print(f"| in-process, 2 threads | {ta:.2f} | {ca:.2f} | {rows[-1][2]:,} | - |")
    print(f"| local:2 | {tb:.2f} | {cb:.2f} | {rows[-1][6]:,} | {all(r[7] for r in rows)} |")
    print(f"\nwall overhead {100 * (tb / ta - 1):+.1f}% (target: at most +15%), CPU overhead {100 * (cb / ca - 1):+.1f}%"
          f"{' (medians of ' + str(len(rows)) + ' interleaved rounds)' if len(rows) > 1 else ''}")


def project(engine, args) -> None:
    from engine_cy.endgame import TranspositionTable
    from engine_cy.peg import PegWorker

    pos = parse_cgp(THREE_IN_BAG)
    opts = PegOptions(endgame_plies=args.plies, threads=1, max_tiles_left=args.max_tiles_left, quick_pass=False)
    job = PegJob(engine, pos, opts)
    items = [(pi, gi) for pi, p in enumerate(job.plays) for gi in range(len(p.groups))]
    rng = random.Random(args.seed)
    sample = rng.sample(items, min(args.sample, len(items)))
    cfg = job._phase_config(quick=False)
    times, capped = [], 0
    for pi, gi in sample:
        p = job.plays[pi]
        g = p.groups[gi]
        # each item alone: a fresh worker and table, as a cold cluster task would have
        w = PegWorker(job.game, job.lex.kwg, job.lex.klv, job.lex.ld, TranspositionTable(64), job.bingo_bonus)
        for k, v in cfg.items():
            setattr(w, k, v)
        w.set_deadline(time.monotonic() + args.cap)
        t0 = time.perf_counter()
        outcome, _ = w.solve_draw(job.move_tuple(p), g.seq, job.opp_counts(g.seq))
        dt = time.perf_counter() - t0
        if outcome == 2 and dt >= args.cap * 0.99:
            capped += 1
        times.append(dt)
    mean = statistics.mean(times)
    total = mean * len(items)
    print(f"3-in-the-bag position ({len(job.plays)} plays with at most {args.max_tiles_left} tile(s) left in the "
          f"bag, {len(items)} play x draw-group items, {job.total} ordered draws), {args.plies}-ply endgames")
    print(f"sample of {len(sample)} items, one core each: {_dist(times)}; {capped} hit the {args.cap:.0f} s cap "
          f"(their time is a lower bound)")
    print(f"work: {len(items)} items x {mean:.2f} s = {total / 3600:.2f} core-hours")
    print("\n| cores | projected wall time | assumptions |")
    print("|---|---|---|")
    for cores in (16, 64, 256):
        wall = total / (cores * args.efficiency) + max(times)
        print(f"| {cores} | {wall / 60:.1f} min | efficiency {args.efficiency:.2f}, + the longest item "
              f"{max(times):.0f} s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("scaling", "overhead", "project"))
    ap.add_argument("--workers", type=int, default=2, help="scaling: local:1 .. local:N")
    ap.add_argument("--case", default="peg-onyx-nwl20")
    ap.add_argument("--opts", default='{"endgame_plies": 2}', help="PegOptions as JSON")
    ap.add_argument("--pnd", action="store_true", help="overhead: 2L P.ND at 4 plies (long)")
    ap.add_argument("--rounds", type=int, default=1, help="overhead: interleaved rounds (medians)")
    ap.add_argument("--private-tables", action="store_true",
                    help="overhead: one transposition table per worker process (the default shares one per machine)")
    ap.add_argument("--plies", type=int, default=4, help="project: endgame plies")
    ap.add_argument("--max-tiles-left", type=int, default=1, help="project: the candidate filter (as peg)")
    ap.add_argument("--sample", type=int, default=40, help="project: items timed")
    ap.add_argument("--cap", type=float, default=20.0, help="project: seconds per item at most")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--efficiency", type=float, default=0.9, help="project: parallel efficiency assumed")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    engine = Engine(Settings.load(args.data_dir))
    {"scaling": scaling, "overhead": overhead, "project": project}[args.mode](engine, args)


if __name__ == "__main__":
    main()
