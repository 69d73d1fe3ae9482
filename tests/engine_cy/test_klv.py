from __future__ import annotations

import json
import random
import struct

import pytest

from engine_cy.alphabet import LetterDistribution
from engine_cy.klv import Klv, write_klv2

from conftest import CASES_DIR, LEXICA

LD = LetterDistribution.english()


def _klv(name: str) -> Klv:
    path = LEXICA / f"{name}.klv2"
    if not path.is_file():
        pytest.skip(f"{name}.klv2 absent")
    return Klv.from_file(str(path))


@pytest.mark.parametrize("name", ["NWL20", "CSW21"])
def test_leaves_json(name):
    path = CASES_DIR / "leaves.json"
    if not path.is_file():
        pytest.skip("leaves.json absent")
    klv = _klv(name)
    assert klv.n_values == 914624
    for leave, (index, value) in json.loads(path.read_text())[name].items():
        mls = LD.parse_rack(leave)
        assert klv.leave_index(mls) == index, leave
        assert klv.leave_value(mls) == round(value * 1000), leave
        # order of the tiles does not matter
        assert klv.leave_value(list(reversed(mls))) == round(value * 1000)
    assert klv.leave_value([]) == 0


def test_klv_roundtrip_small():
    rows = [([0], 25.5), ([0, 0], 40.0), ([1, 5, 19], -3.25), ([19], 8.0), ([17], -7.0), ([17, 21], 2.5)]
    klv = Klv(write_klv2(rows))
    for leave, value in rows:
        assert klv.leave_value(leave) == round(value * 1000)
    assert klv.leave_value([2, 3]) == 0
    # index = rank in sorted order
    keys = sorted(bytes(sorted(k)) for k, _ in rows)
    for i, k in enumerate(keys):
        assert klv.leave_index(list(k)) == i


def test_klv_roundtrip_full():
    klv = _klv("NWL20")
    items = klv.items()
    assert len(items) == klv.n_values
    again = Klv(write_klv2([(list(k), v / 1000.0) for k, v in items]))
    assert again.items() == items
    rng = random.Random(3)
    for k, v in rng.sample(items, 1000):
        assert again.leave_value(list(k)) == v


def test_klv_errors():
    with pytest.raises(ValueError, match="too short"):
        Klv(b"\x01")
    with pytest.raises(ValueError, match="graph nodes"):
        Klv(b"\xff\x00\x00\x00" + b"\x00" * 8)
    with pytest.raises(ValueError, match="duplicate"):
        write_klv2([([1], 1.0), ([1], 2.0)])


@pytest.mark.parametrize("name", ["NWL20", "CSW21"])
def test_shared_leave_files_validate(name):
    """Real files carry unreachable nodes (zero padding; an empty GADDAG pointer at node 1): accepted."""
    klv = _klv(name)
    assert klv.kwg.kind == "leaves" and klv.n_values == klv.kwg.word_count() == 914624
    assert klv.leave_value([]) == 0


def test_klv_v1_and_strict_sizes():
    from engine_cy.kwg_check import LexiconFormatError

    v2 = write_klv2([([0], 25.5), ([1, 5], -3.0)])
    k = struct.unpack_from("<I", v2)[0]
    head = v2[:8 + 4 * k]
    v1 = Klv(head + struct.pack("<2h", 256 * 25 + 128, -3 * 256))   # i16 / 256 points
    assert v1.leave_value([0]) == 25500 and v1.leave_value([5, 1]) == -3000
    for bad in (v2 + b"\x00", v2[:-1], head + bytes(6)):
        with pytest.raises(LexiconFormatError):
            Klv(bad)
    with pytest.raises(LexiconFormatError, match="not a finite number"):
        Klv(head + struct.pack("<2f", 1.0, float("nan")))
