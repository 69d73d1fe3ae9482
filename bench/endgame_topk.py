"""The endgame's runner-up lines against MAGPIE's top-k endgame (`-etopk K`): the best K first moves and their
values, position by position, on the shared endgame cases (kind "endgame") and on seeded bag-empty positions.

Both engines score the horizon by a greedy playout (MAGPIE's endgame always does), so at a depth that does not
reach the end of the game the two can differ where their playouts differ; the shared cases are searched as deep
as their known answers say the value is exact (passfirst 10 plies, canik 4: it ends within them), eldar 5
(where the two playouts agree on the best five; at 3 plies they do not). A position
agrees when the K values agree rank by rank; its moves agree when the moves above the K-th value are the same
and the rest are all worth the K-th value in both (which of several moves tied at the K-th value is listed can
differ between engines).

MAGPIE is not part of this project: build it yourself from its public source (github.com/jvc56/MAGPIE,
`make magpie BUILD=release`) with a data directory holding letterdistributions/english.csv,
layouts/standard15.txt and the lexica (NWL20.kwg, CSW21.kwg, each with its .klv2: the project's compiled
lexica, from `macondo lexicon build` or its cache, serve), and pass the binary with --magpie or MAGPIE_BIN (it
runs with its own directory as the working directory, where it looks for ./data). Without it only the
project's lines are printed.

Run: .venv/bin/python bench/endgame_topk.py [--magpie PATH] [--k 5] [--threads 1] [--seeds 2,3,4] [--seed-plies 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import time
from pathlib import Path

from endgame import bag_empty_position

from engine_cy.endgame import EndgameSolver, decode_line
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.replay import game_from_position, position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.move import Move, format_move

from _shared import SHARED, shared_lexica

CASES = SHARED / "cases" / "cases.jsonl"
# case id -> plies (as deep as its known answer is exact, or the case's own depth)
CASE_PLIES = {"eg-canik-nwl20": 4, "eg-passfirst-csw21": 10, "eg-eldar-stuck-v-csw21": 5}
# a row of MAGPIE's endgame table: the first move (with its score unless a pass), then V (value) and S (spread)
ROW = re.compile(r"^(?P<move>pass|exch \S+ \d+|[0-9A-Za-z]+ \S+ \d+)\s+(?P<value>-?\d+)\s+(?P<spread>-?\d+)\b")


def magpie_top(binary: str, lex: str, cgp: str, plies: int, k: int, threads: int) -> tuple[list[tuple[str, int]],
                                                                                            float, str]:
    """MAGPIE's top-k first moves [(move as MAGPIE writes it, value)], its reported search seconds, the header."""
    commands = [f"set -lex {lex} -eplies {plies} -etopk {k} -wmp false", f"cgp {' '.join(cgp.split()[:4])}",
                "endgame -ttfraction 0.05"]
    proc = subprocess.run([binary, "set", "-mode", "sync", "-savesettings", "false", "-threads", str(threads)],
                          input="\n".join(commands) + "\n", capture_output=True, text=True,
                          cwd=str(Path(binary).resolve().parent.parent), timeout=3600)
    if proc.returncode != 0 or "error" in proc.stdout.lower():
        raise RuntimeError(f"MAGPIE failed: {(proc.stdout + proc.stderr)[-400:]}")
    lines = proc.stdout.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("Endgame (")]
    if not heads:
        raise RuntimeError(f"no endgame result in MAGPIE's output: {proc.stdout[-400:]}")
    head = lines[heads[-1]]
    out = []
    for ln in lines[heads[-1] + 2:]:
        m = ROW.match(ln.strip())
        if m is None:
            break
        move = m["move"]
        if move != "pass":
            move = move.rsplit(" ", 1)[0]          # drop the score column
        out.append((move, int(m["value"])))
    seconds = float(head.split("time: ")[1].split("s")[0]) if "time: " in head else 0.0
    return out, seconds, head


def project_top(reg: LexiconRegistry, lex_name: str, cgp: str, plies: int, k: int,
                threads: int) -> tuple[list[tuple[str, int]], float, int]:
    """The project's top-k first moves [(move in table notation, value)], wall seconds and nodes."""
    lex = reg.get(lex_name)
    game = game_from_position(parse_cgp(cgp, lex.ld), lex)
    solver = EndgameSolver(lex.kwg, lex.ld, 256)
    solver.clear_table()
    t0 = time.perf_counter()
    res = solver.solve(game, plies, threads=threads, heuristics=True, top_k=k)
    seconds = time.perf_counter() - t0
    out = []
    for e in res["lines"]:
        kind, row, col, vertical, tiles, _ = decode_line(game, e["line"][:1])[0]
        move = Move(kind, row, col, vertical, tiles)
        out.append(("pass" if kind == "pass" else format_move(move, lex.ld, game.board, style="table").strip(), e["value"]))
    return out, seconds, res["nodes"]


def agreement(ours: list[tuple[str, int]], theirs: list[tuple[str, int]]) -> tuple[bool, bool]:
    """(values agree rank by rank, moves agree up to ties at the K-th value)."""
    if [v for _, v in ours] != [v for _, v in theirs]:
        return False, False
    if not ours:
        return True, True
    kth = ours[-1][1]
    above = ({m for m, v in ours if v > kth}, {m for m, v in theirs if v > kth})
    return True, above[0] == above[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--magpie", default=os.environ.get("MAGPIE_BIN"))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seeds", default="2,3,4", help="seeded NWL20 bag-empty positions (bench/endgame.py); '' none")
    ap.add_argument("--seed-plies", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated case ids and seedN names (default: all)")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    reg = LexiconRegistry(Settings.load(args.data_dir))
    work: list[tuple[str, str, str, int]] = []        # (name, lexicon, cgp, plies)
    if CASES.is_file():
        for line in CASES.read_text().splitlines():
            c = json.loads(line)
            if c["kind"] == "endgame":
                work.append((c["id"], c["lexicon"], c["cgp"], CASE_PLIES.get(c["id"], 4)))
    for seed in (int(s) for s in args.seeds.split(",") if s):
        g = bag_empty_position(reg.get("NWL20"), seed)
        work.append((f"seed{seed}", "NWL20", write_cgp(position_from_game(g, {"lex": "NWL20"})), args.seed_plies))
    if args.only:
        work = [w for w in work if w[0] in args.only.split(",")]
    agree_values = agree_moves = compared = 0
    for name, lex, cgp, plies in work:
        ours, secs, nodes = project_top(reg, lex, cgp, plies, args.k, args.threads)
        line = f"{name:24s} plies={plies:2d} project {secs:7.3f}s {nodes:>10d} nodes"
        shown = " | ".join(f"{m} {v:+d}" for m, v in ours)
        if args.magpie:
            theirs, msecs, _ = magpie_top(args.magpie, lex, cgp, plies, args.k, args.threads)
            values, moves = agreement(ours, theirs)
            compared += 1
            agree_values += values
            agree_moves += moves
            line += f"  magpie {msecs:7.3f}s  values {'agree' if values else 'DIFFER'}"
            line += f", moves {'agree' if moves else 'differ'}"
            print(line)
            print(f"    project: {shown}")
            print(f"    magpie:  {' | '.join(f'{m} {v:+d}' for m, v in theirs)}", flush=True)
        else:
            print(line)
            print(f"    project: {shown}", flush=True)
    if compared:
        print(f"agreement: values {agree_values}/{compared} positions, moves (up to ties at the K-th value) "
              f"{agree_moves}/{compared}")


if __name__ == "__main__":
    main()
