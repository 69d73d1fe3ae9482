"""The invariants of bench/peg_anytime.py: a time-limited pre-endgame never names a play that the facts at
that moment show to be behind, and the play it names converges to the complete solve's best as the budget
grows. The default run checks them on ONYX (1 tile in the bag); the slow suite on the 4-in-the-bag DEFNNPT
position at 30 s, whose named play must win at least 99% of the draws in the complete solve."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import load_cases, needs_cases

BENCH = Path(__file__).resolve().parents[2] / "bench"
CASES = {c["id"]: c for c in load_cases("peg")}


def _bench():
    if "peg_anytime" not in sys.modules:
        sys.path.insert(0, str(BENCH))   # its _shared helper
        spec = importlib.util.spec_from_file_location("peg_anytime", BENCH / "peg_anytime.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["peg_anytime"] = module
        spec.loader.exec_module(module)
    return sys.modules["peg_anytime"]


@needs_cases
def test_onyx_budgets_name_nothing_behind_and_reach_the_best(engine):
    bench = _bench()
    truth: dict = {}
    rows = bench.run(engine, "onyx", CASES["peg-onyx-nwl20"]["cgp"], [0.2, 1.5, 4.0], 2, truth, True)
    assert truth["best"] == 7.5 and truth["best_play"] == "13L ONYX" and truth["total"] == 8
    assert not any(r.behind for r in rows)
    named = [r for r in rows if r.named]
    assert named and all(r.named_points is not None and r.named_points <= r.best_points for r in named)
    assert rows[-1].named == "13L ONYX" and rows[-1].gap_pct == 0
    text = bench.table(rows)
    assert "| onyx | 4 | 13L ONYX |" in text and "0.00 pp" in text


@pytest.mark.slow
@needs_cases
def test_defnnpt_thirty_seconds_names_a_play_winning_99_percent(engine):
    bench = _bench()
    cgp = CASES["peg-doc1-pond-nwl20"]["cgp"]
    named, depth, behind, _, _ = bench.run_budget(engine, cgp, 30.0, 2)
    assert named and not behind and depth in ("full", "estimate")
    truth: dict = {}
    bench.solve_truth(engine, cgp, truth, 2, [named], every_play=False)   # that play alone
    assert truth["points"][named] >= 0.99 * 7920, (named, truth["points"][named])
