from __future__ import annotations

import pytest

from engine_cy.alphabet import ENGLISH_CSV, LetterDistribution
from engine_cy.board import STANDARD15, Board


def test_english_distribution():
    ld = LetterDistribution.english()
    assert ld.size == 27 and ld.total_tiles() == 100
    assert sum(ld.count(i) * ld.score(i) for i in range(ld.size)) == 187
    assert [ld.label(i) for i in (0, 1, 26)] == ["?", "A", "Z"]
    assert ld.label(1 | 0x80) == "a" and ld.score(17 | 0x80) == 0
    assert [ld.is_vowel(ld.letter_ml(c)) for c in "AEIOUY"] == [True] * 5 + [False]
    assert ld.parse_rack("?QU") == [0, 17, 21]


def test_distribution_from_file(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text("letter,count,score,is_vowel\n?,1,0,0\nA,3,1,1\n[CH],1,5,0\nB,2,3,0\n")
    ld = LetterDistribution.from_file(str(path))
    assert ld.name == "tiny" and ld.size == 4 and ld.total_tiles() == 7
    assert ld.parse_rack("A[CH]B?") == [1, 2, 3, 0]
    assert ld.label(2) == "[CH]" and ld.label(2 | 0x80) == "[ch]"
    assert LetterDistribution(ENGLISH_CSV).size == 27


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "no rows"),
        ("A,1,1,1\n", "blank"),
        ("?,2,0,0\nA,1,x,1\n", "integers"),
        ("?,2,0,0\nA,1,1\n", "letter,count"),
        ("?,2,0,0\nA,1,1,1\nA,1,1,1\n", "duplicate"),
    ],
)
def test_distribution_errors(text, needle):
    with pytest.raises(ValueError, match=needle):
        LetterDistribution(text)


def test_board_layout_and_anchors():
    b = Board()
    assert b.dim == 15 and (b.start_row, b.start_col) == (7, 7)
    assert b.premium(0, 0) == (1, 3) and b.premium(7, 7) == (1, 2) and b.premium(1, 5) == (3, 1)
    assert b.premium(0, 3) == (2, 1) and b.premium(7, 6) == (1, 1)
    counts = {}
    for r in range(15):
        for c in range(15):
            counts[b.premium(r, c)] = counts.get(b.premium(r, c), 0) + 1
    assert counts[(1, 3)] == 8 and counts[(1, 2)] == 17 and counts[(3, 1)] == 12 and counts[(2, 1)] == 24
    assert b.is_anchor(7, 7) and not b.is_anchor(7, 8)
    b.set_tile(7, 7, 1)
    assert b.n_tiles == 1 and not b.is_anchor(7, 7) and b.is_anchor(7, 8) and b.is_anchor(6, 7)
    assert not b.is_anchor(5, 5)
    b.set_tile(7, 7, 0)
    assert b.is_empty()
    # a 21x21 layout from data
    rows = ["=" + " " * 19 + "="] + [" " * 21] * 19 + ["~" * 21]
    big = Board("10, 10\n" + "\n".join(rows) + "\n", "Big")
    assert big.dim == 21 and big.premium(20, 3) == (1, 4)
    with pytest.raises(IndexError):
        big.tile(21, 0)


@pytest.mark.parametrize(
    "layout,needle",
    [("", "empty"), ("x\n" + STANDARD15.split("\n", 1)[1], "first line"), ("7, 7\n" + ("?" * 15 + "\n") * 15, "premium"),
     ("30, 30\n" + STANDARD15.split("\n", 1)[1], "off the board")],
)
def test_board_layout_errors(layout, needle):
    with pytest.raises(ValueError, match=needle):
        Board(layout)
