#!/usr/bin/env python3
"""Trace one request through the package: which of the project's files it enters, in what order, how often.

    .venv/bin/python scripts/trace_request.py            # a pre-endgame request (AXE, 6F .X., 2 plies)
    .venv/bin/python scripts/trace_request.py --calls    # also every call from one file into another

A gRPC server runs in this process on a free port; a profiler on every thread records each call whose code
lies in macondo_server/. A file is "entered" when a call goes into it from another of the project's files
(its returns and the calls within it do not count). The first table lists the files in the order the request
first reaches them, with their layer and how often they were entered; the line below it, the layers in that
order. Needs the shared lexica (MACONDO_DATA_DIR, or ../shared/lexica beside the checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = str(ROOT / "macondo_server") + os.sep
SHARED = Path(os.environ.get("MACONDO_SHARED_DIR", ROOT.parent / "shared"))


def _case(case_id: str) -> str:
    with open(SHARED / "cases" / "cases.jsonl", encoding="utf-8") as fh:
        for line in fh:
            case = json.loads(line)
            if case["id"] == case_id:
                return str(case["cgp"])
    raise SystemExit(f"trace_request: case {case_id} not found in {SHARED / 'cases'}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", action="store_true", help="list every call from one file into another")
    args = ap.parse_args(argv)
    os.environ.setdefault("MACONDO_DATA_DIR", str(SHARED / "lexica"))

    from macondo_client import Client

    from macondo_server.api.grpc_server import create_server
    from macondo_server.engine.settings import Settings

    running = create_server(Settings.load(), "127.0.0.1", 0, max_jobs=2)
    order: list[str] = []
    entries: Counter[str] = Counter()
    calls: list[tuple[str, str, str]] = []
    lock = threading.Lock()

    def rel(filename: str) -> str | None:
        return filename[len(PACKAGE):] if filename.startswith(PACKAGE) else None

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        here = rel(frame.f_code.co_filename)
        if here is None:
            return
        caller = frame.f_back
        while caller is not None and rel(caller.f_code.co_filename) is None and caller.f_back is not None:
            caller = caller.f_back
        came_from = rel(caller.f_code.co_filename) if caller is not None else None
        if came_from == here:
            return
        with lock:
            if here not in entries:
                order.append(here)
            entries[here] += 1
            calls.append((came_from or "-", here, frame.f_code.co_name))

    cgp = _case("peg-axe-2bag-csw21")
    try:
        with Client(f"127.0.0.1:{running.port}", timeout=600) as client:
            threading.setprofile(profile)
            sys.setprofile(profile)
            try:
                final = None
                for snap in client.solve_pre_endgame(cgp, endgame_plies=2, only_solve=["6F .X."], threads=1):
                    final = snap
            finally:
                sys.setprofile(None)
                threading.setprofile(None)  # type: ignore[arg-type]
    finally:
        running.stop(1.0)
    assert final is not None
    print(f"request: SolvePreEndgame, AXE 6F .X. at 2 plies -> {final.plays[0].move.display.strip() if final.plays else '?'}\n")
    print(f"{'file':<34} {'layer':<9} entered")
    for f in order:
        print(f"{f:<34} {f.split(os.sep)[0] if os.sep in f else '-':<9} {entries[f]}")
    layers: list[str] = []
    for f in order:
        layer = f.split(os.sep)[0] if os.sep in f else f
        if not layers or layers[-1] != layer:
            layers.append(layer)
    print("\nlayers in order of first entry: " + " -> ".join(layers))
    if args.calls:
        print()
        for came_from, here, name in calls:
            print(f"{came_from:<34} -> {here}:{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
