"""Word knowledge for the weaker bot levels: the part of a lexicon a player of some strength knows.

Players learn the words of each length in probability order (the order word-study tools list them in): a
word is as likely as the draw of its letters from a full bag, the product over its letters of C(count, used)
(a letter the distribution does not hold often enough makes it improbable: it needs blanks). A vocabulary
keeps, for each word length, the most probable fraction of the lexicon's words; its word graph is built from
them, and a generator with that graph finds only plays all of whose words the player knows (main word and
cross words alike, since the cross-sets come from the same graph)."""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass

from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from macondo_server.engine.lexicon import Lexicon


@dataclass(frozen=True)
class Vocabulary:
    """The fraction of each length's words a player knows, most probable first; lengths not listed: none."""
    name: str
    fractions: tuple[tuple[int, float], ...]     # (word length, fraction of that length's words)

    def fraction(self, length: int) -> float:
        for n, f in self.fractions:
            if n == length:
                return f
        return 0.0


def word_log_probability(word: bytes, counts: list[int]) -> float:
    """log of the number of ways to draw the word's letters from a full bag (-inf when it needs blanks)."""
    total = 0.0
    for tile, used in Counter(word).items():
        have = counts[tile] if tile < len(counts) else 0
        if used > have:
            return -math.inf
        total += math.log(math.comb(have, used))
    return total


def known_words(lex: Lexicon, vocab: Vocabulary) -> list[bytes]:
    """The words of `lex` a player with `vocab` knows: per length, the most probable ceil(fraction x n)
    (ties by alphabetical order, so the choice is the same on every machine)."""
    counts = [lex.ld.count(t) for t in range(lex.ld.size)]
    by_length: dict[int, list[bytes]] = {}
    for w in lex.kwg.words():
        by_length.setdefault(len(w), []).append(bytes(w))
    out: list[bytes] = []
    for length, words in sorted(by_length.items()):
        f = vocab.fraction(length)
        if f <= 0:
            continue
        keep = min(len(words), math.ceil(f * len(words)))
        words.sort(key=lambda w: (-word_log_probability(w, counts), w))
        out.extend(words[:keep])
    return out


_CACHE: dict[tuple[str, str, str, int], Kwg] = {}
_LOCK = threading.Lock()


def vocabulary_kwg(lex: Lexicon, vocab: Vocabulary) -> Kwg:
    """The word graph of the words `vocab` knows in `lex` (built once per lexicon file and vocabulary)."""
    key = (lex.name, lex.ld.name, vocab.name, id(lex.kwg))
    with _LOCK:
        got = _CACHE.get(key)
        if got is None:
            got = Kwg(build_kwg(known_words(lex, vocab)))
            _CACHE[key] = got
        return got
