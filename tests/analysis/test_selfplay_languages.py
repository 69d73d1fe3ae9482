"""Self-play and leave training in other languages and on the 21x21 board: the games' records name their
distribution and board and replay (in UTF-8 and in the Latin-1 legacy encoding); lexica of different
distributions do not meet in one run."""

from __future__ import annotations

from pathlib import Path

import pytest

from macondo_server.analysis.leavetrain import LeaveTrainer, TrainOptions
from macondo_server.analysis.selfplay import bots_from_options, run_autoplay
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import LexiconError, load_klv
from macondo_server.engine.replay import lexicon_for_record, replay_gcg
from macondo_server.engine.settings import Settings
from macondo_server.model.gcg import decode_gcg, parse_gcg, read_gcg_file

from conftest import have_lexicon, shared_settings

CATALAN_WORDS = "AL·LA\nAL·LES\n[QU]E\n[QU]ES\nANY\nANYS\nES\nSE\nAS\nSA\nLA\nLES\nELS\nSAL·LA\nNYA\nNYAS\nCASA\nCAS\n"


def _replayed(engine: Engine, path: Path, latin1: bool) -> tuple[int, int]:
    text = path.read_text(encoding="utf-8")
    if latin1:
        data = text.replace("#character-encoding UTF-8\n", "").encode("iso-8859-1")
        record = parse_gcg(decode_gcg(data))
    else:
        record = read_gcg_file(str(path))
    reg = engine.registry
    name, _ = lexicon_for_record(record, reg.available(), "SCOWL70", None, reg.distribution_of)
    res = replay_gcg(record, reg.get(name))
    assert res.game.game_over
    s = res.game.scores
    return s[0], s[1]


def _finals(path: Path) -> tuple[int, int]:
    record = read_gcg_file(str(path))
    last: dict[str, int] = {}
    for ev in record.events:
        last[ev.nick] = ev.cumulative
    return last[record.players[0][0]], last[record.players[1][0]]


def test_catalan_self_play_records_replay(tmp_path):
    (tmp_path / "DISCTINY.txt").write_text(CATALAN_WORDS, encoding="utf-8")
    engine = Engine(Settings.load(str(tmp_path)))
    bot1, bot2 = bots_from_options(engine, "DISCTINY", None, None, None)
    assert bot1.lexicon.ld.name == "catalan"
    out = tmp_path / "games"
    summary = run_autoplay(bot1, bot2, 6, seed=3, gcg_dir=str(out))
    assert summary.games == 6
    multi = 0
    for path in sorted(out.glob("*.gcg")):
        record = read_gcg_file(str(path))
        assert record.pragma("tile-distribution") == "catalan" and record.pragma("lexicon") == "DISCTINY"
        multi += sum(1 for ev in record.events if "[" in ev.word or "[" in ev.rack)
        assert _replayed(engine, path, latin1=False) == _replayed(engine, path, latin1=True) == _finals(path)
    assert multi > 0


@pytest.mark.skipif(not have_lexicon("CEL_super"), reason="shared CEL_super absent")
def test_super_board_self_play(tmp_path):
    engine = Engine(shared_settings())
    bot1, bot2 = bots_from_options(engine, "CEL_super", None, None, None)
    assert (bot1.lexicon.ld.name, bot1.lexicon.layout) == ("english_super", "standard21")
    out = tmp_path / "games"
    summary = run_autoplay(bot1, bot2, 2, seed=5, gcg_dir=str(out))
    assert summary.games == 2 and summary.turns_per_game > 20      # 200 tiles: longer games than on 15x15
    for path in sorted(out.glob("*.gcg")):
        record = read_gcg_file(str(path))
        assert record.pragma("board-layout") == "SuperCrosswordGame"
        assert _replayed(engine, path, latin1=False) == _finals(path)


@pytest.mark.skipif(not (have_lexicon("NWL20") and have_lexicon("DISC2")), reason="shared NWL20/DISC2 absent")
def test_lexica_of_different_distributions_do_not_meet():
    engine = Engine(shared_settings())
    with pytest.raises(LexiconError, match="lexica NWL20 \\(english\\) and DISC2 \\(catalan\\) have different letter "
                                           "distributions"):
        bots_from_options(engine, "NWL20", None, "DISC2", None)
    with pytest.raises(LexiconError, match="NWL20 is for the english letter distribution; it cannot be played with "
                                           "german"):
        bots_from_options(engine, "NWL20", None, "CSW21", None, distribution="german")
    bot1, bot2 = bots_from_options(engine, "NWL20", None, "NWL20", None, distribution="english_super")
    assert bot1.lexicon.ld.name == bot2.lexicon.ld.name == "english_super"


def test_leave_training_in_catalan(tmp_path):
    (tmp_path / "DISCTINY.txt").write_text(CATALAN_WORDS, encoding="utf-8")
    engine = Engine(Settings.load(str(tmp_path)))
    lex = engine.lexicon("DISCTINY")
    out = tmp_path / "train"
    opts = TrainOptions(lexicon=lex.name, rounds=1, games=24, seed=7, forced=0.5, prior=4.0)
    LeaveTrainer(lex, opts, out, workers=1).run()
    klv = load_klv(next(out.glob("round-*.klv2")), "", lex.ld)     # fits the catalan distribution
    items = klv.items()
    qu = lex.ld.letter_ml("QU")
    assert any(qu in leave for leave, _ in items) and any(value != 0 for _, value in items)


@pytest.mark.skipif(not have_lexicon("CEL_super"), reason="shared CEL_super absent")
def test_a_simulation_on_the_super_board():
    """193 unseen tiles after the first rack of the 200-tile game: the simulation draws from all of them."""
    from macondo_server.analysis.sim import SimJob, SimOptions
    from macondo_server.model.cgp import parse_cgp

    engine = Engine(shared_settings())
    pos = parse_cgp("/".join(["21"] * 21) + " AEINRST/ 0/0 0 lex CEL_super;")
    res = SimJob(engine, pos, SimOptions(plies=2, num_plays=3, iterations=20, threads=1, seed=1)).run()
    assert res.iterations == 20 and res.plays and all(p.n == 20 for p in res.plays)
    assert all(p.text.startswith(("11", "K")) or p.text.startswith("exch") for p in res.plays)
