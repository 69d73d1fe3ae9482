"""The web board's simulation statistics in headless Chromium (web/test/simstats.mjs): after a Simulate with
statistics the leader's heatmap of the opponent's replies is painted on the board and its score histogram drawn,
both equal to `macondo sim --stats --json` for the same inputs (one thread: the same iterations); a row's click
shows another play's, a button another ply's; without statistics nothing is painted. MACONDO_WEB_DOCS_SHOTS=1
also copies the screenshot docs/board-sim-stats.png. Skipped where chromium or node/npm are absent."""

from __future__ import annotations

import os
import shutil

from test_web import SHOTS, _cli_json, drive_board, need_board

from conftest import ROOT, needs_nwl20

# a midgame position (bench/sim.py's)
MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/"
           "5I1N3N3/3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 302/300 0 lex NWL20;")
COLS = "ABCDEFGHIJKLMNOPQRSTU"
PLAYS, ITERATIONS = 4, 150


def _heat(play: dict, ply: int) -> dict[str, int]:
    """A play's heatmap of one ply in the CLI's JSON, as square -> tiles placed (squares with none left out)."""
    rows = play["ply_stats"][ply - 1]["heatmap"]
    return {f"{COLS[c]}{r + 1}": n for r, row in enumerate(rows) for c, n in enumerate(row) if n}


@needs_nwl20
def test_sim_statistics_on_the_board(capsys):
    need_board()
    env = {"MACONDO_SIM_CGP": MIDGAME, "MACONDO_SIM_PLAYS": str(PLAYS), "MACONDO_SIM_ITERATIONS": str(ITERATIONS)}
    page = drive_board("simstats.mjs", env, timeout=300)

    assert page["steps"] == ["board-sim-stats", "sim-stats-ply2"]
    for name in page["steps"]:
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    if os.environ.get("MACONDO_WEB_DOCS_SHOTS") == "1":
        shutil.copyfile(SHOTS / "board-sim-stats.png", ROOT / "docs" / "board-sim-stats.png")
    assert page["consoleErrors"] == []
    assert page["statsDefault"] is True

    cli = _cli_json(["sim", MIDGAME, "--num-plays", str(PLAYS), "--iterations", str(ITERATIONS), "--plies", "2",
                     "--threads", "1", "--stats", "--json"], capsys)
    assert page["rows"] == [p["move"] for p in cli["plays"]]
    by_move = {p["move"]: p for p in cli["plays"]}

    # the leader: its ply-1 heatmap painted square by square, its histogram bar by bar, as the CLI's
    lead = page["leader"]
    first = by_move[page["rows"][0]]
    assert not lead["hidden"] and lead["play"] == page["rows"][0] and lead["ply"] == "1"
    assert lead["iterations"] == lead["histogramTotal"] == str(ITERATIONS)
    assert {h["coord"]: h["count"] for h in lead["heat"]} == _heat(first, 1)
    assert int(lead["heatTotal"]) == sum(_heat(first, 1).values()) > 0
    hist = first["ply_stats"][0]["score_histogram"]
    assert lead["bars"] == hist[:len(lead["bars"])] and sum(hist[len(lead["bars"]):]) == 0
    assert [b["pressed"] for b in lead["plyButtons"]] == ["true", "false"]
    assert lead["leaveRows"] > 0
    shown = page["leaderShown"]
    assert shown["preview"] and shown["heat"] == lead["heat"]
    # a hotter square is drawn redder: the most used square's colour is the most opaque
    hottest = max(lead["heat"], key=lambda h: h["count"])
    coolest = min(lead["heat"], key=lambda h: h["count"])
    alpha = lambda h: float(h["colour"].rsplit(",", 1)[1].rstrip(")"))   # noqa: E731
    assert alpha(hottest) > alpha(coolest) or hottest["count"] == coolest["count"]

    # the second play, chosen by its row: its own heatmap, and the play itself shown on the board
    second = by_move[page["rows"][1]]
    two = page["second"]
    assert two["play"] == page["rows"][1] and {h["coord"]: h["count"] for h in two["heat"]} == _heat(second, 1)
    assert two["preview"] and not set(two["preview"]) & {h["coord"] for h in two["heat"]}
    ply2 = page["secondPly2"]
    assert ply2["ply"] == "2" and {h["coord"]: h["count"] for h in ply2["heat"]} == _heat(second, 2)
    assert ply2["bars"] == second["ply_stats"][1]["score_histogram"][:len(ply2["bars"])]

    # without statistics: nothing drawn
    assert page["without"]["hidden"] and page["without"]["heat"] == []
