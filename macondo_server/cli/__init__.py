"""The `macondo` command line. Parsing and printing only; the engine does the work.

Every error is a one-line message on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TypeVar

from macondo_server import __version__
from macondo_server.engine.lexicon import LexiconError, LexiconRegistry, build_kwg_from_file
from macondo_server.engine.settings import DEFAULT_ENDGAME_CAP, DEFAULT_PEG_CAP, DEFAULT_SIM_CAP, Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.text import FormatError


class CliError(Exception):
    """A user-facing error: printed as 'macondo: error: ...' with exit status 1."""


def _registry(args: argparse.Namespace) -> LexiconRegistry:
    return LexiconRegistry(Settings.load(getattr(args, "data_dir", None)))


T = TypeVar("T")


def run_interruptible(run: Callable[[], T], stop: Callable[[], None], name: str = "job") -> T:
    """Run a long job in a worker thread and return its result. The first Ctrl-C asks the job to stop (it
    then returns its best result so far, which the caller prints); a second one abandons it
    (KeyboardInterrupt). The main thread only waits, so the signal is handled at once even while the
    engine runs without the GIL."""
    if threading.current_thread() is not threading.main_thread():
        return run()
    out: dict = {}

    def work() -> None:
        try:
            out["result"] = run()
        except BaseException as exc:  # noqa: BLE001 (re-raised in the main thread)
            out["error"] = exc

    interrupts = 0

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1:
            raise KeyboardInterrupt
        print(f"macondo: stopping the {name}; its best result so far follows (Ctrl-C again to abandon it)",
              file=sys.stderr, flush=True)
        stop()

    worker = threading.Thread(target=work, name=f"macondo-{name}", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        if sys.stderr.isatty():
            print(f"macondo: {name} running; Ctrl-C stops it and prints the best result so far",
                  file=sys.stderr, flush=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
    finally:
        signal.signal(signal.SIGINT, previous)
    if "error" in out:
        raise out["error"]
    return out["result"]


# ------------------------------------------------------------------ lexicon


def cmd_lexicon_build(args: argparse.Namespace) -> int:
    src = Path(args.words)
    if not src.is_file():
        raise CliError(f"word list {src} does not exist")
    t0 = time.perf_counter()
    data = build_kwg_from_file(src)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    from engine_cy.kwg import Kwg

    kwg = Kwg(data)
    print(
        f"wrote {out}: {kwg.word_count()} words, {kwg.n_nodes} nodes, "
        f"{len(data)} bytes in {time.perf_counter() - t0:.2f} s"
    )
    return 0


def cmd_lexicon_leaves(args: argparse.Namespace) -> int:
    from engine_cy.klv import Klv
    from macondo_server.engine.lexicon import klv2_from_csv

    src = Path(args.csv)
    if not src.is_file():
        raise CliError(f"leave CSV {src} does not exist")
    data = klv2_from_csv(src.read_text(encoding="utf-8"), source=str(src))
    Path(args.output).write_bytes(data)
    print(f"wrote {args.output}: {Klv(data).n_values} leaves, {len(data)} bytes")
    return 0


def cmd_lexicon_check(args: argparse.Namespace) -> int:
    lex = _registry(args).get(args.lexicon)
    for word in args.words:
        print(f"{word.upper()} {'valid' if lex.is_word(word) else 'invalid'}")
    return 0


def cmd_lexicon_list(args: argparse.Namespace) -> int:
    reg = _registry(args)
    for name in reg.available():
        print(name)
    return 0


# ------------------------------------------------------------------ positions


def cmd_show(args: argparse.Namespace) -> int:
    from macondo_server.model.render import render_position

    pos = parse_cgp(args.cgp)
    if args.json:
        print(json.dumps({"cgp": args.cgp, "bag": pos.tiles_in_bag(), "scores": list(pos.scores)}))
    else:
        print(render_position(pos))
    return 0


def cmd_gen(args: argparse.Namespace) -> int:
    from macondo_server.engine.facade import Engine

    pos = parse_cgp(args.cgp)
    engine = Engine(Settings.load(args.data_dir))
    n = None if args.all else args.n
    res = engine.generate(pos, lexicon=args.lexicon, leaves_path=args.leaves, n=n, sort=args.sort)
    ld = pos.ld
    if args.json:
        out = {
            "moves": [
                {
                    "move": engine.describe(m, pos),
                    "score": m.score,
                    "equity": round(m.equity, 3),
                    "leave": ld.rack_str(list(m.leave)),
                    "tiles_played": m.tiles_played,
                }
                for m in res.moves
            ],
            "counts": {"placements": res.placements, "exchanges": res.exchanges, "passes": res.passes},
        }
        print(json.dumps(out))
        return 0
    print("     Move                Leave  Score Equity")
    for i, m in enumerate(res.moves, 1):
        desc = engine.describe(m, pos, style="table")
        print(f"{i:3d}: {desc:<20}{ld.rack_str(list(m.leave)):<7}{m.score:5d} {m.equity:6.2f}")
    total = res.placements + res.exchanges + res.passes
    print(f"{total} legal moves: {res.placements} placements, {res.exchanges} exchanges, {res.passes} pass")
    return 0


def cmd_commit(args: argparse.Namespace) -> int:
    from macondo_server.engine.replay import commit, honest_after_commit

    pos = parse_cgp(args.cgp)
    engine_settings = Settings.load(args.data_dir)
    lex = LexiconRegistry(engine_settings).get(args.lexicon or pos.lexicon or engine_settings.default_lexicon)
    res = commit(pos, lex, args.move, tileorder=args.tileorder, seed=args.seed)
    # the CGP is the honest view of the player now on turn: no rack dealt at random, none of the mover's tiles
    honest = honest_after_commit(pos, res, args.tileorder)
    cgp = write_cgp(honest)
    if args.json:
        ld = pos.ld
        print(json.dumps({
            "cgp": cgp,
            "score": res.score,
            "scores": list(res.position.scores),
            "racks": [ld.rack_str(r) for r in honest.racks],
            # what the commit dealt (the mover's new rack, and a random rack where the opponent's was unknown):
            # not known to the player now on turn
            "dealt_racks": [ld.rack_str(r) for r in res.position.racks],
            "bag": ld.word_str(res.bag),
            "game_over": res.game_over,
            "end_reason": res.end_reason,
        }))
    else:
        print(cgp)
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    from macondo_server.engine.replay import lexicon_for_record, replay_gcg
    from macondo_server.model.gcg import read_gcg_file

    path = Path(args.file)
    if not path.is_file():
        raise CliError(f"GCG file {path} does not exist")
    record = read_gcg_file(str(path))
    settings = Settings.load(args.data_dir)
    registry = LexiconRegistry(settings)
    lex_name, warnings = lexicon_for_record(record, registry.available(), settings.default_lexicon, args.lexicon)
    lex = registry.get(lex_name)
    if args.turn is not None and not 0 <= args.turn <= len(record.events):
        raise CliError(f"--turn {args.turn} is out of range: the game has {len(record.events)} events")
    res = replay_gcg(record, lex, turn=args.turn)
    warnings += res.warnings
    game = res.game
    pos = res.positions[-1] if res.positions else res.start
    cgp = write_cgp(pos)
    scores = list(game.scores)
    on_turn = game.on_turn if res.positions else res.start_player
    if args.json:
        print(json.dumps({
            "cgp": cgp,
            "scores": scores,
            "on_turn": on_turn,
            "game_over": game.game_over,
            "end_reason": game.end_reason_name,
            "events": res.events_applied,
            "warnings": warnings,
        }))
        return 0
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    names = [p[0] for p in record.players]
    print(cgp)
    print(f"scores: {names[0]} {scores[0]}, {names[1]} {scores[1]}; on turn: {names[on_turn]}; "
          f"events replayed: {res.events_applied}/{len(record.events)}")
    if game.game_over:
        print(f"game over ({game.end_reason_name})")
    return 0


def cmd_autoplay(args: argparse.Namespace) -> int:
    from macondo_server.analysis.selfplay import bot_sources, bots_from_options, run_autoplay
    from macondo_server.engine.facade import Engine

    engine = Engine(Settings.load(args.data_dir))
    bot1, bot2 = bots_from_options(engine, args.lexicon, args.leaves, args.lexicon2, args.leaves2)
    cluster = None
    sources = None
    if args.cluster:
        from macondo_server.runtime.cluster import Cluster

        sources = bot_sources(engine, args.lexicon, args.leaves, args.lexicon2, args.leaves2)
        with _children_ignore_ctrl_c():
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
            cluster=cluster, sources=sources,
        ), stop.set, "autoplay")
    finally:
        if bar is not None:
            bar.stop()
        if cluster is not None:
            cluster.close()
    if args.json:
        print(json.dumps(summary.to_json()))
        return 0
    s = summary
    print(f"games {s.games} in {s.seconds:.2f} s ({s.games_per_second:.1f} games/s)")
    for b in (0, 1):
        print(f"bot{b + 1}: wins {s.wins[b]}  mean score {s.mean_score[b]:.1f}  bingos/game {s.bingos_per_game[b]:.2f}")
    print(f"draws {s.draws}; bot1 win rate {100 * s.win_rate:.1f}% ± {100 * s.win_rate_ci95:.1f} (95%); "
          f"mean spread {s.mean_spread:+.1f} (sd {s.spread_stdev:.1f}); turns/game {s.turns_per_game:.1f}")
    return 0


@contextlib.contextmanager
def _children_ignore_ctrl_c():
    """Processes started inside (a local cluster's workers) ignore SIGINT: a Ctrl-C at the terminal reaches
    the whole process group, and the stop is this process's to make (it cancels their tasks); without this
    the workers die with a traceback each. Ctrl-C is ignored here meanwhile (the cluster's start)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def cmd_leaves_train(args: argparse.Namespace) -> int:
    from macondo_server.analysis.leavetrain import LeaveTrainer, TrainOptions
    from macondo_server.engine.lexicon import load_klv

    reg = _registry(args)
    lex = reg.get(args.lexicon)
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
        with _children_ignore_ctrl_c():
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

    def on_round(fig) -> None:
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


def _engine(args: argparse.Namespace):
    from macondo_server.engine.facade import Engine

    return Engine(Settings.load(args.data_dir))


def cmd_endgame(args: argparse.Namespace) -> int:
    from macondo_server.analysis.endgame import EndgameJob, EndgameOptions

    pos = parse_cgp(args.cgp)
    opts = EndgameOptions(plies=args.plies, max_time=args.max_time, threads=args.threads, first_win=args.first_win,
                          heuristics=not args.no_heuristics, tt_megabytes=args.tt_mb, lexicon=args.lexicon)
    job = EndgameJob(_engine(args), pos, opts)
    live = not args.json and sys.stderr.isatty()

    def progress(r) -> None:
        if live:
            line = " ".join(m.text for m in r.line[:6])
            print(f"depth {r.depth}: value {r.value:+d}  {line}  ({r.nodes} nodes, {r.seconds:.2f} s)",
                  file=sys.stderr)

    res = run_interruptible(lambda: job.run(progress), job.stop, "endgame")
    if args.json:
        print(json.dumps(res.to_json()))
        return 0
    if res.first_win:
        print("Win found!" if res.final_spread > 0 else
              ("Draw found." if res.final_spread == 0 else "Win was not found."))
    else:
        print(f"Best sequence has a spread difference (value) of {res.value:+d}")
    print(f"Final spread after seq: {res.final_spread:+d}")
    if res.best_move:
        print(f"Best move: {res.best_move.table.strip()}")
    print("Best sequence:")
    for i, m in enumerate(res.line, 1):
        print(f"{i}) {'~' if m.estimated else ''}{m.table.strip()} ({m.score})")
    if res.complete:
        note = ""
    elif res.depth == 0:
        note = " (stopped during depth 1: the best of the first moves searched)"
    else:
        note = f" (stopped; deepest completed depth {res.depth} of {args.plies})"
    print(f"depth {res.depth}, {res.nodes} nodes in {res.seconds:.2f} s{note}")
    return 0


def cmd_sim(args: argparse.Namespace) -> int:
    from macondo_server.analysis.sim import SimJob, SimOptions, format_sim_table

    pos = parse_cgp(args.cgp)
    opts = SimOptions(plies=args.plies, num_plays=args.num_plays, plays=args.play or [], iterations=args.iterations,
                      stop=args.stop, max_time=args.max_time, threads=args.threads, seed=args.seed,
                      opp_rack=args.opp_rack, lexicon=args.lexicon, infer_play=args.infer,
                      infer_withdrawn=args.infer_withdrawn, infer_tolerance=args.tolerance,
                      infer_max_racks=args.infer_max_racks)
    job = SimJob(_engine(args), pos, opts)
    live = None
    progress = None
    if not args.json and sys.stdout.isatty():
        from rich.live import Live
        from rich.text import Text

        live = Live(Text("simulating..."), refresh_per_second=4, transient=True)
        live.start()

        def progress(r) -> None:
            live.update(Text(format_sim_table(r)))

    try:
        res = run_interruptible(lambda: job.run(progress), job.stop, "simulation")
    finally:
        if live is not None:
            live.stop()
    if args.json:
        print(json.dumps(res.to_json()))
    else:
        print(format_sim_table(res))
    return 0


def cmd_infer(args: argparse.Namespace) -> int:
    from macondo_server.analysis.infer import (
        InferOptions,
        format_infer,
        infer,
        last_play_before,
        last_play_on,
    )

    engine = _engine(args)
    if args.gcg is not None:
        from macondo_server.analysis.infer import last_play_from_record
        from macondo_server.engine.replay import lexicon_for_record, replay_gcg
        from macondo_server.model.gcg import read_gcg_file

        if args.cgp is not None or args.before or args.withdrawn:
            raise CliError("with --gcg the play comes from the record: no CGP, PLAY, --before or --withdrawn")
        path = Path(args.gcg)
        if not path.is_file():
            raise CliError(f"GCG file {path} does not exist")
        record = read_gcg_file(str(path))
        lex_name, _ = lexicon_for_record(record, engine.registry.available(), engine.settings.default_lexicon,
                                         args.lexicon)
        lex = engine.lexicon(lex_name)
        if args.turn is not None and not 0 <= args.turn <= len(record.events):
            raise CliError(f"--turn {args.turn} is out of range: the game has {len(record.events)} events")
        lp = last_play_from_record(record, replay_gcg(record, lex, turn=args.turn), lex)
        pos = lp.before
        args.lexicon = lex.name
    else:
        if args.cgp is None or args.play is None:
            raise CliError("give a CGP and the opponent's PLAY, or --gcg FILE [--turn N]")
        if args.turn is not None:
            raise CliError("--turn goes with --gcg")
        pos = parse_cgp(args.cgp)
        lex = engine.lexicon_for(pos, args.lexicon)
        make = last_play_before if args.before else last_play_on
        lp = make(pos, args.play, lex, withdrawn=args.withdrawn)
    opts = InferOptions(tolerance=args.tolerance, max_racks=args.max_racks, threads=args.threads, seed=args.seed,
                        lexicon=args.lexicon)
    stop = threading.Event()
    res = run_interruptible(lambda: infer(engine, lp, opts, stop=stop), stop.set, "inference")
    if args.json:
        print(json.dumps(res.to_json(pos.ld, args.top)))
    else:
        print(format_infer(res, pos.ld, args.top))
    return 0


def tolerance_points(text: str) -> float:
    """An argparse type: points of equity from 0 to 1000 (digits and one point; no exponent)."""
    if _DECIMAL_TEXT.fullmatch(text) is not None and float(text) <= 1000:
        return float(text)
    raise argparse.ArgumentTypeError(f"must be a number of points from 0 to 1000, got {_shown(text)}")


def _bool_text(text: str) -> bool:
    low = text.lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {text!r} (true or false)")


def cmd_peg(args: argparse.Namespace) -> int:
    from macondo_server.analysis.peg.job import PegJob
    from macondo_server.analysis.peg.options import PegOptions

    pos = parse_cgp(args.cgp)
    opts = PegOptions(endgame_plies=args.endgame_plies, only_solve=args.only_solve or [],
                      max_tiles_left=args.max_tiles_left, max_nested_depth=args.max_nested_depth,
                      skip_deep_pass=args.skip_deep_pass, early_cutoff=args.early_cutoff,
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
        job = PegJob(_engine(args), pos, opts, cluster=cluster, checkpoint=store, resume=args.resume)
        return _peg_run(args, job)


@contextlib.contextmanager
def _peg_resources(args: argparse.Namespace):
    """The cluster (--cluster) and checkpoint store (--checkpoint) of a pre-endgame, closed afterwards."""
    from macondo_server.runtime.checkpoint import CheckpointStore

    cluster = store = None
    try:
        if args.checkpoint and not args.eventuality:
            store = CheckpointStore(args.checkpoint)
        if args.cluster and not args.eventuality:
            from macondo_server.runtime.cluster import Cluster

            with _children_ignore_ctrl_c():
                cluster = Cluster(args.cluster, data_dirs=[str(d) for d in Settings.load(args.data_dir).data_dirs])
        yield cluster, store
    finally:
        if cluster is not None:
            cluster.close()
        if store is not None:
            store.close()


def _peg_run(args: argparse.Namespace, job) -> int:
    from macondo_server.analysis.peg import explain
    from macondo_server.analysis.peg.result import format_table

    if args.eventuality:
        text = run_interruptible(lambda: explain.eventuality(job, args.eventuality), job.stop, "pre-endgame")
        print(json.dumps({"eventuality": args.eventuality.upper(), "text": text}) if args.json else text)
        return 0
    live = not args.json and sys.stderr.isatty()

    def progress(r) -> None:
        if live:
            plays_done = sum(p.cut_off or p.pending == 0 for p in r.plays)
            if r.leader is not None:
                lead = f"leader {r.leader.table} {r.leader.lower:g}-{r.leader.upper:g} ({r.leader_reason})"
            else:
                lead = f"no leader yet (best lower {r.best_lower:g}, best upper {r.best_upper:g})"
            stage = (f"quick pass {r.quick_done_jobs}/{r.total_jobs} draws" if r.phase in ("setup", "quick")
                     else f"{r.endgame_plies}-ply solve")
            print(f"peg [{stage}]: {lead}; plays {plays_done}/{len(r.plays)} done "
                  f"({sum(p.cut_off for p in r.plays)} cut off), "
                  f"draws {r.done_jobs}/{r.total_jobs}, {r.endgames} endgames, {r.work_line()}, "
                  f"{r.nested_calls} nested calls ({r.nested_hits} cached), {r.seconds:.1f} s", file=sys.stderr)

    res = run_interruptible(lambda: job.run(progress, interval=2.0), job.stop, "pre-endgame")
    if args.json:
        print(json.dumps(res.to_json()))
        return 0
    print(format_table(res, rows=args.rows, verbose=args.verbose))
    status = "complete" if res.complete else ("finished: unresolved draws are shown as such" if res.finished
                                              else "stopped: unresolved draws are shown as such")
    print(f"{res.endgames} endgames, {res.nested_calls} nested solves ({res.nested_hits} from the cache) in "
          f"{res.seconds:.2f} s ({status})")
    if res.cluster_workers:
        print(f"cluster {args.cluster}: {res.cluster_workers} workers, {res.cluster_tasks} tasks")
    if args.checkpoint:
        print(f"checkpoint {args.checkpoint}: {res.reused} verdicts reused, {res.checkpointed} recorded in all"
              + ("" if res.finished else "; --resume continues this solve"))
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    """Analyse every turn of one or more GCG games (files or folders of .gcg files)."""
    from macondo_server.analysis.review import AnalyzeOptions, analyze_record, annotated_gcg, print_report
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
    opts = AnalyzeOptions(
        player=args.player, sim_plies=args.sim_plies, sim_plays=args.sim_plays,
        sim_iterations=args.sim_iterations, sim_max_time=args.sim_time, peg_max_bag=args.peg_max_bag,
        peg_plays=args.peg_plays,
        peg_endgame_plies=args.peg_endgame_plies, peg_max_time=args.peg_time, endgame_plies=args.endgame_plies,
        endgame_max_time=args.endgame_time, endgame_candidates=args.endgame_candidates, threads=args.threads,
        seed=args.seed, lexicon=args.lexicon, tt_megabytes=args.tt_mb)
    opts.validate()
    engine = _engine(args)
    from rich.console import Console

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    stop = threading.Event()
    results: list[dict] = []
    failed = 0

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
        except (FormatError, OSError) as exc:
            failure(p, exc)
            continue
        bar = None
        progress = None
        if not args.json and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(TextColumn(f"{p.name}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TextColumn("{task.description}"), transient=True, console=Console(stderr=True))
            task = bar.add_task("", total=None)
            bar.start()

            def progress(done: int, total: int, turn, bar=bar, task=task) -> None:
                last = f"event {turn.event}: {turn.played.move} ({turn.mistake})" if turn is not None else ""
                bar.update(task, completed=done, total=total, description=last)

        def one(record=record, p=p, progress=progress):
            return analyze_record(engine, record, AnalyzeOptions(**vars(opts)), name=p.name, progress=progress,
                                  stop=stop)

        try:
            res = run_interruptible(one, stop.set, "analysis")
        except (FormatError, LexiconError, ValueError) as exc:
            failure(p, exc)
            continue
        finally:
            if bar is not None:
                bar.stop()
        results.append(res.to_json())
        if out is not None:
            target = out / f"{p.stem}.analysed.gcg" if out.is_dir() else out
            target.write_text(annotated_gcg(record, res), encoding="utf-8")
        if not args.json:
            print_report(res, console)
    if args.json:
        print(json.dumps({"games": results}))
    return 1 if failed else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from macondo_server.api.grpc_server import ServerStartError, serve
    from macondo_server.runtime.limits import LimitError, Limits, parse_assignments

    try:
        limits = Limits.load(parse_assignments(args.limit or []), max_jobs=args.max_jobs)
    except LimitError as exc:
        raise CliError(str(exc)) from None
    if args.print_limits:
        for name, value in limits.as_dict().items():
            print(f"{name} = {value}")
        return 0
    http = None
    if args.http_port is not None or args.web:
        import os

        from macondo_server.api.connect import TOKEN_ENV, HttpOptions
        port = args.http_port if args.http_port is not None else 8080
        http = HttpOptions(host=args.http_host, port=port, token=args.http_token or os.environ.get(TOKEN_ENV, ""),
                           cors_origins=tuple(args.cors_origin or ()), web=args.web)
    try:
        return serve(Settings.load(args.data_dir), args.host, args.port, limits, http=http, cluster=args.cluster,
                     checkpoint_dir=args.checkpoint_dir)
    except ServerStartError as exc:
        raise CliError(str(exc)) from None


def cmd_proto_path(args: argparse.Namespace) -> int:
    """The .proto files ship in the macondo-client distribution: protoc -I "$(macondo proto-path)" ..."""
    from macondo_client import proto_path

    path = Path(proto_path())
    if not (path / "macondo" / "v1" / "engine.proto").is_file():
        raise CliError(f"the .proto files are missing from {path} (reinstall macondo-client)")
    print(path)
    return 0


def cmd_shell(args: argparse.Namespace) -> int:
    from macondo_client import MacondoError
    from macondo_client.shell import run_shell

    from macondo_server.api.inprocess import connect

    try:
        with connect(args.server, args.data_dir) as client:
            return run_shell(client)
    except MacondoError as exc:
        raise CliError(exc.message) from None


def cmd_bots(args: argparse.Namespace) -> int:
    import contextlib

    from macondo_client import MacondoError
    from macondo_client.bots import main_bots

    from macondo_server.api.inprocess import connect

    for text in (args.strategy1, args.strategy2):
        kind = text.partition(":")[0].strip()
        if kind not in ("static", "sim"):
            raise CliError(f"unknown strategy {text!r} (available: static, sim[:iterations=N,plies=P,...])")
    if args.cluster:
        from macondo_server.runtime.cluster import parse_cluster_spec

        if parse_cluster_spec(args.cluster)[0] == "address" and not args.server:
            raise CliError("bots --cluster ADDRESS needs --server (an engine server its workers can reach; "
                           "without one, a server of this process on 127.0.0.1 serves local:N only)")
    try:
        with contextlib.ExitStack() as stack:
            first = stack.enter_context(connect(args.server, args.data_dir))
            second = stack.enter_context(connect(args.server2)) if args.server2 else first
            cluster = None
            if args.cluster:
                from macondo_server.runtime.cluster import Cluster

                cluster = stack.enter_context(Cluster(args.cluster))
            return main_bots(first, second, args.strategy1, args.strategy2, args.games, args.seed,
                             args.lexicon or "", args.gcg_dir, args.json, cluster=cluster)
    except MacondoError as exc:
        raise CliError(exc.message) from None


# ------------------------------------------------------------------ numeric arguments
#
# Every numeric option takes plain ASCII digits (a leading minus only where negative values mean something)
# and is checked against its range here, so a bad value is a one-line error naming the option and the range,
# never an OverflowError deep in the engine.

MAX_SEED = 2**64 - 1              # seeds are unsigned 64-bit in the engine
MAX_THREADS = 256
MAX_SECONDS = 1_000_000.0
MAX_TT_MB = 65536
EG_MAX_PLIES = 60                 # endgame.MAX_PLIES (kept here so that parsing imports no engine)
SIM_MAX_ITERATIONS = 10_000_000   # sim.MAX_ITERATIONS
_INT_TEXT = re.compile(r"-?[0-9]{1,20}", re.ASCII)
_DECIMAL_TEXT = re.compile(r"[0-9]{1,12}(?:\.[0-9]{0,12})?|\.[0-9]{1,12}", re.ASCII)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:24] + "...")


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number from lo to hi."""
    def parse(text: str) -> int:
        if _INT_TEXT.fullmatch(text) is not None:
            v = int(text)
            if lo <= v <= hi:
                return v
        raise argparse.ArgumentTypeError(f"must be a whole number from {lo} to {hi}, got {_shown(text)}")

    parse.__name__ = f"integer {lo}..{hi}"
    return parse


def int_choice(*values: int) -> Callable[[str], int]:
    """An argparse type: one of a few whole numbers."""
    names = ", ".join(str(v) for v in values[:-1]) + f" or {values[-1]}"

    def parse(text: str) -> int:
        if _INT_TEXT.fullmatch(text) is not None and int(text) in values:
            return int(text)
        raise argparse.ArgumentTypeError(f"must be {names}, got {_shown(text)}")

    parse.__name__ = f"one of {names}"
    return parse


def seconds_in(hi: float) -> Callable[[str], float]:
    """An argparse type: a decimal number of seconds from 0 to hi (digits and one point; no exponent)."""
    def parse(text: str) -> float:
        if _DECIMAL_TEXT.fullmatch(text) is not None:
            v = float(text)
            if 0 <= v <= hi:
                return v
        raise argparse.ArgumentTypeError(f"must be a number of seconds from 0 to {hi:.0f}, "
                                         f"got {_shown(text)}")

    parse.__name__ = "seconds"
    return parse


def _decimal_in(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a decimal number from lo to hi (digits and one point; no exponent)."""
    def parse(text: str) -> float:
        if _DECIMAL_TEXT.fullmatch(text) is not None:
            v = float(text)
            if lo <= v <= hi:
                return v
        raise argparse.ArgumentTypeError(f"must be a number from {lo:g} to {hi:g}, got {_shown(text)}")

    parse.__name__ = "number"
    return parse


_seed = int_in(0, MAX_SEED)
_threads = int_in(1, MAX_THREADS)
_seconds = seconds_in(MAX_SECONDS)
_tt_mb = int_in(1, MAX_TT_MB)


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line on stderr and exit status 1, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"{self.prog}: error: {message}\n")


# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="macondo",
        description="Crossword board game analysis engine (move generation, simulation, endgame, pre-endgame).",
    )
    p.add_argument("--version", action="version", version=f"macondo {__version__}")
    p.add_argument("--data-dir", help="lexicon directories, os.pathsep-separated (default: MACONDO_DATA_DIR, "
                   "and always the bundled lexicon)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    lex = sub.add_parser("lexicon", help="build and query lexica (KWG word graphs)")
    lsub = lex.add_subparsers(dest="lexicon_command", metavar="ACTION")
    b = lsub.add_parser("build", help="compile a word list into a KWG (DAWG + GADDAG)")
    b.add_argument("words", help="word list, one word per line")
    b.add_argument("-o", "--output", required=True, help="output .kwg file")
    b.set_defaults(func=cmd_lexicon_build)
    lv = lsub.add_parser("leaves", help="write a KLV2 leave file from a 'leave,value' CSV")
    lv.add_argument("csv")
    lv.add_argument("-o", "--output", required=True, help="output .klv2 file")
    lv.set_defaults(func=cmd_lexicon_leaves)
    c = lsub.add_parser("check", help="print each word with valid/invalid")
    c.add_argument("--lexicon", help="lexicon name (default: the bundled SCOWL70)")
    c.add_argument("words", nargs="+")
    c.set_defaults(func=cmd_lexicon_check)
    ls = lsub.add_parser("list", help="list the lexica found in the data directories")
    ls.set_defaults(func=cmd_lexicon_list)
    lex.set_defaults(func=lambda a: _usage(lex))

    s = sub.add_parser("show", help="draw a CGP position as text")
    s.add_argument("cgp")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)

    g = sub.add_parser("gen", help="generate and rank every legal move for the player on turn")
    g.add_argument("cgp", help="position as CGP (the first rack is the mover's)")
    g.add_argument("--lexicon", help="lexicon name (default: the CGP's lex opcode, else SCOWL70)")
    g.add_argument("--leaves", help="KLV2 leave file (default: NAME.klv2 beside the lexicon)")
    lim = g.add_mutually_exclusive_group()
    lim.add_argument("-n", type=int_in(1, 1_000_000), default=15,
                     help="show the top N moves (1 to 1000000; default 15)")
    lim.add_argument("--all", action="store_true", help="show every legal move")
    g.add_argument("--sort", choices=["equity", "score"], default="equity")
    g.add_argument("--json", action="store_true", help="print one JSON object")
    g.set_defaults(func=cmd_gen)

    cm = sub.add_parser("commit", help="play a move on a position and print the new position")
    cm.add_argument("cgp")
    cm.add_argument("move", help="e.g. '8G QI', '2L P.ND', 'exch ABC', 'pass'")
    cm.add_argument("--tileorder", help="bag draw order, first drawn first (length = unseen - 7)")
    cm.add_argument("--lexicon")
    cm.add_argument("--seed", type=_seed, default=0, help="seed for random draws without a tile order")
    cm.add_argument("--json", action="store_true")
    cm.set_defaults(func=cmd_commit)

    ld_ = sub.add_parser("load", help="replay a GCG file and print the position")
    ld_.add_argument("file")
    ld_.add_argument("--turn", type=int_in(0, 1_000_000), help="replay this many events (default: all)")
    ld_.add_argument("--lexicon", help="default: the file's #lexicon")
    ld_.add_argument("--json", action="store_true")
    ld_.set_defaults(func=cmd_load)

    ap = sub.add_parser("autoplay", help="static-equity bot against static-equity bot")
    ap.add_argument("--games", type=int_in(1, 100_000_000), default=100)
    ap.add_argument("--lexicon")
    ap.add_argument("--leaves")
    ap.add_argument("--lexicon2")
    ap.add_argument("--leaves2")
    ap.add_argument("--seed", type=_seed, default=0)
    ap.add_argument("--threads", type=_threads, default=min(os.cpu_count() or 1, MAX_THREADS))
    ap.add_argument("--pairs", action="store_true", help="play games in pairs with identical draws")
    ap.add_argument("--gcg-dir", help="write every game as GCG here")
    ap.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="play the games on a running Dask scheduler (host:port) or a local cluster of N worker "
                         "processes (needs the 'cluster' extra); the same games as in-process for a seed")
    ap.add_argument("--json", action="store_true")
    ap.set_defaults(func=cmd_autoplay)

    eg = sub.add_parser("endgame", help="solve an endgame (empty bag) exactly")
    eg.add_argument("cgp")
    eg.add_argument("--plies", type=int_in(1, EG_MAX_PLIES), default=4,
                    help=f"search depth (1 to {EG_MAX_PLIES}; default 4)")
    eg.add_argument("--max-time", type=_seconds, default=0.0,
                    help="seconds; returns the deepest completed depth (default: no limit)")
    eg.add_argument("--threads", type=_threads, default=min(os.cpu_count() or 1, MAX_THREADS))
    eg.add_argument("--first-win", action="store_true", help="only establish win / draw / loss")
    eg.add_argument("--no-heuristics", action="store_true",
                    help="score the horizon by the spread instead of a greedy playout")
    eg.add_argument("--tt-mb", type=_tt_mb, default=256, help="transposition table size in MB")
    eg.add_argument("--lexicon")
    eg.add_argument("--json", action="store_true")
    eg.set_defaults(func=cmd_endgame)

    sm = sub.add_parser("sim", help="rank candidate plays by Monte Carlo simulation")
    sm.add_argument("cgp")
    sm.add_argument("--plies", type=int_in(0, 15), default=2,
                    help="look-ahead plies after the candidate (0 to 15; default 2)")
    sm.add_argument("--num-plays", type=int_in(1, 500), default=15,
                    help="top N plays by static equity (1 to 500)")
    sm.add_argument("--play", action="append", metavar="MOVE", help="also simulate this play (repeatable)")
    sm.add_argument("--iterations", type=int_in(1, SIM_MAX_ITERATIONS), default=1000,
                    help="iteration cap (default 1000)")
    sm.add_argument("--stop", type=int_choice(95, 98, 99),
                    help="stop once the leader is separated (95, 98 or 99)")
    sm.add_argument("--max-time", type=_seconds, default=0.0)
    sm.add_argument("--threads", type=_threads, default=min(os.cpu_count() or 1, MAX_THREADS))
    sm.add_argument("--seed", type=_seed, default=0)
    sm.add_argument("--opp-rack", help="known opponent tiles (the only source: an opponent rack written in the "
                    "CGP is not taken as known)")
    sm.add_argument("--infer", metavar="PLAY", help="the opponent's last play as it stands on the board ('8G Q(I)', "
                    "'exch N'): their rack is drawn from the leaves it suggests (see macondo infer)")
    sm.add_argument("--infer-withdrawn", action="store_true", help="the --infer play was a phony challenged off")
    sm.add_argument("--tolerance", type=tolerance_points, default=3.0,
                    help="inference: points of equity the play may fall short of the best (default 3)")
    sm.add_argument("--infer-max-racks", type=int_in(1, 10_000_000), default=50_000,
                    help="inference: exhaustive up to this many leaves, else this many random racks")
    sm.add_argument("--lexicon")
    sm.add_argument("--json", action="store_true")
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
    inf.add_argument("--tolerance", type=tolerance_points, default=3.0,
                     help="points of equity the play may fall short of the rack's best (default 3, as Macondo)")
    inf.add_argument("--max-racks", type=int_in(1, 10_000_000), default=50_000,
                     help="enumerate every leave up to this many distinct ones, else judge this many random "
                     "racks (default 50,000)")
    inf.add_argument("--threads", type=_threads, default=min(os.cpu_count() or 1, MAX_THREADS))
    inf.add_argument("--seed", type=_seed, default=0, help="seed of the random racks when sampling")
    inf.add_argument("--top", type=int_in(1, 10_000), default=15, help="leaves shown (default 15)")
    inf.add_argument("--lexicon")
    inf.add_argument("--json", action="store_true")
    inf.set_defaults(func=cmd_infer)

    pg = sub.add_parser("peg", help="solve a pre-endgame (1 to 6 tiles in the bag) over every draw")
    pg.add_argument("cgp")
    pg.add_argument("--endgame-plies", type=int_in(1, 30), default=4,
                    help="depth of each endgame (1 to 30; default 4)")
    pg.add_argument("--only-solve", action="append", metavar="MOVE", help="solve only this play (repeatable)")
    pg.add_argument("--max-tiles-left", type=int_in(-1, 6), default=1,
                    help="plays leaving at most N tiles in the bag (-1 all, 0 only bag-emptying; default 1)")
    pg.add_argument("--max-nested-depth", type=int_in(-1, 100), default=1,
                    help="-1 unlimited, 0 no nested solves")
    pg.add_argument("--skip-deep-pass", type=_bool_text, default=True, metavar="true|false")
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
    pg.add_argument("--quick-pass", type=_bool_text, default=True, metavar="true|false",
                    help="rank every play on every draw at low fidelity first (default true)")
    pg.add_argument("--threads", type=_threads, default=min(os.cpu_count() or 1, MAX_THREADS))
    pg.add_argument("--max-time", type=_seconds, default=0.0)
    pg.add_argument("--tt-mb", type=_tt_mb, default=256)
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
    pg.set_defaults(func=cmd_peg)

    an = sub.add_parser("analyze", help="analyse every turn of GCG games (files or folders): the engine's choice, "
                        "each move's loss, mistakes, missed bingos, phonies")
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
                    help=f"safety cap, seconds per pre-endgame turn; no winner by then: simulation (0: none; "
                    f"default {DEFAULT_PEG_CAP:g})")
    an.add_argument("--endgame-plies", type=int_in(1, 30), default=6)
    an.add_argument("--endgame-time", type=seconds_in(3600), default=DEFAULT_ENDGAME_CAP,
                    help=f"safety cap, seconds per endgame solve (0: none; default {DEFAULT_ENDGAME_CAP:g})")
    an.add_argument("--endgame-candidates", type=int_in(0, 50), default=4,
                    help="top static plays valued besides the best and the played move (default 4)")
    an.add_argument("--threads", type=_threads, default=min(os.cpu_count() or 1, MAX_THREADS))
    an.add_argument("--tt-mb", type=int_in(1, MAX_TT_MB), default=256)
    an.add_argument("--seed", type=_seed, default=0)
    an.add_argument("--lexicon", help="default: the file's #lexicon")
    an.add_argument("--json", action="store_true", help="print one JSON object (stable for a given --seed)")
    an.add_argument("--gcg-out", metavar="FILE", help="write the game with the analysis in #note lines "
                    "(a folder with several games)")
    an.set_defaults(func=cmd_analyze)

    sv = sub.add_parser("serve", help="run the gRPC engine server")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int_in(0, 65535), default=50051)
    sv.add_argument("--max-jobs", type=int_in(1, 1_000_000), default=None,
                    help="concurrent long-running jobs (default: 4 x cores, at least 4)")
    sv.add_argument("--limit", action="append", metavar="NAME=VALUE",
                    help="override a limit (see --print-limits; also MACONDO_LIMIT_NAME=VALUE)")
    sv.add_argument("--print-limits", action="store_true", help="print the limits in force and exit")
    sv.add_argument("--http-port", type=int_in(0, 65535), default=None,
                    help="also serve Connect and gRPC-Web (browsers, Node) on this HTTP port (default with --web: 8080)")
    sv.add_argument("--http-host", default="127.0.0.1", help="address of the HTTP port (default 127.0.0.1)")
    sv.add_argument("--http-token", default=None,
                    help="bearer token the HTTP port requires (also MACONDO_HTTP_TOKEN; needed off loopback)")
    sv.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                    help="let pages from this origin call the HTTP port (repeatable; '*' for any; default none)")
    sv.add_argument("--web", action="store_true", help="serve the web analysis board on the HTTP port")
    sv.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="a Dask scheduler (host:port) or a local cluster of N worker processes for requests that "
                         "set use_cluster (pre-endgames, autoplay)")
    sv.add_argument("--checkpoint-dir", metavar="DIR",
                    help="record pre-endgame verdicts in DIR/peg.sqlite for requests that set checkpoint or resume")
    sv.add_argument("--data-dir", default=argparse.SUPPRESS, help="lexicon directory (as the global option)")
    sv.set_defaults(func=cmd_serve)

    sh = sub.add_parser("shell", help="interactive shell over gRPC (starts a local server without --server)")
    sh.add_argument("--server", help="engine server address HOST:PORT (default: a server in this process)")
    sh.add_argument("--data-dir", default=argparse.SUPPRESS, help="lexicon directory of the local server")
    sh.set_defaults(func=cmd_shell)

    bt = sub.add_parser("bots", help="bot-vs-bot games through the game-session API of one or two servers")
    bt.add_argument("--server", help="referee and bot 1 server HOST:PORT (default: a server in this process)")
    bt.add_argument("--server2", help="bot 2 server (default: the first)")
    bt.add_argument("--strategy1", default="static", help="static, or sim[:iterations=N,plies=P,...]")
    bt.add_argument("--strategy2", default="static")
    bt.add_argument("--games", type=int_in(1, 100_000_000), default=20)
    bt.add_argument("--seed", type=_seed, default=1)
    bt.add_argument("--lexicon", help="lexicon of the games (default: the server's)")
    bt.add_argument("--gcg-dir", help="write each game as GCG into this directory")
    bt.add_argument("--json", action="store_true")
    bt.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="play the games on a Dask scheduler's workers or N local worker processes (the same "
                         "games as without; needs the cluster extra)")
    bt.add_argument("--data-dir", default=argparse.SUPPRESS, help="lexicon directory of the local server")
    bt.set_defaults(func=cmd_bots)

    lt = sub.add_parser("leaves", help="leave values: train them by self-play")
    ltsub = lt.add_subparsers(dest="leaves_command", metavar="ACTION")
    tr = ltsub.add_parser("train", help="learn leave values for a lexicon by self-play, in rounds (README: "
                          "Leave training)")
    tr.add_argument("--lexicon", help="lexicon name (default: the bundled SCOWL70)")
    tr.add_argument("--out", required=True, help="folder for the rounds' KLV2/CSV files and the run's state")
    tr.add_argument("--from", dest="start", help="starting KLV2 (default: all leaves zero)")
    tr.add_argument("--games", type=int_in(1, 100_000_000), default=20_000, help="games per round (default 20000)")
    tr.add_argument("--rounds", type=int_in(1, 10_000), default=6, help="rounds in all (default 6)")
    tr.add_argument("--seed", type=_seed, default=0)
    tr.add_argument("--workers", type=int_in(1, 256), default=os.cpu_count() or 1,
                    help="worker processes (default: every core; not used with --cluster)")
    tr.add_argument("--cluster", metavar="ADDRESS|local:N",
                    help="play each round's games on a running Dask scheduler (host:port) or a local cluster of N "
                         "worker processes (needs the 'cluster' extra); the same leaves as in-process for a seed")
    tr.add_argument("--forced", type=_decimal_in(0.0, 8.0), default=0.25,
                    help="forced rare-leave racks evaluated per turn (0 to 8; default 0.25)")
    tr.add_argument("--prior", type=_decimal_in(0.0, 1e6), default=16.0,
                    help="shrinkage strength toward the sub-leave fit, in recorded racks (default 16)")
    tr.add_argument("--pool", type=int_in(1, 100), default=1,
                    help="refit on the racks of this many latest rounds (default 1: each round's own)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out after its last round")
    tr.add_argument("--json", action="store_true", help="one JSON line per round")
    tr.set_defaults(func=cmd_leaves_train)
    lt.set_defaults(func=lambda a: _usage(lt))

    pp = sub.add_parser("proto-path", help="print the include directory of the installed macondo.v1 .proto files")
    pp.set_defaults(func=cmd_proto_path)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return p


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


# Later modules register their subcommands here (gen, sim, endgame, ...).
_EXTRA_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = []


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (CliError, FormatError, LexiconError, ValueError, OSError) as exc:
        print(f"macondo: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("macondo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
