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
    assert lines[0] == "  #  Move                Leave    Score   Equity"
    assert lines[1] == "  1  B10 BE(HE)AD        ALT         36    39.47"
    assert lines[-1] == "763 legal moves (667 placements, 95 exchanges, 1 pass); lexicon NWL20"
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


# ------------------------------------------------------------------ numeric option ranges

BAD_NUMBERS = [
    (["commit", VSMATT, "pass", "--seed", "-1"], "--seed", "0 to 18446744073709551615"),
    (["commit", VSMATT, "pass", "--seed", "18446744073709551616"], "--seed", "0 to 18446744073709551615"),
    (["gen", VSMATT, "-n", "1e20"], "-n", "1 to 1000000"),
    (["gen", VSMATT, "-n", "0"], "-n", "1 to 1000000"),
    (["load", "x.gcg", "--turn", "-3"], "--turn", "0 to 1000000"),
    (["autoplay", "--games", "99999999999999999999999"], "--games", "1 to 100000000"),
    (["autoplay", "--threads", "100000"], "--threads", "1 to 256"),
    (["autoplay", "--seed", "1.5"], "--seed", "0 to 18446744073709551615"),
    (["endgame", VSMATT, "--plies", "99999999999"], "--plies", "1 to 60"),
    (["endgame", VSMATT, "--threads", "0"], "--threads", "1 to 256"),
    (["endgame", VSMATT, "--max-time", "1e308"], "--max-time", "0 to 1000000"),
    (["endgame", VSMATT, "--max-time", "inf"], "--max-time", "0 to 1000000"),
    (["endgame", VSMATT, "--max-time", "-1"], "--max-time", "0 to 1000000"),
    (["endgame", VSMATT, "--tt-mb", "100000"], "--tt-mb", "1 to 65536"),
    (["sim", VSMATT, "--plies", "16"], "--plies", "0 to 15"),
    (["sim", VSMATT, "--num-plays", "501"], "--num-plays", "1 to 500"),
    (["sim", VSMATT, "--iterations", "10000001"], "--iterations", "1 to 10000000"),
    (["sim", VSMATT, "--stop", "97"], "--stop", "95, 98 or 99"),
    (["sim", VSMATT, "--max-time", "nan"], "--max-time", "0 to 1000000"),
    (["sim", VSMATT, "--threads", "٣"], "--threads", "1 to 256"),       # a non-ASCII digit
    (["sim", VSMATT, "--seed", "1_000"], "--seed", "0 to 18446744073709551615"),
    (["peg", VSMATT, "--endgame-plies", "31"], "--endgame-plies", "1 to 30"),
    (["peg", VSMATT, "--max-tiles-left", "-2"], "--max-tiles-left", "-1 to 6"),
    (["peg", VSMATT, "--max-nested-depth", "101"], "--max-nested-depth", "-1 to 100"),
    (["peg", VSMATT, "--threads", "257"], "--threads", "1 to 256"),
    (["peg", VSMATT, "--max-time", "1e5"], "--max-time", "0 to 1000000"),
    (["peg", VSMATT, "--tt-mb", "0"], "--tt-mb", "1 to 65536"),
    (["peg", VSMATT, "--rows", "-5"], "--rows", "1 to 1000000"),
    (["serve", "--port", "65536"], "--port", "0 to 65535"),
    (["serve", "--max-jobs", "0"], "--max-jobs", "1 to 1000000"),
    (["bots", "--games", "0"], "--games", "1 to 100000000"),
    (["bots", "--seed", "-7"], "--seed", "0 to 18446744073709551615"),
]


@pytest.mark.parametrize("argv, option, valid", BAD_NUMBERS,
                         ids=[" ".join(a[0:1] + a[-2:]) for a, _, _ in BAD_NUMBERS])
def test_numeric_options_out_of_range_are_one_line_errors(capsys, argv, option, valid):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"error: argument {option}: must be " in err and valid in err


def test_numeric_options_in_range_parse():
    from macondo_server.cli import build_parser

    args = build_parser().parse_args(["sim", VSMATT, "--seed", "18446744073709551615", "--plies", "0",
                                      "--stop", "99", "--max-time", "2.5", "--threads", "256"])
    assert (args.seed, args.plies, args.stop, args.max_time, args.threads) == (2**64 - 1, 0, 99, 2.5, 256)
    args = build_parser().parse_args(["peg", VSMATT, "--max-tiles-left", "-1", "--max-nested-depth", "-1",
                                      "--max-time", ".5"])
    assert (args.max_tiles_left, args.max_nested_depth, args.max_time) == (-1, -1, 0.5)


def test_cli_numeric_bounds_match_the_engine():
    from macondo_server.analysis import endgame, sim
    from macondo_server.cli import common as cli

    assert cli.EG_MAX_PLIES == endgame.MAX_PLIES and cli.SIM_MAX_ITERATIONS == sim.MAX_ITERATIONS


@needs_nwl20
def test_sim_max_time_uses_the_time(capsys):
    import time

    t0 = time.monotonic()
    code, out, _ = run(capsys, "sim", VSMATT, "--num-plays", "3", "--max-time", "2", "--threads", "1", "--json")
    elapsed = time.monotonic() - t0
    res = json.loads(out)
    assert code == 0 and 1.5 <= elapsed < 4, elapsed
    assert res["stopped_reason"] == "time limit" and res["iterations"] > 0
    code, out, _ = run(capsys, "sim", VSMATT, "--num-plays", "2", "--plies", "1", "--threads", "1")
    assert code == 0 and "(final, iterations cap 1000 (default), " in out.splitlines()[-1]


def test_endgame_max_time_deepens_past_the_default(capsys):
    from conftest import load_cases

    cases = {c["id"]: c for c in load_cases("endgame")}
    if "eg-canik-nwl20" not in cases:
        pytest.skip("shared cases absent")
    cgp = cases["eg-canik-nwl20"]["cgp"]
    code, out, _ = run(capsys, "endgame", cgp, "--max-time", "3", "--threads", "1", "--json")
    res = json.loads(out)
    assert code == 0 and res["depth"] > 4 and res["stop_reason"] in ("solved", "time limit")
    code, out, _ = run(capsys, "endgame", cgp, "--threads", "1")
    assert code == 0 and out.splitlines()[-1].endswith("(plies cap 4 (default))")
    assert out.splitlines()[-1].startswith("depth 4,")


@needs_nwl20
def test_sim_stats_render_histograms_tiles_and_heatmap(capsys):
    code, out, _ = run(capsys, "sim", VSMATT, "--num-plays", "3", "--iterations", "100", "--threads", "1", "--stats")
    assert code == 0
    table, playstats, tilestats, heatmap = out.split("\n\n")
    assert table.splitlines()[1].split()[1:3] == playstats.split(":")[0].split()[1:3]   # the leader's
    assert "Ply 1 (the opponent): mean score" in playstats and "Ply 2 (the player on turn)" in playstats
    bins = [line.split() for line in playstats.splitlines() if line.strip()[:1].isdigit()]
    assert bins[0][0] == "0-9" and sum(int(b[1]) for b in bins) == 2 * 100
    assert tilestats.startswith("The opponent's rack around their reply") and tilestats.splitlines()[-1].startswith("all")
    assert float(tilestats.splitlines()[-1].split()[1]) == pytest.approx(7.0)
    lines = heatmap.splitlines()
    assert "ply 1 (the opponent): the squares its tiles went on, % of 100 iterations" in lines[0]
    assert lines[1].split() == list("ABCDEFGHIJKLMNO") and len(lines) == 17
    assert lines[2].split()[:1] == ["1"] and "Z" in lines[2].split()       # the board's tiles
    assert sum(line.count("*") for line in lines[2:]) >= 2                    # the play's own tiles
    assert "\x1b[" not in out                                                 # no colours off a terminal
    # --json carries them
    code, out, _ = run(capsys, "sim", VSMATT, "--num-plays", "2", "--iterations", "50", "--threads", "1", "--stats",
                       "--json")
    d = json.loads(out)
    assert d["score_bin_width"] == 10
    p = d["plays"][0]
    assert [sum(s["score_histogram"]) for s in p["ply_stats"]] == [50, 50]
    assert len(p["ply_stats"][0]["heatmap"]) == 15 and all(len(r) == 15 for r in p["ply_stats"][0]["heatmap"])
    assert set(p["opponent_leave"]["E"]) == {"held", "kept"}
    code, out, _ = run(capsys, "sim", VSMATT, "--num-plays", "2", "--iterations", "20", "--threads", "1", "--json")
    assert "score_bin_width" not in json.loads(out) and "opponent_leave" not in json.loads(out)["plays"][0]


@needs_nwl20
def test_sim_heatmap_of_a_named_play(capsys):
    opening = f"{EMPTY} AEINQST/ 0/0 0 lex NWL20;"
    code, out, _ = run(capsys, "sim", opening, "--num-plays", "1", "--iterations", "60", "--threads", "1",
                       "--heatmap", "8F QAT", "--heatmap-ply", "2")
    assert code == 0
    heat = out.split("\n\n")[-1].splitlines()
    assert heat[0].startswith("#2 8F QAT, ply 2 (the player on turn)")       # simulated though not in the top 1
    row8 = heat[2 + 7].split()
    assert row8[:2] == ["8"] + row8[1:2] and "Q*" in row8 and "A*" in row8 and "T*" in row8


@needs_nwl20
@pytest.mark.parametrize("args, needle", [
    (["--heatmap", "7"], "no play #7"),
    (["--stats", "--heatmap-ply", "3"], "--heatmap-ply must be 1 to 2"),
    (["--heatmap", "1A ZZZ"], "not a legal play"),
    (["--stats", "--plies", "0"], "at least 1 ply"),
])
def test_sim_stats_errors_are_one_line(capsys, args, needle):
    code, out, err = run(capsys, "sim", VSMATT, "--num-plays", "2", "--iterations", "10", "--threads", "1", *args)
    assert code == 1 and needle in err and err.count("\n") == 1 and "Traceback" not in err
