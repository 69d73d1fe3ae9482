"""Rebuild the shipped leaves and win-probability table of a bundled lexicon (default SCOWL70).

1. `macondo leaves train` from nothing (all leaves zero) with the recorded budget and seed below, in --out
   (resumable: run the script again after a stop and it continues);
2. copy the last round's KLV2 to macondo_server/data/lexica/NAME.klv2 (used by default from then on);
3. fit NAME.winpct.csv beside it with scripts/make_winpct.py (static bots with those leaves), the method of
   the default winpct.csv (--skip-winpct leaves it out).

Run: .venv/bin/python scripts/train_leaves.py [--lexicon NAME] [--distribution DIST] [--workers 2 | --cluster
ADDRESS|local:N] [--out /tmp/NAME-leaves] (the leaves are the same bytes in-process or on a cluster; the win
table is fitted on this machine). With --distribution (english_super: the 21x21 game) the lexicon is played
with that distribution and the files are NAME.DIST.klv2 and NAME.DIST.winpct.csv, which the lexicon uses when
played so. The figures of the shipped runs are in docs/leave-training.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "macondo_server" / "data" / "lexica"
LEXICON = "SCOWL70"      # the default lexicon
# the recorded budget of the shipped leaves
TRAIN = ["--games", "20000", "--rounds", "4", "--pool", "2", "--seed", "70", "--forced", "0.25", "--prior", "16"]
WINPCT = ["--games", "20000", "--seed", "2026"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lexicon", default=LEXICON, help=f"a bundled lexicon (default {LEXICON})")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cluster", help="train on a Dask scheduler (host:port) or local:N worker processes")
    ap.add_argument("--out", help="the training run's folder (default /tmp/NAME-leaves, NAME in lowercase)")
    ap.add_argument("--skip-winpct", action="store_true")
    ap.add_argument("--distribution", help="train for the lexicon played with this distribution (english_super)")
    args = ap.parse_args()
    lexicon = args.lexicon
    stem = f"{lexicon}.{args.distribution}" if args.distribution else lexicon
    if not any((DATA / f"{lexicon}{suffix}").is_file() for suffix in (".txt", ".txt.gz", ".kwg")):
        raise SystemExit(f"{lexicon} is not a bundled lexicon (no {lexicon}.txt, .txt.gz or .kwg in {DATA})")
    out = Path(args.out or f"/tmp/{stem.lower().replace('.', '-')}-leaves")
    cmd = [sys.executable, "-m", "macondo_server", "leaves", "train", "--lexicon", lexicon, "--out", str(out),
           "--workers", str(args.workers), *TRAIN]
    if args.distribution:
        cmd += ["--distribution", args.distribution]
    if args.cluster:
        cmd += ["--cluster", args.cluster]
    if (out / "state.json").is_file():
        cmd.append("--resume")
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)
    shutil.copyfile(out / f"{lexicon}.klv2", DATA / f"{stem}.klv2")
    print(f"copied {out / f'{lexicon}.klv2'} to {DATA / f'{stem}.klv2'}", flush=True)
    if not args.skip_winpct:
        cmd = [sys.executable, str(ROOT / "scripts" / "make_winpct.py"), "--lexicon", lexicon, "--threads",
               str(args.workers), *WINPCT, "-o", str(DATA / f"{stem}.winpct.csv")]
        if args.distribution:
            cmd += ["--distribution", args.distribution]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)


if __name__ == "__main__":
    main()
