"""The shell's analysis and review commands driven as a user would (scripted lines into a live server):
`analyze` (a whole game, one event, Ctrl-C), `infer`, `leave`, `sim continue` / `sim trim` (and the exact merge
of their statistics), `load` from an http(s) address, `set` showing the loaded game's lexicon."""

from __future__ import annotations

import http.server
import io
import math
import random
import re
import signal
import statistics
import threading
import time
from pathlib import Path

import pytest
from macondo_client import pb
from macondo_client.shell import (
    MacondoShell,
    continuation_seed,
    merge_play,
    merge_sim,
    only_event,
    run_shell,
)

from macondo_server.analysis.infer import InferOptions, infer, last_play_on
from macondo_server.api.convert import infer_to_pb
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.gcg import parse_gcg

from conftest import ROOT, have_lexicon, needs_nwl20

EMPTY = "/".join(["15"] * 15)
NOTES = ROOT / "tests" / "data" / "gcg" / "notes_pragmas.gcg"
CAT = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15 AEINRST/ 10/0 0"
# a small analysis budget (the figures are compared between runs, not judged)
SMALL = "-iterations 60 -plies 1 -plays 4 -threads 1 -seed 3 -endgameplies 2"


def _shell(client, script: str) -> str:
    out = io.StringIO()
    run_shell(client, stdin=io.StringIO(script), stdout=out)
    text = out.getvalue()
    assert "Traceback" not in text and "internal error" not in text, text
    return text


def _after(text: str, command: str) -> str:
    """What the shell printed for `command` (up to the next prompt)."""
    return text.split(f"macondo> {command}\n", 1)[1].split("macondo> ", 1)[0]


def _shell_obj(client) -> tuple[MacondoShell, io.StringIO]:
    out = io.StringIO()
    return MacondoShell(client, stdin=io.StringIO(), stdout=out, interactive=False), out


def _run(shell: MacondoShell, out: io.StringIO, line: str) -> str:
    start = len(out.getvalue())
    shell.onecmd(line)
    text = out.getvalue()[start:]
    assert "internal error" not in text, text
    return text


# ------------------------------------------------------------------ sim continue / sim trim


def _stats(xs: list[float]) -> tuple[float, float]:
    """Mean and standard error of samples (independent of the shell's arithmetic)."""
    if len(xs) < 2:
        return (xs[0] if xs else 0.0), 0.0
    return statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))


def _play(notation: str, eq: list[float], win: list[float], ply_scores: list[list[float]]) -> pb.SimmedPlayInfo:
    e, ese = _stats(eq)
    w, wse = _stats(win)
    return pb.SimmedPlayInfo(
        move=pb.Move(notation=notation), iterations=len(eq), equity=e, equity_stderr=ese,
        win_pct=100 * w, win_pct_stderr=100 * wse,
        ply_stats=[pb.PlyStats(mean_score=statistics.fmean(s) if s else 0.0, bingo_pct=0.0) for s in ply_scores])


@pytest.mark.parametrize("n1,n2", [(37, 55), (1, 9), (2, 1), (0, 12), (1000, 3)])
def test_merge_is_exact_for_independent_samples(n1, n2):
    rng = random.Random(n1 * 1000 + n2)
    eq = [rng.gauss(10, 25) for _ in range(n1 + n2)]
    win = [rng.random() for _ in range(n1 + n2)]
    ply = [[rng.gauss(30, 10) for _ in range(n1 + n2)] for _ in range(2)]
    a = _play("8G QI", eq[:n1], win[:n1], [p[:n1] for p in ply])
    b = _play("8G QI", eq[n1:], win[n1:], [p[n1:] for p in ply])
    m = merge_play(a, b)
    whole_eq, whole_eq_se = _stats(eq)
    whole_win, whole_win_se = _stats(win)
    assert m.iterations == n1 + n2
    assert m.equity == pytest.approx(whole_eq, rel=1e-9, abs=1e-9)
    assert m.equity_stderr == pytest.approx(whole_eq_se, rel=1e-7, abs=1e-9)
    assert m.win_pct == pytest.approx(100 * whole_win, rel=1e-9)
    assert m.win_pct_stderr == pytest.approx(100 * whole_win_se, rel=1e-7, abs=1e-9)
    for k in range(2):
        assert m.ply_stats[k].mean_score == pytest.approx(statistics.fmean(ply[k]), rel=1e-9)


def test_merge_keeps_the_base_plays_ranked_and_pruned_ones_as_they_were():
    def play(n: str, win: float, eq: float, it: int, pruned: bool = False) -> pb.SimmedPlayInfo:
        return pb.SimmedPlayInfo(move=pb.Move(notation=n), win_pct=win, equity=eq, iterations=it, pruned=pruned,
                                 win_pct_stderr=1.0, equity_stderr=1.0)

    base = pb.SimulateProgress(plays=[play("A", 60, 10, 100), play("B", 55, 8, 100), play("C", 20, 1, 40, True)],
                               iterations=100, final=True, stop_reason="95% confidence")
    latest = pb.SimulateProgress(plays=[play("B", 70, 12, 300), play("A", 50, 5, 300), play("C", 90, 50, 300),
                                        play("X", 99, 99, 300)], iterations=300, final=True,
                                 stop_reason="iterations cap 300")
    merged = merge_sim(base, latest, 2)
    assert merged is not None
    assert [p.move.notation for p in merged.plays] == ["B", "A", "C"]      # X was not kept; C stays last
    by = {p.move.notation: p for p in merged.plays}
    assert by["B"].iterations == 400 and by["B"].win_pct == pytest.approx((55 * 100 + 70 * 300) / 400)
    assert by["C"].iterations == 40 and by["C"].win_pct == 20 and by["C"].pruned
    assert merged.iterations == 400 and merged.stop_reason == "iterations cap 300; 2 runs merged"
    running = merge_sim(base, None, 2)
    assert running is not None and not running.final and [p.move.notation for p in running.plays] == ["A", "B", "C"]


def test_continuation_seeds_are_distinct_and_reproducible():
    seeds = [continuation_seed(5, r) for r in range(2, 200)]
    assert len(set(seeds)) == len(seeds) and 5 not in seeds
    assert seeds == [continuation_seed(5, r) for r in range(2, 200)]
    assert continuation_seed(6, 2) != continuation_seed(5, 2)


def test_sim_continue_and_trim_in_the_shell(client):
    shell, out = _shell_obj(client)
    _run(shell, out, "new -seed 11")
    assert "no simulation to continue" in _run(shell, out, "sim continue")
    _run(shell, out, "sim -fg -iterations 40 -num-plays 5 -seed 2 -threads 1 -plies 1")
    first_sim = shell.sim
    assert first_sim is not None
    first = first_sim.result()
    assert first is not None and len(first.plays) == 5 and all(p.iterations == 40 for p in first.plays)

    text = _run(shell, out, "sim continue -iterations 30 -fg")
    second_sim = shell.sim
    assert second_sim is not None and second_sim is not first_sim
    merged = second_sim.result()
    assert merged is not None and merged.iterations == 70 and "2 runs merged" in text
    assert {p.move.notation for p in merged.plays} == {p.move.notation for p in first.plays}
    assert all(p.iterations == 70 for p in merged.plays)
    run2 = second_sim.stream.latest
    assert run2 is not None and run2.iterations == 30
    # the new run is another sample (another seed), and the table is the exact merge of the two runs
    by1 = {p.move.notation: p for p in first.plays}
    by2 = {p.move.notation: p for p in run2.plays}
    assert any(by1[n].equity != by2[n].equity for n in by1)
    for p in merged.plays:
        want = merge_play(by1[p.move.notation], by2[p.move.notation])
        assert (p.equity, p.equity_stderr, p.win_pct) == pytest.approx((want.equity, want.equity_stderr, want.win_pct))
    assert "Iterations: 70 (final, iterations cap 30; 2 runs merged" in text
    assert shell.ranking == [p.move.notation for p in merged.plays]

    worst = [p.move.notation for p in merged.plays[-2:]]
    text = _run(shell, out, "sim trim 2")
    assert f"trimmed 2 plays: {', '.join(worst)}" in text
    trimmed = shell.sim.result()
    assert trimmed is not None and len(trimmed.plays) == 3
    assert not set(worst) & {p.move.notation for p in trimmed.plays}

    _run(shell, out, "sim continue -iterations 20 -threads 1")
    shell.sim.thread.join(30)
    text = _run(shell, out, "sim show")
    final = shell.sim.result()
    assert final is not None and final.final and len(final.plays) == 3
    assert all(p.iterations == 90 for p in final.plays) and final.iterations == 90
    assert not set(worst) & {p.move.notation for p in final.plays}
    rows = [" ".join(line.split()[1:3]) for line in text.splitlines() if line[:3].strip().isdigit()]
    assert len(rows) == 3 and not set(worst) & set(rows)
    assert "3 runs merged" in text

    # refusals: too many plays trimmed, a running simulation, a changed position
    assert "would leave none" in _run(shell, out, "sim trim 3")
    _run(shell, out, "sim continue -threads 1")            # until stopped
    assert "sim stop first" in _run(shell, out, "sim trim 1")
    time.sleep(0.5)
    stopped = _run(shell, out, "sim stop")
    assert "4 runs merged" in stopped and shell.sim.result().plays[0].iterations > 90
    _run(shell, out, "commit #1")
    assert "the position changed" in _run(shell, out, "sim continue -iterations 5")
    _run(shell, out, "quit")


def test_sim_statistics_in_the_shell(client):
    """sim heatmap / playstats / tilestats after a simulation (statistics on by default), merged by sim continue
    (counts add), refused cleanly without statistics or for a play or ply that is not there."""
    shell, out = _shell_obj(client)
    _run(shell, out, "new -seed 11")
    assert "no simulation" in _run(shell, out, "sim heatmap 1")
    _run(shell, out, "sim -fg -iterations 40 -num-plays 3 -seed 2 -threads 1")
    first = shell.sim.result()
    lead = first.plays[0]
    assert all(sum(s.score_histogram) == 40 for s in lead.ply_stats) and len(lead.ply_stats) == 2
    text = _run(shell, out, "sim playstats 1")
    assert text.startswith(f"#1 {lead.move.display.strip()}: 40 iterations") and "Ply 2 (the player on turn)" in text
    assert _run(shell, out, f"sim playstats {lead.move.notation}") == text       # by its notation, unquoted
    assert _run(shell, out, f'sim playstats "{lead.move.notation.lower()}"') == text
    tiles = _run(shell, out, "sim tilestats")
    assert "held" in tiles and tiles.splitlines()[1].count("#") == 3 and tiles.splitlines()[-1].startswith("all")
    one = _run(shell, out, "sim tilestats 2")
    assert one.splitlines()[1].count("#") == 1
    heat = _run(shell, out, "sim heatmap 1").splitlines()
    assert "ply 1 (the opponent)" in heat[0] and heat[1].split() == list("ABCDEFGHIJKLMNO") and len(heat) == 17
    assert "ply 2 (the player on turn)" in _run(shell, out, f"sim heatmap {lead.move.notation} 2")
    assert "ply must be 1 to 2" in _run(shell, out, "sim heatmap 1 3")
    assert "no play #9" in _run(shell, out, "sim playstats 9")
    assert "takes a play" in _run(shell, out, "sim playstats")
    assert "not among the simulated plays" in _run(shell, out, "sim heatmap 1A ZZZ")

    # sim continue: the counts of both runs add up
    _run(shell, out, "sim continue -iterations 30 -fg")
    run2 = shell.sim.stream.latest
    merged = shell.sim.result()
    by1 = {p.move.notation: p for p in first.plays}
    by2 = {p.move.notation: p for p in run2.plays}
    for p in merged.plays:
        a, b = by1[p.move.notation], by2[p.move.notation]
        assert [sum(s.score_histogram) for s in p.ply_stats] == [70, 70]
        assert list(p.ply_stats[0].heatmap) == [x + y for x, y in zip(a.ply_stats[0].heatmap, b.ply_stats[0].heatmap,
                                                                       strict=True)]
        held = {t.tile: t.held for t in p.opponent_leave}
        assert held["E"] == pytest.approx((40 * a.opponent_leave[5].held + 30 * b.opponent_leave[5].held) / 70)
    assert "70 iterations" in _run(shell, out, "sim playstats 1")

    # without statistics
    _run(shell, out, "sim -fg -iterations 10 -num-plays 2 -seed 2 -threads 1 -stats false")
    assert "collected no statistics" in _run(shell, out, "sim heatmap 1")
    _run(shell, out, "quit")


def test_merge_play_adds_the_statistics():
    def play(n: int, hist: list[int], heat: list[int], kept: float) -> pb.SimmedPlayInfo:
        return pb.SimmedPlayInfo(move=pb.Move(notation="8G QI"), iterations=n, ply_stats=[pb.PlyStats(
            score_histogram=hist, heatmap=heat)], opponent_leave=[pb.LeaveTileStats(tile="A", held=1.0, kept=kept)])

    m = merge_play(play(10, [4, 6], [1, 0, 2, 0], 0.5), play(30, [10, 20], [0, 3, 3, 0], 0.1))
    assert list(m.ply_stats[0].score_histogram) == [14, 26] and list(m.ply_stats[0].heatmap) == [1, 3, 5, 0]
    assert m.opponent_leave[0].kept == pytest.approx(0.2) and m.opponent_leave[0].held == pytest.approx(1.0)
    # a run without statistics: none kept (they would not add up to the iterations)
    m = merge_play(play(10, [4, 6], [1, 0, 2, 0], 0.5), pb.SimmedPlayInfo(move=pb.Move(notation="8G QI"),
                                                                          iterations=5, ply_stats=[pb.PlyStats()]))
    assert not m.ply_stats[0].score_histogram and not m.ply_stats[0].heatmap and not m.opponent_leave


# ------------------------------------------------------------------ leave and infer (the bundled lexicon)


def test_leave_values_and_refusals(client, engine):
    lex = engine.lexicon(None)         # the server's default lexicon, as the shell's without a game
    text = _shell(client, "leave AEINST\nleave ?s\nleave AEINRST\nleave ZZ\nleave AB1\nleave AEINRSTU\n"
                          "leave\nquit\n")
    ld = lex.ld
    for leave in ("AEINST", "?S"):
        want = lex.klv.leave_value(ld.parse_rack(leave)) / 1000
        assert f"{leave}: {want:.3f} (leave values of {lex.name})" in text
    assert "AEINRST: 0.000 (not in the leave table" in text
    assert "has 2 Z; the distribution holds 1" in _after(text, "leave ZZ")
    assert "unknown rack tile '1'" in _after(text, "leave AB1")
    assert "has 8 tiles; at most 7" in _after(text, "leave AEINRSTU")
    assert "leave takes one rack" in _after(text, "leave")


def test_infer_named_play_matches_the_engine(client, engine):
    cgp = f"{CAT} lex {engine.lexicon(None).name};"
    text = _shell(client, f"load cgp {cgp}\ninfer 8H CAT -top 4 -threads 1 -model tolerance\ninfer -withdrawn\n"
                          "infer 8H CAT -tolerance 5000\ninfer 9H CAT\ninfer 8H CAT -top 4 -threads 1 -temperature 3\n"
                          "infer 8H CAT -model magic\ninfer 8H CAT -history 2\nquit\n")
    pos = parse_cgp(cgp)
    lex = engine.lexicon_for(pos)
    res = infer(engine, last_play_on(pos, "8H CAT", lex), InferOptions(threads=1, model="tolerance"))
    want = infer_to_pb(res, pos.ld, 4)
    shown = _after(text, "infer 8H CAT -top 4 -threads 1 -model tolerance")
    assert f"Judged every possible rack: {want.racks_judged:,} distinct racks, {want.racks_consistent:,} consistent" \
        in shown
    for v in want.top:
        assert f"{v.leave:<10}{100 * v.posterior:>9.2f}%" in shown
    assert f"lexicon {lex.name}" in shown
    assert "-withdrawn goes with a PLAY" in _after(text, "infer -withdrawn")
    assert "tolerance must be 0 to 1000" in _after(text, "infer 8H CAT -tolerance 5000")
    assert "not on the board" in _after(text, "infer 9H CAT")
    # the softmax model (the default) at another temperature
    res = infer(engine, last_play_on(pos, "8H CAT", lex), InferOptions(threads=1, temperature=3))
    want = infer_to_pb(res, pos.ld, 4)
    shown = _after(text, "infer 8H CAT -top 4 -threads 1 -temperature 3")
    assert "(softmax, T 3 points over each rack's top 20 moves)" in shown
    assert f"worth {want.effective_leaves:,.0f} equally likely ones" in shown
    for v in want.top:
        assert f"{v.leave:<10}{100 * v.posterior:>9.2f}%" in shown
    assert "model must be tolerance or softmax" in _after(text, "infer 8H CAT -model magic")
    assert "-history goes with the game's last play" in _after(text, "infer 8H CAT -history 2")
    # a position loaded as a CGP has no history: the game mode says there is nothing to infer from
    text = _shell(client, f"load cgp {cgp}\ninfer\nquit\n")
    assert "nothing to infer from" in _after(text, "infer")


# ------------------------------------------------------------------ NWL20: infer on a game, analyze, set


@needs_nwl20
def test_infer_on_the_loaded_game_and_the_documented_figures(client):
    # docs/inference.md's example, figure for figure
    text = _shell(client, f"load cgp {CAT} lex NWL20;\ninfer 8H CAT -top 5\nquit\n")
    shown = _after(text, "infer 8H CAT -top 5")
    assert ("24,907 distinct racks, each weighed against its own moves; 24,907 leaves of 4 kept (24,907 "
            "possible), worth 335 equally likely ones") in shown
    assert "AEST           4.78%    0.036%    132.2" in shown
    # the game at turn 3: the opponent's last play before it was 7J AHOLD; the game mode finds it and judges
    # it on the position the player on turn knows, as naming it does, and weighs their turn before it too
    text = _shell(client, f"load {NOTES} -turn 3\ninfer -threads 1 -history 0\ninfer 7J AHOLD -threads 1\n"
                          "infer -threads 1\nquit\n")
    found = _after(text, "infer -threads 1 -history 0")
    named = _after(text, "infer 7J AHOLD -threads 1")
    assert "Inference for the opponent's play 7J AHOLD" in found
    strip = [line for line in found.splitlines() if not line.endswith(" s")]
    assert strip == [line for line in named.splitlines() if not line.endswith(" s")]
    assert "Tiles kept" in found and "lexicon NWL20" in found
    weighed = _after(text, "infer -threads 1")
    assert "Weighed with their earlier turns: " in weighed


def test_set_shows_the_loaded_games_lexicon(client, engine):
    default = engine.lexicon(None).name
    text = _shell(client, "set\nnew -seed 3\nset lexicon\nquit\n")
    assert f"lexicon {default} (the server default)" in _after(text, "set")
    assert f"lexicon {default} (the loaded game's)" in _after(text, "set lexicon")
    if not have_lexicon("NWL20"):
        return
    text = _shell(client, f"load {NOTES} -turn 2\nset\nset lexicon\nset lexicon {default}\nset lexicon\nquit\n")
    assert "lexicon NWL20 (the loaded game's)" in _after(text, "set")
    assert f"new games: {default} (the server default)" in _after(text, "set")
    assert "lexicon NWL20 (the loaded game's)" in _after(text, "set lexicon")
    later = text.split(f"set lexicon {default}\n", 1)[1]
    assert f"lexicon {default} (set; the loaded game's is NWL20" in _after(later, "set lexicon")


def _row(text: str, event: int) -> str:
    """The analysis table's row of one event, without the run's timing."""
    rows = [line for line in text.splitlines() if line.split()[:1] == [str(event)]]
    assert len(rows) == 1, text
    return " ".join(rows[0].split())


@needs_nwl20
def test_analyze_one_event_as_in_the_whole_game(client):
    text = _shell(client, f"load {NOTES}\nanalyze 5 {SMALL}\nanalyze 22 {SMALL}\nanalyze {SMALL}\n"
                          f"analyze 24 {SMALL}\nanalyze 99\nanalyze 5 -player bot1\nquit\n")
    one = _after(text, f"analyze 5 {SMALL}")
    assert "1 of 1 turns analysed" in one and "RURA.IST" in one and "Summary" in one
    late = _after(text, f"analyze 22 {SMALL}")
    whole = _after(text, f"analyze {SMALL}")
    assert "23 of 23 turns analysed" in whole and "Summary" in whole
    assert _row(one, 5) == _row(whole, 5)          # the same figures, event 5 a simulation
    assert _row(late, 22) == _row(whole, 22)       # and event 22, an endgame
    assert "endgame" in _row(whole, 22)
    assert "not a move to analyse" in _after(text, f"analyze 24 {SMALL}")   # the end-rack points
    assert "no event 99" in _after(text, "analyze 99")
    assert "-player goes with the whole game" in _after(text, "analyze 5 -player bot1")


@needs_nwl20
def test_analyze_ctrl_c_shows_the_turns_done(client, monkeypatch):
    import macondo_client.shell as shell_module

    shell, out = _shell_obj(client)
    _run(shell, out, f"load {NOTES}")
    # Ctrl-C once the first turns have come (what the user sees on the progress line)
    first_turn = threading.Event()
    follow = shell_module.follow

    def watching(stream, errors, name, each=None):
        def seen(msg):
            if msg.turns:
                first_turn.set()
            if each is not None:
                each(msg)
        return follow(stream, errors, name, seen)

    monkeypatch.setattr(shell_module, "follow", watching)
    hits = []
    previous = signal.signal(signal.SIGINT, lambda *_: hits.append(1))   # a late signal must not end the test
    sent = []

    def ctrl_c() -> None:
        if first_turn.wait(120):
            sent.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)

    watcher = threading.Thread(target=ctrl_c, daemon=True)
    try:
        watcher.start()
        text = _run(shell, out, "analyze -iterations 1000 -plies 2 -threads 1")
        ended = time.monotonic()
    finally:
        watcher.join(1)
        signal.signal(signal.SIGINT, previous)
    assert sent, "no turn was analysed"
    assert "stopping; the best result so far follows" in text
    assert "(stopped: what was done so far)" in text
    counts = re.search(r"(\d+) of (\d+) turns analysed", text)
    assert counts is not None and int(counts.group(2)) == 23, text
    assert 0 < int(counts.group(1)) < 23, text
    assert ended - sent[0] < 10
    _run(shell, out, "quit")


def test_analyze_needs_a_record(client):
    text = _shell(client, f"load cgp {CAT}\nanalyze\nnew -seed 3\nanalyze 1\nquit\n")
    assert "began at a CGP position" in _after(text, "analyze")
    assert "no event 1" in _after(text, "analyze 1")


def test_only_event_strips_every_other_rack():
    gcg = NOTES.read_text(encoding="utf-8")
    rec = parse_gcg(only_event(gcg, 5))
    full = parse_gcg(gcg)
    assert [e.rack for e in rec.events][4] == "AIRRSTU"
    assert all(not e.rack for i, e in enumerate(rec.events) if i != 4 and e.type in ("play", "pass", "exchange"))
    assert [(e.type, e.position, e.word, e.score, e.cumulative, e.note) for e in rec.events] == \
        [(e.type, e.position, e.word, e.score, e.cumulative, e.note) for e in full.events]


# ------------------------------------------------------------------ load from a URL


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, dict[str, str], bytes, float]] = {}

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        if self.path == "/trickle.gcg":          # a byte every 0.2 s: each read is quick, the whole is not
            self.send_response(200)
            self.send_header("Content-Length", "40")
            self.end_headers()
            try:
                for _ in range(40):
                    self.wfile.write(b"#")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
            return
        status, headers, body, delay = self.routes.get(self.path, (404, {}, b"no such page", 0.0))
        time.sleep(delay)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_load_from_a_url(client, web, monkeypatch):
    httpd, base = web
    # a record made on the server's default lexicon: four moves of a new game, exported
    state = client.create_game(seed=21, players=["ann", "bob"])
    for _ in range(4):
        state = client.engine_move(state.game_id).game
    gcg = client.export_game(state.game_id)
    client.delete_game(state.game_id)
    cgp = f"{EMPTY} AEINQST/ 0/0 0"
    _Handler.routes = {
        "/game.gcg": (200, {"Content-Type": "text/plain; charset=utf-8"}, gcg.encode(), 0.0),
        "/game": (200, {}, gcg.encode(), 0.0),
        "/pos.cgp": (200, {}, (cgp + "\n").encode(), 0.0),
        "/two-lines": (200, {}, b"one line\nanother line\n", 0.0),
        "/big.gcg": (200, {}, b"#" * (1024 * 1024 + 1), 0.0),
        "/slow.gcg": (200, {}, gcg.encode(), 3.0),
        "/moved": (302, {"Location": "/pos.cgp"}, b"", 0.0),
        "/to-file": (302, {"Location": f"file://{Path(__file__).resolve()}"}, b"", 0.0),
        "/to-ftp": (302, {"Location": "ftp://127.0.0.1/game.gcg"}, b"", 0.0),
    }
    monkeypatch.setattr("macondo_client.shell.FETCH_TIMEOUT", 1.0)
    text = _shell(client, f"load {base}/game.gcg -turn 2\nlist\nload {base}/game\nload gcg {base}/pos.cgp\n"
                          f"load {base}/pos.cgp\nload cgp {base}/moved\nload {base}/missing.gcg\n"
                          f"load {base}/big.gcg\nload {base}/slow.gcg\nload {base}/trickle.gcg\nload {base}/to-file\n"
                          f"load {base}/to-ftp\n"
                          f"load {base}/two-lines\nload {base}/pos.cgp -turn 1\n"
                          "load http://127.0.0.1:1/x.gcg\nquit\n")
    first = _after(text, f"load {base}/game.gcg -turn 2")
    assert "turn 2 of 4" in first and "ann" in first
    assert "ann" in _after(text, "list") and "  ->  turn 2" in _after(text, "list")
    assert "turn 4 of 4" in _after(text, f"load {base}/game")            # recognised as GCG by its text
    assert "error:" in _after(text, f"load gcg {base}/pos.cgp")          # a CGP is not a record
    assert "AEINQST" in _after(text, f"load {base}/pos.cgp") and "bag 86 tiles" in _after(text, f"load {base}/pos.cgp")
    assert "AEINQST" in _after(text, f"load cgp {base}/moved")          # an http redirect is followed
    assert "HTTP 404" in _after(text, f"load {base}/missing.gcg")
    assert "longer than 1,048,576 bytes" in _after(text, f"load {base}/big.gcg") or \
        "1,048,577 bytes" in _after(text, f"load {base}/big.gcg")
    assert "no answer within 1 s" in _after(text, f"load {base}/slow.gcg")
    assert "no answer within 1 s" in _after(text, f"load {base}/trickle.gcg")
    # redirects lead to http(s) addresses only: urllib refuses file:, the shell ftp:
    assert "Redirection to url 'file:" in _after(text, f"load {base}/to-file")
    assert "which is not an http(s) address" in _after(text, f"load {base}/to-ftp")
    assert "neither a GCG record nor a CGP position" in _after(text, f"load {base}/two-lines")
    assert "-turn does not apply" in _after(text, f"load {base}/pos.cgp -turn 1")
    assert "cannot load http://127.0.0.1:1/x.gcg" in _after(text, "load http://127.0.0.1:1/x.gcg")
