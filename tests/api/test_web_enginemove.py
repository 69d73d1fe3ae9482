"""The web board's engine move in headless Chromium (web/test/enginemove.mjs): a timed position (the CGP's tmr op)
shows both players' clocks; the engine plays with the `club` level and then with `best`, each play and how it was
chosen shown, equal to the game's record, and only the mover's clock runs. MACONDO_WEB_DOCS_SHOTS=1 also copies
the screenshot docs/board-engine-move.png. Skipped where chromium or node/npm are absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from test_web import CHROMIUM, SHOTS, WEB, _ready

from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server

from conftest import ROOT, needs_nwl20, shared_settings

MIDGAME = ("7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/"
           "5I1N3N3/3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 302/300 0 lex NWL20; tmr 600000/540000;")


@needs_nwl20
def test_engine_move_on_the_board() -> None:
    reason = _ready()
    if reason:
        pytest.skip(reason)
    SHOTS.mkdir(parents=True, exist_ok=True)
    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=2, http=HttpOptions(port=0, web=True))
    assert running.http is not None
    try:
        env = {**os.environ, "CHROMIUM": CHROMIUM, "MACONDO_TIMED_CGP": MIDGAME}
        proc = subprocess.run(["node", "test/enginemove.mjs", f"http://127.0.0.1:{running.http.port}/", str(SHOTS)],
                              cwd=WEB, env=env, capture_output=True, text=True, timeout=400)
        assert proc.returncode == 0, proc.stderr[-4000:]
        page = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        running.stop(1)
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
