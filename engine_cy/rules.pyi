# Type stub of the Cython module engine_cy.rules (rules.pyx): the rules applied to one given play.
from collections.abc import Sequence

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.kwg import Kwg

# a square of a formed word: (row, col, machine letter, newly placed)
_Square = tuple[int, int, int, bool]

def _walk_words(
    board: Board, row: int, col: int, vertical: bool, tiles: Sequence[int]
) -> tuple[list[_Square], list[list[_Square]]]: ...
def _word_score(board: Board, ld: LetterDistribution, squares: Sequence[_Square]) -> int: ...
def score_play(
    board: Board,
    ld: LetterDistribution,
    row: int,
    col: int,
    vertical: bool,
    tiles: Sequence[int],
    bingo_bonus: int = 50,
) -> int: ...
def formed_words(board: Board, row: int, col: int, vertical: bool, tiles: Sequence[int]) -> list[bytes]: ...
def play_error(
    board: Board, kwg: Kwg, ld: LetterDistribution, row: int, col: int, vertical: bool, tiles: Sequence[int]
) -> str | None: ...
