"""Other languages at the command line: --distribution before or after every command that reads a position or
a lexicon, the distribution a lexicon's name or declaration gives, and one-line errors (exit status 1) when a
distribution does not fit."""

from __future__ import annotations

import json

import pytest

from macondo_server.cli import NO_DISTRIBUTION, build_parser, main

from conftest import CASES_DIR

EMPTY = "/".join(["15"] * 15)
POLISH_GAME = CASES_DIR / "languages" / "macondo_polish_endgame.gcg"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ["show", "CGP"], ["gen", "CGP"], ["peg", "CGP"], ["sim", "CGP"], ["endgame", "CGP"], ["infer", "CGP", "8G QI"],
    ["commit", "CGP", "pass"], ["load", "x.gcg"], ["analyze", "x.gcg"], ["autoplay"],
    ["leaves", "train", "--out", "o"], ["lexicon", "check", "QI"], ["lexicon", "build", "w.txt", "-o", "X.kwg"],
    ["lexicon", "leaves", "l.csv", "-o", "X.klv2"],
])
def test_distribution_before_or_after_the_command(argv):
    p = build_parser()
    assert p.parse_args([*argv, "--distribution", "french"]).distribution == "french"
    assert p.parse_args(["--distribution", "polish", *argv]).distribution == "polish"
    assert p.parse_args(argv).distribution is None
    assert p.parse_args(["--distribution", "polish", *argv, "--distribution", "french"]).distribution == "french"


@pytest.mark.parametrize("command", NO_DISTRIBUTION)
def test_commands_that_read_no_position_refuse_a_distribution(capsys, command):
    code, _, err = run(capsys, "--distribution", "french", command)
    assert code == 1 and len(err.splitlines()) == 1 and "--distribution" in err


@pytest.fixture
def data(tmp_path):
    (tmp_path / "DISCTINY.txt").write_text("AL·LA\n[QU]E\nANY\nES\n", encoding="utf-8")
    (tmp_path / "MOTS.txt").write_text("ÇA\nES\n", encoding="utf-8")
    (tmp_path / "MOTS.distribution").write_text("catalan\n")
    return tmp_path


def test_positions_and_lexica_in_catalan(capsys, data):
    cgp = f"{EMPTY} AL·L?QUE/ 0/0 0"
    code, out, err = run(capsys, "gen", cgp, "--lexicon", "DISCTINY", "--data-dir", str(data), "--json")
    assert code == 0, err
    moves = json.loads(out)["moves"]
    assert "[L·L]" in moves[0]["move"]
    code, out2, err = run(capsys, "--distribution", "catalan", "gen", cgp, "--lexicon", "DISCTINY", "--data-dir",
                          str(data), "--json")
    assert code == 0 and json.loads(out2)["moves"] == moves
    code, out, err = run(capsys, "show", cgp, "--distribution", "catalan")
    assert code == 0 and "L·L" in out
    code, out, err = run(capsys, "lexicon", "check", "--lexicon", "MOTS", "ÇA", "ça", "AC", "--data-dir", str(data))
    assert code == 0 and out.split("\n")[:3] == ["ÇA valid", "ÇA valid", "AC invalid"]


@pytest.mark.parametrize("argv,needle", [
    (["gen", f"{EMPTY} AEI/ 0/0 0", "--lexicon", "DISCTINY", "--distribution", "english"],
     "DISCTINY is for the catalan letter distribution"),
    (["gen", f"{EMPTY} AEI/ 0/0 0 ld catalan;", "--distribution", "french"], "but CGP op ld names catalan"),
    (["show", f"{EMPTY} AEI/ 0/0 0", "--distribution", "klingon"], "unknown letter distribution 'klingon'"),
    (["gen", f"{EMPTY} A[QU]/ 0/0 0"], "not a multi-letter tile of the 'english' distribution"),
    (["lexicon", "check", "--lexicon", "MOTS", "QI", "--distribution", "english"],
     "MOTS is for the catalan letter distribution"),
])
def test_distributions_that_do_not_fit_are_one_line_errors(capsys, data, argv, needle):
    code, _, err = run(capsys, *argv, "--data-dir", str(data))
    assert code == 1 and len(err.splitlines()) == 1 and needle in err, err


def test_building_a_lexicon_in_another_language(capsys, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("ŻAŁ\nABA\n", encoding="utf-8")
    code, out, err = run(capsys, "lexicon", "build", str(words), "-o", str(tmp_path / "OSPSTINY.kwg"))
    assert code == 0 and "(polish letter distribution)" in out
    code, out, err = run(capsys, "lexicon", "build", str(words), "-o", str(tmp_path / "X.kwg"))
    assert code == 1 and "unknown rack tile 'Ż'" in err and len(err.splitlines()) == 1
    code, out, err = run(capsys, "lexicon", "build", str(words), "-o", str(tmp_path / "X.kwg"), "--distribution",
                         "polish")
    assert code == 0
    code, out, err = run(capsys, "lexicon", "check", "--lexicon", "OSPSTINY", "żał", "ZA", "--data-dir", str(tmp_path))
    assert code == 0 and out.split("\n")[:2] == ["ŻAŁ valid", "ZA invalid"]
    code, out, err = run(capsys, "lexicon", "distributions", "--data-dir", str(tmp_path))
    assert code == 0 and "catalan: 26 letters, 100 tiles (2 blanks), multi-letter tiles L·L NY QU" in out
    assert "layout standard21: 21x21, start square 11K" in out and "lexicon OSPSTINY: polish" in out


@pytest.mark.skipif(not POLISH_GAME.is_file(), reason="shared Polish game absent")
def test_loading_the_polish_game(capsys, tmp_path):
    (tmp_path / "OSPSTINY.txt").write_text("ABA\n", encoding="utf-8")
    code, out, err = run(capsys, "load", str(POLISH_GAME), "--lexicon", "OSPSTINY", "--data-dir", str(tmp_path),
                         "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["scores"] == [316, 323] and got["game_over"] and got["events"] == 53
    assert got["cgp"].endswith(" lex OSPSTINY; ld polish;") and "Ź" in got["cgp"]
    code, _, err = run(capsys, "load", str(POLISH_GAME), "--lexicon", "OSPSTINY", "--distribution", "german",
                       "--data-dir", str(tmp_path))
    assert code == 1 and "OSPSTINY is for the polish letter distribution" in err and len(err.splitlines()) == 1
