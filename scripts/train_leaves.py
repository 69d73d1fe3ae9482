"""Rebuild the shipped leaves and win-probability table of the bundled lexicon (SCOWL70).

1. `macondo leaves train` from nothing (all leaves zero) with the recorded budget and seed below, in --out
   (resumable: run the script again after a stop and it continues);
2. copy the last round's KLV2 to macondo_server/data/lexica/SCOWL70.klv2 (used by default from then on);
3. fit SCOWL70.winpct.csv beside it with scripts/make_winpct.py (static bots with those leaves), the method of
   the default winpct.csv.

Run: .venv/bin/python scripts/train_leaves.py [--workers 2 | --cluster ADDRESS|local:N] [--out /tmp/scowl70-leaves]
(the leaves are the same bytes in-process or on a cluster; the win table is fitted on this machine)
The figures of the shipped run are in docs/leave-training.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "macondo_server" / "data" / "lexica"
LEXICON = "SCOWL70"
# the recorded budget of the shipped leaves
TRAIN = ["--games", "20000", "--rounds", "4", "--pool", "2", "--seed", "70", "--forced", "0.25", "--prior", "16"]
WINPCT = ["--games", "20000", "--seed", "2026"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cluster", help="train on a Dask scheduler (host:port) or local:N worker processes")
    ap.add_argument("--out", default="/tmp/scowl70-leaves", help="the training run's folder")
    ap.add_argument("--skip-winpct", action="store_true")
    args = ap.parse_args()
    out = Path(args.out)
    cmd = [sys.executable, "-m", "macondo_server", "leaves", "train", "--lexicon", LEXICON, "--out", str(out),
           "--workers", str(args.workers), *TRAIN]
    if args.cluster:
        cmd += ["--cluster", args.cluster]
    if (out / "state.json").is_file():
        cmd.append("--resume")
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)
    shutil.copyfile(out / f"{LEXICON}.klv2", DATA / f"{LEXICON}.klv2")
    print(f"copied {out / f'{LEXICON}.klv2'} to {DATA / f'{LEXICON}.klv2'}", flush=True)
    if not args.skip_winpct:
        cmd = [sys.executable, str(ROOT / "scripts" / "make_winpct.py"), "--lexicon", LEXICON, "--threads",
               str(args.workers), *WINPCT, "-o", str(DATA / f"{LEXICON}.winpct.csv")]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)


if __name__ == "__main__":
    main()
