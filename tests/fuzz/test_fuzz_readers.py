"""Hostile bytes against the KWG and KLV2 readers: never a crash, a hang or a silent misread.

Everything that feeds the readers bad bytes runs in a subprocess (a crash must fail a test, not kill pytest):
hand-made inputs that break each validator rule, hypothesis property runs, and mutation campaigns driven by
fuzz/fuzz_readers.py (its worker loads each input and exercises accepted ones; see that file)."""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fuzz_readers", ROOT / "fuzz" / "fuzz_readers.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_readers"] = fuzz
_spec.loader.exec_module(fuzz)

SHARED = Path(os.environ.get("MACONDO_SHARED_DIR", ROOT.parent / "shared"))
LEXICA = Path(os.environ.get("MACONDO_DATA_DIR", SHARED / "lexica"))
DATA_DIR = LEXICA if (LEXICA / "NWL20.klv2").is_file() else None


def node(tile: int, accepts: int, end: int, arc: int) -> int:
    return (tile << 24) | (accepts << 23) | (end << 22) | arc


def kwg_bytes(*nodes: int) -> bytes:
    return struct.pack(f"<{len(nodes)}I", *nodes)


def klv_bytes(graph: bytes, values: list[float], count: int | None = None, fmt: str = "f") -> bytes:
    n = len(values) if count is None else count
    return (struct.pack("<I", len(graph) // 4) + graph + struct.pack("<I", n)
            + struct.pack(f"<{len(values)}{fmt}", *values))


def ptr(arc: int) -> int:
    return node(0, 0, 1, arc)


def _chain(length: int, start: int) -> list[int]:
    """One word of `length` A's as a chain of one-node lists from node `start`."""
    return [node(1, int(i == length - 1), 1, 0 if i == length - 1 else start + i + 1) for i in range(length)]


def _wide_dag(levels: int, start: int, width: int = 3) -> list[int]:
    """width**levels words of exactly `levels` letters in width * levels nodes (each list points at the
    next)."""
    out = []
    for lv in range(levels):
        nxt = 0 if lv == levels - 1 else start + width * (lv + 1)
        out += [node(t + 1, int(lv == levels - 1), int(t == width - 1), nxt) for t in range(width)]
    return out


LEAF_A = kwg_bytes(ptr(1), node(1, 1, 1, 0))   # a leave graph holding the one leave "A"
# nodes 2.. of a KWG of the word AB: DAWG list [A] at 2, [B] at 3; GADDAG root list [A, B] at 4, then
# A's list [@] at 6 (its list: the DAWG's [B] at 3) and B's list [A] at 7
AB_NODES = [node(1, 0, 1, 3), node(2, 1, 1, 0), node(1, 0, 0, 6), node(2, 0, 1, 7), node(0, 0, 1, 3),
            node(1, 1, 1, 0)]

# (name, "kwg:KIND" or "klv", bytes, expected message fragment, or None when the input must be accepted)
CASES = [
    ("size", "kwg:auto", b"\x00\x00\x40", "not a positive multiple of 4"),
    ("empty", "kwg:auto", b"", "not a positive multiple of 4"),
    ("root-shape", "kwg:dawg", kwg_bytes(node(1, 0, 1, 0)), "node 0 is not a root pointer"),
    ("root-arc", "kwg:dawg", kwg_bytes(ptr(5)), "node 0: arc 5 points past the end (1 nodes)"),
    ("arc-past-end", "kwg:dawg", kwg_bytes(ptr(1), node(1, 1, 1, 7)),
     "KWG node 1: arc 7 points past the end"),
    ("arc-reserved", "kwg:gaddag", kwg_bytes(ptr(2), ptr(0), node(1, 1, 1, 1)),
     "node 2: arc 1 points at a reserved"),
    ("root-to-reserved", "kwg:gaddag", kwg_bytes(ptr(1), ptr(0)), "node 0: arc 1 points at a reserved"),
    ("tile-64", "kwg:dawg", kwg_bytes(ptr(1), node(64, 1, 1, 0)), "tile 64 is above the highest"),
    ("tile-255", "kwg:dawg", kwg_bytes(ptr(1), node(255, 1, 1, 0)), "tile 255 is above the highest"),
    ("runs-past-end", "kwg:dawg", kwg_bytes(ptr(1), node(1, 1, 0, 0)), "sibling list runs past the end"),
    ("brief-evil-kwg", "kwg:auto", struct.pack("<3I", 0x400002, 0x400002, 0x01800000), "runs past the end"),
    ("descending", "kwg:dawg", kwg_bytes(ptr(1), node(2, 1, 0, 0), node(1, 1, 1, 0)),
     "not strictly ascending (2 then 1)"),
    ("duplicate-tile", "kwg:dawg", kwg_bytes(ptr(1), node(2, 1, 0, 0), node(2, 1, 1, 0)),
     "not strictly ascending"),
    ("dead-end", "kwg:dawg", kwg_bytes(ptr(1), node(1, 0, 1, 0)), "node 1: dead end"),
    ("self-loop", "kwg:dawg", kwg_bytes(ptr(1), node(1, 1, 1, 1)), "node 1: edge to node 1 closes a cycle"),
    ("two-cycle", "kwg:dawg", kwg_bytes(ptr(1), node(1, 0, 1, 2), node(2, 1, 1, 1)), "closes a cycle"),
    ("cycle-via-sibling", "kwg:dawg", kwg_bytes(ptr(1), node(1, 1, 0, 0), node(2, 1, 1, 1)),
     "closes a cycle"),
    ("word-22", "kwg:dawg", kwg_bytes(ptr(1), *_chain(22, 1)),
     "DAWG holds a string of 22 tiles (at most 21)"),
    ("path-30", "kwg:dawg", kwg_bytes(ptr(1), *_chain(30, 1)), "longer than 22 tiles"),
    ("word-21", "kwg:dawg", kwg_bytes(ptr(1), *_chain(21, 1)), None),
    ("too-many-words", "kwg:dawg", kwg_bytes(ptr(1), *_wide_dag(14, 1)), "DAWG holds 4782969 words (at most"),
    ("count-overflow", "kwg:dawg", kwg_bytes(ptr(1), *_wide_dag(20, 1)), "more than 1073741824 strings"),
    ("separator-accepts", "kwg:gaddag", kwg_bytes(ptr(0), ptr(2), node(1, 1, 1, 3), node(0, 1, 1, 0)),
     "tile 0 (GADDAG separator) accepts or has no continuation"),
    ("two-separators", "kwg:gaddag",
     kwg_bytes(ptr(0), ptr(2), node(1, 0, 1, 3), node(0, 0, 1, 4), node(0, 0, 1, 5), node(2, 1, 1, 0)),
     "two separators"),
    ("tile-0-in-dawg", "kwg:gaddag", kwg_bytes(ptr(2), ptr(0), node(0, 0, 1, 3), node(1, 1, 1, 0)),
     "DAWG holds tile 0"),
    ("gaddag-starts-with-separator", "kwg:gaddag",
     kwg_bytes(ptr(0), ptr(2), node(0, 0, 1, 3), node(1, 1, 1, 0)),
     "starts with a separator"),
    ("one-letter-word", "kwg:gaddag", kwg_bytes(ptr(2), ptr(3), node(1, 1, 1, 0), node(1, 1, 1, 0)),
     "node 2: a one-letter word in the DAWG"),
    ("gaddag-count", "kwg:gaddag",
     kwg_bytes(ptr(2), ptr(4), node(1, 0, 1, 3), node(2, 1, 1, 0), node(2, 0, 1, 5), node(1, 1, 1, 0)),
     "GADDAG holds 1 strings but the DAWG's words have 2 letters"),
    # {AB}: DAWG A -> B; GADDAG "BA" and "A@B" (the separator's list is the DAWG's list under A)
    ("gaddag-ok", "kwg:gaddag", kwg_bytes(ptr(2), ptr(4), *AB_NODES), None),
    # a GADDAG-only tile changed, keeping the count: "BC" for "BA"
    ("gaddag-tile-changed", "kwg:gaddag", kwg_bytes(ptr(2), ptr(4), *AB_NODES[:5], node(3, 1, 1, 0)),
     "KWG: the GADDAG does not match the DAWG (the GADDAG lacks a form of word 'AB')"),
    # the separator's list moved to a copy with another tile: "A@C" for "A@B"
    ("gaddag-separator-list", "kwg:gaddag", kwg_bytes(ptr(2), ptr(4), *AB_NODES[:4], node(0, 0, 1, 8),
                                                      AB_NODES[5], node(3, 1, 1, 0)),
     "the GADDAG lacks a form of word 'AB'"),
    # "B@A" for "BA": same length, the full reversal missing and a string no word forms instead
    ("gaddag-string-swapped", "kwg:gaddag", kwg_bytes(ptr(2), ptr(4), *AB_NODES[:3], node(2, 0, 1, 8),
                                                      AB_NODES[4], AB_NODES[5], node(0, 0, 1, 9),
                                                      node(1, 1, 1, 0)),
     "the GADDAG lacks a form of word 'AB'"),
    ("gaddag-empty", "kwg:gaddag", kwg_bytes(ptr(2), ptr(0), *AB_NODES[:2]),
     "GADDAG holds 0 strings but the DAWG's words have 2 letters"),
    ("leaves-descending", "kwg:leaves", kwg_bytes(ptr(1), node(2, 0, 1, 2), node(1, 1, 1, 0)),
     "leave tiles out of ascending order (2 then 1)"),
    ("blank-leave-ok", "kwg:leaves", kwg_bytes(ptr(1), node(0, 1, 1, 2), node(0, 1, 1, 0)), None),
    # unreachable garbage is ignored (real leave files carry zero padding, and an empty GADDAG pointer)
    ("unreachable-padding", "kwg:dawg", kwg_bytes(ptr(2), 0, node(1, 1, 1, 0), 0, 0xFFFFFFFF, 0), None),
    ("empty-lexicon", "kwg:auto", kwg_bytes(ptr(0), ptr(0)), None),
    ("klv-short", "klv", b"\x01", "too short"),
    ("klv-nodes", "klv", b"\xff\x00\x00\x00" + b"\x00" * 8, "graph nodes"),
    ("klv-zero-nodes", "klv", struct.pack("<II", 0, 0), "0 graph nodes"),
    ("klv-trailing-byte", "klv", klv_bytes(LEAF_A, [1.0]) + b"\x00", "should follow the graph"),
    ("klv-missing-byte", "klv", klv_bytes(LEAF_A, [1.0])[:-1], "should follow the graph"),
    ("klv-count", "klv", klv_bytes(LEAF_A, [1.0, 2.0]), "graph holds 1 leaves but 2 values"),
    ("klv-nan", "klv", klv_bytes(LEAF_A, [float("nan")]), "KLV value 0 (nan) is not a finite number"),
    ("klv-inf", "klv", klv_bytes(LEAF_A, [float("-inf")]), "is not a finite number"),
    ("klv-huge", "klv", klv_bytes(LEAF_A, [1e30]), "is not a finite number within"),
    ("klv-v1", "klv", klv_bytes(LEAF_A, [512], fmt="h"), None),
    ("klv-empty", "klv", klv_bytes(kwg_bytes(ptr(0)), []), None),
    ("brief-evil-klv2", "klv", struct.pack("<IIIIf", 2, 0x400001, 0x01C00001, 1, 1.0),
     "KLV leave graph: KWG node 1: edge to node 1 closes a cycle"),
    ("klv-unsorted-leave", "klv", klv_bytes(kwg_bytes(ptr(1), node(2, 0, 1, 2), node(1, 1, 1, 0)), [1.0]),
     "leave tiles out of ascending order"),
]

CHECK_CASES = """
import json, sys
from engine_cy.kwg import Kwg, LexiconFormatError
from engine_cy.klv import Klv
out = []
for name, kind, hexdata in json.load(open(sys.argv[1])):
    data = bytes.fromhex(hexdata)
    try:
        if kind == "klv":
            Klv(data)
        else:
            Kwg(data, kind.split(":")[1])
        out.append([name, "ACCEPTED", ""])
    except LexiconFormatError as exc:
        out.append([name, "LexiconFormatError", str(exc)])
    except Exception as exc:
        out.append([name, type(exc).__name__, str(exc)])
print(json.dumps(out))
"""


def _isolated(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_each_rule_names_the_defect(tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([[name, kind, data.hex()] for name, kind, data, _ in CASES]))
    got = {name: (etype, msg) for name, etype, msg in json.loads(_isolated(CHECK_CASES, str(path)).stdout)}
    for name, _, _, expected in CASES:
        etype, msg = got[name]
        if expected is None:
            assert etype == "ACCEPTED", f"{name}: {etype}: {msg}"
        else:
            assert etype == "LexiconFormatError", f"{name}: {etype}: {msg}"
            assert expected in msg, f"{name}: {msg!r} lacks {expected!r}"
            assert "\n" not in msg and "/" not in msg, f"{name}: {msg!r}"


GADDAG_EDITS = """
import importlib.util, random, struct, sys
spec = importlib.util.spec_from_file_location("fuzz_readers", "fuzz/fuzz_readers.py")
fuzz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz)
from engine_cy.kwg import Kwg, LexiconFormatError
from engine_cy.kwg_build import build_kwg

words = sorted({fuzz.enc(w) for w in fuzz.SMALL_WORDS})
expected = set().union(*(fuzz._gaddag_strings(w) for w in words))


def reach(nodes, root):
    seen, todo = set(), [root]
    while todo:
        p = todo.pop()
        while p and p not in seen:
            seen.add(p)
            todo.append(nodes[p] & fuzz.ARC)
            p = 0 if nodes[p] & fuzz.IS_END else p + 1
    return seen


def verdict(data):
    try:
        k = Kwg(data)
    except LexiconFormatError as exc:
        return "gaddag" if "the GADDAG does not match the DAWG" in str(exc) else "other"
    got = set(k.words(k.gaddag_root))
    return "consistent" if got == set().union(*(fuzz._gaddag_strings(w) for w in k.words())) else "MISREAD"


# every tile change (1..26) of every node only the GADDAG reaches, in our builder's file (lists shared with
# the DAWG) and in one whose GADDAG shares nothing: the count stays, the strings change
for name, base in (("shared", build_kwg(words)), ("unshared", fuzz.unshared_kwg(words))):
    nodes = struct.unpack(f"<{len(base) // 4}I", base)
    out = {}
    for i in sorted(reach(nodes, nodes[1] & fuzz.ARC) - reach(nodes, nodes[0] & fuzz.ARC)):
        for t in range(1, 27):
            if t != nodes[i] >> 24:
                data = bytearray(base)
                struct.pack_into("<I", data, 4 * i, (nodes[i] & 0xFFFFFF) | (t << 24))
                v = verdict(bytes(data))
                out[v] = out.get(v, 0) + 1
    print(name, sorted(out.items()))

# one GADDAG string swapped for another of the same length (a letter changed, or letters exchanged
# between two strings: a set a linear hash would not tell apart)
rng = random.Random(3)
strings = sorted(expected)
out = {}
for _ in range(300):
    a = bytearray(rng.choice(strings))
    j = rng.randrange(len(a))
    if a[j] == 0:
        continue
    if rng.random() < 0.5:
        a[j] = rng.randrange(1, 27)
        new = expected - {bytes(rng.choice(strings))} | {bytes(a)}
    else:
        b = bytearray(rng.choice([x for x in strings if len(x) == len(a)]))
        if b[j] == 0:
            continue
        old = {bytes(a), bytes(b)}
        a[j], b[j] = b[j], a[j]
        new = expected - old | {bytes(a), bytes(b)}
    if new == expected or len(new) != len(expected):
        continue
    v = verdict(fuzz.unshared_kwg(words, sorted(new)))
    out[v] = out.get(v, 0) + 1
print("swapped", sorted(out.items()))
"""


def test_gaddag_edits_keeping_the_count_are_rejected():
    """A GADDAG that holds as many strings as it should, but not the rotations of the DAWG words, is
    rejected at load (before, such files loaded and the move generator offered words the DAWG lacks)."""
    lines = _isolated(GADDAG_EDITS, timeout=300).stdout.strip().split("\n")
    got = {line.split(" ", 1)[0]: dict(eval(line.split(" ", 1)[1])) for line in lines}
    for name in ("shared", "unshared", "swapped"):
        counts = got[name]
        assert "MISREAD" not in counts and "consistent" not in counts, (name, counts)
        assert counts.get("gaddag", 0) >= 50, (name, counts)


RANGE_CHECKS = """
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
k = Kwg(build_kwg([bytes([1, 2]), bytes([2, 1])]))
n = k.n_nodes
calls = [lambda: k.node(n), lambda: k.seek(n, 1), lambda: k.seek(1, 1), lambda: k.letter_set(n + 100),
         lambda: k.letter_set(1), lambda: k.word_count(n), lambda: k.word_count(0xFFFFFFFE),
         lambda: k.words(n),
         lambda: k.words(1), lambda: k.accepts_path(n, b"AB"), lambda: k.accepts_path(1, b"\\x00")]
for call in calls:
    try:
        call()
        print("no error")
    except IndexError:
        print("IndexError")
# padding (unreachable) nodes are not list starts either
pad = Kwg(bytes.fromhex("02004000" "00000000" "0000c001"), "dawg")
for call in (lambda: pad.seek(1, 0), lambda: pad.letter_set(1), lambda: pad.words(1)):
    try:
        call()
        print("no error")
    except IndexError:
        print("IndexError")
try:
    k.array[0] = 5
    print("array writable")
except ValueError:
    print("read-only")
try:
    k.__init__(k.to_bytes())
    print("re-initialised")
except TypeError:
    print("TypeError")
print(k.word_count(), k.word_count(0), k.seek(0, 1), k.letter_set(0), k.words(0))
"""


def test_node_arguments_are_range_checked():
    lines = _isolated(RANGE_CHECKS).stdout.split("\n")
    assert lines[:11] == ["IndexError"] * 11
    assert lines[11:14] == ["IndexError"] * 3
    assert lines[14:16] == ["read-only", "TypeError"]
    assert lines[16] == "2 0 0 0 []"


CLI_EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINQST/ 0/0 0 lex {lex};"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "macondo_server", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_reports_hostile_kwg(tmp_path):
    (tmp_path / "EVIL.kwg").write_bytes(struct.pack("<3I", 0x400002, 0x400002, 0x01800000))
    proc = _cli("--data-dir", str(tmp_path), "gen", CLI_EMPTY.format(lex="EVIL"))
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "EVIL.kwg" in proc.stderr and "runs past the end" in proc.stderr
    assert str(tmp_path) not in proc.stderr


@pytest.mark.skipif(not (LEXICA / "NWL20.txt").is_file(), reason="shared NWL20 lexicon absent")
def test_cli_reports_hostile_klv2(tmp_path):
    evil = tmp_path / "evil.klv2"
    evil.write_bytes(struct.pack("<IIIIf", 2, 0x400001, 0x01C00001, 1, 1.0))
    proc = _cli("--data-dir", str(LEXICA), "gen", CLI_EMPTY.format(lex="NWL20"), "--leaves", str(evil))
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "closes a cycle" in proc.stderr


def _campaign(kind: str, count: int, seed: int, tmp_path: Path, **kw) -> fuzz.Campaign:
    camp = fuzz.Campaign(kind, count, seed, 1, DATA_DIR, tmp_path / "findings", **kw)
    camp.run()
    return camp


def _assert_clean(camp: fuzz.Campaign) -> None:
    assert camp.findings == [], camp.findings[:10]
    assert camp.tried() == camp.count
    v = camp.verdicts
    # the mutations both get past the validator and get stopped by it
    assert v["A"] >= camp.count // 50 and v["R"] >= camp.count // 2, v


def test_fuzz_kwg_short(tmp_path):
    _assert_clean(_campaign("kwg", 4000, 20240601, tmp_path))


def test_fuzz_klv2_short(tmp_path):
    _assert_clean(_campaign("klv", 3000, 20240602, tmp_path))


def test_campaign_detects_crashes_hangs_and_wrong_errors(tmp_path):
    """The harness itself: a segfault, an exit, a hang, an unexpected exception type and a misread at given
    inputs are each reported once (and saved), and the campaign goes on with the next input."""
    camp = _campaign("kwg", 30, 5, tmp_path, inject="2:crash,4:hang,6:raise,8:misread,10:exit")
    got = sorted((cat, case) for cat, case, _ in camp.findings)
    assert got == [("crash", 2), ("crash", 10), ("hang", 4), ("misread", 8), ("unexpected", 6)]
    assert camp.tried() == 30
    assert len(list((tmp_path / "findings").iterdir())) == 5
    assert "-11" in dict(((c, n), d) for c, n, d in camp.findings)[("crash", 2)]


@pytest.mark.slow
def test_fuzz_kwg_long(tmp_path):
    _assert_clean(_campaign("kwg", 60000, 777, tmp_path))


@pytest.mark.slow
def test_fuzz_klv2_long(tmp_path):
    _assert_clean(_campaign("klv", 40000, 778, tmp_path))


# ---------------------------------------------------------------- hypothesis, in a subprocess


def _hypothesis_main(kind: str, examples: int) -> None:
    """Property: whatever edits are made to a valid file, loading either raises LexiconFormatError or gives
    a reader that passes the exerciser's consistency checks. Prints each input before trying it, so a crash
    leaves the culprit as the last line."""
    import random

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from engine_cy.klv import write_klv2
    from engine_cy.kwg_build import build_kwg

    ex = fuzz.Exerciser()
    edit = st.tuples(st.integers(0, 1 << 20), st.sampled_from(["set", "xor", "arc", "tile", "cut", "dup"]),
                     st.sampled_from(fuzz.INTERESTING_U32 + [1 << 22, 1 << 23, 1 << 24, 0xFF]))

    def apply(data: bytearray, edits, offset: int) -> bytes:
        for pos, op, val in edits:
            n = (len(data) - offset) // 4
            if n <= 0:
                break
            off = offset + 4 * (pos % n)
            v = struct.unpack_from("<I", data, off)[0]
            if op == "set":
                v = val
            elif op == "xor":
                v ^= val
            elif op == "arc":
                v = (v & ~0x3FFFFF) | (val % (n + 2))
            elif op == "tile":
                v = (v & 0xFFFFFF) | ((val & 0xFF) << 24)
            elif op == "cut":
                del data[off:]
                continue
            else:
                data[off:off] = data[offset + 4 * (val % n):offset + 4 * (val % n) + 4]
                continue
            struct.pack_into("<I", data, off, v)
        return bytes(data)

    def run(data: bytes, verdict_of) -> None:
        print(data.hex(), flush=True)
        assert verdict_of(data, random.Random(0)) in ("A", "R")

    cfg = settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))
    if kind == "kwg":
        @cfg
        @given(st.sets(st.text(alphabet="ABCDE", min_size=2, max_size=6), min_size=1, max_size=12),
               st.booleans(), st.lists(edit, min_size=1, max_size=4))
        def prop(words, gaddag, edits):
            data = bytearray(build_kwg(sorted(fuzz.enc(w) for w in words), gaddag=gaddag))
            run(apply(data, edits, 0), ex.kwg)
    else:
        leave = st.lists(st.integers(0, 26), min_size=1, max_size=6).map(lambda x: tuple(sorted(x)))

        @cfg
        @given(st.dictionaries(leave, st.floats(-50, 50, width=32), min_size=1, max_size=30),
               st.lists(edit, min_size=1, max_size=4))
        def prop(rows, edits):
            data = bytearray(write_klv2([(list(k), v) for k, v in rows.items()]))
            run(apply(data, edits, 4), ex.klv)
    prop()
    print("OK")


@pytest.mark.parametrize("kind", ["kwg", "klv"])
def test_hypothesis_mutations(kind):
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--hypothesis", kind, "250"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    assert proc.returncode == 0 and last == ["OK"], \
        f"exit {proc.returncode}; last input: {last}\n{proc.stderr[-3000:]}"


if __name__ == "__main__" and sys.argv[1:2] == ["--hypothesis"]:
    _hypothesis_main(sys.argv[2], int(sys.argv[3]))
