"""Side-by-side speed against the MAGPIE C engine (issue 20's table), interleaved: project, MAGPIE, project, ...

MAGPIE is not part of this project: build it yourself from its public source (github.com/jvc56/MAGPIE,
`make magpie BUILD=release`) with a data directory holding english.csv, standard15.txt, a win-percentage file
and the lexica (.kwg, .klv2, .wmp), and pass the binary with --magpie or MAGPIE_BIN (it runs with its own
directory as the working directory, where it looks for ./data). Without it only the project column is filled.

Times are CPU seconds of one thread. The project's are measured in this process around the work itself;
MAGPIE's are its process's CPU time (children rusage) minus the CPU time of the same commands with a trivial
amount of work (start-up, lexicon and word-map loading), so both columns count the work only. Each row
reports the median of --rounds interleaved runs.

Run: .venv/bin/python bench/vs_magpie.py [--magpie PATH] [--rounds 3] [--games 1000] [--rows selfplay,passfirst,...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path

from endgame import bag_empty_position

from engine_cy.autoplay import AutoplayWorker, game_seed
from engine_cy.endgame import EndgameSolver
from macondo_server.config import Settings
from macondo_server.formats import new_board, parse_cgp, write_cgp
from macondo_server.gamestate import game_from_position, position_from_game
from macondo_server.lexicon import LexiconRegistry

from _shared import SHARED, shared_lexica

CASES = SHARED / "cases" / "cases.jsonl"


def magpie_cpu(binary: str, commands: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) of one MAGPIE process running `commands`, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the first command comes from the command line, so the rest run one after another (in its default async
    # mode MAGPIE reads lines that arrive while a command runs as stop/status requests)
    proc = subprocess.run([binary, "set", "-mode", "sync", "-savesettings", "false", "-threads", "1"],
                          input="\n".join(commands) + "\n", capture_output=True, text=True,
                          cwd=str(Path(binary).resolve().parent.parent), timeout=3600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0 or "error" in proc.stdout.lower():
        raise RuntimeError(f"MAGPIE failed on {commands}: {(proc.stdout + proc.stderr)[-400:]}")
    return cpu, proc.stdout


def cgp4(cgp: str) -> str:
    """The four CGP fields MAGPIE's cgp command takes (board, racks, scores, zeros)."""
    return " ".join(cgp.split()[:4])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--magpie", default=os.environ.get("MAGPIE_BIN"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--rows", default="selfplay,passfirst,eldar,seed4,seed2,seed3")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    reg = LexiconRegistry(Settings.load(args.data_dir))
    cases = {}
    if CASES.is_file():
        for line in CASES.read_text().splitlines():
            c = json.loads(line)
            cases[c["id"]] = c
    rows = args.rows.split(",")
    nwl = reg.get("NWL20")
    head: list[str] = []

    def selfplay_project() -> float:
        w = AutoplayWorker(nwl.kwg, nwl.klv, nwl.kwg, nwl.klv, nwl.ld, new_board())
        t0 = time.process_time()
        for g in range(args.games):
            w.play(game_seed(1, g), g % 2)
        return time.process_time() - t0

    def selfplay_magpie() -> float:
        run = head + [f"autoplay games {args.games} -lex NWL20 -seed 1"]
        base = head + ["autoplay games 1 -lex NWL20 -seed 1"]
        return magpie_cpu(args.magpie, run)[0] - magpie_cpu(args.magpie, base)[0]

    def endgame_row(lex, cgp: str, plies: int, heuristics: bool):
        game = game_from_position(parse_cgp(cgp, lex.ld), lex)

        def project() -> float:
            solver = EndgameSolver(lex.kwg, lex.ld, 256)
            t0 = time.process_time()
            r = solver.solve(game, plies, threads=1, heuristics=heuristics)
            project.detail = f"value {r['value']:+d} nodes {r['nodes']}"
            return time.process_time() - t0

        def magpie() -> float:
            pre = head + [f"set -lex {lex.name} -eplies {plies}", f"cgp {cgp4(cgp)}"]
            cpu, out = magpie_cpu(args.magpie, pre + ["endgame -ttfraction 0.01"])
            base, _ = magpie_cpu(args.magpie, head + [f"set -lex {lex.name} -eplies 1", f"cgp {cgp4(cgp)}",
                                                      "endgame -ttfraction 0.01"])
            magpie.detail = " ".join(ln for ln in out.splitlines() if ln.startswith("Endgame ("))
            return cpu - base

        return project, magpie

    work = {}
    if "selfplay" in rows:
        work["selfplay"] = (selfplay_project, selfplay_magpie)
    for row, cid, plies, heur in (("passfirst", "eg-passfirst-csw21", 10, False),
                                  ("eldar", "eg-eldar-stuck-v-csw21", 3, True)):
        if row in rows and cid in cases:
            work[row] = endgame_row(reg.get(cases[cid]["lexicon"]), cases[cid]["cgp"], plies, heur)
    for seed in (2, 3, 4):
        row = f"seed{seed}"
        if row in rows:
            g = bag_empty_position(nwl, seed)
            cgp = write_cgp(position_from_game(g, {"lex": "NWL20"}))
            work[row] = endgame_row(nwl, cgp, 8, False)
    for row, (project, magpie) in work.items():
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(project())
            if args.magpie:
                theirs.append(magpie())
        mo = statistics.median(ours)
        line = f"{row:10s} project_cpu_s={mo:8.3f}"
        if row == "selfplay":
            line += f" ({args.games / mo:7.1f} games/s)"
        if theirs:
            mt = statistics.median(theirs)
            line += f" magpie_cpu_s={mt:8.3f}"
            if row == "selfplay":
                line += f" ({args.games / mt:7.1f} games/s)"
            line += f" ratio={mo / mt:5.2f}"
        for fn in (project, magpie):
            if getattr(fn, "detail", None):
                line += f" | {fn.detail}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
