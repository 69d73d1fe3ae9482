"""The web board in a real headless Chromium (Debian's chromium driven by playwright-core; no browser is
downloaded): load a CGP, generate, watch a pre-endgame live to its end, stop a longer one, set the pre-endgame
options and see them reach the solve, expand long outcome lists and the hidden plays, play a move with a tile
order and copy the new CGP, upload a GCG and step through it (the event list follows), export it, simulate and
solve an endgame; a screenshot per step; what the page shows equals the CLI's JSON for the same inputs.
Skipped where chromium or node/npm are absent. MACONDO_WEB_DOCS_SHOTS=1 also copies the board-*.png shots the
documentation shows into docs/."""

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
DOC_SHOTS = ("board-peg-options", "board-peg-time-limit", "board-review")   # shown by docs/web-board.md


def _ready() -> str | None:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"chromium absent ({CHROMIUM}; apt-get install -y chromium)"
    if not (WEB / "build.py").is_file():
        return "the web board's sources are absent (tests run outside the checkout)"
    reason = runpy.run_path(str(WEB / "build.py"))["build"]()
    if reason:
        return reason
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "playwright-core is not installed in web/"
    return None


def need_board() -> None:
    """Skip unless Chromium and the built board are here; make the screenshots' folder."""
    reason = _ready()
    if reason:
        pytest.skip(reason)
    SHOTS.mkdir(parents=True, exist_ok=True)


def run_script(script: str, args: list[str], env: dict[str, str], timeout: float) -> dict:
    """Run web/test/SCRIPT ARGS... SHOTS with `env` added to this process's (and CHROMIUM) and return the JSON
    line it printed last."""
    proc = subprocess.run(["node", f"test/{script}", *args, str(SHOTS)], cwd=WEB,
                          env={**os.environ, "CHROMIUM": CHROMIUM, **env}, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


LIVE_PEG_PLIES = "4"


def drive_board(script: str, env: dict[str, str], timeout: float, max_jobs: int = 2) -> dict:
    """Start a server with the web board on free ports, run web/test/SCRIPT URL SHOTS against it (run_script)
    and stop the server."""
    running = create_server(shared_settings(), "127.0.0.1", 0, max_jobs=max_jobs, http=HttpOptions(port=0, web=True))
    assert running.http is not None
    try:
        return run_script(script, [f"http://127.0.0.1:{running.http.port}/"], env, timeout)
    finally:
        running.stop(1)


def _cli_json(args: list[str], capsys) -> dict:
    capsys.readouterr()
    assert cli_main(["--data-dir", str(LEXICA), *args]) == 0
    return json.loads(capsys.readouterr().out)


def _events(gcg: str) -> list[str]:
    return [" ".join(line.split()) for line in gcg.splitlines() if line.startswith(">")]


@needs_cases
@needs_nwl20
def test_board_in_headless_chromium(capsys):
    if not GCG.is_file():
        pytest.skip("the shared GCG record is absent")
    need_board()
    cgp = next(c for c in load_cases("peg") if c["id"] == "peg-onyx-nwl20")["cgp"]
    peg4_cgp = next(c for c in load_cases("peg") if c["id"] == "peg-doc1-bagempty-nwl20")["cgp"]
    endgame_cgp = next(c for c in load_cases("endgame") if c["id"] == "eg-canik-nwl20")["cgp"]
    # the pre-endgame watched live takes several progress beats at 4 plies (a 1-ply solve can end within two)
    env = {"MACONDO_PEG_CGP": cgp, "MACONDO_PEG4_CGP": peg4_cgp, "MACONDO_GCG_FILE": str(GCG), "MACONDO_GCG_TURN": "3",
           "MACONDO_ENDGAME_CGP": endgame_cgp, "MACONDO_PEG_PLIES": LIVE_PEG_PLIES}
    page = drive_board("drive.mjs", env, timeout=600, max_jobs=4)

    # every step left a screenshot
    assert page["steps"] == ["01-cgp-loaded", "02-generated", "03-peg-live", "04-peg-final", "05-peg-stopped",
                             "board-peg-options", "board-peg-time-limit", "10-played-tile-order",
                             "06-gcg-stepped", "board-review", "07-sim-stopped", "08-endgame", "09-endgame-top"]
    for name in page["steps"]:
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    if os.environ.get("MACONDO_WEB_DOCS_SHOTS") == "1":
        for name in DOC_SHOTS:
            shutil.copyfile(SHOTS / f"{name}.png", ROOT / "docs" / f"{name}.png")
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

    # the pre-endgame options start at the server's defaults (SolvePreEndgameRequest, `macondo peg --help`)
    d = page["pegDefaults"]
    assert (d["opt-peg-plies"], d["opt-peg-max-tiles"], d["opt-peg-nested"], d["opt-peg-time"]) == ("4", "1", "1", "0")
    assert d["opt-peg-quick"] and d["opt-peg-skip-deep"] and not d["opt-peg-early-cutoff"]
    assert not d["opt-peg-skip-tiebreak"] and not d["opt-peg-heuristics"]
    assert (d["opt-peg-opp-model"], d["opt-peg-leaf"], d["opt-peg-nesting-cap"]) == ("pessimistic", "auto", "skip")
    assert d["opt-peg-only"] == d["opt-peg-opp-rack"] == d["opt-peg-eventuality"] == ""

    # the pre-endgame: live updates before the final one, and the result equals `macondo peg --json`
    assert page["pegRunningUpdates"] >= 2
    assert page["peg"]["state"] == "final" and "finished" in page["pegStatus"]
    assert page["pegGridCells"] > 0
    peg = _cli_json(["peg", cgp, "--endgame-plies", LIVE_PEG_PLIES, "--json"], capsys)
    assert page["peg"]["winner"] == peg["winner"]
    cli_wins = {p["move"]: p["wins"] for p in peg["plays"]}
    assert len(page["peg"]["rows"]) == min(40, len(peg["plays"]))
    for row in page["peg"]["rows"]:
        assert float(row["wins"]) == pytest.approx(cli_wins[row["move"]], abs=0.005), row
    assert [r["move"] for r in page["peg"]["rows"]][:5] == [p["move"] for p in peg["plays"]][:5]
    # every play reachable: the hidden ones expand (all of them, in the CLI's order) and fold back
    hidden = len(peg["plays"]) - 40
    assert hidden > 0 and page["pegMore"].startswith(f"({hidden} more plays not shown)")
    assert page["pegAllRows"] == [p["move"] for p in peg["plays"]]
    assert page["pegRowsFolded"] == 40 and page["pegMoreExpanded"].startswith("Show only the first 40")
    # the header counts the board's job while it runs, and none once it ended
    assert page["jobCountIdle"]["jobs"] == "0"
    assert page["jobCountRunning"]["jobs"] == "1" and page["jobCountRunning"]["own"] == "1"
    assert "1 job running" in page["jobCountRunning"]["text"]
    assert page["jobCountAfter"] == {"text": "no jobs running", "jobs": "0", "own": "0"}

    # stop during a longer solve: the best result so far, promptly, with the quick pass beside the bounds
    assert page["stopped"]["state"] == "stopped" and page["stopped"]["rows"] > 0
    assert "best result so far" in page["stoppedStatus"] and page["stopSeconds"] < 5

    # the options reach the solve: only bag-emptying plays with the early cut-off at 2 plies equal the CLI's
    assert page["pegOptionsSummary"] == "(2 plies, max tiles left 0, early cut-off)"
    peg4 = _cli_json(["peg", peg4_cgp, "--max-tiles-left", "0", "--early-cutoff", "--endgame-plies", "2",
                      "--threads", "1", "--json"], capsys)
    p4 = page["peg4"]
    assert p4["state"] == "final" and p4["endgamePlies"] == "2" and p4["winner"] == peg4["winner"]
    assert p4["leader"].startswith(f"winner: {peg4['winner']}")
    assert [r["move"] for r in p4["rows"]] == [p["move"] for p in peg4["plays"]]
    assert [r["cutOff"] == "true" for r in p4["rows"]] == [p["cut_off"] for p in peg4["plays"]]
    assert any(p["cut_off"] for p in peg4["plays"])
    for row, cli in zip(p4["rows"], peg4["plays"], strict=True):
        assert float(row["wins"]) == pytest.approx(cli["wins"], abs=0.005), row
        assert float(row["quick"]) == pytest.approx(cli["quick_wins"], abs=0.005), row
        assert int(row["quick2Done"]) == cli["quick2_draws_done"], row
        assert float(row["quick2"]) == pytest.approx(cli["quick2_wins"] or 0.0, abs=0.005), row
    # a 120-draw outcome list: one line per play until clicked, then a grid of bounded width and height
    assert page["peg4ExpandedDraws"] == 120 and page["peg4Expanded"]["cells"] == 120
    ex = page["peg4Expanded"]
    assert ex["move"] == page["peg4ExpandedMove"]
    assert max(page["peg4RowHeights"]) < 40
    assert ex["tableWidth"] <= ex["resultsWidth"] + 1 and ex["width"] <= ex["resultsWidth"] + 1
    assert ex["height"] <= 200 and ex["moveColumnLeft"] < ex["viewport"]
    assert page["peg4Folded"] == 0
    # a time limit: the solve stops then with the best so far; the quick pass shows beside the full bounds;
    # the leader with its reason; the plays left out by max tiles left are named under the table
    t = page["pegTimed"]
    assert t["state"] == "stopped" and "time limit" in t["status"] and float(t["elapsed"]) < 3 + 2.5
    assert t["complete"] == "false" and t["winner"] == ""
    assert any(int(r["quickDone"]) > 0 for r in t["rows"])
    assert t["leader"]["text"].startswith("leader: ")
    assert t["leader"]["leader"] == "" or t["leader"]["depth"] in ("quick", "estimate", "full", "only")
    assert any("max-tiles-left" in n for n in t["notes"])
    # only one play solved
    assert page["pegOnly"]["only"] == "2L P.ND" and page["pegOnly"]["plays"] == "1"
    assert [r["move"] for r in page["pegOnly"]["rows"]] == ["2L P.ND"]

    # a typed move played with a tile order: ONYX puts 4 tiles down for 33, we draw the S, the opponent holds
    # the rest; the position equals `macondo commit --tileorder S --json`, and its CGP is what Copy CGP copied
    onyx = next(m for m in gen["moves"] if m["move"] == "13L ONYX")
    commit = _cli_json(["commit", cgp, "13L ONYX", "--tileorder", "S", "--json"], capsys)
    played = page["played"]
    assert page["tileOrderNeed"] == 1
    assert played["tilesAdded"] == onyx["tiles_played"] == 4
    assert played["scores"] == [356 + onyx["score"], 378] and played["onTurn"] == 1
    assert played["rack"] == commit["racks"][0] == "AACEIUY"
    assert played["otherRack"].split()[0] == commit["racks"][1] == "ESST"
    assert played["cgp"] == commit["cgp"]
    assert played["last"] == "13L ONYX" and played["lastSquares"] == ["L13", "M13", "N13", "O13"]
    assert played["exportDisabled"] and len(played["events"]) == 1
    assert page["copied"] == {"via": "clipboard", "text": commit["cgp"]}
    fb = page["copyFallback"]
    assert fb["value"] == commit["cgp"] and fb["visible"] and fb["selected"] == len(commit["cgp"])

    # the GCG, stepped through: the position at turn 3 equals `macondo load --turn 3 --json`
    assert page["gcgStart"].startswith("turn 0 of ")
    assert page["gcgTurn"].startswith("turn 3 of ") and page["gcgBack"].startswith("turn 2 of ")
    load = _cli_json(["load", str(GCG), "--turn", "3", "--json"], capsys)
    assert page["gcgCgp"] == load["cgp"]
    assert sorted(page["gcgScores"]) == sorted(load["scores"])
    assert page["gcgTilesByTurn"][0] == 0 and page["gcgTilesByTurn"][-1] > 0
    # the last move is marked on the board: turn 3 is 9E CRoWDIE (7 tiles), the end D11 .OTS
    assert page["gcgLast"]["move"] == "9E CRoWDIE"
    assert page["gcgLast"]["squares"] == [f"{c}9" for c in "EFGHIJK"]
    assert page["gcgEndLast"] == "D11 .OTS"
    # the event list follows the turn (buttons, arrow keys, End, Home, a click): current and in view
    follow = page["gcgFollow"]
    assert [f["number"] for f in follow] == [f["turn"] for f in follow]
    assert all(f["visible"] for f in follow)
    assert {f.get("key") for f in follow} >= {"ArrowRight", "End", "Home", "click", "ArrowLeft"}
    assert max(f.get("scrolled", 0) for f in follow) > 0
    # the game exported as GCG: the same events as the file
    assert page["exported"]["name"].endswith(".gcg")
    assert _events(page["exported"]["text"]) == _events(GCG.read_text())

    # the simulations: the play count reached it; stopped mid-way; a time limit and a stopping rule end one
    assert page["sim"]["rowsWhileRunning"] == 5 and len(page["sim"]["rows"]) == 5
    assert "best result so far" in page["sim"]["status"]
    st = page["simTimed"]
    assert st["state"] == "final" and st["rows"] == 5 and st["stopReason"]
    assert st["stopReason"] in st["status"]
    assert st["stopReason"].startswith(("time limit", "99% confidence", "iteration cutoff", "one play left"))

    # the endgame equals `macondo endgame --json` (one thread: the same best line), each move's score and the
    # spread after it for the player on turn; the racks left settle the final spread
    eg = _cli_json(["endgame", endgame_cgp, "--plies", "3", "--threads", "1", "--json"], capsys)
    assert page["endgame"]["state"] == "final" and int(page["endgame"]["value"]) == eg["value"]
    assert page["endgame"]["line"] == " | ".join(m["move"] for m in eg["best_line"])
    assert page["endgame"]["lineShown"] == len(eg["best_line"])
    assert [int(r["score"]) for r in page["endgame"]["lineRows"]] == [m["score"] for m in eg["best_line"]]
    spread = 384 - 389
    for i, (row, m) in enumerate(zip(page["endgame"]["lineRows"], eg["best_line"], strict=True)):
        spread += m["score"] if i % 2 == 0 else -m["score"]
        assert int(row["spread"]) == spread
    assert int(page["endgame"]["finalSpread"]) == eg["final_spread"]
    assert page["endgame"]["end"].endswith(f"final spread {eg['final_spread']:+d}")
    assert page["turnsHiddenForCgp"]
    assert "bag is empty" in page["simInEndgameError"]["text"]
    assert page["simInEndgameError"]["code"] in ("invalid_argument", "failed_precondition")
    # the runner-up lines equal `macondo endgame --top 3 --also-solve pass --json`
    top = _cli_json(["endgame", endgame_cgp, "--plies", "3", "--threads", "1", "--top", "3", "--also-solve", "pass",
                     "--json"], capsys)
    shown = page["endgameTop"]
    assert shown["state"] == "final" and shown["topLines"] == "3"
    assert [(r["move"], int(r["value"]), int(r["loss"])) for r in shown["top"]] == \
        [(t["move"], t["value"], t["loss"]) for t in top["top_lines"]]
    assert [(r["move"], r["searched"], int(r["value"]), int(r["loss"])) for r in shown["also"]] == \
        [(t["move"], "true", t["value"], t["loss"]) for t in top["also_solved"]]
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
    """The launch flags that work here (no sandbox, no GPU, no background networking, a fresh profile) are kept
    in one place, the harness every browser script runs through."""
    text = (WEB / "test" / "board.mjs").read_text()
    for flag in ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "launchPersistentContext(profile"):
        assert flag in text
    for script in (WEB / "test").glob("*.mjs"):
        if script.name != "board.mjs":
            body = script.read_text()
            assert "runBoard(" in body and "launchPersistentContext" not in body, script.name
    assert shutil.which("node") is None or (WEB / "package.json").is_file()
