"""Mutation fuzzing of the KWG and KLV2 readers: `kwg=N klv=N tried=N per_s=X crashes=N hangs=N unexpected=N
misreads=N` plus a line per finding.

Each input is a mutated copy of a valid base file (small KWGs and KLV2s built here with build_kwg / write_klv2
from seeded word and leave lists, and the shared NWL20.klv2 / CSW21.klv2 when the data directory has them):
bit flips, byte and word overwrites with boundary values, KWG node edits (arc to self, to an ancestor list,
past the end; tile 0 / 63 / 64 / 255; end and accept flags), node swaps, deletions, duplicated chunks,
truncation, KLV header and value edits (counts off by one, NaN, infinities, huge values). Inputs are generated
from (seed, kind, case number), so a worker process rebuilds them itself and a finding is saved by
regenerating it.

Worker processes (`--worker`) load each input and, when the reader accepts it, exercise it: word_count,
words(), index_of, contains, accepts_path, to_bytes round trip, a MoveGen on an empty and a small board (KWG);
items(), leave_index / leave_value of random racks, a MoveGen with the leave file, a write_klv2 round trip
(KLV2). An accepted input must read self-consistently (word_count == len(words()), index_of(w) == rank of w,
contains agrees with words(), the GADDAG holds exactly the rotations of the DAWG words (the validator proves
it at load), every generated play is legal under play_error and every word it forms is in words()); a rejected
one must raise LexiconFormatError. Anything else is a finding: a crash (worker killed by a signal or nonzero
exit), a hang (no verdict within --hang seconds), an unexpected exception type, or a misread (an accepted
file that reads inconsistently, e.g. a GADDAG that offers a play whose words the DAWG lacks).

Run: .venv/bin/python fuzz/fuzz_readers.py --kwg 100000 --klv 100000 --seed 1 --workers 1 \
         [--data-dir ../shared/lexica] [--out fuzz-findings]
"""

from __future__ import annotations

import argparse
import os
import random
import selectors
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HANG_S = 2.0
STARTUP_S = 120.0
INTERESTING_U32 = [0, 1, 2, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x400000, 0x800000, 0xC00000, 0x3FFFFF,
                   0x400001, 0x01C00001, 0x00400002, 0x3F000000, 0x40000000, 0xFF000000]
INTERESTING_U8 = [0, 1, 0x3F, 0x40, 0x7F, 0x80, 0xC0, 0xFF]
INTERESTING_F32 = [float("nan"), float("inf"), float("-inf"), 1e30, -1e30, 3e6, -3e6, 1e-45, 0.0, -0.0]
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ACCEPTS, IS_END, ARC = 0x800000, 0x400000, 0x3FFFFF


def enc(word: str) -> bytes:
    return bytes(ord(c) - 64 for c in word)


# ---------------------------------------------------------------- base files

SMALL_WORDS = ["AA", "AB", "ABA", "ABS", "BA", "BAA", "BAS", "CARE", "CARED", "CARES", "RACE", "ACRE",
               "SCARE", "QI", "RETAINS", "STAINER", "NASTIER", "RETINAS", "TRAINERS", "STRAINER", "AT",
               "TA", "IN"]


def _word_list(rng: random.Random, n: int, alphabet: str, lo: int, hi: int) -> list[bytes]:
    return sorted({enc("".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))) for _ in range(n)})


def kwg_bases() -> list[bytes]:
    """Small valid KWGs (deterministic): DAWG + GADDAG and DAWG-only, short and long words."""
    from engine_cy.kwg_build import build_kwg

    rng = random.Random(12345)
    lists = [
        sorted({enc(w) for w in SMALL_WORDS}),
        _word_list(rng, 30, "ABCDE", 2, 6),
        _word_list(rng, 60, "AEIRST", 2, 8),
        _word_list(rng, 25, LETTERS, 2, 15),
        [enc("ZA")],
    ]
    out = [build_kwg(ws) for ws in lists]
    out.append(build_kwg(lists[1], gaddag=False))
    out.append(build_kwg(lists[3], gaddag=False))
    out.append(build_kwg([]))
    out.append(unshared_kwg(lists[0]))
    out.append(unshared_kwg(lists[2]))
    return out


def unshared_kwg(words: list[bytes], gstrings: list[bytes] | None = None) -> bytes:
    """A DAWG + GADDAG KWG whose GADDAG shares no list with the DAWG (built as two separate graphs, as a
    builder without one interning table for both would write it): post-separator lists are copies. The
    GADDAG holds gstrings (default: the rotations of the words, which makes a valid file)."""
    from engine_cy.kwg_build import build_kwg

    def nodes_of(data: bytes) -> tuple[int, ...]:
        return struct.unpack(f"<{len(data) // 4}I", data)

    def moved(part: tuple[int, ...], start: int) -> list[int]:
        # drop the part's root pointer (node 0) and renumber its arcs from `start`
        return [(v & ~ARC) | ((v & ARC) - 1 + start if v & ARC else 0) for v in part[1:]]

    if gstrings is None:
        gstrings = sorted(set().union(*(_gaddag_strings(w) for w in words)))
    dawg = nodes_of(build_kwg(words, gaddag=False))
    gaddag = nodes_of(build_kwg(gstrings, gaddag=False))
    d = moved(dawg, 2)
    g = moved(gaddag, 2 + len(d))
    out = moved(dawg[:1] * 2, 2) + moved(gaddag[:1] * 2, 2 + len(d)) + d + g   # the two root pointers
    return struct.pack(f"<{len(out)}I", *out)


def klv_bases(data_dir: Path | None) -> list[bytes]:
    """Small valid KLV2s (deterministic), then the shared NWL20.klv2 / CSW21.klv2 when present."""
    from engine_cy.klv import write_klv2

    rng = random.Random(54321)
    out = []
    for n, alphabet in ((12, [0, 1, 2, 3]), (80, [0, 1, 5, 9, 15, 19, 21, 26]), (200, list(range(27)))):
        rows = {}
        while len(rows) < n:
            key = tuple(sorted(rng.choice(alphabet) for _ in range(rng.randint(1, 6))))
            rows[key] = round(rng.uniform(-30, 40), 3)
        out.append(write_klv2([(list(k), v) for k, v in rows.items()]))
    out.append(write_klv2([([1], 1.5)]))
    if data_dir is not None:
        for name in ("NWL20", "CSW21"):
            path = data_dir / f"{name}.klv2"
            if path.is_file():
                out.append(path.read_bytes())
    return out


def small_lexicon_kwg() -> bytes:
    """The main lexicon used to exercise mutated leave files in a move generator."""
    from engine_cy.kwg_build import build_kwg

    return build_kwg(sorted({enc(w) for w in SMALL_WORDS}))


# ---------------------------------------------------------------- mutators


def _u32(buf: bytearray, off: int) -> int:
    return struct.unpack_from("<I", buf, off)[0]


def _put32(buf: bytearray, off: int, v: int) -> None:
    struct.pack_into("<I", buf, off, v & 0xFFFFFFFF)


def _mutate_graph(buf: bytearray, base: int, n: int, rng: random.Random) -> None:
    """One structure-aware edit of the KWG whose n nodes start at byte offset base of buf."""
    if n == 0:
        return
    i = rng.randrange(n)
    off = base + 4 * i
    v = _u32(buf, off)
    op = rng.randrange(12)
    if op == 0:  # arc to itself or its own list: a cycle
        j = i
        while j > 0 and not (_u32(buf, base + 4 * (j - 1)) & IS_END):
            j -= 1
        _put32(buf, off, (v & ~ARC) | rng.choice([i, j]))
    elif op == 1:  # arc to a root list (an ancestor of everything)
        root = _u32(buf, base) & ARC
        _put32(buf, off, (v & ~ARC) | rng.choice([root, 0, 1, 2]))
    elif op == 2:  # arc past the end, at the end, or anywhere
        _put32(buf, off, (v & ~ARC) | rng.choice([n, n - 1, n + 1, ARC, rng.randrange(n)]))
    elif op == 3:  # tile edits
        tile = rng.choice([0, 1, 26, 27, 62, 63, 64, 0x80, 255, (v >> 24) ^ 1])
        _put32(buf, off, (v & 0xFFFFFF) | (tile << 24))
    elif op == 4:
        _put32(buf, off, v ^ IS_END)
    elif op == 5:
        _put32(buf, off, v ^ ACCEPTS)
    elif op == 6:  # swap two nodes
        j = rng.randrange(n)
        w = _u32(buf, base + 4 * j)
        _put32(buf, off, w)
        _put32(buf, base + 4 * j, v)
    elif op == 7:  # copy a node over another
        _put32(buf, off, _u32(buf, base + 4 * rng.randrange(n)))
    elif op == 8:  # the root pointers
        val = rng.choice(INTERESTING_U32 + [IS_END | rng.randrange(n)])
        _put32(buf, base + 4 * rng.randrange(min(n, 2)), val)
    elif op == 9:  # an arc one off
        _put32(buf, off, (v & ~ARC) | (((v & ARC) + rng.choice([-1, 1])) & ARC))
    elif op == 10:  # arc to a descendant's parent: point a deep node back up to an earlier list
        _put32(buf, off, (v & ~ARC) | rng.randrange(1, max(2, i + 1)))
    else:
        _put32(buf, off, rng.choice(INTERESTING_U32))


def _mutate_bytes(buf: bytearray, rng: random.Random) -> bytearray:
    """One structure-blind edit (may change the length)."""
    n = len(buf)
    op = rng.randrange(8)
    if n == 0:
        return bytearray(rng.randbytes(rng.randrange(1, 16)))
    if op == 0:
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(8 * n)
            buf[k // 8] ^= 1 << (k % 8)
    elif op == 1:
        buf[rng.randrange(n)] = rng.choice(INTERESTING_U8)
    elif op == 2 and n >= 4:
        _put32(buf, rng.randrange(n - 3), rng.choice(INTERESTING_U32))
    elif op == 3:  # truncate (aligned or not)
        cut = rng.randrange(n)
        if rng.random() < 0.5:
            cut -= cut % 4
        del buf[cut:]
    elif op == 4:  # duplicate a chunk in place or insert it
        a = rng.randrange(n)
        chunk = buf[a:a + rng.choice([4, 8, 16, rng.randint(1, 64)])]
        b = rng.randrange(n)
        if rng.random() < 0.5:
            buf[b:b] = chunk
        else:
            buf[b:b + len(chunk)] = chunk
    elif op == 5:  # delete a range (a node when aligned)
        a = rng.randrange(n)
        if rng.random() < 0.6:
            a -= a % 4
            del buf[a:a + 4]
        else:
            del buf[a:a + rng.randint(1, 16)]
    elif op == 6:  # append
        buf += rng.choice([b"\x00" * 4, b"\xff" * 4, rng.randbytes(rng.randint(1, 12)),
                           struct.pack("<I", IS_END)])
    else:
        buf[rng.randrange(n)] = rng.randrange(256)
    return buf


def mutate_kwg(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 5])):
        if rng.random() < 0.7 and len(buf) >= 4:
            _mutate_graph(buf, 0, len(buf) // 4, rng)
        else:
            buf = _mutate_bytes(buf, rng)
    return bytes(buf)


def mutate_klv(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        if len(buf) < 8:
            buf = _mutate_bytes(buf, rng)
            continue
        k = _u32(buf, 0)
        graph_ok = 8 + 4 * k <= len(buf)
        r = rng.random()
        if r < 0.45 and graph_ok:
            _mutate_graph(buf, 4, k, rng)
        elif r < 0.55:  # K
            _put32(buf, 0, rng.choice([k - 1, k + 1, 0, 1, 2, k * 2, 0xFFFFFFFF, (len(buf) - 8) // 4]))
        elif r < 0.65 and graph_ok:  # L
            lv = _u32(buf, 4 + 4 * k)
            _put32(buf, 4 + 4 * k, rng.choice([lv - 1, lv + 1, 0, lv * 2, lv // 2, 0xFFFFFFFF,
                                               (len(buf) - 8 - 4 * k) // 2]))
        elif r < 0.8 and graph_ok:  # a value
            nv = (len(buf) - 8 - 4 * k) // 4
            if nv > 0:
                struct.pack_into("<f", buf, 8 + 4 * k + 4 * rng.randrange(nv), rng.choice(INTERESTING_F32))
        else:
            buf = _mutate_bytes(buf, rng)
    return bytes(buf)


def make_case(kind: str, seed: int, i: int, bases: list[bytes]) -> bytes:
    """Input number i of a campaign (deterministic in seed, kind and i)."""
    rng = random.Random(f"{seed}:{kind}:{i}")
    base = bases[_pick_base(rng, kind, len(bases))]
    if rng.random() < 0.01:
        return base  # now and then the base itself, which must be accepted
    return mutate_kwg(base, rng) if kind == "kwg" else mutate_klv(base, rng)


def _pick_base(rng: random.Random, kind: str, n_bases: int) -> int:
    # KLV: the small bases (first four) most of the time, a shared file (much slower to check) 1 in 25
    if kind == "klv" and n_bases > 4 and rng.random() >= 0.04:
        return rng.randrange(4)
    return rng.randrange(n_bases)


# ---------------------------------------------------------------- exercising one input (worker side)


class Misread(Exception):
    pass


def _format_error() -> type[Exception]:
    """The readers' error type (ValueError in builds older than LexiconFormatError, for comparisons)."""
    from engine_cy import kwg

    return getattr(kwg, "LexiconFormatError", ValueError)


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise Misread(what)


def _gaddag_strings(word: bytes) -> set[bytes]:
    out = {word[::-1]}
    for k in range(1, len(word)):
        out.add(word[:k][::-1] + b"\x00" + word[k:])
    return out


class Exerciser:
    def __init__(self) -> None:
        from engine_cy.alphabet import LetterDistribution
        from engine_cy.kwg import Kwg

        self.ld = LetterDistribution.english()
        self.main_kwg = Kwg(small_lexicon_kwg())

    def kwg(self, data: bytes, rng: random.Random) -> str:
        from engine_cy.kwg import Kwg

        try:
            k = Kwg(data)
        except _format_error():
            return "R"
        words = k.words()
        _expect(len(words) == k.word_count(), f"word_count {k.word_count()} != {len(words)} words")
        _expect(all(words[j] < words[j + 1] for j in range(len(words) - 1)), "words() not strictly ascending")
        rank = {w: j for j, w in enumerate(words)}
        for w in words if len(words) <= 300 else rng.sample(words, 300):
            _expect(k.contains(w), f"contains({list(w)}) is False for a listed word")
            _expect(k.index_of(w) == rank[w], f"index_of({list(w)}) = {k.index_of(w)}, rank {rank[w]}")
        for _ in range(30):
            if words and rng.random() < 0.7:
                w = bytearray(rng.choice(words))
                op = rng.randrange(3)
                if op == 0:
                    w[rng.randrange(len(w))] = rng.randrange(64)
                elif op == 1:
                    w.append(rng.randrange(1, 27))
                else:
                    del w[rng.randrange(len(w)):]
                w = bytes(w)
            else:
                w = bytes(rng.randrange(64) for _ in range(rng.randint(0, 8)))
            _expect(k.contains(w) == (w in rank), f"contains({list(w)}) disagrees with words()")
            _expect(k.index_of(w) == rank.get(w, -1), f"index_of({list(w)}) disagrees with words()")
        _expect(k.to_bytes() == data, "to_bytes() differs from the input")
        _expect(Kwg(k.to_bytes()).word_count() == len(words), "reloaded copy counts differently")
        if k.gaddag_root == 0:
            return "A"
        g = k.gaddag_root
        gstrings = k.words(g)
        _expect(len(gstrings) == k.word_count(g), "GADDAG word_count != len(words(gaddag_root))")
        _expect(k.word_count(g) == sum(len(w) for w in words), "GADDAG count != DAWG letters")
        for s in gstrings if len(gstrings) <= 300 else rng.sample(gstrings, 300):
            _expect(k.accepts_path(g, s), f"accepts_path(gaddag, {list(s)}) is False for a listed string")
        expected: set[bytes] = set()
        for w in words:
            expected |= _gaddag_strings(w)
        got = set(gstrings)
        if got != expected:
            extra = sorted(got - expected)[:1]
            lacks = sorted(expected - got)[:1]
            raise Misread(f"accepted GADDAG is not the rotations of the DAWG words (extra {extra}, "
                          f"lacks {lacks})")
        self._movegen(k, rng, words)
        return "A"

    def _movegen(self, k, rng: random.Random, words: list[bytes]) -> None:
        from engine_cy.board import Board
        from engine_cy.movegen import MoveGen
        from engine_cy.rules import formed_words, play_error

        gen = MoveGen(k, self.ld, None)
        lexicon = set(words)
        board = Board()
        boards = [board]
        placeable = [w for w in words if 2 <= len(w) <= 15 and all(1 <= t <= 26 for t in w)]
        if placeable:
            small = Board()
            w = rng.choice(placeable)
            col = max(0, 7 - len(w) // 2)
            for j, t in enumerate(w):
                small.set_tile(7, col + j, t)
            boards.append(small)
        for b in boards:
            for _ in range(2):
                rack = [rng.randrange(27) for _ in range(7)]
                gen.generate(b, rack, 50, sort=False)
                moves = gen.moves()
                # every play's words are DAWG words (checked against words(), not the reader's contains)
                for m in moves:
                    if m[0] == "place":
                        for fw in formed_words(b, m[1], m[2], m[3], list(m[4])):
                            _expect(fw in lexicon, f"generated a play forming {list(fw)}, not a DAWG word")
                for m in moves if len(moves) <= 40 else rng.sample(moves, 40):
                    if m[0] == "place":
                        err = play_error(b, k, self.ld, m[1], m[2], m[3], list(m[4]))
                        _expect(err is None, f"generated an illegal play: {err}")

    def klv(self, data: bytes, rng: random.Random) -> str:
        from engine_cy.board import Board
        from engine_cy.klv import Klv, write_klv2
        from engine_cy.movegen import MoveGen

        try:
            klv = Klv(data)
        except _format_error():
            return "R"
        n = klv.n_values
        _expect(n == klv.kwg.word_count(), "n_values != leaves in the graph")
        values = klv.values_array
        table = None
        if n <= 5000:
            items = klv.items()
            _expect(len(items) == n, f"items() has {len(items)} entries for {n} values")
            keys = [key for key, _ in items]
            _expect(all(keys[j] < keys[j + 1] for j in range(n - 1)), "leaves not strictly ascending")
            _expect(all(list(key) == sorted(key) for key in keys), "a leave's tiles are not sorted")
            table = dict(items)
            for key, v in items if n <= 200 else rng.sample(items, 200):
                idx = klv.leave_index(list(key))
                _expect(0 <= idx < n and keys[idx] == key, f"leave_index({list(key)}) = {idx}")
                _expect(klv.leave_value(list(key)) == v, f"leave_value({list(key)}) != items() value")
            if all(t <= 62 for key in keys for t in key) and all(abs(v) < 1_000_000 for _, v in items) and n:
                again = Klv(write_klv2([(list(key), v / 1000.0) for key, v in items]))
                _expect(again.items() == items, "write_klv2 round trip differs")
        for _ in range(30):
            rack = [rng.randrange(27) for _ in range(rng.randint(0, 7))]
            idx = klv.leave_index(rack)
            val = klv.leave_value(rack)
            if idx >= 0:
                _expect(idx < n and val == int(values[idx]),
                        f"leave_value({rack}) != value at its index {idx}")
            else:
                _expect(val == 0, f"leave_value({rack}) = {val} for an absent leave")
            if table is not None:
                _expect((bytes(sorted(rack)) in table) == (idx >= 0),
                        f"leave_index({rack}) disagrees with items()")
        gen = MoveGen(self.main_kwg, self.ld, klv)
        for _ in range(2):
            gen.generate(Board(), [rng.randrange(27) for _ in range(7)], 50, sort=False)
            gen.moves(20)
        return "A"


def _inject(action: str) -> None:
    """Simulated failures, to test the campaign's own detection (--inject CASE:ACTION,...)."""
    if action == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif action == "exit":
        os._exit(3)
    elif action == "hang":
        time.sleep(3600)
    elif action == "raise":
        raise RuntimeError("injected")
    elif action == "misread":
        raise Misread("injected")


def worker(kind: str, seed: int, start: int, stop: int, data_dir: Path | None,
           inject: dict[int, str]) -> None:
    """Print `S i` before and `E i VERDICT seconds [detail]` after each input (VERDICT: A accepted and ran,
    R rejected, X unexpected exception, M misread)."""
    bases = kwg_bases() if kind == "kwg" else klv_bases(data_dir)
    ex = Exerciser()
    out = sys.stdout
    out.write("READY\n")
    out.flush()
    for i in range(start, stop):
        data = make_case(kind, seed, i, bases)
        out.write(f"S {i}\n")
        out.flush()
        rng = random.Random(i)
        t0 = time.perf_counter()
        detail = ""
        try:
            if i in inject:
                _inject(inject[i])
            verdict = ex.kwg(data, rng) if kind == "kwg" else ex.klv(data, rng)
        except Misread as exc:
            verdict, detail = "M", str(exc)
        except Exception as exc:  # noqa: BLE001 - any other exception type is a finding
            verdict, detail = "X", f"{type(exc).__name__}: {exc}"
        dt = time.perf_counter() - t0
        detail = detail.replace("\n", " ")[:300]
        out.write(f"E {i} {verdict} {dt:.4f} {detail}\n")
        out.flush()


# ---------------------------------------------------------------- campaign (parent side)


class Campaign:
    """Runs the inputs [0, count) of one kind in worker processes; restarts a worker after a crash or hang."""

    def __init__(self, kind: str, count: int, seed: int, workers: int, data_dir: Path | None,
                 out_dir: Path | None, hang_s: float = HANG_S, inject: str = "") -> None:
        self.kind, self.count, self.seed, self.inject = kind, count, seed, inject
        self.workers = max(1, workers)
        self.data_dir, self.out_dir, self.hang_s = data_dir, out_dir, hang_s
        self.verdicts = {"A": 0, "R": 0}
        self.findings: list[tuple[str, int, str]] = []   # (category, case, detail)
        self.max_case_s = 0.0
        self.slowest_case = -1
        self._bases: list[bytes] | None = None

    def _spawn(self, start: int, stop: int) -> subprocess.Popen:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", self.kind, "--seed", str(self.seed),
               "--start", str(start), "--stop", str(stop)]
        if self.data_dir is not None:
            cmd += ["--data-dir", str(self.data_dir)]
        if self.inject:
            cmd += ["--inject", self.inject]
        # stderr to a file: a worker that writes a lot there must not block on a full pipe
        err = tempfile.TemporaryFile()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=str(ROOT))
        proc.errfile = err  # type: ignore[attr-defined]
        return proc

    def _finding(self, category: str, case: int, detail: str) -> None:
        self.findings.append((category, case, detail))
        if self.out_dir is not None:
            if self._bases is None:
                self._bases = kwg_bases() if self.kind == "kwg" else klv_bases(self.data_dir)
            self.out_dir.mkdir(parents=True, exist_ok=True)
            data = make_case(self.kind, self.seed, case, self._bases)
            ext = "kwg" if self.kind == "kwg" else "klv2"
            (self.out_dir / f"{category}-{self.kind}-seed{self.seed}-case{case}.{ext}").write_bytes(data)

    def run(self) -> None:
        chunk = -(-self.count // self.workers)
        pending = [(a, min(self.count, a + chunk)) for a in range(0, self.count, chunk)]
        sel = selectors.DefaultSelector()
        running = {}   # proc -> state dict

        def launch(start: int, stop: int) -> None:
            if start >= stop:
                return
            proc = self._spawn(start, stop)
            st = {"next": start, "stop": stop, "cur": None, "since": time.monotonic(), "ready": False,
                  "buf": b""}
            running[proc] = st
            sel.register(proc.stdout, selectors.EVENT_READ, proc)

        for a, b in pending:
            launch(a, b)
        while running:
            events = sel.select(timeout=0.2)
            for key, _ in events:
                proc = key.data
                st = running[proc]
                chunk_bytes = os.read(proc.stdout.fileno(), 65536)
                if not chunk_bytes:
                    self._ended(proc, st, sel, running, launch)
                    continue
                st["buf"] += chunk_bytes
                *lines, st["buf"] = st["buf"].split(b"\n")
                for line in lines:
                    self._line(line.decode(), st)
            now = time.monotonic()
            for proc, st in list(running.items()):
                limit = self.hang_s if st["ready"] else STARTUP_S
                if now - st["since"] > limit + 0.5 and (st["cur"] is not None or not st["ready"]):
                    proc.kill()
                    proc.wait()
                    sel.unregister(proc.stdout)
                    del running[proc]
                    if st["cur"] is not None:
                        self._finding("hang", st["cur"], f"no verdict after {now - st['since']:.1f} s")
                        launch(st["cur"] + 1, st["stop"])
                    else:
                        self._finding("hang", st["next"], "worker did not start")
                        launch(st["next"] + 1, st["stop"])

    def _line(self, line: str, st: dict) -> None:
        st["since"] = time.monotonic()
        if line == "READY":
            st["ready"] = True
            return
        parts = line.split(" ", 4)
        if parts[0] == "S":
            st["cur"] = int(parts[1])
            return
        if parts[0] != "E":
            return
        case, verdict, dt = int(parts[1]), parts[2], float(parts[3])
        detail = parts[4] if len(parts) > 4 else ""
        st["cur"] = None
        st["next"] = case + 1
        if dt > self.max_case_s:
            self.max_case_s, self.slowest_case = dt, case
        if verdict in self.verdicts:
            self.verdicts[verdict] += 1
        elif verdict == "X":
            self._finding("unexpected", case, detail)
        elif verdict == "M":
            self._finding("misread", case, detail)
        if dt > self.hang_s and verdict in self.verdicts:
            self._finding("slow", case, f"{dt:.2f} s")

    def _ended(self, proc, st, sel, running, launch) -> None:
        sel.unregister(proc.stdout)
        del running[proc]
        for line in st["buf"].split(b"\n"):
            if line:
                self._line(line.decode(), st)
        rc = proc.wait()
        proc.errfile.seek(0)
        err = proc.errfile.read().decode(errors="replace").strip().splitlines()
        proc.errfile.close()
        if rc == 0 and st["cur"] is None:
            return
        case = st["cur"] if st["cur"] is not None else st["next"]
        self._finding("crash", case, f"exit {rc}: {err[-1] if err else ''}"[:300])
        launch(case + 1, st["stop"])

    def tried(self) -> int:
        return sum(self.verdicts.values()) + sum(1 for f in self.findings if f[0] != "slow")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kwg", type=int, default=2000, help="KWG inputs")
    ap.add_argument("--klv", type=int, default=2000, help="KLV2 inputs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "lexica"),
                    help="directory with NWL20.klv2 / CSW21.klv2 (used when present)")
    ap.add_argument("--out", default="fuzz-findings", help="directory for the inputs behind findings")
    ap.add_argument("--hang", type=float, default=HANG_S, help="seconds one input may take")
    ap.add_argument("--worker", choices=["kwg", "klv"], help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--inject", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    data_dir = Path(args.data_dir) if args.data_dir and Path(args.data_dir).is_dir() else None
    if args.worker:
        inject = {int(c): a for c, a in (item.split(":") for item in args.inject.split(",") if item)}
        worker(args.worker, args.seed, args.start, args.stop, data_dir, inject)
        return
    total_t0 = time.perf_counter()
    all_findings = []
    line = []
    for kind, count in (("kwg", args.kwg), ("klv", args.klv)):
        if count <= 0:
            continue
        t0 = time.perf_counter()
        camp = Campaign(kind, count, args.seed, args.workers, data_dir, Path(args.out), args.hang)
        camp.run()
        dt = time.perf_counter() - t0
        v = camp.verdicts
        print(f"{kind}: tried={camp.tried()} accepted={v['A']} rejected={v['R']} "
              f"seconds={dt:.1f} per_s={camp.tried() / dt:.0f} max_case_s={camp.max_case_s:.3f} "
              f"(case {camp.slowest_case}) "
              f"findings={len(camp.findings)}", flush=True)
        all_findings += [(kind, *f) for f in camp.findings]
        line.append(f"{kind}={count}")
    elapsed = time.perf_counter() - total_t0
    cats = {c: sum(1 for f in all_findings if f[1] == c)
            for c in ("crash", "hang", "unexpected", "misread", "slow")}
    tried = args.kwg + args.klv
    print(" ".join(line), f"tried={tried} seconds={elapsed:.1f} per_s={tried / elapsed:.0f}",
          " ".join(f"{c}{'es' if c == 'crash' else 's'}={n}" for c, n in cats.items()))
    for kind, cat, case, detail in all_findings[:50]:
        print(f"  {cat} {kind} case {case}: {detail}")
    sys.exit(1 if any(cats[c] for c in ("crash", "hang", "unexpected", "misread")) else 0)


if __name__ == "__main__":
    main()
