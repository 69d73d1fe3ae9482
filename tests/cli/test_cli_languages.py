"""Other languages and boards at the command line: --distribution before or after every command that reads a
position or a lexicon, the distribution a lexicon's name or declaration gives, --layout (a name or a layout
file) on the commands that make a position or a game, and one-line errors (exit status 1) when a distribution
or a layout does not fit."""

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


# ------------------------------------------------------------------ --layout

PLAIN15 = "7, 7\n" + "." * 15 + "\n" + " \n" * 14          # the 15x15 board without premium squares


@pytest.mark.parametrize("argv", [
    ["show", "CGP"], ["gen", "CGP"], ["peg", "CGP"], ["sim", "CGP"], ["endgame", "CGP"], ["infer", "CGP", "8G QI"],
    ["commit", "CGP", "pass"], ["load", "x.gcg"], ["analyze", "x.gcg"], ["autoplay"],
])
def test_layout_before_or_after_the_command(argv):
    p = build_parser()
    assert p.parse_args([*argv, "--layout", "standard21"]).layout == "standard21"
    assert p.parse_args(["--layout", "b.txt", *argv]).layout == "b.txt"
    assert p.parse_args(argv).layout is None
    assert p.parse_args(["--layout", "x", *argv, "--layout", "standard15"]).layout == "standard15"


@pytest.mark.parametrize("command,rest", [
    ("serve", []), ("shell", []), ("bots", []), ("proto-path", []), ("lexicon list", []), ("lexicon check", ["QI"]),
    ("lexicon distributions", []), ("leaves train", ["--out", "o"]),
])
def test_commands_that_make_no_position_refuse_a_layout(capsys, command, rest):
    code, _, err = run(capsys, "--layout", "standard15", *command.split(), *rest)
    assert code == 1 and len(err.splitlines()) == 1, err
    assert "--layout names the board of" in err and f"`macondo {command}` takes none" in err


def test_a_layout_file_on_the_command_line(capsys, tmp_path):
    """The plain board from a file: no premium squares, so every play scores its tiles' face values (and the
    bingo bonus); the CGP it writes names the layout, which reads back with the same --layout only."""
    layout = tmp_path / "plain.txt"
    layout.write_text(PLAIN15)
    cgp = f"{EMPTY} AEINRST/ 0/0 0"
    code, out, err = run(capsys, "gen", cgp, "--layout", str(layout), "--json", "--all")
    assert code == 0, err
    moves = [m for m in json.loads(out)["moves"] if not m["move"].startswith(("exch", "pass"))]
    assert moves and all(m["score"] == m["tiles_played"] + (50 if m["tiles_played"] == 7 else 0) for m in moves)
    code, out, err = run(capsys, "gen", cgp, "--json", "-n", "1")
    assert code == 0 and json.loads(out)["moves"][0]["score"] > 57           # the standard board's premiums
    code, out, err = run(capsys, "--layout", str(layout), "commit", cgp, "8H RETAINS")
    assert code == 0, err
    after = out.strip()
    assert after.endswith(" bdn plain;") and after.split("/")[7] == "7RETAINS1"
    code, _, err = run(capsys, "show", after)
    assert code == 1 and "unknown board layout 'plain'" in err and len(err.splitlines()) == 1
    code, out, err = run(capsys, "show", after, "--layout", str(layout), "--json")
    assert code == 0 and json.loads(out)["scores"] == [0, 57]


def test_a_layout_overrides_the_board_a_record_implies(capsys, tmp_path):
    """Self-play on a layout the command line names writes it in the records, which replay on it to the
    same final scores; a record's own #board-layout must agree with --layout."""
    layout = tmp_path / "plain.txt"
    layout.write_text(PLAIN15)
    games = tmp_path / "games"
    code, out, err = run(capsys, "autoplay", "--games", "2", "--threads", "1", "--seed", "4", "--layout", str(layout),
                         "--gcg-dir", str(games), "--json")
    assert code == 0, err
    for path in sorted(games.glob("*.gcg")):
        text = path.read_text(encoding="utf-8")
        assert "#board-layout plain\n" in text
        finals = {}
        for line in text.splitlines():
            if line.startswith(">"):
                finals[line[1:].split(":")[0]] = int(line.split()[-1])
        code, out, err = run(capsys, "load", str(path), "--layout", str(layout), "--json")
        assert code == 0, err
        got = json.loads(out)
        assert got["game_over"] and sorted(got["scores"]) == sorted(finals.values())
        code, _, err = run(capsys, "load", str(path), "--layout", "standard15")
        assert code == 1 and "the GCG's #board-layout is plain but --layout names standard15" in err
        assert len(err.splitlines()) == 1
    # a record naming no board plays on the one --layout names: the 21x21 board takes the english_super tiles
    record = tmp_path / "passes.gcg"
    record.write_text("#player1 ann Ann\n#player2 bob Bob\n>ann: ABCDEFG - +0 0\n>bob: HIJKLMN - +0 0\n")
    code, out, err = run(capsys, "load", str(record), "--lexicon", "SCOWL70", "--layout", "SuperCrosswordGame",
                         "--json")
    assert code == 0, err
    cgp = json.loads(out)["cgp"]
    assert cgp.split()[0] == "/".join(["21"] * 21) and "ld english_super;" in cgp


@pytest.mark.parametrize("argv,needle", [
    (["show", f"{EMPTY} A/ 0/0 0", "--layout", "klingon"], "--layout: unknown board layout 'klingon' (known: "),
    (["show", f"{EMPTY} A/ 0/0 0", "--layout", "nowhere/board.txt"], "layout file 'nowhere/board.txt' does not exist"),
    (["show", f"{EMPTY} A/ 0/0 0", "--layout", "standard21"], "CGP board has 15 rows; expected 21"),
    (["show", f"{EMPTY} A/ 0/0 0 bdn standard15;", "--layout", "standard21"],
     "names the board layout standard21 but CGP op bdn names standard15"),
    (["gen", f"{EMPTY} A/ 0/0 0", "--layout", "{bad}"], "board layout bad.txt: board layout 'bad': row 2 has 16"),
])
def test_layouts_that_do_not_fit_are_one_line_errors(capsys, tmp_path, monkeypatch, argv, needle):
    (tmp_path / "bad.txt").write_text("7, 7\n" + "." * 15 + "\n" + "." * 16 + "\n" + ".\n" * 13)
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{bad}", str(tmp_path / "bad.txt")) for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 1 and len(err.splitlines()) == 1 and needle in err, err


def test_a_layout_file_does_not_go_to_a_cluster(capsys, tmp_path):
    (tmp_path / "plain.txt").write_text(PLAIN15)
    code, _, err = run(capsys, "peg", f"{EMPTY} AEINRST/ 0/0 0", "--layout", str(tmp_path / "plain.txt"),
                       "--cluster", "local:1")
    assert code == 1 and "a cluster's workers read board layouts by name" in err and len(err.splitlines()) == 1
