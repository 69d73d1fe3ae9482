from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_cy.alphabet import LetterDistribution
from macondo_server.formats import (
    FormatError,
    GcgEvent,
    GcgGame,
    Move,
    decode_gcg,
    format_move,
    new_board,
    parse_cgp,
    parse_gcg,
    parse_move,
    read_gcg_file,
    write_cgp,
    write_gcg,
)

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
