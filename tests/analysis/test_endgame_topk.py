"""The endgame's runner-up lines: the best k first moves with exact values and lines (top-k), and the exact value of
given first moves (also-solve), checked against independent solves of the position after each first move."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from macondo_client.render import endgame_json, endgame_text

from engine_cy.endgame import EndgameSolver, decode_line
from engine_cy.game import Game
from engine_cy.move import pack
from engine_cy.movegen import MoveGen
from macondo_server.analysis.endgame import (
    MAX_ALSO_SOLVE,
    MAX_TOP_K,
    EndgameJob,
    EndgameOptions,
    game_length_bound,
)
from macondo_server.api.convert import endgame_to_pb
from macondo_server.cli.solve import EG_MAX_ALSO, EG_MAX_TOP
from macondo_server.engine.replay import game_from_position, position_from_game
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.move import Move, format_move
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import new_board
from macondo_server.pb.macondo.v1 import engine_pb2 as pb

from conftest import load_cases, needs_cases

CASES = {c["id"]: c for c in load_cases("endgame")}


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


def _first_moves(lex, g: Game) -> list[tuple]:
    gen = MoveGen(lex.kwg, lex.ld, None)
    p = g.on_turn
    gen.generate(g.board, g.rack(p), 0, g.rack(1 - p), mode="all", sort=False)
    return [m[:6] for m in gen.moves()]


def _value_after(lex, g: Game, move: tuple, plies: int, heuristics: bool = False) -> int:
    """Spread change for the player on turn when it plays `move`, then both play best for plies - 1 more plies:
    the position after the move solved on its own (a fresh solver), negated."""
    p = g.on_turn
    c = g.clone()
    before = c.scores[p] - c.scores[1 - p]
    c.play(*move)
    after = c.scores[p] - c.scores[1 - p]
    if c.game_over or plies == 1:
        return after - before
    child = EndgameSolver(lex.kwg, lex.ld, 16).solve(c, plies - 1, heuristics=heuristics)
    return after - before - child["value"]


def _first(g: Game, line) -> tuple:
    return decode_line(g, line[:1])[0]


@pytest.mark.parametrize("seed", range(5))
def test_top_k_agrees_with_independent_solves_of_every_first_move(registry, seed):
    # every first move valued on its own: the top-k values are the k largest of them, each reported move is
    # worth its reported value, and each line starts with its move and replays to its final spread when it ends
    # the game
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 6000 + seed, 3, 2 + seed % 2)
    plies, k = 4, 5
    moves = _first_moves(lex, g)
    assert len(moves) > k
    values = {m: _value_after(lex, g, m, plies) for m in moves}
    res = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, plies, heuristics=False, top_k=k, threads=1)
    got = [e["value"] for e in res["lines"]]
    assert got == sorted(values.values(), reverse=True)[:k], seed
    assert res["value"] == got[0] and res["line"] == res["lines"][0]["line"]
    plain = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, plies, heuristics=False, threads=1)
    assert plain["value"] == got[0]
    seen = set()
    for e in res["lines"]:
        first = _first(g, e["line"])
        assert first not in seen
        seen.add(first)
        assert values[first] == e["value"], (seed, first)
        assert e["final_spread"] - e["value"] == res["final_spread"] - res["value"]


@pytest.mark.parametrize("seed", range(3))
def test_also_solve_values_every_given_first_move_exactly(registry, seed):
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 7000 + seed, 3, 3)
    plies = 4
    moves = _first_moves(lex, g)
    # the first, the last and the pass of the generator's moves (a pass is always among them)
    chosen = [moves[0], moves[len(moves) // 2], next(m for m in moves if m[0] == "pass")]
    also = [pack(*m[:5]) for m in chosen]
    res = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, plies, heuristics=False, also=also)
    assert len(res["also"]) == 3 and len(res["lines"]) == 1
    for m, e in zip(chosen, res["also"], strict=True):
        assert e is not None and _first(g, e["line"]) == m
        assert e["value"] == _value_after(lex, g, m, plies), (seed, m)
        assert e["value"] <= res["value"]
    # the best move given as also-solve is worth the best value
    best = _first(g, res["line"])
    again = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, plies, heuristics=False, also=[pack(*best[:5])])
    assert again["also"][0]["value"] == again["value"] == res["value"]


def test_top_k_at_the_game_length_bound_is_exact_with_playouts(registry):
    # a search as deep as the game can last has no horizon: the greedy playout never scores a leaf, so each
    # top-k value is the first move's exact game value, the same with or without the playout and the same as
    # the position after it solved to its own bound
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 8100, 2, 2)
    p = g.on_turn
    bound = game_length_bound(len(g.rack(p)), len(g.rack(1 - p)))
    with_playout = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, bound, heuristics=True, top_k=4)
    plain = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, bound, heuristics=False, top_k=4)
    assert [e["value"] for e in with_playout["lines"]] == [e["value"] for e in plain["lines"]]
    for e in with_playout["lines"]:
        assert e["estimated"] == []
        assert e["value"] == _value_after(lex, g, _first(g, e["line"]), bound, heuristics=True)


def test_threads_and_reuse_give_the_same_top_k(registry):
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 8200, 7, 6)
    solver = EndgameSolver(lex.kwg, lex.ld, 32)
    one = solver.solve(g, 4, heuristics=False, top_k=6, threads=1)
    two = EndgameSolver(lex.kwg, lex.ld, 32).solve(g, 4, heuristics=False, top_k=6, threads=2)
    assert [e["value"] for e in one["lines"]] == [e["value"] for e in two["lines"]]
    # the solver reused on another position, then on this one again (its table warm): the same values
    solver.solve(_short_endgame(lex, 8201, 5, 5), 3, heuristics=False, top_k=3)
    again = solver.solve(g, 4, heuristics=False, top_k=6, threads=1)
    assert [e["value"] for e in again["lines"]] == [e["value"] for e in one["lines"]]
    # and a plain solve after top-k ones is plain again
    assert "lines" not in solver.solve(g, 2, heuristics=False)


def test_stopped_top_k_reports_the_deepest_completed_depth(registry):
    lex = registry.get("SCOWL70")
    g = _short_endgame(lex, 8300, 7, 7)
    res = EndgameSolver(lex.kwg, lex.ld, 32).solve(g, 30, max_time=0.5, heuristics=False, top_k=3)
    assert not res["complete"] and res["depth"] >= 1
    fresh = EndgameSolver(lex.kwg, lex.ld, 32).solve(g, res["depth"], heuristics=False, top_k=3)
    assert [e["value"] for e in res["lines"]] == [e["value"] for e in fresh["lines"]]
    assert res["value"] == res["lines"][0]["value"]


@needs_cases
def test_pass_first_runner_ups(registry):
    # the best first move is a pass (-63); each runner-up, solved on its own 9 plies deep, is worth its value
    c = CASES["eg-passfirst-csw21"]
    lex = registry.get(c["lexicon"])
    g = game_from_position(parse_cgp(c["cgp"], lex.ld), lex)
    g.solver_mode()
    res = EndgameSolver(lex.kwg, lex.ld, 64).solve(g, 10, heuristics=False, top_k=3, threads=1)
    assert res["lines"][0]["value"] == c["expected"]["value"] == -63
    assert _first(g, res["lines"][0]["line"])[0] == "pass"
    for e in res["lines"]:
        assert e["value"] == _value_after(lex, g, _first(g, e["line"]), 10)
    assert [e["value"] for e in res["lines"]][1:] == sorted((e["value"] for e in res["lines"][1:]), reverse=True)


def _natural_endgame(lex, seed: int, tiles: int) -> str:
    """The CGP of a seeded static-bot game played on past the emptying of the bag until the racks hold at most
    `tiles` tiles together (the opponent's rack then holds every unseen tile, as a CGP position needs)."""
    for s in range(seed, seed + 50):
        g = Game(lex.kwg, lex.ld, new_board(), s)
        g.fill_rack(0)
        g.fill_rack(1)
        gen = MoveGen(lex.kwg, lex.ld, None)
        while not g.game_over and (g.bag_size > 0 or len(g.rack(0)) + len(g.rack(1)) > tiles):
            p = g.on_turn
            gen.generate(g.board, g.rack(p), g.bag_size, g.rack(1 - p) if g.bag_size == 0 else None, mode="best")
            kind, row, col, vert, tiles_, score = gen.moves()[0][:6]
            g.play(kind, row, col, vert, tiles_, score)
        if not g.game_over and len(g.rack(g.on_turn)) >= 2 and len(g.rack(1 - g.on_turn)) >= 2:
            return write_cgp(position_from_game(g, {"lex": lex.name}))
    raise AssertionError("no game reached a short endgame")


def _off_rack(engine, pos) -> str:
    """A placement that fits the board but not the rack: a legal one with its new tiles swapped for a letter the
    player does not hold."""
    pm = next(m.move for m in engine.generate(pos).moves if m.move.kind == "place")
    absent = next(t for t in range(1, pos.ld.size) if t not in pos.racks[0])
    return format_move(Move("place", pm.row, pm.col, pm.vertical, tuple(absent if t else 0 for t in pm.tiles)),
                       pos.ld, pos.board)


def test_job_options_and_errors(engine, registry):
    lex = registry.get("SCOWL70")
    pos = parse_cgp(_natural_endgame(lex, 8400, 8))
    moves = engine.generate(pos).moves
    # the same move twice (once in another notation: the parenthesised form) is valued once
    pm = next(m.move for m in reversed(moves) if m.move.kind == "place" and 0 in m.move.tiles)
    short = format_move(pm, pos.ld, pos.board)
    alt = format_move(pm, pos.ld, pos.board, style="table")
    assert short != alt
    job = EndgameJob(engine, pos, EndgameOptions(plies=3, threads=1, tt_megabytes=16, top_k=3,
                                                 also_solve=[short, alt, "pass"]))
    res = job.run()
    assert [a.requested for a in res.also] == [short, "pass"]
    assert len(res.top) == 3 and res.top[0].value == res.value
    assert res.top[0].line[0].text == res.line[0].text
    for a in res.also:
        assert a.value is not None and a.value <= res.value and a.line[0].text == a.requested
    with pytest.raises(FormatError, match="not a legal play here"):
        EndgameJob(engine, pos, EndgameOptions(plies=3, also_solve=[_off_rack(engine, pos)]))
    with pytest.raises(FormatError, match="bad move"):
        EndgameJob(engine, pos, EndgameOptions(plies=3, also_solve=["not a move"]))
    for bad, needle in ((dict(top_k=0), "top must be 1 to 64"), (dict(top_k=MAX_TOP_K + 1), "top must be"),
                        (dict(also_solve=["pass"] * (MAX_ALSO_SOLVE + 1)), "at most 64"),
                        (dict(top_k=2, first_win=True), "first-win"),
                        (dict(also_solve=["pass"], first_win=True), "first-win")):
        with pytest.raises(ValueError, match=needle):
            EndgameOptions(**bad).validate()
    assert (EG_MAX_TOP, EG_MAX_ALSO) == (MAX_TOP_K, MAX_ALSO_SOLVE)
    # the solver itself refuses a first move that is not legal here
    g = _short_endgame(lex, 8400, 3, 3)
    with pytest.raises(ValueError, match="not a legal first move"):
        EndgameSolver(lex.kwg, lex.ld, 8).solve(g, 2, also=[pack("place", 0, 0, False, (1, 1, 1))])


def test_text_and_json_render_the_lines(engine, registry):
    lex = registry.get("SCOWL70")
    pos = parse_cgp(_natural_endgame(lex, 8500, 8))
    job = EndgameJob(engine, pos, EndgameOptions(plies=3, threads=1, tt_megabytes=16, top_k=2,
                                                 also_solve=["pass"]))
    res = job.run()
    msg = endgame_to_pb(res, pos, "", True, False)
    assert [t.value for t in msg.top_lines] == [r.value for r in res.top]
    assert msg.top_lines[0].loss == 0 and msg.also_solved[0].loss == res.value - res.also[0].value
    text = endgame_text(msg)
    assert "Best 2 first moves at depth 3" in text and "Also solved:" in text
    assert f"pass: value {res.also[0].value:+d}, loses {res.value - res.also[0].value} against the best" in text
    d = endgame_json(msg)
    assert [t["value"] for t in d["top_lines"]] == [r.value for r in res.top]
    assert d["top_lines"][0]["move"] == d["best_line"][0]["move"]
    assert d["also_solved"][0]["move"] == "pass" and d["also_solved"][0]["searched"]
    # an also-solve move a stop came before: said so, no value
    msg.also_solved.append(pb.EndgameLine(requested="8G QI", searched=False))
    assert "8G QI: not searched (stopped first)" in endgame_text(msg)
    assert endgame_json(msg)["also_solved"][-1] == {"move": "8G QI", "searched": False, "value": None,
                                                    "final_spread": None, "loss": None, "line": []}
    # a plain solve renders as before: no lines
    plain = endgame_to_pb(EndgameJob(engine, pos, EndgameOptions(plies=2, threads=1, tt_megabytes=16)).run(),
                          pos, "", True, False)
    assert not plain.top_lines and "first moves" not in endgame_text(plain)
    assert "top_lines" not in endgame_json(plain)


def test_cli_top_and_also_solve(engine, registry):
    lex = registry.get("SCOWL70")
    cgp = _natural_endgame(lex, 8600, 8)
    g = game_from_position(parse_cgp(cgp), lex)
    g.solver_mode()
    run = [sys.executable, "-m", "macondo_server", "endgame", cgp, "--plies", "3", "--threads", "1", "--tt-mb", "16"]
    out = subprocess.run(run + ["--top", "3", "--also-solve", "pass", "--json"], capture_output=True, text=True,
                         check=True)
    d = json.loads(out.stdout)
    assert len(d["top_lines"]) == 3 and d["top_lines"][0]["value"] == d["value"]
    assert [t["value"] for t in d["top_lines"]] == sorted((t["value"] for t in d["top_lines"]), reverse=True)
    want = _value_after(lex, g, ("pass", 0, 0, False, (), 0), 3, heuristics=False)
    text = subprocess.run(run + ["--no-heuristics", "--also-solve", "pass"], capture_output=True, text=True,
                          check=True).stdout
    assert f"pass: value {want:+d}" in text
    for args, needle in ((["--top", "0"], "--top: must be a whole number from 1 to 64"),
                         (["--top", "65"], "--top"),
                         (["--also-solve", _off_rack(engine, parse_cgp(cgp))], "is not a legal play here"),
                         (["--also-solve", "junk"], "bad move"),
                         (["--top", "2", "--first-win"], "first-win")):
        bad = subprocess.run(run + args, capture_output=True, text=True)
        assert bad.returncode == 1, args
        lines = bad.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0] and "Traceback" not in bad.stderr, (args, bad.stderr)



def test_review_states_the_exact_loss_of_the_move_played(engine, registry, monkeypatch):
    # a review's endgame turn values the played move in the same search as the best (also-solve): one solve, and
    # at a depth the game cannot outlast the loss is the exact one, the same as solving the position after the
    # played move on its own
    import threading

    import macondo_server.analysis.review as review

    lex = registry.get("SCOWL70")
    cgp = _natural_endgame(lex, 8800, 6)
    pos = parse_cgp(cgp)
    g = game_from_position(pos, lex)
    g.solver_mode()
    bound = game_length_bound(len(pos.racks[0]), len(pos.racks[1]))
    gen = engine.generate(pos).moves
    played = gen[-2].move                      # a weak static play (the last is the pass)
    text = format_move(played, pos.ld, pos.board)
    made = []

    class Counting(review.EndgameJob):
        def __init__(self, *a, **kw):
            made.append(a[2])
            super().__init__(*a, **kw)

    monkeypatch.setattr(review, "EndgameJob", Counting)
    opts = review.AnalyzeOptions(endgame_plies=bound, endgame_candidates=2, threads=1, tt_megabytes=16)
    t = review.TurnAnalysis(event=1, line=0, player=0, nick="p", rack="", bag=0, phase="",
                            played=review.Candidate(text, 0))
    review._Analyzer(engine, lex, opts, threading.Event()).endgame(pos, played, text, gen, t)
    assert len(made) == 1 and text in made[0].also_solve
    exact = _value_after(lex, g, (played.kind, played.row, played.col, played.vertical, played.tiles,
                                  gen[-2].score), bound, heuristics=True)
    assert t.played.value == exact and t.best is not None
    assert t.spread_loss == t.best.value - exact > 0 and t.complete
