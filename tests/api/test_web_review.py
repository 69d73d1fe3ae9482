"""The web board's review in headless Chromium (web/test/review.mjs): a game reviewed on the board shows the
same turns, mistakes and per-player summary as `macondo analyze --json` with the same budgets (one thread and
the default seed: the same analysis), a point per turn with a win probability on the chart (hollow where it is
the win table's estimate, a drop line on the mistakes); a click on a mistake goes to the position before it
with the engine's best move in the Move box; a batch of files is summed up per player as `analyze --summary`
sums them, a broken file reported beside it. MACONDO_WEB_DOCS_SHOTS=1 also copies the screenshot
docs/board-review-chart.png. Skipped where chromium, node/npm or the shared records are absent."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from test_web import SHOTS, _cli_json, drive_board, need_board

from conftest import CASES_DIR, ROOT, needs_cases, needs_nwl20

GAMES = [CASES_DIR / "gcg" / "success_standard.gcg", CASES_DIR / "gcg" / "success_six_pass.gcg"]
BOARD_OPTIONS = {"opt-rv-iterations": "20", "opt-rv-plays": "3", "opt-rv-plies": "1", "opt-rv-peg-bag": "0",
                 "opt-rv-eg-plies": "2", "opt-rv-threads": "1"}
CLI_OPTIONS = ["--sim-iterations", "20", "--sim-plays", "3", "--sim-plies", "1", "--peg-max-bag", "0",
               "--endgame-plies", "2", "--threads", "1", "--lexicon", "NWL20", "--json"]


@needs_cases
@needs_nwl20
def test_review_on_the_board(capsys, tmp_path):
    if not all(g.is_file() for g in GAMES):
        pytest.skip("the shared GCG records are absent")
    need_board()
    broken = tmp_path / "broken.gcg"
    broken.write_text("#player1 a A\n#player2 b B\n>a: ABC 8Z QQQ +10 10\n")
    env = {"MACONDO_GCG_FILE": str(GAMES[0]), "MACONDO_LEXICON": "NWL20",
           "MACONDO_BATCH_FILES": os.pathsep.join([*map(str, GAMES), str(broken)]),
           "MACONDO_REVIEW_OPTIONS": json.dumps(BOARD_OPTIONS)}
    page = drive_board("review.mjs", env, timeout=600)

    assert page["consoleErrors"] == [] and page["error"] == ""
    assert page["steps"] == ["board-review-chart", "review-batch"]
    for name in page["steps"]:
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    if os.environ.get("MACONDO_WEB_DOCS_SHOTS") == "1":
        shutil.copyfile(SHOTS / "board-review-chart.png", ROOT / "docs" / "board-review-chart.png")
    assert page["disabledBefore"] is True and page["disabledLoaded"] is False

    # the game: the CLI's analysis with the same budgets, turn by turn
    cli = _cli_json(["analyze", str(GAMES[0]), *CLI_OPTIONS], capsys)["games"][0]
    turns = cli["turns"]
    assert page["review"]["state"] == "final" and int(page["review"]["turns"]) == len(turns)
    shown = [(int(r["event"]), r["cells"][3], r["cells"][4], r["mistake"]) for r in page["turns"]]
    assert shown == [(t["event"], t["played"]["move"], (t["best"] or {}).get("move", ""), t["mistake"] or "none")
                     for t in turns]
    assert int(page["review"]["mistakes"]) == sum(t["mistake"] not in (None, "none") for t in turns) > 0
    # the chart: a point per turn with a win probability, the first player's, hollow for the table's estimates
    with_win = [t for t in turns if t["win_after"] is not None]
    points = {p["event"]: p for p in page["points"]}
    assert sorted(points) == [t["event"] for t in with_win]
    top, bottom = 14, 220 - 28                       # the plot's 100% and 0% lines (review.ts: TOP, H - BOTTOM)
    for t in with_win:
        p = points[t["event"]]
        first = t["win_after"] if t["player"] == 1 else 100 - t["win_after"]
        assert p["cy"] == pytest.approx(bottom - (bottom - top) * first / 100, abs=0.01), t["event"]
        assert p["hollow"] == (t["win_source"] == "table")
        assert p["mistake"] == (t["mistake"] or "none")
        loss = t["win_best"] - t["win_after"] if t["win_best"] is not None and t["win_source"] != "table" else 0
        assert p["drop"] == (p["mistake"] != "none" and loss > 0)
        assert t["played"]["move"] in p["title"]
    # the summary per player, as the CLI's
    assert [(r["nick"], r["mistakeIndex"]) for r in page["summary"]] == \
        [(s["nick"], f"{s['mistake_index']:.2f}") for s in cli["summary"]]
    assert page["width"] < 1000                       # the review stays in its column

    # a mistake clicked: the position before it, the engine's best in the Move box, the review still there
    clicked = page["clicked"]
    turn = next(t for t in turns if t["event"] == clicked["event"])
    assert clicked["turn"] == str(clicked["event"] - 1) and clicked["moveBox"] == turn["best"]["move"]
    assert clicked["kept"] == len(page["points"])
    assert clicked["cursorX"] < page["cursorAtEnd"] and clicked["cursorX"] < clicked["mistakeX"]

    # the batch: the two records summed up as `analyze --summary` sums them, the broken one reported
    summary = _cli_json(["analyze", *map(str, GAMES), *CLI_OPTIONS, "--summary"], capsys)["summary"]
    assert page["batch"]["state"] == "final" and page["batch"]["games"] == "3"
    assert [(r["name"], r["games"], r["mistakeIndex"]) for r in page["batchSummary"]] == \
        [(p["name"], str(p["games"]), f"{p['mistake_index_per_game']:.2f}") for p in summary["players"]]
    assert len(page["batchErrors"]) == 1 and page["batchErrors"][0].startswith("broken.gcg: not reviewed: ")
    assert page["batchMistakes"] > 0
