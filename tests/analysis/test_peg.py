"""Pre-endgame solver: draw weights and labels by brute force, the shared cases, options and errors."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import time
from collections import Counter

import pytest

from engine_cy.alphabet import LetterDistribution
from macondo_server.analysis.peg.draws import LazyGroups, draw_groups, draw_label, group_key, ordered_draws
from macondo_server.analysis.peg.explain import eventuality, parse_order
from macondo_server.analysis.peg.job import PegJob, split_runs
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.text import FormatError

from conftest import load_cases, needs_cases, needs_nwl20

CASES = {c["id"]: c for c in load_cases("peg")}
LD = LetterDistribution.english()


def _pool(rack: str) -> tuple[list[int], list[int]]:
    """The tiles of `rack` and their counts by machine letter."""
    tiles = LD.parse_rack(rack)
    counts = [0] * LD.size
    for t in tiles:
        counts[t] += 1
    return tiles, counts


@pytest.mark.parametrize("pool,k", [("AAEGIIIRSTU", 4), ("AACEISUY", 1), ("EEIOOSTXY", 2), ("AABBC", 3)])
def test_draw_weights_match_distinguishable_permutations(pool, k):
    tiles, counts = _pool(pool)
    draws = ordered_draws(counts, k)
    # brute force: every ordered draw of distinguishable tiles
    brute = Counter(tuple(tiles[i] for i in idx) for idx in itertools.permutations(range(len(tiles)), k))
    assert dict(draws) == dict(brute)
    assert sum(w for _, w in draws) == math.perm(len(tiles), k)


def test_labels_group_equivalent_draws():
    _, counts = _pool("AAEGIIIRSTU")
    groups: Counter = Counter()
    labels = {}
    for seq, w in ordered_draws(counts, 4):
        key = group_key(seq, 3)
        groups[key] += w
        labels[key] = draw_label(LD, seq, 3)
    by_label = {labels[k]: w for k, w in groups.items()}
    # the manual's worked check: a 3-tile play, [III]A = 3! x 2 copies of A, [III]E = 3! x 1
    assert by_label["[III]A"] == 12 and by_label["[III]E"] == 6 and by_label["[III]T"] == 6
    assert sum(by_label.values()) == 7920
    # a 4-tile play empties the bag: order does not matter, [IIIT] = 4! x 1
    four = Counter()
    for seq, w in ordered_draws(counts, 4):
        four[draw_label(LD, seq, 4)] += w
    assert four["[IIIT]"] == 24 and four["[AIII]"] == 48 and four["[AIIT]"] == 144


@pytest.mark.parametrize("pool,k", [("AAEGIIIRSTU", 4), ("EEIOOSTXY", 2), ("AABBCDEEFGH", 5)])
def test_draw_groups_match_grouping_by_key(pool, k):
    tiles, counts = _pool(pool)
    draws = ordered_draws(counts, k)
    for played in range(0, 9):
        # brute force: group every draw by its key, the first draw of each group standing for it
        first: dict = {}
        weight: Counter = Counter()
        for seq, w in draws:
            key = group_key(seq, played)
            first.setdefault(key, seq)
            weight[key] += w
        template = draw_groups(draws, played)
        assert template.seqs == list(first.values())
        assert template.weights == [weight[key] for key in first]
        assert template.total == math.perm(len(tiles), k)
        assert template.weight_squares == sum(w * w for w in weight.values())
        groups = LazyGroups(template, LD)
        assert len(groups) == len(first) and groups.made is None
        assert [g.label for g in groups] == [draw_label(LD, seq, played) for seq in first.values()]
        assert groups.made is not None and groups[0] is groups.made[0]


def test_setup_stops_when_asked():
    _, counts = _pool("ABCDEFGHIJKLM")
    assert ordered_draws(counts, 6, lambda: True) is None
    draws = ordered_draws(counts, 6)
    assert len(draws) == math.perm(13, 6)
    assert draw_groups(draws, 3, lambda: True) is None


@needs_nwl20
@pytest.mark.parametrize("max_time", [1.0, 3.0])
def test_time_limit_holds_with_six_in_the_bag(engine, max_time):
    # every play over 6 tiles in the bag: about 260,000 ordered draws and 65 million draw groups in all,
    # far more than the limit allows; the solve ends on time all the same, setup and final snapshot included
    pos = parse_cgp("STOLONIC7/7O1Q5/3U2WAVIEST2/3P3G7/3G3E2HEY2/3R2UNPAIRED1/3O1B1T7/RAGWORMS7/1C1N1A9/"
                    "1IF1EX9/1DE1BY9/1uM1O10/1RE1NA9/OI3Z1ENDUrES1/FA2JOULE6 AAEIRTT/ 381/415 0 lex NWL20;")
    engine.lexicon_for(pos, None)   # (loading the lexicon is not part of the limit)
    t0 = time.monotonic()
    job = PegJob(engine, pos, PegOptions(threads=2, max_time=max_time, early_cutoff=True, max_tiles_left=-1))
    res = job.run()
    took = time.monotonic() - t0
    assert took < max_time + 0.5, took
    assert res.stop_reason == "time limit" and not res.finished
    assert res.total_permutations == math.perm(13, 6)   # (ordered draws of the 13 unseen tiles)
    assert res.plays and res.leader is None and res.no_leader_reason
    # what is counted adds up: every play's draws are solved or pending
    for p in res.plays:
        assert p.wins + p.draws + p.losses + p.unresolved + p.pending == res.total_permutations
        assert sum(p.outcome_groups.values()) == p.groups_done <= p.groups_total


@needs_cases
def test_onyx_one_in_bag(engine):
    c = CASES["peg-onyx-nwl20"]
    job = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=3, threads=2, early_cutoff=True))
    res = job.run()
    assert res.winner.text == "13L ONYX"
    assert res.winner.points == c["expected"]["points"] == 7.5 and res.total_permutations == 8
    draws = [g.label for g in res.winner.groups if g.outcome == 1]
    assert draws == ["[Y]"]
    oxy = next(p for p in res.plays if p.text == "13L OXY")
    assert oxy.cut_off or oxy.points < 7.5
    assert res.complete


@needs_cases
def test_axe_two_in_bag(engine):
    c = CASES["peg-axe-2bag-csw21"]
    opts = PegOptions(endgame_plies=2, only_solve=["6F .X."], threads=2)
    res = PegJob(engine, parse_cgp(c["cgp"]), opts).run()
    (play,) = res.plays
    assert play.points == 70 and res.total_permutations == 72
    losses = [(g.label, g.weight) for g in play.groups if g.outcome == 3]
    assert losses == [("[I]E", 2)]  # the mover draws I and leaves E: the opponent bingoes


@needs_cases
@pytest.mark.slow
def test_pond_four_in_bag(engine):
    c = CASES["peg-doc1-pond-nwl20"]
    opts = PegOptions(endgame_plies=4, only_solve=["2L P.ND"], threads=2)
    res = PegJob(engine, parse_cgp(c["cgp"]), opts).run()
    (play,) = res.plays
    assert res.total_permutations == 7920 and play.points == 7884
    losses = {g.label: g.weight for g in play.groups if g.outcome == 3}
    assert losses == c["expected"]["loss_permutation_weights"]


@needs_cases
@pytest.mark.slow
def test_bag_emptying_ranking(engine):
    c = CASES["peg-doc1-bagempty-nwl20"]
    opts = PegOptions(endgame_plies=4, max_tiles_left=0, early_cutoff=True, threads=2)
    res = PegJob(engine, parse_cgp(c["cgp"]), opts).run()
    assert res.winner.table == "I1 DEF(A)T" and res.winner.points == 7872
    losses = sorted(g.label for g in res.winner.groups if g.outcome == 3)
    assert losses == ["[IIIT]", "[IIIU]"]


@needs_cases
@needs_cases
@pytest.mark.slow
def test_bag_emptying_runners_up(engine):
    """The case's second and third plays, solved in full (the cut-off abandons them in the ranking run)."""
    c = CASES["peg-doc1-bagempty-nwl20"]
    opts = PegOptions(endgame_plies=4, only_solve=["E9 P.NET.", "I1 PED.NT"], threads=2, skip_tiebreaker=True)
    res = PegJob(engine, parse_cgp(c["cgp"]), opts).run()
    expected = {r["move"]: r for r in c["expected"]["ranking"][1:]}
    assert {p.table for p in res.plays} == set(expected)
    for p in res.plays:
        e = expected[p.table]
        assert p.points == e["wins"]
        assert sorted(g.label for g in p.groups if g.outcome == 1) == sorted(e["draws"])
        assert sorted(g.label for g in p.groups if g.outcome == 3) == sorted(e["losses"])


@needs_cases
def test_early_cutoff_keeps_every_exact_result(engine):
    """Cut-off plays could not have beaten the winner; every play not cut has the same tallies as without."""
    c = CASES["peg-onyx-nwl20"]
    full = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, threads=2, skip_tiebreaker=True)).run()
    cut = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, threads=2, skip_tiebreaker=True,
                                                         early_cutoff=True)).run()
    exact = {p.text: p.points for p in full.plays}
    assert cut.winner.points == full.winner.points
    assert sum(p.cut_off for p in cut.plays) > len(cut.plays) // 2   # most plays are abandoned early
    for p in cut.plays:
        if p.cut_off:
            assert exact[p.text] < cut.winner.points
            assert p.wins + p.draws / 2 <= exact[p.text]
        else:
            assert p.points == exact[p.text]


@needs_cases
def test_nested_cache_changes_nothing_but_time(engine):
    """Nested verdicts depend only on what we can see, so draws reaching the same position share one solve;
    every draw's outcome is the same with the cache and without it."""
    c = CASES["peg-axe-2bag-csw21"]
    outcomes = []
    for cache in (True, False):
        job = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, only_solve=["6F .X."],
                                                             threads=1, skip_tiebreaker=True))
        for w in job.workers:
            w.use_nested_cache = cache
        res = job.run()
        hits = sum(w.nested_hits for w in job.workers)
        assert (hits > 0) == cache and res.nested_calls > 0
        outcomes.append({(p.table, g.label): g.outcome for p in res.plays for g in p.groups})
    assert outcomes[0] == outcomes[1]


@needs_cases
def test_threads_share_nested_verdicts(engine):
    """The workers of one job share their nested verdicts: a nested solve one worker did, another finds, with
    the same outcome (a worker of another job does not)."""
    c = CASES["peg-axe-2bag-csw21"]

    def new_job() -> PegJob:
        return PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, only_solve=["6F .X."], threads=2,
                                                              skip_tiebreaker=True))
    job = new_job()
    (p,) = job.plays
    a, b = job.workers
    for g in p.groups:
        outcome = a.solve_draw(job.move_tuple(p), g.seq, job.opp_counts(g.seq))
        if a.nested_calls > a.nested_hits:
            break
    assert a.nested_calls > a.nested_hits
    assert b.solve_draw(job.move_tuple(p), g.seq, job.opp_counts(g.seq)) == outcome
    assert b.nested_calls > 0 and b.nested_hits == b.nested_calls
    other = new_job().workers[1]
    assert other.solve_draw(job.move_tuple(p), g.seq, job.opp_counts(g.seq)) == outcome
    assert other.nested_calls > other.nested_hits


def test_split_runs():
    # each thread's list: the draws of its range of indices, taken (popped) in the order given
    order = [5, 0, 9, 3, 7, 1, 8, 2, 6, 4]
    parts = split_runs(order, 10, 3)
    assert [p[::-1] for p in parts] == [[0, 3, 1, 2], [5, 6, 4], [9, 7, 8]]
    assert split_runs(order, 10, 1) == [order[::-1]]
    assert split_runs([], 0, 2) == [[], []]


@needs_cases
def test_bounded_last_ply_changes_no_verdict(engine):
    """The endgames' last ply searched best bound first from alpha up (a bound, not the exact best, when no
    play passes alpha) gives every draw the same outcome as the full last ply, against every play."""
    c = CASES["peg-onyx-nwl20"]
    outcomes = []
    for bounded in (True, False):
        job = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=3, threads=1, skip_tiebreaker=True))
        for w in job.workers:
            assert w.endgame_options(last_ply_bounded=bounded)[3] == bounded
        res = job.run()
        used = sum(w.last_ply_bounded_nodes for w in job.workers)
        grand = sum(w.grand_stats[0] for w in job.workers)
        assert (used > 0) == bounded and (grand > 0) == bounded
        outcomes.append({(p.text, g.label): g.outcome for p in res.plays for g in p.groups})
    assert outcomes[0] == outcomes[1]
    assert {1, 3} <= set(outcomes[0].values())     # won and lost draws both


@needs_cases
def test_eventuality_agrees_with_the_solve(engine):
    c = CASES["peg-onyx-nwl20"]
    pos = parse_cgp(c["cgp"])
    opts = PegOptions(endgame_plies=3, only_solve=["13L ONYX", "13J EXON"], threads=1)
    solved = PegJob(engine, pos, PegOptions(endgame_plies=3, only_solve=["13L ONYX", "13J EXON"])).run()
    outcome = {(p.table, g.label): g.outcome for p in solved.plays for g in p.groups}
    names = {0: "WIN", 1: "DRAW", 2: "UNRESOLVED", 3: "LOSS"}
    for letter in "AYIU":
        text = eventuality(PegJob(engine, pos, opts), letter)
        blocks = text.split("\n\n")
        assert len(blocks) == 2
        for block in blocks:
            play = block.split(" for ", 1)[1].split(" (", 1)[0]
            assert f"verdict: {names[outcome[(play, f'[{letter}]')]]}" in block
            assert "the bag is empty: an endgame with the opponent to move" in block
            assert f"we draw {letter}" in block and "best line" in block
    with pytest.raises(FormatError, match="the bag holds 1"):
        eventuality(PegJob(engine, pos, opts), "AA")
    with pytest.raises(FormatError, match="no Z can be in the bag"):
        eventuality(PegJob(engine, pos, opts), "Z")


@needs_cases
def test_eventuality_replies_and_nested_trace(engine):
    """AXE: 6F .X. keeps one tile in the bag, so every opponent reply is checked; the losing draw [I]E names
    the reply that beats us, and a pass back gives a nested solve over the sub-draws we cannot see."""
    c = CASES["peg-axe-2bag-csw21"]
    pos = parse_cgp(c["cgp"])
    job = PegJob(engine, pos, PegOptions(endgame_plies=2, only_solve=["6F .X."], threads=1))
    text = eventuality(job, "IE")
    assert "replies checked:" in text and "the decisive reply:" in text and text.endswith("verdict: LOSS")
    assert "we lose to" in text and "the bag is E" in text
    win = eventuality(job, "EI")
    assert win.endswith("verdict: WIN") and " 0 we lose to" in win
    # the nested solve after a pass back: sub-draws cover every ordered draw we could face
    p = job.plays[0]
    seq = parse_order(job, "EI")
    res = job.workers[0].nested_trace(job.move_tuple(p), seq, job.opp_counts(seq), ("pass", 0, 0, False, (), 0))
    outcome, chosen, subs, actual = res
    assert chosen is not None and 0 <= actual < len(subs)
    unseen_to_us = 7 + 1                      # the opponent's rack and the one tile left in the bag
    assert sum(w for _, w, _ in subs) == unseen_to_us
    assert subs[actual][0] == (LD.parse_rack("I")[0],)
    assert outcome == subs[actual][2]


def test_errors(engine):
    empty = "15/" * 14 + "15 AEINQST/ 0/0 0"
    with pytest.raises(FormatError, match="1 to 6 tiles"):
        PegJob(engine, parse_cgp(empty), PegOptions())
    with pytest.raises(ValueError, match="max tiles left"):
        PegOptions(max_tiles_left=9).validate()


@needs_cases
def test_cli_json_and_stop(engine):
    c = CASES["peg-onyx-nwl20"]
    out = subprocess.run([sys.executable, "-m", "macondo_server", "peg", c["cgp"], "--endgame-plies", "2",
                          "--only-solve", "13L ONYX", "--only-solve", "13L OXY", "--json"],
                         capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["total_permutations"] == 8 and d["winner"] == "13L ONYX"
    assert {p["move"] for p in d["plays"]} == {"13L ONYX", "13L OXY"}
    assert all(sum(o["weight"] for o in p["outcomes"]) == 8 for p in d["plays"])
    # a time limit stops the solve; what was not solved is reported as unresolved, never dropped
    job = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=3, threads=1, max_time=0.3,
                                                          endgame_heuristics=True))
    res = job.run()
    assert res.seconds < 3
    for p in res.plays:
        solved = sum(g.weight for g in p.groups if g.outcome is not None and g.outcome != 2)
        assert solved + p.unresolved <= 8
    bad = subprocess.run([sys.executable, "-m", "macondo_server", "peg", c["cgp"], "--only-solve", "8H ZZZ"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
