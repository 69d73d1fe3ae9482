from __future__ import annotations

import random

import pytest

from engine_cy import cross_set
from engine_cy.alphabet import LetterDistribution
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.tiles import new_board

from conftest import load_cases, needs_cases
from helpers import enc

CASES = load_cases("cross_set")


@needs_cases
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cross_set_cases(case, registry):
    lex = registry.get(case["lexicon"])
    pos = parse_cgp(case["cgp"], check_counts=False)
    cross_set.compute_all(pos.board, lex.kwg, lex.ld)
    full = cross_set.all_letters_mask(lex.ld)
    for sq in case["expected"]["squares"]:
        d = 0 if sq["orient"] == "col" else 1
        r, c = sq["row_0idx"], sq["col_0idx"]
        if sq["letters"] == "TRIVIAL":
            want = full
        elif sq["letters"] == "OCCUPIED":
            want = 0
        else:
            want = sum(1 << (ord(ch) - 64) for ch in sq["letters"])
        assert pos.board.get_cross_set(r, c, d) == want, sq
        assert pos.board.get_cross_score(r, c, d) == sq["score"], sq


WORDS = ["AB", "BA", "AD", "DA", "ABA", "BAD", "DAB", "CAB", "ABS", "ADS", "BADS", "CABS", "DABS", "SCAB", "AS"]


def _brute(board, ld, words, r, c, d):
    """Independent reference: try every letter and check the perpendicular word in a set."""
    dim = board.dim
    if board.tile(r, c):
        return 0, 0
    dr, dc = (1, 0) if d == 0 else (0, 1)  # perpendicular direction of a play along d
    before, after = [], []
    rr, cc = r - dr, c - dc
    while 0 <= rr < dim and 0 <= cc < dim and board.tile(rr, cc):
        before.insert(0, board.tile(rr, cc))
        rr, cc = rr - dr, cc - dc
    rr, cc = r + dr, c + dc
    while 0 <= rr < dim and 0 <= cc < dim and board.tile(rr, cc):
        after.append(board.tile(rr, cc))
        rr, cc = rr + dr, cc + dc
    if not before and not after:
        return cross_set.all_letters_mask(ld), 0
    score = sum(0 if t & 0x80 else ld.score(t) for t in before + after)
    bits = 0
    for ml in range(1, ld.size):
        w = bytes([t & 0x7F for t in before] + [ml] + [t & 0x7F for t in after])
        if w in words:
            bits |= 1 << ml
    return bits, score


def test_cross_sets_brute_force():
    ld = LetterDistribution.english()
    words = {enc(w) for w in WORDS}
    kwg = Kwg(build_kwg(sorted(words)))
    rng = random.Random(11)
    for _ in range(40):
        board = new_board()
        for _ in range(rng.randint(1, 60)):
            t = rng.choice([1, 2, 3, 4, 19, 1 | 0x80])
            board.set_tile(rng.randrange(15), rng.randrange(15), t)
        cross_set.compute_all(board, kwg, ld)
        for r in range(15):
            for c in range(15):
                for d in (0, 1):
                    assert (board.get_cross_set(r, c, d), board.get_cross_score(r, c, d)) == _brute(
                        board, ld, words, r, c, d
                    )
