"""gRPC servicer: validate -> convert -> engine/jobs -> respond. Errors map to status codes with a message
that names the problem (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED); nothing escapes as a crash."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from macondo_server import __version__
from macondo_server.analysis.endgame import DEFAULT_TT_MB, EndgameJob, EndgameOptions
from macondo_server.analysis.peg.explain import EVENTUALITY_TT_MB, eventuality, parse_order
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.analysis.review import (
    AnalyzeOptions,
    analyze_record,
    annotated_gcg,
    lexicon_of,
    resolve_player,
)
from macondo_server.analysis.selfplay import (
    GameRecord,
    bot_sources,
    bots_from_options,
    run_autoplay,
    summarize,
)
from macondo_server.analysis.sim import SimJob, SimOptions
from macondo_server.api.convert import (
    autoplay_to_pb,
    endgame_to_pb,
    game_to_pb,
    move_to_pb,
    peg_to_pb,
    plain_move_to_pb,
    sim_to_pb,
)
from macondo_server.api.sessions import (
    ENGINE_MOVE_TT_MB,
    GameBusyError,
    SessionStore,
    UnknownGameError,
    parse_strategy,
)
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import LexiconError, UnknownLexiconError
from macondo_server.engine.replay import position_from_game
from macondo_server.engine.settings import DEFAULT_ENDGAME_CAP, DEFAULT_PEG_CAP, DEFAULT_SIM_CAP, Settings
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.gcg import parse_gcg
from macondo_server.model.text import FormatError
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from macondo_server.runtime.checkpoint import CheckpointError, CheckpointStore
from macondo_server.runtime.cluster import Cluster, ClusterError
from macondo_server.runtime.jobs import Job, JobRegistry, ShuttingDownError, watch_stop
from macondo_server.runtime.limits import LimitError, Limits, ResourceLimitError


def _analyzed_move_to_pb(c) -> pb.AnalyzedMove:
    return pb.AnalyzedMove(move=c.move, score=c.score, equity=c.equity, win_pct=c.win_pct, value=c.value,
                           spread=c.spread)


def _turn_to_pb(t) -> pb.TurnAnalysis:
    """analyze.TurnAnalysis -> pb (optional fields stay unset where the phase gives no number)."""
    return pb.TurnAnalysis(
        event=t.event, line=t.line, player=t.player + 1, nick=t.nick, rack=t.rack, bag=t.bag, phase=t.phase,
        played=_analyzed_move_to_pb(t.played), best=_analyzed_move_to_pb(t.best) if t.best else None,
        rank=t.rank or 0, candidates=t.candidates, equity_loss=t.equity_loss, win_loss=t.win_loss,
        spread_loss=t.spread_loss, loss_is_bound=t.loss_is_bound, mistake=t.mistake, blown_endgame=t.blown_endgame,
        bingo_available=t.bingo_available, missed_bingo=t.missed_bingo, phony=t.phony, phony_words=t.phony_words,
        phony_challenged=t.phony_challenged, missed_challenge=t.missed_challenge, complete=t.complete,
        skipped=t.skipped, notes=t.notes)


def _summary_to_pb(s) -> pb.PlayerAnalysisSummary:
    return pb.PlayerAnalysisSummary(
        player=s.player + 1, nick=s.nick, turns=s.turns, optimal=s.optimal, equity_lost=s.equity_lost,
        win_pct_lost=s.win_lost, spread_lost=s.spread_lost, small_mistakes=s.small, medium_mistakes=s.medium,
        large_mistakes=s.large, mistake_index=s.mistake_index, bingos_available=s.bingos_available,
        bingos_missed=s.bingos_missed, phonies=s.phonies, phonies_challenged=s.phonies_challenged,
        challenges_missed=s.challenges_missed, biggest_mistakes=s.biggest)

log = logging.getLogger("macondo.server")

SNAPSHOT_SECONDS = 0.25
DEADLINE_MARGIN = 0.3    # seconds kept back to deliver the final result before a deadline
MAX_ERROR_CHARS = 1000   # error messages are cut here (they must fit in a gRPC trailer)
JOIN_SECONDS = 5.0       # how long a stopped job's worker is waited for before its resources are released
MAX_NUMBER = 1e9         # any floating-point field (seconds) must be finite and within 0..MAX_NUMBER

# text fields with their own limit (the others have Limits.max_field_chars)
_FIELD_LIMITS = {"cgp": "max_cgp_chars", "gcg": "max_gcg_chars"}


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str, reason: str) -> None:
    if len(message) > MAX_ERROR_CHARS:
        message = message[:MAX_ERROR_CHARS - 1] + "…"
    info = error_details_pb2.ErrorInfo(reason=reason, domain="macondo.v1")
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[detail])
    context.abort_with_status(rpc_status.to_status(status))


def check_request(msg: Message, limits: Limits, path: str = "") -> None:
    """Bounds every request shares, before any work: text fields within their length limit, repeated text
    within max_plays, numbers of seconds finite and not negative."""
    for fd, value in msg.ListFields():
        name = f"{path}{fd.name}"
        repeated = fd.is_repeated
        if fd.type == fd.TYPE_MESSAGE:
            for sub in (value if repeated else [value]):
                check_request(sub, limits, f"{name}.")
        elif fd.type == fd.TYPE_STRING:
            if repeated:
                limits.plays(len(value), name)
            limit_name = _FIELD_LIMITS.get(fd.name, "max_field_chars")
            cap = getattr(limits, limit_name)
            for text in (value if repeated else [value]):
                if len(text) > cap:
                    raise LimitError(f"{name} is longer than the limit {limit_name} ({len(text)} > {cap} characters)",
                                     limit_name)
        elif fd.type in (fd.TYPE_DOUBLE, fd.TYPE_FLOAT):
            for x in (value if repeated else [value]):
                if not (math.isfinite(x) and 0 <= x <= MAX_NUMBER):
                    raise LimitError(f"{name} must be a number of 0 to {MAX_NUMBER:g}, got {x!r}")


def _bind(job: Job, context: grpc.ServicerContext) -> None:
    """The RPC's end (cancellation, disconnect) stops the job, and so does its deadline, DEADLINE_MARGIN early
    so that the best result so far still reaches the client."""
    context.add_callback(lambda: job.request_stop("cancelled"))
    remaining = context.time_remaining()
    if remaining is not None:
        job.stop_at(time.monotonic() + max(0.0, remaining - DEADLINE_MARGIN))


def client_of(context: grpc.ServicerContext) -> str:
    """The client a request comes from: its connection (address and port)."""
    try:
        return context.peer() or ""
    except Exception:  # noqa: BLE001 (a test context without a peer)
        return ""


class EngineServicer(pb_grpc.EngineServicer):
    def __init__(self, settings: Settings, limits: Limits | None = None) -> None:
        if limits is None:
            limits = Limits.load()
        self.settings = settings
        self.limits = limits
        self.engine = Engine(settings)
        self.jobs = JobRegistry(limits)
        self.sessions = SessionStore(self.engine, limits)
        # the server's Dask cluster and checkpoint store (serve --cluster / --checkpoint-dir)
        self.cluster: Cluster | None = None
        self.checkpoints: CheckpointStore | None = None
        self._cluster_slots = threading.BoundedSemaphore(limits.max_cluster_jobs)

    def attach_cluster(self, cluster: Cluster | None, checkpoints: CheckpointStore | None) -> None:
        self.cluster, self.checkpoints = cluster, checkpoints

    def _cluster_slot(self, what: str) -> Cluster:
        """The server's cluster for one job (release with self._cluster_slots.release())."""
        if self.cluster is None:
            raise ClusterError(f"{what}: this server was started without --cluster", precondition=True)
        if not self._cluster_slots.acquire(blocking=False):
            raise ResourceLimitError(f"{what}: {self.limits.max_cluster_jobs} cluster job(s) already run "
                                     "(limit max_cluster_jobs); retry later", "max_cluster_jobs")
        return self.cluster

    # -------------------------------------------------------------- helpers

    def _guard(self, context: grpc.ServicerContext, fn, *args):
        """Run fn, turning every error into a status with a message that names the problem."""
        try:
            return fn(*args)
        except UnknownLexiconError as exc:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(exc), "UNKNOWN_LEXICON")
        except UnknownGameError as exc:
            _abort(context, grpc.StatusCode.NOT_FOUND, str(exc.args[0]), "UNKNOWN_GAME")
        except ResourceLimitError as exc:
            _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), exc.limit.upper() or "RESOURCE_EXHAUSTED")
        except LimitError as exc:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc), exc.limit.upper() or "INVALID_ARGUMENT")
        except ShuttingDownError as exc:
            _abort(context, grpc.StatusCode.UNAVAILABLE, str(exc), "SHUTTING_DOWN")
        except GameBusyError as exc:
            _abort(context, grpc.StatusCode.ABORTED, str(exc), "GAME_BUSY")
        except ClusterError as exc:
            if exc.precondition:
                _abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(exc), "CLUSTER")
            _abort(context, grpc.StatusCode.UNAVAILABLE, str(exc), "CLUSTER_UNAVAILABLE")
        except CheckpointError as exc:
            _abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(exc), "CHECKPOINT")
        except (FormatError, LexiconError, ValueError, OverflowError) as exc:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc), "INVALID_ARGUMENT")
        except MemoryError:
            _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "the server is out of memory", "OUT_OF_MEMORY")
        except Exception as exc:
            if isinstance(exc, grpc.RpcError) or type(exc).__name__ == "_AbortedError":
                raise  # an abort already under way
            log.exception("internal error")
            _abort(context, grpc.StatusCode.INTERNAL, f"internal error ({type(exc).__name__}); it is logged on the "
                   "server", "INTERNAL")

    def _position(self, msg: pb.Position):
        if not msg.cgp:
            raise FormatError("position.cgp is empty")
        return parse_cgp(msg.cgp)

    # -------------------------------------------------------------- RPCs

    def GetServerInfo(self, request, context):
        reg = self.engine.registry

        def build():
            lexica = []
            for name in reg.available():      # described from their files: an info request loads nothing
                has_leaves, source = reg.describe(name)
                lexica.append(pb.LexiconInfo(name=name, has_leaves=has_leaves, source=source))
            lim = self.limits
            jobs, threads, tt = self.jobs.usage()
            return pb.ServerInfo(
                version=__version__,
                api_version="macondo.v1",
                lexica=lexica,
                default_lexicon=self.settings.default_lexicon,
                limits=pb.Limits(max_message_bytes=min(lim.max_response_bytes, 2**31 - 1),
                                 **{k: min(v, 2**31 - 1) for k, v in lim.as_dict().items()
                                    if k in pb.Limits.DESCRIPTOR.fields_by_name}),
                running_jobs=jobs,
                leave_sets=reg.leave_sets(),
                running_threads=threads,
                tt_megabytes_in_use=tt,
                open_games=self.sessions.count(),
            )

        return self._guard(context, build)

    def GenerateMoves(self, request, context):
        def run():
            check_request(request, self.limits)
            pos = self._position(request.position)
            if not 0 <= request.num_plays <= 100_000:
                raise ValueError(f"num_plays must be 0 to 100000, got {request.num_plays}")
            n = None if request.all else (request.num_plays or 15)
            sort = "score" if request.sort == pb.SORT_SCORE else "equity"
            klv = self.engine.named_leaves(request.leaves) if request.leaves else None
            res = self.engine.generate(pos, lexicon=request.position.lexicon or None, klv=klv, n=n, sort=sort)
            lex = self.engine.lexicon_for(pos, request.position.lexicon or None)
            return pb.GenerateMovesResponse(
                moves=[move_to_pb(m, pos) for m in res.moves],
                counts=pb.MoveCounts(placements=res.placements, exchanges=res.exchanges, passes=res.passes),
                lexicon=lex.name,
            )

        return self._guard(context, run)

    def StopJob(self, request, context):
        return pb.StopJobResponse(found=self.jobs.stop(request.job_id[:64]))

    # -------------------------------------------------------------- long jobs (streaming)

    def _stream(self, context, kind: str, request, setup: Callable[[Job], Any],
                run: Callable[[Any, threading.Event], Any], snapshot: Callable[[Any], Any],
                final: Callable[[Any, Any, bool], Any], empty: Callable[[], Any],
                threads: int = 0, tt_megabytes: int = 0):
        """The one way a long job runs: checked and registered (holding its threads and table memory) before
        any setup, then set up and run in a worker thread while this one yields snapshot(state) every
        SNAPSHOT_SECONDS (empty() while the setup runs) and final(state, result, stopped) at the end.
        Cancellation, StopJob, the deadline, the job time limit and shutdown all set the job's stop event;
        the engine then stops within a fraction of a second and the final snapshot still carries the best
        result so far."""
        self._guard(context, check_request, request, self.limits)
        job = self._guard(context, self.jobs.start, kind, threads, tt_megabytes)
        worker: threading.Thread | None = None
        try:
            _bind(job, context)
            outcome: dict = {}

            def work() -> None:
                try:
                    outcome["state"] = setup(job)
                    outcome["result"] = run(outcome["state"], job.stop)
                except Exception as exc:  # noqa: BLE001 (reported to the client below, never a crash)
                    outcome["error"] = exc

            worker = threading.Thread(target=work, name=f"{kind}-{job.job_id}", daemon=True)
            worker.start()
            log.info("job=%s kind=%s threads=%d tt_mb=%d started", job.job_id, kind, job.threads, job.tt_megabytes)
            while worker.is_alive():
                worker.join(SNAPSHOT_SECONDS)
                if worker.is_alive() and context.is_active():
                    snap = self._guard(context, snapshot, outcome["state"]) if "state" in outcome else empty()
                    snap.job_id = job.job_id
                    yield snap
            if "error" in outcome:
                exc = outcome["error"]
                log.info("job=%s kind=%s failed: %s", job.job_id, kind, type(exc).__name__)

                def reraise() -> None:
                    raise exc
                self._guard(context, reraise)
            stopped = job.stop.is_set()
            last = self._guard(context, final, outcome["state"], outcome["result"], stopped)
            last.job_id = job.job_id
            yield last
            log.info("job=%s kind=%s done stop_reason=%s", job.job_id, kind, job.stop_reason or "none")
        finally:
            job.request_stop("finished")
            if worker is not None:
                # the job holds its threads and memory until its engine has really stopped (a fraction of a
                # second); a worker still busy after JOIN_SECONDS is logged and its share released anyway
                worker.join(JOIN_SECONDS)
                if worker.is_alive():
                    log.warning("job=%s kind=%s still running %.0f s after its stop", job.job_id, kind, JOIN_SECONDS)
            self.jobs.finish(job)

    def Autoplay(self, request, context) -> Iterator[pb.AutoplayProgress]:
        games = request.games or 100
        records: list[GameRecord] = []
        started = time.monotonic()

        def setup(job: Job):
            if not 0 < games <= self.limits.max_autoplay_games:
                raise LimitError(f"games must be 1 to {self.limits.max_autoplay_games} (limit max_autoplay_games), "
                                 f"got {request.games}", "max_autoplay_games")
            bots = bots_from_options(self.engine, request.lexicon, request.leaves, request.lexicon2,
                                     request.leaves2, by_name=True)
            if not request.use_cluster:
                return bots + (job.threads, None, None)
            sources = bot_sources(self.engine, request.lexicon, request.leaves, request.lexicon2, request.leaves2,
                                  by_name=True)
            return bots + (job.threads, self._cluster_slot("use_cluster"), sources)

        def run(state, stop: threading.Event):
            bot1, bot2, threads, cluster, sources = state
            try:
                return run_autoplay(bot1, bot2, games, seed=request.seed & 0xFFFFFFFFFFFFFFFF, threads=threads,
                                    pairs=request.pairs, stop=stop, records=records, cluster=cluster, sources=sources)
            finally:
                if cluster is not None:
                    self._cluster_slots.release()

        yield from self._stream(
            context, "autoplay", request, setup, run,
            lambda state: autoplay_to_pb(summarize(list(records), time.monotonic() - started), "", games, False,
                                         False),
            lambda state, summary, stopped: autoplay_to_pb(summary, "", games, True, stopped),
            pb.AutoplayProgress, threads=request.threads,
        )

    def Simulate(self, request, context):
        def setup(job: Job):
            pos = self._position(request.position)
            self.limits.plays(request.num_plays + len(request.plays), "num_plays and plays")
            opts = SimOptions(
                plies=request.plies if request.HasField("plies") else 2,
                num_plays=request.num_plays or 15, plays=list(request.plays), iterations=request.iterations or 1000,
                stop=request.stop or None, max_time=request.max_time, threads=job.threads,
                seed=request.seed, opp_rack=request.opp_rack or None, lexicon=request.position.lexicon or None,
                infer_play=request.infer_play or None,
                infer_withdrawn=request.infer_withdrawn,
                infer_tolerance=request.infer_tolerance if request.HasField("infer_tolerance") else 3.0,
                infer_max_racks=self.limits.infer_racks(request.infer_max_racks),
            )
            return SimJob(self.engine, pos, opts, stop=job.stop)

        yield from self._stream(context, "sim", request, setup, lambda sim, stop: sim.run(stop=stop),
                                lambda sim: sim_to_pb(sim.snapshot(final=False), "", False),
                                lambda sim, res, stopped: sim_to_pb(res, "", stopped), pb.SimulateProgress,
                                threads=request.threads)

    def SolveEndgame(self, request, context):
        tt = request.tt_megabytes or min(DEFAULT_TT_MB, self.limits.tt_megabytes_per_job)
        latest: dict = {}

        def setup(job: Job):
            pos = self._position(request.position)
            opts = EndgameOptions(
                plies=request.plies or 4, max_time=request.max_time, threads=job.threads,
                first_win=request.first_win, heuristics=not request.disable_heuristics,
                tt_megabytes=tt, lexicon=request.position.lexicon or None,
            )
            return pos, EndgameJob(self.engine, pos, opts)

        def run(state, stop: threading.Event):
            return state[1].run(progress=lambda r: latest.__setitem__("r", r), stop=stop)

        def snapshot(state):
            pos, eg = state
            r = latest.get("r")
            if r is None:
                return pb.EndgameProgress(nodes=eg.nodes)
            return endgame_to_pb(r, pos, "", False, False)

        yield from self._stream(context, "endgame", request, setup, run, snapshot,
                                lambda state, res, stopped: endgame_to_pb(res, state[0], "", True,
                                                                          stopped or not res.complete),
                                pb.EndgameProgress, threads=request.threads,
                                tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    def SolvePreEndgame(self, request, context):
        tt = PegOptions().tt_megabytes

        def setup(job: Job):
            pos = self._position(request.position)
            self.limits.plays(len(request.only_solve), "only_solve")
            opts = PegOptions(
                endgame_plies=request.endgame_plies or 4, only_solve=list(request.only_solve),
                max_tiles_left=request.max_tiles_left if request.HasField("max_tiles_left") else 1,
                max_nested_depth=request.max_nested_depth if request.HasField("max_nested_depth") else 1,
                skip_deep_pass=request.skip_deep_pass if request.HasField("skip_deep_pass") else True,
                early_cutoff=request.early_cutoff, skip_tiebreaker=request.skip_tiebreaker,
                opp_rack=request.opp_rack or None, threads=job.threads,
                max_time=request.max_time, endgame_heuristics=request.endgame_heuristics,
                lexicon=request.position.lexicon or None, tt_megabytes=tt,
                opponent_model=request.opponent_model or "pessimistic",
                endgame_leaf=request.endgame_leaf or "auto",
                quick_pass=request.quick_pass if request.HasField("quick_pass") else True,
            )
            if request.eventuality:
                opts.threads, opts.skip_tiebreaker = 1, True
            store = None
            if (request.checkpoint or request.resume) and not request.eventuality:
                if self.checkpoints is None:
                    raise CheckpointError("checkpoint/resume: this server was started without --checkpoint-dir")
                store = self.checkpoints
            cluster = self._cluster_slot("use_cluster") if request.use_cluster and not request.eventuality else None
            try:
                peg = PegJob(self.engine, pos, opts, stop=job.stop, cluster=cluster, checkpoint=store,
                             resume=request.resume)
            except BaseException:
                if cluster is not None:
                    self._cluster_slots.release()
                raise
            if request.eventuality:
                parse_order(peg, request.eventuality)
            return pos, peg

        if request.eventuality:
            def explain(state, stop: threading.Event):
                peg = state[1]
                with watch_stop(stop, peg.stop):
                    return eventuality(peg, request.eventuality)

            yield from self._stream(context, "peg", request, setup, explain, lambda state: pb.PreEndgameProgress(),
                                    lambda state, text, stopped: pb.PreEndgameProgress(
                                        eventuality=text, final=True, stopped=stopped, complete=not stopped),
                                    pb.PreEndgameProgress, threads=1, tt_megabytes=tt + EVENTUALITY_TT_MB)
            return

        def run(state, stop: threading.Event):
            try:
                return state[1].run(stop=stop, interval=3600)
            finally:
                if state[1].cluster is not None:
                    self._cluster_slots.release()

        yield from self._stream(context, "peg", request, setup, run,
                                lambda state: peg_to_pb(state[1].snapshot(final=False), state[0], "", False,
                                                        request.outcomes_summary_only),
                                lambda state, res, stopped: peg_to_pb(res, state[0], "", stopped or not res.complete,
                                                                      request.outcomes_summary_only),
                                pb.PreEndgameProgress, threads=request.threads,
                                tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    def AnalyzeGame(self, request, context) -> Iterator[pb.AnalyzeProgress]:
        """Game review: every turn of the GCG text analysed (analyze.py), a message per finished turn or two,
        the whole analysis at the end; a stop keeps the turns done (the turn in flight marked incomplete)."""
        tt = min(DEFAULT_TT_MB, self.limits.tt_megabytes_per_job)
        lock = threading.Lock()
        seen: dict = {"turns": [], "sent": 0, "done": 0, "total": 0}

        def setup(job: Job):
            if not request.gcg:
                raise FormatError("gcg is empty")
            record = parse_gcg(request.gcg)
            opts = AnalyzeOptions(
                player=request.player or None, sim_iterations=request.sim_iterations or 600,
                sim_plies=request.sim_plies if request.HasField("sim_plies") else 2,
                sim_plays=request.sim_plays or 12, sim_max_time=request.sim_max_time or DEFAULT_SIM_CAP,
                peg_max_bag=request.peg_max_bag if request.HasField("peg_max_bag") else 1,
                peg_plays=request.peg_plays or 8, peg_endgame_plies=request.peg_endgame_plies or 4,
                peg_max_time=request.peg_max_time or DEFAULT_PEG_CAP, endgame_plies=request.endgame_plies or 6,
                endgame_max_time=request.endgame_max_time or DEFAULT_ENDGAME_CAP,
                endgame_candidates=request.endgame_candidates if request.HasField("endgame_candidates") else 4,
                threads=job.threads, seed=request.seed, lexicon=request.lexicon or None, tt_megabytes=tt)
            opts.validate()
            resolve_player(record, opts.player)
            lexicon_of(self.engine, record, opts.lexicon)
            return record, opts

        def run(state, stop: threading.Event):
            record, opts = state

            def progress(done: int, total: int, turn) -> None:
                with lock:
                    seen["done"], seen["total"] = done, total
                    if turn is not None:
                        seen["turns"].append(turn)

            return analyze_record(self.engine, record, opts, progress=progress, stop=stop)

        def snapshot(state):
            with lock:
                new = seen["turns"][seen["sent"]:]
                seen["sent"] = len(seen["turns"])
                return pb.AnalyzeProgress(turns_done=seen["done"], turns_total=seen["total"],
                                          turns=[_turn_to_pb(t) for t in new])

        def final(state, res, stopped: bool):
            record = state[0]
            return pb.AnalyzeProgress(
                turns_done=len(res.turns), turns_total=res.turns_total, turns=[_turn_to_pb(t) for t in res.turns],
                summary=[_summary_to_pb(s) for s in res.summaries], lexicon=res.lexicon, warnings=res.warnings,
                final=True, stopped=stopped or res.stopped, json=json.dumps(res.to_json()),
                annotated_gcg=annotated_gcg(record, res) if request.annotated_gcg else "")

        yield from self._stream(context, "analyze", request, setup, run, snapshot, final, pb.AnalyzeProgress,
                                threads=request.threads, tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    # -------------------------------------------------------------- game sessions

    def CreateGame(self, request, context):
        def run():
            check_request(request, self.limits)
            return game_to_pb(self.sessions.create(
                request.lexicon or None, request.seed, list(request.players), request.bingo_bonus, cgp=request.cgp,
                gcg=request.gcg, turn=request.turn if request.HasField("turn") else None,
                client=client_of(context), challenge_rule=request.challenge_rule))

        return self._guard(context, run)

    def GetGame(self, request, context):
        return self._guard(context, lambda: game_to_pb(self.sessions.get(request.game_id)))

    def PlayMove(self, request, context):
        def run():
            check_request(request, self.limits)
            session = self.sessions.get(request.game_id)
            self.sessions.play(session, request.move, request.tile_order)
            return game_to_pb(session)

        return self._guard(context, run)

    def EngineMove(self, request, context):
        """A static move at once; a simulating or solving strategy runs as a job (counted against the limits,
        stopped by cancellation, the deadline and shutdown, then playing the best move found so far)."""
        def run():
            check_request(request, self.limits)
            strategy = parse_strategy(request.strategy)
            session = self.sessions.get(request.game_id)
            before = session.game.history_length
            if strategy.needs_job:
                tt = ENGINE_MOVE_TT_MB if session.game.bag_size == 0 else 0
                with self.jobs.job("engine-move", strategy.threads, tt) as job:
                    _bind(job, context)
                    move = self.sessions.engine_move(session, strategy, stop=job.stop, threads=job.threads)
            else:
                move = self.sessions.engine_move(session, strategy)
            score = session.game.history()[before][6]
            pos = position_from_game(session.game, {"lex": session.lexicon.name})
            return pb.EngineMoveResponse(move=plain_move_to_pb(move, pos, score), game=game_to_pb(session))

        return self._guard(context, run)

    def DeleteGame(self, request, context):
        return pb.DeleteGameResponse(found=self.sessions.delete(request.game_id[:64]))

    # -------------------------------------------------------------- game review (sessions.py does the work)

    def _session_call(self, context, request, change: Callable[[Any], Any]):
        """Check the request, find its game, apply `change` to it, and answer with the game's new state."""
        def run():
            check_request(request, self.limits)
            session = self.sessions.get(request.game_id)
            change(session)
            return game_to_pb(session)

        return self._guard(context, run)

    def NavigateGame(self, request, context):
        return self._session_call(context, request,
                                  lambda s: self.sessions.navigate(s, request.to, request.turn))

    def SetRack(self, request, context):
        return self._session_call(context, request, lambda s: self.sessions.set_rack(s, request.rack))

    def SetChallengeRule(self, request, context):
        return self._session_call(context, request, lambda s: self.sessions.set_rule(s, request.rule))

    def SetNote(self, request, context):
        return self._session_call(context, request, lambda s: self.sessions.set_note(s, request.note))

    def ChallengePlay(self, request, context):
        def run():
            check_request(request, self.limits)
            session = self.sessions.get(request.game_id)
            bad, outcome = self.sessions.challenge(session)
            return pb.ChallengePlayResponse(phony=bool(bad), invalid_words=bad, outcome=outcome,
                                            game=game_to_pb(session))

        return self._guard(context, run)

    def ExportGame(self, request, context):
        def run():
            check_request(request, self.limits)
            return pb.ExportGameResponse(gcg=self.sessions.export(self.sessions.get(request.game_id)))

        return self._guard(context, run)
