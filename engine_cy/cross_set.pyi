# Type stub of the Cython module engine_cy.cross_set (cross_set.pyx).
from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.kwg import Kwg

def all_letters_mask(ld: LetterDistribution) -> int: ...
def compute_all(b: Board, kwg: Kwg, ld: LetterDistribution) -> None: ...
