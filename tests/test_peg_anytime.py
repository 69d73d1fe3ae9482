"""Pre-endgame snapshots are honest: every snapshot's bounds contain the final tallies, and a leader is named
only when the completed solve agrees (the best play when finished, or proven by the bounds before that)."""

from __future__ import annotations

import pytest

from macondo_server.formats import parse_cgp
from macondo_server.peg import PegJob, PegOptions, PegResult, format_table

from conftest import load_cases, needs_cases

CASES = {c["id"]: c for c in load_cases("peg")}


def _run_recording(engine, case: str, **kw) -> tuple[list[PegResult], PegResult]:
    snaps: list[PegResult] = []
    job = PegJob(engine, parse_cgp(CASES[case]["cgp"]), PegOptions(**kw))
    final = job.run(snaps.append, interval=0.0)
    return snaps, final


def _check_leader(s: PegResult, final: PegResult) -> None:
    """The issue's criterion: a snapshot's leader is never ranked by the completed solve below another play by
    more than the snapshot's own bounds allow; a leader named from full-depth verdicts (finished, or proven by
    the bounds) is the completed solve's best or tied with it."""
    fin = {p.text: p for p in final.plays}
    exact = {p.text: p.points for p in final.plays if not p.cut_off}
    best = final.plays[0].points
    lead = s.leader
    assert lead is not None
    snap = {p.text: p for p in s.plays}
    # the leader's final value: exact, or (cut off by the complete solve) at least its final lower bound
    lead_final_low = exact.get(lead.text, fin[lead.text].lower)
    for t, v in exact.items():
        assert v - lead_final_low <= snap[t].upper - lead.lower, (lead.text, t, v, lead_final_low)
    if s.leader_depth == "full":
        assert lead.text in exact, f"snapshot named {lead.text}, which the complete solve cut off"
        assert exact[lead.text] == best, f"snapshot named {lead.text} ({exact[lead.text]}); best has {best}"
        if s.leader_reason.startswith("proven by bounds"):
            assert all(lead.lower >= q.upper for q in s.plays if q.text != lead.text)
    elif s.leader_depth == "only":
        assert len(s.plays) == 1 and lead.text == final.plays[0].text
    else:
        assert s.leader_depth == "quick" and not s.finished
        contenders = [p for p in s.plays if not p.cut_off]
        assert all(p.quick_complete for p in contenders)
        assert lead.quick_points == max(p.quick_points for p in contenders)


def _check_snapshots(snaps: list[PegResult], final: PegResult) -> int:
    assert final.finished and final.leader is final.winner is final.plays[0]
    fin = {p.text: p for p in final.plays}
    exact = {p.text: p.points for p in final.plays if not p.cut_off}
    best = final.plays[0].points
    named = 0
    for s in snaps:
        assert s.best_lower <= best <= s.best_upper or any(fin[p.text].cut_off for p in s.plays)
        for p in s.plays:
            f = fin[p.text]
            # bounds only tighten, and contain the final value of every play solved to the end
            assert p.lower <= f.lower and f.upper <= p.upper, (p.text, p.lower, p.upper, f.lower, f.upper)
            if p.text in exact:
                assert p.lower <= exact[p.text] <= p.upper
            assert p.groups_done <= f.groups_done <= p.groups_total
            assert p.quick_done <= f.quick_done
        if s.leader is None:
            assert s.no_leader_reason
            continue
        named += 1
        _check_leader(s, final)
    return named


@needs_cases
def test_onyx_every_snapshot_is_honest(engine):
    snaps, final = _run_recording(engine, "peg-onyx-nwl20", endgame_plies=2, threads=2, early_cutoff=True)
    assert final.complete
    assert len(snaps) >= 3
    _check_snapshots(snaps, final)
    # before it finishes, a leader is named only when the bounds prove it or the quick pass is complete
    assert all(s.leader is None or s.leader_depth == "full" or s.leader_depth == "quick"
               for s in snaps if not s.finished)
    # the quick pass comes first and ranks every play on every draw; the full solve then starts
    quick_done = [s for s in snaps if s.phase == "full"]
    assert quick_done and all(p.quick_complete for s in quick_done for p in s.plays)
    assert any(s.leader is not None and s.leader_depth == "quick" for s in quick_done)
    # progress carries the rate and the work left
    mid = [s for s in snaps if not s.finished and s.done_jobs]
    assert mid and all(s.endgames_per_second > 0 and s.groups_left > 0 for s in mid)
    assert final.groups_left == 0 and final.eta_seconds == 0.0


@needs_cases
def test_axe_only_solve_snapshots(engine):
    snaps, final = _run_recording(engine, "peg-axe-2bag-csw21", endgame_plies=2, threads=2,
                                  only_solve=["6F .X."])
    (play,) = final.plays
    assert play.points == 70 and play.lower == play.upper == 70 and play.groups_done == play.groups_total
    _check_snapshots(snaps, final)


@needs_cases
@pytest.mark.parametrize("max_time", [0.3, 1.0, 2.5])
def test_time_limited_run_never_names_a_wrong_leader(engine, max_time):
    case = "peg-onyx-nwl20"
    full = PegJob(engine, parse_cgp(CASES[case]["cgp"]),
                  PegOptions(endgame_plies=2, threads=2, early_cutoff=True)).run()
    job = PegJob(engine, parse_cgp(CASES[case]["cgp"]),
                 PegOptions(endgame_plies=2, threads=2, early_cutoff=True, max_time=max_time))
    res = job.run()
    exact = {p.text: p.points for p in full.plays if not p.cut_off}
    for p in res.plays:
        if p.text in exact:   # plays the complete solve cut off have no exact value to compare
            assert p.lower <= exact[p.text] <= p.upper
        # every draw is counted: solved with a verdict, or still to solve
        assert sum(g.weight for g in p.groups if g.outcome is not None) + p.pending == res.total_permutations
    if res.leader is not None:
        _check_leader(res, full)
    else:
        text = format_table(res, rows=5)
        assert text.startswith("No leader yet: ") and "best upper bound" in text
        assert "Wins (min-max)" in text


@needs_cases
def test_table_summarises_long_lists_unless_verbose(engine):
    c = CASES["peg-axe-2bag-csw21"]
    res = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, threads=2, only_solve=["6F .X."])).run()
    short, long = format_table(res), format_table(res, verbose=True)
    wins = [g.label for g in res.plays[0].groups if g.outcome == 0]
    assert len(wins) > 6
    assert "👍: " + str(len(wins)) + " draws (weight 70)" in short and wins[0] not in short.split("👍")[1]
    assert all(lab in long for lab in wins)
    d = res.to_json()
    assert d["plays"][0]["outcome_counts"]["win"] == {"draws": len(wins), "weight": 70}
    assert d["plays"][0]["lower"] == d["plays"][0]["upper"] == 70 and d["leader"] == res.plays[0].text
