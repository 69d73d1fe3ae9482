"""The web board in a real headless Chromium (Debian's chromium driven by playwright-core; no browser is
downloaded): load a CGP, generate, watch a pre-endgame live to its end, stop a longer one, upload a GCG and
step through it; a screenshot per step; what the page shows equals the CLI's JSON for the same inputs.
Skipped where chromium or node/npm are absent."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
from pathlib import Path

import pytest

from macondo_server.api.connect import HttpOptions
from macondo_server.api.grpc_server import create_server
from macondo_server.cli import main as cli_main

from conftest import CASES_DIR, LEXICA, ROOT, load_cases, needs_cases, needs_nwl20, shared_settings

WEB = ROOT / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
GCG = CASES_DIR / "gcg" / "success_standard.gcg"
SHOTS = Path(os.environ.get("MACONDO_WEB_SHOTS", ROOT / "build" / "web-shots"))


def _ready() -> str | None:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"chromium absent ({CHROMIUM}; apt-get install -y chromium)"
    reason = runpy.run_path(str(WEB / "build.py"))["build"]()
    if reason:
        return reason
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "playwright-core is not installed in web/"
    return None


def _cli_json(args: list[str], capsys) -> dict:
    capsys.readouterr()
    assert cli_main(["--data-dir", str(LEXICA), *args]) == 0
    return json.loads(capsys.readouterr().out)


@needs_cases
@needs_nwl20
def test_board_in_headless_chromium(capsys):
    if not GCG.is_file():
        pytest.skip("the shared GCG record is absent")
    reason = _ready()
    if reason:
        pytest.skip(reason)
    cgp = next(c for c in load_cases("peg") if c["id"] == "peg-onyx-nwl20")["cgp"]
    endgame_cgp = next(c for c in load_cases("endgame") if c["id"] == "eg-canik-nwl20")["cgp"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=4, http=HttpOptions(port=0, web=True))
    assert running.http is not None
    try:
        env = {**os.environ, "MACONDO_PEG_CGP": cgp, "MACONDO_GCG_FILE": str(GCG), "MACONDO_GCG_TURN": "3",
               "MACONDO_ENDGAME_CGP": endgame_cgp, "CHROMIUM": CHROMIUM}
        proc = subprocess.run(["node", "test/drive.mjs", f"http://127.0.0.1:{running.http.port}/", str(SHOTS)],
                              cwd=WEB, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-4000:]
        page = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        running.stop(1)

    # every step left a screenshot
    assert page["steps"] == ["01-cgp-loaded", "02-generated", "03-peg-live", "04-peg-final", "05-peg-stopped",
                             "06-gcg-stepped", "07-sim-stopped", "08-endgame"]
    for name in page["steps"]:
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    assert page["unnamedControls"] == []
    # errors as the server words them
    assert "CGP has 3 fields" in page["badCgpError"]["text"] and page["badCgpError"]["code"] == "invalid_argument"
    assert page["errorAfterLoad"] == ""
    # the position: board, rack, unseen tiles
    assert page["boardTiles"] == sum(ch.isalpha() for ch in cgp.split()[0])
    assert page["rack"] == "ENOSTXY" and "AACEISUY" in page["unseen"] and page["previewSquares"] > 0

    # the move list equals `macondo gen --json`
    gen = _cli_json(["gen", cgp, "-n", "30", "--json"], capsys)
    assert [(m["move"], m["score"], m["equity"]) for m in page["moves"]] == \
        [(m["move"], str(m["score"]), f"{m['equity']:.3f}") for m in gen["moves"]]

    # the pre-endgame: live updates before the final one, and the result equals `macondo peg --json`
    assert page["pegRunningUpdates"] >= 2
    assert page["peg"]["state"] == "final" and "finished" in page["pegStatus"]
    assert page["pegGridCells"] > 0
    peg = _cli_json(["peg", cgp, "--endgame-plies", "1", "--json"], capsys)
    assert page["peg"]["winner"] == peg["winner"]
    cli_wins = {p["move"]: p["wins"] for p in peg["plays"]}
    assert len(page["peg"]["rows"]) == min(40, len(peg["plays"]))
    for row in page["peg"]["rows"]:
        assert float(row["wins"]) == pytest.approx(cli_wins[row["move"]], abs=0.005), row
    assert [r["move"] for r in page["peg"]["rows"]][:5] == [p["move"] for p in peg["plays"]][:5]

    # stop during a longer solve: the best result so far, promptly
    assert page["stopped"]["state"] == "stopped" and page["stopped"]["rows"] > 0
    assert "best result so far" in page["stoppedStatus"] and page["stopSeconds"] < 5

    # a typed move was played: ONYX puts 4 tiles down for 33 (macondo gen lists it so) and the turn passes
    onyx = next(m for m in gen["moves"] if m["move"] == "13L ONYX")
    assert page["played"]["tilesAdded"] == onyx["tiles_played"] == 4
    assert page["played"]["scores"] == [356 + onyx["score"], 378] and page["played"]["onTurn"] == 1
    # the GCG, stepped through: the position at turn 3 equals `macondo load --turn 3 --json`
    assert page["gcgStart"].startswith("turn 0 of ")
    assert page["gcgTurn"].startswith("turn 3 of ") and page["gcgBack"].startswith("turn 2 of ")
    load = _cli_json(["load", str(GCG), "--turn", "3", "--json"], capsys)
    assert page["gcgCgp"] == load["cgp"]
    assert sorted(page["gcgScores"]) == sorted(load["scores"])
    assert page["gcgTilesByTurn"][0] == 0 and page["gcgTilesByTurn"][-1] > 0
    # the endgame equals `macondo endgame --json` (one thread: the same best line); the sim stopped mid-way
    eg = _cli_json(["endgame", endgame_cgp, "--plies", "3", "--threads", "1", "--json"], capsys)
    assert page["endgame"]["state"] == "final" and int(page["endgame"]["value"]) == eg["value"]
    assert page["endgame"]["line"] == " | ".join(m["move"] for m in eg["best_line"])
    assert page["endgame"]["lineShown"] == len(eg["best_line"])
    assert page["turnsHiddenForCgp"]
    assert "bag is empty" in page["simInEndgameError"]["text"]
    assert page["simInEndgameError"]["code"] in ("invalid_argument", "failed_precondition")
    # the simulation stopped while updating: the ranking so far
    assert page["sim"]["rowsWhileRunning"] > 0 and page["sim"]["rows"]
    assert "best result so far" in page["sim"]["status"]
    # nothing went wrong in the page beyond the refused CGP's HTTP 400
    assert [e for e in page["consoleErrors"] if "400" not in e] == []


def test_web_needs_a_build(tmp_path, monkeypatch):
    import macondo_server.api.connect as http

    monkeypatch.setattr(http, "WEB_DIR", tmp_path)
    from macondo_server.api.grpc_server import ServerStartError

    with pytest.raises(ServerStartError, match="not built"):
        create_server(shared_settings(), "127.0.0.1", 0, http=HttpOptions(port=0, web=True))


def test_static_files_stay_inside_the_build(tmp_path, monkeypatch):
    import urllib.error
    import urllib.request

    import macondo_server.api.connect as http

    (tmp_path / "index.html").write_text("<!doctype html><title>board</title>")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path.parent / "secret.txt").write_text("secret")
    monkeypatch.setattr(http, "WEB_DIR", tmp_path)
    running = create_server(shared_settings(), "127.0.0.1", 0, http=HttpOptions(port=0, web=True))
    assert running.http is not None
    base = f"http://127.0.0.1:{running.http.port}"
    try:
        with urllib.request.urlopen(base + "/", timeout=5) as resp:
            assert resp.status == 200 and b"board" in resp.read()
            assert "default-src 'self'" in resp.headers["content-security-policy"]
        with urllib.request.urlopen(base + "/assets/app.js", timeout=5) as resp:
            assert resp.headers["content-type"].startswith(("text/javascript", "application/javascript"))
        for path in ("/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/nope.html"):
            with pytest.raises(urllib.error.HTTPError) as exc:
                urllib.request.urlopen(base + path, timeout=5)
            assert exc.value.code == 404, path
    finally:
        running.stop(1)


def test_chromium_flags_documented():
    """The launch flags the driver uses work here (no sandbox, no GPU, a fresh profile): kept in one place."""
    text = (WEB / "test" / "drive.mjs").read_text()
    for flag in ("--no-sandbox", "--disable-gpu", "launchPersistentContext(profile"):
        assert flag in text
    assert shutil.which("node") is None or (WEB / "package.json").is_file()
