"""Side-by-side speed against the MAGPIE C engine, interleaved: project, MAGPIE, project, ...

MAGPIE is not part of this project: build it yourself from its public source (github.com/jvc56/MAGPIE,
`make magpie BUILD=release`) with a data directory holding english.csv, standard15.txt, a win-percentage file
and the lexica (.kwg, .klv2, .wmp), and pass the binary with --magpie or MAGPIE_BIN (it runs with its own
directory as the working directory, where it looks for ./data). Without it only the project column is filled.

Times are CPU seconds of one thread. The project's are measured in this process around the work itself;
MAGPIE's are its process's CPU time (children rusage) minus the CPU time of the same commands with a trivial
amount of work (start-up, lexicon and word-map loading), so both columns count the work only. For the endgame
rows that base run is MAGPIE's endgame at 1 ply, which creates and zeroes its transposition table (MAGPIE
memsets the whole table when it creates it), so MAGPIE's column does not count its table; the project's column
counts everything from creating the solver (its 256 MB table grows from 1.5 MB as the search fills it, so the
memory a search touches, and the kernel's zeroing of it, is inside the timing). Each row reports the median of
--rounds interleaved runs.

Move generation rows (genbest: best move, empty board, AEINQST; genannopy: every move, CSW21 ?ANNOPY;
genblanks: every move, empty board, ??AEIRS): MAGPIE's command line cannot time one generation (its `gen`
command prints the board and the ranked list each time, which costs more than the generation), so these rows
compile a small timing harness (HARNESS_C below, our code) against the MAGPIE build's own object files
(--magpie-src, default: the directory above the binary's bin/, which must hold src/ and obj/release-*/) with
its release flags. The harness loads the position with MAGPIE's `cgp` command, then times --gen-reps calls of
its generate_moves (MOVE_RECORD_BEST, or MOVE_RECORD_ALL into a list large enough to keep every move, left
unsorted as its generator leaves it) with CLOCK_PROCESS_CPUTIME_ID, excluding start-up; the project's column
times as many MoveGen.generate calls (mode best, or all with sort=False) with process_time. Both use their
word maps.

With --threads N (N > 1) the endgame rows search with N threads in both engines and compare wall seconds: the
project's around its solve, MAGPIE's the search time its endgame command reports.

Rows in another lexicon, ROW-LEXICON: `selfplay-LEXICON` (for instance selfplay-FRA20, or selfplay-PL_DEBIAN, a
bundled lexicon), `genbest-LEXICON` (best move, empty board, AEINRST), `genblanks-LEXICON` (every move, empty
board, ??AEIRS) and `endgame-LEXICON` (the bag-empty positions of self-play seeds 2 to 6, 6 plies, no heuristics,
the times summed). A lexicon missing from MAGPIE's data directory is written there (the project's word graph and
leaves) under a name whose prefix gives MAGPIE the distribution (vs_magpie_languages.give_magpie). MAGPIE uses a
word map when its data holds one for that lexicon (`magpie convert dawg2wordmap FRA20 french` makes one) and plays
without one otherwise, which the row's detail says.

Run: .venv/bin/python bench/vs_magpie.py [--magpie PATH] [--rounds 3] [--games 1000] [--rows selfplay,canik,...]
     [--threads N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from endgame import bag_empty_position

from engine_cy.autoplay import AutoplayWorker, game_seed
from engine_cy.endgame import EndgameSolver
from engine_cy.movegen import MoveGen
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.replay import game_from_position, position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.tiles import new_board

from _shared import SHARED, shared_lexica

CASES = SHARED / "cases" / "cases.jsonl"
EMPTY = "/".join(["15"] * 15)
ANNOPY = ("BEDEL10/R1R9U2/O1IT1Q5OM2/W1BIDI4YUM2/N2XI5AT3/E3G4T1R3/S1VOILE2OKA3/T3T1DISPACED1/9AWE1O1/9Z1s1FA/"
          "14R/13GO/13AH/3JUVIE4UTA/INRO3FLENCHES ?ANNOPY/AEGILNS 344/368 0")
# row: (lexicon, CGP board/racks/scores/zeros, mode, generations per timed run)
GEN_ROWS = {
    "genbest": ("NWL20", f"{EMPTY} AEINQST/ 0/0 0", "best", 20000),
    "genannopy": ("CSW21", ANNOPY, "all", 300),
    "genblanks": ("NWL20", f"{EMPTY} ??AEIRS/ 0/0 0", "all", 40),
}
# the rows of another lexicon (ROW-LEXICON, e.g. genbest-FRA20): racks every Latin-alphabet distribution has
LANG_GEN_ROWS = {
    "genbest": (f"{EMPTY} AEINRST/ 0/0 0", "best", 20000),
    "genblanks": (f"{EMPTY} ??AEIRS/ 0/0 0", "all", 40),
}
LANG_ENDGAME = ((2, 3, 4, 5, 6), 6)   # endgame-LEXICON: the bag-empty positions of these self-play seeds, plies

# The timing harness for MAGPIE's move generator (compiled against a MAGPIE build; see the docstring).
HARNESS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "src/impl/config.h"
#include "src/impl/move_gen.h"

static void run(Config *config, const char *cmd) {
  ErrorStack *es = error_stack_create();
  thread_control_set_status(config_get_thread_control(config), THREAD_CONTROL_STATUS_STARTED);
  config_load_command(config, cmd, es);
  if (error_stack_is_empty(es)) config_execute_command(config, es);
  if (!error_stack_is_empty(es)) { fprintf(stderr, "error in: %s\n", cmd); error_stack_print_and_reset(es); exit(1); }
  error_stack_destroy(es);
  thread_control_set_status(config_get_thread_control(config), THREAD_CONTROL_STATUS_FINISHED);
}

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) { fprintf(stderr, "usage: harness LEXICON CGP best|all REPS [WMP 1|0]\n"); return 2; }
  ErrorStack *es = error_stack_create();
  ConfigArgs args = {.data_paths = "./data", .settings_filename = NULL, .use_wmp = true};
  Config *config = config_create(&args, es);
  if (!error_stack_is_empty(es)) { error_stack_print_and_reset(es); return 1; }
  char buf[4096];
  run(config, "set -threads 1 -savesettings false -numplays 15");
  snprintf(buf, sizeof buf, "set -lex %s -wmp %s", argv[1], argc == 6 && strcmp(argv[5], "0") == 0 ? "false" : "true");
  run(config, buf);
  snprintf(buf, sizeof buf, "cgp %s", argv[2]);
  run(config, buf);
  bool best = strcmp(argv[3], "best") == 0;
  int reps = atoi(argv[4]);
  MoveList *ml = move_list_create(best ? 1 : 1000000);
  MoveGenArgs g = {
      .game = config_get_game(config),
      .move_list = ml,
      .move_record_type = best ? MOVE_RECORD_BEST : MOVE_RECORD_ALL,
      .move_sort_type = MOVE_SORT_EQUITY,
      .override_kwg = NULL,
      .eq_margin_movegen = 0,
      .target_equity = EQUITY_MAX_VALUE,
      .target_leave_size_for_exchange_cutoff = UNSET_LEAVE_SIZE,
  };
  generate_moves(&g);
  int n = move_list_get_count(ml);
  double t0 = cpu_now();
  for (int i = 0; i < reps; i++) generate_moves(&g);
  double t = cpu_now() - t0;
  printf("moves=%d cpu_s=%.6f\n", n, t);
  move_list_destroy(ml);
  config_destroy(config);
  error_stack_destroy(es);
  return 0;
}
"""


def build_harness(src_dir: Path) -> Path:
    """Compile HARNESS_C against the MAGPIE build in src_dir (cached by source and object list)."""
    objs = sorted(str(p) for p in src_dir.glob("obj/release-b15-r7/src/**/*.o"))
    if not objs or not (src_dir / "src" / "impl" / "move_gen.h").is_file():
        raise RuntimeError(f"{src_dir} does not hold a MAGPIE release build (src/ and obj/release-b15-r7/)")
    key = hashlib.sha256((HARNESS_C + str(src_dir) + "".join(objs)).encode()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / f"macondo-magpie-gen-{key}"
    if not out.is_file():
        c_file = out.with_suffix(".c")
        c_file.write_text(HARNESS_C)
        subprocess.run(["gcc", "-O3", "-flto", "-march=native", "-DNDEBUG", "-DBOARD_DIM=15", "-DRACK_SIZE=7",
                        f"-I{src_dir}", str(c_file), *objs, "-o", str(out), "-pthread", "-lm"],
                       check=True, capture_output=True, cwd=str(src_dir))
    return out


def magpie_cpu(binary: str, commands: list[str], threads: int = 1) -> tuple[float, str]:
    """CPU seconds (user + system) of one MAGPIE process running `commands` (with `threads` threads), and its
    output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the first command comes from the command line, so the rest run one after another (in its default async
    # mode MAGPIE reads lines that arrive while a command runs as stop/status requests)
    proc = subprocess.run([binary, "set", "-mode", "sync", "-savesettings", "false", "-threads", str(threads)],
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
    ap.add_argument("--rows",
                    default="selfplay,genbest,genannopy,genblanks,canik,passfirst,eldar,seed4,seed2,seed3")
    ap.add_argument("--magpie-src", default=None,
                    help="MAGPIE source tree with its release build (move generation rows; default: beside --magpie)")
    ap.add_argument("--gen-scale", type=float, default=1.0, help="scale the generations per timed run")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    ap.add_argument("--threads", type=int, default=1,
                    help="endgame rows: search with this many threads; above 1 their figures are wall seconds (the "
                         "project's around the solve, MAGPIE's the search time it reports), the other rows stay on "
                         "one thread")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    reg = LexiconRegistry(Settings.load(args.data_dir))
    cases = {}
    if CASES.is_file():
        for line in CASES.read_text().splitlines():
            c = json.loads(line)
            cases[c["id"]] = c
    rows = args.rows.split(",")
    harness = None
    gen_rows = set(GEN_ROWS) | {r for r in rows if r.split("-", 1)[0] in LANG_GEN_ROWS and "-" in r}
    if args.magpie and any(r in gen_rows for r in rows):
        src = Path(args.magpie_src) if args.magpie_src else Path(args.magpie).resolve().parent.parent
        harness = build_harness(src)
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

    def magpie_lexicon(name: str):
        """The lexicon `name`, its name in MAGPIE's data directory (its files written there when missing), and
        whether MAGPIE has a word map for it."""
        from vs_magpie_languages import give_magpie, magpie_name

        lex = reg.get(name)
        mname = magpie_name(name, lex.ld.name)
        if not args.magpie:
            return lex, mname, False
        src = Path(args.magpie).resolve().parent.parent
        give_magpie(src, mname, lex, reg._find(name, ".klv2"))
        return lex, mname, (src / "data" / "lexica" / f"{mname}.wmp").is_file()

    def selfplay_in(name: str):
        """Self-play in lexicon `name` in both engines (MAGPIE given the project's files)."""
        lex, mname, has_wmp = magpie_lexicon(name)

        def project() -> float:
            w = AutoplayWorker(lex.kwg, lex.klv, lex.kwg, lex.klv, lex.ld, lex.new_board())
            t0 = time.process_time()
            for g in range(args.games):
                w.play(game_seed(1, g), g % 2)
            return time.process_time() - t0

        def magpie() -> float:
            wmp = "" if has_wmp else " -wmp false"
            run = head + [f"autoplay games {args.games} -lex {mname} -seed 1{wmp}"]
            base = head + [f"autoplay games 1 -lex {mname} -seed 1{wmp}"]
            magpie.detail = f"MAGPIE {'without' if wmp else 'with'} a word map"
            return magpie_cpu(args.magpie, run)[0] - magpie_cpu(args.magpie, base)[0]

        return project, magpie

    def endgame_row(lex, cgp: str, plies: int, heuristics: bool, mname: str = "", tt_fraction: float = 0.01):
        game = game_from_position(parse_cgp(cgp, lex.ld), lex)
        tt = f"endgame -ttfraction {tt_fraction:g}"

        clock = time.process_time if args.threads == 1 else time.perf_counter

        def project() -> float:
            t0 = clock()
            solver = EndgameSolver(lex.kwg, lex.ld, 256)
            r = solver.solve(game, plies, threads=args.threads, heuristics=heuristics)
            project.detail = f"value {r['value']:+d} nodes {r['nodes']}"
            return clock() - t0

        def magpie() -> float:
            pre = head + [f"set -lex {mname or lex.name} -eplies {plies}", f"cgp {cgp4(cgp)}"]
            if args.threads > 1:
                # wall time: the search time MAGPIE reports ("Endgame (depth: D, time: T s, ...")
                _, out = magpie_cpu(args.magpie, pre + [tt], args.threads)
                lines = [ln for ln in out.splitlines() if ln.startswith("Endgame (")]
                if not lines or "time: " not in lines[-1]:
                    raise RuntimeError(f"no search time in MAGPIE's endgame output: {out[-400:]}")
                magpie.detail = lines[-1]
                return float(lines[-1].split("time: ")[1].split("s")[0])
            cpu, out = magpie_cpu(args.magpie, pre + [tt])
            if not any(ln.startswith("Endgame (") for ln in out.splitlines()):
                raise RuntimeError(f"MAGPIE solved no endgame (is {lex.name} in its data directory?): {out[-400:]}")
            base, _ = magpie_cpu(args.magpie, head + [f"set -lex {mname or lex.name} -eplies 1", f"cgp {cgp4(cgp)}",
                                                      tt])
            magpie.detail = " ".join(ln for ln in out.splitlines() if ln.startswith("Endgame ("))
            return cpu - base

        return project, magpie

    def gen_row(row: str):
        if row in GEN_ROWS:
            lex_name, cgp, mode, reps = GEN_ROWS[row]
            lex, mname, has_wmp = reg.get(lex_name), lex_name, True
        else:
            kind, lex_name = row.split("-", 1)
            cgp, mode, reps = LANG_GEN_ROWS[kind]
            lex, mname, has_wmp = magpie_lexicon(lex_name)
        reps = max(1, int(reps * args.gen_scale))
        pos = parse_cgp(cgp + f" lex {lex_name};")
        gen = MoveGen(lex.kwg, lex.ld, lex.klv)
        rack = pos.racks[0]
        bag = max(0, sum(pos.unseen_counts(0)) - 7)

        def project() -> float:
            n = gen.generate(pos.board, rack, bag, mode=mode, sort=False)
            t0 = time.process_time()
            for _ in range(reps):
                gen.generate(pos.board, rack, bag, mode=mode, sort=False)
            t = time.process_time() - t0
            project.detail = f"{n} moves"
            return t / reps * 1e6

        def magpie() -> float:
            proc = subprocess.run([str(harness), mname, cgp, mode, str(reps), "1" if has_wmp else "0"],
                                  capture_output=True, text=True,
                                  cwd=str(Path(args.magpie).resolve().parent.parent), timeout=3600)
            if proc.returncode != 0 or "cpu_s=" not in proc.stdout:
                raise RuntimeError(f"MAGPIE harness failed on {row}: {(proc.stdout + proc.stderr)[-400:]}")
            fields = dict(f.split("=") for f in proc.stdout.split())
            magpie.detail = f"{fields['moves']} moves" + ("" if has_wmp else ", MAGPIE without a word map")
            return float(fields["cpu_s"]) / reps * 1e6

        return project, magpie

    def summed(parts):
        """One row from several (project, magpie) pairs: their times added, their details joined."""
        def project() -> float:
            t = sum(p() for p, _ in parts)
            project.detail = "; ".join(p.detail for p, _ in parts)
            return t

        def magpie() -> float:
            t = sum(m() for _, m in parts)
            magpie.detail = "; ".join(m.detail for _, m in parts)
            return t

        return project, magpie

    work = {}
    endgame_rows = set()     # timed in wall seconds with --threads above 1
    if "selfplay" in rows:
        work["selfplay"] = (selfplay_project, selfplay_magpie)
    for row in rows:
        if row.startswith("selfplay-"):
            work[row] = selfplay_in(row.split("-", 1)[1])
    # MAGPIE's table is a fraction of the machine's memory, zeroed when made (outside the work: the base run
    # makes it too). The Canik endgame searches 5,391 nodes in about 0.05 s; zeroing 1% of 24 GB costs 0.1 to
    # 0.3 s of system time that varies by more than that between runs, so its table is 0.05% (12 MB here,
    # still far more than its nodes need)
    for row, cid, plies, heur, tt_fraction in (("canik", "eg-canik-nwl20", 4, True, 0.0005),
                                               ("passfirst", "eg-passfirst-csw21", 10, False, 0.01),
                                               ("eldar", "eg-eldar-stuck-v-csw21", 3, True, 0.01)):
        if row in rows and cid in cases:
            work[row] = endgame_row(reg.get(cases[cid]["lexicon"]), cases[cid]["cgp"], plies, heur,
                                    tt_fraction=tt_fraction)
            endgame_rows.add(row)
    for seed in (2, 3, 4):
        row = f"seed{seed}"
        if row in rows:
            g = bag_empty_position(nwl, seed)
            cgp = write_cgp(position_from_game(g, {"lex": "NWL20"}))
            work[row] = endgame_row(nwl, cgp, 8, False)
            endgame_rows.add(row)
    for row in rows:
        if row in gen_rows:
            work[row] = gen_row(row)
        elif row.startswith("endgame-"):
            lex, mname, _ = magpie_lexicon(row.split("-", 1)[1])
            seeds, plies = LANG_ENDGAME
            parts = [endgame_row(lex, write_cgp(position_from_game(bag_empty_position(lex, seed), {"lex": lex.name})),
                                 plies, False, mname) for seed in seeds]
            work[row] = summed(parts)
            endgame_rows.add(row)
    for row, (project, magpie) in work.items():
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(project())
            if args.magpie:
                theirs.append(magpie())
        mo = statistics.median(ours)
        unit = "us" if row in gen_rows else "s"
        kind = "wall" if args.threads > 1 and row in endgame_rows else "cpu"
        line = f"{row:10s} project_{kind}_{unit}={mo:8.3f}"
        if row.startswith("selfplay"):
            line += f" ({args.games / mo:7.1f} games/s)"
        if theirs:
            mt = statistics.median(theirs)
            line += f" magpie_{kind}_{unit}={mt:8.3f}"
            if row.startswith("selfplay"):
                line += f" ({args.games / mt:7.1f} games/s)"
            line += f" ratio={mo / mt:5.2f}"
        for fn in (project, magpie):
            if getattr(fn, "detail", None):
                line += f" | {fn.detail}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
