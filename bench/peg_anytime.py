"""Time-limited pre-endgames against their complete answers: the play named at each budget and its win % in
the complete solve, beside the best play's.

For each position (the shared peg cases: ONYX with 1 tile in the bag, AXE with 2, DEFNNPT with 4) and each
time budget, the solve runs with the default options (all plays leaving at most one tile in the bag, 4-ply
endgames) on --threads threads and names its leader; the table gives that play, how it was named (the
leader's depth), whether the facts at that moment showed it to be behind another play (never: the bench
fails if so), its points in the complete solve and the gap to the best play's.

The complete answers come from bench/data/peg_anytime_truth.json: the best play's points from a complete
solve of every play with early cut-off (exact for the best play), and the exact points of every play a
budget named, each from a complete solve of that play alone. --truth solves what the file lacks and adds
it. A complete solve of every play of DEFNNPT takes hours on 2 cores: --known PLAY,... instead solves only
the plays named (and those given), and the table then compares with the best of the plays solved
completely ("best known", marked with *), which can only understate the gap.

Run: .venv/bin/python bench/peg_anytime.py [--budgets 2,5,10,20,30] [--cases onyx,axe,defnnpt] [--threads 2]
     [--truth [--known "E5 FET,I3 P.NT"]] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.engine.facade import Engine
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp

from _shared import shared_lexica

CASES_FILE = Path(__file__).resolve().parent.parent.parent / "shared" / "cases" / "cases.jsonl"
TRUTH_FILE = Path(__file__).resolve().parent / "data" / "peg_anytime_truth.json"

POSITIONS = {
    "onyx": "peg-onyx-nwl20",
    "axe": "peg-axe-2bag-csw21",
    "defnnpt": "peg-doc1-pond-nwl20",
}


@dataclass
class Row:
    case: str
    budget: float
    seconds: float
    named: str            # the play named ("" with none)
    depth: str            # full, estimate, quick, only (result.PegResult.leader_depth)
    behind: bool          # the snapshot's own bounds showed the named play behind another
    ties: int             # plays tied with it by everything known
    named_points: float | None
    best_points: float
    total: int
    best_exact: bool = True   # False: the best of the plays solved completely, not of every play

    @property
    def gap_pct(self) -> float | None:
        if self.named_points is None:
            return None
        return 100 * (self.best_points - self.named_points) / self.total


def load_cases() -> dict[str, dict[str, Any]]:
    return {json.loads(line)["id"]: json.loads(line) for line in CASES_FILE.read_text().splitlines() if line}


def load_truth() -> dict[str, Any]:
    return json.loads(TRUTH_FILE.read_text()) if TRUTH_FILE.is_file() else {}


def save_truth(truth: dict[str, Any]) -> None:
    TRUTH_FILE.parent.mkdir(parents=True, exist_ok=True)
    TRUTH_FILE.write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")


def solve_truth(engine: Engine, cgp: str, truth: dict[str, Any], threads: int, plays: list[str],
                every_play: bool = True) -> None:
    """Fill `truth` (one case): the best points (a complete solve of every play, early cut-off; without
    `every_play`, the best of the plays solved alone: "best known") and each play's in `plays`."""
    pos = parse_cgp(cgp)
    if every_play and not truth.get("best_exact"):
        t0 = time.monotonic()
        res = PegJob(engine, pos, PegOptions(threads=threads, early_cutoff=True)).run()
        assert res.finished and res.winner is not None
        truth["best"] = res.winner.points
        truth["best_play"] = res.winner.text
        truth["best_exact"] = True
        truth["total"] = res.total_permutations
        truth.setdefault("points", {}).update({p.text: p.points for p in res.plays if not p.cut_off})
        truth["seconds_best"] = round(time.monotonic() - t0, 1)
    for text in plays:
        if text and text not in truth.setdefault("points", {}):
            res = PegJob(engine, pos, PegOptions(threads=threads, only_solve=[text], skip_tiebreaker=True)).run()
            assert res.finished
            truth["points"][text] = res.plays[0].points
            truth["total"] = res.total_permutations
    if not truth.get("best_exact") and truth.get("points"):
        best = max(truth["points"], key=lambda t: truth["points"][t])
        truth["best"], truth["best_play"] = truth["points"][best], best


def run_budget(engine: Engine, cgp: str, budget: float, threads: int) -> tuple[str, str, bool, int, float]:
    """One time-limited solve with the default options: (named play, its depth, shown behind by the
    snapshot's bounds, ties, seconds)."""
    res = PegJob(engine, parse_cgp(cgp), PegOptions(threads=threads, max_time=budget)).run()
    lead = res.leader
    if lead is None:
        return "", "", False, 0, res.seconds
    behind = any(q.lower > lead.upper for q in res.plays)
    return lead.text, res.leader_depth, behind, len(res.leader_ties), res.seconds


def run(engine: Engine, case: str, cgp: str, budgets: list[float], threads: int, truth: dict[str, Any],
        fill_truth: bool, every_play: bool = True) -> list[Row]:
    rows = []
    for b in budgets:
        named, depth, behind, ties, seconds = run_budget(engine, cgp, b, threads)
        if fill_truth:
            solve_truth(engine, cgp, truth, threads, [named], every_play)
        pts = truth.get("points", {}).get(named)
        rows.append(Row(case, b, seconds, named, depth, behind, ties, pts, truth.get("best", float("nan")),
                        truth.get("total", 0), bool(truth.get("best_exact"))))
    if fill_truth:   # the best known may have risen with the plays solved since
        for r in rows:
            r.best_points = truth.get("best", r.best_points)
    return rows


def table(rows: list[Row]) -> str:
    out = ["| position | budget (s) | named play | named by | ties | its wins (complete solve) | best play's | "
           "gap |", "|---|---:|---|---|---:|---:|---:|---:|"]
    for r in rows:
        pts = "unknown" if r.named_points is None else f"{r.named_points:g} ({100 * r.named_points / r.total:.2f}%)"
        gap = "" if r.gap_pct is None else f"{r.gap_pct:.2f} pp"
        star = "" if r.best_exact else "*"
        out.append(f"| {r.case} | {r.budget:g} | {r.named or '(none)'} | {r.depth}{' BEHIND' if r.behind else ''} "
                   f"| {r.ties} | {pts} | {r.best_points:g}{star} ({100 * r.best_points / r.total:.2f}%) | {gap} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", default="2,5,10,20,30")
    ap.add_argument("--cases", default="onyx,axe,defnnpt")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--truth", action="store_true", help="solve the complete answers the truth file lacks")
    ap.add_argument("--known", default="", help="with --truth: solve only the named plays and these (comma-"
                    "separated, e.g. 'E5 FET,I3 P.NT'), not every play; the best is then the best known")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    cases = load_cases()
    engine = Engine(Settings.load(args.data_dir))
    truth = load_truth()
    budgets = [float(b) for b in args.budgets.split(",")]
    rows: list[Row] = []
    for name in args.cases.split(","):
        cid = POSITIONS[name]
        t = truth.setdefault(name, {})
        known = [k.strip() for k in args.known.split(",") if k.strip()]
        if args.truth:
            solve_truth(engine, cases[cid]["cgp"], t, args.threads, known, every_play=not known)
            save_truth(truth)
        rows += run(engine, name, cases[cid]["cgp"], budgets, args.threads, t, args.truth, every_play=not known)
        if args.truth:
            save_truth(truth)
        print(table([r for r in rows if r.case == name]), flush=True)
    bad = [r for r in rows if r.behind]
    if bad:
        raise SystemExit(f"named a play the facts showed to be behind: {bad}")


if __name__ == "__main__":
    main()
