"""The bundled lexica of the other languages (FR_DEBIAN, DE_DEBIAN, CA_DEBIAN, ES_DEBIAN, NL_DEBIAN,
NO_DEBIAN, SV_DEBIAN, PL_DEBIAN, SL_DEBIAN, made by scripts/make_lexicon_from_debian.py): each declares its
distribution, names its source and
licence, holds only words of 2 to 15 of its distribution's tiles, loads, and its moves on self-play positions
are legal plays scored as the rules score them. Loading compiles the word list: the larger lists are in the
slow suite. A lexicon whose files are absent is skipped."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from engine_cy.rules import play_error, score_play
from macondo_server.engine.lexicon import LexiconRegistry, load_klv, load_win_table, read_word_list
from macondo_server.engine.replay import lexicon_for_record
from macondo_server.engine.settings import PACKAGE_DATA, Settings
from macondo_server.model.gcg import parse_gcg
from macondo_server.model.languages import PACKAGE_CATALOG

LEXICA_DIR = PACKAGE_DATA / "lexica"
# name: (distribution, Debian package, a few words it must hold, multi-letter tiles its words use)
BUNDLED = {
    "FR_DEBIAN": ("french", "wfrench", ["ETE", "NOEL", "AIGUE", "GARCON"], []),
    "DE_DEBIAN": ("german", "wngerman", ["STRASSE", "ÄRGER", "HAUS", "ÜBER"], []),
    "CA_DEBIAN": ("catalan", "wcatalan", ["I[L·L]USIO", "[QU]E", "A[NY]S", "ADE[QU]EN", "FAÇANA"],
                  ["L·L", "NY", "QU"]),
    "ES_DEBIAN": ("spanish", "wspanish", ["NIÑO", "[CH]ICO", "CA[LL]E", "PE[RR]O"], ["CH", "LL", "RR"]),
    "NL_DEBIAN": ("dutch", "wdutch", ["HUIS", "IJS", "CAFE", "RUINE"], []),
    "NO_DEBIAN": ("norwegian", "wnorwegian", ["BLÅBÆR", "KJÆRLIGHET", "SØSTER", "HUS"], []),
    "SV_DEBIAN": ("swedish", "wswedish", ["SMÖRGÅS", "HÄST", "KÄRLEK", "ÖVER", "IDE"], []),
    "PL_DEBIAN": ("polish", "wpolish", ["ŻÓŁW", "GĘŚ", "ŹDŹBŁO", "ZAŻÓŁĆ", "DOM"], []),
    "SL_DEBIAN": ("slovene", "hunspell-sl", ["ŽABA", "ČEBELA", "ŠOLA", "HIŠA", "KRUH"], []),
}
LONGEST = {"PL_DEBIAN": 13}         # the longest words kept where a KWG cannot hold all of 15 tiles
FAST = {"ES_DEBIAN", "SV_DEBIAN"}   # compiled in about a second; the others take 5 to 30 s (Polish: 17 s and 1.6 GB)
TRAINED = set(BUNDLED)              # every one ships its leaves


def _present(name: str) -> bool:
    return (LEXICA_DIR / f"{name}.txt.gz").is_file()


def _params(compiled: bool = False) -> list:
    """The bundled lexica, each skipped when absent; compiling one but the fast ones is slow."""
    out = []
    for name in BUNDLED:
        marks = [pytest.mark.skipif(not _present(name), reason=f"{name} absent")]
        if compiled and name not in FAST:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(name, marks=marks))
    return out


@pytest.mark.parametrize("name", _params())
def test_the_word_list_spells_its_distribution(name):
    dist, package, must, multi = BUNDLED[name]
    assert (LEXICA_DIR / f"{name}.distribution").read_text(encoding="ascii").strip() == dist
    notice = (LEXICA_DIR / f"{name}.COPYRIGHT").read_text(encoding="utf-8")
    assert f"Debian package {package} " in notice and "scripts/make_lexicon_from_debian.py" in notice
    ld = PACKAGE_CATALOG.distribution(dist)
    tiles = sorted((ld.label(i) for i in range(1, ld.size)), key=len, reverse=True)
    longest = LONGEST.get(name, 15)
    word = re.compile("(?:" + "|".join(re.escape(t) for t in tiles) + f"){{2,{longest}}}")
    words = read_word_list(LEXICA_DIR / f"{name}.txt.gz").split("\n")
    assert words[-1] == ""
    words.pop()
    bad = [w for w in words if not word.fullmatch(w)]
    assert not bad, f"{len(bad)} words that are not 2 to {longest} {dist} tiles, e.g. {bad[:5]}"
    assert words == sorted(set(words)), "not sorted and unique"
    held = set(words)
    assert [w for w in must if w not in held] == []
    for tile in multi:
        assert any(f"[{tile}]" in w for w in words), tile
    leaves = LEXICA_DIR / f"{name}.klv2"
    assert leaves.is_file() == (name in TRAINED)
    if leaves.is_file():
        assert load_klv(leaves, "", ld).n_values > 700_000
    # its own win table: a column per count of unseen tiles after the first rack, more spread more wins
    table = load_win_table(str(LEXICA_DIR / f"{name}.winpct.csv"))
    assert table.shape == (601, ld.total_tiles() - 6)
    assert np.all(np.diff(table[:, 40]) <= 1e-9) and table[0, 40] > 0.9 > 0.1 > table[600, 40]


def test_the_21x21_game_has_leaves_and_a_win_table_of_its_own():
    """SCOWL70 played on the 21x21 board (english_super) takes SCOWL70.english_super.klv2 and .winpct.csv."""
    if not (LEXICA_DIR / "SCOWL70.english_super.klv2").is_file():
        pytest.skip("no 21x21 leaves in this checkout")
    reg = LexiconRegistry(Settings.load())
    base = reg.get("SCOWL70")
    sup = reg.get("SCOWL70", "english_super")
    assert sup.layout == "standard21" and sup.klv is not None and sup.klv is not base.klv
    assert sup.winpct == LEXICA_DIR / "SCOWL70.english_super.winpct.csv" and sup.win_table().shape == (601, 194)
    assert base.for_layout("standard21") is sup
    # the 21x21 leaves value the tiles as the 200-tile game has them: a second blank is still good, a Q bad
    assert sup.klv.leave_value(bytes([0])) > 10_000 and sup.klv.leave_value(bytes([17])) < 0


def _legal_moves_in_self_play(lex, seed: int, turns: int) -> int:
    """Best-move self-play for some turns; at each, every generated placement (of a rack and of the same rack
    with a blank) is a legal play whose score is the rules' score. The number of placements checked."""
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    game = Game(lex.kwg, lex.ld, lex.new_board(), seed)
    game.fill_rack(0)
    game.fill_rack(1)
    rng = random.Random(seed)
    checked = 0
    for _ in range(turns):
        if game.game_over:
            break
        rack = game.rack(game.on_turn)
        for trial in (rack, rack[:-1] + [0]):
            gen.generate(game.board, trial, game.bag_size)
            places = [m for m in gen.moves() if m[0] == "place"]
            for _kind, row, col, vertical, tiles, score, *_ in rng.sample(places, min(len(places), 300)):
                err = play_error(game.board, lex.kwg, lex.ld, row, col, vertical, tiles)
                assert err is None, (err, row, col, vertical, lex.ld.word_str(tiles))
                assert score_play(game.board, lex.ld, row, col, vertical, tiles) == score
                checked += 1
        gen.generate(game.board, rack, game.bag_size, mode="best")
        kind, row, col, vertical, tiles, score = gen.moves()[0][:6]
        if kind == "place":
            game.play(kind, row, col, vertical, tiles, score)
        else:
            game.play(kind, tiles=tiles) if kind == "exchange" else game.play("pass")
    return checked


@pytest.mark.parametrize("name", _params(compiled=True))
def test_the_lexicon_loads_and_its_moves_are_legal(name):
    dist, _, must, _ = BUNDLED[name]
    reg = LexiconRegistry(Settings.load())
    assert name in reg.available() and reg.distribution_of(name) == dist
    lex = reg.get(name)
    assert lex.ld.name == dist and lex.layout == "standard15" and lex.source == f"{name}.txt.gz (compiled)"
    assert (lex.klv is not None) == (name in TRAINED)
    assert all(lex.is_word(w) for w in must) and not lex.is_word("QXZ")
    assert _legal_moves_in_self_play(lex, seed=11, turns=8) > 500


@pytest.mark.skipif(not (_present("DE_DEBIAN") and _present("NO_DEBIAN")), reason="DE_DEBIAN or NO_DEBIAN absent")
def test_a_record_in_a_bundled_language_replays_with_its_lexicon():
    """A game whose own lexicon is not at hand is replayed with the bundled one of its language (said in a
    warning), found from the files without compiling it."""
    reg = LexiconRegistry(Settings([LEXICA_DIR]))
    for pragma, name in (("#lexicon RD28", "DE_DEBIAN"), ("#tile-distribution norwegian", "NO_DEBIAN")):
        record = parse_gcg(f"#player1 a A\n#player2 b B\n{pragma}\n")
        got, warnings = lexicon_for_record(record, reg.available(), "SCOWL70", None, reg.distribution_of)
        assert got == name and f"lexicon {name}" in warnings[0]
