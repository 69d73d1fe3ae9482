"""The web board's engine move in headless Chromium (web/test/enginemove.mjs): a timed position (the CGP's tmr op)
shows both players' clocks; the engine plays with the `club` level and then with `best`, each play and how it was
chosen shown, equal to the game's record, and only the mover's clock runs. MACONDO_WEB_DOCS_SHOTS=1 also copies
the screenshot docs/board-engine-move.png. Skipped where chromium or node/npm are absent."""

from __future__ import annotations

import os
import shutil

from test_web import SHOTS, drive_board, need_board

from conftest import ROOT, needs_nwl20

MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/"
           "5I1N3N3/3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 302/300 0 lex NWL20; tmr 600000/540000;")


@needs_nwl20
def test_engine_move_on_the_board() -> None:
    need_board()
    env = {"MACONDO_TIMED_CGP": MIDGAME}
    page = drive_board("enginemove.mjs", env, timeout=400)
    assert page["consoleErrors"] == [] and page["error"] == ""
    assert page["steps"] == ["board-engine-move"]
    assert (SHOTS / "board-engine-move.png").stat().st_size > 10_000
    if os.environ.get("MACONDO_WEB_DOCS_SHOTS") == "1":
        shutil.copyfile(SHOTS / "board-engine-move.png", ROOT / "docs" / "board-engine-move.png")
    # both clocks shown from the tmr op: 10:00 for the player on turn, 9:00 for the other
    assert page["clocksBefore"][0].startswith("clock 9:5") or page["clocksBefore"][0].startswith("clock 10:00")
    assert page["clocksBefore"][1] == "clock 9:00"
    club, best = page["moves"]
    assert club["phase"] == "static" and club["text"].startswith(f"club played {club['move']} (static")
    assert best["phase"] == "sim" and best["text"].startswith(f"best played {best['move']} (sim")
    # each player moved once: both clocks ran down, and each by less than the engine's budget allows
    after = [_seconds(c.split()[1]) for c in page["clocksAfter"]]
    assert 0 < after[0] < 600 and 0 < after[1] < 540


def _seconds(text: str) -> int:
    minutes, _, secs = text.partition(":")
    return int(minutes) * 60 + int(secs)
