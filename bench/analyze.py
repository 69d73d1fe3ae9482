"""Game review speed: turns analysed per minute by `macondo analyze` at the default budget on a real game (a
complete tournament game of the shared cases, both players), with the time per phase.

Run: .venv/bin/python bench/analyze.py [GAME.gcg] [--threads N] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from macondo_server.analysis.review import AnalyzeOptions, analyze_record
from macondo_server.engine.facade import Engine
from macondo_server.engine.settings import Settings
from macondo_server.model.gcg import read_gcg_file

from _shared import SHARED, shared_lexica

GAME = SHARED / "cases" / "gcg" / "success_standard.gcg"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default=str(GAME), help="a GCG file (default: the shared tournament game)")
    ap.add_argument("--threads", type=int, default=AnalyzeOptions().threads)
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    engine = Engine(Settings.load(args.data_dir))
    record = read_gcg_file(args.game)
    opts = AnalyzeOptions(threads=args.threads)
    engine.lexicon(record.pragma("lexicon") or None)          # load (and compile) the lexicon before timing
    t0 = time.monotonic()
    res = analyze_record(engine, record, opts, name=args.game)
    seconds = time.monotonic() - t0
    per_phase: dict[str, list[float]] = defaultdict(list)
    for t in res.turns:
        per_phase[t.phase or "skipped"].append(t.seconds)
    phases = " ".join(f"{k}={len(v)} turns/{sum(v):.1f}s" for k, v in sorted(per_phase.items()))
    incomplete = sum(not t.complete for t in res.turns)
    print(f"game={res.name} lexicon={res.lexicon} threads={opts.threads} turns={len(res.turns)} "
          f"seconds={seconds:.1f} turns_per_minute={60 * len(res.turns) / seconds:.1f} "
          f"time_limited_turns={incomplete} {phases}", flush=True)


if __name__ == "__main__":
    main()
