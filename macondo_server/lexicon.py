"""Lexicon resolution: NAME -> word graph (KWG), leaves (KLV2) and letter distribution.

A NAME.kwg in a data directory is used as is; a NAME.txt word list is compiled to NAME.kwg on first
use and cached; a NAME.klv2 beside either gives the leave values.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from engine_cy.alphabet import LetterDistribution
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg, build_kwg

from .config import Settings, cache_dir


class LexiconError(ValueError):
    """A lexicon cannot be found or read."""


class UnknownLexiconError(LexiconError):
    pass


@dataclass
class Lexicon:
    name: str
    kwg: Kwg
    klv: Klv | None
    ld: LetterDistribution
    source: str

    def is_word(self, word: str) -> bool:
        try:
            mls = self.ld.parse_rack(word.upper())
        except ValueError:
            return False
        if 0 in mls:
            return False
        return bool(self.kwg.contains(bytes(mls)))


def words_to_ml(lines: list[str], ld: LetterDistribution, source: str = "word list") -> list[bytes]:
    """Uppercase words -> machine-letter bytes; blank lines and comments (#) skipped."""
    out = []
    for lineno, raw in enumerate(lines, 1):
        word = raw.strip().split()[0] if raw.strip() else ""
        if not word or word.startswith("#"):
            continue
        try:
            mls = ld.parse_rack(word.upper())
        except ValueError as exc:
            raise LexiconError(f"{source} line {lineno}: {exc}") from None
        if 0 in mls:
            raise LexiconError(f"{source} line {lineno}: '?' is not a letter")
        out.append(bytes(mls))
    return out


def build_kwg_from_file(path: Path, ld: LetterDistribution | None = None) -> bytes:
    ld = ld or LetterDistribution.english()
    with open(path, encoding="utf-8", errors="strict") as fh:
        words = words_to_ml(fh.read().splitlines(), ld, str(path))
    if not words:
        raise LexiconError(f"{path}: no words")
    return build_kwg(words, gaddag=True)


def klv2_from_csv(text: str, ld: LetterDistribution | None = None, source: str = "CSV") -> bytes:
    """KLV2 bytes from `leave,value` lines (value in points; '?' is the blank; a header line is allowed)."""
    from engine_cy.klv import write_klv2

    ld = ld or LetterDistribution.english()
    rows = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2:
            raise LexiconError(f"{source} line {lineno}: expected 'leave,value'")
        try:
            value = float(parts[1])
        except ValueError:
            if lineno == 1:
                continue  # header
            raise LexiconError(f"{source} line {lineno}: value {parts[1]!r} is not a number") from None
        try:
            leave = ld.parse_rack(parts[0].upper())
        except ValueError as exc:
            raise LexiconError(f"{source} line {lineno}: {exc}") from None
        if not 1 <= len(leave) <= 6:
            raise LexiconError(f"{source} line {lineno}: a leave has 1 to 6 tiles")
        rows.append((leave, value))
    if not rows:
        raise LexiconError(f"{source}: no leaves")
    try:
        return write_klv2(rows)
    except ValueError as exc:
        raise LexiconError(f"{source}: {exc}") from None


class LexiconRegistry:
    """Loads each lexicon once; shared read-only across threads."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.load()
        self._cache: dict[str, Lexicon] = {}
        self._lock = threading.Lock()

    def available(self) -> list[str]:
        names = set()
        for d in self.settings.data_dirs:
            if d.is_dir():
                for p in d.iterdir():
                    if p.suffix in (".kwg", ".txt") and p.stem.upper() == p.stem and not p.stem.startswith("README"):
                        names.add(p.stem)
        return sorted(names)

    def _find(self, name: str, suffix: str) -> Path | None:
        for d in self.settings.data_dirs:
            p = d / f"{name}{suffix}"
            if p.is_file():
                return p
        return None

    def get(self, name: str | None = None) -> Lexicon:
        name = name or self.settings.default_lexicon
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise UnknownLexiconError(f"invalid lexicon name {name!r}")
        with self._lock:
            if name in self._cache:
                return self._cache[name]
            lex = self._load(name)
            self._cache[name] = lex
            return lex

    def _load(self, name: str) -> Lexicon:
        ld = LetterDistribution.english()
        kwg_path = self._find(name, ".kwg")
        txt_path = self._find(name, ".txt")
        if kwg_path is not None:
            try:
                kwg = Kwg.from_file(str(kwg_path))
            except ValueError as exc:
                raise LexiconError(f"lexicon {name}: {kwg_path}: {exc}") from None
            source = str(kwg_path)
            base_dir = kwg_path.parent
        elif txt_path is not None:
            kwg = Kwg(self._compiled(txt_path, ld))
            source = str(txt_path)
            base_dir = txt_path.parent
        else:
            dirs = ", ".join(str(d) for d in self.settings.data_dirs)
            raise UnknownLexiconError(f"unknown lexicon {name!r} (looked for {name}.kwg / {name}.txt in {dirs})")
        if kwg.gaddag_root == 0:
            raise LexiconError(f"lexicon {name}: {source} has no GADDAG")
        klv = None
        klv_path = base_dir / f"{name}.klv2"
        if not klv_path.is_file():
            klv_path = self._find(name, ".klv2") or klv_path
        if klv_path.is_file():
            try:
                klv = Klv.from_file(str(klv_path))
            except ValueError as exc:
                raise LexiconError(f"lexicon {name}: {klv_path}: {exc}") from None
        return Lexicon(name=name, kwg=kwg, klv=klv, ld=ld, source=source)

    def _compiled(self, txt_path: Path, ld: LetterDistribution) -> bytes:
        """Compile NAME.txt to NAME.kwg, cached by the word list's content hash."""
        data = txt_path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:16]
        cdir = cache_dir()
        cached = cdir / f"{txt_path.stem}-{digest}.kwg"
        if cached.is_file():
            return cached.read_bytes()
        kwg_bytes = build_kwg_from_file(txt_path, ld)
        try:
            cdir.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".kwg.tmp{os.getpid()}")
            tmp.write_bytes(kwg_bytes)
            tmp.replace(cached)
        except OSError:
            pass  # read-only cache: still usable, just compiled again next time
        return kwg_bytes
