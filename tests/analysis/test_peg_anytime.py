"""Pre-endgame snapshots are honest: every snapshot's bounds contain the final tallies, and a leader is named
only when the completed solve agrees (the best play when finished, or proven by the bounds before that)."""

from __future__ import annotations

from collections import Counter

import pytest
from macondo_client.render import peg_json, peg_leader_line, peg_table

from macondo_server.analysis.peg.explain import eventuality
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import DRAW, LOSS, WIN, PegOptions
from macondo_server.analysis.peg.result import PegResult
from macondo_server.api.convert import peg_to_pb
from macondo_server.model.cgp import parse_cgp
from macondo_server.runtime.checkpoint import CheckpointStore

from conftest import load_cases, needs_cases

CASES = {c["id"]: c for c in load_cases("peg")}


def _run_recording(engine, case: str, **kw) -> tuple[list[PegResult], PegResult]:
    snaps: list[PegResult] = []
    job = PegJob(engine, parse_cgp(CASES[case]["cgp"]), PegOptions(**kw))
    final = job.run(snaps.append, interval=0.0)
    return snaps, final


def _check_leader(s: PegResult, final: PegResult) -> None:
    """A snapshot's leader is never ranked by the completed solve below another play by
    more than the snapshot's own bounds allow; a leader named from full-depth verdicts (finished, or proven by
    the bounds) is the completed solve's best or tied with it."""
    fin = {p.text: p for p in final.plays}
    exact = {p.text: p.points for p in final.plays if not p.cut_off}
    best = final.plays[0].points
    lead = s.leader
    assert lead is not None
    snap = {p.text: p for p in s.plays}
    # the leader's final value: exact, or (cut off by the complete solve) at least its final lower bound and at
    # least its lower bound in this snapshot (both are sound; a time-limited run may have solved more of a play
    # than the complete solve did before cutting it off: a stricter check than the true value would give)
    lead_final_low = exact.get(lead.text, max(fin[lead.text].lower, lead.lower))
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
        assert s.leader_depth in ("quick", "estimate") and not s.finished and s.winner is None
        contenders = [p for p in s.plays if not p.cut_off]
        assert all(p.quick_complete for p in contenders) or s.phase == "full"
        # never a play the snapshot's bounds show to be behind another
        assert lead.upper >= max(p.lower for p in s.plays)
        # the best conservative estimate among the plays not behind
        alive = [p for p in contenders if p.upper >= s.best_lower]
        assert round(lead.conservative, 6) == max(round(p.conservative, 6) for p in alive)
        if s.leader_depth == "quick":
            assert all(p.groups_done == 0 for p in s.plays)


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
    snaps, final = _run_recording(engine, "peg-onyx-nwl20", endgame_plies=4, threads=2, early_cutoff=True)
    assert final.complete
    assert len(snaps) >= 3, len(snaps)     # (4 plies: about 2.5 s, a snapshot every 50 ms; 2 plies end in 0.2 s)
    _check_snapshots(snaps, final)
    # before it finishes, a leader is named only when the bounds prove it or the quick pass is complete
    assert all(s.leader is None or s.leader_depth in ("full", "quick", "estimate") for s in snaps if not s.finished)
    # the quick pass comes first and ranks every play on every draw; the full solve then starts
    quick_done = [s for s in snaps if s.phase == "full"]
    assert quick_done and all(p.quick_complete for s in quick_done for p in s.plays)
    # once the quick pass is complete a leader is always named: proven at full depth, or the best quick play
    assert all(s.leader is not None for s in quick_done)
    # progress carries the rate and the work left
    mid = [s for s in snaps if not s.finished and s.done_jobs]
    assert mid and all(s.endgames_per_second > 0 and s.groups_left > 0 for s in mid)
    assert final.groups_left == 0 and final.eta_seconds == 0.0


@needs_cases
def test_quick_pass_alone_names_the_best_quick_play(engine):
    job = PegJob(engine, parse_cgp(CASES["peg-onyx-nwl20"]["cgp"]), PegOptions(endgame_plies=2, threads=2))
    job._quick_pass(None, 1.0, None)
    job.phase = "full"   # the full solve about to start: nothing solved at full depth yet
    s = job.snapshot(final=False)
    assert all(p.quick_complete and p.lower == 0 and p.upper == 8 for p in s.plays)
    assert s.leader is not None and s.leader_depth == "quick" and not s.finished
    assert s.leader.quick_points == max(p.quick_points for p in s.plays)
    assert "best at the quick pass" in peg_leader_line(peg_to_pb(s, job.pos, "", False))
    assert s.plays[0].conservative == max(p.conservative for p in s.plays)   # ranked by the best knowledge


DEFNNPT_PLAYS = ["E5 FET", "I3 P.NT", "2L F.ND"]   # leave a tile in the bag; tied at the quick pass's first level


@needs_cases
def test_second_quick_level_takes_the_plays_the_first_cannot_separate(engine, tmp_path):
    cgp = CASES["peg-doc1-pond-nwl20"]["cgp"]
    # the first level gives these three plays every draw; the complete 4-ply solves give E5 FET 7,914,
    # I3 P(A)NT 7,902 and 2L F(O)ND 7,872 (bench/data/peg_anytime_truth.json): the second level ranks them so
    job = PegJob(engine, parse_cgp(cgp), PegOptions(threads=2, only_solve=[*DEFNNPT_PLAYS, "E12 DE.N", "I1 DEF.T"]))
    job._quick_pass(None, 1.0, None)
    by = {p.text: p for p in job.plays}
    assert [by[t].quick_points for t in DEFNNPT_PLAYS] == [7920] * 3
    assert all(by[t].quick2_complete for t in DEFNNPT_PLAYS)
    assert by["E5 FET"].quick2_points > by["I3 P.NT"].quick2_points > by["2L F.ND"].quick2_points
    # a play the first level puts below the best second-level result is not judged at the second level, nor is
    # a bag-emptying play (its full solve is one endgame a draw)
    den, deft = by["E12 DE.N"], by["I1 DEF.T"]
    assert den.quick_complete and den.quick_points < by["E5 FET"].quick2_points and den.quick2_done == 0
    assert deft.empties_bag and deft.quick_points == 7920 and deft.quick2_done == 0
    deep = [p for p in job.plays if p.quick2_complete]
    assert job.quick2_jobs_done == job.quick2_jobs == sum(len(p.groups) for p in deep)
    # each second-level verdict is the one a worker set to that level gives the draw on its own
    job._configure(quick=True, level=2)
    w = job.workers[0]
    p = by["I3 P.NT"]
    for g in p.groups[::7]:
        assert w.solve_draw(job.move_tuple(p), g.seq, job.opp_counts(g.seq))[0] == g.quick2
    s = job.snapshot(final=False)
    shown = peg_table(peg_to_pb(s, job.pos, "", False), rows=40)
    assert "%+" in shown and "second level" in shown
    # a checkpoint records the second level's verdicts and a resumed solve takes them back
    store = CheckpointStore(tmp_path / "quick2.sqlite")
    opts = PegOptions(threads=2, only_solve=DEFNNPT_PLAYS)
    first = PegJob(engine, parse_cgp(cgp), opts, checkpoint=store)
    first._open_checkpoint()
    first._quick_pass(None, 1.0, None)
    first._flush_checkpoint(force=True)
    again = PegJob(engine, parse_cgp(cgp), opts, checkpoint=store, resume=True)
    again._open_checkpoint()
    assert again.quick2_jobs_done == first.quick2_jobs_done > 0
    assert [[g.quick2 for g in p.groups] for p in again.plays] == [[g.quick2 for g in p.groups] for p in first.plays]
    # a time-limited run goes through the levels in order, then the full solve
    snaps, _ = _run_recording(engine, "peg-doc1-pond-nwl20", threads=2, only_solve=DEFNNPT_PLAYS, max_time=4)
    phases = [s.phase for s in snaps]
    assert phases.index("quick") < phases.index("quick2") < phases.index("full")


def _walked_estimates(plays) -> tuple[dict, int]:
    """The plays' estimates by a walk over every draw group (the reference for the running sums)."""
    value = {WIN: 1.0, DRAW: 0.5, LOSS: 0.0}

    def key(g):
        return (2, g.quick2) if g.quick2 is not None else (1, g.quick) if g.quick is not None else (0, None)

    num: dict = {}
    den: dict = {}
    groups = [g for p in plays for g in p.groups]
    judged = [g for g in groups if g.outcome in value]
    for g in judged:
        num[key(g)] = num.get(key(g), 0.0) + value[g.outcome] * g.weight
        den[key(g)] = den.get(key(g), 0.0) + g.weight
    prior_w = 2 * sum(g.weight for g in groups) / len(groups)
    base = (sum(num.values()) + 0.5 * prior_w) / (sum(den.values()) + prior_w)
    out = {}
    for p in plays:
        pts = var = 0.0
        for g in p.groups:
            if g.outcome in value:
                pts += g.weight * value[g.outcome]
                continue
            k = key(g)
            prior = base if k[1] not in value else (value[k[1]] + 0.5) / 2
            r = (num.get(k, 0.0) + prior * prior_w) / (den.get(k, 0.0) + prior_w)
            pts += g.weight * r
            var += g.weight ** 2 * r * (1 - r)
        out[p.text] = (pts, var ** 0.5)
    return out, len(judged)


@needs_cases
def test_running_sums_match_a_walk_over_every_draw_group(engine):
    # stopped in the full solve: full verdicts on some draws, the quick pass's two levels on others
    job = PegJob(engine, parse_cgp(CASES["peg-doc1-pond-nwl20"]["cgp"]),
                 PegOptions(endgame_plies=3, threads=2, only_solve=DEFNNPT_PLAYS))

    def progress(s: PegResult) -> None:
        if s.done_jobs >= 40:
            job.stop()

    res = job.run(progress, interval=0.0)
    assert res.done_jobs >= 40 and res.quick2_done_jobs > 0 and not res.finished
    walked, judged = _walked_estimates(res.plays)
    assert res.calibrated_on == judged
    for p in res.plays:
        assert p.est == pytest.approx(walked[p.text][0], rel=1e-9)
        assert p.est_sd == pytest.approx(walked[p.text][1], rel=1e-9)
        by_outcome = Counter(g.outcome for g in p.groups if g.outcome is not None)
        assert dict(p.outcome_groups) == {o: n for o, n in by_outcome.items()} | {
            o: 0 for o in p.outcome_groups if o not in by_outcome}
        assert p.capped_groups == sum(g.capped for g in p.groups)
        assert p.judged == sum(g.outcome in (WIN, DRAW, LOSS) for g in p.groups)


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
        text = peg_table(peg_to_pb(res, job.pos, "", True), rows=5)
        assert text.startswith("No leader yet: ") and "best upper bound" in text
        assert "Wins (min-max)" in text


@needs_cases
def test_table_summarises_long_lists_unless_verbose(engine):
    c = CASES["peg-axe-2bag-csw21"]
    job = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, threads=2, only_solve=["6F .X."]))
    res = job.run()
    msg = peg_to_pb(res, job.pos, "", False)
    short, long = peg_table(msg), peg_table(msg, verbose=True)
    wins = [g.label for g in res.plays[0].groups if g.outcome == 0]
    assert len(wins) > 6
    assert "👍: " + str(len(wins)) + " draws (weight 70)" in short and wins[0] not in short.split("👍")[1]
    assert all(lab in long for lab in wins)
    d = peg_json(msg)
    assert d["plays"][0]["outcome_counts"]["win"] == {"draws": len(wins), "weight": 70}
    assert d["plays"][0]["lower"] == d["plays"][0]["upper"] == 70 and d["leader"] == res.plays[0].text


# ---------------------------------------------------------------- opponent model "solver" (both sides solve)

def _solve(engine, case: str, **kw) -> PegResult:
    return PegJob(engine, parse_cgp(CASES[case]["cgp"]), PegOptions(**kw)).run()


@needs_cases
def test_solver_model_is_never_worse_than_pessimistic(engine):
    # the opponent's choice is a subset of their replies, judged the same way: where no nested solve of ours lies
    # below it, no draw can be worse for us than in the pessimistic model. (Below a nested solve of ours, after
    # their pass, it can in principle: a better verdict on other sub-draws can make us choose a play that loses
    # the actual one.) On this play it holds draw by draw; they find the TOREROS bingo when we draw the I, as
    # both reference engines do
    kw = dict(endgame_plies=2, threads=2, only_solve=["6F .X."], quick_pass=False)
    pess = _solve(engine, "peg-axe-2bag-csw21", **kw).plays[0]
    solv_res = _solve(engine, "peg-axe-2bag-csw21", opponent_model="solver", **kw)
    solv = solv_res.plays[0]
    assert solv_res.opp_solves > 0 and solv_res.opponent_model == "solver"
    by_label = {g.label: g.outcome for g in pess.groups}
    for g in solv.groups:
        assert g.outcome is not None and g.outcome <= by_label[g.label], g.label
    assert solv.points == 70 and [g.label for g in solv.groups if g.outcome == 3] == ["[I]E"]
    job = PegJob(engine, parse_cgp(CASES["peg-axe-2bag-csw21"]["cgp"]),
                 PegOptions(opponent_model="solver", threads=1, skip_tiebreaker=True, **{
                     k: v for k, v in kw.items() if k != "threads"}))
    text = eventuality(job, "IE")
    assert "the opponent solves their own pre-endgame" in text and "TOREROS" in text
    assert text.rstrip().endswith("verdict: LOSS")
    with pytest.raises(ValueError, match="opponent model"):
        PegOptions(opponent_model="optimistic").validate()


def _solver_verdicts(engine, case: str, skip: bool, **kw) -> tuple[dict, int]:
    job = PegJob(engine, parse_cgp(CASES[case]["cgp"]), PegOptions(opponent_model="solver", **kw))
    for w in job.workers:
        w.skip_won_choice = skip
    res = job.run()
    return ({(p.text, g.label): g.outcome for p in res.plays for g in p.groups},
            sum(w.choice_skips for w in job.workers))


def _cache_verdicts(engine, case: str, cache: bool, **kw) -> tuple[dict, int, int]:
    job = PegJob(engine, parse_cgp(CASES[case]["cgp"]), PegOptions(**kw))
    for w in job.workers:
        w.use_endgame_cache = cache
    res = job.run()
    return ({(p.text, g.label): g.outcome for p in res.plays for g in p.groups},
            sum(w.endgame_hits for w in job.workers), res.endgames)


@needs_cases
@pytest.mark.parametrize("model", ["pessimistic", "solver"])
def test_endgame_cache_changes_no_verdict(engine, model):
    # draws that differ only in the tile left in the bag share the endgames after the replies that do not need
    # it: the cache answers those, and every verdict is the one a search without it gives (one thread: the
    # nested and opponent-choice caches, one per thread, then skip the same work both times, so the counts match)
    kw = dict(endgame_plies=2, only_solve=["6F .X."], threads=1, quick_pass=False, opponent_model=model)
    plain, plain_hits, plain_endgames = _cache_verdicts(engine, "peg-axe-2bag-csw21", False, **kw)
    cached, hits, endgames = _cache_verdicts(engine, "peg-axe-2bag-csw21", True, **kw)
    assert cached == plain and plain_hits == 0
    assert hits > endgames // 4 and endgames == plain_endgames


@needs_cases
def test_threads_share_the_endgame_cache(engine):
    # a job's workers share one endgame cache: a draw one of them solved, another answers from it with the
    # same verdict; a worker of another job does not see it; two threads give the verdicts of one thread
    # without the cache
    kw = dict(endgame_plies=2, only_solve=["6F .X."], quick_pass=False)
    job = PegJob(engine, parse_cgp(CASES["peg-axe-2bag-csw21"]["cgp"]), PegOptions(threads=2, **kw))
    other = PegJob(engine, parse_cgp(CASES["peg-axe-2bag-csw21"]["cgp"]), PegOptions(threads=1, **kw))
    (play,) = job.plays
    move = job.move_tuple(play)
    a, b, c = job.workers[0], job.workers[1], other.workers[0]
    a.share_endgame_cache(b)    # b already uses a's table: a keeps it
    for g in play.groups[:8]:
        first = a.solve_draw(move, g.seq, job.opp_counts(g.seq))
        hits = b.endgame_hits
        assert b.solve_draw(move, g.seq, job.opp_counts(g.seq)) == first
        assert c.solve_draw(move, g.seq, job.opp_counts(g.seq)) == first
        assert b.endgame_hits > hits
    assert c.endgame_hits < b.endgame_hits
    plain, _, _ = _cache_verdicts(engine, "peg-axe-2bag-csw21", False, threads=1, **kw)
    shared, hits, _ = _cache_verdicts(engine, "peg-axe-2bag-csw21", True, threads=2, **kw)
    assert shared == plain and hits > 0


@needs_cases
def test_solver_model_skips_the_opponents_solve_only_when_every_reply_wins(engine):
    # judging every reply first, and not solving the opponent's pre-endgame when we win against all of them,
    # gives the same verdict on every draw as always solving it (AXE: 2 in the bag, the opponent to move with
    # one left after 6F .X.; a sample of draws, the whole play in the slow test below)
    job = PegJob(engine, parse_cgp(CASES["peg-axe-2bag-csw21"]["cgp"]), PegOptions(
        endgame_plies=2, only_solve=["6F .X."], opponent_model="solver", threads=1, quick_pass=False))
    (play,) = job.plays
    w = job.workers[0]
    move = job.move_tuple(play)
    for g in play.groups[::6]:
        w.skip_won_choice = False
        plain = w.solve_draw(move, g.seq, job.opp_counts(g.seq))
        w.skip_won_choice = True
        assert w.solve_draw(move, g.seq, job.opp_counts(g.seq)) == plain, g.label
    assert w.choice_skips > 0


@pytest.mark.slow
@needs_cases
def test_solver_model_skip_same_verdicts_everywhere(engine):
    for case, kw in (("peg-axe-2bag-csw21", dict(endgame_plies=2, only_solve=["6F .X."])),
                     ("peg-onyx-nwl20", dict(endgame_plies=2))):
        plain, skipped = _solver_verdicts(engine, case, False, threads=2, quick_pass=False, **kw)
        fast, _ = _solver_verdicts(engine, case, True, threads=2, quick_pass=False, **kw)
        assert fast == plain and skipped == 0, case


@pytest.mark.slow
@needs_cases
def test_solver_model_counts_iiia_as_a_win(engine):
    # Macondo's pre-endgame documentation (position #1): with A in the bag, the opponent's best 1-in-the-bag plays
    # A(U)GUSTER and (TEMP)TER both lose, so a solving opponent does not beat 2L P(O)ND there; the pessimistic
    # model counts the draw as a loss (some reply wins for them)
    case = CASES["peg-doc1-pond-nwl20"]
    verdicts = {}
    for model in ("pessimistic", "solver"):
        job = PegJob(engine, parse_cgp(case["cgp"]), PegOptions(
            endgame_plies=4, only_solve=["2L P.ND"], opponent_model=model, threads=1, quick_pass=False))
        (play,) = job.plays
        group = next(g for g in play.groups if g.label == "[III]A")
        verdicts[model], _ = job.workers[0].solve_draw(job.move_tuple(play), group.seq, job.opp_counts(group.seq))
    assert verdicts == {"pessimistic": 3, "solver": 0}
    text = eventuality(PegJob(engine, parse_cgp(case["cgp"]), PegOptions(
        endgame_plies=4, only_solve=["2L P.ND"], opponent_model="solver", threads=1, skip_tiebreaker=True,
    )), "IIIA")
    assert text.rstrip().endswith("verdict: WIN")
    assert "the opponent solves their own pre-endgame" in text


@pytest.mark.slow
@needs_cases
def test_defnnpt_sixty_seconds_names_def_a_t(engine):
    # a time-limited run: 60 s, 2 plies, early cut-off; I1 DEF(A)T wins every draw at 2 plies
    res = _solve(engine, "peg-doc1-pond-nwl20", endgame_plies=2, early_cutoff=True, max_time=60, threads=2)
    assert res.leader is not None
    lead = res.leader
    assert lead.table == "I1 DEF(A)T" or (res.leader_depth == "full" and lead.lower == res.total_permutations)
    # a complete ranking at some depth: every play judged on every draw by the quick pass
    assert all(p.quick_complete for p in res.plays)


Q_STUCK = ("13AW/11F1LI/10JURAT/9LINER1/8O1T4/5C1WAsTiNG1/4DAMAR1E4/3PARED2ROUEN/2YA1K9/1BERG1OATH4V/3COUP1I5E/"
           "3H1TESTILY2N/4FAN1I2OXID/9MIB2U/7ZEES3E EEILOSS/ 297/300 0 lex NWL20;")


@pytest.mark.slow
def test_default_leaves_see_the_stuck_q(engine):
    # Macondo's TestComplicated1PEG: 7 plays win every draw once the Q-stuck draw is judged right (the reference
    # needs 7 plies without its leaf playouts); static leaves at 5 plies credit an eighth play with 8 of 8
    res = PegJob(engine, parse_cgp(Q_STUCK), PegOptions(endgame_plies=5, threads=2, skip_tiebreaker=True)).run()
    perfect = [p.table for p in res.plays if p.points == 8]
    assert len(perfect) == 7, perfect
    assert res.plays[7].points == 7
