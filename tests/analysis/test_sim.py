"""Simulation: determinism, the estimator's statistics, an obvious best play, options and errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from macondo_server.analysis.sim import SimJob, SimOptions, win_table
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.text import FormatError

EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINQST/ 0/0 0 lex NWL20;"


def _run(engine, cgp, **kw):
    return SimJob(engine, parse_cgp(cgp), SimOptions(**kw)).run()


@pytest.fixture(scope="module")
def nwl(registry):
    from conftest import have_lexicon

    if not have_lexicon("NWL20"):
        pytest.skip("shared NWL20 lexicon absent")
    return registry.get("NWL20")


def test_win_table_shape_and_monotone():
    t = win_table()
    assert t.shape == (601, 94)
    # more spread is never worse; a decided game at 0 unseen
    assert (t[:-1, 1:] >= t[1:, 1:] - 1e-9).all()
    assert t[0, 0] == 1.0 and t[600, 0] == 0.0 and t[300, 0] == 0.5


def _figures(res) -> tuple:
    """A simulation's outcome without its timing: the iterations, the stop, each play's statistics."""
    return res.iterations, res.stopped_reason, [
        (p.text, p.score, p.leave, p.n, p.win_pct, p.win_pct_stderr, p.equity, p.equity_stderr, p.pruned,
         p.ply_scores, p.ply_bingo_pct) for p in res.plays]


def test_seeded_sim_is_reproducible(engine, nwl):
    a = _figures(_run(engine, EMPTY, iterations=256, num_plays=5, seed=7, threads=2))
    b = _figures(_run(engine, EMPTY, iterations=256, num_plays=5, seed=7, threads=2))
    assert a == b
    c = _figures(_run(engine, EMPTY, iterations=256, num_plays=5, seed=8, threads=2))
    assert c[2] != a[2]


def test_empty_board_qi_is_simulated(engine, nwl):
    res = _run(engine, EMPTY, iterations=300, num_plays=10, seed=1, threads=2)
    texts = [p.text for p in res.plays]
    assert any(t.endswith(" QI") for t in texts)
    assert res.iterations == 300
    for p in res.plays:
        assert 0 <= p.win_pct <= 100 and p.n == 300 and p.equity_stderr > 0
        assert len(p.ply_scores) == 2 and all(s > 0 for s in p.ply_scores)
    # QI keeps AENST: it beats the plays that keep the S and Q-less junk by a clear margin
    assert res.plays[0].text.endswith(" QI")


def test_same_play_twice_converges_and_stderr_shrinks(engine, nwl):
    # the same candidate named twice: identical samples, hence identical estimates
    res = _run(engine, EMPTY, iterations=200, num_plays=1, plays=["8G QI", "8G QI"], seed=3, threads=1)
    assert len(res.plays) == 1
    r1 = _run(engine, EMPTY, iterations=100, num_plays=2, seed=3, threads=1)
    r4 = _run(engine, EMPTY, iterations=1600, num_plays=2, seed=3, threads=1)
    for p1 in r1.plays:
        p4 = next(p for p in r4.plays if p.text == p1.text)
        ratio = p1.equity_stderr / p4.equity_stderr
        assert 2.5 < ratio < 6.0, ratio   # 1/sqrt(n): 16x the samples, about 4x smaller error
        assert abs(p1.equity - p4.equity) < 4 * math.hypot(p1.equity_stderr, p4.equity_stderr)


def test_obvious_best_play_found_and_stop(engine, nwl):
    # a rack with a bingo and an otherwise poor board: the bingo must lead
    cgp = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15 AEINRST/ 10/0 0 lex NWL20;"
    res = _run(engine, cgp, iterations=2000, num_plays=6, seed=1, threads=2, stop=95)
    assert res.plays[0].gen.tiles_played == 7
    assert res.iterations <= 2000


def test_errors(engine):
    with pytest.raises(ValueError, match="stop"):
        SimOptions(stop=90).validate()
    with pytest.raises(FormatError, match="not a legal play"):
        SimJob(engine, parse_cgp(EMPTY.replace(" lex NWL20;", "")), SimOptions(plays=["8H ZZZ"]))


def test_cli_json(nwl):
    out = subprocess.run([sys.executable, "-m", "macondo_server", "sim", EMPTY, "--iterations", "64", "--num-plays",
                          "3", "--play", "8F QAT", "--json", "--seed", "2"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["iterations"] == 64 and len(d["plays"]) == 4
    assert {"move", "score", "leave", "win_pct", "win_pct_stderr", "equity", "equity_stderr", "pruned"} <= set(
        d["plays"][0])
    bad = subprocess.run([sys.executable, "-m", "macondo_server", "sim", EMPTY, "--plies", "99"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "plies" in bad.stderr and "Traceback" not in bad.stderr


MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/"
           "5I1N3N3/3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0 lex NWL20;")


@pytest.mark.parametrize("cgp", [MIDGAME, "15/15/15/15/15/15/15/7QI6/15/15/15/15/15/15/15 ?EINRST/ 0/22 0 lex NWL20;"])
def test_first_reply_lane_reuse_is_exact(engine, nwl, cgp):
    """The opponent's first reply from reused root lanes equals a full search: identical statistics."""
    stats = []
    for reuse in (True, False):
        job = SimJob(engine, parse_cgp(cgp), SimOptions(plies=2, iterations=128, num_plays=8, threads=1, seed=5))
        for w in job.workers:
            w.reuse_lanes = reuse
        res = job.run()
        stats.append([(p.text, p.equity, p.win_pct, p.n, p.ply_scores) for p in res.plays])
    assert stats[0] == stats[1]
    # every lane a candidate changes is repeated; the others keep their root result
    job = SimJob(engine, parse_cgp(MIDGAME), SimOptions(plies=2, iterations=1, num_plays=3, threads=1, seed=5))
    lanes = job.workers[0].affected_lanes(0)
    assert 0 < len(lanes) < 30


def test_iteration_cap_follows_the_time_limit():
    from macondo_server.analysis.sim import DEFAULT_ITERATIONS, MAX_ITERATIONS, SimResult

    assert SimOptions().iteration_cap() == (DEFAULT_ITERATIONS, "default") == (1000, "default")
    assert SimOptions(max_time=10).iteration_cap() == (MAX_ITERATIONS, "maximum")
    assert SimOptions(max_time=10, iterations=300).iteration_cap() == (300, "given")
    assert SimOptions(iterations=300).iteration_cap() == (300, "given")

    def text(reason, cap, source):
        return SimResult([], 0, 0.0, True, reason, None, cap, source).stop_text

    assert text("iterations", 1000, "default") == "iterations cap 1000 (default)"
    assert text("iterations", 300, "given") == "iterations cap 300"
    assert text("time limit", MAX_ITERATIONS, "maximum") == "time limit"
    assert text("95% confidence", 1000, "default") == "95% confidence; iterations cap 1000 (default)"
    assert text("", 1000, "default") == ""


def test_time_limit_without_iterations_is_not_capped_at_the_default(engine, nwl):
    res = _run(engine, EMPTY, plies=1, num_plays=2, max_time=0.6, threads=1, seed=3)
    assert res.stopped_reason == "time limit" and res.iterations > 1000 and res.seconds >= 0.5
    capped = _run(engine, EMPTY, plies=1, num_plays=2, iterations=64, max_time=30, threads=1, seed=3)
    assert capped.stopped_reason == "iterations" and capped.iterations == 64


# ------------------------------------------------------------------ statistics (SimOptions.stats)


def _placed(move) -> list[tuple[int, int]]:
    """The squares a placement puts tiles on (played-through squares left out)."""
    if move.kind != "place":
        return []
    return [(move.row + (i if move.vertical else 0), move.col + (0 if move.vertical else i))
            for i, t in enumerate(move.tiles) if t]


def _check_stats_add_up(res, dim: int = 15) -> None:
    for p in res.plays:
        assert len(p.ply_histograms) == len(p.ply_heatmaps) == len(p.ply_scores)
        for k, (hist, heat) in enumerate(zip(p.ply_histograms, p.ply_heatmaps, strict=True)):
            # every iteration lands in one bin; the mean score lies within the bins' bounds; a bingo scores 50+
            assert sum(hist) == p.n and len(hist) == 16 and len(heat) == dim * dim
            low = sum(10 * i * c for i, c in enumerate(hist))
            high = sum(10 * (i + 1) * c for i, c in enumerate(hist[:-1])) + 10_000 * hist[-1]
            assert low <= p.ply_scores[k] * p.n + 1e-6 and p.ply_scores[k] * p.n < high
            assert round(p.ply_bingo_pct[k] * p.n / 100) <= sum(hist[5:])
            # no tile goes where the candidate put one
            assert all(heat[r * dim + c] == 0 for r, c in _placed(p.gen.move)) or k > 0
        # the opponent's rack: 7 tiles before the reply, at most as many of each letter after it
        assert p.replies == p.n
        assert sum(p.opp_held) == pytest.approx(7.0)
        assert all(-1e-9 <= kept <= held + 1e-9 for kept, held in zip(p.opp_kept, p.opp_held, strict=True))
        # the tiles the replies put down (the heatmap of ply 1) are tiles that left the rack (exchanges too)
        assert sum(p.ply_heatmaps[0]) <= (sum(p.opp_held) - sum(p.opp_kept)) * p.n + 1e-6


def test_stats_add_up_and_leave_the_simulation_unchanged(engine, nwl):
    kw = dict(plies=2, iterations=200, num_plays=6, seed=4, threads=2)
    on = _run(engine, MIDGAME, stats=True, **kw)
    off = _run(engine, MIDGAME, **kw)
    assert _figures(on) == _figures(off)            # collecting them changes nothing of the simulation
    assert all(p.ply_histograms == [] and p.opp_kept == [] for p in off.plays) and not off.stats
    assert on.stats
    _check_stats_add_up(on)
    assert any(sum(p.ply_heatmaps[0]) > 0 for p in on.plays)
    again = _run(engine, MIDGAME, stats=True, **kw)   # a seed and a thread count fix them too
    assert [(p.ply_histograms, p.ply_heatmaps, p.opp_kept) for p in again.plays] == \
        [(p.ply_histograms, p.ply_heatmaps, p.opp_kept) for p in on.plays]
    # best-arm identification simulates plays on different draws: each play's statistics are its own
    bai_res = _run(engine, EMPTY, stats=True, stop_rule="bai", plies=2, iterations=300, num_plays=4, seed=4,
                   threads=2)
    _check_stats_add_up(bai_res)
    assert len({p.n for p in bai_res.plays}) > 1
    with pytest.raises(ValueError, match="at least 1 ply"):
        SimOptions(plies=0, stats=True).validate()


def test_stats_of_one_ply_equal_the_replies_brute_force(engine, nwl):
    """One candidate, one ply: each iteration's reply is the opponent's best static move on the board after the
    candidate with the rack the iteration dealt them; the heatmap, histogram and leave are exactly theirs."""
    job = SimJob(engine, parse_cgp(EMPTY), SimOptions(plies=1, iterations=40, num_plays=1, plays=["8G QI"],
                                                      threads=1, seed=9, stats=True))
    res = job.run()
    (play,) = res.plays
    assert play.text == "8G QI" and play.n == 40
    worker = job.workers[0]
    ld = play.pos.ld
    heat = [0] * 225
    hist = [0] * 16
    held = [0] * ld.size
    kept = [0] * ld.size
    for i in range(40):
        rack = worker.dealt_opponent_rack(i)
        after = parse_cgp(f"15/15/15/15/15/15/15/6QI7/15/15/15/15/15/15/15 {ld.rack_str(rack)}/ 0/22 0 lex NWL20;")
        best = engine.generate(after).moves[0]
        for r, c in _placed(best.move):
            heat[r * 15 + c] += 1
        hist[min(best.score // 10, 15)] += 1
        used = [t & 0x7F if not t & 0x80 else 0 for t in best.move.tiles if t]
        for t in rack:
            held[t] += 1
            kept[t] += 1
        for t in used:
            kept[t] -= 1
    assert play.ply_heatmaps[0] == heat and sum(heat) > 0
    assert play.ply_histograms[0] == hist
    assert [round(x * 40) for x in play.opp_held] == held
    assert [round(x * 40) for x in play.opp_kept] == kept
