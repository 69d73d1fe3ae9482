"""The lexicon pruned to a board (engine_cy.prune) against independent readings: a brute-force lane check of
every word of the lexicon, move generation in the full lexicon along random continuations to the end of the
game, and endgame and pre-endgame solves with and without it (same values, same node counts)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine_cy.endgame import EndgameSolver
from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from engine_cy.prune import PRUNE_MAX_TILES, pruned_game, pruned_kwg, pruned_words, unplayed_counts
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.engine.replay import game_from_position
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.tiles import new_board

from conftest import have_lexicon, load_cases, needs_cases

# CSW21 (the largest word list) in the slow suite: the same checks take twice NWL20's time
LEXICA = ["SCOWL70"] + [n for n in ("NWL20",) if have_lexicon(n)] + \
    ([pytest.param("CSW21", marks=pytest.mark.slow)] if have_lexicon("CSW21") else [])


def _selfplay_until(lex, seed: int, bag_at_most: int) -> Game:
    """A self-play game (best static moves) up to the first turn with at most `bag_at_most` tiles in the bag."""
    g = Game(lex.kwg, lex.ld, new_board(), seed)
    g.fill_rack(0)
    g.fill_rack(1)
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    while g.bag_size > bag_at_most and not g.game_over:
        gen.generate(g.board, g.rack(g.on_turn), g.bag_size, None, mode="best")
        kind, row, col, vert, tiles, score = gen.moves()[0][:6]
        g.play(kind, row, col, vert, tiles, score)
    return g


def _lanes(g: Game) -> list[list[int]]:
    b = g.board
    dim = b.dim
    rows = [[b.tile(r, c) & 0x7F for c in range(dim)] for r in range(dim)]
    return rows + [[rows[r][c] for r in range(dim)] for c in range(dim)]


def _fits(word: bytes, counts: list[int], fixed: dict[int, int]) -> bool:
    """Whether the tiles of `word` outside the fixed positions can come from `counts` (a blank for any)."""
    need = Counter(ml for i, ml in enumerate(word) if i not in fixed)
    short = sum(max(0, n - counts[ml]) for ml, n in need.items())
    return short <= counts[0]


def _brute_force(g: Game, words: list[bytes]) -> set[bytes]:
    """The definition, read directly: a word is kept when it can lie along some lane of the board at squares
    that are either the lane's tiles (at least one of them, or else any run of empty squares no longer than the
    longest one of any lane) or empty squares filled from the unplayed tiles, with at least one tile placed
    and empty squares (or the edge) just before and after it."""
    counts = unplayed_counts(g)
    dim = g.board.dim
    max_run = 0
    # every placement window through a lane's tiles: (length, fixed squares), indexed by one fixed square
    windows: dict[tuple[int, int, int], set[tuple[tuple[int, int], ...]]] = {}
    for lane in _lanes(g):
        run = 0
        for x in lane:
            run = 0 if x else run + 1
            max_run = max(max_run, run)
        for s in range(dim):
            for e in range(s + 1, dim):
                if (s > 0 and lane[s - 1]) or (e + 1 < dim and lane[e + 1]):
                    continue
                fixed = tuple((i, lane[s + i]) for i in range(e - s + 1) if lane[s + i])
                if fixed and len(fixed) < e - s + 1:
                    i, t = fixed[0]
                    windows.setdefault((e - s + 1, i, t), set()).add(fixed)
    kept = set()
    for w in words:
        if len(w) <= max_run and _fits(w, counts, {}):
            kept.add(w)
            continue
        for i in range(len(w)):
            if any(all(w[j] == t for j, t in fixed) and _fits(w, counts, dict(fixed))
                   for fixed in windows.get((len(w), i, w[i]), ())):
                kept.add(w)
                break
    return kept


@pytest.mark.parametrize("lexicon", LEXICA)
def test_pruned_words_are_exactly_the_brute_force_reading(registry, lexicon):
    lex = registry.get(lexicon)
    all_words = lex.kwg.words()
    positions = ((11, 0), (12, 3), (13, 8)) if lexicon == "SCOWL70" else ((11, 0), (12, 3))
    for seed, bag in positions:
        g = _selfplay_until(lex, seed, bag)
        words = pruned_words(g)
        assert words == sorted(set(words))
        assert set(words) == _brute_force(g, all_words), (lexicon, seed)
        assert 0 < len(words) < len(all_words) // (10 if bag == 0 else 2)


def test_gaddag_listing_equals_the_walk_from_every_start(registry):
    # the words through the lanes' tiles come from a GADDAG walk from each run's first tile; the DAWG walk
    # from every start square lists the same words (positions with 0 to 8 tiles in the bag, blanks included)
    lex = registry.get("SCOWL70")
    blanks = 0
    for seed in range(12):
        g = _selfplay_until(lex, 300 + seed, (0, 2, 5, 8)[seed % 4])
        counts = unplayed_counts(g)
        blanks += counts[0]
        assert pruned_words(g, gaddag=True) == pruned_words(g, gaddag=False), seed
    assert blanks > 0


def _placements(gen: MoveGen, g: Game, player: int) -> set[tuple]:
    gen.generate(g.board, g.rack(player), g.bag_size, None, mode="all", sort=False)
    return {m[:6] for m in gen.moves() if m[0] == "place"}


@pytest.mark.parametrize("lexicon", LEXICA)
def test_pruned_lexicon_generates_the_same_moves_to_the_end_of_the_game(registry, lexicon):
    """Random continuations from late positions: at every turn, both players' placements in the pruned
    lexicon (on a board whose cross-sets it computed) are exactly those of the full lexicon."""
    lex = registry.get(lexicon)
    full = MoveGen(lex.kwg, lex.ld)
    rng = random.Random(5)
    turns = 0
    for seed, bag in ((21, 0), (22, 2), (23, 5), (24, 0), (25, 7), (26, 1), (27, 4), (28, 0)):
        g = _selfplay_until(lex, seed, bag)
        gp = pruned_game(g)
        assert gp.kwg is not lex.kwg and gp.hash_key == g.hash_key
        pruned = MoveGen(gp.kwg, lex.ld)
        while not g.game_over:
            for player in (0, 1):
                assert _placements(pruned, gp, player) == _placements(full, g, player)
            moves = sorted(_placements(full, g, g.on_turn))
            if moves:
                kind, row, col, vert, tiles, score = rng.choice(moves)
                g.play(kind, row, col, vert, tiles, score)
                gp.play(kind, row, col, vert, tiles, score)
            else:
                g.play("pass")
                gp.play("pass")
            assert gp.scores == g.scores and gp.rack(0) == g.rack(0) and gp.rack(1) == g.rack(1)
            turns += 1
    assert turns >= 40


def test_counts_are_checked(registry):
    lex = registry.get("SCOWL70")
    g = _selfplay_until(lex, 3, 0)
    with pytest.raises(ValueError, match="counts"):
        pruned_words(g, [1, 2, 3])
    with pytest.raises(ValueError, match="counts"):
        pruned_words(g, [-1] * lex.ld.size)
    # no tiles left to place: no word can be formed
    assert pruned_words(g, [0] * lex.ld.size) == []
    with pytest.raises(ValueError):
        g.with_lexicon(lex.klv.kwg)        # a leave graph has no GADDAG


def test_tiles_in_play_are_the_racks_and_the_bag(registry):
    """What can still be placed is what the racks and the bag hold (a position whose bag was emptied by hand
    prunes to its racks); with more than PRUNE_MAX_TILES tiles in play the full lexicon is kept."""
    lex = registry.get("SCOWL70")
    g = _selfplay_until(lex, 4, 60)
    assert sum(unplayed_counts(g)) == len(g.rack(0)) + len(g.rack(1)) + g.bag_size > PRUNE_MAX_TILES
    assert pruned_kwg(g) is lex.kwg
    g.discard_bag()
    counts = unplayed_counts(g)
    assert sum(counts) == len(g.rack(0)) + len(g.rack(1)) <= 14
    assert all(counts[ml] == g.rack(0).count(ml) + g.rack(1).count(ml) for ml in range(lex.ld.size))
    assert pruned_kwg(g) is not lex.kwg


@pytest.mark.parametrize("lexicon", LEXICA)
def test_endgame_with_and_without_pruning(registry, lexicon):
    lex = registry.get(lexicon)
    for seed in (31, 32, 33):
        g = _selfplay_until(lex, seed, 0)
        if g.game_over:
            continue
        results = []
        for prune in (True, False):
            s = EndgameSolver(lex.kwg, lex.ld, 16)
            r = s.solve(g, 3, prune=prune, heuristics=True)
            results.append((r["value"], r["nodes"], r["line"], r["estimated"]))
        assert results[0] == results[1], seed


@needs_cases
def test_endgame_cases_with_and_without_pruning(registry):
    for case in load_cases("endgame"):
        if not have_lexicon(case["lexicon"]):
            continue
        lex = registry.get(case["lexicon"])
        g = game_from_position(parse_cgp(case["cgp"], lex.ld), lex)
        assert len(pruned_kwg(g).words()) < len(lex.kwg.words()) // 100
        results = []
        for prune in (True, False):
            r = EndgameSolver(lex.kwg, lex.ld, 16).solve(g, 3, prune=prune, heuristics=False)
            results.append((r["value"], r["nodes"], r["line"]))
        assert results[0] == results[1], case["id"]


@needs_cases
def test_peg_with_and_without_pruning(engine):
    case = next((c for c in load_cases("peg") if c["id"] == "peg-onyx-nwl20"), None)
    if case is None or not have_lexicon(case["lexicon"]):
        pytest.skip("the ONYX case or NWL20 is absent")
    outs = []
    for prune in (True, False):
        opts = PegOptions(endgame_plies=3, threads=1, prune_lexicon=prune)
        res = PegJob(engine, parse_cgp(case["cgp"]), opts).run()
        assert res.complete
        outs.append([(p.text, p.points, [(g.label, g.outcome) for g in p.groups]) for p in res.plays])
    assert outs[0] == outs[1]
    assert outs[0][0][:2] == ("13L ONYX", 7.5)
