"""The simulation worker's statistics on a toy lexicon where the opponent's reply is known: with their whole
rack known, every iteration meets the same reply, so the heatmap holds the iterations on exactly the squares
of the reply a separate move generation finds, the histogram one bin, the leave the rack less the reply."""

from __future__ import annotations

import numpy as np
import pytest

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.game import Game
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from engine_cy.movegen import MoveGen
from engine_cy.sim import SCORE_HISTOGRAM_BINS, SCORE_HISTOGRAM_WIDTH, SimWorker
from macondo_server.analysis.sim import win_table

from helpers import enc

LD = LetterDistribution.english()
WORDS = ["AA", "AB", "AD", "AE", "AS", "BA", "BE", "DA", "DE", "ED", "ES", "RE", "ER", "SE", "TA", "AT", "IT", "TI",
         "ABS", "ADS", "BAD", "BED", "BES", "DAB", "ERA", "RED", "SEA", "SAD", "BEAD", "BEADS", "BARE", "DARE",
         "DEAR", "READ", "RATE", "TEAR", "SIT", "ITS", "TIS", "EAT", "TEA", "SET", "TIE", "TIES", "SITE", "RITE"]


def _ml(word: str) -> list[int]:
    return list(enc(word))


def _setup(plies: int = 1) -> tuple[Kwg, Game, tuple, list[int]]:
    kwg = Kwg(build_kwg(sorted({enc(w) for w in WORDS})))
    game = Game(kwg, LD, Board(), 3)
    game.set_rack(0, _ml("BADEXYZ"))
    them = _ml("SITERAQ")
    game.set_rack(1, them)
    # our candidate: 8G BAD (B on the centre), 2 x (3 + 1 + 2) = 12
    cand = ("place", 7, 6, False, tuple(_ml("BAD")), 12)
    return kwg, game, cand, them


def test_stats_are_off_until_enabled_and_enabling_twice_is_harmless():
    kwg, game, cand, them = _setup()
    w = SimWorker(game, kwg, None, LD, [cand], them, win_table(), seed=1, plies=2)
    assert w.stats_arrays() is None
    w.enable_stats()
    w.enable_stats()
    hist, heat, kept, held, replies = w.stats_arrays()
    assert hist.shape == (1, 2, SCORE_HISTOGRAM_BINS) and heat.shape == (1, 2, 225)
    assert kept.shape == held.shape == (1, LD.size) and replies.tolist() == [0]
    assert SCORE_HISTOGRAM_WIDTH == 10


@pytest.mark.parametrize("plies", [1, 2])
def test_a_known_reply_is_counted_on_its_squares(plies):
    kwg, game, cand, them = _setup()
    w = SimWorker(game, kwg, None, LD, [cand], them, win_table(), seed=1, plies=plies)
    w.enable_stats()
    n = 37
    assert w.run(0, 1, n) == n
    hist, heat, kept, held, replies = w.stats_arrays()
    # the reply found separately: the best move for their rack on the board after the candidate
    after = game.clone()
    after.play(*cand[:5])
    gen = MoveGen(kwg, LD, None)
    gen.generate(after.board, them, after.bag_size, mode="best")
    kind, row, col, vertical, tiles, score = gen.moves()[0][:6]
    assert kind == "place"
    squares = [(row + (i if vertical else 0), col + (0 if vertical else i)) for i, t in enumerate(tiles) if t]
    want = np.zeros(225, dtype=np.int64)
    for r, c in squares:
        want[r * 15 + c] = n
    assert heat[0, 0].tolist() == want.tolist() and heat[0, 0].sum() == n * len(squares)
    assert hist[0, 0, min(score // 10, 15)] == n and hist[0, 0].sum() == n
    assert replies.tolist() == [n]
    rack = np.bincount(them, minlength=LD.size)
    used = np.bincount([t & 0x7F for t in tiles if t], minlength=LD.size)
    assert held[0].tolist() == (n * rack).tolist() and kept[0].tolist() == (n * (rack - used)).tolist()
    if plies == 2:
        assert hist[0, 1].sum() == n and heat[0, 1].sum() > 0      # our next move: drawn tiles vary
