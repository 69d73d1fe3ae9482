# Type stub of the Cython module engine_cy.kwg_build (kwg_build.pyx): building word graphs.
from collections.abc import Collection, Iterable

from _typeshed import ReadableBuffer

def build_kwg(words: Collection[ReadableBuffer | Iterable[int]], gaddag: bool = True) -> bytes: ...
