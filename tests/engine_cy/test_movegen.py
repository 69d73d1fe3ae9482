from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from engine_cy.alphabet import ENGLISH_CSV, LetterDistribution
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from engine_cy.movegen import MoveGen
from engine_cy.rules import formed_words, score_play
from macondo_server.engine.facade import Engine, bag_for_mover
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.tiles import new_board

from conftest import CASES_DIR, load_cases, needs_cases
from helpers import brute_force_moves, enc

LD = LetterDistribution.english()


def _gen(registry, case, rack=None, bag=None, klv=None, bb=50):
    lex = registry.get(case["lexicon"])
    pos = parse_cgp(case["cgp"], check_counts=False)
    rack = LD.parse_rack(case.get("rack") or "") if rack is None else rack
    if not rack:
        rack = pos.racks[0]
    if bag is None:
        unseen = sum(pos.bag_counts()) + len(pos.racks[0]) - len(rack)
        bag = unseen
        if case["params"].get("opponent_draws_full_rack_before_gen"):
            bag = max(0, unseen - 7)
    gen = MoveGen(lex.kwg, lex.ld, klv if klv is not None else lex.klv, bingo_bonus=bb)
    gen.generate(pos.board, rack, bag)
    return pos, gen


def _table(pos, m):
    kind, row, col, vertical, tiles = m[:5]
    return format_move(Move(kind, row, col, vertical, tiles), LD, pos.board, style="table").strip()


MOVEGEN = load_cases("movegen")


@needs_cases
@pytest.mark.parametrize("case", MOVEGEN, ids=[c["id"] for c in MOVEGEN])
def test_movegen_cases(case, registry):
    pos, gen = _gen(registry, case)
    placements, exchanges, passes = gen.counts()
    exp = case["expected"]
    if "scoring_moves" in exp:
        assert placements == exp["scoring_moves"]
    if "exchanges" in exp:
        assert exchanges == exp["exchanges"]
    if "nonscoring_moves_incl_pass" in exp:
        assert exchanges + passes == exp["nonscoring_moves_incl_pass"]
    if "total_moves" in exp:
        assert placements + exchanges + passes == exp["total_moves"]
    moves = gen.moves()
    if "top10_scores_desc" in exp:
        assert sorted((m[5] for m in moves if m[0] == "place"), reverse=True)[:10] == exp["top10_scores_desc"]
    if "only_move" in exp:
        assert len(moves) == 1 and moves[0][0] == exp["only_move"]
    if "moves_in_order" in exp:
        got = []
        for m in moves:
            text = _table(pos, m)
            got.append(text if m[0] != "place" else f"{text} {m[5]}")
        assert got == [s if not s.startswith("pass") else "(Pass)" for s in exp["moves_in_order"]]


ROWGEN = load_cases("movegen_row")


@needs_cases
@pytest.mark.parametrize("case", ROWGEN, ids=[c["id"] for c in ROWGEN])
def test_movegen_row_cases(case, registry):
    pos, gen = _gen(registry, case)
    p = case["params"]
    assert p["direction"] == "horizontal"
    found = sorted(
        ((m[5], _table(pos, m)) for m in gen.moves()
         if m[0] == "place" and not m[3] and m[1] == p["row_0idx"] and len(m[4]) >= p["min_tiles_length"]),
        key=lambda x: -x[0],
    )
    assert len(found) == case["expected"]["count_in_row"]
    if "moves_by_score" in case["expected"]:
        assert [f"{t} {s}" for s, t in found] == case["expected"]["moves_by_score"]


SCORING = load_cases("scoring")


@needs_cases
@pytest.mark.parametrize("case", SCORING, ids=[c["id"] for c in SCORING])
def test_scoring_cases(case, registry):
    exp = case["expected"]
    pos = parse_cgp(case["cgp"], check_counts=False)
    lex = registry.get(case["lexicon"])
    if "move_scores" in exp or "move_scores_by_bingo_bonus" in exp:
        table = exp.get("move_scores_by_bingo_bonus") or {"50": exp["move_scores"]}
        for bb, scores in table.items():
            for text, score in scores.items():
                move = parse_move(text, pos.board, LD)
                assert score_play(pos.board, LD, move.row, move.col, move.vertical, move.tiles, int(bb)) == score
                # when every word is valid, the generator finds the play with the same score
                words = formed_words(pos.board, move.row, move.col, move.vertical, move.tiles)
                if all(lex.kwg.contains(w) for w in words):
                    rack = sorted(0 if t & 0x80 else t for t in move.tiles if t)
                    _, gen = _gen(registry, case, rack=rack, bag=50, bb=int(bb))
                    got = {m[1:5]: m[5] for m in gen.moves() if m[0] == "place"}
                    assert got[(move.row, move.col, move.vertical, move.tiles)] == score, text
    if "formed_words_in_order" in exp:
        move = parse_move(exp["move"], pos.board, LD)
        words = formed_words(pos.board, move.row, move.col, move.vertical, move.tiles)
        assert [bytes(LD.parse_rack(w)) for w in exp["formed_words_in_order"]] == words
        if "same_words_with_blank_e" in exp:
            blank = parse_move(exp["same_words_with_blank_e"], pos.board, LD)
            assert formed_words(pos.board, blank.row, blank.col, blank.vertical, blank.tiles) == words
        if "score" in exp:
            assert score_play(pos.board, LD, move.row, move.col, move.vertical, move.tiles) == exp["score"]


@needs_cases
def test_endgame_equity_case(registry):
    (case,) = load_cases("equity")
    pos = parse_cgp(case["cgp"])
    engine = Engine(registry.settings)
    res = engine.generate(pos, n=6)
    got = [
        {"score": m.score, "row_0idx": m.move.row, "col_0idx": m.move.col, "tiles_played": m.tiles_played,
         "equity": m.equity}
        for m in res.moves
    ]
    assert got == case["expected"]["top6_by_equity"]


@needs_cases
def test_opening_equity_case(registry):
    (case,) = load_cases("equity_top")
    klv_path = CASES_DIR / case["params"]["klv"]
    if not klv_path.is_file():
        pytest.skip("alternate leave file absent")
    klv = Klv.from_file(str(klv_path))
    lex = registry.get(case["lexicon"])
    for item in case["expected"]["top_by_equity"]:
        rack = LD.parse_rack(item["rack"])
        gen = MoveGen(lex.kwg, lex.ld, klv)
        gen.generate(new_board(), rack, 86)
        top = gen.moves(1)[0]
        board = new_board()
        assert format_move(Move(*top[:5]), LD, board) == item["move"]
        assert top[5] == item["score"] and top[2] == item["col_0idx"] and top[7] == item["tiles_played"]
        formula = item["equity"]
        leave = top[8]
        expected = item["score"] * 1000 + klv.leave_value(list(leave))
        if "- " in formula:
            expected -= round(float(formula.rsplit("- ", 1)[1]) * 1000)
        assert top[6] == expected, item


def test_record_modes_agree(registry):
    if not (Path(registry.settings.data_dirs[0]) / "NWL20.txt").exists() and "NWL20" not in registry.available():
        pytest.skip("NWL20 absent")
    lex = registry.get("NWL20")
    pos = parse_cgp(
        "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
        "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 AABDELT/ 0/0 0 lex NWL20;"
    )
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    bag = bag_for_mover(pos)
    gen.generate(pos.board, pos.racks[0], bag)
    everything = gen.moves()
    gen.generate(pos.board, pos.racks[0], bag, mode="best")
    assert gen.moves() == everything[:1]
    gen.generate(pos.board, pos.racks[0], bag, mode="top", n=25)
    assert gen.moves() == everything[:25]
    gen.generate(pos.board, pos.racks[0], bag, sort=False)
    assert sorted(gen.moves(), key=everything.index) == everything
    # deterministic total order
    keys = [(-m[6], -m[5]) for m in everything]
    assert keys == sorted(keys)


SMALL_WORDS = [
    "AA", "AB", "AD", "AE", "AS", "BA", "BE", "DA", "DE", "ED", "ES", "RE", "ER", "SE",
    "ABS", "ADS", "BAD", "BED", "BES", "DAB", "DEB", "ERA", "ERAS", "RED", "REDS", "SEA", "SEAR", "SAD",
    "BEAD", "BEADS", "BARE", "BARED", "BEARD", "BREAD", "DARE", "DEAR", "READ", "READS", "SABER", "BRAES",
    "ABED", "DEBAR", "BREADS", "BEARDS", "SABRED", "BEADER", "BEADERS",
]


def _premium(board):
    return lambda r, c: tuple(board.premium(r, c))


def _place_random(board, moves, rng):
    """Put a random one of the generated placements on the board (to grow test boards from legal plays)."""
    places = [m for m in moves if m[0] == "place"]
    if not places:
        return
    _, row, col, vertical, tiles = rng.choice(places)[:5]
    for i, t in enumerate(tiles):
        if t:
            board.set_tile(row + i * vertical, col + i * (not vertical), t)


@pytest.mark.parametrize("seed", range(12))
def test_against_brute_force(seed):
    """Completeness and soundness: every generated play is legal with the right score, and no legal
    play is missing (random boards built from valid plays, random racks with blanks)."""
    words = {enc(w) for w in SMALL_WORDS}
    kwg = Kwg(build_kwg(sorted(words)))
    gen = MoveGen(kwg, LD, None)
    rng = random.Random(seed)
    board = new_board()
    letters = [1, 2, 4, 5, 18, 19]
    for _step in range(8):
        rack = [rng.choice(letters + [0]) for _ in range(rng.randint(1, 7))]
        rows = board.tiles_list()
        expected = brute_force_moves(rows, rack, words, LD, _premium(board))
        gen.generate(board, rack, 50)
        got = {(m[1], m[2], m[3], m[4]): m[5] for m in gen.moves() if m[0] == "place"}
        assert got == expected
        # play a random legal move to grow the board
        full_rack = [rng.choice(letters) for _ in range(7)]
        gen.generate(board, full_rack, 50)
        _place_random(board, gen.moves(), rng)


def _letters_of(tiles_lists):
    """The letters the placements' new tiles use (a blank as 0, whatever it stands for)."""
    return {0 if t & 0x80 else t for tiles in tiles_lists for t in tiles if t}


@pytest.mark.parametrize("seed", range(8))
def test_used_letters_against_brute_force(seed):
    """The search for the letters some placement uses (stopping once all asked are seen) names exactly the
    letters of the brute-force plays, stuck letters included (tiles in no word of the lexicon)."""
    words = {enc(w) for w in SMALL_WORDS}
    kwg = Kwg(build_kwg(sorted(words)))
    gen = MoveGen(kwg, LD, None)
    rng = random.Random(100 + seed)
    board = new_board()
    letters = [1, 2, 4, 5, 18, 19]
    checked = 0
    for _step in range(8):
        rack = [rng.choice(letters + [0, 17, 26]) for _ in range(rng.randint(1, 7))]
        expected = brute_force_moves(board.tiles_list(), rack, words, LD, _premium(board))
        used = _letters_of(key[3] for key in expected)
        asked = set(rack)
        assert gen.used_letters(board, rack, asked) == used & asked, (seed, rack)
        for one in asked:
            assert gen.used_letters(board, rack, [one]) == used & {one}
        checked += len(asked - used) > 0
        full_rack = [rng.choice(letters) for _ in range(7)]
        gen.generate(board, full_rack, 50)
        _place_random(board, gen.moves(), rng)
    assert checked > 0, "no unused letter was asked about"
    with pytest.raises(ValueError, match="not in the alphabet"):
        gen.used_letters(board, [1], [99])


def test_used_letters_agree_with_every_move(registry):
    """On NWL20 boards (7-tile racks: the word map's plays too), the letters seen used are those of the full
    generation's placements."""
    if "NWL20" not in registry.available():
        pytest.skip("NWL20 absent")
    lex = registry.get("NWL20")
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    rng = random.Random(7)
    board = new_board()
    seen_unused = 0
    for _step in range(14):
        rack = [rng.randrange(0, 27) for _ in range(rng.choice([2, 5, 7]))]
        gen.generate(board, rack, 0)
        places = [m[4] for m in gen.moves() if m[0] == "place"]
        used = _letters_of(places)
        assert gen.used_letters(board, rack, set(rack)) == used & set(rack), rack
        seen_unused += len(set(rack) - used) > 0
        # counted per placed tile, as the opponent-at-risk test counts them (at most 2 uses: at risk)
        uses = Counter(0 if t & 0x80 else t for tiles in places for t in tiles if t)
        for k in (2, 3, 40):
            assert gen.used_letters(board, rack, set(rack), min_uses=k) == {x for x in set(rack) if uses[x] >= k}
        gen.generate(board, [rng.randrange(1, 27) for _ in range(7)], 50)
        _place_random(board, gen.moves(), rng)
    assert seen_unused > 0


@pytest.mark.parametrize("seed", range(6))
def test_one_tile_racks_against_brute_force(seed):
    """Racks of one tile (the endgame's playouts end on them, and the generator searches only the lanes where
    the tile fits the cross-sets of both directions): each letter of the small lexicon, one outside it and
    the blank, in every mode, on boards grown from legal plays, against brute force."""
    words = {enc(w) for w in SMALL_WORDS}
    kwg = Kwg(build_kwg(sorted(words)))
    gen = MoveGen(kwg, LD, None)
    rng = random.Random(1000 + seed)
    board = new_board()
    letters = [1, 2, 4, 5, 18, 19]
    found = 0
    for _step in range(9):
        rows = board.tiles_list()
        for t in letters + [26, 0]:
            expected = brute_force_moves(rows, [t], words, LD, _premium(board))
            gen.generate(board, [t], 0)
            got = {(m[1], m[2], m[3], m[4]): m[5] for m in gen.moves() if m[0] == "place"}
            assert got == expected
            found += len(got)
            n_small = gen.generate(board, [t], 0, mode="small")
            assert n_small == len(expected) + 1          # and the pass
            gen.generate(board, [t], 0, mode="best")
            best = gen.moves()[0]
            if expected:
                assert best[0] == "place" and best[5] == max(expected.values())
            else:
                assert best[0] == "pass"
        full_rack = [rng.choice(letters) for _ in range(7)]
        gen.generate(board, full_rack, 50)
        _place_random(board, gen.moves(), rng)
    assert found > 0


EXTRA_LETTERS = "ÁÉÍÓÚÑÇÄÖÜ"     # tiles 27-36: past the interleaved graph's 32-tile limit


@pytest.mark.parametrize("seed", range(4))
def test_large_alphabet_against_brute_force(seed):
    """An alphabet of 37 tiles (English and ten more): the generator's path for graphs whose tiles do not fit
    the interleaved node array, against brute force."""
    csv = ENGLISH_CSV.strip() + "\n" + "\n".join(f"{c},2,{i % 5 + 1},{int(c in 'ÁÉÍÓÚÄÖÜ')}"
                                                  for i, c in enumerate(EXTRA_LETTERS))
    ld = LetterDistribution(csv, "large")
    assert ld.size == 37
    extra = {ld.letter_ml(c) for c in EXTRA_LETTERS}
    assert max(extra) == 36
    words = {enc(w) for w in SMALL_WORDS}
    # the same words with A, E and S spelled by tiles 34-36
    swap = {1: 34, 5: 35, 19: 36}
    words |= {bytes(swap.get(t, t) for t in w) for w in list(words)}
    kwg = Kwg(build_kwg(sorted(words)))
    gen = MoveGen(kwg, ld, None)
    assert not gen.interleaved and MoveGen(Kwg(build_kwg(sorted(enc(w) for w in SMALL_WORDS))), LD).interleaved
    rng = random.Random(seed)
    board = new_board()
    letters = [1, 2, 4, 5, 18, 19, 34, 35, 36]
    for _step in range(8):
        rack = [rng.choice(letters + [0]) for _ in range(rng.randint(1, 7))]
        expected = brute_force_moves(board.tiles_list(), rack, words, ld, _premium(board))
        gen.generate(board, rack, 50)
        got = {(m[1], m[2], m[3], m[4]): m[5] for m in gen.moves() if m[0] == "place"}
        assert got == expected
        gen.generate(board, [rng.choice(letters) for _ in range(7)], 50)
        _place_random(board, gen.moves(), rng)


BINGO_WORDS = SMALL_WORDS + [
    "RETAINS", "RETINAS", "STAINER", "NASTIER", "STEARIN", "ANESTRI", "RATINES", "RETRAINS", "TRAINERS",
    "STRAINER", "TERRAINS", "RESTRAIN", "BANTERS", "ABSENTER", "DETRAINS", "STRAINED", "ENDARTS",
    "TRADES", "TREADS", "STARED", "RAINS", "TRAINS", "AT", "TA", "IN", "TI", "IT", "NA", "AN", "TAR", "RAT",
    "ART", "TAD", "SET", "TEN", "NET", "RIN", "TIN", "NIT", "DIN", "TRAIN", "DRAIN", "SNARE", "EARNS",
]


@pytest.mark.parametrize("seed", range(10))
def test_bingos_against_brute_force(seed):
    """7- and 8-letter plays (the word map's part of the search) against brute force: racks that are
    anagrams of the long words with 0-2 blanks, on boards grown from random legal plays; and the same
    moves with the word map and the lane-extension sets off."""
    words = {enc(w) for w in BINGO_WORDS}
    kwg = Kwg(build_kwg(sorted(words)))
    gen = MoveGen(kwg, LD, None)
    gaddag_only = MoveGen(kwg, LD, None)
    gaddag_only.use_word_map = False
    gaddag_only.use_ext = False  # nor the lane-extension sets
    rng = random.Random(seed)
    board = new_board()
    long_words = [w for w in BINGO_WORDS if len(w) >= 7]
    bingos = 0
    for _step in range(7):
        letters = list(enc(rng.choice(long_words)))
        rng.shuffle(letters)
        rack = letters[:7]
        for i in rng.sample(range(7), rng.choice([0, 0, 1, 1, 2])):
            rack[i] = 0
        expected = brute_force_moves(board.tiles_list(), rack, words, LD, _premium(board))
        gen.generate(board, rack, 50)
        got = {(m[1], m[2], m[3], m[4]): m[5] for m in gen.moves() if m[0] == "place"}
        assert got == expected
        bingos += sum(1 for m in gen.moves() if m[7] == 7)
        gaddag_only.generate(board, rack, 50)
        assert gaddag_only.moves() == gen.moves()
        gen.generate(board, rack, 50, mode="best")
        assert gen.moves() == gaddag_only.moves()[:1]
        _place_random(board, gaddag_only.moves(), rng)
    assert bingos > 0


def test_best_exchange_and_leave_tables_across_racks(registry):
    """Best mode picks the same exchange as the full ranking when nothing plays well, and the leave tables
    kept for recent racks give the same moves as a fresh generator when racks alternate."""
    try:
        lex = registry.get("NWL20")
    except ValueError:
        pytest.skip("NWL20 absent")
    board = new_board()
    racks = [LD.parse_rack(r) for r in ("BCDFGHJ", "VVWWKKZ", "?QQVVWW", "AEIRSTU", "BCDFGHJ", "NNPQRTV")]
    reused = MoveGen(lex.kwg, lex.ld, lex.klv)
    for rack in racks + racks[::-1]:
        fresh = MoveGen(lex.kwg, lex.ld, lex.klv)
        fresh.generate(board, rack, 80)
        everything = fresh.moves()
        reused.generate(board, rack, 80)
        assert reused.moves() == everything
        reused.generate(board, rack, 80, mode="best")
        assert reused.moves() == everything[:1]
    reused.generate(board, LD.parse_rack("BCDFGHJ"), 80, mode="best")
    assert reused.moves()[0][0] == "exchange"


def test_word_map_refuses_what_its_keys_cannot_hold():
    from engine_cy.wordmap import WordMap

    # a letter beyond 32 (its count would have no nibble): the map says so and move generation falls back
    wide = WordMap(Kwg(build_kwg(sorted([bytes([1, 2, 3, 4, 5, 6, 7]), bytes([40, 2, 3, 4, 5, 6, 7])]))))
    assert not wide.usable
    # more than 15 copies of one letter in a word (super-board lengths)
    repeated = WordMap(Kwg(build_kwg([bytes([1] * 16)])), 7, 21)
    assert not repeated.usable
    ok = WordMap(Kwg(build_kwg([bytes([1] * 15), bytes([2, 1, 1, 1, 1, 1, 1])])), 7, 21)
    assert ok.usable and ok.anagrams([1] * 15) == [bytes([1] * 15)] and ok.n_classes == 2


def test_word_map_classes(registry):
    lex = registry.get("SCOWL70")
    wm = lex.kwg.word_map()
    assert wm.usable and wm.n_words > 0 and wm.n_classes <= wm.n_words
    words = [w for w in lex.kwg.words() if len(w) >= 7]
    assert wm.n_words == len(words)
    rng = random.Random(5)
    for w in rng.sample(words, 50):
        expected = sorted(v for v in words if sorted(v) == sorted(w))
        assert wm.anagrams(list(w)) == expected


def _best_vs_all(lex, klv, seed, turns=30):
    from engine_cy.game import Game

    gen = MoveGen(lex.kwg, LD, klv)
    game = Game(lex.kwg, LD, new_board(), seed)
    game.fill_rack(0)
    game.fill_rack(1)
    rng = random.Random(seed)
    checked = 0
    for _ in range(turns):
        if game.game_over:
            break
        p = game.on_turn
        rack = game.rack(p)
        r = rng.random()
        if r < 0.5 and 0 not in rack and game.bag_size > 2:
            rack = rack[:-1] + [0]  # make blank racks common: they are where the shadow search matters
        elif r < 0.65 and len(rack) >= 2 and game.bag_size > 2:
            rack = [t for t in rack if t != 0][: len(rack) - 2] + [0, 0]  # and two-blank racks
        opp = game.rack(1 - p) if game.bag_size == 0 else None
        gen.generate(game.board, rack, game.bag_size, opp)
        everything = gen.moves()
        gen.generate(game.board, rack, game.bag_size, opp, mode="best")
        assert gen.moves() == everything[:1]
        checked += 1
        gen.generate(game.board, game.rack(p), game.bag_size, opp, mode="best")
        kind, row, col, vertical, tiles, score = gen.moves()[0][:6]
        game.play(kind, row, col, vertical, tiles, score) if kind == "place" else (
            game.play("exchange", tiles=tiles) if kind == "exchange" else game.play("pass"))
    return checked


@pytest.mark.parametrize("seed", range(4))
def test_best_mode_equals_full_ranking(registry, seed):
    """The shadow-bounded best-move search returns exactly the first move of the full ranking."""
    lex = registry.get("SCOWL70")
    assert _best_vs_all(lex, None, seed) > 5
    try:
        nwl = registry.get("NWL20")
    except ValueError:
        return
    assert _best_vs_all(nwl, nwl.klv, seed + 100) > 5


def test_small_mode_packs_every_move(registry):
    from engine_cy.move import pack, unpack

    lex = registry.get("SCOWL70")
    pos = parse_cgp(
        "7ZEP1F3/1FLUKY3R1R3/5EX2A1U3/2SCARIEST1I3/9TOT3/6GO1LO4/6OR1ETA3/6JABS1b3/5QI4A3/5I1N3N3/"
        "3ReSPOND1D3/1HOE3V3O3/1ENCOMIA3N3/7T7/3VENGED6 ?ABDELT/ 0/0 0",
        check_counts=False,  # a third blank, to cover blank packing
    )
    gen = MoveGen(lex.kwg, LD, None)
    rack = pos.racks[0]
    gen.generate(pos.board, rack, 20)
    full = {(m[0], m[1], m[2], m[3], m[4]): (m[5], m[6]) for m in gen.moves()}
    gen.generate(pos.board, rack, 20, mode="small")
    packed, scores, equities = gen.packed_moves()
    assert len(packed) == len(full) == sum(gen.counts())
    got = {}
    for p, s, e in zip(packed.tolist(), scores.tolist(), equities.tolist(), strict=True):
        mv = unpack(p, pos.board)
        assert pack(*mv) == p
        got[mv] = (s, e)
    assert got == full


@pytest.mark.parametrize("lexicon", ["NWL20", "CSW21"])
def test_opening_word_map_equals_gaddag(registry, lexicon):
    """Empty-board plays from the short word map (every mode it serves) equal the GADDAG search's: random racks
    with blanks and short racks, bag sizes that switch the leave and bag-empty terms."""
    try:
        lex = registry.get(lexicon)
    except ValueError:
        pytest.skip(f"{lexicon} absent")
    fast = MoveGen(lex.kwg, lex.ld, lex.klv)
    slow = MoveGen(lex.kwg, lex.ld, lex.klv)
    slow.use_opening_map = False
    rng = random.Random(20)
    tiles = [ml for ml in range(lex.ld.size) for _ in range(lex.ld.count(ml))]
    board = new_board()
    for _ in range(60):
        rack = rng.sample(tiles, rng.choice([7, 7, 7, 6, 4, 2]))
        bag = rng.choice([86, 86, 5, 0])
        opp = rng.sample(tiles, 7) if bag == 0 else None
        first = {}
        for mode in ("all", "best", "top"):
            fast.generate(board, rack, bag, opp, mode=mode, n=7)
            slow.generate(board, rack, bag, opp, mode=mode, n=7)
            assert fast.moves() == slow.moves(), (rack, bag, mode)
            first[mode] = fast.moves()[0]
            if mode == "all":
                assert fast.counts() == slow.counts()
        # best mode passes over plays that cannot win without building them: still the top of every move
        assert first["best"] == first["all"] == first["top"], (rack, bag)
