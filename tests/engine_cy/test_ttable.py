"""The endgame transposition table: two-entry buckets, and the part in use growing with the search."""

from __future__ import annotations

import random

import pytest

from engine_cy.endgame import EndgameSolver, TranspositionTable

from conftest import load_cases, needs_cases

TT_EXACT, TT_LOWER, TT_UPPER = 1, 2, 3
START_MB = 65536 * 24 / 2**20     # the part in use at first


def _keys(n: int, seed: int = 1) -> list[int]:
    rnd = random.Random(seed)
    return [rnd.getrandbits(64) | 1 for _ in range(n)]


def test_entries_round_trip_and_bad_entries_refused():
    tt = TranspositionTable(4)
    assert tt.get(12345) is None
    tt.put(12345, -17, 6, TT_EXACT, 987654321)
    assert tt.get(12345) == (-17, 6, TT_EXACT, 987654321)
    assert tt.get(12345 ^ (1 << 40)) is None
    for bad in ((0, 1, 1, TT_EXACT, 0), (5, 1, 1, 0, 0), (5, 1, 1, 4, 0), (5, 1, 256, TT_EXACT, 0)):
        with pytest.raises(ValueError):
            tt.put(*bad)


def test_a_bucket_keeps_the_deeper_and_the_latest():
    """Three positions on one bucket: the deepest stays in the first slot, the latest other in the second;
    a shallower bound of a stored position does not replace its deeper entry, an exact value does."""
    tt = TranspositionTable(1)
    mask_bits = 1 << 40                       # above any index bit of a 1 MB table: the same bucket
    a, b, c = 8, 8 | mask_bits, 8 | (2 * mask_bits)
    tt.put(a, 1, 9, TT_LOWER, 11)
    tt.put(b, 2, 3, TT_LOWER, 22)
    tt.put(c, 3, 4, TT_LOWER, 33)            # b (latest other) gives way; a (deeper) stays
    assert tt.get(a) == (1, 9, TT_LOWER, 11) and tt.get(b) is None and tt.get(c) == (3, 4, TT_LOWER, 33)
    tt.put(a, 5, 2, TT_UPPER, 44)            # a shallower bound: the deeper entry kept
    assert tt.get(a) == (1, 9, TT_LOWER, 11)
    tt.put(a, 6, 2, TT_EXACT, 55)            # exact: replaces it
    assert tt.get(a) == (6, 2, TT_EXACT, 55)
    tt.put(b, 7, 10, TT_LOWER, 66)           # deeper than the first slot: takes it, a goes to the second
    assert tt.get(b) == (7, 10, TT_LOWER, 66) and tt.get(a) == (6, 2, TT_EXACT, 55) and tt.get(c) is None


def test_the_table_grows_with_what_it_holds_and_keeps_it():
    """Starting at 1.5 MB in use, the table doubles as it fills, never past the size asked for, and every
    doubling moves the entries it files elsewhere: (nearly) every stored entry is found afterwards. Without
    the move each doubling would lose half of them."""
    tt = TranspositionTable(256)
    assert tt.active_megabytes == pytest.approx(START_MB) and tt.megabytes == 192
    keys = _keys(400_000)
    for i, k in enumerate(keys):
        tt.put(k, i % 1000, 5, TT_EXACT, i + 1)
    assert 24 <= tt.active_megabytes <= tt.megabytes
    found = sum(1 for i, k in enumerate(keys) if tt.get(k) == (i % 1000, 5, TT_EXACT, i + 1))
    assert found >= 0.97 * len(keys), found
    # a small table stops at its size
    small = TranspositionTable(4)
    for i, k in enumerate(_keys(200_000, seed=2)):
        small.put(k, 0, 1, TT_LOWER, i + 1)
    assert small.active_megabytes == small.megabytes == 3
    # clear empties the part in use and keeps its size
    tt.clear()
    assert all(tt.get(k) is None for k in keys[:1000]) and tt.active_megabytes >= 24


CASES = {c["id"]: c for c in load_cases("endgame")}


@needs_cases
def test_a_small_endgame_uses_little_of_a_large_table(registry):
    """The Canik endgame at 4 plies stores a few thousand positions: a 512 MB table stays at its first
    1.5 MB, and the answer is the case's. A larger search (pass-first, 10 plies) grows it and answers the same
    as with a table too small to grow."""
    from macondo_server.engine.replay import game_from_position
    from macondo_server.model.cgp import parse_cgp

    def solve(cid, plies, mb, heuristics):
        c = CASES[cid]
        lex = registry.get(c["lexicon"])
        game = game_from_position(parse_cgp(c["cgp"], lex.ld), lex)
        solver = EndgameSolver(lex.kwg, lex.ld, mb)
        return c, solver, solver.solve(game, plies, threads=1, heuristics=heuristics)

    c, solver, r = solve("eg-canik-nwl20", 4, 512, True)
    assert r["value"] == c["expected"]["value"] and solver.tt.active_megabytes == pytest.approx(START_MB)
    c, big, r = solve("eg-passfirst-csw21", 10, 512, False)
    _, tiny, r1 = solve("eg-passfirst-csw21", 10, 1, False)
    assert r["value"] == r1["value"] == c["expected"]["value"]
    assert big.tt.active_megabytes > 4 * START_MB and tiny.tt.active_megabytes < 1
