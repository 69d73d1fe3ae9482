"""Lexicon resolution: NAME -> word graph (KWG), leaves (KLV2) and letter distribution.

A NAME.kwg in a data directory is used as is; a NAME.txt word list (or NAME.txt.gz, gzip-compressed) is
compiled to NAME.kwg on first use and cached; a NAME.klv2 beside either gives the leave values. The lexicon's
letter distribution is the one NAME.distribution beside them declares, else the one its name implies
(model/languages.py), else english; a game may play it with another distribution of the same language
(english_super for an english lexicon).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import re
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.klv import Klv
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from engine_cy.movegen import MoveGen
from macondo_server.engine.settings import PACKAGE_DATA, Settings, cache_dir
from macondo_server.model.languages import (
    DEFAULT_DISTRIBUTION,
    DEFAULT_LAYOUT,
    GCG_LAYOUT_NAMES,
    SUPER_LAYOUT,
    SUPER_SUFFIX,
    Catalog,
    LanguageError,
    language_of,
    layout_for_distribution,
)
from macondo_server.model.text import FormatError, excerpt
from macondo_server.model.tiles import rack_tiles


class LexiconError(ValueError):
    """A lexicon cannot be found or read."""


class UnknownLexiconError(LexiconError):
    pass


# Said by the CLI and the API alike: it names no path a request could give (requests name lexica, never paths),
# only where the one who runs the engine (the CLI's user, a server's operator) puts the files.
ADD_LEXICON_HINT = ("lexica are added where the engine runs: NAME.kwg or NAME.txt[.gz] (a word list), "
                    "optionally NAME.klv2 (leaves), in a directory given by --data-dir or MACONDO_DATA_DIR "
                    "(for a server: by its operator)")


NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_LEAVES_BYTES = 256 * 1024 * 1024
# a word list, read whole (uncompressed): the largest known, Polish, is about 40 MB
MAX_WORD_LIST_BYTES = 256 * 1024 * 1024
WORD_LIST = ".txt"
WORD_LIST_GZ = ".txt.gz"
# The simulation's win-probability table (scripts/make_winpct.py): NAME.winpct.csv beside a lexicon's files is
# that lexicon's own; any other lexicon uses this default (fitted on NWL20 self-play).
DEFAULT_WINPCT = PACKAGE_DATA / "winpct.csv"
WINPCT_SUFFIX = ".winpct.csv"
WINPCT_ROWS = 601                  # spread +300 .. -300
WINPCT_COLUMNS = (2, 401)          # unseen tiles 0 .. columns - 1: a 100-tile game's table has 94, the 21x21 game's 194
MAX_WINPCT_BYTES = 4 * 1024 * 1024


_ENGLISH_TABLE = LetterDistribution.english().table()


def check_name(name: str, what: str = "lexicon") -> str:
    """A lexicon or leave-set name: letters, digits, '_' and '-', at most 64; never a path."""
    if not NAME_RE.fullmatch(name):
        raise LexiconError(f"invalid {what} name {excerpt(name)}: names are 1 to 64 letters, digits, "
                                  "'_' or '-' (a name, never a path)")
    return name


@dataclass
class Lexicon:
    name: str
    kwg: Kwg
    klv: Klv | None
    ld: LetterDistribution
    source: str
    winpct: Path = field(default=DEFAULT_WINPCT)
    own_distribution: str | None = None      # declared beside the files or implied by the name (None: neither)
    catalog: Catalog = field(default_factory=Catalog, repr=False, compare=False)
    files_dir: Path | None = None            # where its files are (NAME.DISTRIBUTION.klv2 and .winpct.csv too)
    _variants: dict[str, Lexicon] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def win_table(self) -> np.ndarray:
        """The win-probability table of this lexicon (601 x C: rows spread +300..-300, columns unseen tiles
        0..C-1, 94 for a 100-tile game; more unseen tiles read the last column), its own NAME.winpct.csv or the
        default one."""
        return load_win_table(str(self.winpct))

    def is_word(self, word: str) -> bool:
        try:
            mls = rack_tiles(self.ld, word, "word", fold_case=True)
        except ValueError:
            return False
        if 0 in mls:
            return False
        return bool(self.kwg.contains(bytes(mls)))

    @property
    def layout(self) -> str:
        """The board this lexicon's games are played on when nothing names one (the 21x21 board for a `_super`
        distribution)."""
        return layout_for_distribution(self.ld.name)

    def new_board(self) -> Board:
        return self.catalog.board(self.layout)

    def for_layout(self, layout: str) -> Lexicon:
        """This lexicon as a game on `layout` plays it when no distribution is named: on the 21x21 board the
        `_super` form of its distribution where there is one (english: english_super), elsewhere itself."""
        name = self.ld.name
        if layout == SUPER_LAYOUT and not name.endswith(SUPER_SUFFIX) and \
                name + SUPER_SUFFIX in self.catalog.distribution_names():
            return self.for_distribution(name + SUPER_SUFFIX)
        return self

    def for_distribution(self, name: str | None) -> Lexicon:
        """This lexicon played with the named distribution (itself when it already is): one of the same
        language as its own (english_super for an english lexicon), whose alphabet holds every tile of its
        word graph and leaves. A LexiconError says why another does not fit."""
        if not name or name.lower() == self.ld.name.lower():
            return self
        key = name.lower()
        with self._lock:
            hit = self._variants.get(key)
        if hit is not None:
            return hit
        try:
            ld = self.catalog.distribution(key)
        except LanguageError as exc:
            raise LexiconError(f"lexicon {self.name}: {exc}") from None
        own = self.own_distribution
        if own is not None and language_of(own) != language_of(ld.name):
            raise LexiconError(f"lexicon {self.name} is for the {own} letter distribution; it cannot be played "
                               f"with {ld.name} (another language)")
        check_fit(self.kwg, ld, f"lexicon {self.name}: {self.source}")
        # leaves and a win table of its own for this distribution (NAME.DISTRIBUTION.klv2, .winpct.csv: the
        # 21x21 game's tile counts differ), else the lexicon's
        klv, winpct = self.klv, self.winpct
        if self.files_dir is not None:
            own_klv = self.files_dir / f"{self.name}.{ld.name}.klv2"
            if own_klv.is_file():
                klv = load_klv(own_klv, f"lexicon {self.name}: ", ld)
            own_win = self.files_dir / f"{self.name}.{ld.name}{WINPCT_SUFFIX}"
            if own_win.is_file():
                load_win_table(str(own_win))
                winpct = own_win
        if klv is not None and klv is self.klv:
            try:
                klv.check_distribution(ld)
            except ValueError as exc:
                raise LexiconError(f"lexicon {self.name}: its leaves do not fit the {ld.name} distribution: "
                                   f"{exc}") from None
        variant = Lexicon(name=self.name, kwg=self.kwg, klv=klv, ld=ld, source=self.source, winpct=winpct,
                          own_distribution=own, catalog=self.catalog, files_dir=self.files_dir)
        with self._lock:
            return self._variants.setdefault(key, variant)


def record_pragmas(lex: Lexicon, layout: str | None = None) -> list[tuple[str, str]]:
    """The GCG pragmas naming a game's lexicon, and its distribution and board when they are not the standard
    english and 15x15 ones."""
    out = [("lexicon", lex.name)]
    if lex.ld.name.lower() != DEFAULT_DISTRIBUTION:
        out.append(("tile-distribution", lex.ld.name))
    board = (layout or lex.layout).lower()
    if board != DEFAULT_LAYOUT:
        out.append(("board-layout", GCG_LAYOUT_NAMES.get(board, board)))
    return out


def check_fit(kwg: Kwg, ld: LetterDistribution, what: str) -> None:
    """Refuse a word graph whose tiles the distribution does not have (made for another alphabet)."""
    top = kwg_max_tile(kwg)
    if top >= ld.size:
        raise LexiconError(f"{what}: its words use tile {top} but the {ld.name} distribution has tiles 1 to "
                           f"{ld.size - 1}: the word graph was made for another letter distribution")


def kwg_max_tile(kwg: Kwg) -> int:
    """The highest tile number on the word graph's arcs (0 for an empty graph)."""
    arr = kwg.array
    if arr.shape[0] == 0:
        return 0
    return int((arr >> np.uint32(24)).max())


def words_to_ml(lines: list[str], ld: LetterDistribution, source: str = "word list") -> list[bytes]:
    """Uppercase words -> machine-letter bytes; blank lines and comments (#) skipped."""
    out = []
    for lineno, raw in enumerate(lines, 1):
        word = raw.strip().split()[0] if raw.strip() else ""
        if not word or word.startswith("#"):
            continue
        try:
            mls = rack_tiles(ld, word, "word", fold_case=True)
        except ValueError as exc:
            raise LexiconError(f"{source} line {lineno}: {exc}") from None
        if 0 in mls:
            raise LexiconError(f"{source} line {lineno}: '?' is not a letter")
        out.append(bytes(mls))
    return out


def read_word_list(path: Path) -> str:
    """The text of a word list: NAME.txt (UTF-8), or NAME.txt.gz (the same, gzip-compressed); at most
    MAX_WORD_LIST_BYTES of text, else a LexiconError naming the file and the defect."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                raw = fh.read(MAX_WORD_LIST_BYTES + 1)
        else:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_WORD_LIST_BYTES + 1)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise LexiconError(f"{path.name}: not a whole gzip file ({exc or type(exc).__name__})") from None
    except OSError as exc:
        raise LexiconError(f"{path.name}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > MAX_WORD_LIST_BYTES:
        raise LexiconError(f"{path.name}: more than {MAX_WORD_LIST_BYTES >> 20} MB of words")
    try:
        return raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise LexiconError(f"{path.name}: not UTF-8 text (byte {exc.start})") from None


def build_kwg_from_file(path: Path, ld: LetterDistribution | None = None) -> bytes:
    """A word graph (with its GADDAG) of the word list `path` (see read_word_list) in the letters of `ld`."""
    ld = ld or LetterDistribution.english()
    text = read_word_list(path)
    words = words_to_ml(text.splitlines(), ld, path.name)
    if not words:
        raise LexiconError(f"{path.name}: no words")
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
            leave = rack_tiles(ld, parts[0], "leave", fold_case=True)
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
        self.catalog = Catalog(self.settings.data_dirs)
        self._cache: dict[str, Lexicon] = {}
        self._failed: dict[str, tuple[tuple[tuple[str, int, int], ...], LexiconError]] = {}
        self._lock = threading.Lock()

    def _listed(self, suffixes: tuple[str, ...], keep: Callable[[str], object]) -> list[str]:
        """Sorted stems of the data directories' files with one of `suffixes` whose stem `keep` accepts."""
        names = set()
        for d in self.settings.data_dirs:
            if d.is_dir():
                for p in d.iterdir():
                    for suffix in suffixes:
                        stem = p.name[: -len(suffix)]
                        if p.name.endswith(suffix) and stem and "." not in stem and keep(stem):
                            names.add(stem)
        return sorted(names)

    def available(self) -> list[str]:
        """The lexica of the data directories: NAME.kwg, NAME.txt and NAME.txt.gz files whose NAME is in
        capitals (a `_super` suffix aside: CEL_super)."""
        def listed(stem: str) -> bool:
            base = stem[: -len(SUPER_SUFFIX)] if stem.endswith(SUPER_SUFFIX) else stem
            return bool(base) and base.upper() == base and not stem.startswith("README")

        return self._listed((".kwg", WORD_LIST, WORD_LIST_GZ), listed)

    def _find(self, name: str, suffix: str) -> Path | None:
        """The first data directory's NAME + suffix; for a word list (".txt") NAME.txt or NAME.txt.gz."""
        suffixes = (WORD_LIST, WORD_LIST_GZ) if suffix == WORD_LIST else (suffix,)
        for d in self.settings.data_dirs:
            for suf in suffixes:
                p = d / f"{name}{suf}"
                if p.is_file():
                    return p
        return None

    def distribution_of(self, name: str) -> str:
        """The distribution lexicon `name` is played with unless a game names another: declared beside its
        files, else implied by its name, else english (read without loading the lexicon)."""
        try:
            return self.catalog.lexicon_distribution(check_name(name)) or DEFAULT_DISTRIBUTION
        except FormatError as exc:
            raise LexiconError(f"lexicon {name}: {exc}") from None

    def get(self, name: str | None = None, distribution: str | None = None) -> Lexicon:
        """Lexicon `name` (default: the settings' default lexicon), played with `distribution` when given
        (see Lexicon.for_distribution)."""
        name = check_name(name or self.settings.default_lexicon)
        with self._lock:
            lex = self._cache.get(name)
            if lex is None:
                stamp = self._stamp(name)
                failed = self._failed.get(name)
                if failed is not None and failed[0] == stamp:
                    raise type(failed[1])(str(failed[1]))   # the same broken files: the same error, unread
                try:
                    lex = self._load(name)
                except LexiconError as exc:
                    self._failed[name] = (stamp, exc)
                    raise
                self._cache[name] = lex
        return lex.for_distribution(distribution)

    def _stamp(self, name: str) -> tuple[tuple[str, int, int], ...]:
        """Size and modification time of every file that makes up lexicon `name` (a changed file is read
        again after a failure)."""
        out: list[tuple[str, int, int]] = []
        for suffix in (".kwg", ".txt", ".klv2", ".distribution"):
            p = self._find(name, suffix)
            if p is not None:
                st = p.stat()
                out.append((str(p), st.st_size, st.st_mtime_ns))
        return tuple(out)

    def _load(self, name: str) -> Lexicon:
        kwg_path = self._find(name, ".kwg")
        txt_path = self._find(name, ".txt")
        if kwg_path is None and txt_path is None:
            raise UnknownLexiconError(f"unknown lexicon {name!r} (available: {', '.join(self.available()) or 'none'}); "
                                      f"{ADD_LEXICON_HINT}")
        try:
            own = self.catalog.lexicon_distribution(name)
            ld = self.catalog.distribution(own or DEFAULT_DISTRIBUTION)
        except FormatError as exc:
            raise LexiconError(f"lexicon {name}: {exc}") from None
        if kwg_path is not None:
            try:
                kwg = Kwg.from_file(str(kwg_path))
            except (ValueError, OSError) as exc:
                raise LexiconError(f"lexicon {name}: {kwg_path.name}: {exc}") from None
            source = kwg_path.name
            base_dir = kwg_path.parent
        else:
            assert txt_path is not None
            kwg = self._compiled(txt_path, ld)
            source = f"{txt_path.name} (compiled)"
            base_dir = txt_path.parent
        if kwg.gaddag_root == 0:
            raise LexiconError(f"lexicon {name}: {source} has no GADDAG")
        check_fit(kwg, ld, f"lexicon {name}: {source}")
        klv = None
        klv_path = base_dir / f"{name}.klv2"
        if not klv_path.is_file():
            klv_path = self._find(name, ".klv2") or klv_path
        if klv_path.is_file():
            klv = load_klv(klv_path, f"lexicon {name}: ", ld)
        # the word graph's shared tables (counts, child masks, word map) are built on the first generator; build
        # them now, while the registry lock is held, not in the first requests that would contend for them
        MoveGen(kwg, ld, klv)
        winpct = base_dir / f"{name}{WINPCT_SUFFIX}"
        if winpct.is_file():
            load_win_table(str(winpct))     # a broken table is refused with the lexicon, not in a later sim
        else:
            winpct = DEFAULT_WINPCT
        return Lexicon(name=name, kwg=kwg, klv=klv, ld=ld, source=source, winpct=winpct, own_distribution=own,
                       catalog=self.catalog, files_dir=base_dir)

    def describe(self, name: str) -> tuple[bool, str]:
        """(has leaves, source file name) of lexicon `name` from its files, without loading it."""
        if name in self._cache:
            lex = self._cache[name]
            return lex.klv is not None, lex.source
        kwg_path = self._find(name, ".kwg")
        txt_path = self._find(name, ".txt")
        source = kwg_path.name if kwg_path else (f"{txt_path.name} (compiled)" if txt_path else "")
        return self._find(name, ".klv2") is not None, source

    def board_of(self, name: str) -> tuple[str, str]:
        """(letter distribution, board layout) of lexicon `name`'s games when nothing names others, without
        loading it (see distribution_of); ('', '') when its declaration cannot be read (said when it is used)."""
        try:
            distribution = self.distribution_of(name)
        except LexiconError:
            return "", ""
        return distribution, layout_for_distribution(distribution)

    def leave_sets(self) -> list[str]:
        """Names of the NAME.klv2 files in the data directories."""
        return self._listed((".klv2",), NAME_RE.fullmatch)

    def find_leaves(self, name: str) -> Path:
        """The data directories' NAME.klv2 (requests name leave sets, never paths)."""
        check_name(name, "leave set")
        path = self._find(name, ".klv2")
        if path is None:
            raise UnknownLexiconError(f"unknown leave set {name!r} (available: {', '.join(self.leave_sets()) or 'none'})")
        return path

    def _compiled(self, txt_path: Path, ld: LetterDistribution) -> Kwg:
        """Compile NAME.txt (or .txt.gz) to a KWG, cached by the word list's content hash (and the distribution's
        table, for one other than english). The cache file is trusted only when the SHA-256 of its bytes matches the
        sidecar written with it (and it then reads as a valid KWG); otherwise it is compiled again and
        rewritten."""
        data = txt_path.read_bytes()
        table = ld.table()
        key = data if table == _ENGLISH_TABLE else data + b"\0" + table.encode()
        digest = hashlib.sha256(key).hexdigest()[:16]
        cdir = cache_dir()
        stem = txt_path.name[: -len(WORD_LIST_GZ)] if txt_path.name.endswith(WORD_LIST_GZ) else txt_path.stem
        cached = cdir / f"{stem}-{digest}.kwg"
        check = cached.with_suffix(".kwg.sha256")
        try:
            if cached.is_file() and check.is_file():
                kwg_bytes = cached.read_bytes()
                if hashlib.sha256(kwg_bytes).hexdigest() == check.read_text(encoding="ascii").strip():
                    return Kwg(kwg_bytes)
        except (OSError, ValueError, UnicodeDecodeError):
            pass  # unreadable, corrupted or not a valid KWG: compile again
        kwg_bytes = build_kwg_from_file(txt_path, ld)
        kwg = Kwg(kwg_bytes)
        try:
            cdir.mkdir(parents=True, exist_ok=True)
            for path, content in ((cached, kwg_bytes), (check, hashlib.sha256(kwg_bytes).hexdigest().encode())):
                tmp = path.with_name(f"{path.name}.tmp{os.getpid()}-{threading.get_ident()}")
                tmp.write_bytes(content)
                tmp.replace(path)
        except OSError:
            pass  # read-only cache: still usable, just compiled again next time
        return kwg


def load_klv(path: Path, prefix: str = "", ld: LetterDistribution | None = None) -> Klv:
    """Read a KLV2 leave file; errors name the file (not its directory) and the defect. The leaves must fit
    the letter distribution `ld` (default English): a file for another alphabet or distribution is refused."""
    try:
        size = path.stat().st_size
        if size > MAX_LEAVES_BYTES:
            raise LexiconError(f"{prefix}{path.name}: {size} bytes is more than a leave file can hold")
        klv = Klv.from_file(str(path))
        klv.check_distribution(ld or LetterDistribution.english())
        return klv
    except (ValueError, OSError) as exc:
        if isinstance(exc, LexiconError):
            raise
        raise LexiconError(f"{prefix}{path.name}: {exc}") from None


def load_win_table(path: str) -> np.ndarray:
    """Read a win-probability table (CSV, '#' comments): 601 rows of 2 to 401 probabilities (shared: not to be
    written).
    Cached by path, size and modification time."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise LexiconError(f"{p.name}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    return _read_win_table(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _read_win_table(path: str, size: int, mtime_ns: int) -> np.ndarray:
    p = Path(path)
    try:
        if size > MAX_WINPCT_BYTES:
            raise LexiconError(f"{p.name}: larger than a win-probability table can be")
        table = np.loadtxt(p, delimiter=",", comments="#", dtype=np.float64, ndmin=2)
    except (ValueError, OSError) as exc:
        if isinstance(exc, LexiconError):
            raise
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LexiconError(f"{p.name}: not a win-probability table ({why})") from None
    lo, hi = WINPCT_COLUMNS
    if table.shape[0] != WINPCT_ROWS or not lo <= table.shape[1] <= hi:
        raise LexiconError(f"{p.name}: {table.shape[0]} x {table.shape[1]} values, a win-probability table has "
                           f"{WINPCT_ROWS} rows of {lo} to {hi}")
    if not np.all((table >= 0.0) & (table <= 1.0)):
        raise LexiconError(f"{p.name}: a win probability outside 0..1")
    return table
