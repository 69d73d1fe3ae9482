"""Move generation in other languages and on the 21x21 board, move for move against the MAGPIE C engine.

For each lexicon (FRA20 and DISC2 on the 15x15 board, CEL_super on the 21x21 one) this builds positions with
the project's own engine (self-play from the empty board, the mover's rack at each turn; then "hard racks": the
same positions with racks rebuilt from the unseen tiles to hold blanks and, in Catalan, the multi-letter tiles
L·L, NY and QU), and generates every legal move in both engines. A position agrees when both engines list the
same moves (placements by square, direction and tiles, blanks and played-through squares included; exchanges
by tiles; the pass), each with the same score and the same equity in millipoints (the pass's equity is not
compared: MAGPIE gives it a sentinel value).

MAGPIE is not part of this project: build it yourself from its public source (github.com/jvc56/MAGPIE), once
as its README describes for the 15x15 board and once more with its board-size build option set to 21, each with a
data directory (letterdistributions/ french.csv, catalan.csv, english_super.csv; layouts/ standard15.txt,
standard21.txt; lexica/ FRA20.kwg, FRA20.klv2, DISC2.kwg, DISC2.klv2, CEL_super.kwg and NWL20.klv2, the leaves
both engines use on the 21x21 board, where none are published for CEL_super). Pass the source trees with
--magpie15 and --magpie21 (each holding src/, data/ and its release objects under obj/release-b15-r7/ or
obj/release-b21-r7/). The comparison harness (HARNESS_C below, this project's code) is compiled against those
objects: it reads CGP lines, runs MAGPIE's `cgp` command and its generate_moves (every move, sorted by equity)
and prints each move as machine letters, score and equity.

A lexicon whose name MAGPIE cannot place in a distribution (the bundled PL_DEBIAN, ...) is written into its
data directory under its distribution's prefix (OSPS_PL_DEBIAN.kwg and .klv2), the word graph compiled here.

Run: .venv/bin/python bench/vs_magpie_languages.py --magpie15 DIR --magpie21 DIR [--positions 300] [--seed 1]
     [--lexica FRA20,DISC2,CEL_super] [--data-dir DIR] [--show 5]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine_cy.game import Game
from engine_cy.movegen import MoveGen
from macondo_server.engine.lexicon import Lexicon, LexiconRegistry, load_klv
from macondo_server.engine.replay import position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.position import Position

from _shared import shared_lexica

HARNESS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/impl/config.h"
#include "src/impl/move_gen.h"

static int run(Config *config, const char *cmd) {
  ErrorStack *es = error_stack_create();
  thread_control_set_status(config_get_thread_control(config), THREAD_CONTROL_STATUS_STARTED);
  config_load_command(config, cmd, es);
  if (error_stack_is_empty(es)) config_execute_command(config, es);
  int ok = error_stack_is_empty(es);
  if (!ok) { printf("ERROR %s\n", cmd); error_stack_print_and_reset(es); }
  error_stack_destroy(es);
  thread_control_set_status(config_get_thread_control(config), THREAD_CONTROL_STATUS_FINISHED);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: harness 'set ...' < cgp lines\n"); return 2; }
  ErrorStack *es = error_stack_create();
  ConfigArgs args = {.data_paths = "./data", .settings_filename = NULL, .use_wmp = false};
  Config *config = config_create(&args, es);
  if (!error_stack_is_empty(es)) { error_stack_print_and_reset(es); return 1; }
  if (!run(config, "set -threads 1 -savesettings false")) return 1;
  if (!run(config, argv[1])) return 1;
  MoveList *ml = move_list_create(400000);
  static char line[16384], cmd[16500];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0]) continue;
    snprintf(cmd, sizeof cmd, "cgp %s", line);
    if (!run(config, cmd)) { printf("END\n"); fflush(stdout); continue; }
    MoveGenArgs g = {
        .game = config_get_game(config),
        .move_list = ml,
        .move_record_type = MOVE_RECORD_ALL,
        .move_sort_type = MOVE_SORT_EQUITY,
        .override_kwg = NULL,
        .eq_margin_movegen = 0,
        .target_equity = EQUITY_MAX_VALUE,
        .target_leave_size_for_exchange_cutoff = UNSET_LEAVE_SIZE,
    };
    generate_moves(&g);
    int n = move_list_get_count(ml);
    for (int i = 0; i < n; i++) {
      const Move *m = move_list_get_move(ml, i);
      game_event_t t = move_get_type(m);
      char kind = t == GAME_EVENT_TILE_PLACEMENT_MOVE ? 'P' : (t == GAME_EVENT_EXCHANGE ? 'X' : 'S');
      printf("%c %d %d %d %d %d", kind, move_get_row_start(m), move_get_col_start(m), move_get_dir(m),
             (int)move_get_score(m), (int)move_get_equity(m));
      int len = t == GAME_EVENT_TILE_PLACEMENT_MOVE ? move_get_tiles_length(m) : move_get_tiles_played(m);
      for (int j = 0; j < len; j++) printf(" %d", (int)move_get_tile(m, j));
      printf("\n");
    }
    printf("END\n");
    fflush(stdout);
  }
  move_list_destroy(ml);
  config_destroy(config);
  error_stack_destroy(es);
  return 0;
}
"""


def build_harness(src_dir: Path, dim: int) -> Path:
    """Compile HARNESS_C against the MAGPIE release objects of board size `dim` in src_dir (cached)."""
    objs = sorted(str(p) for p in src_dir.glob(f"obj/release-b{dim}-r7/src/**/*.o"))
    if not objs or not (src_dir / "src" / "impl" / "move_gen.h").is_file():
        raise SystemExit(f"{src_dir} does not hold a MAGPIE release build for the {dim}x{dim} board "
                         f"(src/ and obj/release-b{dim}-r7/)")
    key = hashlib.sha256((HARNESS_C + str(src_dir) + str(dim) + "".join(objs)).encode()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / f"macondo-magpie-lang-{key}"
    if not out.is_file():
        c_file = out.with_suffix(".c")
        c_file.write_text(HARNESS_C)
        subprocess.run(["gcc", "-O2", "-flto", "-march=native", "-DNDEBUG", f"-DBOARD_DIM={dim}", "-DRACK_SIZE=7",
                        f"-I{src_dir}", str(c_file), *objs, "-o", str(out), "-pthread", "-lm"],
                       check=True, capture_output=True, cwd=str(src_dir))
    return out


# a move as both sides list it: (kind, row, col, vertical, tiles, score in points, equity in millipoints)
MoveKey = tuple[str, int, int, int, tuple[int, ...], int, int]


# MAGPIE knows a lexicon's letter distribution by its name's prefix; a lexicon whose name it cannot place (the
# bundled PL_DEBIAN, ...) is handed to it under its distribution's prefix (OSPS_PL_DEBIAN)
MAGPIE_PREFIX = {"english": "NWL", "english_super": "CEL", "french": "FRA", "german": "RD", "catalan": "DISC",
                 "dutch": "DSW", "norwegian": "NSF", "spanish": "FILE", "polish": "OSPS"}


def magpie_name(name: str, distribution: str) -> str:
    prefix = MAGPIE_PREFIX.get(distribution)
    if prefix is None:
        raise SystemExit(f"{name}: MAGPIE has no {distribution} letter distribution")
    return name if name.upper().startswith(prefix) else f"{prefix}_{name}"


def give_magpie(src_dir: Path, magpie_lex: str, lex: Lexicon, klv_path: str | None) -> None:
    """Write the lexicon's word graph (compiled here, when it is a word list) and its leaves into MAGPIE's data
    directory under `magpie_lex`, unless files of that name are there."""
    lexica = src_dir / "data" / "lexica"
    kwg, klv = lexica / f"{magpie_lex}.kwg", lexica / f"{magpie_lex}.klv2"
    if not kwg.exists():
        kwg.write_bytes(lex.kwg.to_bytes())
        print(f"  wrote {kwg} (the project's word graph of {lex.name})")
    if not klv.exists() and klv_path:
        klv.write_bytes(Path(klv_path).read_bytes())
        print(f"  wrote {klv} ({Path(klv_path).name})")


def magpie_moves(harness: Path, src_dir: Path, config: str, cgps: list[str]) -> list[set[MoveKey] | str]:
    """Every move MAGPIE generates for each CGP (its 4 fields), or the error it gave."""
    proc = subprocess.run([str(harness), config], input="".join(c + "\n" for c in cgps), capture_output=True,
                          text=True, cwd=str(src_dir), timeout=7200)
    if proc.returncode != 0:
        raise SystemExit(f"MAGPIE harness failed: {(proc.stdout + proc.stderr)[-600:]}")
    out: list[set[MoveKey] | str] = []
    cur: set[MoveKey] = set()
    err = ""
    for line in proc.stdout.splitlines():
        if line == "END":
            out.append(err or cur)
            cur, err = set(), ""
        elif line.startswith("ERROR"):
            err = line
        elif line and line[0] in "PXS":
            f = line.split()
            kind, row, col, d, score, eq = f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4]), int(f[5])
            tiles = tuple(int(x) for x in f[6:])
            if kind == "P":
                cur.add(("place", row, col, d, tiles, score // 1000, eq))
            elif kind == "X":
                cur.add(("exchange", 0, 0, 0, tuple(sorted(tiles)), 0, eq))
            else:
                cur.add(("pass", 0, 0, 0, (), 0, 0))
        elif line.strip():
            err = err or line     # MAGPIE's own error text follows the ERROR line
    if len(out) != len(cgps):
        raise SystemExit(f"MAGPIE harness answered {len(out)} positions of {len(cgps)}: "
                         f"{proc.stdout[-400:]}{proc.stderr[-400:]}")
    return out


def project_moves(gen: MoveGen, pos: Position) -> set[MoveKey]:
    bag = max(0, sum(pos.unseen_counts(0)) - 7)
    opp = list(pos.racks[1]) if bag == 0 else None
    gen.generate(pos.board, list(pos.racks[0]), bag, opp)
    out: set[MoveKey] = set()
    for kind, row, col, vertical, tiles, score, equity, _tp, _leave in gen.moves():
        if kind == "place":
            out.add(("place", row, col, int(vertical), tuple(tiles), score, equity))
        elif kind == "exchange":
            out.add(("exchange", 0, 0, 0, tuple(sorted(tiles)), 0, equity))
        else:
            out.add(("pass", 0, 0, 0, (), 0, 0))
    return out


@dataclass
class Suite:
    lexicon: Lexicon
    gen: MoveGen
    positions: list[Position]


def selfplay_positions(lex: Lexicon, gen: MoveGen, n: int, rng: random.Random) -> list[Position]:
    """Positions of games the project plays against itself (each move one of the best five by equity), both
    racks written, every turn until n positions."""
    out: list[Position] = []
    while len(out) < n:
        game = Game(lex.kwg, lex.ld, lex.new_board(), rng.getrandbits(63))
        game.fill_rack(0)
        game.fill_rack(1)
        while not game.game_over and len(out) < n:
            pos = position_from_game(game, {"lex": lex.name})
            out.append(pos)
            bag = game.bag_size
            opp = game.rack(1 - game.on_turn) if bag == 0 else None
            gen.generate(game.board, game.rack(game.on_turn), bag, opp)
            moves = gen.moves(5)
            kind, row, col, vertical, tiles, score, _eq, _tp, _leave = rng.choice(moves)
            game.play(kind, row, col, vertical, tiles, score)
    return out


def hard_rack_positions(lex: Lexicon, base: list[Position], n: int, rng: random.Random) -> list[Position]:
    """The given positions with the mover's rack rebuilt from the tiles the mover cannot see but the bag holds
    (the opponent's rack kept): blanks and multi-letter tiles first, then the highest-valued letters."""
    ld = lex.ld
    special = [ml for ml in range(1, ld.size) if len(ld.labels[ml]) > 1]
    out: list[Position] = []
    for pos in base:
        if len(out) >= n:
            break
        pool_counts = pos.unseen_counts(0)
        for t in pos.racks[1]:
            pool_counts[t] -= 1
        for t in pos.racks[0]:
            pool_counts[t] += 1
        pool = [ml for ml in range(ld.size) for _ in range(pool_counts[ml])]
        if len(pool) < 2:
            continue
        first = [t for t in pool if t == 0 or t in special]
        rest = [t for t in pool if t not in first]
        rng.shuffle(first)
        rest.sort(key=lambda t: (-ld.score(t), rng.random()))
        k = min(7, len(pool))
        rack = (first + rest[: 3])[:k]
        others = _minus(pool, rack)
        rng.shuffle(others)
        rack = rack + others[: k - len(rack)]
        out.append(Position(board=pos.board.copy(), racks=(rack, list(pos.racks[1])), scores=pos.scores,
                            zeros=pos.zeros, ops=dict(pos.ops), ld=ld))
    return out


def _minus(pool: list[int], taken: list[int]) -> list[int]:
    rest = list(pool)
    for t in taken:
        rest.remove(t)
    return rest


def empty_board_positions(lex: Lexicon, n: int, rng: random.Random) -> list[Position]:
    """Openings: racks drawn from the whole distribution, half of them with a blank or a multi-letter tile."""
    ld = lex.ld
    special = [ml for ml in range(ld.size) if ml == 0 or len(ld.labels[ml]) > 1]
    out = []
    for i in range(n):
        bag = [ml for ml in range(ld.size) for _ in range(ld.count(ml))]
        rng.shuffle(bag)
        rack = bag[:7]
        spare = [j for j in range(7, len(bag)) if bag[j] in special]
        if i % 2 == 0 and spare:
            rack[0] = bag[rng.choice(spare)]      # a blank or multi-letter tile from the rest of the bag
        out.append(Position(board=lex.new_board(), racks=(rack, []), scores=(0, 0), zeros=0,
                            ops={"lex": lex.name}, ld=ld))
    return out


def cgp4(pos: Position) -> str:
    return " ".join(write_cgp(pos).split()[:4])


def show(key: MoveKey, lex: Lexicon) -> str:
    kind, row, col, d, tiles, score, eq = key
    if kind != "place":
        return f"{kind} {lex.ld.word_str(list(tiles))} eq {eq / 1000:.3f}"
    coord = f"{chr(65 + col)}{row + 1}" if d else f"{row + 1}{chr(65 + col)}"
    return f"{coord} {lex.ld.word_str(list(tiles))} {score} eq {eq / 1000:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--magpie15", type=Path, required=True, help="MAGPIE source tree with its 15x15 release build")
    ap.add_argument("--magpie21", type=Path, help="MAGPIE source tree with its 21x21 release build")
    ap.add_argument("--positions", type=int, default=300, help="self-play positions per lexicon (and as many "
                                                                "hard-rack ones, and a tenth as many openings)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lexica", default="FRA20,DISC2,CEL_super")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    ap.add_argument("--show", type=int, default=5, help="disagreements to print per lexicon")
    args = ap.parse_args()
    reg = LexiconRegistry(Settings.load(args.data_dir))
    failures = 0
    for name in args.lexica.split(","):
        t0 = time.perf_counter()
        lex = reg.get(name)
        klv = lex.klv
        magpie_lex = magpie_name(name, lex.ld.name)
        config = f"set -lex {magpie_lex} -wmp false -s1 equity -s2 equity"
        if klv is None:
            # no leaves are published for this lexicon: both engines use the NWL20 ones (they fit english_super)
            klv = load_klv(Path(reg._find("NWL20", ".klv2") or "NWL20.klv2"), "leaves ", lex.ld)
            config += " -leaves NWL20"
        lex = Lexicon(name=lex.name, kwg=lex.kwg, klv=klv, ld=lex.ld, source=lex.source, catalog=lex.catalog,
                      own_distribution=lex.own_distribution)
        dim = lex.new_board().dim
        src = args.magpie15 if dim == 15 else args.magpie21
        if src is None:
            print(f"{name}: skipped (no MAGPIE build for the {dim}x{dim} board: --magpie21)")
            continue
        harness = build_harness(src, dim)
        if klv is lex.klv:
            give_magpie(src, magpie_lex, lex, reg._find(name, ".klv2"))
        gen = MoveGen(lex.kwg, lex.ld, klv)
        rng = random.Random(args.seed)
        played = selfplay_positions(lex, gen, args.positions, rng)
        hard = hard_rack_positions(lex, played, args.positions, rng)
        openings = empty_board_positions(lex, max(1, args.positions // 10), rng)
        positions = played + hard + openings
        # every position is read back from its CGP, as MAGPIE reads it
        texts = [cgp4(p) for p in positions]
        ours = [parse_cgp(t + f" lex {name};", catalog=reg.catalog) for t in texts]
        theirs = magpie_moves(harness, src, config, texts)
        agree = moves_total = magpie_total = 0
        shown = 0
        for text, pos, other in zip(texts, ours, theirs, strict=True):
            mine = project_moves(gen, pos)
            moves_total += len(mine)
            magpie_total += len(other) if not isinstance(other, str) else 0
            if isinstance(other, str):
                if shown < args.show:
                    print(f"  {name}: MAGPIE refused {text}: {other}")
                    shown += 1
                continue
            if mine == other:
                agree += 1
                continue
            if shown < args.show:
                shown += 1
                only_ours = sorted(mine - other, key=lambda k: -k[6])[:3]
                only_theirs = sorted(other - mine, key=lambda k: -k[6])[:3]
                print(f"  {name}: {text}\n    project only: {[show(k, lex) for k in only_ours]}\n"
                      f"    MAGPIE only:  {[show(k, lex) for k in only_theirs]}")
        failures += len(positions) - agree
        multi = sum(1 for p in positions for t in p.racks[0] if t and len(lex.ld.labels[t]) > 1)
        blanks = sum(1 for p in positions if 0 in p.racks[0])
        print(f"{name} ({lex.ld.name}, {dim}x{dim}): {agree}/{len(positions)} positions agree exactly "
              f"({len(played)} self-play, {len(hard)} hard racks, {len(openings)} openings; moves: project "
              f"{moves_total}, MAGPIE {magpie_total}; "
              f"racks with a blank: {blanks}, multi-letter tiles on racks: {multi}) "
              f"in {time.perf_counter() - t0:.1f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
