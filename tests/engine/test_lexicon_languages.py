"""A lexicon knows its letter distribution (declared beside it, else implied by its name), a game may play it
with another of the same language, and word graphs or leave files that do not fit are refused; games in other
languages replay (the Polish tournament game of the shared cases), and the peers' lexica (FRA20, DISC2,
CEL_super) load as they are."""

from __future__ import annotations

import json

import pytest

from engine_cy.klv import write_klv2
from engine_cy.kwg_build import build_kwg
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import LexiconError, LexiconRegistry
from macondo_server.engine.replay import lexicon_for_record, record_setup, replay_gcg
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.gcg import parse_gcg, read_gcg_file
from macondo_server.model.text import FormatError

from conftest import CASES_DIR, have_lexicon

POLISH_GAME = CASES_DIR / "languages" / "macondo_polish_endgame.gcg"
LANG_CASES = CASES_DIR / "languages.jsonl"
needs_shared = {name: pytest.mark.skipif(not have_lexicon(name), reason=f"shared {name} absent")
                for name in ("FRA20", "DISC2", "CEL_super", "NWL20")}


def _registry(tmp_path, files: dict[str, str | bytes]) -> LexiconRegistry:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return LexiconRegistry(Settings.load(str(tmp_path)))


def test_a_lexicon_finds_its_distribution(tmp_path):
    reg = _registry(tmp_path, {
        "OSPSTINY.txt": "ŻAŁ\nABA\n",             # the name implies polish
        "WORTE.txt": "ÄRA\nAB\n",                 # no name convention: declared beside it
        "WORTE.distribution": "german\n",
        "PLAIN.txt": "QI\nZA\n",                   # neither: english
    })
    polish = reg.get("OSPSTINY")
    assert polish.ld.name == "polish" and polish.is_word("żał") and not polish.is_word("ZA")
    assert reg.get("WORTE").ld.name == "german" and reg.get("WORTE").is_word("ÄRA")
    assert reg.get("PLAIN").ld.name == "english" and reg.get("PLAIN").own_distribution is None
    assert reg.distribution_of("OSPSTINY") == "polish" and reg.distribution_of("WORTE") == "german"
    # another distribution of the same language, or of any language for a lexicon whose own is not known
    assert reg.get("PLAIN", "english_super").ld.name == "english_super"
    assert reg.get("PLAIN", "english_super") is reg.get("PLAIN", "english_super")
    with pytest.raises(LexiconError, match="lexicon OSPSTINY is for the polish letter distribution; it cannot be "
                                           "played with english"):
        reg.get("OSPSTINY", "english")
    with pytest.raises(LexiconError, match="unknown letter distribution 'klingon'"):
        reg.get("PLAIN", "klingon")


def test_word_graphs_and_leaves_that_do_not_fit_are_refused(tmp_path):
    catalan_word = bytes([1, 13, 1])                                # A L·L A
    german_word = bytes([1, 29, 1])                                 # A Z A (german tile 29)
    bad_leave = write_klv2([([4, 4], 1.0)])                         # two Ç: catalan has one
    reg = _registry(tmp_path, {
        "NWLGERMAN.kwg": build_kwg([german_word], gaddag=True),     # implies english: 27 tiles
        "DISCX.kwg": build_kwg([catalan_word], gaddag=True),
        "DISCX.klv2": bad_leave,
        "BROKEN.txt": "AB\n",
        "BROKEN.distribution": "../etc\n",
    })
    with pytest.raises(LexiconError, match="NWLGERMAN.kwg: its words use tile 29 but the english distribution has "
                                           "tiles 1 to 26") as info:
        reg.get("NWLGERMAN")
    assert "\n" not in str(info.value)
    with pytest.raises(LexiconError, match="DISCX.klv2: KLV leave ÇÇ holds 2 Ç but the 'catalan' distribution has 1"):
        reg.get("DISCX")
    with pytest.raises(LexiconError, match="invalid BROKEN.distribution: letter distribution name"):
        reg.get("BROKEN")


def test_positions_use_the_lexicon_with_their_distribution(tmp_path):
    engine = Engine(Settings.load(str(tmp_path)))
    (tmp_path / "DISCTINY.txt").write_text("AL·LA\n[QU]E\nANY\n", encoding="utf-8")
    pos = parse_cgp("/".join(["15"] * 15) + " AL·L?QUE/ 0/0 0 lex DISCTINY;", catalog=engine.registry.catalog)
    assert pos.ld.name == "catalan"
    res = engine.generate(pos)
    shown = [engine.describe(m, pos) for m in res.moves]
    assert "[L·L]" in shown[0] and any("[QU]E" in s or "[qu]E" in s for s in shown)
    assert all(m.tiles_played >= 2 for m in res.moves if m.move.kind == "place")
    english = parse_cgp("/".join(["15"] * 15) + " AEI/ 0/0 0 lex DISCTINY; ld english;")
    with pytest.raises(LexiconError, match="lexicon DISCTINY is for the catalan letter distribution"):
        engine.generate(english)


@pytest.mark.skipif(not POLISH_GAME.is_file(), reason="shared Polish game absent")
def test_the_polish_tournament_game_replays(tmp_path):
    """Every score of the game (non-ASCII tiles, blanks, exchanges, the end-of-game rack) agrees with the
    engine's: the words are not checked on import, so a two-word Polish lexicon replays it."""
    reg = _registry(tmp_path, {"OSPSTINY.txt": "ABA\n"})
    record = read_gcg_file(str(POLISH_GAME))
    with pytest.raises(FormatError, match="not in the english letter distribution"):
        replay_gcg(record, reg.get(lexicon_for_record(record, reg.available(), "SCOWL70")[0]))
    res = replay_gcg(record, reg.get("OSPSTINY"))
    assert res.events_applied == len(record.events) == 53
    assert res.game.game_over and res.game.scores == (316, 323) and not res.warnings
    assert res.positions[0].ld.name == "polish"


@needs_shared["FRA20"]
@needs_shared["DISC2"]
def test_the_peers_lexica_load_as_they_are(registry):
    fra, disc = registry.get("FRA20"), registry.get("DISC2")
    assert (fra.ld.name, disc.ld.name) == ("french", "catalan") and fra.klv is not None and disc.klv is not None
    assert fra.is_word("ZYTHUMS") is fra.kwg.contains(bytes(fra.ld.parse_word("ZYTHUMS")))
    assert disc.is_word("AL·LOQUIMIQUES") and disc.is_word("abaden[qu]es") and not disc.is_word("ABADENES")
    with pytest.raises(LexiconError, match="FRA20 is for the french letter distribution"):
        registry.get("FRA20", "catalan")


@needs_shared["CEL_super"]
def test_the_super_board_opening(engine):
    """MAGPIE's 21x21 opening case: IONIZED from an empty board plays 11K for 104."""
    case = {"rack": "IONIZED", "top_move": "11K IONIZED", "score": 104}
    if LANG_CASES.is_file():
        for line in LANG_CASES.read_text(encoding="utf-8").splitlines():
            c = json.loads(line)
            if c["id"] == "magpie_super_opening_IONIZED":
                case = {"rack": c["input"]["rack"], "top_move": c["expect"]["top_move"].rsplit(" ", 1)[0],
                        "score": c["expect"]["score"]}
    pos = parse_cgp("/".join(["21"] * 21) + f" {case['rack']}/ 0/0 0 lex CEL_super;")
    res = engine.generate(pos, n=1)
    top = res.moves[0]
    assert (engine.describe(top, pos), top.score) == (case["top_move"], case["score"])


@needs_shared["NWL20"]
@needs_shared["DISC2"]
def test_a_record_in_another_language_finds_a_lexicon_of_it(registry):
    record = parse_gcg("#player1 a A\n#player2 b B\n#tile-distribution catalan\n>a: AEIRSTU 8D ARQUE +12 12\n")
    name, warnings = lexicon_for_record(record, registry.available(), "NWL20", None, registry.distribution_of)
    assert name == "DISC2" and "catalan lexicon DISC2" in warnings[0]
    lex, layout = record_setup(parse_gcg("#player1 a A\n#player2 b B\n#board-layout SuperCrosswordGame\n"),
                               registry.get("NWL20"))
    assert (lex.ld.name, layout) == ("english_super", "standard21")
    with pytest.raises(FormatError, match="GCG #tile-distribution: lexicon NWL20 is for the english"):
        record_setup(record, registry.get("NWL20"))


def test_the_board_of_a_lexicon_without_loading_it(tmp_path):
    reg = _registry(tmp_path, {
        "OSPSTINY.txt": "ŻAŁ\n",                     # the name implies polish
        "WORTE.txt": "ÄRA\n", "WORTE.distribution": "german\n",
        "BIG_super.txt": "QI\n", "BIG_super.distribution": "english_super\n",
        "PLAIN.txt": "QI\n",
        "BROKEN.txt": "QI\n", "BROKEN.distribution": "english/../french\n",
    })
    assert reg.board_of("OSPSTINY") == ("polish", "standard15")
    assert reg.board_of("WORTE") == ("german", "standard15")
    assert reg.board_of("BIG_super") == ("english_super", "standard21")
    assert reg.board_of("PLAIN") == ("english", "standard15")
    assert reg.board_of("BROKEN") == ("", "")          # said when the lexicon is used
    with pytest.raises(LexiconError, match="BROKEN"):
        reg.get("BROKEN")
