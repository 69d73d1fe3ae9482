"""Letter distributions and board layouts as data, found by name, and the distribution a lexicon's name implies.

A distribution is a CSV table `letterdistributions/NAME.csv`, a layout a text grid `layouts/NAME.txt`, in any
data directory (the ones given by --data-dir or MACONDO_DATA_DIR first, then the package's own). A lexicon's
distribution is declared beside its files (`NAME.distribution`, one line: the distribution's name), else
follows from its name by the convention the other engines share (NWL20: english, FRA20: french, ...).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from macondo_server.model.text import FormatError, excerpt

PACKAGE_DATA = Path(__file__).resolve().parent.parent / "data"
DISTRIBUTION_DIR = "letterdistributions"
LAYOUT_DIR = "layouts"
DISTRIBUTION_SUFFIX = ".csv"
LAYOUT_SUFFIX = ".txt"
DECLARATION_SUFFIX = ".distribution"     # NAME.distribution beside a lexicon's files: its distribution's name
MAX_TABLE_BYTES = 64 * 1024              # a distribution table or a layout file (real ones are under 2 kB)

DEFAULT_DISTRIBUTION = "english"
DEFAULT_LAYOUT = "standard15"
SUPER_LAYOUT = "standard21"
SUPER_SUFFIX = "_super"
# the names other programs write in CGP's bdn op and GCG's #board-layout pragma, and the layouts they mean
LAYOUT_ALIASES = {"crosswordgame": DEFAULT_LAYOUT, "supercrosswordgame": SUPER_LAYOUT}
GCG_LAYOUT_NAMES = {DEFAULT_LAYOUT: "CrosswordGame", SUPER_LAYOUT: "SuperCrosswordGame"}

# A lexicon's name implies its distribution: these prefixes (case-insensitive), the longest match first.
LEXICON_PREFIXES: dict[str, str] = {
    "NWL": "english", "NSWL": "english", "TWL": "english", "OWL": "english", "OTCWL": "english",
    "OSPD": "english", "OSW": "english", "CSW": "english", "SOWPODS": "english", "AMERICA": "english",
    "CEL": "english", "ECWL": "english", "IWI": "english",
    "FRA": "french", "RD": "german", "DEUTSCH": "german", "CGL": "german", "OSPS": "polish",
    "DISC": "catalan", "NSF": "norwegian", "DSW": "dutch", "FILE": "spanish", "FISE": "spanish",
    "SLV": "slovene",
}

_PREFIXES_LONGEST_FIRST = sorted(LEXICON_PREFIXES, key=len, reverse=True)

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def check_table_name(name: object, what: str) -> str:
    """A distribution or layout name: letters, digits, '_' and '-' (never a path); lowercased."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise FormatError(f"invalid {what} name {excerpt(str(name))}: names are 1 to 64 letters, digits, '_' or '-'")
    return name.lower()


def language_of(distribution: str) -> str:
    """The language a distribution is for: its name up to the first '_' (english_super: english)."""
    return distribution.lower().split("_", 1)[0]


def distribution_by_name(lexicon: str) -> str | None:
    """The distribution a lexicon's name implies (NWL20: english, FRA20: french, CEL_super: english_super), or
    None when the name implies none."""
    upper = lexicon.upper()
    base = None
    for prefix in _PREFIXES_LONGEST_FIRST:
        if upper.startswith(prefix):
            base = LEXICON_PREFIXES[prefix]
            break
    if base is None:
        return None
    if upper.endswith(SUPER_SUFFIX.upper()):
        return base + SUPER_SUFFIX
    return base


def layout_for_distribution(distribution: str) -> str:
    """The board a distribution is played on when nothing names one: the 21x21 board for a `_super` one."""
    return SUPER_LAYOUT if distribution.lower().endswith(SUPER_SUFFIX) else DEFAULT_LAYOUT


class LanguageError(FormatError):
    """An unknown or malformed distribution or layout, or a distribution that does not fit a lexicon."""


@dataclass
class _Loaded:
    stamp: tuple[str, int, int]
    value: object
    checked: float                      # time.monotonic() of the last look at the file


# files are looked at again (found, and their size and time compared) at most this often: a file added or
# changed is seen within a second, and a busy server does not stat its tables for every request
RECHECK_SECONDS = 1.0


# one instance per file version, whichever catalog reads it (positions and lexica then share it)
_FILE_CACHE: dict[tuple[str, str], _Loaded] = {}
_FILE_LOCK = threading.Lock()


def _read(path: Path, what: str) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_TABLE_BYTES:
            raise LanguageError(f"{what} {path.name}: {size} bytes; at most {MAX_TABLE_BYTES}")
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LanguageError(f"{what} {path.name}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise LanguageError(f"{what} {path.name}: cannot be read ({exc.strerror or type(exc).__name__})") from None


def _cached(kind: str, path: Path, name: str) -> object:
    key = (kind, str(path))
    now = time.monotonic()
    with _FILE_LOCK:
        hit = _FILE_CACHE.get(key)
        if hit is not None and now - hit.checked < RECHECK_SECONDS:
            return hit.value
    st = path.stat()
    stamp = (str(path), st.st_size, st.st_mtime_ns)
    with _FILE_LOCK:
        if hit is not None and hit.stamp == stamp:
            hit.checked = now
            return hit.value
    what = "letter distribution" if kind == "ld" else "board layout"
    text = _read(path, what)
    try:
        if kind == "ld":
            value: object = LetterDistribution(text, name)
        else:
            value = Board(text, name)   # validated once: each game gets a copy of this empty board
    except ValueError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LanguageError(f"{what} {path.name}: {msg}") from None
    with _FILE_LOCK:
        _FILE_CACHE[key] = _Loaded(stamp, value, now)
    return value


class Catalog:
    """The distributions, layouts and lexicon declarations of some data directories (searched in order), then
    the package's own tables. Cheap to make: files are read when first named (and again when changed)."""

    def __init__(self, dirs: Iterable[Path] = ()) -> None:
        self.dirs: list[Path] = [Path(d) for d in dirs]
        roots = [*self.dirs, PACKAGE_DATA]
        self._table_roots: list[Path] = list(dict.fromkeys(roots))
        self._found: dict[tuple[str, str, str], tuple[Path | None, float]] = {}
        self._layout_files: dict[str, Path] = {}     # layouts named by their own files (add_layout_file)

    def add_layout_file(self, path: Path) -> str:
        """Make a layout file that a user names directly (on the command line) known to this catalog by its
        file name without `.txt`, ahead of the data directories' layouts of that name; returns the name. The
        file is read and checked now: a LanguageError names the file and its defect."""
        path = Path(path)
        if not path.is_file():
            raise LanguageError(f"layout file {excerpt(str(path), 400)} does not exist")
        stem = path.name[: -len(LAYOUT_SUFFIX)] if path.name.lower().endswith(LAYOUT_SUFFIX) else path.name
        if not NAME_RE.fullmatch(stem):
            raise LanguageError(f"layout file {excerpt(path.name)}: its name (the layout's, without {LAYOUT_SUFFIX}) "
                                "must be 1 to 64 letters, digits, '_' or '-'")
        key = stem.lower()
        if key in LAYOUT_ALIASES:
            raise LanguageError(f"layout file {excerpt(path.name)}: {stem} is another name of the "
                                f"{LAYOUT_ALIASES[key]} layout; rename the file")
        self._layout_files[key] = path
        self._found.clear()
        self._board(key)
        return key

    def _find(self, sub: str, name: str, suffix: str) -> Path | None:
        """The file NAME+suffix (its name in any case) in the first root that has one."""
        if sub == LAYOUT_DIR and name in self._layout_files:
            return self._layout_files[name]
        key = (sub, name, suffix)
        now = time.monotonic()
        hit = self._found.get(key)
        if hit is not None and now - hit[1] < RECHECK_SECONDS:
            return hit[0]
        path = self._search(sub, name, suffix)
        if len(self._found) > 256:
            self._found.clear()
        self._found[key] = (path, now)
        return path

    def _search(self, sub: str, name: str, suffix: str) -> Path | None:
        for root in self._table_roots:
            p = root / sub / f"{name}{suffix}"
            if p.is_file():
                return p
            d = root / sub
            if d.is_dir():
                for q in d.iterdir():
                    if q.name.lower() == p.name and q.is_file():
                        return q
        return None

    def _names(self, sub: str, suffix: str) -> list[str]:
        out: set[str] = set()
        for root in self._table_roots:
            d = root / sub
            if d.is_dir():
                out.update(p.name[: -len(suffix)].lower() for p in d.iterdir()
                           if p.name.endswith(suffix) and NAME_RE.fullmatch(p.name[: -len(suffix)]))
        return sorted(out)

    def distribution_names(self) -> list[str]:
        return self._names(DISTRIBUTION_DIR, DISTRIBUTION_SUFFIX)

    def layout_names(self) -> list[str]:
        return sorted(set(self._names(LAYOUT_DIR, LAYOUT_SUFFIX)) | set(self._layout_files))

    def distribution(self, name: str) -> LetterDistribution:
        """The named distribution (case-insensitive), or a LanguageError naming the known ones."""
        key = check_table_name(name, "letter distribution")
        path = self._find(DISTRIBUTION_DIR, key, DISTRIBUTION_SUFFIX)
        if path is None:
            raise LanguageError(f"unknown letter distribution {excerpt(name)} (known: "
                                f"{', '.join(self.distribution_names())}; add one as "
                                f"{DISTRIBUTION_DIR}/NAME{DISTRIBUTION_SUFFIX} in a data directory)")
        ld = _cached("ld", path, key)
        assert isinstance(ld, LetterDistribution)
        return ld

    def layout_name(self, name: str) -> str:
        """The layout's own name for a name or an alias (CrosswordGame: standard15), checked to exist."""
        key = check_table_name(name, "board layout")
        key = LAYOUT_ALIASES.get(key, key)
        if self._find(LAYOUT_DIR, key, LAYOUT_SUFFIX) is None:
            aliases = ", ".join(f"{GCG_LAYOUT_NAMES[v]} ({v})" for v in GCG_LAYOUT_NAMES)
            raise LanguageError(f"unknown board layout {excerpt(name)} (known: {', '.join(self.layout_names())}; "
                                f"also {aliases}; add one as {LAYOUT_DIR}/NAME{LAYOUT_SUFFIX} in a data directory)")
        return key

    def board(self, name: str = DEFAULT_LAYOUT) -> Board:
        """An empty board of the named layout (or alias)."""
        return self._board(self.layout_name(name)).copy()

    def _board(self, key: str) -> Board:
        path = self._find(LAYOUT_DIR, key, LAYOUT_SUFFIX)
        if path is None:
            raise LanguageError(f"unknown board layout {excerpt(key)}")
        board = _cached("layout", path, key)
        assert isinstance(board, Board)
        return board

    def layout_for_dim(self, dim: int) -> str | None:
        """The standard layout of a board of `dim` rows (15 or 21), or None."""
        for name in (DEFAULT_LAYOUT, SUPER_LAYOUT):
            if self._board(name).dim == dim:
                return name
        return None

    def declared(self, lexicon: str) -> str | None:
        """The distribution declared beside a lexicon's files (NAME.distribution in a data directory)."""
        if not NAME_RE.fullmatch(lexicon):
            return None
        for d in self.dirs:
            p = d / f"{lexicon}{DECLARATION_SUFFIX}"
            if p.is_file():
                text = _read(p, "distribution declaration").strip()
                first = text.split()[0] if text else ""
                return check_table_name(first, f"{p.name}: letter distribution")
        return None

    def lexicon_distribution(self, lexicon: str) -> str | None:
        """A lexicon's own distribution: declared beside it, else implied by its name, else None."""
        return self.declared(lexicon) or distribution_by_name(lexicon)

    def resolve(self, *, explicit: Sequence[tuple[str, str | None]] = (), lexicon: str | None = None,
                layout: str | None = None) -> LetterDistribution:
        """The distribution of a game: the explicit names given (each (where, name); they must agree), else the
        lexicon's own (on the 21x21 board its `_super` form where there is one), else english."""
        chosen: tuple[str, str] | None = None
        for where, name in explicit:
            if not name:
                continue
            key = check_table_name(name, "letter distribution")
            if chosen is not None and chosen[1] != key:
                raise LanguageError(f"{chosen[0]} names the letter distribution {chosen[1]} but {where} names {key}")
            chosen = (where, key)
        if chosen is not None:
            return self.distribution(chosen[1])
        own = self.lexicon_distribution(lexicon) if lexicon else None
        if own is None:
            own = DEFAULT_DISTRIBUTION
        if layout is not None and layout == SUPER_LAYOUT and not own.endswith(SUPER_SUFFIX) and \
                self._find(DISTRIBUTION_DIR, own + SUPER_SUFFIX, DISTRIBUTION_SUFFIX) is not None:
            own += SUPER_SUFFIX
        return self.distribution(own)


PACKAGE_CATALOG = Catalog()


def catalog_for(dirs: Iterable[Path] | None) -> Catalog:
    """A catalog of these data directories (the package's own tables only when None)."""
    return PACKAGE_CATALOG if dirs is None else Catalog(dirs)


_ENV_CATALOGS: dict[str, Catalog] = {}


def environment_catalog() -> Catalog:
    """The catalog of the MACONDO_DATA_DIR directories (os.pathsep-separated), else the package's."""
    chosen = os.environ.get("MACONDO_DATA_DIR")
    if not chosen:
        return PACKAGE_CATALOG
    cat = _ENV_CATALOGS.get(chosen)
    if cat is None:
        if len(_ENV_CATALOGS) > 16:
            _ENV_CATALOGS.clear()
        cat = _ENV_CATALOGS[chosen] = Catalog(Path(p).expanduser() for p in chosen.split(os.pathsep) if p)
    return cat
