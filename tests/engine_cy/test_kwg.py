from __future__ import annotations

import random
import struct
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg

from conftest import LEXICA, needs_csw21, needs_nwl20
from helpers import enc, gaddag_strings

SMALL = ["AA", "AB", "ABA", "ABS", "BA", "BAA", "BAS", "CARE", "CARED", "CARES", "RACE", "ACRE", "SCARE", "QI"]


def test_small_dawg_and_gaddag_exact():
    words = sorted({enc(w) for w in SMALL})
    kwg = Kwg(build_kwg(words))
    assert kwg.words() == words
    assert kwg.word_count() == len(words)
    expected = set()
    for w in words:
        expected |= gaddag_strings(w)
    got = kwg.words(kwg.gaddag_root)
    assert len(got) == len(set(got))
    assert set(got) == expected
    assert kwg.word_count(kwg.gaddag_root) == len(expected)
    for w in words:
        assert kwg.contains(w)
    for bad in ("A", "ABAS", "CAR", "ZZ", "CAREDS"):
        assert not kwg.contains(enc(bad))


def test_reserved_nodes_and_sorted_siblings():
    kwg = Kwg(build_kwg([enc(w) for w in SMALL]))
    tile, accepts, is_end, arc = kwg.node(0)
    assert (tile, accepts, is_end) == (0, False, True) and arc == kwg.dawg_root
    tile, accepts, is_end, arc = kwg.node(1)
    assert (tile, accepts, is_end) == (0, False, True) and arc == kwg.gaddag_root
    # sibling tiles strictly ascending inside every list
    for i in range(2, kwg.n_nodes - 1):
        t, _, end, _ = kwg.node(i)
        if not end:
            assert kwg.node(i + 1)[0] > t


@settings(max_examples=60, deadline=None)
@given(st.sets(st.text(alphabet="ABCDE", min_size=2, max_size=7), min_size=1, max_size=40))
def test_builder_property(words):
    ml = sorted(enc(w) for w in words)
    kwg = Kwg(build_kwg(ml))
    assert kwg.words() == ml
    expected = set()
    for w in ml:
        expected |= gaddag_strings(w)
    assert set(kwg.words(kwg.gaddag_root)) == expected
    # index_of is the rank in sorted order
    for i, w in enumerate(ml):
        assert kwg.index_of(w) == i
    # a KWG we build reads back byte for byte
    assert Kwg(kwg.to_bytes()).to_bytes() == kwg.to_bytes()


def test_build_ignores_word_order_and_repeats():
    # the builder sorts its records itself (a radix sort, insertion for short runs): any order, with repeats,
    # gives the same bytes, over the whole range of tiles and word lengths (three letters make long shared
    # prefixes, with words ending inside them)
    rng = random.Random(7)
    words = sorted({bytes(rng.randint(1, 62) for _ in range(rng.randint(2, 15))) for _ in range(3000)} |
                   {bytes(rng.randint(1, 3) for _ in range(rng.randint(2, 15))) for _ in range(3000)} |
                   {bytes([1, 2]), bytes([1, 2, 1]), bytes([62] * 15)})
    expected = build_kwg(words)
    jumbled = words + rng.sample(words, 500)
    rng.shuffle(jumbled)
    assert build_kwg(jumbled) == expected
    kwg = Kwg(expected)
    assert kwg.words() == words
    assert len(kwg.words(kwg.gaddag_root)) == sum(len(w) for w in words)


def test_twl06_from_another_engine():
    path = LEXICA / "TWL06.kwg"
    if not path.is_file():
        import pytest

        pytest.skip("TWL06.kwg absent")
    kwg = Kwg.from_file(str(path))
    assert kwg.n_nodes == 830481
    assert kwg.node(0) == (0, False, True, 2)
    assert kwg.node(1) == (0, False, True, 126697)
    words = kwg.words()
    assert len(words) == 178691 == kwg.word_count()
    assert kwg.contains(enc("QI")) and kwg.contains(enc("ZYZZYVA")) and not kwg.contains(enc("ZYZZYVAZ"))
    # rebuild from its own words with our builder: same language, same reader code paths
    ours = Kwg(build_kwg(words))
    assert ours.words() == words
    assert ours.word_count(ours.gaddag_root) == kwg.word_count(kwg.gaddag_root)


def _check_full_lexicon(name: str, expected: int) -> None:
    lines = (LEXICA / f"{name}.txt").read_text().split()
    words = [enc(w) for w in lines]
    t0 = time.perf_counter()
    kwg = Kwg(build_kwg(words))
    build_s = time.perf_counter() - t0
    assert build_s < 30, f"build took {build_s:.1f} s"
    assert len(kwg.words()) == expected == kwg.word_count()
    assert kwg.word_count(kwg.gaddag_root) == sum(len(w) for w in set(words))
    rng = random.Random(7)
    for w in rng.sample(words, 500):
        assert kwg.contains(w)
        for g in gaddag_strings(w):
            assert kwg.accepts_path(kwg.gaddag_root, g)
    # the GADDAG accepts exactly the rotations of every word
    expected = set()
    for w in words:
        expected |= gaddag_strings(w)
    got = kwg.words(kwg.gaddag_root)
    assert len(got) == len(expected) and set(got) == expected


@needs_nwl20
def test_nwl20_build():
    _check_full_lexicon("NWL20", 191852)


@needs_csw21
def test_csw21_build():
    _check_full_lexicon("CSW21", 279077)


def test_validated_at_load_kinds_and_counts():
    """Loading validates (LexiconFormatError, a ValueError); counts come with the load; the kind follows
    node 1's shape unless given."""
    from engine_cy.kwg_check import LexiconFormatError

    assert issubclass(LexiconFormatError, ValueError)
    words = sorted({enc(w) for w in SMALL})
    both = Kwg(build_kwg(words))
    assert both.kind == "gaddag" and both.gaddag_root != 0
    assert both.word_count(both.gaddag_root) == sum(len(w) for w in words)
    dawg = Kwg(build_kwg(words, gaddag=False))
    assert dawg.kind == "dawg" and dawg.gaddag_root == 0 and dawg.words() == words
    assert [dawg.index_of(w) for w in words] == list(range(len(words)))
    with pytest.raises(LexiconFormatError, match="not a root pointer"):
        Kwg(build_kwg(words, gaddag=False), "gaddag")
    with pytest.raises(ValueError, match="unknown KWG kind"):
        Kwg(build_kwg(words), "nodes")
    with pytest.raises(ValueError):
        both.array[2] = 0   # the validated nodes cannot be changed afterwards
    # a leave graph: blanks (tile 0) allowed, tiles ascending along each path
    leave_keys = [bytes([0]), bytes([0, 0]), bytes([0, 5]), bytes([5, 19])]
    leaves = Kwg(build_kwg(leave_keys, gaddag=False), "leaves")
    assert leaves.word_count() == 4
    with pytest.raises(LexiconFormatError, match="DAWG holds tile 0"):
        Kwg(struct.pack("<4I", 0x400002, 0x400000, 0x00400003, 0x01C00000))


def test_twl06_validates_as_gaddag():
    path = LEXICA / "TWL06.kwg"
    if not path.is_file():
        pytest.skip("TWL06.kwg absent")
    kwg = Kwg.from_file(str(path))
    assert kwg.kind == "gaddag"
    assert kwg.word_count(kwg.gaddag_root) == sum(len(w) for w in kwg.words())


def _fuzz_module():
    import importlib.util
    import sys
    from pathlib import Path

    if "fuzz_readers" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "fuzz_readers", Path(__file__).resolve().parents[2] / "fuzz" / "fuzz_readers.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["fuzz_readers"] = module
        spec.loader.exec_module(module)
    return sys.modules["fuzz_readers"]


def test_gaddag_must_be_the_rotations_of_the_dawg_words():
    """The validator proves the GADDAG holds exactly the rotations of the DAWG's words,
    whether its post-separator lists are the DAWG's own (our builder, wolges) or copies."""
    from engine_cy.kwg_check import LexiconFormatError

    fuzz = _fuzz_module()
    words = sorted({enc(w) for w in SMALL})
    rotations = set().union(*(gaddag_strings(w) for w in words))
    copy = Kwg(fuzz.unshared_kwg(words))
    assert copy.n_nodes > Kwg(build_kwg(words)).n_nodes
    assert copy.words() == words and set(copy.words(copy.gaddag_root)) == rotations
    # one string swapped for another of the same length: "RAC@E" (CARE) for "RAC@S"
    swapped = sorted(rotations - {enc("RAC@E")} | {enc("RAC@S")})
    with pytest.raises(LexiconFormatError, match=r"^KWG: the GADDAG does not match the DAWG \(the GADDAG lacks "
                                                 r"a form of word 'CARE'\)$"):
        Kwg(fuzz.unshared_kwg(words, swapped))
    # the full reversal of a word swapped for a string no word forms: "ERAC" (CARE) for "ERAQ"
    swapped = sorted(rotations - {enc("ERAC")} | {enc("ERAQ")})
    with pytest.raises(LexiconFormatError, match="the GADDAG lacks a form of word 'CARE'"):
        Kwg(fuzz.unshared_kwg(words, swapped))
    # a string beyond the rotations in place of one of them (the count is kept): named as it is read
    swapped = sorted(rotations - {enc("QI")[::-1]} | {enc("AB@B")})
    with pytest.raises(LexiconFormatError, match="it accepts 'AB@B', which is not a form of any DAWG word"):
        Kwg(fuzz.unshared_kwg(words, swapped))


def test_gaddag_check_on_real_lexica():
    """Real lexica built by us, with copied post-separator lists, and TWL06.kwg from another tool load."""
    fuzz = _fuzz_module()
    loaded = 0
    for name in ("NWL20", "CSW21"):
        path = LEXICA / f"{name}.txt"
        if not path.is_file():
            continue
        words = sorted({enc(w) for w in path.read_text().split()})
        part = words[::40]
        copy = Kwg(fuzz.unshared_kwg(part))
        assert copy.words() == part
        assert copy.word_count(copy.gaddag_root) == sum(len(w) for w in part)
        loaded += 1
    twl = LEXICA / "TWL06.kwg"
    if twl.is_file():
        kwg = Kwg.from_file(str(twl))
        assert kwg.word_count() == 178691
        loaded += 1
    if not loaded:
        pytest.skip("no shared lexica")
