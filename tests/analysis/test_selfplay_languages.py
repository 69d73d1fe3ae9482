"""Self-play and leave training in other languages and on the 21x21 board: the games' records name their
distribution and board and replay to the games' final scores (in UTF-8 and in the Latin-1 legacy encoding),
in a tiny Catalan lexicon and in the peers' FRA20, DISC2 and CEL_super; a layout named for the run is the
board of its games, in-process and in the cluster's task; lexica of different distributions do not meet in
one run."""

from __future__ import annotations

from pathlib import Path

import pytest

from macondo_server.analysis.leavetrain import LeaveTrainer, TrainOptions
from macondo_server.analysis.selfplay import bots_from_options, run_autoplay
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import LexiconError, load_klv
from macondo_server.engine.replay import lexicon_for_record, replay_gcg
from macondo_server.engine.settings import Settings
from macondo_server.model.coords import parse_coord
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


@pytest.mark.parametrize("lexicon,distribution,layout", [
    ("FRA20", "french", "standard15"), ("DISC2", "catalan", "standard15"), ("CEL_super", "english_super", "standard21"),
])
def test_self_play_records_round_trip_in_the_peers_lexica(tmp_path, lexicon, distribution, layout):
    """A few games per language written as GCG: each record reads back with the GCG reader (in UTF-8, and in
    Latin-1 where the letters allow it), names its lexicon, distribution and board, and replays to the final
    scores the games ended with."""
    if not have_lexicon(lexicon):
        pytest.skip(f"shared {lexicon} absent")
    engine = Engine(shared_settings())
    bot1, bot2 = bots_from_options(engine, lexicon, None, None, None)
    assert (bot1.lexicon.ld.name, bot1.lexicon.layout) == (distribution, layout)
    out = tmp_path / "games"
    summary = run_autoplay(bot1, bot2, 3, seed=17, gcg_dir=str(out))
    assert summary.games == 3
    by_game = {r.index: r for r in summary.records}
    multi = beyond_15 = 0
    for path in sorted(out.glob("game-*.gcg")):
        played = by_game[int(path.stem.split("-")[1])]
        first = played.first_bot
        ended = (played.scores[first], played.scores[1 - first])      # by seat: the first mover's first
        record = read_gcg_file(str(path))
        assert record.pragma("lexicon") == lexicon and record.pragma("tile-distribution") == distribution
        assert (record.pragma("board-layout") or "CrosswordGame") == \
            {"standard15": "CrosswordGame", "standard21": "SuperCrosswordGame"}[layout]
        reg = engine.registry
        name, warnings = lexicon_for_record(record, reg.available(), "SCOWL70", None, reg.distribution_of)
        assert name == lexicon and not warnings
        res = replay_gcg(record, reg.get(name))
        assert res.game.game_over and not res.warnings and res.events_applied == len(record.events)
        assert (res.game.scores[0], res.game.scores[1]) == ended == _finals(path)
        if distribution != "english_super":                 # Latin-1 holds the French and Catalan letters
            assert _replayed(engine, path, latin1=True) == ended
        multi += sum(ev.word.count("[") + ev.rack.count("[") for ev in record.events)
        for ev in record.events:
            if ev.type == "play" and layout == "standard21":          # english words: a letter a square
                row, col, vertical = parse_coord(ev.position, 21)
                beyond_15 += max(row, col, (row if vertical else col) + len(ev.word) - 1) >= 15
    if distribution == "catalan":
        assert multi > 0                                    # L·L, NY or QU were drawn and played
    if layout == "standard21":
        assert beyond_15 > 0                                # plays beyond the 15x15 board's rows and columns


def test_self_play_on_a_layout_the_command_line_names(tmp_path):
    """A layout named for the run (here a file, made known to the engine's catalog) is the board of every game,
    in-process and in the cluster's task (which rebuilds the board from the source, not from a path); the
    records name it and replay on it. The 21x21 board gives an english lexicon the english_super tiles."""
    from macondo_server.analysis.selfplay import autoplay_task, bot_sources

    engine = Engine(shared_settings())
    layout = tmp_path / "plain.txt"
    layout.write_text("7, 7\n" + "." * 15 + "\n" + " \n" * 14)
    name = engine.registry.catalog.add_layout_file(layout)
    bot1, bot2 = bots_from_options(engine, None, None, None, None, layout=name)
    here = run_autoplay(bot1, bot2, 3, seed=2, gcg_dir=str(tmp_path / "here"), layout=name)
    sources = bot_sources(engine, None, None, None, None, layout=name)
    there = autoplay_task(sources, 2, False, ("bot1", "bot2"), [0, 1, 2], "layout-test")
    assert len(there) == 3
    for g, first, scores, bingos, turns, reason, gcg in there:
        rec = next(r for r in here.records if r.index == g)
        assert (first, scores, bingos, turns, reason) == (rec.first_bot, rec.scores, rec.bingos, rec.turns,
                                                          rec.end_reason)
        text = (tmp_path / "here" / f"game-{g:05d}.gcg").read_text(encoding="utf-8")
        assert gcg == text and "#board-layout plain\n" in text
        res = replay_gcg(parse_gcg(text), engine.registry.get())
        assert res.game.game_over and res.game.board.premium(0, 0) == (1, 1)
        assert (res.game.scores[0], res.game.scores[1]) == (scores[first], scores[1 - first])
    big1, big2 = bots_from_options(engine, None, None, None, None, layout="standard21")
    assert big1.lexicon.ld.name == big2.lexicon.ld.name == "english_super"
    summary = run_autoplay(big1, big2, 1, seed=3, gcg_dir=str(tmp_path / "big"), layout="standard21")
    record = read_gcg_file(str(next((tmp_path / "big").glob("*.gcg"))))
    assert record.pragma("board-layout") == "SuperCrosswordGame" and summary.turns_per_game > 20
    assert _replayed(engine, next((tmp_path / "big").glob("*.gcg")), latin1=False) == _finals(
        next((tmp_path / "big").glob("*.gcg")))
