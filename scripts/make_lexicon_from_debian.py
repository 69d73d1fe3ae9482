"""Make a lexicon of another language from a Debian word-list package (the bundled FR_DEBIAN, ...).

    apt-get download wfrench                        # or let the script run it (no .deb given)
    .venv/bin/python scripts/make_lexicon_from_debian.py french wfrench_*.deb
    .venv/bin/python scripts/make_lexicon_from_debian.py catalan --reference ../shared/lexica/DISC2.kwg
    .venv/bin/python scripts/make_lexicon_from_debian.py slovene     # hunspell-sl, expanded by unmunch

A language without a word-list package (Slovene) is read from its Hunspell dictionary: the stems and affix
rules of the package (hunspell-sl), expanded into every word form they make by `unmunch` from Debian's
hunspell-tools (downloaded and run from a temporary folder; --tools-deb gives its .deb), read in the
encoding the affix file names (its SET line).

writes NAME.txt.gz (a gzip-compressed word list: one word a line, in the language's tiles, multi-letter tiles
in brackets),
NAME.distribution (the letter distribution's name) and NAME.COPYRIGHT (the source named, then the package's
copyright file as it is) into --out-dir (default: the package's lexica), and prints what it kept and
dropped. With --reference (a word list or word graph of the same distribution) it prints the overlap of the
two lists.

The rules (docs/languages.md#the-bundled-lexica), for every language:
- an entry with a capital is a proper noun or an abbreviation and is dropped; German keeps an entry whose
  only capital is its first letter (German writes every noun so), so German proper nouns stay in its list;
- an entry with anything but letters (hyphen, apostrophe, dot, digit, space) is dropped; Catalan's `l·l` is
  a letter;
- letters are uppercased; the letters the language plays as tiles of their own keep their marks (German
  Ä Ö Ü, Catalan Ç, Spanish Ñ, Norwegian Æ Ø Å and the blank-only Ä Ö Ü, Swedish Å Ä Ö, every Polish
  letter), other marks are folded away (É -> E, Ï -> I), but not in Polish, whose tiles are the whole
  alphabet; German ß is SS, French Œ and Æ are OE and AE;
- letters are read as the distribution's tiles, a multi-letter tile where its letters stand (Catalan L·L,
  NY, QU with QÜ as QU; Spanish CH, LL, RR); a word with a letter the distribution lacks (a K or W in
  Spanish or Catalan, a Q or V in Polish, a Catalan Q without U) is dropped;
- a word without a vowel tile (nor Y) is an abbreviation (cm, kg, bzw) and is dropped, and with it the rare
  interjection (pst, brr);
- words of 2 to 15 tiles are kept (the board is 15 squares; fewer where the word graph format demands it:
  Polish keeps words of up to 13 tiles), once each, sorted.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine_cy.alphabet import LetterDistribution  # noqa: E402
from engine_cy.kwg import Kwg  # noqa: E402
from macondo_server.engine.lexicon import read_word_list  # noqa: E402
from macondo_server.model.languages import Catalog  # noqa: E402
from macondo_server.model.tiles import rack_tiles  # noqa: E402

DATA = ROOT / "macondo_server" / "data" / "lexica"
MIN_TILES, MAX_TILES = 2, 15


@dataclass(frozen=True)
class Source:
    name: str                       # the lexicon's name
    package: str                    # the Debian package
    files: tuple[str, ...]          # its word files (paths inside the package)
    encoding: str = "utf-8"
    keep: str = ""                  # letters that keep their marks (uppercase)
    fold: bool = True               # fold the other letters' marks away
    nouns: bool = False             # keep entries capitalised on their first letter only (German nouns)
    max_tiles: int = MAX_TILES      # the longest words kept
    replace: dict[str, str] = field(default_factory=dict)   # applied after uppercasing
    hunspell: bool = False          # files are a Hunspell dictionary and its affix file, expanded by unmunch


SOURCES: dict[str, Source] = {
    "french": Source("FR_DEBIAN", "wfrench", ("usr/share/dict/french",), replace={"Œ": "OE", "Æ": "AE"}),
    # (str.upper writes ß as SS)
    "german": Source("DE_DEBIAN", "wngerman", ("usr/share/dict/ngerman",), keep="ÄÖÜ", nouns=True),
    "catalan": Source("CA_DEBIAN", "wcatalan", ("usr/share/dict/catalan",), keep="Ç"),
    "spanish": Source("ES_DEBIAN", "wspanish", ("usr/share/dict/spanish",), keep="Ñ"),
    "dutch": Source("NL_DEBIAN", "wdutch", ("usr/share/dict/dutch",)),
    "norwegian": Source("NO_DEBIAN", "wnorwegian", ("usr/share/dict/bokmaal", "usr/share/dict/nynorsk"),
                        encoding="latin-1", keep="ÆØÅÄÖÜ"),
    "swedish": Source("SV_DEBIAN", "wswedish", ("usr/share/dict/swedish",), encoding="latin-1", keep="ÅÄÖ"),
    # 3.3 million words of up to 15 tiles make a word graph of more than the 2^22 nodes a KWG can address;
    # those of up to 13 tiles (2.5 million) make 4.07 million nodes
    "polish": Source("PL_DEBIAN", "wpolish", ("usr/share/dict/polish",), fold=False, max_tiles=13),
    "slovene": Source("SL_DEBIAN", "hunspell-sl", ("usr/share/hunspell/sl_SI.dic", "usr/share/hunspell/sl_SI.aff"),
                      keep="ČŠŽ", hunspell=True),
}
TOOLS = "hunspell-tools"            # the Debian package of unmunch


class Converter:
    """Debian entries -> words in a distribution's tiles, counting why each dropped entry was dropped."""

    def __init__(self, source: Source, ld: LetterDistribution, max_tiles: int | None = None) -> None:
        self.source = source
        self.ld = ld
        self.max_tiles = max_tiles or source.max_tiles
        labels = [ld.label(i) for i in range(1, ld.size)]
        self.tiles = {lab.strip("[]"): lab for lab in labels}
        # the distribution's vowels, and Y (Dutch gym, lynx; German Lynch)
        self.vowels = {ld.label(i) for i in range(1, ld.size) if ld.is_vowel(i)} | ({"Y"} & set(labels))
        self.longest = max(len(t) for t in self.tiles)
        self.dropped: Counter[str] = Counter()

    def letters(self, entry: str) -> str | None:
        """The entry's letters as the game writes them (uppercase, marks folded), or None (dropped)."""
        src = self.source
        caps = [c for c in entry if c.isupper()]
        if caps and not (src.nouns and len(caps) == 1 and entry[0].isupper()):
            self.dropped["a capital (proper noun or abbreviation)"] += 1
            return None
        word = entry.upper()
        for old, new in src.replace.items():
            word = word.replace(old, new)
        out = []
        for ch in word:
            if ch in src.keep or not src.fold:
                out.append(ch)
            else:
                bare = (c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
                out.append("".join(bare))
        word = unicodedata.normalize("NFC", "".join(out))
        if not all(c.isalpha() or c == "·" for c in word):
            self.dropped["not letters only (hyphen, apostrophe, dot, digit, space)"] += 1
            return None
        return word

    def tiles_of(self, word: str) -> list[str] | None:
        """The word as the distribution's tiles, longest tile first at each point, or None."""
        out, i = [], 0
        while i < len(word):
            for n in range(min(self.longest, len(word) - i), 0, -1):
                tile = self.tiles.get(word[i:i + n])
                if tile is not None:
                    out.append(tile)
                    i += n
                    break
            else:
                self.dropped["a letter the distribution lacks"] += 1
                return None
        return out

    def convert(self, entries: list[str]) -> list[str]:
        words: set[str] = set()
        for raw in entries:
            entry = unicodedata.normalize("NFC", raw.strip())
            if not entry:
                continue
            word = self.letters(entry)
            tiles = self.tiles_of(word) if word is not None else None
            if tiles is None:
                continue
            if not MIN_TILES <= len(tiles) <= self.max_tiles:
                self.dropped[f"fewer than {MIN_TILES} or more than {self.max_tiles} tiles"] += 1
                continue
            if not self.vowels.intersection(tiles):
                self.dropped["no vowel (an abbreviation)"] += 1
                continue
            text = "".join(tiles)
            if text in words:
                self.dropped["a word already kept (listed twice, or the same once folded)"] += 1
                continue
            words.add(text)
        for text in words:     # every word reads back as the distribution's tiles (no blank)
            if 0 in rack_tiles(self.ld, text, "word"):
                raise SystemExit(f"word {text}: '?' is not a letter")
        return sorted(words)


def word_set(path: Path, ld: LetterDistribution) -> set[bytes]:
    """A word list's (.txt, .txt.gz) or word graph's (.kwg) words as machine-letter strings."""
    if path.suffix == ".kwg":
        return set(Kwg.from_file(str(path)).words())
    return {bytes(rack_tiles(ld, w, f"{path.name}: word", fold_case=True))
            for w in read_word_list(path).split()}


def overlap(ours: Path, reference: Path, ld: LetterDistribution) -> tuple[int, int, int]:
    """(words of ours, words of the reference, words in both)."""
    a, b = word_set(ours, ld), word_set(reference, ld)
    return len(a), len(b), len(a & b)


def fetch_deb(package: str, into: Path) -> Path:
    """`apt-get download PACKAGE` into `into`; the .deb's path."""
    subprocess.run(["apt-get", "download", package], cwd=into, check=True, stdout=subprocess.DEVNULL)
    debs = sorted(into.glob(f"{package}_*.deb"))
    if not debs:
        raise SystemExit(f"apt-get download {package} gave no .deb")
    return debs[-1]


def read_package(src: Source, deb: Path, tmp: Path,
                 tools_deb: Path | None = None) -> tuple[list[str], str, dict[str, str]]:
    """(the word files' entries, the copyright file, the control fields) of the package's .deb (a Hunspell
    dictionary expanded with unmunch from `tools_deb`, else downloaded)."""
    if not deb.is_file():
        raise SystemExit(f"{deb}: no such file")
    root = tmp / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Package", "Source", "Version", "Homepage"],
                            check=True, capture_output=True, text=True).stdout
    meta = dict(line.split(": ", 1) for line in fields.splitlines() if ": " in line)
    if meta.get("Package") != src.package:
        raise SystemExit(f"{deb.name} is the package {meta.get('Package')!r}, not {src.package}")
    entries: list[str] = []
    if src.hunspell:
        entries = expand_hunspell(root / src.files[0], root / src.files[1], tmp, tools_deb)
    else:
        for f in src.files:
            entries += (root / f).read_text(encoding=src.encoding).splitlines()
    return entries, (root / "usr/share/doc" / src.package / "copyright").read_text(encoding="utf-8"), meta


def expand_hunspell(dic: Path, aff: Path, tmp: Path, tools_deb: Path | None = None) -> list[str]:
    """Every word form a Hunspell dictionary's stems and affix rules make (`unmunch DIC AFF`), decoded in the
    affix file's SET encoding."""
    encoding = "utf-8"
    for line in aff.read_bytes().decode("latin-1").splitlines():
        if line.startswith("SET "):
            encoding = line.split()[1].strip()
            break
    tools = tmp / "tools"
    deb = tools_deb or fetch_deb(TOOLS, tmp)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tools)], check=True)
    unmunch = tools / "usr" / "bin" / "unmunch"
    if not unmunch.is_file():
        raise SystemExit(f"{Path(deb).name} holds no usr/bin/unmunch")
    out = subprocess.run([str(unmunch), str(dic), str(aff)], check=True, capture_output=True).stdout
    return out.decode(encoding).splitlines()



def copyright_header(name: str, language: str, src: Source, meta: dict[str, str]) -> str:
    files = ", ".join(f"/{f}" for f in src.files)
    if src.hunspell:
        files += f" (the Hunspell dictionary's word forms, expanded by unmunch of {TOOLS})"
    source = meta.get("Source", src.package).split()[0]
    upstream = f", upstream {meta['Homepage']}" if meta.get("Homepage") else ""
    return (f"{name}: the words of {files} in the Debian package {src.package} {meta.get('Version', '')}\n"
            f"(https://packages.debian.org/{src.package}; source package {source}{upstream}),\n"
            f"converted to the {language} tiles of the macondo-py engine by "
            "scripts/make_lexicon_from_debian.py\n"
            "(proper nouns, abbreviations and words the tiles cannot spell dropped: docs/languages.md).\n"
            "The package's copyright file follows as it is.\n\n")


def run(args: argparse.Namespace) -> None:
    src = SOURCES[args.language]
    name = args.name or src.name
    if args.max_tiles is not None and not MIN_TILES <= args.max_tiles <= MAX_TILES:
        raise SystemExit(f"--max-tiles {args.max_tiles}: words have {MIN_TILES} to {MAX_TILES} tiles")
    ld = Catalog().distribution(args.language)
    with tempfile.TemporaryDirectory() as tmp:
        deb = Path(args.deb) if args.deb else fetch_deb(src.package, Path(tmp))
        tools = Path(args.tools_deb) if args.tools_deb else None
        entries, copyright_text, meta = read_package(src, deb, Path(tmp), tools)
    conv = Converter(src, ld, args.max_tiles)
    words = conv.convert(entries)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    txt = out / f"{name}.txt.gz"
    # mtime 0 and no file name in the header: the same words give the same bytes
    txt.write_bytes(gzip.compress(("\n".join(words) + "\n").encode("utf-8"), compresslevel=9, mtime=0))
    (out / f"{name}.distribution").write_text(args.language + "\n", encoding="ascii")
    (out / f"{name}.COPYRIGHT").write_text(copyright_header(name, args.language, src, meta) + copyright_text,
                                           encoding="utf-8")
    print(f"{src.package} {meta.get('Version', '')}: {len(entries)} entries, {len(words)} words to {txt} "
          f"({txt.stat().st_size} bytes)")
    for why, n in conv.dropped.most_common():
        print(f"  dropped {n}: {why}")
    if args.reference:
        ref = Path(args.reference)
        n_ours, n_ref, both = overlap(txt, ref, ld)
        print(f"{ref.stem} holds {both / n_ours:.1%} of {name}'s {n_ours} words; {name} holds "
              f"{both / n_ref:.1%} of {ref.stem}'s {n_ref} words ({both} in both)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("language", choices=sorted(SOURCES))
    ap.add_argument("deb", nargs="?", help="the package's .deb (default: `apt-get download` it)")
    ap.add_argument("--out-dir", default=str(DATA))
    ap.add_argument("--name", help="the lexicon's name (default: the language's, FR_DEBIAN ...)")
    ap.add_argument("--tools-deb", help=f"the .deb of {TOOLS} (Hunspell dictionaries; default: `apt-get download` it)")
    ap.add_argument("--max-tiles", type=int, help=f"the longest words kept (default {MAX_TILES}; Polish 13)")
    ap.add_argument("--reference", help="a word list (.txt, .txt.gz) or word graph (.kwg) of the same distribution: "
                                        "print how much of it the new list holds and the other way round")
    args = ap.parse_args()
    try:
        run(args)
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"{' '.join(exc.cmd)} failed (exit {exc.returncode})") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:    # FormatError, LanguageError: ValueErrors
        raise SystemExit(f"{type(exc).__name__}: {exc}") from None


if __name__ == "__main__":
    main()
