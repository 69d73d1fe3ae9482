"""Stored game reviews (analysis/review_store.py, `macondo analyze --store DIR`): the key follows the game's content,
the lexicon and the settings (not line endings, notes, threads); a folder reviewed once and then grown by one game
is analysed again only for that game; a stored file that cannot be read is analysed again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from macondo_server.analysis.review import AnalyzeOptions
from macondo_server.analysis.review_store import (
    ReviewStore,
    ReviewStoreError,
    analysis_from_dict,
    analysis_to_dict,
    review_key,
)
from macondo_server.cli import main
from macondo_server.model.gcg import parse_gcg

from conftest import CASES_DIR, GCG_DATA, LEXICA, have_lexicon, needs_nwl20

SHARED_GAME = CASES_DIR / "gcg" / "success_standard.gcg"
# the smallest budget that still runs every phase: the figures are compared between runs, not judged
TINY = ["--sim-iterations", "8", "--sim-plays", "2", "--sim-plies", "1", "--peg-max-bag", "1", "--peg-plays", "1",
        "--peg-endgame-plies", "1", "--endgame-plies", "1", "--endgame-candidates", "0", "--threads", "2",
        "--seed", "7"]


def _games() -> list[Path]:
    """Three games: the shared tournament game when it and its lexicon are here, and the project's own."""
    own = [GCG_DATA / n for n in ("missing_racks.gcg", "phony_withdrawn.gcg", "double_challenge_after_out.gcg")]
    if SHARED_GAME.is_file() and have_lexicon("CSW21"):
        return [SHARED_GAME, *own[:2]]
    return own


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["--data-dir", str(LEXICA), "analyze", *argv]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@needs_nwl20
def test_key_follows_content_lexicon_and_settings(engine):
    text = (GCG_DATA / "missing_racks.gcg").read_text(encoding="utf-8")
    record = parse_gcg(text)
    opts = AnalyzeOptions(sim_iterations=8, threads=1)
    key = review_key(engine, record, opts)
    assert len(key) == 64
    # the same game written otherwise: CRLF, blank lines, a note added
    lines = text.splitlines()
    second = [i for i, line in enumerate(lines) if line.startswith(">")][1]
    noted = "\r\n".join([*lines[:second], "", "#note a thought", *lines[second:]]) + "\r\n"
    other = parse_gcg(noted)
    assert other.events[0].note == "a thought"
    assert review_key(engine, other, opts) == key
    # the threads and table memory are resources, not settings
    assert review_key(engine, record, AnalyzeOptions(sim_iterations=8, threads=4, tt_megabytes=64)) == key
    # settings, the player, the lexicon and the game decide
    assert review_key(engine, record, AnalyzeOptions(sim_iterations=9, threads=1)) != key
    assert review_key(engine, record, AnalyzeOptions(sim_iterations=8, threads=1, seed=1)) != key
    assert review_key(engine, record, AnalyzeOptions(sim_iterations=8, threads=1, player="2")) != key
    if have_lexicon("CSW21"):
        assert review_key(engine, record, AnalyzeOptions(sim_iterations=8, threads=1, lexicon="CSW21")) != key
    changed = parse_gcg(text.replace("#lexicon NWL20", "#lexicon NWL20\n#title another", 1))
    assert review_key(engine, changed, opts) != key


def test_store_folder_errors(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ReviewStoreError, match="is not a folder"):
        ReviewStore(f)
    with pytest.raises(ReviewStoreError, match="is not a folder"):
        ReviewStore(tmp_path / "missing")
    assert ReviewStore(tmp_path / "made" / "here", create=True).folder.is_dir()


@needs_nwl20
def test_second_run_analyses_only_the_new_game(tmp_path, capsys):
    games = _games()
    folder = tmp_path / "games"
    folder.mkdir()
    for g in games[:2]:
        shutil.copy(g, folder)
    store = tmp_path / "store"
    first = _run([str(folder), *TINY, "--store", str(store), "--summary", "--json"], capsys)
    assert (first["analysed"], first["reused"]) == (2, 0)
    assert first["summary"]["games"] == 2 and first["summary"]["analysed"] == 2
    assert len(list(store.glob("*.json"))) == 2
    # one game added: only it is analysed
    shutil.copy(games[2], folder)
    second = _run([str(folder), *TINY, "--store", str(store), "--summary", "--json"], capsys)
    assert (second["analysed"], second["reused"]) == (1, 2)
    assert (second["summary"]["analysed"], second["summary"]["reused"], second["summary"]["games"]) == (1, 2, 3)
    by_name = {g["game"]: g for g in second["games"]}
    assert [by_name[g.name]["reused"] for g in games] == [True, True, False]
    # a reused game reads as it did when analysed
    for g in first["games"]:
        again = dict(by_name[g["game"]])
        assert again.pop("reused") and not g.pop("reused")
        assert again == g
    # the readable output says what was analysed and what was reused
    assert main(["--data-dir", str(LEXICA), "analyze", str(folder), *TINY, "--store", str(store)]) == 0
    assert f"3 games: 0 analysed, 3 taken from the review store {store}" in capsys.readouterr().out
    # other settings: analysed again
    third = _run([str(folder / games[2].name), *TINY[:-1], "8", "--store", str(store), "--json"], capsys)
    assert (third["analysed"], third["reused"]) == (1, 0)


@needs_nwl20
def test_unreadable_stored_game_is_analysed_again(tmp_path, capsys, engine):
    game = GCG_DATA / "missing_racks.gcg"
    store = tmp_path / "store"
    first = _run([str(game), *TINY, "--store", str(store), "--json"], capsys)
    [stored] = list(store.glob("*.json"))
    data = json.loads(stored.read_text())
    res = analysis_from_dict(data["analysis"])
    assert json.loads(json.dumps(analysis_to_dict(res))) == data["analysis"]     # the round trip loses nothing
    assert res.name == "missing_racks.gcg" and len(res.turns) == first["games"][0]["turns_analysed"]
    stored.write_text("{ not json")
    again = _run([str(game), *TINY, "--store", str(store), "--json"], capsys)
    assert (again["analysed"], again["reused"]) == (1, 0)
    assert json.loads(stored.read_text())["format"] == 1      # replaced by a good one
    assert _run([str(game), *TINY, "--store", str(store), "--json"], capsys)["reused"] == 1


def test_store_that_is_a_file_is_a_one_line_error(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["--data-dir", str(LEXICA), "analyze", str(GCG_DATA / "missing_racks.gcg"), "--store", str(f)]) == 1
    err = capsys.readouterr().err.strip()
    assert "is not a folder" in err and "\n" not in err
