from __future__ import annotations

import random

import pytest

from engine_cy import cross_set
from engine_cy.alphabet import LetterDistribution
from engine_cy.game import Game, GameError
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from engine_cy.movegen import MoveGen
from macondo_server.engine.replay import commit, game_from_position, replay_gcg
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import read_gcg_file

from conftest import CASES_DIR, load_cases, needs_cases
from helpers import enc

LD = LetterDistribution.english()
WORDS = ["AA", "AB", "AD", "AE", "AS", "BA", "BE", "DA", "DE", "ED", "ES", "RE", "ER", "SE", "TA", "AT", "IT", "TI",
         "ABS", "ADS", "BAD", "BED", "BES", "DAB", "ERA", "RED", "SEA", "SAD", "BEAD", "BEADS", "BARE", "DARE",
         "DEAR", "READ", "RATE", "TEAR", "SIT", "ITS", "TIS", "EAT", "TEA", "SET", "TIE", "TIES", "SITE", "RITE"]


def _small_game(seed):
    from engine_cy.board import Board

    kwg = Kwg(build_kwg(sorted({enc(w) for w in WORDS})))
    game = Game(kwg, LD, Board(), seed)
    game.fill_rack(0)
    game.fill_rack(1)
    return kwg, game


def _snapshot(game):
    b = game.board
    return (
        b.tiles_list(),
        [[(b.get_cross_set(r, c, d), b.get_cross_score(r, c, d)) for r in range(15) for c in range(15)]
         for d in (0, 1)],
        game.rack(0), game.rack(1), game.bag_list(), game.scores, game.on_turn, game.zeros_count,
        game.game_over, game.hash_key,
    )


@pytest.mark.parametrize("seed", range(6))
def test_play_undo_restores_exactly(seed):
    kwg, game = _small_game(seed)
    gen = MoveGen(kwg, LD, None)
    rng = random.Random(seed)
    total = [LD.count(i) for i in range(LD.size)]
    snaps = []
    for _ in range(40):
        if game.game_over:
            break
        assert game.tile_census() == total
        assert game.hash_key == game.recomputed_hash()
        snaps.append(_snapshot(game))
        gen.generate(game.board, game.rack(game.on_turn), game.bag_size)
        moves = gen.moves()
        kind, row, col, vertical, tiles, score = rng.choice(moves)[:6]
        if kind == "place":
            game.play("place", row, col, vertical, tiles, score)
        elif kind == "exchange":
            game.play("exchange", tiles=tiles)
        else:
            game.play("pass")
        # incremental cross-sets equal recomputed ones
        fresh = game.board.copy()
        cross_set.compute_all(fresh, kwg, LD)
        for r in range(15):
            for c in range(15):
                for d in (0, 1):
                    assert game.board.get_cross_set(r, c, d) == fresh.get_cross_set(r, c, d)
                    assert game.board.get_cross_score(r, c, d) == fresh.get_cross_score(r, c, d)
    assert game.tile_census() == total
    while snaps:
        game.undo()
        assert _snapshot(game) == snaps.pop()
    with pytest.raises(GameError):
        game.undo()


@pytest.mark.parametrize("seed", range(3))
def test_cross_sets_after_many_tries_equal_recomputed(registry, seed):
    # a game tries several plays at each turn and takes each back (as the searches do), so the cache of
    # letter sets by run of tiles serves most squares: every set and score equals a full recomputation
    from engine_cy.board import Board

    lex = registry.get("SCOWL70")
    game = Game(lex.kwg, lex.ld, Board(), seed)
    gen = MoveGen(lex.kwg, lex.ld, None)
    rng = random.Random(seed)
    checked = 0
    for _ in range(30):
        game.fill_rack(0)
        game.fill_rack(1)
        gen.generate(game.board, game.rack(game.on_turn), game.bag_size)
        places = [m[:6] for m in gen.moves() if m[0] == "place"]
        if not places:
            break
        for kind, row, col, vertical, tiles, score in rng.sample(places, min(6, len(places))):
            game.play(kind, row, col, vertical, tiles, score)
            fresh = game.board.copy()
            cross_set.compute_all(fresh, lex.kwg, lex.ld)
            for r in range(15):
                for c in range(15):
                    for d in (0, 1):
                        assert game.board.get_cross_set(r, c, d) == fresh.get_cross_set(r, c, d), (r, c, d)
                        assert game.board.get_cross_score(r, c, d) == fresh.get_cross_score(r, c, d)
            checked += 1
            game.undo()
        game.play(*places[0])
        if game.game_over:
            break
    assert checked > 60


def test_rules_going_out_and_zeros():
    kwg, game = _small_game(1)
    # six scoreless turns end the game; each side loses its own rack value
    r0, r1 = game.rack(0), game.rack(1)
    for _ in range(6):
        game.play("pass")
    v0 = sum(LD.score(t) for t in r0)
    v1 = sum(LD.score(t) for t in r1)
    assert game.game_over and game.end_reason_name == "consecutive_zeros" and game.scores == (-v0, -v1)
    with pytest.raises(GameError, match="over"):
        game.play("pass")
    game.undo()
    assert not game.game_over and game.zeros_count == 5
    # exchanges need 7 tiles in the bag
    game.set_rack(0, [1, 2])
    bag = game.bag_list()
    for _ in range(len(bag) - 3):
        game._bag_take(bag.pop())
    with pytest.raises(GameError, match="at least 7"):
        game.play("exchange", tiles=[1])


@needs_cases
def test_six_scoreless_rule_case(registry):
    (case,) = load_cases("rules")
    pos = parse_cgp(case["cgp"])
    lex = registry.get(case["lexicon"])
    game = game_from_position(pos, lex, seed=3)
    unseen = game.rack(0) + game.rack(1) + game.bag_list()
    assert len(unseen) == 2  # the bag holds 2 tiles; each player is given one
    game.set_rack(1, [])
    game.set_rack(0, [unseen[0]])
    game.set_rack(1, [unseen[1]])
    game.set_over(False)
    before = game.scores
    racks = [game.rack(0), game.rack(1)]
    game.play("pass")
    exp = case["expected"]["after_one_more_scoreless_turn"]
    assert game.zeros_count == exp["consecutive_scoreless_turns"]
    assert game.game_over == exp["game_over"] and game.end_reason_name == exp["end_reason"]
    for p in (0, 1):
        assert game.scores[p] == before[p] - sum(LD.score(t) for t in racks[p])


GCG_CASES = load_cases("gcg")


@needs_cases
@pytest.mark.parametrize("case", GCG_CASES, ids=[c["id"] for c in GCG_CASES])
def test_gcg_replay_cases(case, registry):
    record = read_gcg_file(str(CASES_DIR / case["params"]["gcg"]))
    lex = registry.get(case["lexicon"])
    result = replay_gcg(record, lex)
    exp = case["expected"]
    final = exp["final_scores"]
    if isinstance(final, dict):
        final = [final[nick] for nick, _ in record.players]
    assert list(result.game.scores) == final
    assert result.game.game_over
    states = exp.get("states_after_each_event") or exp.get("first_states") or []

    def key(cgp, with_scores):
        f = cgp.split()
        rack = sorted(f[1].split("/")[0])
        return (f[0], rack, f[2], f[3]) if with_scores else (f[0], rack)

    # states_after_each_event[0] is the start; entry i + 1 follows event i, seen by the player to move.
    # MAGPIE applies end-of-game rack adjustments as separate events, so scores are compared until then.
    for i, cgp in enumerate(states[1:]):
        if record.events[i].type not in ("play", "pass", "exchange", "phony_returned"):
            continue  # after the game is over MAGPIE and we name different players "on turn"
        ended = result.positions[i].zeros >= 6 or i >= len(record.events) - 2
        assert key(write_cgp(result.positions[i]), not ended) == key(cgp, not ended), i
    if "final_state" in exp:
        got = write_cgp(result.positions[-1]).split()
        assert (got[0], got[2]) == tuple(exp["final_state"].split()[i] for i in (0, 2))
    if "num_events" in exp:
        assert len(record.events) == exp["num_events"]
    if "end_rack_penalties" in exp:
        assert result.game.end_reason_name == "consecutive_zeros"


@needs_cases
def test_replay_to_turn_and_commit_tileorder(registry):
    record = read_gcg_file(str(CASES_DIR / "gcg" / "success_standard.gcg"))
    lex = registry.get("CSW21")
    res = replay_gcg(record, lex, turn=3)
    assert res.events_applied == 3 and not res.game.game_over
    assert write_cgp(res.positions[-1]).startswith("15/15/15/15/15/15/15/6ZA7/4CRoWDIE4/")
    # commit with a draw order: the mover draws the first tiles, the opponent holds the rest of the unseen
    pos = parse_cgp("12D2/1U10O2/1p10L2/1R1C3KANJIS2/1I1O3A2U4/1G1T3I2I4/1H1E3Z2C1LOO/1TED3E1BYWORD/2Q4N3AXE1/"
                    "1RuBIGOS3I3/F1A5WEAVE2/O1T8E3/V1E5LOURY2/ENSNARL2HM4/A6TEMP4 DEFNNPT/ 394/365 0 lex NWL20;")
    nwl = registry.get("NWL20")
    res2 = commit(pos, nwl, "2L P.ND", tileorder="IIIA")
    after = res2.position
    assert after.scores == (365, 394 + res2.score)
    # the mover (now second) drew I, I, I; A stays in the bag
    assert sorted(after.racks[1]) == sorted(LD.parse_rack("EFNTIII"))
    assert res2.bag == LD.parse_rack("A")
    with pytest.raises(ValueError, match="must have 4"):
        commit(pos, nwl, "2L P.ND", tileorder="III")
    with pytest.raises(ValueError, match="not among the unseen"):
        commit(pos, nwl, "2L P.ND", tileorder="ZZZZ")
    with pytest.raises(ValueError, match="illegal move|occupied"):
        commit(pos, nwl, "8A QQ")
