"""Endgame solver speed: time to the value and nodes per second on a fixed suite, 1 and 2 threads.

The suite: the shared endgame cases (at their exact depths) plus standard 7-tile endgames reached by seeded
static-bot games on NWL20 (bag just emptied), solved to --plies.

Run: .venv/bin/python bench/endgame.py [--plies 8] [--positions 3] [--threads 1,2] [--prune on,off] [--data-dir DIR]

--prune on,off solves each position both ways (the lexicon pruned to the board, the default, and the full one)
and prints each: the same values and node counts, the time per node is what changes. With pruning on, each
position's line starting `# prune` gives what pruning costs inside each solve (the median of 5: listing the
words that can still be played on that board, building their graph, and the graph's move-generator copy).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from engine_cy.endgame import EndgameSolver
from engine_cy.game import Game
from engine_cy.kwg import Kwg
from engine_cy.kwg_build import build_kwg
from engine_cy.movegen import MoveGen
from engine_cy.prune import pruned_words, unplayed_counts
from macondo_server.engine.lexicon import LexiconRegistry
from macondo_server.engine.replay import game_from_position, position_from_game
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.tiles import new_board

from _shared import shared_lexica

CASES = Path(__file__).resolve().parent.parent.parent / "shared" / "cases" / "cases.jsonl"
CASE_PLIES = {"eg-canik-nwl20": (4, True), "eg-passfirst-csw21": (10, False), "eg-eldar-stuck-v-csw21": (3, True)}


def bag_empty_position(lex, seed: int) -> Game:
    g = Game(lex.kwg, lex.ld, new_board(), seed)
    g.fill_rack(0)
    g.fill_rack(1)
    gen = MoveGen(lex.kwg, lex.ld, lex.klv)
    while g.bag_size > 0 and not g.game_over:
        opp = None
        gen.generate(g.board, g.rack(g.on_turn), max(0, g.bag_size), opp, mode="best")
        kind, row, col, vert, tiles, score = gen.moves()[0][:6]
        g.play(kind, row, col, vert, tiles, score)
    return g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plies", type=int, default=8)
    ap.add_argument("--positions", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--tt-mb", type=int, default=512)
    ap.add_argument("--prune", default="on", help="on, off or on,off: search in the lexicon pruned to the board")
    ap.add_argument("--data-dir", default=shared_lexica(), help="default: the shared lexica")
    args = ap.parse_args()
    prunes = [{"on": True, "off": False}[x] for x in args.prune.split(",")]
    reg = LexiconRegistry(Settings.load(args.data_dir))
    suite = []
    if CASES.is_file():
        for line in CASES.read_text().splitlines():
            c = json.loads(line)
            if c["kind"] == "endgame" and c["id"] in CASE_PLIES:
                lex = reg.get(c["lexicon"])
                plies, heur = CASE_PLIES[c["id"]]
                suite.append((c["id"], lex, game_from_position(parse_cgp(c["cgp"], lex.ld), lex), plies, heur))
    nwl = reg.get("NWL20")
    seed = 1
    while sum(1 for s in suite if s[0].startswith("autoplay")) < args.positions:
        g = bag_empty_position(nwl, seed)
        seed += 1
        if g.game_over or len(g.rack(0)) < 6 or len(g.rack(1)) < 6:
            continue
        suite.append((f"autoplay-seed{seed - 1}", nwl, g, args.plies, False))
    for name, lex, game, plies, heur in suite:
        if name.startswith("autoplay"):
            print(f"# {name}: {write_cgp(position_from_game(game, {'lex': lex.name}))}")
        if True in prunes:
            print(prune_cost(name, lex, game), flush=True)
        for threads in (int(t) for t in args.threads.split(",")):
            for prune in prunes:
                solver = EndgameSolver(lex.kwg, lex.ld, args.tt_mb)
                r = solver.solve(game, plies, threads=threads, heuristics=heur, prune=prune)
                nps = r["nodes"] / r["seconds"] if r["seconds"] else 0
                print(f"{name:28s} plies={plies:2d} heuristics={int(heur)} threads={threads} "
                      f"prune={'on' if prune else 'off'} value={r['value']:+4d} seconds={r['seconds']:8.3f} "
                      f"nodes={r['nodes']:10d} nodes_per_second={nps:10.0f}", flush=True)


def prune_cost(name: str, lex, game: Game) -> str:
    """What pruning the lexicon to this board costs a solve (engine_cy.prune.pruned_kwg and the move
    generator the solver's worker makes on its graph), median of 5, in milliseconds."""
    parts: dict[str, list[float]] = {"words": [], "graph": [], "generator": []}
    n_words = 0
    for _ in range(5):
        t0 = time.perf_counter()
        words = pruned_words(game, unplayed_counts(game))
        t1 = time.perf_counter()
        kwg = Kwg(build_kwg(words, True), "gaddag")
        t2 = time.perf_counter()
        MoveGen(kwg, lex.ld, None, 50, False)     # (as the endgame worker makes it: no opening map)
        t3 = time.perf_counter()
        n_words = len(words)
        parts["words"].append(t1 - t0)
        parts["graph"].append(t2 - t1)
        parts["generator"].append(t3 - t2)
    ms = {k: 1000 * statistics.median(v) for k, v in parts.items()}
    return (f"# prune {name}: {n_words} words; {sum(ms.values()):.1f} ms: listing {ms['words']:.1f}, "
            f"graph {ms['graph']:.1f}, generator {ms['generator']:.1f}")


if __name__ == "__main__":
    main()
