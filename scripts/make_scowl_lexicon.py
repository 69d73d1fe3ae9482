"""Regenerate the bundled default lexicon SCOWL70 from Debian's `scowl` package.

    apt-get install scowl
    python scripts/make_scowl_lexicon.py            # writes macondo_server/data/lexica/SCOWL70.txt

Words: the english-words.* and american-words.* lists of size 70 or less, 2 to 15 letters, a-z only
(entries with apostrophes, accents, capitals or digits are dropped), uppercased, sorted, de-duplicated.
SCOWL's copyright notice is shipped beside the list as SCOWL70.COPYRIGHT.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

SIZES = (10, 20, 35, 40, 50, 55, 60, 70)
WORD = re.compile(r"^[a-z]{2,15}$")


def collect(scowl_dir: Path) -> list[str]:
    words: set[str] = set()
    for prefix in ("english-words", "american-words"):
        for size in SIZES:
            path = scowl_dir / f"{prefix}.{size}"
            if not path.is_file():
                raise SystemExit(f"missing {path}: install Debian's scowl package")
            for raw in path.read_bytes().decode("utf-8", "replace").splitlines():
                w = raw.strip()
                if WORD.match(w):
                    words.add(w.upper())
    return sorted(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scowl-dir", default="/usr/share/dict/scowl")
    ap.add_argument("--copyright", default="/usr/share/doc/scowl/copyright")
    ap.add_argument("--out-dir", default=str(Path(__file__).resolve().parent.parent / "macondo_server/data/lexica"))
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    words = collect(Path(args.scowl_dir))
    (out / "SCOWL70.txt").write_text("\n".join(words) + "\n", encoding="ascii")
    shutil.copyfile(args.copyright, out / "SCOWL70.COPYRIGHT")
    print(f"wrote {len(words)} words to {out / 'SCOWL70.txt'}")


if __name__ == "__main__":
    main()
