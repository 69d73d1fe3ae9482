"""Letter distributions and board layouts as data, the distribution a lexicon's name implies, and multi-letter
tiles, non-ASCII letters and the 21x21 board in CGP, move notation, GCG and rendering. The known answers of the
peers' test suites (shared cases/languages.jsonl) are checked where the shared folder is present."""

from __future__ import annotations

import json

import pytest

from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import decode_gcg, parse_gcg
from macondo_server.model.languages import (
    PACKAGE_CATALOG,
    Catalog,
    LanguageError,
    distribution_by_name,
)
from macondo_server.model.move import format_move, parse_move
from macondo_server.model.render import render_board
from macondo_server.model.text import FormatError
from macondo_server.model.tiles import rack_tiles

from conftest import CASES_DIR, SHARED

LANG_CASES = CASES_DIR / "languages.jsonl"
PEER_TABLES = SHARED / "docs" / "distributions"
EMPTY15 = "/".join(["15"] * 15)
EMPTY21 = "/".join(["21"] * 21)


def _cases(kind: str | None = None, prefix: str = "") -> list[dict]:
    if not LANG_CASES.is_file():
        return []
    out = []
    for line in LANG_CASES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if (kind is None or case["kind"] == kind) and case["id"].startswith(prefix):
            out.append(case)
    return out


def _ids(cases: list[dict]) -> list[str]:
    return [c["id"] for c in cases]


needs_lang_cases = pytest.mark.skipif(not LANG_CASES.is_file(), reason="shared language cases absent")

# rows (with the blank), tiles, blanks, face points (count x score), multi-letter tiles, zero-count letters
FACTS = {
    "english": (27, 100, 2, 187, [], []),
    "english_super": (27, 200, 4, 381, [], []),
    "french": (27, 102, 2, 197, [], []),
    "catalan": (27, 100, 2, 189, ["L·L", "NY", "QU"], []),
    "polish": (33, 100, 2, 190, [], []),
    "german": (30, 102, 2, 202, [], []),
    "dutch": (27, 102, 2, 230, [], []),
    "norwegian": (33, 100, 2, 202, [], ["Q", "X", "Ü", "Z", "Ä", "Ö"]),
    "spanish": (29, 100, 2, 192, ["CH", "LL", "RR"], []),
    "slovene": (30, 100, 2, 180, [], ["Q", "W", "X", "Y"]),
    "swedish": (28, 100, 2, 194, [], []),
}
# the distributions the peers publish tables of (../shared/docs/distributions); swedish is checked against the
# published table below
PEER_NAMES = sorted(set(FACTS) - {"swedish"})


@pytest.mark.parametrize("name", sorted(FACTS))
def test_shipped_distributions(name):
    ld = PACKAGE_CATALOG.distribution(name)
    rows, tiles, blanks, points, multi, zero = FACTS[name]
    assert ld.size == rows and ld.total_tiles() == tiles and ld.count(0) == blanks
    assert sum(ld.count(i) * ld.score(i) for i in range(ld.size)) == points
    assert sorted(ld.multi) == multi
    assert [ld.labels[i] for i in range(1, ld.size) if ld.count(i) == 0] == zero
    assert ld.labels[0] == "?" and all(ld.is_vowel(ld.letter_ml(v)) for v in "AEIOU")
    assert PACKAGE_CATALOG.distribution(name.upper()) is ld      # names are case-insensitive, tables shared


@pytest.mark.skipif(not PEER_TABLES.is_dir(), reason="shared distribution tables absent")
@pytest.mark.parametrize("name", PEER_NAMES)
def test_shipped_distributions_match_the_peers_tables(name):
    """Letters, order (so the tile numbers of the peers' word graphs and leave files), counts, scores and vowels
    as Macondo and MAGPIE publish them (Macondo's Catalan Ç vowel field 10 counts as no vowel, as there)."""
    from engine_cy.alphabet import LetterDistribution

    ours = PACKAGE_CATALOG.distribution(name)
    seen = 0
    for peer in ("macondo", "magpie"):
        path = PEER_TABLES / f"{peer}_{name}.csv"
        if not path.is_file():
            continue
        theirs = LetterDistribution.from_file(str(path), name)
        assert theirs.table() == ours.table(), peer
        assert theirs.lower_labels == ours.lower_labels
        seen += 1
    assert seen >= 1


def test_swedish_is_the_published_table():
    """The Swedish edition's tiles as published (Wikipedia, "Scrabble letter distributions", Swedish), by
    score: Swedish alphabetical order (Z, Å, Ä, Ö last), no Q or W, vowels A E I O U Y Å Ä Ö."""
    published = {
        0: "??", 1: "AAAAAAAA DDDDD EEEEEEE IIIII LLLLL NNNNNN RRRRRRRR SSSSSSSS TTTTTTTT",
        2: "GGG HH KKK MMM OOOOO", 3: "FF VV ÄÄ", 4: "BB PP UUU ÅÅ ÖÖ", 7: "J Y", 8: "C X", 10: "Z",
    }
    ld = PACKAGE_CATALOG.distribution("swedish")
    expected = {}
    for score, tiles in published.items():
        for t in tiles.replace(" ", ""):
            n, s = expected.get(t, (0, score))
            expected[t] = (n + 1, s)
    labels = [ld.labels[i] for i in range(ld.size)]
    assert labels == ["?"] + list("ABCDEFGHIJKLMNOPRSTUVXYZÅÄÖ")
    assert {lab: (ld.count(i), ld.score(i)) for i, lab in enumerate(labels)} == expected
    assert [lab for i, lab in enumerate(labels) if i and ld.is_vowel(i)] == list("AEIOUYÅÄÖ")


def test_layouts_by_name_and_alias():
    assert PACKAGE_CATALOG.layout_names() == ["standard15", "standard21"]
    assert PACKAGE_CATALOG.layout_name("CrosswordGame") == "standard15"
    assert PACKAGE_CATALOG.layout_name("SuperCrosswordGame") == "standard21"
    assert PACKAGE_CATALOG.board("standard21").dim == 21
    with pytest.raises(LanguageError, match="unknown board layout 'nope' .*standard15, standard21"):
        PACKAGE_CATALOG.board("nope")
    with pytest.raises(FormatError, match="invalid board layout name"):
        PACKAGE_CATALOG.board("../standard15")


@pytest.mark.skipif(not PEER_TABLES.is_dir(), reason="shared layouts absent")
def test_shipped_layouts_match_the_peers():
    from engine_cy.board import Board

    for name in ("standard15", "standard21"):
        theirs = Board((PEER_TABLES / f"magpie_{name}.txt").read_text(encoding="utf-8"), name)
        assert theirs.layout_text() == PACKAGE_CATALOG.board(name).layout_text()


@pytest.mark.parametrize("lexicon,distribution", [
    ("NWL20", "english"), ("nwl23", "english"), ("CSW24", "english"), ("TWL06", "english"), ("America", "english"),
    ("CEL", "english"), ("ECWL", "english"), ("CEL_super", "english_super"), ("NWL20_super", "english_super"),
    ("FRA20", "french"), ("RD28", "german"), ("OSPS49", "polish"), ("DISC2", "catalan"), ("NSF23", "norwegian"),
    ("DSW25", "dutch"), ("FILE2017", "spanish"), ("SLV26", "slovene"), ("slv26", "slovene"),
    ("WOW24", None), ("SCOWL70", None),
])
def test_the_distribution_a_lexicon_name_implies(lexicon, distribution):
    assert distribution_by_name(lexicon) == distribution


@needs_lang_cases
@pytest.mark.parametrize("case", _cases("other", "wordgolib_probable_ld") + _cases("other", "magpie_config_lex"),
                         ids=_ids(_cases("other", "wordgolib_probable_ld") + _cases("other", "magpie_config_lex")))
def test_lexicon_name_cases(case):
    expect = case["expect"]
    want = expect.get("letter_distribution") or expect.get("ld_name")
    assert distribution_by_name(case["lexicon"]) == (None if expect.get("error") else want)


# ------------------------------------------------------------------ CGP


@needs_lang_cases
@pytest.mark.parametrize("case", _cases("cgp_parse", "magpie_cgp_roundtrip"),
                         ids=_ids(_cases("cgp_parse", "magpie_cgp_roundtrip")))
def test_cgp_round_trips(case):
    """The peers' positions in Catalan (multi-letter tiles, blanks) and Polish: read with the distribution their
    lexicon implies, written back the same (the four fields)."""
    pos = parse_cgp(case["input"]["cgp"].replace(" -lex ", " lex "))
    assert pos.ld.name == case["distribution"]
    assert " ".join(write_cgp(pos).split()[:4]) == case["expect"]["written_cgp_equals"]


@needs_lang_cases
@pytest.mark.parametrize("case", _cases("cgp_parse", "macondo_cgp_row"), ids=_ids(_cases("cgp_parse", "macondo_cgp_row")))
def test_catalan_cgp_rows(case):
    """Macondo's Catalan board rows: multi-letter tiles bracketed or bare, blanks lowercase."""
    row = case["input"]["row"]
    pos = parse_cgp("/".join([row] + ["15"] * 14) + " / 0/0 0 ld catalan;", check_counts=False)
    assert [pos.board.tile(0, c) for c in range(15)] == case["expect"]["machine_letters"]


@needs_lang_cases
@pytest.mark.parametrize("case", _cases("distribution"), ids=_ids(_cases("distribution")))
def test_tile_string_cases(case):
    ld = PACKAGE_CATALOG.distribution(case["distribution"])
    expect, given = case["expect"], case["input"]
    if "user_visible" in expect and "machine_letter" in given:
        assert ld.label(given["machine_letter"]) == expect["user_visible"]
    elif "user_visible" in expect:
        # Macondo prints multi-letter tiles without brackets; read back, that text is the same tiles
        mls = given["machine_letters"]
        assert ld.parse_word(expect["user_visible"]) == mls
        assert ld.word_str(mls).replace("[", "").replace("]", "") == expect["user_visible"]
    elif expect.get("num_mls") == -1:
        with pytest.raises(ValueError):
            ld.parse_word(given["string"], allow_through=True)
    else:
        assert ld.parse_word(given["string"]) == expect["machine_letters"]


def test_a_cgp_finds_its_distribution():
    catalan_rack = f"{EMPTY15} [QU]NY[L·L]?AEI/ 0/0 0"
    for ops in ("lex DISC2;", "ld catalan;", "lex NWL20; ld catalan;"):
        pos = parse_cgp(f"{catalan_rack} {ops}")
        assert pos.ld.name == "catalan" and pos.racks[0][:3] == [19, 16, 13]
    assert parse_cgp(catalan_rack, lexicon="DISC2").ld.name == "catalan"
    assert parse_cgp(catalan_rack, distribution="Catalan").ld.name == "catalan"
    with pytest.raises(FormatError, match="not a multi-letter tile of the 'english' distribution"):
        parse_cgp(catalan_rack)
    with pytest.raises(FormatError, match="CGP op ld names the letter distribution catalan but the request names "
                                          "french|the request names the letter distribution french but CGP op ld"):
        parse_cgp(f"{catalan_rack} ld catalan;", distribution="french")
    with pytest.raises(FormatError, match=r"unknown letter distribution 'klingon' \(known: catalan, dutch, english"):
        parse_cgp(f"{EMPTY15} A/ 0/0 0 ld klingon;")
    # english positions are written as before; others name their distribution
    assert write_cgp(parse_cgp(f"{EMPTY15} AB/ 0/0 0")) == f"{EMPTY15} AB/ 0/0 0"
    assert write_cgp(parse_cgp(catalan_rack, lexicon="DISC2")).endswith(" ld catalan;")


def test_the_super_board_in_cgp():
    pos = parse_cgp(f"{EMPTY21} IONIZED/ 0/0 0 lex CEL_super;")
    assert pos.board.dim == 21 and pos.ld.name == "english_super" and pos.board.layout_name == "standard21"
    assert pos.bag_size() == 200 - 7
    # the english lexicon on the 21x21 board plays the english_super tiles, as the peers do
    assert parse_cgp(f"{EMPTY21} A/ 0/0 0 lex NWL20;").ld.name == "english_super"
    assert parse_cgp(f"{EMPTY21} A/ 0/0 0 bdn SuperCrosswordGame;").board.dim == 21
    with pytest.raises(FormatError, match="CGP board has 21 rows; expected 15"):
        parse_cgp(f"{EMPTY21} A/ 0/0 0 bdn CrosswordGame;")
    with pytest.raises(FormatError, match="CGP board has 16 rows; expected 15"):
        parse_cgp("/".join(["15"] * 16) + " A/ 0/0 0")
    row = "10QUIZZED4"
    pos = parse_cgp("/".join(["21"] * 20 + [row]) + " A/ 0/0 0", check_counts=False)
    assert write_cgp(pos).split()[0].endswith(row)
    move = parse_move("U15 ZA", pos.board, pos.ld)
    assert (move.row, move.col, move.vertical) == (14, 20, True)
    assert format_move(move, pos.ld) == "U15 ZA"


def test_moves_with_multi_letter_tiles_and_blanks():
    pos = parse_cgp(f"{EMPTY15} AL?QU/ 0/0 0 ld catalan;")
    board, ld = pos.board, pos.ld
    for text in ("8G A[l·l]A", "8G Al·lA", "8g A[l·l]A"):
        m = parse_move(text, board, ld)
        assert m.tiles == (1, 13 | 0x80, 1)
        assert format_move(m, ld) == "8G A[l·l]A"
    exch = parse_move("exch [QU]l?", board, ld)
    assert exch.tiles == (0, 12, 19) and format_move(exch, ld) == "exch ?L[QU]"
    assert rack_tiles(ld, "ny[qu]", "rack", fold_case=True) == [16, 19]
    with pytest.raises(FormatError, match="not a multi-letter tile"):
        parse_move("8G A[L]A", board, ld)
    board.set_tile(7, 7, 19)
    m = parse_move("8G A(QU)E", board, ld)
    assert m.tiles == (1, 0, 6) and format_move(m, ld, board, style="table") == " 8G A([QU])E"


def test_polish_moves_and_racks():
    pos = parse_cgp(f"{EMPTY15} ŻĄŁ?ÓŚĆ/ 0/0 0 lex OSPS49;")
    ld = pos.ld
    assert ld.rack_str(pos.racks[0]) == "?ĄĆŁÓŚŻ"
    assert sorted(rack_tiles(ld, "żąłóść?", "rack", fold_case=True)) == sorted(pos.racks[0])
    m = parse_move("8H ŻaŁ", pos.board, ld)
    assert m.tiles == (32, 1 | 0x80, 16) and format_move(m, ld) == "8H ŻaŁ"


# ------------------------------------------------------------------ GCG


def test_gcg_with_multi_letter_tiles_in_utf8_and_latin1():
    text = ("#player1 a A\n#player2 b B\n#lexicon DISC2\n#tile-distribution catalan\n"
            ">a: AAL·L?ÇS 8D AL·LAÇ +30 30\n>b: EINQUSTT 9E [QU]E +12 12\n")
    game = parse_gcg(decode_gcg(("#character-encoding UTF-8\n" + text).encode("utf-8")))
    legacy = parse_gcg(decode_gcg(text.encode("iso-8859-1")))     # '·' and 'Ç' are in Latin-1
    for g in (game, legacy):
        assert g.pragma("tile-distribution") == "catalan" and g.events[0].word == "AL·LAÇ"
        assert g.events[1].word == "[QU]E"
    with pytest.raises(FormatError, match="UTF-8"):
        decode_gcg(b"#character-encoding UTF-8\n" + text.encode("iso-8859-1"))


# ------------------------------------------------------------------ data a user adds


def test_a_user_distribution_and_layout(tmp_path):
    (tmp_path / "letterdistributions").mkdir()
    (tmp_path / "letterdistributions" / "tiny.csv").write_text(
        "letter,count,score,vowel\n?,2,0,0\nA,5,1,1\nÑ,2,4,0\n[SS],2,6,0\n", encoding="utf-8")
    (tmp_path / "layouts").mkdir()
    (tmp_path / "layouts" / "small.txt").write_text("2, 2\n=   =\n  '  \n  -  \n  '  \n=   =\n")
    cat = Catalog([tmp_path])
    assert "tiny" in cat.distribution_names() and "english" in cat.distribution_names()
    assert cat.layout_names() == ["small", "standard15", "standard21"]
    pos = parse_cgp("5/5/1Ñ[SS]a1/5/5 A[SS]?/ 0/0 0 ld tiny; bdn small;", catalog=cat)
    assert pos.board.dim == 5 and pos.board.tile(2, 2) == 3 and pos.board.tile(2, 3) == 1 | 0x80
    assert write_cgp(pos) == "5/5/1Ñ[SS]a1/5/5 ?A[SS]/ 0/0 0 ld tiny; bdn small;"
    assert pos.bag_size() == 11 - 3 - 3
    rendered = render_board(pos).splitlines()
    assert len({len(line) for line in rendered[2:-1]}) == 1 and "SS" in rendered[4]
    # the package's own tables stay reachable, and without the data directory the additions are unknown
    with pytest.raises(LanguageError, match="unknown board layout 'small'"):
        parse_cgp("5/5/5/5/5 A/ 0/0 0 ld tiny; bdn small;")
    with pytest.raises(LanguageError, match="unknown letter distribution 'tiny'"):
        parse_cgp(f"{EMPTY15} A/ 0/0 0 ld tiny;")


@pytest.mark.parametrize("layout,needle", [
    ("2, 2\n=   =\n  '  \n  -  \n", "row 1 has 5 squares; the board has 3 rows"),
    ("9, 9\n" + "     \n" * 5, "start square .* off the board"),
    ("2 2\n" + "     \n" * 5, "first line must be 'row, col'"),
    ("2, 2\n" + "  x  \n" * 5, "unknown premium 'x' at row 1, column 3"),
    ("2, 2\n", "0 rows"),
])
def test_malformed_layouts_are_one_line_errors(tmp_path, layout, needle):
    (tmp_path / "layouts").mkdir()
    (tmp_path / "layouts" / "bad.txt").write_text(layout)
    with pytest.raises(LanguageError, match=f"board layout bad.txt: .*{needle}") as info:
        Catalog([tmp_path]).board("bad")
    assert "\n" not in str(info.value)


def test_malformed_distribution_files_are_one_line_errors(tmp_path):
    (tmp_path / "letterdistributions").mkdir()
    (tmp_path / "letterdistributions" / "bad.csv").write_text("?,2,0,0\nA,x,1,1\n")
    with pytest.raises(LanguageError, match="letter distribution bad.csv: .*integers") as info:
        Catalog([tmp_path]).distribution("bad")
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------ a layout file named directly


def test_a_layout_file_named_directly(tmp_path):
    """A layout file the command line names: known to that catalog by its file name, ahead of the data
    directories' layout of that name; other catalogs do not see it."""
    path = tmp_path / "Plain15.txt"
    path.write_text("7, 7\n" + "." * 15 + "\n" + " \n" * 14)    # fifteen rows of plain squares
    cat = Catalog()
    assert cat.add_layout_file(path) == "plain15"
    assert "plain15" in cat.layout_names() and "plain15" not in PACKAGE_CATALOG.layout_names()
    board = cat.board("PLAIN15")
    assert board.dim == 15 and board.layout_name == "plain15" and board.premium(0, 0) == (1, 1)
    pos = parse_cgp(f"{EMPTY15} AEI/ 0/0 0", catalog=cat, layout="plain15")
    assert pos.board.premium(0, 0) == (1, 1) and write_cgp(pos) == f"{EMPTY15} AEI/ 0/0 0 bdn plain15;"
    assert parse_cgp(write_cgp(pos), catalog=cat).board == pos.board
    with pytest.raises(LanguageError, match="unknown board layout 'plain15'"):
        parse_cgp(write_cgp(pos))
    # a file of a shipped layout's name takes its place in this catalog only
    own = tmp_path / "standard15.txt"
    own.write_text(path.read_text())
    shadow = Catalog()
    shadow.add_layout_file(own)
    assert shadow.board("standard15").premium(0, 0) == (1, 1) and PACKAGE_CATALOG.board("standard15").premium(0, 0) != (1, 1)


@pytest.mark.parametrize("name,text,needle", [
    ("missing.txt", None, "layout file .*missing.txt' does not exist"),
    ("bad.txt", "7, 7\n" + "x" * 15 + "\n" + ". \n" * 14, "board layout bad.txt: .*unknown premium 'x' at row 1, column 1"),
    ("two words.txt", "1, 1\n   \n   \n   \n", "its name .* must be 1 to 64 letters"),
    ("CrosswordGame.txt", "1, 1\n   \n   \n   \n", "CrosswordGame is another name of the standard15 layout"),
])
def test_layout_files_that_do_not_fit_are_one_line_errors(tmp_path, name, text, needle):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(LanguageError, match=needle) as info:
        Catalog().add_layout_file(path)
    assert "\n" not in str(info.value)


def test_a_named_layout_overrides_the_size_and_must_agree_with_bdn():
    pos = parse_cgp(f"{EMPTY21} AEI/ 0/0 0 lex NWL20;", layout="SuperCrosswordGame")
    assert pos.board.layout_name == "standard21" and pos.ld.name == "english_super"
    with pytest.raises(FormatError, match="CGP board has 15 rows; expected 21"):
        parse_cgp(f"{EMPTY15} AEI/ 0/0 0", layout="standard21")
    with pytest.raises(LanguageError, match="names the board layout standard15 but CGP op bdn names standard21"):
        parse_cgp(f"{EMPTY21} AEI/ 0/0 0 bdn SuperCrosswordGame;", layout="standard15")
    assert parse_cgp(f"{EMPTY15} AEI/ 0/0 0 bdn CrosswordGame;", layout="standard15").board.dim == 15
