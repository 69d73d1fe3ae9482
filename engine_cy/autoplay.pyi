# Type stub of the Cython module engine_cy.autoplay (autoplay.pyx): self-play between two static bots.
from typing import final

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.game import Game, _EndReason
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg

def game_seed(seed: int, index: int) -> int: ...

@final
class AutoplayWorker:
    """One thread's game and bots. bot 0 and bot 1 may use different lexica and leaves."""

    stop: bool
    def __init__(
        self,
        kwg1: Kwg,
        klv1: Klv | None,
        kwg2: Kwg,
        klv2: Klv | None,
        ld: LetterDistribution,
        board: Board,
        bingo_bonus: int = 50,
    ) -> None: ...
    def game_state(self) -> Game: ...
    def play(self, seed: int, first_bot: int) -> tuple[tuple[int, int], tuple[int, int], int, _EndReason]: ...
