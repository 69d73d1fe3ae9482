"""`macondo autoplay`, `analyze` and `leaves train`: whole games.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from macondo_server.cli.common import (
    MAX_THREADS,
    MAX_TT_MB,
    CliError,
    add_data_dir,
    check_record_layout,
    children_ignore_ctrl_c,
    decimal_in,
    distribution_arg,
    engine_for,
    int_in,
    layout_arg,
    record_lexicon,
    registry,
    run_interruptible,
    seconds_in,
    seed_arg,
    threads_arg,
    usage,
)
from macondo_server.engine.lexicon import LexiconError
from macondo_server.engine.settings import DEFAULT_ENDGAME_CAP, DEFAULT_PEG_CAP, DEFAULT_SIM_CAP, Settings
from macondo_server.model.text import FormatError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from macondo_server.analysis.leavetrain import RoundFigures
    from macondo_server.analysis.review import GameAnalysis, ProgressFn, TurnAnalysis
    from macondo_server.model.gcg import GcgGame


def cmd_autoplay(args: argparse.Namespace) -> int:
    from macondo_client.render import autoplay_json, autoplay_text

    from macondo_server.analysis.selfplay import bot_sources, bots_from_options, run_autoplay
    from macondo_server.api.convert import autoplay_to_pb
    from macondo_server.engine.facade import Engine

    engine = Engine(Settings.load(args.data_dir))
    layout = layout_arg(args, engine.registry.catalog)
    bot1, bot2 = bots_from_options(engine, args.lexicon, args.leaves, args.lexicon2, args.leaves2,
                                   distribution=distribution_arg(args), layout=layout)
    cluster = None
    sources = None
    if args.cluster:
        from macondo_server.runtime.cluster import Cluster

        sources = bot_sources(engine, args.lexicon, args.leaves, args.lexicon2, args.leaves2,
                              distribution=distribution_arg(args), layout=layout)
        with children_ignore_ctrl_c():
            cluster = Cluster(args.cluster, data_dirs=[str(d) for d in engine.settings.data_dirs])
    progress = None
    bar = None
    if not args.json and sys.stderr.isatty():
        from rich.progress import Progress

        bar = Progress(transient=True)
        task = bar.add_task("autoplay", total=args.games)
        bar.start()

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done)

    stop = threading.Event()
    try:
        summary = run_interruptible(lambda: run_autoplay(
            bot1, bot2, args.games, seed=args.seed,
            threads=args.threads, pairs=args.pairs, gcg_dir=args.gcg_dir, progress=progress, stop=stop,
            cluster=cluster, sources=sources, layout=layout,
        ), stop.set, "autoplay")
    finally:
        if bar is not None:
            bar.stop()
        if cluster is not None:
            cluster.close()
    msg = autoplay_to_pb(summary, "", args.games, True, stop.is_set())
    print(json.dumps(autoplay_json(msg)) if args.json else autoplay_text(msg))
    return 0


def cmd_leaves_train(args: argparse.Namespace) -> int:
    from macondo_server.analysis.leavetrain import LeaveTrainer, TrainOptions
    from macondo_server.engine.lexicon import load_klv

    reg = registry(args)
    lex = reg.get(args.lexicon, distribution_arg(args))
    start = None
    start_sha = None
    if args.start:
        p = Path(args.start)
        if not p.is_file():
            raise CliError(f"starting leave file {p} does not exist")
        start = load_klv(p, "starting leave file ", lex.ld)
        import hashlib

        start_sha = hashlib.sha256(p.read_bytes()).hexdigest()
    opts = TrainOptions(lexicon=lex.name, games=args.games, rounds=args.rounds, seed=args.seed, forced=args.forced,
                        prior=args.prior, pool=args.pool, start=args.start, start_sha256=start_sha)
    trainer = LeaveTrainer(lex, opts, Path(args.out), workers=args.workers, resume=args.resume, start_klv=start)
    if trainer.rounds_done >= opts.rounds:
        print(f"{args.out}: {trainer.rounds_done} rounds already done (raise --rounds to train further)")
        return 0
    cluster = None
    fingerprint = None
    if args.cluster:
        from macondo_server.engine.facade import Engine
        from macondo_server.runtime.cluster import Cluster, lexicon_fingerprint

        # the workers load the lexicon by name from their own data directories and check this fingerprint
        fingerprint = lexicon_fingerprint(Engine(reg.settings), lex.name)
        with children_ignore_ctrl_c():
            cluster = Cluster(args.cluster, data_dirs=[str(d) for d in reg.settings.data_dirs])
    stop = threading.Event()
    bar = None
    progress = None
    if not args.json and sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("round {task.fields[round]}"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("games"), TimeElapsedColumn(), transient=True, console=Console(stderr=True))
        task = bar.add_task("", total=opts.games, round=trainer.rounds_done + 1)
        bar.start()

        def progress(r: int, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, round=f"{r}/{opts.rounds}")

    def on_round(fig: RoundFigures) -> None:
        if args.json:
            print(json.dumps(vars(fig)), flush=True)
        elif bar is not None:
            bar.console.print(fig.line())
        else:
            print(fig.line(), flush=True)

    try:
        done = run_interruptible(lambda: trainer.run(progress, on_round, stop.is_set, cluster=cluster,
                                                     fingerprint=fingerprint), stop.set, "training")
    finally:
        if bar is not None:
            bar.stop()
        if cluster is not None:
            cluster.close()
    if not args.json:
        kept = trainer.rounds_done
        state = "stopped" if kept < opts.rounds else "done"
        print(f"{state}: {kept} of {opts.rounds} rounds in {args.out} ({len(done)} this run); leaves: "
              f"{Path(args.out) / (lex.name + '.klv2')} and .csv" + ("; --resume continues" if kept < opts.rounds
                                                                   else ""))
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    """Analyse every turn of one or more GCG games (files or folders of .gcg files)."""
    from macondo_client.render import (
        analysis_json,
        analysis_report,
        review_summary_json,
        review_summary_report,
    )

    from macondo_server.analysis.review import AnalyzeOptions, annotated_gcg
    from macondo_server.analysis.review_chart import (
        ChartError,
        check_chart_path,
        draw_chart,
        require_matplotlib,
    )
    from macondo_server.analysis.review_store import ReviewStore, ReviewStoreError, reviewed
    from macondo_server.analysis.review_summary import summarize
    from macondo_server.api.convert import analysis_to_pb, review_summary_to_pb
    from macondo_server.model.gcg import read_gcg_file

    paths: list[Path] = []
    for item in args.games:
        p = Path(item)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix.lower() == ".gcg" and q.is_file())
            if not found:
                raise CliError(f"folder {p} holds no .gcg files")
            paths.extend(found)
        elif p.is_file():
            paths.append(p)
        else:
            raise CliError(f"GCG file {p} does not exist")
    out = Path(args.gcg_out) if args.gcg_out else None
    if out is not None and len(paths) > 1 and not out.is_dir():
        raise CliError(f"--gcg-out {out}: with several games it must be an existing folder")
    chart = Path(args.chart) if args.chart else None
    if chart is not None:
        if len(paths) > 1 and not chart.is_dir():
            raise CliError(f"--chart {chart}: with several games it must be an existing folder (a chart per game)")
        try:
            if not chart.is_dir():
                check_chart_path(chart)
            require_matplotlib()
        except ChartError as exc:
            raise CliError(str(exc)) from None
    store = None
    if args.store:
        try:
            store = ReviewStore(args.store, create=True)
        except ReviewStoreError as exc:
            raise CliError(str(exc)) from None
    opts = AnalyzeOptions(
        player=args.player, sim_plies=args.sim_plies, sim_plays=args.sim_plays,
        sim_iterations=args.sim_iterations, sim_max_time=args.sim_time, peg_max_bag=args.peg_max_bag,
        peg_plays=args.peg_plays,
        peg_endgame_plies=args.peg_endgame_plies, peg_max_time=args.peg_time, endgame_plies=args.endgame_plies,
        endgame_max_time=args.endgame_time, endgame_candidates=args.endgame_candidates, threads=args.threads,
        seed=args.seed, lexicon=args.lexicon, tt_megabytes=args.tt_mb, distribution=distribution_arg(args))
    opts.validate()
    engine = engine_for(args)
    layout = layout_arg(args, engine.registry.catalog)
    from rich.console import Console

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    stop = threading.Event()
    results: list[dict[str, Any]] = []
    analyses: list[GameAnalysis] = []
    failed = charts_failed = 0

    def failure(p: Path, exc: Exception) -> None:
        # one game of a batch that cannot be read or analysed: said on one line, the others still run
        nonlocal failed
        if len(paths) == 1:
            raise CliError(f"{p}: {exc}") from None
        failed += 1
        print(f"macondo: error: {p}: {exc}", file=sys.stderr)
        results.append({"game": p.name, "error": str(exc)})

    for p in paths:
        if stop.is_set():
            break
        try:
            record = read_gcg_file(str(p))
            check_record_layout(record, layout, engine.registry.catalog, p.name)
            record_lexicon(record, engine.registry, args.lexicon, p.name,   # its warnings, before the work
                           distribution_arg(args))
        except (FormatError, OSError) as exc:
            failure(p, exc)
            continue
        bar: Progress | None = None
        progress: ProgressFn | None = None
        if not args.json and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(TextColumn(f"{p.name}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TextColumn("{task.description}"), transient=True, console=Console(stderr=True))
            task = bar.add_task("", total=None)
            bar.start()

            def show(done: int, total: int, turn: TurnAnalysis | None, bar: Progress = bar,
                     task: TaskID = task) -> None:
                last = f"event {turn.event}: {turn.played.move} ({turn.mistake})" if turn is not None else ""
                bar.update(task, completed=done, total=total, description=last)

            progress = show

        def one(record: GcgGame = record, p: Path = p, progress: ProgressFn | None = progress) -> GameAnalysis:
            return reviewed(engine, record, AnalyzeOptions(**vars(opts)), store, name=p.name, progress=progress,
                            stop=stop)

        try:
            res = run_interruptible(one, stop.set, "analysis")
        except ReviewStoreError as exc:
            raise CliError(str(exc)) from None
        except (FormatError, LexiconError, ValueError) as exc:
            failure(p, exc)
            continue
        finally:
            if bar is not None:
                bar.stop()
        analyses.append(res)
        msg = analysis_to_pb(res)
        results.append(analysis_json(msg))
        if out is not None:
            target = out / f"{p.stem}.analysed.gcg" if out.is_dir() else out
            target.write_text(annotated_gcg(record, res), encoding="utf-8")
        if chart is not None:
            try:
                draw_chart(res, chart / f"{p.stem}.png" if chart.is_dir() else chart, args.chart_threshold)
            except ChartError as exc:
                if len(paths) == 1:
                    raise CliError(str(exc)) from None
                charts_failed += 1
                print(f"macondo: error: {p}: {exc}", file=sys.stderr)
        if not args.json and not args.summary:
            analysis_report(msg, console)
        elif not args.json:
            state = "taken from the review store" if res.reused else (
                "stopped: what was done so far" if res.stopped else "analysed")
            console.print(f"{p.name}: {len(res.turns)} of {res.turns_total} turns, {state}")
    summary = summarize(analyses, top=args.top, failed=failed, stopped=stop.is_set())
    if args.json:
        doc: dict[str, Any] = {"games": results, "analysed": summary.analysed, "reused": summary.reused}
        if args.summary:
            doc["summary"] = review_summary_json(review_summary_to_pb(summary))
        print(json.dumps(doc))
    elif args.summary:
        review_summary_report(review_summary_to_pb(summary), console)
    elif store is not None:
        console.print(f"{summary.games} game{'s' if summary.games != 1 else ''}: {summary.analysed} analysed, "
                      f"{summary.reused} taken from the review store {store.folder}")
    return 1 if failed or charts_failed else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this group's commands to the `macondo` parser."""
    ap = sub.add_parser("autoplay", help="static-equity bot against static-equity bot")
    ap.add_argument("--games", type=int_in(1, 100_000_000), default=100)
    ap.add_argument("--lexicon")
    ap.add_argument("--leaves")
    ap.add_argument("--lexicon2")
    ap.add_argument("--leaves2")
    ap.add_argument("--seed", type=seed_arg, default=0)
    ap.add_argument("--threads", type=threads_arg, default=min(os.cpu_count() or 1, MAX_THREADS))
    ap.add_argument("--pairs", action="store_true", help="play games in pairs with identical draws")
    ap.add_argument("--gcg-dir", help="write every game as GCG here")
    ap.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="play the games on a running Dask scheduler (host:port) or a local cluster of N worker "
                         "processes (needs the 'cluster' extra); the same games as in-process for a seed")
    ap.add_argument("--json", action="store_true")
    add_data_dir(ap, layout=True)
    ap.set_defaults(func=cmd_autoplay)

    an = sub.add_parser("analyze", aliases=["review"],
                        help="analyse every turn of GCG games (files or folders): the engine's choice, "
                        "each move's loss, mistakes, missed bingos, phonies; a summary of many games, a chart")
    an.add_argument("games", nargs="+", metavar="GAME", help="a .gcg file or a folder of them (several allowed)")
    an.add_argument("--player", help="analyse only this player's turns: a nickname, real name, 1 or 2 (default both)")
    an.add_argument("--sim-iterations", type=int_in(1, 1_000_000), default=600,
                    help="simulation iterations per turn (default 600)")
    an.add_argument("--sim-plies", type=int_in(0, 10), default=2, help="simulation look-ahead (default 2)")
    an.add_argument("--sim-plays", type=int_in(1, 100), default=12,
                    help="plays simulated besides the played move (default 12)")
    an.add_argument("--sim-time", type=seconds_in(3600), default=DEFAULT_SIM_CAP,
                    help=f"safety cap, seconds per simulated turn (0: none; default {DEFAULT_SIM_CAP:g}); the "
                    "iterations are the budget, so that a seed gives the same analysis on any machine")
    an.add_argument("--peg-max-bag", type=int_in(0, 6), default=1,
                    help="the pre-endgame solver for 1 to this many tiles in the bag, simulation above (0: never; "
                    "default 1)")
    an.add_argument("--peg-plays", type=int_in(1, 50), default=8,
                    help="plays solved per pre-endgame turn besides the played move (default 8)")
    an.add_argument("--peg-endgame-plies", type=int_in(1, 20), default=4)
    an.add_argument("--peg-time", type=seconds_in(3600), default=DEFAULT_PEG_CAP,
                    help=f"safety cap, seconds per pre-endgame turn; no leader by then: simulation (0: none; "
                    f"default {DEFAULT_PEG_CAP:g})")
    an.add_argument("--endgame-plies", type=int_in(1, 30), default=6)
    an.add_argument("--endgame-time", type=seconds_in(3600), default=DEFAULT_ENDGAME_CAP,
                    help=f"safety cap, seconds per endgame solve (0: none; default {DEFAULT_ENDGAME_CAP:g})")
    an.add_argument("--endgame-candidates", type=int_in(0, 50), default=4,
                    help="top static plays valued besides the best and the played move (default 4)")
    an.add_argument("--threads", type=threads_arg, default=min(os.cpu_count() or 1, MAX_THREADS))
    an.add_argument("--tt-mb", type=int_in(1, MAX_TT_MB), default=256)
    an.add_argument("--seed", type=seed_arg, default=0)
    an.add_argument("--lexicon", help="default: the file's #lexicon")
    an.add_argument("--json", action="store_true", help="print one JSON object (stable for a given --seed)")
    an.add_argument("--gcg-out", metavar="FILE", help="write the game with the analysis in #note lines "
                    "(a folder with several games)")
    an.add_argument("--summary", action="store_true",
                    help="sum the games up per player (by name): mistakes, mistake index, win%% lost, missed "
                    "bingos, phonies, the biggest mistakes (with --json: a \"summary\" object besides the games)")
    an.add_argument("--top", type=int_in(0, 100), default=5,
                    help="biggest mistakes listed per player in the summary (default 5)")
    an.add_argument("--store", metavar="DIR",
                    help="keep each game's analysis in DIR (created if missing), keyed by the game, lexicon, "
                    "settings and engine version: a second run analyses only the games not stored yet")
    an.add_argument("--chart", metavar="FILE",
                    help="draw each player's win probability turn by turn, mistakes marked, to FILE (.png, .svg, "
                    ".pdf; a folder with several games: a PNG per game); needs matplotlib (the 'chart' extra)")
    an.add_argument("--chart-threshold", type=decimal_in(0.0, 100.0), default=4.0, metavar="POINTS",
                    help="mark the turns that lost at least this much win probability (percentage points; "
                    "default 4)")
    add_data_dir(an, layout=True)
    an.set_defaults(func=cmd_analyze)

    lt = sub.add_parser("leaves", help="leave values: train them by self-play")
    ltsub = lt.add_subparsers(dest="leaves_command", metavar="ACTION")
    tr = ltsub.add_parser("train", help="learn leave values for a lexicon by self-play, in rounds (README: "
                          "Leave training)")
    tr.add_argument("--lexicon", help="lexicon name (default: the bundled SCOWL70)")
    tr.add_argument("--out", required=True, help="folder for the rounds' KLV2/CSV files and the run's state")
    tr.add_argument("--from", dest="start", help="starting KLV2 (default: all leaves zero)")
    tr.add_argument("--games", type=int_in(1, 100_000_000), default=20_000, help="games per round (default 20000)")
    tr.add_argument("--rounds", type=int_in(1, 10_000), default=6, help="rounds in all (default 6)")
    tr.add_argument("--seed", type=seed_arg, default=0)
    tr.add_argument("--workers", type=int_in(1, 256), default=os.cpu_count() or 1,
                    help="worker processes (default: every core; not used with --cluster)")
    tr.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="play each round's games on a running Dask scheduler (host:port) or a local cluster of N "
                         "worker processes (needs the 'cluster' extra); the same leaves as in-process for a seed")
    tr.add_argument("--forced", type=decimal_in(0.0, 8.0), default=0.25,
                    help="forced rare-leave racks evaluated per turn (0 to 8; default 0.25)")
    tr.add_argument("--prior", type=decimal_in(0.0, 1e6), default=16.0,
                    help="shrinkage strength toward the sub-leave fit, in recorded racks (default 16)")
    tr.add_argument("--pool", type=int_in(1, 100), default=1,
                    help="refit on the racks of this many latest rounds (default 1: each round's own)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out after its last round")
    tr.add_argument("--json", action="store_true", help="one JSON line per round")
    add_data_dir(tr)
    tr.set_defaults(func=cmd_leaves_train)
    lt.set_defaults(func=lambda a: usage(lt))
