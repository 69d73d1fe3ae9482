"""Endgame solver: the shared cases, and agreement with plain minimax on generated short-rack endgames."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from engine_cy.endgame import EndgameSolver
from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.analysis.endgame import EndgameJob, EndgameOptions
from macondo_server.engine.replay import game_from_position
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import new_board

from conftest import load_cases, needs_cases
from helpers import minimax_spread

CASES = {c["id"]: c for c in load_cases("endgame")}


def _case(registry, cid):
    c = CASES[cid]
    lex = registry.get(c["lexicon"])
    pos = parse_cgp(c["cgp"], lex.ld)
    return c, lex, pos


def _solve_case(registry, cid, plies, **kw):
    c, lex, pos = _case(registry, cid)
    game = game_from_position(pos, lex)
    res = EndgameSolver(lex.kwg, lex.ld, 64).solve(game, plies, threads=kw.pop("threads", 1), **kw)
    return c, res


@needs_cases
@pytest.mark.parametrize("heuristics", [False, True])
def test_canik_out_in_two(registry, heuristics):
    c, res = _solve_case(registry, "eg-canik-nwl20", 4, heuristics=heuristics)
    assert res["value"] == c["expected"]["value"] == 11
    assert len(res["line"]) == c["expected"]["pv_length"]
    assert res["complete"]


@needs_cases
def test_pass_first_exact(registry):
    c, res = _solve_case(registry, "eg-passfirst-csw21", 10, heuristics=False)
    assert res["value"] == c["expected"]["value"] == -63
    first = res["line"][0]
    assert (first[0] >> 11) & 3 == 2, "the best first move is a pass"
    assert len(res["line"]) >= c["expected"]["pv_min_length"]


@needs_cases
def test_eldar_stuck_v_shallow_with_playout(engine):
    # the opponent's V is stuck: the greedy playout at the leaves finds the exact value at 3 plies
    c = CASES["eg-eldar-stuck-v-csw21"]
    pos = parse_cgp(c["cgp"])
    res = EndgameJob(engine, pos, EndgameOptions(plies=3, threads=1, tt_megabytes=64)).run()
    assert res.value == c["expected"]["value"] == 72
    assert res.line[0].move.kind == "place"


def _short_endgame(lex, seed: int, r0: int, r1: int) -> Game:
    """A seeded static-bot game played until the board is busy, then cut to short racks, bag emptied."""
    g = Game(lex.kwg, lex.ld, new_board(), seed)
    g.fill_rack(0)
    g.fill_rack(1)
    gen = MoveGen(lex.kwg, lex.ld, None)
    for _ in range(10):
        gen.generate(g.board, g.rack(g.on_turn), g.bag_size, mode="best")
        kind, row, col, vert, tiles, score = gen.moves()[0][:6]
        g.play(kind, row, col, vert, tiles, score)
    g.set_rack(0, g.rack(0)[:r0])
    g.set_rack(1, g.rack(1)[:r1])
    g.discard_bag()
    g.solver_mode()
    return g


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_minimax(registry, seed):
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 1000 + seed, 3, 2 + seed % 2)
    gen = MoveGen(lex.kwg, lex.ld, None)
    want = minimax_spread(g.clone(), gen, 3)
    solver = EndgameSolver(lex.kwg, lex.ld, 8)
    for use_tt in (True, False):
        got = solver.solve(g, 3, heuristics=False, use_tt=use_tt)
        assert got["final_spread"] == want, (seed, use_tt)
    # deeper: the table, no table and two threads agree
    vals = {solver.solve(g, 5, heuristics=False, use_tt=t, threads=n)["final_spread"]
            for t, n in ((True, 1), (False, 1), (True, 2))}
    assert len(vals) == 1
    # the principal variation replays to the reported value when the game ends within it
    res = solver.solve(g, 5, heuristics=False)
    end = g.clone()
    from engine_cy.endgame import decode_line

    for kind, row, col, vert, tiles, score in decode_line(g, res["line"]):
        end.play(kind, row, col, vert, tiles, score)
    p = g.on_turn
    sc = end.scores
    assert sc[p] - sc[1 - p] == res["final_spread"]


@pytest.mark.parametrize("seed", range(4))
def test_lane_reuse_and_last_ply_cut_change_nothing(registry, seed):
    # lane reuse rebuilds exactly the full generation's move lists (with or without the probes listing the
    # lanes only the sibling lists' own child touched): same nodes, values and lines; the cut at the last
    # ply (pass first, stop at beta) only changes how much is searched, never the value
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 3000 + seed, 7, 7 - seed % 3)
    res = {}
    for reuse, cut, patch in ((False, False, False), (True, False, False), (True, False, True), (True, True, True)):
        solver = EndgameSolver(lex.kwg, lex.ld, 16)
        solver.lane_reuse = reuse
        solver.d1_cut = cut
        solver.patch_probes = patch
        res[reuse, cut, patch] = solver.solve(g, 4, heuristics=False)
    plain, both = res[False, False, False], res[True, True, True]
    for reuse in (res[True, False, False], res[True, False, True]):
        assert (reuse["value"], reuse["nodes"], reuse["line"]) == (plain["value"], plain["nodes"], plain["line"])
    assert both["value"] == plain["value"]
    assert solver.lane_stats[1] > 0, "no lane was reused"


@pytest.mark.parametrize("seed", range(4))
def test_playouts_listed_from_two_moves_back_change_nothing(registry, seed):
    # with lane reuse each greedy playout step lists its moves from the list two moves back (the parent's
    # list for the second step); without it every step generates in full: the same nodes, values and lines
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 7000 + seed, 7, 6 - seed % 3)
    res = {}
    for reuse in (False, True):
        solver = EndgameSolver(lex.kwg, lex.ld, 16)
        solver.lane_reuse = reuse
        res[reuse] = solver.solve(g, 3, heuristics=True)
        if reuse:
            assert solver.playout_stats[0] > 0 and solver.playout_stats[1] > 0, "no playout step kept a lane"
        else:
            assert solver.playout_stats == (0, 0)
    assert (res[True]["value"], res[True]["nodes"], res[True]["line"]) == \
        (res[False]["value"], res[False]["nodes"], res[False]["line"])


@needs_cases
def test_stuck_playouts_listed_from_two_moves_back_change_nothing(registry):
    # the same with a stuck tile, where the solving side's playout moves weigh the tiles they keep
    c, lex, pos = _case(registry, "eg-eldar-stuck-v-csw21")
    g = game_from_position(pos, lex)
    res = {}
    for reuse in (False, True):
        solver = EndgameSolver(lex.kwg, lex.ld, 16)
        solver.lane_reuse = reuse
        res[reuse] = solver.solve(g, 3, heuristics=True)
    assert (res[True]["value"], res[True]["nodes"], res[True]["line"]) == \
        (res[False]["value"], res[False]["nodes"], res[False]["line"])
    assert res[True]["value"] == c["expected"]["value"]


@pytest.mark.parametrize("seed", range(6))
def test_bounded_last_ply_keeps_every_value(registry, seed):
    # the last ply searched best bound first from alpha up, seeded by the grandparent's plays in the lanes the
    # last two moves left alone (and decided by them alone when they reach beta): the values of brute force at
    # 3 plies, and of the full last ply at 4 plies with longer racks, in full and null-window (first-win) solves
    lex = registry.get("SCOWL70")
    gen = MoveGen(lex.kwg, lex.ld, None)
    g = _short_endgame(lex, 6000 + seed, 3, 2 + seed % 2)
    want = minimax_spread(g.clone(), gen, 3)
    used = [0, 0, 0]
    solver = EndgameSolver(lex.kwg, lex.ld, 8)
    solver.last_ply_bounded = True
    assert solver.solve(g, 3, heuristics=False)["final_spread"] == want
    first = solver.solve(g, 3, heuristics=False, first_win=True)["final_spread"]
    assert (first > 0, first == 0, first < 0) == (want > 0, want == 0, want < 0)
    used = [a + b for a, b in zip(used, solver.bounded_stats, strict=True)]
    g = _short_endgame(lex, 6100 + seed, 7 - seed % 2, 5 + seed % 3)
    for first_win in (False, True):
        res = {}
        for bounded in (False, True):
            solver = EndgameSolver(lex.kwg, lex.ld, 16)
            solver.last_ply_bounded = bounded
            res[bounded] = solver.solve(g, 4, heuristics=False, first_win=first_win)["final_spread"]
            if bounded:
                used = [a + b for a, b in zip(used, solver.bounded_stats, strict=True)]
            else:
                assert solver.bounded_stats == (0, 0, 0)
        assert res[True] == res[False] if not first_win else \
            (res[True] > 0, res[True] == 0) == (res[False] > 0, res[False] == 0), first_win
    assert used[0] > 0 and used[1] > 0, "the bounded last ply or its grandparent's list never ran"


@pytest.mark.parametrize("seed", range(6))
def test_first_move_probe_changes_nothing(registry, seed):
    # off the principal line a node's first move is found best bound first and searched before the moves are
    # listed: the same move the listed ordering takes first, so the same nodes, values and lines, with and
    # without a blank, in full and null-window (first-win) solves, with and without greedy-playout leaves
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 4000 + seed, 7, 7 - seed % 3)
    j = 0
    while seed % 2 and 0 not in g.rack(0) + g.rack(1):
        # a blank on a rack (the best-first search's other branch): the next game that leaves one
        j += 1
        g = _short_endgame(lex, 4000 + seed + 100 * j, 7, 7 - seed % 3)
    for first_win, heuristics in ((False, False), (True, False), (False, True)):
        res = {}
        for probe in (False, True):
            solver = EndgameSolver(lex.kwg, lex.ld, 16)
            solver.probe_first = probe
            res[probe] = solver.solve(g, 4, heuristics=heuristics, first_win=first_win)
            if probe:
                probes, cuts = solver.probe_stats
                assert probes > 0 and cuts > 0, "the probe never ran"
        assert (res[True]["value"], res[True]["nodes"], res[True]["line"]) == \
            (res[False]["value"], res[False]["nodes"], res[False]["line"]), (first_win, heuristics)


def test_best_first_endgame_best_equals_full_order(registry):
    # the endgame searcher's best placement (highest value, the first in generation order on a tie) is the
    # same found best bound first (shadow) as by the full generation, for every kind of value it maximises
    import random
    lex = registry.get("SCOWL70")
    gen = MoveGen(lex.kwg, lex.ld, None)
    rng = random.Random(5)
    checked = 0
    for seed in range(6):
        g = _short_endgame(lex, 5000 + seed, 7, 7)
        for _ in range(25):
            rack = [rng.randrange(0, 27) for _ in range(rng.randint(1, 7))]
            args = (rng.choice([1, 5, 37]), rng.choice([0, 50, 2100]), rng.choice([0, 5, -3, 21, -5]),
                    rng.choice([0, 2, 8]))
            opp = rng.randint(0, 40)
            full = gen.eg_best(g.board, rack, opp, *args, shadow=False)
            assert gen.eg_best(g.board, rack, opp, *args, shadow=True) == full, (seed, rack, args)
            checked += full is not None
    assert checked > 100


@pytest.mark.parametrize("seed", range(3))
def test_first_win_sign(registry, seed):
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 2000 + seed, 3, 3)
    solver = EndgameSolver(lex.kwg, lex.ld, 8)
    full = solver.solve(g, 4, heuristics=False)["final_spread"]
    fw = solver.solve(g, 4, heuristics=False, first_win=True)["final_spread"]
    assert (full > 0) == (fw > 0) and (full < 0) == (fw < 0)


def test_stop_and_time_limit_return_best_so_far(registry):
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 7, 7, 7)
    solver = EndgameSolver(lex.kwg, lex.ld, 16)
    t0 = time.monotonic()
    res = solver.solve(g, 30, max_time=0.3, heuristics=False)
    assert time.monotonic() - t0 < 1.5
    assert res["depth"] >= 1 and res["line"] and not res["complete"]
    timer = threading.Timer(0.2, solver.stop)
    timer.start()
    t0 = time.monotonic()
    res = solver.solve(g, 30, threads=2)
    assert time.monotonic() - t0 < 1.5
    assert res["depth"] >= 1 and res["stopped"]


def test_refuses_nonempty_bag_and_bad_options(engine):
    pos = parse_cgp("15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINQST/ 0/0 0")
    with pytest.raises(FormatError, match="bag is not empty"):
        EndgameJob(engine, pos, EndgameOptions())
    with pytest.raises(ValueError, match="plies"):
        EndgameOptions(plies=0).validate()


@needs_cases
def test_cli_json(registry):
    c = CASES["eg-canik-nwl20"]
    out = subprocess.run([sys.executable, "-m", "macondo_server", "endgame", c["cgp"], "--plies", "4", "--json",
                          "--threads", "1"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["value"] == 11 and d["final_spread"] == 6 and d["depth"] == 4
    assert [m["estimated"] for m in d["best_line"]] == [False, False, False]
    assert d["best_line"][0]["move"] == "1G VIG."
    bad = subprocess.run([sys.executable, "-m", "macondo_server", "endgame", "15/" * 14 + "15 AEINQST/ 0/0 0"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "bag is not empty" in bad.stderr and "Traceback" not in bad.stderr


def test_plies_cap_and_game_length_bound():
    from macondo_server.analysis.endgame import MAX_PLIES, game_length_bound

    assert EndgameOptions().plies_cap() == (4, "default")
    assert EndgameOptions(max_time=5).plies_cap() == (MAX_PLIES, "solve")
    assert EndgameOptions(plies=6, max_time=5).plies_cap() == (6, "given")
    assert game_length_bound(1, 1) == 4 and game_length_bound(7, 7) == 28


@needs_cases
def test_search_at_the_game_length_bound_is_exact(registry):
    # no leaf of a search this deep is a horizon: the greedy playout never runs, so it changes nothing
    from macondo_server.analysis.endgame import game_length_bound

    c, lex, pos = _case(registry, "eg-passfirst-csw21")
    bound = game_length_bound(len(pos.racks[0]), sum(pos.unseen_counts(0)))
    game = game_from_position(pos, lex)
    with_playout = EndgameSolver(lex.kwg, lex.ld, 64).solve(game, bound, threads=1, heuristics=True)
    plain = EndgameSolver(lex.kwg, lex.ld, 64).solve(game, bound, threads=1, heuristics=False)
    assert with_playout["value"] == plain["value"] == c["expected"]["value"]


@needs_cases
def test_time_limit_without_plies_deepens_until_solved(engine):
    c = CASES["eg-canik-nwl20"]
    pos = parse_cgp(c["cgp"])
    res = EndgameJob(engine, pos, EndgameOptions(max_time=20, threads=1, tt_megabytes=64)).run()
    assert res.solved and res.complete and res.stop_reason == "solved" and res.depth > 4
    assert res.value == c["expected"]["value"]
    default = EndgameJob(engine, pos, EndgameOptions(threads=1, tt_megabytes=64)).run()
    assert default.depth == 4 and default.stop_reason == "plies cap 4 (default)" and not default.solved
    given = EndgameJob(engine, pos, EndgameOptions(plies=5, max_time=20, threads=1, tt_megabytes=64)).run()
    assert given.depth == 5 and given.stop_reason == "plies cap 5"
