"""Naming a pre-endgame leader before the end (the estimate from full-depth verdicts and the calibrated quick
pass, less its uncertainty; ties said, never hidden; `winner` only once known), the nesting cap's two
semantics with the bounds of what it did, and the scope the options leave out."""

from __future__ import annotations

import pytest
from macondo_client.render import peg_json, peg_table

from macondo_server.analysis.peg.draws import DrawGroup
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import CAPPED, DRAW, LOSS, WIN, PegOptions
from macondo_server.analysis.peg.result import PegPlay, PegResult, calibration, estimate_plays, name_leader
from macondo_server.api.convert import peg_to_pb
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.move import Move

from conftest import load_cases, needs_cases, needs_nwl20

CASES = {c["id"]: c for c in load_cases("peg")}


def _play(name: str, n: int, weight: int = 10, quick: int | None = WIN,
          full: dict[int, int] | None = None) -> PegPlay:
    """A play of n draw groups of `weight`, each judged `quick` by the quick pass and given the full verdicts
    in `full` (group index -> outcome)."""
    p = PegPlay(Move("pass"), name, name, 0, 0, False, [DrawGroup(f"[{name}{i}]", (i,), weight) for i in range(n)])
    for g in p.groups:
        if quick is not None:
            p.record_quick(g, quick)
    for gi, outcome in (full or {}).items():
        p.record(p.groups[gi], outcome)
    return p


def _named(plays: list[PegPlay], phase: str = "full", finished: bool = False) -> PegResult:
    res = PegResult(plays=plays, total_permutations=sum(g.weight for g in plays[0].groups), endgames=0,
                    nested_calls=0, seconds=1.0, done_jobs=0, total_jobs=0, complete=finished, finished=finished,
                    phase=phase)
    res.calibrated_on = estimate_plays(plays)
    name_leader(res)
    return res


def test_a_play_known_at_full_depth_beats_one_resting_on_the_quick_pass():
    # "known": every draw solved, 3 of 40 lost; "hopeful": 3 of 40 solved (won), the quick pass says 100%
    known = _play("known", 40, full={**{i: WIN for i in range(37)}, 37: LOSS, 38: LOSS, 39: LOSS})
    hopeful = _play("hopeful", 40, full={0: WIN, 1: WIN, 2: WIN})
    res = _named([hopeful, known])
    assert res.leader is known and res.leader_depth == "estimate" and res.winner is None
    assert "all its 40 draw groups" in res.leader_reason
    # the hopeful play's estimate is higher (its quick wins are mostly confirmed), but rests on guesses
    assert hopeful.est > known.est and hopeful.est_sd > 0 == known.est_sd
    # once most of its draws are confirmed at full depth it is named
    hopeful2 = _play("hopeful", 40, full={i: WIN for i in range(39)})
    res2 = _named([_play("known", 40, full={**{i: WIN for i in range(37)}, 37: LOSS, 38: LOSS, 39: LOSS}),
                   hopeful2])
    assert res2.leader is hopeful2


def test_calibration_learns_how_often_the_full_solve_confirms_the_quick_pass():
    # quick wins confirmed 9 times in 10 at full depth: the unsolved quick wins count at about that rate
    a = _play("a", 20, full={**{i: WIN for i in range(9)}, 9: LOSS})
    rates, n = calibration([a])
    assert n == 10 and 0.8 < rates[(1, WIN)] < 0.9 and rates[(1, LOSS)] < 0.5
    estimate_plays([a])
    assert a.est == pytest.approx(90 + 10 * 10 * rates[(1, WIN)])
    # a draw gives half
    b = _play("b", 2, full={0: DRAW, 1: DRAW})
    estimate_plays([b])
    assert b.est == 10 and b.est_sd == 0


def test_each_quick_level_is_calibrated_on_its_own():
    # the first level's wins are confirmed 5 times in 10, the second level's 10 in 10: a draw judged at the
    # second level counts at its own rate, and a second-level loss is not read as a first-level win
    shallow = _play("s", 20, full={**{i: WIN for i in range(5)}, **{i: LOSS for i in range(5, 10)}})
    deep = _play("d", 20, full={i: WIN for i in range(10)})
    for g in deep.groups:
        deep.record_quick(g, WIN, level=2)
    deep.record_quick(deep.groups[19], LOSS, level=2)
    rates, n = calibration([shallow, deep])
    assert n == 20 and rates[(1, WIN)] < 0.7 < 0.9 < rates[(2, WIN)]
    estimate_plays([shallow, deep])
    assert deep.est == pytest.approx(100 + 90 * rates[(2, WIN)] + 10 * rates[(2, LOSS)])
    assert deep.quick_level == 2 and deep.quick_best == 190 and shallow.quick_level == 1 and shallow.quick_best == 200


def test_never_names_a_play_the_bounds_show_to_be_behind():
    # "behind": its best possible total (upper) is below what "ahead" has for certain, whatever the estimates
    ahead = _play("ahead", 10, quick=LOSS, full={i: WIN for i in range(6)})
    behind = _play("behind", 10, quick=WIN, full={0: LOSS, 1: LOSS, 2: LOSS, 3: LOSS, 4: LOSS})
    res = _named([behind, ahead])
    assert behind.upper < ahead.lower and res.leader is ahead


def test_ties_by_everything_known_are_reported():
    plays = [_play(n, 8) for n in ("x", "y", "z")]   # quick pass complete, nothing at full depth yet
    res = _named(plays)
    assert res.leader_depth == "quick" and res.winner is None
    assert res.leader is plays[0] and res.leader_ties == plays[1:]
    pos = parse_cgp("15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 ABCDEFG/ 0/0 0 lex NWL20;")
    msg = peg_to_pb(res, pos, "", False)
    assert list(msg.leader_ties) == ["y", "z"] and msg.leader == "x" and msg.winner == ""
    assert "tied by everything known with 2 other plays: y, z" in peg_table(msg)
    d = peg_json(msg)
    assert d["leader"] == "x" and d["winner"] is None and d["leader_ties"] == ["y", "z"]


def test_winner_only_once_known():
    a = _play("a", 4, full={i: WIN for i in range(4)})
    b = _play("b", 4, full={0: LOSS})
    res = _named([a, b])
    assert res.leader is a and res.leader_depth == "full" and res.winner is a   # proven by bounds
    c = _play("c", 4, full={0: WIN})
    d = _play("d", 4, full={0: WIN, 1: LOSS})
    res = _named([c, d])
    assert res.leader is c and res.winner is None


def test_cap_flag_bounds_the_count():
    p = _play("p", 4, full={0: WIN | CAPPED, 1: WIN, 2: LOSS | CAPPED})
    assert p.lower == 20 and p.capped_weight == 20 and p.capped_points == 10
    assert p.cap_low == 10 and p.cap_high == 20 - 10 + 20 + 10   # the unsolved draw counts in the high bound
    assert [g.capped for g in p.groups] == [True, False, True, False]


# ---------------------------------------------------------------- the nesting cap on a real position

def _axe(engine, **kw) -> PegResult:
    c = CASES["peg-axe-2bag-csw21"]
    return PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=2, threads=2, only_solve=["6F .X."],
                                                           quick_pass=False, skip_tiebreaker=True, **kw)).run()


@needs_cases
def test_nesting_cap_semantics_and_their_bounds(engine):
    # 6F .X. keeps one tile in the bag: after a reply that does not empty it we move again with a tile in the
    # bag (a nested solve), which --max-nested-depth 0 caps
    full = _axe(engine, max_nested_depth=-1)
    (fp,) = full.plays
    assert fp.points == 70 and fp.capped_weight == 0 and fp.cap_low == fp.cap_high == 70 and not full.nesting_note
    exact = {g.label: g.outcome for g in fp.groups}
    for mode in ("skip", "unresolved"):
        res = _axe(engine, max_nested_depth=0, nesting_cap=mode)
        (p,) = res.plays
        assert p.capped_weight > 0 and res.nesting_note and res.nesting_cap == mode
        assert ("skipped" in res.nesting_note) == (mode == "skip")
        # the count without the cap lies between the bounds
        assert p.cap_low <= fp.points <= p.cap_high
        # a draw whose verdict no continuation past the cap took part in has the uncapped verdict
        for g in p.groups:
            if not g.capped:
                assert g.outcome == exact[g.label], g.label
        if mode == "skip":
            assert p.unresolved == 0
            skip_points = p.points
        else:
            assert p.unresolved > 0 and p.points <= skip_points
        msg = peg_to_pb(res, parse_cgp(CASES["peg-axe-2bag-csw21"]["cgp"]), "", True)
        text = peg_table(msg)
        assert "Note: nesting cap 0:" in text and "(nesting cap: " in text
        assert peg_json(msg)["plays"][0]["capped"]["weight"] == p.capped_weight


@needs_cases
def test_scope_note_names_the_plays_left_out_and_the_option(engine):
    c = CASES["peg-axe-2bag-csw21"]
    job = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=1, threads=1, max_tiles_left=0,
                                                         max_time=30))
    job.stop()     # the scope is settled at the setup: no need to solve
    res = job.run()
    assert res.plays_out_of_scope > 0 and "--max-tiles-left 0" in res.scope_note and "-1" in res.scope_note
    every = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(endgame_plies=1, threads=1, max_tiles_left=-1))
    assert every.out_of_scope == 0 and every.scope_note == ""
    assert len(every.plays) == len(job.plays) + res.plays_out_of_scope
    only = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(threads=1, only_solve=["6F .X."], max_tiles_left=0))
    assert [p.text for p in only.plays] == ["6F .X."]   # an --only-solve play is solved whatever the scope
    assert "--only-solve" in only.scope_note


def test_nesting_cap_option_is_validated():
    with pytest.raises(ValueError, match="nesting cap must be one of skip, unresolved"):
        PegOptions(nesting_cap="optimistic").validate()


@needs_cases
def test_resume_keeps_the_nesting_cap_flags(engine, tmp_path):
    from macondo_server.runtime.checkpoint import CheckpointStore

    c = CASES["peg-axe-2bag-csw21"]
    opts = dict(endgame_plies=2, threads=2, only_solve=["6F .X."], quick_pass=False, skip_tiebreaker=True,
                max_nested_depth=0)
    store = CheckpointStore(tmp_path / "ck.sqlite")
    first = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(**opts), checkpoint=store).run()
    again = PegJob(engine, parse_cgp(c["cgp"]), PegOptions(**opts), checkpoint=store, resume=True)
    res = again.run()
    (p1,), (p2,) = first.plays, res.plays
    assert again.reused == p1.groups_total and p2.capped_weight == p1.capped_weight > 0
    assert (p2.points, p2.cap_low, p2.cap_high) == (p1.points, p1.cap_low, p1.cap_high)


@needs_nwl20
def test_the_time_limit_counts_the_setup(engine):
    """Six tiles in the bag: setting up every play's ordered draws can take minutes; a time limit of 1 s
    ends the setup with the best plays by static equity, says so, and the answer comes in about that time."""
    import time

    from engine_cy.game import Game
    from macondo_server.analysis.player import LEVELS, choose
    from macondo_server.engine.replay import play_move, position_from_game

    lex = engine.lexicon("NWL20")
    for seed in range(3, 40):
        game = Game(lex.kwg, lex.ld, lex.new_board(), seed, 50, 6)
        game.fill_rack(0)
        game.fill_rack(1)
        while game.bag_size > 6:
            play_move(game, choose(engine, game, lex, LEVELS["expert"]).move)
        if game.bag_size >= 5:
            break
    pos = position_from_game(game, {"lex": lex.name}, show_opponent=False)
    t0 = time.monotonic()
    job = PegJob(engine, pos, PegOptions(threads=1, max_time=1.0, max_tiles_left=-1))
    res = job.run()
    took = time.monotonic() - t0
    assert took < 1.0 + 4.0, took
    assert res.stop_reason in ("time limit", "finished")
    legal = len(engine.generate(pos, lexicon=lex.name).moves)
    if len(job.plays) < legal - sum(1 for m in engine.generate(pos, lexicon=lex.name).moves
                                    if m.move.kind == "exchange"):
        assert "the time limit ended the setup" in res.scope_note


def test_naming_a_leader_among_thousands_of_plays_is_quick():
    """A rack with a blank can hold thousands of plays: naming the leader is linear in them (it once compared
    every play with every other, minutes a snapshot), and the first of the best lower bounds wins ties."""
    import time

    plays = [_play(f"p{i}", 4, full={0: WIN} if i % 7 == 3 else None) for i in range(6000)]
    t0 = time.monotonic()
    res = _named(plays)
    assert time.monotonic() - t0 < 2.0
    assert res.best_lower == 10 and res.leader is not None
    assert plays.index(res.leader) % 7 == 3
