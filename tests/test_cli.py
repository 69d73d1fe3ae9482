from __future__ import annotations

import json

import pytest

from macondo_server.cli import main

from conftest import needs_nwl20

EMPTY = "/".join(["15"] * 15)
VSMATT = (
    "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
    "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0 lex NWL20;"
)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in ("lexicon", "show", "gen"):
        assert name in out


def test_lexicon_check_default_and_build(capsys, tmp_path):
    code, out, _ = run(capsys, "lexicon", "check", "cat", "zzzzq")
    assert code == 0 and out.splitlines() == ["CAT valid", "ZZZZQ invalid"]
    words = tmp_path / "w.txt"
    words.write_text("CAT\nCATS\nACT\n")
    kwg = tmp_path / "w.kwg"
    code, out, _ = run(capsys, "lexicon", "build", str(words), "-o", str(kwg))
    assert code == 0 and "3 words" in out
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "lexicon", "check", "--lexicon", "w", "CATS", "TAC")
    assert code == 0 and out.splitlines() == ["CATS valid", "TAC invalid"]


def test_lexicon_errors(capsys, tmp_path):
    code, _, err = run(capsys, "lexicon", "check", "--lexicon", "NOPE", "QI")
    assert code == 1 and "unknown lexicon 'NOPE'" in err
    code, _, err = run(capsys, "lexicon", "build", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.kwg"))
    assert code == 1 and "does not exist" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("CAT\nC4T\n")
    code, _, err = run(capsys, "lexicon", "build", str(bad), "-o", str(tmp_path / "x.kwg"))
    assert code == 1 and "line 2" in err


@needs_nwl20
def test_gen_json_and_table(capsys, registry):
    abd = registry.get("NWL20").klv.leave_value([1, 2, 4])
    code, out, _ = run(capsys, "gen", VSMATT, "--json", "-n", "3")
    data = json.loads(out)
    assert code == 0
    assert data["counts"] == {"placements": 667, "exchanges": 95, "passes": 1}
    assert [m["move"] for m in data["moves"]] == ["B10 BE..AD", "K9 TAEL", "1L .LAB"]
    assert data["moves"][1] == {"move": "K9 TAEL", "score": 38, "equity": round(38 + abd / 1000, 3), "leave": "ABD", "tiles_played": 4}
    code, out, _ = run(capsys, "gen", VSMATT, "-n", "2")
    lines = out.splitlines()
    assert lines[0] == "     Move                Leave  Score Equity"
    assert lines[1] == "  1: B10 BE(HE)AD        ALT       36  39.47"
    code, out, _ = run(capsys, "gen", VSMATT, "--all", "--sort", "score", "--json")
    scores = [m["score"] for m in json.loads(out)["moves"]]
    assert len(scores) == 763 and scores == sorted(scores, reverse=True)


def test_gen_default_lexicon_and_errors(capsys):
    code, out, _ = run(capsys, "gen", f"{EMPTY} AEINQST/ 0/0 0", "--json", "-n", "1")
    assert code == 0 and json.loads(out)["moves"][0]["move"] == "8G QI"
    code, _, err = run(capsys, "gen", "garbage")
    assert code == 1 and "CGP has 1 fields" in err
    code, _, err = run(capsys, "gen", f"{EMPTY} / 0/0 0")
    assert code == 1 and "no tiles" in err
    code, _, err = run(capsys, "gen", f"{EMPTY} A/ 0/0 0", "--leaves", "/nonexistent.klv2")
    assert code == 1 and "does not exist" in err
    code, _, err = run(capsys, "gen", f"{EMPTY} A/ 0/0 0 lex FOO;")
    assert code == 1 and "unknown lexicon 'FOO'" in err


def test_show(capsys):
    code, out, _ = run(capsys, "show", VSMATT)
    assert code == 0 and "AABDELT" in out and " 1|=     '       Z E P   F     =|" in out


def test_lexicon_leaves_csv(capsys, tmp_path):
    from engine_cy.klv import Klv

    csv = tmp_path / "l.csv"
    csv.write_text("leave,value\n?,25.5\nQU,2.75\nS,8.0\nERS,-1.25\n")
    out = tmp_path / "l.klv2"
    code, text, _ = run(capsys, "lexicon", "leaves", str(csv), "-o", str(out))
    assert code == 0 and "4 leaves" in text
    klv = Klv.from_file(str(out))
    assert klv.leave_value([0]) == 25500 and klv.leave_value([21, 17]) == 2750
    assert klv.leave_value([19, 18, 5]) == -1250 and klv.leave_value([1]) == 0
    csv.write_text("S,8\nS,9\n")
    code, _, err = run(capsys, "lexicon", "leaves", str(csv), "-o", str(out))
    assert code == 1 and "duplicate" in err
    csv.write_text("S,8\nQ1,9\n")
    code, _, err = run(capsys, "lexicon", "leaves", str(csv), "-o", str(out))
    assert code == 1 and "line 2" in err
