from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_cy.alphabet import LetterDistribution
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import GcgEvent, GcgGame, decode_gcg, parse_gcg, read_gcg_file, write_gcg
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import new_board

from conftest import CASES_DIR, load_cases

LD = LetterDistribution.english()
EMPTY = "/".join(["15"] * 15)
VSMATT = (
    "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
    "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0 lex NWL20;"
)


@st.composite
def positions(draw):
    """Random legal positions: tiles drawn from the distribution onto random squares, racks from the rest."""
    pool = []
    for ml in range(LD.size):
        pool += [ml] * LD.count(ml)
    perm = draw(st.permutations(pool))
    n_board = draw(st.integers(0, 60))
    squares = draw(st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)), min_size=n_board,
                            max_size=n_board, unique=True))
    rows = [["."] * 15 for _ in range(15)]
    for (r, c), t in zip(squares, perm, strict=False):
        if t == 0:
            blank_as = draw(st.integers(1, 26))
            rows[r][c] = LD.label(blank_as | 0x80)
        else:
            rows[r][c] = LD.label(t)
    rest = perm[len(squares):]
    n1 = draw(st.integers(0, 7))
    n2 = draw(st.integers(0, 7))
    r1, r2 = rest[:n1], rest[n1:n1 + n2]
    board = []
    for row in rows:
        out, run = "", 0
        for ch in row:
            if ch == ".":
                run += 1
            else:
                out += (str(run) if run else "") + ch
                run = 0
        board.append(out + (str(run) if run else ""))
    s1, s2 = draw(st.integers(-100, 700)), draw(st.integers(-100, 700))
    zeros = draw(st.integers(0, 5))
    ops = draw(st.sampled_from(["", " lex NWL20;", " lex CSW21; ld english;", " lex NWL20; mcnz 6; bb 50;"]))
    return f"{'/'.join(board)} {LD.rack_str(r1)}/{LD.rack_str(r2)} {s1}/{s2} {zeros}{ops}"


@settings(max_examples=150, deadline=None)
@given(positions())
def test_cgp_roundtrip(cgp):
    pos = parse_cgp(cgp)
    assert write_cgp(pos) == cgp
    assert parse_cgp(write_cgp(pos)) == pos


def test_cgp_fields():
    pos = parse_cgp(VSMATT)
    assert pos.lexicon == "NWL20"
    assert pos.board.tile(0, 7) == LD.letter_ml("Z")
    assert pos.board.tile(7, 11) == LD.letter_ml("B") | 0x80
    assert pos.racks[0] == LD.parse_rack("AABDELT") and pos.racks[1] == []
    assert pos.bag_size() + 7 + pos.board.n_tiles == 100
    pos2 = parse_cgp(EMPTY + " ?AB/CD 10/-5 3 lex CSW21; bagorder EEZ;")
    assert pos2.scores == (10, -5) and pos2.zeros == 3 and pos2.bag_order == LD.parse_rack("EEZ")


@pytest.mark.parametrize(
    "cgp,needle",
    [
        ("", "empty"),
        ("15/15 A/ 0/0 0", "2 rows; expected 15"),
        (EMPTY.replace("15", "16", 1) + " A/ 0/0 0", "row 1 has 16 squares"),
        (EMPTY.replace("15", "14", 1) + " A/ 0/0 0", "row 1 has 14 squares"),
        (EMPTY.replace("15", "7%7", 1) + " A/ 0/0 0", "unknown tile '%'"),
        (EMPTY + " A1/ 0/0 0", "rack 1"),
        (EMPTY + " AB 0/0 0", "racks"),
        (EMPTY + " ABCDEFGH/ 0/0 0", "at most 7"),
        (EMPTY + " A/ x/0 0", "scores"),
        (EMPTY + " A/ 0/0 -1", "must not be negative"),
        (EMPTY + " A/ 0/0 z", "zero turns"),
        (EMPTY + " ZZ/ 0/0 0", "more tiles than the distribution holds: Z"),
        (EMPTY + " A/ 0/0 0 lex NWL20", "must end with ';'"),
        (EMPTY + " A/ 0/0 0 bdn Hexagon;", "unknown board layout"),
        (EMPTY + " A/ 0/0 0 ld klingon;", "unknown letter distribution"),
        (EMPTY + " A/ 0/0 0 mcnz x;", "mcnz"),
        (EMPTY + " A/ 0/0 0", None),
    ],
)
def test_cgp_errors(cgp, needle):
    if needle is None:
        parse_cgp(cgp)
        return
    with pytest.raises(FormatError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        parse_cgp(cgp)


def test_move_notation():
    pos = parse_cgp(VSMATT)
    b = pos.board
    m = parse_move("8G QI", new_board(), LD)
    assert (m.row, m.col, m.vertical, m.tiles) == (7, 6, False, (17, 9))
    m = parse_move("H8 QI", new_board(), LD)
    assert (m.row, m.col, m.vertical) == (7, 7, True)
    # played-through: '.' and parentheses give the same move
    m = parse_move("14H .AX", b, LD)
    assert m.tiles == (0, 1, 24)
    assert parse_move("14H (T)AX", b, LD) == m
    assert parse_move("14H TAX", b, LD) == m  # a letter over a matching board tile is played-through
    assert format_move(m, LD) == "14H .AX"
    assert format_move(m, LD, b, style="table") == "14H (T)AX"
    blank = parse_move("8D WAtER", new_board(), LD)
    assert blank.tiles[2] == LD.letter_ml("T") | 0x80
    assert format_move(blank, LD) == "8D WAtER"
    assert parse_move("exch ABC?", b, LD) == Move("exchange", tiles=(0, 1, 2, 3))
    assert format_move(parse_move("exch ?CBA", b, LD), LD) == "exch ?ABC"
    assert parse_move("pass", b, LD) == Move("pass")


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "empty"),
        ("8Z QI", "off the"),
        ("16A QI", "off the"),
        ("8G", "expected"),
        ("8N QIS", "runs off"),
        ("1H QAP", "occupied by Z"),
        ("1H (Q)EP", "holds Z, not Q"),
        ("8A .B", "is empty"),
        ("1A ...", "is empty"),
        ("1F FE", "continues into the tile at 1H"),
        ("exch AB1", "unknown rack tile"),
        ("exch ABCDEFGH", "1 to 7"),
        ("3A Q%", "unknown tile"),
        ("8G Q(I", "unclosed"),
        ("G*8 QI", "bad coordinate"),
    ],
)
def test_move_errors(text, needle):
    pos = parse_cgp(VSMATT)
    with pytest.raises(FormatError, match=needle.replace("(", r"\(")):
        parse_move(text, pos.board, LD)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 14), st.integers(0, 14), st.booleans(),
    st.lists(st.sampled_from([1, 5, 9, 17, 26, 1 | 0x80, 19 | 0x80]), min_size=1, max_size=7),
)
def test_move_roundtrip(row, col, vertical, tiles):
    board = new_board()
    length = len(tiles)
    if (row if vertical else col) + length > 15:
        return
    m = Move("place", row, col, vertical, tuple(tiles))
    assert parse_move(format_move(m, LD), board, LD) == m


GCG_CASES = load_cases("gcg")


def test_shared_gcgs_load():
    files = sorted((CASES_DIR / "gcg").glob("*.gcg")) if (CASES_DIR / "gcg").is_dir() else []
    if not files:
        pytest.skip("no shared GCG files")
    for f in files:
        game = read_gcg_file(str(f))
        assert len(game.players) == 2 and game.events
        again = parse_gcg(write_gcg(game))
        assert again == game


def test_gcg_every_event_kind_and_notes():
    text = """#character-encoding UTF-8
#player1 ann Ann Smith
#player2 bob Bob
#lexicon NWL20
>ann: ADEIRTW 8D WAITED +30 30
#note nice
more note
>bob: EEGLNOS F5 LEG.ONS +28 28
>ann: ?CDEHRS -CDH +0 30
>bob: AIIOUUV - +0 28
>ann: ?EHRSTU -3 +0 30
>bob: AIIOUUV J2 OUIJA +20 48
>bob: AIIOUUV -- -20 28
>ann: ?EHRSTU (challenge) +5 35
>ann: (challenge) +5 40
>bob: AIIOUUV (AIIOUUV) -8 20
>ann: ?EHRSTU (time) -10 30
>ann: (FIT) +12 42
"""
    game = parse_gcg(text)
    kinds = [e.type for e in game.events]
    assert kinds == ["play", "play", "exchange", "pass", "exchange", "play", "phony_returned", "challenge_bonus",
                     "challenge_bonus", "end_rack_penalty", "time_penalty", "end_rack_points"]
    assert game.events[0].note == "nice\nmore note"
    assert game.events[4].exchanged == "3"
    assert game.players == [("ann", "Ann Smith"), ("bob", "Bob")]
    assert parse_gcg(write_gcg(game)) == game


def test_gcg_encodings():
    latin = "#player1 jos\xe9 Jos\xe9\n#player2 b B\n>jos\xe9: AB 8G AB +8 8\n".encode("iso-8859-1")
    game = parse_gcg(decode_gcg(latin))
    assert game.players[0][0] == "jos\xe9"
    utf = ("#character-encoding UTF-8\n#player1 jos\xe9 J\n#player2 b B\n>jos\xe9: AB 8G AB +8 8\n").encode()
    assert parse_gcg(decode_gcg(utf)).players[0][0] == "jos\xe9"
    with pytest.raises(FormatError, match="unsupported character encoding"):
        decode_gcg(b"#character-encoding latin-2\n")
    with pytest.raises(FormatError, match="invalid UTF-8"):
        decode_gcg(b"#character-encoding UTF-8\n\xff\xfe")


names = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
racks = st.text(alphabet="ABCDEFG?", min_size=1, max_size=7)


@st.composite
def gcg_games(draw):
    p1 = draw(names)
    p2 = draw(names.filter(lambda n: n != p1))
    events = []
    cum = {p1: 0, p2: 0}
    for _ in range(draw(st.integers(0, 12))):
        nick = draw(st.sampled_from([p1, p2]))
        kind = draw(st.sampled_from(["play", "pass", "exchange", "phony_returned", "challenge_bonus",
                                     "end_rack_points", "end_rack_penalty", "time_penalty"]))
        score = draw(st.integers(-50, 100))
        cum[nick] += score
        ev = GcgEvent(type=kind, nick=nick, score=score, cumulative=cum[nick])
        if kind in ("play", "pass", "exchange", "phony_returned", "end_rack_penalty", "time_penalty"):
            ev.rack = draw(racks)
        if kind == "play":
            ev.position = draw(st.sampled_from(["8G", "H8", "12A", "O1"]))
            ev.word = draw(st.text(alphabet="ABCab.", min_size=2, max_size=7))
        if kind == "exchange":
            ev.exchanged = draw(st.one_of(racks, st.integers(1, 7).map(str)))
        if kind in ("end_rack_points", "end_rack_penalty"):
            ev.exchanged = draw(racks)
        ev.note = draw(st.sampled_from(["", "a note", "two\nlines"]))
        events.append(ev)
    return GcgGame(players=[(p1, p1.upper()), (p2, p2.upper())], pragmas=[("lexicon", "NWL20")], events=events)


@settings(max_examples=150, deadline=None)
@given(gcg_games())
def test_gcg_roundtrip(game):
    assert parse_gcg(write_gcg(game)) == game


@pytest.mark.parametrize(
    "text,needle",
    [
        ("#player1 a A\n>a: AB 8G AB +8 8\n", "1 #player lines"),
        ("#player1 a A\n#player2 a B\n", "both players"),
        ("#player1 a A\n#player2 b B\n>c: AB 8G AB +8 8\n", "unknown player 'c'"),
        ("#player1 a A\n#player2 b B\n>a: AB 8G AB 8 8\n", "signed score"),
        ("#player1 a A\n#player2 b B\n>a: AB 8G A(B) +8 8\n", "parentheses"),
        ("#player1 a A\n#player2 b B\n>a: AB Z99 AB +8 8\n", "off the 21x21"),
        ("#player1 a A\n#player2 b B\nhello\n", "line 3"),
        ("#note x\n#player1 a A\n#player2 b B\n", "before any event"),
        ("#player1 a A\n#player2 b B\n>a: AB 8G AB +8 8\n#title late\n", "after the first event"),
    ],
)
def test_gcg_errors(text, needle):
    with pytest.raises(FormatError, match=needle):
        parse_gcg(text)


# ------------------------------------------------------------------ hostile input (see also test_fuzz_parsers.py)

GCG_HEAD = "#player1 a A\n#player2 b B\n"


@pytest.mark.parametrize(
    "cgp,needle",
    [
        (EMPTY + " A/ 0/0 0 bb 99999999999;", "bb 99999999999: out of range"),
        (EMPTY + " A/ 0/0 0 bb -1;", "bb '-1'"),
        (EMPTY + " A/ 0/0 0 bb 1001;", "out of range"),
        (EMPTY + " A/ 0/0 0 mcnz 0;", "mcnz 0: out of range"),
        (EMPTY + " A/ 0/0 0 mcnz ٣;", "mcnz"),
        (EMPTY + " A/ 2147483648/0 0", "2147483648: out of range"),
        (EMPTY + " A/ 0/-2147483649 0", "out of range"),
        (EMPTY + " A/ 1_0/0 0", "expected a whole number"),
        (EMPTY + " A/ +5/0 0", "expected a whole number"),
        (EMPTY + " A/ ١٢/0 0", "expected a whole number"),
        (EMPTY + " A/ 0/0 99999999999999", "out of range"),
        (EMPTY + " A/ 0/0 7", "more than the limit of 6"),
        (EMPTY + " A/ 0/0 ²", "zero turns"),
        (EMPTY.replace("15", "7A²6", 1) + " A/ 0/0 0", "unknown tile '²'"),
        (EMPTY.replace("15", "7A٣", 1) + " A/ 0/0 0", "unknown tile '٣'"),
        (EMPTY.replace("15", "99999999999999999999", 1) + " A/ 0/0 0", "row 1 has"),
        (EMPTY.replace("15", "0015", 1) + " A/ 0/0 0", None),
        (EMPTY.replace("15", "ı14", 1) + " A/ 0/0 0", "unknown tile 'ı'"),
        (EMPTY.replace("15", "\x0014", 1) + " A/ 0/0 0", "unknown tile '\\\\x00'"),
        (EMPTY.replace("15", "[]14", 1) + " A/ 0/0 0", "unknown tile"),
        (EMPTY.replace("15", "?14", 1) + " A/ 0/0 0", "unknown tile '\\?'"),
        (EMPTY + " a/ 0/0 0", "unknown rack tile 'a'"),
        (EMPTY + " ß/ 0/0 0", "unknown rack tile 'ß'"),
        (EMPTY + " [/ 0/0 0", "unclosed"),
        (EMPTY + " A/ 0/0 0 lex A; lex B;", "lex is given twice"),
        (EMPTY + " A/ 0/0 0 lex A; -LEX B;", "lex is given twice"),
        (EMPTY + " A/ 0/0 0 lex A\x00B;", "control"),
        (EMPTY + " A/ 0/0 0 lex ../../etc/passwd;", "not a name"),
        (EMPTY + " A/ 0/0 0 -;", "not an operation name"),
        (EMPTY + " A/ 0/0 0 var wordsmog;", "unsupported variant"),
        (EMPTY + " A/ 0/0 0 gid a\x7fb;", "unprintable"),
        (EMPTY + " A/ 0/0 0 gid a\u200bb;", "unprintable"),
        ("Z4Z9/" + "/".join(["15"] * 14) + " / 0/0 0", "Z \\(2 where the distribution has 1\\)"),
        ("ZZZZZ10/" + "/".join(["15"] * 14) + " / 0/0 0", "Z \\(5"),
        ("Z14/" + "/".join(["15"] * 14) + " Z/ 0/0 0", "more tiles than the distribution holds: Z"),
        (EMPTY + " ???/ 0/0 0", "more tiles than the distribution holds: \\?"),
        (EMPTY + " A/ 0/0 0 bagorder ZZ;", "bagorder 'ZZ': more Z"),
        ("\ufeff" + EMPTY + " A/ 0/0 0", None),
        (EMPTY + "\t A/\t0/0\t0\r\n", None),
        (EMPTY + " AEINRST/ 0/0 0 lex NWL20; bb 0; mcnz 1;", None),
        (EMPTY + " AEINRST/ 0/0 1 mcnz 1;", None),
        (EMPTY.replace("15", "0" * 5000 + "15", 1) + " A/ 0/0 0", "too long"),
    ],
)
def test_cgp_hostile(cgp, needle):
    if needle is None:
        parse_cgp(cgp)
        return
    with pytest.raises(FormatError, match=needle):
        parse_cgp(cgp)


def test_cgp_canonical_ops():
    pos = parse_cgp(EMPTY + " A/ 0/0 0 -LEX NWL20; bb 050; mcnz 06;")
    assert pos.ops == {"lex": "NWL20", "bb": "50", "mcnz": "6"}
    assert pos.bingo_bonus == 50 and pos.max_scoreless_turns == 6
    assert write_cgp(pos) == EMPTY + " A/ 0/0 0 lex NWL20; bb 50; mcnz 6;"


def test_tile_counts_name_the_letters_briefly():
    board = "/".join(["AEIOUAEIOUAEIOU"] * 15)
    with pytest.raises(FormatError) as info:
        parse_cgp(board + " / 0/0 0")
    msg = str(info.value)
    assert "A (45 where the distribution has 9)" in msg and "more letters" in msg and len(msg) < 200


@pytest.mark.parametrize(
    "text",
    [
        "8G " + "Q" * 15_000_000,
        "8G QI" + " " * 1_000_000,
        EMPTY + " A/ 0/0 0 gid " + "x" * 1_000_000 + ";",
        GCG_HEAD + "#title " + "x" * 1_000_000 + "\n",
        GCG_HEAD + "x" * 2_000_000,
    ],
)
def test_huge_inputs_are_refused_quickly_with_short_messages(text):
    import time

    t0 = time.perf_counter()
    with pytest.raises(FormatError) as info:
        if text.startswith("8G"):
            parse_move(text, new_board(), LD)
        elif text.startswith("#"):
            parse_gcg(text)
        else:
            parse_cgp(text)
    assert time.perf_counter() - t0 < 0.5
    msg = str(info.value)
    assert len(msg) < 200 and ("…" in msg or "characters" in msg), msg


@pytest.mark.parametrize(
    "text,needle",
    [
        ("٨G QI", "bad coordinate"),
        ("8G ıQ", "unknown tile 'ı'"),
        ("8G Qİ", "unknown tile"),
        ("8G Q\x00", "unknown tile '\\\\x00'"),
        ("8G Q[[I]", "bad multi-character tile"),
        ("8G Q[I", "unclosed"),
        ("8G Q]I", "unbalanced"),
        ("8G Q()I", "empty parentheses"),
        ("exch ß", "unknown rack tile 'ß'"),
        ("exch ı", "unknown rack tile 'ı'"),
        ("99999999999999999999G QI", "bad coordinate"),
        ("8G " + "A" * 62, "too long"),
        ("8A ABCDEFGH", "places 8 tiles"),
    ],
)
def test_move_hostile(text, needle):
    with pytest.raises(FormatError, match=needle):
        parse_move(text, new_board(), LD)


def test_move_length_limit_is_generous():
    assert parse_move("  8A    ABCDEFG   ", new_board(), LD).tiles_played == 7
    assert parse_move("(exch ABCDEFG)", new_board(), LD).kind == "exchange"


@pytest.mark.parametrize(
    "text,needle",
    [
        (GCG_HEAD + ">a: AB 8G AB +8 --10\n", "cumulative score '--10'"),
        (GCG_HEAD + ">a: AB 8G AB ++8 8\n", "signed score '\\+\\+8'"),
        (GCG_HEAD + ">a: AB 8G AB +2147483648 2147483648\n", "2147483648: out of range"),
        (GCG_HEAD + ">a: AB 8G AB +8 -2147483649\n", "out of range"),
        (GCG_HEAD + ">a: AB 8G AB +8 ٨\n", "cumulative score"),
        (GCG_HEAD + ">a: AB 8G AB +²8 8\n", "signed score"),
        (GCG_HEAD + ">a: AB -0 +0 0\n", "exchanged tiles 0: out of range"),
        (GCG_HEAD + ">a: AB -8 +0 0\n", "exchanged tiles 8: out of range"),
        (GCG_HEAD + ">a: () +0 0\n", "bad end-of-game rack"),
        (GCG_HEAD + ">a: AB\x00 - +0 0\n", "control character U\\+0000"),
        (GCG_HEAD + "#title " + "x" * 5000 + "\n", "line 3 has 5007 characters"),
        (GCG_HEAD + ">a: AB - +0 0\n" * 2001, "more than 2000 events"),
        ("#lexicon A\n#lexicon B\n" + GCG_HEAD, "#lexicon is given twice"),
        (GCG_HEAD + "#player1 c C\n", "#player1 is given twice"),
        ("#player2 b B\n#player1 a A\n", "#player2 before #player1"),
        ("#player1 a:b A\n#player2 b B\n", "without ':'"),
        (GCG_HEAD + "#character-encoding UTF-8\n", "must be the first line"),
    ],
)
def test_gcg_hostile(text, needle):
    with pytest.raises(FormatError, match=needle):
        parse_gcg(text)


def test_gcg_line_endings_bom_and_latin1_c1():
    crlf = "\ufeff#character-encoding UTF-8\r\n" + GCG_HEAD.replace("\n", "\r\n") + ">a: AB 8G AB +8 8\r\n"
    assert parse_gcg(crlf).events[0].cumulative == 8
    cr = GCG_HEAD.replace("\n", "\r") + ">a: AB 8G AB +8 8\r"
    assert len(parse_gcg(cr).events) == 1
    # a UTF-8 byte-order mark means UTF-8, with or without the declaration
    bom = b"\xef\xbb\xbf" + "#player1 jos\xe9 J\n#player2 b B\n".encode()
    assert parse_gcg(decode_gcg(bom)).players[0][0] == "jos\xe9"
    with pytest.raises(FormatError, match="UTF-16"):
        decode_gcg(crlf.encode("utf-16"))
    # ISO-8859-1 byte 0x85 (NEL) stays inside its line: only CR and LF end lines
    latin = (GCG_HEAD + ">a: AB 8G AB +8 8\n#note wait\x85 what\n").encode("iso-8859-1")
    game = parse_gcg(decode_gcg(latin))
    assert game.events[0].note == "wait\x85 what"


def test_gcg_long_notes_are_linear():
    import time

    text = GCG_HEAD + ">a: AB 8G AB +8 8\n#note x\n" + "y\n" * 130_000
    t0 = time.perf_counter()
    game = parse_gcg(text)
    assert time.perf_counter() - t0 < 1
    assert len(game.events[0].note) == 1 + 2 * 130_000
    # lines just under the length limit: every check is linear in the text
    t0 = time.perf_counter()
    parse_gcg(GCG_HEAD + (">a: AB 8G AB +8 8\n#note " + "x" * 4000 + "\n") * 60)
    assert time.perf_counter() - t0 < 1


def test_excerpt():
    from macondo_server.model.text import excerpt

    assert excerpt("8G QI") == "'8G QI'"
    long = excerpt("Q" * 1_000_000)
    assert long == "'" + "Q" * 40 + "…' (1000000 chars)"
    assert excerpt("a\x00b") == "'a\\x00b'"
    assert len(excerpt("\U000e0001" * 100)) < 80
    assert len(excerpt("x" * 100, limit=10)) < 40
