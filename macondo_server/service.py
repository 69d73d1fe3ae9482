"""gRPC servicer: validate -> convert -> engine/jobs -> respond. Errors map to status codes with a message
that names the problem (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED); nothing escapes as a crash."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from . import __version__
from .autoplay import GameRecord, bots_from_options, run_autoplay, summarize
from .config import Settings
from .convert import (
    autoplay_to_pb,
    endgame_to_pb,
    game_to_pb,
    move_to_pb,
    peg_to_pb,
    plain_move_to_pb,
    sim_to_pb,
)
from .endgame import EndgameJob, EndgameOptions
from .engine import Engine
from .formats import FormatError, parse_cgp
from .gamestate import position_from_game
from .jobs import JobRegistry, TooManyJobsError, watch_stop
from .lexicon import LexiconError, UnknownLexiconError
from .pb.macondo.v1 import engine_pb2 as pb
from .pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from .peg import PegJob, PegOptions
from .sessions import SessionStore, TooManyGamesError, UnknownGameError
from .sim import SimJob, SimOptions

log = logging.getLogger("macondo.server")

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
MAX_AUTOPLAY_GAMES = 1_000_000
MAX_CGP_CHARS = 4096
SNAPSHOT_SECONDS = 0.25
DEADLINE_MARGIN = 0.15   # seconds kept back to deliver the final result before a deadline


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str, reason: str) -> None:
    info = error_details_pb2.ErrorInfo(reason=reason, domain="macondo.v1")
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[detail])
    context.abort_with_status(rpc_status.to_status(status))


class EngineServicer(pb_grpc.EngineServicer):
    def __init__(self, settings: Settings, max_jobs: int) -> None:
        self.settings = settings
        self.engine = Engine(settings)
        self.jobs = JobRegistry(max_jobs)
        self.sessions = SessionStore(self.engine)

    # -------------------------------------------------------------- helpers

    def _guard(self, context: grpc.ServicerContext, fn, *args):
        """Run fn, turning user errors into statuses."""
        try:
            return fn(*args)
        except UnknownLexiconError as exc:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(exc), "UNKNOWN_LEXICON")
        except UnknownGameError as exc:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(exc.args[0]), "UNKNOWN_GAME")
        except (TooManyJobsError, TooManyGamesError) as exc:
            _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), "TOO_MANY_JOBS")
        except (FormatError, LexiconError, ValueError) as exc:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc), "INVALID_ARGUMENT")

    def _position(self, msg: pb.Position):
        if not msg.cgp:
            raise FormatError("position.cgp is empty")
        if len(msg.cgp) > MAX_CGP_CHARS:
            raise FormatError(f"position.cgp is longer than {MAX_CGP_CHARS} characters")
        return parse_cgp(msg.cgp)

    # -------------------------------------------------------------- RPCs

    def GetServerInfo(self, request, context):
        reg = self.engine.registry

        def build():
            lexica = []
            for name in reg.available():
                try:
                    lex = reg.get(name)
                except LexiconError:
                    continue
                lexica.append(pb.LexiconInfo(name=name, has_leaves=lex.klv is not None, source=lex.source))
            return pb.ServerInfo(
                version=__version__,
                api_version="macondo.v1",
                lexica=lexica,
                default_lexicon=self.settings.default_lexicon,
                limits=pb.Limits(max_jobs=self.jobs.max_jobs, max_message_bytes=MAX_MESSAGE_BYTES,
                                 max_autoplay_games=MAX_AUTOPLAY_GAMES),
                running_jobs=self.jobs.running(),
            )

        return self._guard(context, build)

    def GenerateMoves(self, request, context):
        def run():
            pos = self._position(request.position)
            if request.num_plays < 0:
                raise ValueError(f"num_plays must not be negative, got {request.num_plays}")
            n = None if request.all else (request.num_plays or 15)
            sort = "score" if request.sort == pb.SORT_SCORE else "equity"
            res = self.engine.generate(pos, lexicon=request.position.lexicon or None,
                                       leaves_path=request.leaves or None, n=n, sort=sort)
            lex = self.engine.lexicon_for(pos, request.position.lexicon or None)
            return pb.GenerateMovesResponse(
                moves=[move_to_pb(m, pos) for m in res.moves],
                counts=pb.MoveCounts(placements=res.placements, exchanges=res.exchanges, passes=res.passes),
                lexicon=lex.name,
            )

        return self._guard(context, run)

    def StopJob(self, request, context):
        return pb.StopJobResponse(found=self.jobs.stop(request.job_id))

    def Autoplay(self, request, context) -> Iterator[pb.AutoplayProgress]:
        def setup():
            games = request.games or 100
            if not 0 < games <= MAX_AUTOPLAY_GAMES:
                raise ValueError(f"games must be 1 to {MAX_AUTOPLAY_GAMES}, got {request.games}")
            threads = request.threads or (os.cpu_count() or 1)
            if not 0 < threads <= 256:
                raise ValueError(f"threads must be 1 to 256, got {request.threads}")
            bot1, bot2 = bots_from_options(self.engine, request.lexicon, request.leaves, request.lexicon2,
                                           request.leaves2)
            return games, threads, bot1, bot2

        games, threads, bot1, bot2 = self._guard(context, setup)
        log.info("kind=autoplay games=%d threads=%d seed=%d", games, threads, request.seed)
        records: list[GameRecord] = []
        started = time.monotonic()

        def run(stop: threading.Event):
            return run_autoplay(bot1, bot2, games, seed=request.seed, threads=threads, pairs=request.pairs, stop=stop,
                                records=records)

        yield from self._stream(
            context, "autoplay", run,
            lambda: autoplay_to_pb(summarize(list(records), time.monotonic() - started), "", games, False, False),
            lambda summary, stopped: autoplay_to_pb(summary, "", games, True, stopped),
        )

    # -------------------------------------------------------------- analysis jobs (streaming)

    def _stream(self, context, kind: str, run: Callable[[threading.Event], object],
                snapshot: Callable[[], Any], final: Callable[[Any, bool], Any]):
        """Run a long job in a worker thread; yield snapshot() every SNAPSHOT_SECONDS and final(result,
        stopped) at the end. Cancellation, StopJob and the deadline all stop the job, which still delivers
        its best result so far."""
        job = self._guard(context, self.jobs.start, kind)
        context.add_callback(job.stop.set)
        outcome: dict = {}

        def work() -> None:
            try:
                outcome["result"] = run(job.stop)
            except Exception as exc:  # reported to the client below, never a crash of the server
                outcome["error"] = exc

        worker = threading.Thread(target=work, name=f"{kind}-{job.job_id}", daemon=True)
        worker.start()
        log.info("job=%s kind=%s started", job.job_id, kind)
        try:
            while worker.is_alive():
                worker.join(SNAPSHOT_SECONDS)
                remaining = context.time_remaining()
                if remaining is not None and remaining < DEADLINE_MARGIN + SNAPSHOT_SECONDS:
                    job.stop.set()
                if worker.is_alive() and context.is_active():
                    snap = snapshot()
                    snap.job_id = job.job_id
                    yield snap
            if "error" in outcome:
                log.error("job=%s failed: %r", job.job_id, outcome["error"])
                _abort(context, grpc.StatusCode.INTERNAL, f"{kind} failed: {outcome['error']}", "INTERNAL")
            last = final(outcome["result"], job.stop.is_set())
            last.job_id = job.job_id
            yield last
            log.info("job=%s kind=%s done stopped=%s", job.job_id, kind, job.stop.is_set())
        finally:
            job.stop.set()
            worker.join()
            self.jobs.finish(job)

    def Simulate(self, request, context):
        def setup():
            pos = self._position(request.position)
            opts = SimOptions(
                plies=request.plies if request.HasField("plies") else 2,
                num_plays=request.num_plays or 15, plays=list(request.plays), iterations=request.iterations or 1000,
                stop=request.stop or None, max_time=request.max_time, threads=request.threads or (os.cpu_count() or 1),
                seed=request.seed, opp_rack=request.opp_rack or None, lexicon=request.position.lexicon or None,
            )
            return SimJob(self.engine, pos, opts)

        sim = self._guard(context, setup)

        def run(stop: threading.Event):
            return sim.run(stop=stop)

        yield from self._stream(context, "sim", run, lambda: sim_to_pb(sim.snapshot(final=False), "", False),
                                lambda res, stopped: sim_to_pb(res, "", stopped))

    def SolveEndgame(self, request, context):
        def setup():
            pos = self._position(request.position)
            opts = EndgameOptions(
                plies=request.plies or 4, max_time=request.max_time, threads=request.threads or (os.cpu_count() or 1),
                first_win=request.first_win, heuristics=not request.disable_heuristics,
                tt_megabytes=request.tt_megabytes or 256, lexicon=request.position.lexicon or None,
            )
            return pos, EndgameJob(self.engine, pos, opts)

        pos, eg = self._guard(context, setup)
        latest: dict = {}

        def run(stop: threading.Event):
            return eg.run(progress=lambda r: latest.__setitem__("r", r), stop=stop)

        def snapshot():
            r = latest.get("r")
            if r is None:
                return pb.EndgameProgress(nodes=eg.nodes)
            return endgame_to_pb(r, pos, "", False, False)

        yield from self._stream(context, "endgame", run, snapshot,
                                lambda res, stopped: endgame_to_pb(res, pos, "", True, stopped or not res.complete))

    def SolvePreEndgame(self, request, context):
        def setup():
            pos = self._position(request.position)
            opts = PegOptions(
                endgame_plies=request.endgame_plies or 4, only_solve=list(request.only_solve),
                max_tiles_left=request.max_tiles_left if request.HasField("max_tiles_left") else 1,
                max_nested_depth=request.max_nested_depth if request.HasField("max_nested_depth") else 1,
                skip_deep_pass=request.skip_deep_pass if request.HasField("skip_deep_pass") else True,
                early_cutoff=request.early_cutoff, skip_tiebreaker=request.skip_tiebreaker,
                opp_rack=request.opp_rack or None, threads=request.threads or (os.cpu_count() or 1),
                max_time=request.max_time, endgame_heuristics=request.endgame_heuristics,
                lexicon=request.position.lexicon or None,
            )
            if request.eventuality:
                opts.threads, opts.skip_tiebreaker = 1, True
            return pos, PegJob(self.engine, pos, opts)

        pos, peg = self._guard(context, setup)
        if request.eventuality:
            self._guard(context, peg.parse_order, request.eventuality)

            def explain(stop: threading.Event):
                with watch_stop(stop, peg.stop):
                    return peg.eventuality(request.eventuality)

            yield from self._stream(context, "peg", explain, lambda: pb.PreEndgameProgress(),
                                    lambda text, stopped: pb.PreEndgameProgress(eventuality=text, final=True,
                                                                                stopped=stopped, complete=not stopped))
            return

        def run(stop: threading.Event):
            return peg.run(stop=stop, interval=3600)

        yield from self._stream(context, "peg", run, lambda: peg_to_pb(peg.snapshot(final=False), pos, "", False),
                                lambda res, stopped: peg_to_pb(res, pos, "", stopped or not res.complete))

    # -------------------------------------------------------------- game sessions

    def CreateGame(self, request, context):
        return self._guard(context, lambda: game_to_pb(self.sessions.create(
            request.lexicon or None, request.seed, list(request.players), request.bingo_bonus, cgp=request.cgp,
            gcg=request.gcg, turn=request.turn if request.HasField("turn") else None)))

    def GetGame(self, request, context):
        return self._guard(context, lambda: game_to_pb(self.sessions.get(request.game_id)))

    def PlayMove(self, request, context):
        def run():
            session = self.sessions.get(request.game_id)
            self.sessions.play(session, request.move, request.tile_order)
            return game_to_pb(session)

        return self._guard(context, run)

    def EngineMove(self, request, context):
        def run():
            session = self.sessions.get(request.game_id)
            before = session.game.history_length
            move = self.sessions.engine_move(session, request.strategy)
            score = session.game.history()[before][6]
            pos = position_from_game(session.game, {"lex": session.lexicon.name})
            return pb.EngineMoveResponse(move=plain_move_to_pb(move, pos, score), game=game_to_pb(session))

        return self._guard(context, run)

    def DeleteGame(self, request, context):
        return pb.DeleteGameResponse(found=self.sessions.delete(request.game_id))
