"""The engine as a player: strategies and levels, the per-move time budget, the vocabularies of the weaker
levels (checked word by word against the moves they make), and the choice in each phase against the solvers
run on their own."""

from __future__ import annotations

import math
import re

import pytest

from engine_cy.game import Game
from engine_cy.rules import formed_words
from macondo_server.analysis.endgame import EndgameJob, EndgameOptions
from macondo_server.analysis.player import (
    CHOICES,
    LEVELS,
    PANIC_SECONDS,
    Strategy,
    Turn,
    choose,
    expected_turns,
    parse_strategy,
    phase_of,
    plan_budget,
)
from macondo_server.analysis.vocabulary import Vocabulary, known_words, vocabulary_kwg, word_log_probability
from macondo_server.engine.replay import play_move, position_from_game

from conftest import needs_nwl20


def test_parse_strategy_kinds_levels_and_options() -> None:
    assert parse_strategy("") == Strategy("static")
    assert parse_strategy("static").kind == "static"
    best = parse_strategy("best")
    assert best.kind == "best" and best.peg >= 1 and best.endgame_plies is None
    assert parse_strategy("champion").kind == "best"
    assert parse_strategy("expert") == LEVELS["expert"]
    st = parse_strategy("best:peg=4,max_time=2.5,stop=z,confidence=0.99,infer=1,threads=2")
    assert (st.peg, st.max_time, st.stop_rule, st.confidence, st.infer, st.threads) == (4, 2.5, "z", 0.99, True, 2)
    sim = parse_strategy("sim:iterations=300,plies=3")
    assert (sim.kind, sim.iterations, sim.plies, sim.peg) == ("sim", 300, 3, 0)


@pytest.mark.parametrize("text, words", [
    ("nosuch", CHOICES),
    ("best:peg=7", "peg must be 0 to 6"),
    ("best:plies=x", "not a whole number"),
    ("best:frobs=2", "expected one of"),
    ("best:stop=maybe", "not one of bai, z, none"),
    ("best:peg=2,peg=3", "given twice"),
    ("static:plies=2", "takes no options"),
    ("club:noise=1", "takes no options"),
    ("sim:peg=2", "best:peg=N"),
    ("best:max_time=-1", "not a number"),
    ("x" * 300, "longer than 256"),
])
def test_bad_strategies_name_the_problem(text: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_strategy(text)
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_phase_by_bag() -> None:
    best = parse_strategy("best:peg=3")
    assert [phase_of(best, b) for b in (0, 1, 3, 4, 80)] == ["endgame", "pre-endgame", "pre-endgame", "sim", "sim"]
    assert [phase_of(parse_strategy("sim"), b) for b in (0, 2, 50)] == ["endgame", "sim", "sim"]
    assert phase_of(parse_strategy("club"), 0) == "static"


def test_budget_from_the_clock_shares_the_time_left() -> None:
    st = parse_strategy("best:peg=2")
    clock = 600.0
    # from the opening, the planned shares of every turn to come fit in the usable time
    turns = expected_turns(86, st.peg)
    b = plan_budget(st, "sim", 86, clock)
    assert b.source == "clock"
    planned = sum(n * plan_budget(st, phase, 86, clock).seconds for phase, n in turns.items())
    assert clock * 0.9 < planned < clock
    # the pre-endgame gets more than a turn of simulation; an undecided simulation may run over, never past
    # half the clock
    assert plan_budget(st, "pre-endgame", 2, clock).seconds > plan_budget(st, "sim", 2, clock).seconds
    assert b.seconds < b.limit <= clock / 2
    # less clock, less time; a fixed max_time wins over the clock but never takes it all
    assert plan_budget(st, "sim", 40, 60.0).seconds < plan_budget(st, "sim", 40, 600.0).seconds
    fixed = plan_budget(parse_strategy("best:max_time=5"), "sim", 40, 3.0)
    assert fixed.source == "max_time" and fixed.limit <= 3.0 - 1.0 + 1e-9
    # untimed: the phase's default
    assert plan_budget(st, "endgame", 0, None).source == "default"


def test_word_probability_is_the_draw_of_the_letters(engine) -> None:
    lex = engine.lexicon("NWL20") if "NWL20" in engine.registry.available() else engine.lexicon()
    ld = lex.ld
    counts = [ld.count(t) for t in range(ld.size)]
    # QI: one Q of 1, one I of 9; ZZZ needs blanks in any standard bag
    q, i, z = ld.letter_ml("Q"), ld.letter_ml("I"), ld.letter_ml("Z")
    assert math.isclose(word_log_probability(bytes([q, i]), counts), math.log(counts[q] * counts[i]))
    assert word_log_probability(bytes([z, z, z]), counts) == -math.inf


@needs_nwl20
def test_vocabulary_keeps_the_most_probable_fraction(engine) -> None:
    lex = engine.lexicon("NWL20")
    vocab = Vocabulary("test", ((2, 0.5), (3, 0.2)))
    words = known_words(lex, vocab)
    all_words = list(lex.kwg.words())
    n2 = sum(len(w) == 2 for w in all_words)
    n3 = sum(len(w) == 3 for w in all_words)
    assert sum(len(w) == 2 for w in words) == math.ceil(0.5 * n2)
    assert sum(len(w) == 3 for w in words) == math.ceil(0.2 * n3)
    assert all(len(w) in (2, 3) for w in words)
    counts = [lex.ld.count(t) for t in range(lex.ld.size)]
    kept2 = {w for w in words if len(w) == 2}
    worst_kept = min(word_log_probability(w, counts) for w in kept2)
    best_left = max(word_log_probability(bytes(w), counts) for w in all_words if len(w) == 2 and bytes(w) not in kept2)
    assert worst_kept >= best_left


@needs_nwl20
@pytest.mark.parametrize("level", ["beginner", "novice", "club"])
def test_a_level_plays_only_words_it_knows(engine, level: str) -> None:
    """Every word each move of a level forms (main and cross words) is in its vocabulary, over whole games."""
    lex = engine.lexicon("NWL20")
    st = LEVELS[level]
    assert st.vocabulary is not None
    known = vocabulary_kwg(lex, st.vocabulary)
    placements = 0
    for seed in range(3):
        game = Game(lex.kwg, lex.ld, lex.new_board(), 100 + seed, 50, 6)
        game.fill_rack(0)
        game.fill_rack(1)
        while not game.game_over:
            move = choose(engine, game, lex, st).move
            if move.kind == "place":
                placements += 1
                for w in formed_words(game.board, move.row, move.col, move.vertical, list(move.tiles)):
                    assert known.contains(w), lex.ld.word_str(list(w))
            play_move(game, move)
    assert placements > 20


@needs_nwl20
def test_the_endgame_choice_is_the_solvers(engine) -> None:
    lex = engine.lexicon("NWL20")
    # an endgame solved exactly in about 1.5 s (7 tiles against 5)
    game = _played_until(engine, lex, seed=1, bag_at_most=0)
    pos = position_from_game(game, {"lex": lex.name}, show_opponent=True)
    solved = EndgameJob(engine, pos, EndgameOptions(threads=1, max_time=30)).run()
    assert solved.solved
    choice = choose(engine, game, lex, parse_strategy("best:max_time=30"))
    assert choice.phase == "endgame" and "exact" in choice.detail, choice.detail
    assert choice.move == solved.best_move.move or f"{solved.value:+d}" in choice.detail


@needs_nwl20
def test_each_phase_is_used_and_the_clock_is_respected(engine) -> None:
    lex = engine.lexicon("NWL20")
    st = parse_strategy("best:peg=1")
    seen = set()
    for seed, bag in ((5, 40), (6, 1), (7, 0)):
        game = _played_until(engine, lex, seed=seed, bag_at_most=bag)
        choice = choose(engine, game, lex, st, Turn(clock=8.0))
        seen.add(choice.phase)
        assert choice.seconds <= 8.0 / 2 + 1.0, (choice.phase, choice.seconds)
        assert choice.move.kind in ("place", "exchange", "pass")
    assert {"sim", "endgame"} <= seen
    # almost no time left: the static play, at once
    game = _played_until(engine, lex, seed=5, bag_at_most=40)
    hurried = choose(engine, game, lex, st, Turn(clock=PANIC_SECONDS / 2))
    assert hurried.seconds < 1.0 and "static play" in hurried.detail


def _played_until(engine, lex, seed: int, bag_at_most: int) -> Game:
    game = Game(lex.kwg, lex.ld, lex.new_board(), seed, 50, 6)
    game.fill_rack(0)
    game.fill_rack(1)
    expert = LEVELS["expert"]
    while not game.game_over and game.bag_size > bag_at_most:
        play_move(game, choose(engine, game, lex, expert).move)
    assert not game.game_over
    return game


@needs_nwl20
def test_too_little_time_for_a_pre_endgame_simulates(engine) -> None:
    lex = engine.lexicon("NWL20")
    game = _played_until(engine, lex, seed=6, bag_at_most=2)
    assert 1 <= game.bag_size <= 2
    quick = choose(engine, game, lex, parse_strategy("best:peg=2,max_time=0.5"))
    assert quick.phase == "sim" and quick.seconds < 0.5 + 1.0
    solved = choose(engine, game, lex, parse_strategy("best:peg=2,max_time=5"))
    assert solved.phase == "pre-endgame"


def _judged_play(name: str, quick: list[int | None], cut_off: bool = False):
    from macondo_server.analysis.peg.draws import DrawGroup
    from macondo_server.analysis.peg.result import PegPlay
    from macondo_server.model.move import Move

    p = PegPlay(Move("pass"), name, name, 0, 0, False,
                [DrawGroup(f"[{name}{i}]", (i,), 1) for i in range(len(quick))], cut_off=cut_off)
    for g, q in zip(p.groups, quick, strict=True):
        if q is not None:
            p.record_quick(g, q)
    return p


def test_an_unfinished_quick_pass_names_the_best_play_it_judged() -> None:
    from macondo_server.analysis.peg.options import LOSS, WIN
    from macondo_server.analysis.peg.result import PegResult
    from macondo_server.analysis.player import _best_judged

    plays = [_judged_play("A", [WIN, LOSS, LOSS]), _judged_play("B", [WIN, WIN, LOSS]),
             _judged_play("C", [WIN, WIN, LOSS]), _judged_play("D", [WIN, WIN, None]),
             _judged_play("E", [WIN, WIN, WIN], cut_off=True)]
    res = PegResult(plays=plays[::-1], total_permutations=3, endgames=0, nested_calls=0, seconds=1.0, done_jobs=0,
                    total_jobs=15, complete=False, finished=False, stop_reason="time limit")
    # D is not judged on every draw and E is cut off; B and C tie, and B is first by static equity
    choice = _best_judged(res, ["A", "B", "C", "D", "E"])
    assert choice is not None and choice.phase == "pre-endgame"
    assert choice.detail.startswith("B: best at the quick pass of the 3 plays it judged on every draw (of 5")
    assert "2 of 3" in choice.detail and choice.detail.endswith("(time limit)")
    nothing = PegResult(plays=[_judged_play("D", [WIN, None])], total_permutations=2, endgames=0, nested_calls=0,
                        seconds=1.0, done_jobs=0, total_jobs=2, complete=False)
    assert _best_judged(nothing, ["D"]) is None


@needs_nwl20
def test_a_large_bag_pre_endgame_plays_within_its_budget(engine) -> None:
    # 3 in the bag and over 5,000 plays: far more draw groups than 3 s allows; the player still uses its budget
    # and no more, and plays the best of the plays its quick pass judged rather than the static play (about 100
    # of them on a quiet machine, so the margin holds on a slower one)
    lex = engine.lexicon("NWL20")
    game = _played_until(engine, lex, seed=8, bag_at_most=4)
    assert 3 <= game.bag_size <= 4, game.bag_size
    choice = choose(engine, game, lex, parse_strategy("best:peg=6,max_time=3,threads=1"))
    assert choice.phase == "pre-endgame"
    assert choice.seconds < 3.0 + 0.5, choice.seconds
    judged = re.search(r"best at the quick pass of the (\d+) plays it judged on every draw", choice.detail)
    assert judged is not None and int(judged.group(1)) >= 2, choice.detail
