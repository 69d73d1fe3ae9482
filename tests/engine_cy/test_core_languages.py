"""The core with other alphabets and boards: distribution tables (multi-letter tiles, non-ASCII letters, the
peers' file formats), tile strings, layouts and their opening penalties, and move generation on multi-letter
tiles, the 21x21 board and layouts that are not the same across and down, against brute force."""

from __future__ import annotations

import random

import pytest

from engine_cy.alphabet import LetterDistribution, TileParseError
from engine_cy.board import STANDARD15, Board
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from engine_cy.movegen import MoveGen
from macondo_server.model.languages import PACKAGE_CATALOG

from helpers import brute_force_moves

CATALAN = PACKAGE_CATALOG.distribution("catalan")
POLISH = PACKAGE_CATALOG.distribution("polish")
SPANISH = PACKAGE_CATALOG.distribution("spanish")


def test_multi_letter_tiles_read_with_or_without_brackets_where_unambiguous():
    ld = CATALAN
    assert ld.multi == ["L·L", "NY", "QU"]
    qu, ll, ny = ld.letter_ml("QU"), ld.letter_ml("L·L"), ld.letter_ml("[NY]")
    assert (ll, ny, qu) == (13, 16, 19)
    # Catalan has no Q, Y or '·' tile alone: the bare spellings can only be the multi-letter tiles
    assert ld.parse_rack("QUNYL·LA?") == [qu, ny, ll, 1, 0]
    assert ld.parse_word("Al·lOQUIMIquES") == [1, ll | 0x80, 17, qu, 10, 14, 10, qu | 0x80, 6, 21]
    assert ld.parse_word("A[l·l]O[QU]IMI[qu]ES") == ld.parse_word("Al·lOQUIMIquES")
    assert ld.label(ll | 0x80) == "[l·l]" and ld.plain_label(ll) == "L·L"
    assert ld.word_str(ld.parse_word("ARQUEGESSIU")) == "AR[QU]EGESSIU"
    # Spanish has C, H, L and R alone: bare CH is two tiles, [CH] is one
    ch = SPANISH.letter_ml("CH")
    assert SPANISH.parse_rack("CH") == [SPANISH.letter_ml("C"), SPANISH.letter_ml("H")]
    assert SPANISH.parse_rack("[CH][ch]"[:4]) == [ch]
    assert SPANISH.parse_word("[ch]") == [ch | 0x80]


@pytest.mark.parametrize("text", ["A[ES]A", "[", "]", "[]", "ABC[DE", "ABCD]E", "ABC[D]E", "[L·L[QU]]ES",
                                  "[L·L]ES[QU][qu][]A", "Qu", "L·"])
def test_malformed_or_unknown_tile_strings_are_refused(text):
    with pytest.raises(TileParseError):
        CATALAN.parse_word(text)


def test_non_ascii_letters_and_their_blanks():
    ld = POLISH
    assert ld.size == 33 and ld.labels[2] == "Ą" and ld.labels[32] == "Ż"
    assert ld.parse_word("ŻŚŻGÓI") == [32, 25, 32, 10, 21, 12]
    assert ld.parse_word("żaŁ") == [32 | 0x80, 1 | 0x80, 16]
    with pytest.raises(TileParseError):
        ld.parse_word("Ż[Ż]")           # brackets hold multi-letter tiles only
    with pytest.raises(TileParseError):
        ld.parse_rack("Q")              # no Q in Polish


def test_the_peers_table_formats_read_the_same():
    """A table in MAGPIE's columns (letter, lowercase, count, score, vowel, more) and in Macondo's (letter, count,
    score, vowel; a vowel field other than 1 is not a vowel) give the same distribution."""
    magpie = "?,?,2,0,0\nA,a,12,1,1\nÇ,ç,1,10,0,Ｃ\nL·L,l·l,1,10,0\n"
    macondo = "letter,count,score,vowel\n?,2,0,0\nA,12,1,1\nÇ,1,10,10\n[L·L],1,10,0\n"
    a, b = LetterDistribution(magpie, "x"), LetterDistribution(macondo, "x")
    assert a.table() == b.table()
    assert not a.is_vowel(2) and a.lower_labels[2] == "ç" and b.parse_word("ç") == [2 | 0x80]


@pytest.mark.parametrize("text,needle", [
    ("?,2,0,0\nA,1,1,1\na,1,1,1\n", "duplicate"),          # 'a' is the blank form of A
    ("?,2,0,0\nA,1,1,1\n[A],1,1,1\n", "duplicate"),
    ("?,2,0,0\nA1,1,1,1\n", "printable"),
    ("?,2,0,0\nA,-1,1,1\n", "integers"),
    ("?,2,0,0\n", "no letters"),
])
def test_malformed_tables_are_refused(text, needle):
    with pytest.raises(ValueError, match=needle):
        LetterDistribution(text, "bad")


def test_layouts_and_their_opening_penalties():
    std = Board(STANDARD15, "standard15")
    big = PACKAGE_CATALOG.board("standard21")
    assert big.dim == 21 and (big.start_row, big.start_col) == (10, 10)
    assert big.premium(0, 0) == (1, 4) and big.premium(2, 5) == (4, 1)
    counts: dict[tuple[int, int], int] = {}
    for r in range(21):
        for c in range(21):
            counts[big.premium(r, c)] = counts.get(big.premium(r, c), 0) + 1
    assert counts[(1, 4)] == 4 and counts[(4, 1)] == 8
    # a vowel beside a premium square next to the start lane costs half a point per premium step each side
    assert [i for i in range(15) if std.opening_penalty(0, i)] == [2, 6, 8, 12]
    assert {std.opening_penalty(0, i) for i in (2, 6, 8, 12)} == {700}
    assert [(i, big.opening_penalty(0, i)) for i in range(21) if big.opening_penalty(0, i)] == \
        [(2, 700), (5, 700), (9, 700), (11, 700), (15, 700), (18, 700)]
    assert not std.open_down and not big.open_down
    assert Board(big.layout_text(), "again").layout_text() == big.layout_text()


def _asymmetric() -> Board:
    rows = [" " * 9 for _ in range(9)]
    rows[3] = "  \"  '   "          # premiums above the start row but not left of the start column
    rows[4] = "= '      "
    return Board("4, 4\n" + "\n".join(rows) + "\n", "odd")


def test_openings_go_down_where_the_layout_is_not_the_same_down():
    """On a layout that differs across and down, the openings are searched in both directions: the down ones are
    the across ones of the transposed layout."""
    board = _asymmetric()
    assert board.open_down
    transposed_rows = ["".join(board.layout_text().splitlines()[1 + r][c] for r in range(9)) for c in range(9)]
    transposed = Board("4, 4\n" + "\n".join(transposed_rows) + "\n", "odd-t")
    ld = LetterDistribution.english()
    words = sorted({bytes(ord(c) - 64 for c in w) for w in ("AB", "BA", "ABA", "BAA", "AAB", "BAAB")})
    gen = MoveGen(Kwg(build_kwg(words)), ld, None)
    rack = [1, 1, 2, 2, 0]
    gen.generate(board, rack, 50)
    down = {(c, r, tuple(t), s, e) for k, r, c, v, t, s, e, *_ in gen.moves() if k == "place" and v}
    across = {(r, c, tuple(t), s, e) for k, r, c, v, t, s, e, *_ in gen.moves() if k == "place" and not v}
    gen.generate(transposed, rack, 50)
    t_across = {(r, c, tuple(t), s, e) for k, r, c, v, t, s, e, *_ in gen.moves() if k == "place" and not v}
    t_down = {(c, r, tuple(t), s, e) for k, r, c, v, t, s, e, *_ in gen.moves() if k == "place" and v}
    assert down and down == t_across and across == t_down


CATALAN_WORDS = ["QUE", "QUES", "ANY", "ANYS", "NYA", "AL·LA", "AL·LES", "SAL·LA", "ES", "SE", "AS", "SA", "LA",
                 "ELS", "LES", "SAQUE", "ANYAL·LA", "NYAS"]


@pytest.mark.parametrize("seed", range(6))
def test_multi_letter_tiles_against_brute_force(seed):
    """Catalan words with QU, NY and L·L tiles (and blanks) on boards grown from random legal plays: every move
    generated is legal and scored right, and none is missing."""
    ld = CATALAN
    words = {bytes(ld.parse_word(w)) for w in CATALAN_WORDS}
    gen = MoveGen(Kwg(build_kwg(sorted(words))), ld, None)
    rng = random.Random(seed)
    board = PACKAGE_CATALOG.board("standard15")
    letters = [ld.letter_ml(x) for x in ("A", "E", "S", "L", "QU", "NY", "L·L")]
    found_multi = 0
    for _step in range(8):
        rack = [rng.choice(letters + [0]) for _ in range(rng.randint(2, 7))]
        expected = brute_force_moves(board.tiles_list(), rack, words, ld, lambda r, c: board.premium(r, c))
        gen.generate(board, rack, 50)
        got = {(m[1], m[2], m[3], tuple(m[4])): m[5] for m in gen.moves() if m[0] == "place"}
        assert got == expected
        found_multi += sum(1 for key in got if any((t & 0x7F) in letters[4:] for t in key[3]))
        gen.generate(board, [rng.choice(letters) for _ in range(7)], 50)
        places = [m for m in gen.moves() if m[0] == "place"]
        if places:
            _, row, col, vertical, tiles = rng.choice(places)[:5]
            for i, t in enumerate(tiles):
                if t:
                    board.set_tile(row + i * vertical, col + i * (not vertical), t)
    assert found_multi > 0


@pytest.mark.parametrize("seed", range(3))
def test_super_board_against_brute_force(seed):
    """The 21x21 board (quadruple squares, start square K11) against brute force."""
    ld = PACKAGE_CATALOG.distribution("english_super")
    words = {bytes(ord(c) - 64 for c in w) for w in
             ("AA", "AB", "BA", "AD", "DA", "ABS", "BAD", "BADS", "DAB", "DABS", "SAD", "ADS", "BASS", "SABS")}
    gen = MoveGen(Kwg(build_kwg(sorted(words))), ld, None)
    rng = random.Random(seed)
    board = PACKAGE_CATALOG.board("standard21")
    letters = [1, 2, 4, 19]
    for _step in range(8):
        rack = [rng.choice(letters + [0]) for _ in range(rng.randint(2, 7))]
        expected = brute_force_moves(board.tiles_list(), rack, words, ld, lambda r, c: board.premium(r, c),
                                     start=(10, 10))
        gen.generate(board, rack, 50)
        got = {(m[1], m[2], m[3], tuple(m[4])): m[5] for m in gen.moves() if m[0] == "place"}
        assert got == expected
        gen.generate(board, [rng.choice(letters) for _ in range(7)], 50)
        places = [m for m in gen.moves() if m[0] == "place"]
        if places:
            _, row, col, vertical, tiles = rng.choice(places)[:5]
            for i, t in enumerate(tiles):
                if t:
                    board.set_tile(row + i * vertical, col + i * (not vertical), t)
