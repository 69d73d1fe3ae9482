"""`macondo endgame`, `sim`, `infer` and `peg`: the solvers on one position.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from macondo_server.cli.common import (
    EG_MAX_PLIES,
    MAX_THREADS,
    SIM_MAX_ITERATIONS,
    CliError,
    add_data_dir,
    bool_text,
    check_record_layout,
    children_ignore_ctrl_c,
    distribution_arg,
    engine_for,
    int_choice,
    int_in,
    layout_arg,
    layout_choice,
    read_cgp,
    record_lexicon,
    registry,
    run_interruptible,
    seconds_arg,
    seed_arg,
    threads_arg,
    tolerance_points,
    tt_mb_arg,
)
from macondo_server.engine.settings import Settings


def confidence_arg(text: str) -> float:
    """An argparse type: a confidence level, a number from 0.5 to 0.9999 (sim.py checks it against the rule)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0.5 to 0.9999, got {text[:40]!r}") from None
    if not 0.5 <= v <= 0.9999:
        raise argparse.ArgumentTypeError(f"must be a number from 0.5 to 0.9999, got {text[:40]!r}")
    return v


def temperature_arg(text: str) -> float:
    """An argparse type: the inference softmax's temperature, points of equity from 0 to 1e9."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of points from 0 to 1e9, got {text[:40]!r}") from None
    if not 0 <= v <= 1e9:      # (a NaN fails too)
        raise argparse.ArgumentTypeError(f"must be a number of points from 0 to 1e9, got {text[:40]!r}")
    return v


INFER_MODELS = ("softmax", "tolerance")   # infer.MODELS, the default first (kept here: parsing imports no engine)
EG_MAX_TOP = 64        # endgame.MAX_TOP_K and MAX_ALSO_SOLVE (kept here so that parsing imports no engine)
EG_MAX_ALSO = 64

if TYPE_CHECKING:
    from rich.live import Live

    from macondo_server.analysis.peg.job import PegJob
    from macondo_server.runtime.checkpoint import CheckpointStore
    from macondo_server.runtime.cluster import Cluster


def cmd_endgame(args: argparse.Namespace) -> int:
    from macondo_client.render import endgame_json, endgame_text, progress_line

    from macondo_server.analysis.endgame import EndgameJob, EndgameOptions, EndgameResult
    from macondo_server.api.convert import endgame_to_pb

    pos = read_cgp(args, registry(args))
    opts = EndgameOptions(plies=args.plies, max_time=args.max_time, threads=args.threads, first_win=args.first_win,
                          heuristics=not args.no_heuristics, tt_megabytes=args.tt_mb, lexicon=args.lexicon,
                          top_k=args.top, also_solve=args.also_solve or [])
    job = EndgameJob(engine_for(args), pos, opts)
    live = not args.json and sys.stderr.isatty()

    def progress(r: EndgameResult) -> None:
        if live:
            print(progress_line(endgame_to_pb(r, pos, "", False, False)), file=sys.stderr)

    res = run_interruptible(lambda: job.run(progress), job.stop, "endgame")
    msg = endgame_to_pb(res, pos, "", True, not res.complete)
    print(json.dumps(endgame_json(msg)) if args.json else endgame_text(msg, args.first_win,
                                                                               job.search_plies))
    return 0


def cmd_sim(args: argparse.Namespace) -> int:
    from macondo_client.render import sim_heatmap, sim_json, sim_playstats_text, sim_table, sim_tilestats_text

    from macondo_server.analysis.sim import SimJob, SimOptions, SimResult
    from macondo_server.api.convert import sim_to_pb
    from macondo_server.model.cgp import write_cgp
    from macondo_server.model.move import format_move, parse_move

    pos = read_cgp(args, registry(args))
    stats = args.stats or args.heatmap is not None
    if stats and not 1 <= args.heatmap_ply <= max(1, args.plies):
        raise CliError(f"--heatmap-ply must be 1 to {max(1, args.plies)} (the plies simulated), got {args.heatmap_ply}")
    plays = list(args.play or [])
    shown = "1"          # the play the statistics are drawn for: the leader, or --heatmap's
    if args.heatmap is not None and not args.heatmap.lstrip("#").isdigit():
        shown = format_move(parse_move(args.heatmap, pos.board, pos.ld), pos.ld, pos.board)
        plays.append(args.heatmap)          # simulated whatever its static rank
    elif args.heatmap is not None:
        shown = args.heatmap
    opts = SimOptions(plies=args.plies, num_plays=args.num_plays, plays=plays, iterations=args.iterations,
                      stop=args.stop, stop_rule=args.stop_rule, confidence=args.confidence,
                      max_time=args.max_time, threads=args.threads, seed=args.seed,
                      opp_rack=args.opp_rack, lexicon=args.lexicon, infer_play=args.infer,
                      infer_withdrawn=args.infer_withdrawn, infer_tolerance=args.tolerance,
                      infer_max_racks=args.infer_max_racks, infer_model=args.infer_model,
                      infer_temperature=args.infer_temperature, stats=stats)
    job = SimJob(engine_for(args), pos, opts)
    live: Live | None = None
    progress: Callable[[SimResult], None] | None = None
    if not args.json and sys.stdout.isatty():
        from rich.live import Live
        from rich.text import Text

        live = Live(Text("simulating..."), refresh_per_second=4, transient=True)
        live.start()

        def show(r: SimResult, live: Live = live) -> None:
            live.update(Text(sim_table(sim_to_pb(r, "", False))))

        progress = show

    try:
        res = run_interruptible(lambda: job.run(progress), job.stop, "simulation")
    finally:
        if live is not None:
            live.stop()
    msg = sim_to_pb(res, "", res.stopped_reason == "stopped")
    print(json.dumps(sim_json(msg)) if args.json else sim_table(msg))
    if stats and not args.json:
        try:
            print()
            print(sim_playstats_text(msg, shown))
            print()
            print(sim_tilestats_text(msg))
            print()
            print(sim_heatmap(msg, shown, args.heatmap_ply, write_cgp(pos), color=sys.stdout.isatty()))
        except ValueError as exc:
            raise CliError(str(exc)) from None
    return 0


def cmd_infer(args: argparse.Namespace) -> int:
    from macondo_client.render import inference_json, inference_text

    from macondo_server.analysis.infer import InferOptions, LastPlay, infer, last_play_before, last_play_on
    from macondo_server.api.convert import infer_to_pb

    engine = engine_for(args)
    opts = InferOptions(tolerance=args.tolerance, max_racks=args.max_racks, threads=args.threads, seed=args.seed,
                        lexicon=args.lexicon)
    if args.model is not None:
        opts.model = args.model
    if args.temperature is not None:
        opts.temperature = args.temperature
    if args.history is not None:
        opts.history = args.history
    history: list[LastPlay] = []
    if args.gcg is not None:
        from macondo_server.analysis.infer import history_from_record, last_play_from_record
        from macondo_server.engine.replay import record_setup, replay_gcg
        from macondo_server.model.gcg import read_gcg_file

        if args.cgp is not None or args.before or args.withdrawn:
            raise CliError("with --gcg the play comes from the record: no CGP, PLAY, --before or --withdrawn")
        path = Path(args.gcg)
        if not path.is_file():
            raise CliError(f"GCG file {path} does not exist")
        record = read_gcg_file(str(path))
        check_record_layout(record, layout_arg(args, engine.registry.catalog), engine.registry.catalog)
        lex_name = record_lexicon(record, engine.registry, args.lexicon,   # its warnings on stderr
                                  distribution=distribution_arg(args))
        lex, _ = record_setup(record, engine.registry.get(lex_name, distribution_arg(args)))
        if args.turn is not None and not 0 <= args.turn <= len(record.events):
            raise CliError(f"--turn {args.turn} is out of range: the game has {len(record.events)} events")
        replayed = replay_gcg(record, lex, turn=args.turn)
        lp = last_play_from_record(record, replayed, lex)
        history = history_from_record(record, replayed, lex, opts.history) if opts.history else []
        pos = lp.before
        opts.lexicon = lex.name
    else:
        if args.cgp is None or args.play is None:
            raise CliError("give a CGP and the opponent's PLAY, or --gcg FILE [--turn N]")
        if args.turn is not None or args.history is not None:
            raise CliError(f"{'--turn' if args.turn is not None else '--history'} goes with --gcg")
        pos = read_cgp(args, registry(args))
        lex = engine.lexicon_for(pos, args.lexicon)
        make = last_play_before if args.before else last_play_on
        lp = make(pos, args.play, lex, withdrawn=args.withdrawn)
        history = []
    stop = threading.Event()
    res = run_interruptible(lambda: infer(engine, lp, opts, stop=stop, history=history), stop.set, "inference")
    msg = infer_to_pb(res, pos.ld, args.top)
    print(json.dumps(inference_json(msg)) if args.json else inference_text(msg, args.top))
    return 0


def cmd_peg(args: argparse.Namespace) -> int:
    from macondo_server.analysis.peg.job import PegJob
    from macondo_server.analysis.peg.options import PegOptions

    reg = registry(args)
    layout = layout_choice(args, reg.catalog)
    if layout is not None and layout[1] and args.cluster and not args.eventuality:
        raise CliError("--layout: a cluster's workers read board layouts by name from their data directories, not "
                       "from a file given here; put it in a data directory as layouts/NAME.txt and name it")
    pos = read_cgp(args, reg)
    opts = PegOptions(endgame_plies=args.endgame_plies, only_solve=args.only_solve or [],
                      max_tiles_left=args.max_tiles_left, max_nested_depth=args.max_nested_depth,
                      nesting_cap=args.nesting_cap, skip_deep_pass=args.skip_deep_pass, early_cutoff=args.early_cutoff,
                      skip_tiebreaker=args.skip_tiebreaker, opp_rack=args.opp_rack, threads=args.threads,
                      max_time=args.max_time, tt_megabytes=args.tt_mb, lexicon=args.lexicon,
                      endgame_heuristics=args.endgame_heuristics, opponent_model=args.opponent_model,
                      endgame_leaf=args.endgame_leaf,
                      quick_pass=args.quick_pass)
    if args.eventuality:
        opts.threads = 1
        opts.skip_tiebreaker = True
    if args.resume and not args.checkpoint:
        raise CliError("--resume needs --checkpoint PATH (the file the stopped solve recorded to)")
    with _peg_resources(args) as (cluster, store):
        job = PegJob(engine_for(args), pos, opts, cluster=cluster, checkpoint=store, resume=args.resume)
        return _peg_run(args, job)


@contextlib.contextmanager
def _peg_resources(args: argparse.Namespace) -> Iterator[tuple[Cluster | None, CheckpointStore | None]]:
    """The cluster (--cluster) and checkpoint store (--checkpoint) of a pre-endgame, closed afterwards."""
    from macondo_server.runtime.checkpoint import CheckpointStore

    cluster: Cluster | None = None
    store: CheckpointStore | None = None
    try:
        if args.checkpoint and not args.eventuality:
            store = CheckpointStore(args.checkpoint)
        if args.cluster and not args.eventuality:
            from macondo_server.runtime.cluster import Cluster

            with children_ignore_ctrl_c():
                cluster = Cluster(args.cluster, data_dirs=[str(d) for d in Settings.load(args.data_dir).data_dirs])
        yield cluster, store
    finally:
        if cluster is not None:
            cluster.close()
        if store is not None:
            store.close()


def _peg_run(args: argparse.Namespace, job: PegJob) -> int:
    from macondo_client.render import peg_json, peg_table, progress_line

    from macondo_server.analysis.peg import explain
    from macondo_server.analysis.peg.result import PegResult
    from macondo_server.api.convert import peg_to_pb

    if args.eventuality:
        text = run_interruptible(lambda: explain.eventuality(job, args.eventuality), job.stop, "pre-endgame")
        print(json.dumps({"eventuality": args.eventuality.upper(), "text": text}) if args.json else text)
        return 0
    live = not args.json and sys.stderr.isatty()

    def progress(r: PegResult) -> None:
        if live:
            print(progress_line(peg_to_pb(r, job.pos, "", False, summary_only=True)), file=sys.stderr)

    res = run_interruptible(lambda: job.run(progress, interval=2.0), job.stop, "pre-endgame")
    msg = peg_to_pb(res, job.pos, "", not res.complete)
    if args.json:
        print(json.dumps(peg_json(msg)))
    else:
        print(peg_table(msg, rows=args.rows, verbose=args.verbose, cluster=args.cluster or "",
                        checkpoint=args.checkpoint or ""))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this group's commands to the `macondo` parser."""
    eg = sub.add_parser("endgame", help="solve an endgame (empty bag) exactly")
    eg.add_argument("cgp")
    eg.add_argument("--plies", type=int_in(1, EG_MAX_PLIES), default=None,
                    help=f"search depth cap (1 to {EG_MAX_PLIES}; default: with --max-time deepen until solved "
                         "or out of time, else 4)")
    eg.add_argument("--max-time", type=seconds_arg, default=0.0,
                    help="seconds; returns the deepest completed depth (default: no limit)")
    eg.add_argument("--threads", type=threads_arg, default=min(os.cpu_count() or 1, MAX_THREADS))
    eg.add_argument("--first-win", action="store_true", help="only establish win / draw / loss")
    eg.add_argument("--no-heuristics", action="store_true",
                    help="score the horizon by the spread instead of a greedy playout")
    eg.add_argument("--tt-mb", type=tt_mb_arg, default=256, help="transposition table size in MB")
    eg.add_argument("--top", type=int_in(1, EG_MAX_TOP), default=1, metavar="K",
                    help=f"the best K first moves (1 to {EG_MAX_TOP}), each with its exact value and principal line "
                         "(default 1)")
    eg.add_argument("--also-solve", action="append", metavar="MOVE",
                    help="also value this first move exactly, whatever its rank: how much it loses against the best "
                         f"(repeatable, at most {EG_MAX_ALSO})")
    eg.add_argument("--lexicon")
    eg.add_argument("--json", action="store_true")
    add_data_dir(eg, layout=True)
    eg.set_defaults(func=cmd_endgame)

    sm = sub.add_parser("sim", help="rank candidate plays by Monte Carlo simulation")
    sm.add_argument("cgp")
    sm.add_argument("--plies", type=int_in(0, 15), default=2,
                    help="look-ahead plies after the candidate (0 to 15; default 2)")
    sm.add_argument("--num-plays", type=int_in(1, 500), default=15,
                    help="top N plays by static equity (1 to 500)")
    sm.add_argument("--play", action="append", metavar="MOVE", help="also simulate this play (repeatable)")
    sm.add_argument("--iterations", type=int_in(1, SIM_MAX_ITERATIONS), default=None,
                    help="iteration cap (default: with --max-time none, the time or --stop ends the run; "
                         "else 1000)")
    sm.add_argument("--stop", type=int_choice(95, 98, 99),
                    help="stop once the leader is separated (95, 98 or 99)")
    sm.add_argument("--stop-rule", choices=("z", "bai"), default="z",
                    help="z: the z-test of --stop (prunes plays at its level; default); bai: best-arm identification "
                         "(samples the leader and a challenger, stops once a GLR test names the leader at "
                         "--confidence)")
    sm.add_argument("--confidence", type=confidence_arg, metavar="C",
                    help="the stopping rule's confidence: bai 0.5 to 0.9999 (default --stop / 100, else 0.95); z 0.95, "
                         "0.98 or 0.99 (the same as --stop)")
    sm.add_argument("--max-time", type=seconds_arg, default=0.0,
                    help="seconds: the run uses this time unless --iterations or --stop ends it first")
    sm.add_argument("--threads", type=threads_arg, default=min(os.cpu_count() or 1, MAX_THREADS))
    sm.add_argument("--seed", type=seed_arg, default=0)
    sm.add_argument("--opp-rack", help="known opponent tiles (the only source: an opponent rack written in the "
                    "CGP is not taken as known)")
    sm.add_argument("--infer", metavar="PLAY", help="the opponent's last play as it stands on the board ('8G Q(I)', "
                    "'exch N'): their rack is drawn from the leaves it suggests (see macondo infer)")
    sm.add_argument("--infer-withdrawn", action="store_true", help="the --infer play was a phony challenged off")
    sm.add_argument("--tolerance", type=tolerance_points, default=3.0,
                    help="inference: points of equity the play may fall short of the best (default 3)")
    sm.add_argument("--infer-max-racks", type=int_in(1, 10_000_000), default=50_000,
                    help="inference: exhaustive up to this many leaves, else this many random racks")
    sm.add_argument("--infer-model", choices=INFER_MODELS,
                    help="inference: softmax (default: racks weighed by how their moves compare with the play) or "
                         "tolerance (a rack fits when the play is within --tolerance of its best)")
    sm.add_argument("--infer-temperature", type=temperature_arg,
                    help="inference: the softmax's temperature in points of equity (default 2)")
    sm.add_argument("--stats", action="store_true",
                    help="collect each play's statistics per ply: score histograms, heatmaps of the squares used, the "
                         "opponent's leave after their reply (in --json; the text shows the leader's)")
    sm.add_argument("--heatmap", metavar="PLAY",
                    help="with --stats for this play (simulated whatever its rank; or a rank, e.g. 2): its score "
                         "histograms and the heatmap of --heatmap-ply")
    sm.add_argument("--heatmap-ply", type=int_in(1, 15), default=1,
                    help="the ply whose heatmap is drawn (1: the opponent's reply; default 1)")
    sm.add_argument("--lexicon")
    sm.add_argument("--json", action="store_true")
    add_data_dir(sm, layout=True)
    sm.set_defaults(func=cmd_sim)

    inf = sub.add_parser("infer", help="infer the tiles the opponent kept from their last play")
    inf.add_argument("cgp", nargs="?", help="the position now, its player on turn the one inferring (with --before: "
                     "the position before the play, the opponent on turn; their rack there is never looked at)")
    inf.add_argument("play", nargs="?", help="the opponent's last play: a placement as it stands on the board ('8G Q(I)': "
                     "letters outside parentheses are the tiles it put down; with --before as on that board), or "
                     "'exch N' (an exchange of N tiles)")
    inf.add_argument("--before", action="store_true", help="the CGP is the position before the play")
    inf.add_argument("--gcg", metavar="FILE", help="instead of CGP and PLAY: a game record; infers, for the player "
                     "on turn after --turn events, from the opponent's last play they saw")
    inf.add_argument("--turn", type=int_in(0, 1_000_000), help="with --gcg: events replayed (default: all)")
    inf.add_argument("--withdrawn", action="store_true",
                     help="the play was a phony challenged off: its tiles are known to be on the opponent's rack")
    inf.add_argument("--model", choices=INFER_MODELS,
                     help="softmax (default: each rack weighed by exp(equity / T) of the play against its top moves) "
                          "or tolerance (a rack fits when the play is within --tolerance of its best, as Macondo's "
                          "classic rangefinder)")
    inf.add_argument("--temperature", type=temperature_arg, help="softmax: T in points of equity (default 2; 0: the "
                     "best play only)")
    inf.add_argument("--tolerance", type=tolerance_points, default=3.0,
                     help="tolerance model: points of equity the play may fall short of the rack's best (default 3)")
    inf.add_argument("--history", type=int_in(0, 100), metavar="N",
                     help="with --gcg: the opponent's earlier turns weighed, back to an exchange (default 8; 0: none)")
    inf.add_argument("--max-racks", type=int_in(1, 10_000_000), default=50_000,
                     help="enumerate every leave up to this many distinct ones, else judge this many random "
                     "racks (default 50,000)")
    inf.add_argument("--threads", type=threads_arg, default=min(os.cpu_count() or 1, MAX_THREADS))
    inf.add_argument("--seed", type=seed_arg, default=0, help="seed of the random racks when sampling")
    inf.add_argument("--top", type=int_in(1, 10_000), default=15, help="leaves shown (default 15)")
    inf.add_argument("--lexicon")
    inf.add_argument("--json", action="store_true")
    add_data_dir(inf, layout=True)
    inf.set_defaults(func=cmd_infer)

    pg = sub.add_parser("peg", help="solve a pre-endgame (1 to 6 tiles in the bag) over every draw")
    pg.add_argument("cgp")
    pg.add_argument("--endgame-plies", type=int_in(1, 30), default=4,
                    help="depth of each endgame (1 to 30; default 4)")
    pg.add_argument("--only-solve", action="append", metavar="MOVE", help="solve only this play (repeatable)")
    pg.add_argument("--max-tiles-left", type=int_in(-1, 6), default=1,
                    help="plays leaving at most N tiles in the bag (-1 all, 0 only bag-emptying; default 1)")
    pg.add_argument("--max-nested-depth", type=int_in(-1, 100), default=1,
                    help="-1 unlimited, 0 no nested solves (default 1)")
    pg.add_argument("--nesting-cap", choices=("skip", "unresolved"), default="skip",
                    help="a continuation past --max-nested-depth: skip: skipped, as the reference engines do "
                         "(can be optimistic); unresolved: the draw is unresolved, a non-win; the bounds of "
                         "both are shown (default skip)")
    pg.add_argument("--skip-deep-pass", type=bool_text, default=True, metavar="true|false")
    pg.add_argument("--early-cutoff", action="store_true", help="abandon plays that cannot beat the leader")
    pg.add_argument("--skip-tiebreaker", action="store_true")
    pg.add_argument("--opp-rack", help="known opponent tiles")
    pg.add_argument("--endgame-heuristics", action="store_true",
                    help="score endgame horizons by a greedy playout (slower; default: the spread)")
    pg.add_argument("--opponent-model", choices=("pessimistic", "solver"), default="pessimistic",
                    help="pessimistic: we win a draw only if every reply loses for them; solver: the opponent "
                         "solves their own pre-endgame from what they can see (ties go against us)")
    pg.add_argument("--endgame-leaf", choices=("auto", "playout", "static"), default="auto",
                    help="endgame leaves: auto = a greedy playout where a tile is stuck or at risk at the endgame's "
                         "root, the spread elsewhere (default); playout = everywhere; static = nowhere")
    pg.add_argument("--quick-pass", type=bool_text, default=True, metavar="true|false",
                    help="rank every play on every draw at low fidelity first (default true)")
    pg.add_argument("--threads", type=threads_arg, default=min(os.cpu_count() or 1, MAX_THREADS))
    pg.add_argument("--max-time", type=seconds_arg, default=0.0)
    pg.add_argument("--tt-mb", type=tt_mb_arg, default=256)
    pg.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="solve on a running Dask scheduler (host:port) or a local cluster of N worker processes "
                         "(needs the 'cluster' extra)")
    pg.add_argument("--checkpoint", metavar="PATH",
                    help="record every finished verdict in this SQLite file (see --resume)")
    pg.add_argument("--resume", action="store_true",
                    help="continue the solve recorded in --checkpoint (same position and options) without "
                         "solving its finished draws again")
    pg.add_argument("--eventuality", metavar="LETTERS",
                    help="explain one draw order (first drawn first, as many tiles as the bag holds) for the plays")
    pg.add_argument("--rows", type=int_in(1, 1_000_000), default=30)
    pg.add_argument("--verbose", action="store_true",
                    help="list every draw of every verdict (default: a count and weight for long lists)")
    pg.add_argument("--lexicon")
    pg.add_argument("--json", action="store_true")
    add_data_dir(pg, layout=True)
    pg.set_defaults(func=cmd_peg)
