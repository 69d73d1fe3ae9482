"""gRPC servicer: validate -> convert -> engine/jobs -> respond. Errors map to status codes with a message
that names the problem (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED); nothing escapes as a crash."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from macondo_client.render import analysis_json, review_summary_json

from macondo_server import __version__
from macondo_server.analysis.endgame import DEFAULT_TT_MB, EndgameJob, EndgameResult
from macondo_server.analysis.infer import (
    MAX_HISTORY,
    LastPlay,
    history_from_record,
    infer,
    last_play_before,
    last_play_from_record,
    last_play_on,
)
from macondo_server.analysis.peg.explain import EVENTUALITY_TT_MB, eventuality, parse_order
from macondo_server.analysis.peg.job import PegJob
from macondo_server.analysis.peg.options import PegOptions
from macondo_server.analysis.peg.result import PegResult
from macondo_server.analysis.player import ENGINE_MOVE_TT_MB, parse_strategy
from macondo_server.analysis.review import (
    AnalyzeOptions,
    GameAnalysis,
    TurnAnalysis,
    annotated_gcg,
    lexicon_of,
    resolve_player,
)
from macondo_server.analysis.review_store import ReviewStore, reviewed
from macondo_server.analysis.review_summary import DEFAULT_TOP, MAX_TOP, ReviewSummary
from macondo_server.analysis.review_summary import summarize as summarize_reviews
from macondo_server.analysis.selfplay import (
    AutoplaySummary,
    BotSpec,
    GameRecord,
    bot_sources,
    bots_from_options,
    run_autoplay,
    summarize,
)
from macondo_server.analysis.sim import SimJob, SimResult
from macondo_server.api.convert import (
    analysis_to_pb,
    analyze_options,
    autoplay_to_pb,
    endgame_options,
    endgame_to_pb,
    game_to_pb,
    generate_options,
    generate_to_pb,
    infer_options,
    infer_response_to_pb,
    leave_to_pb,
    peg_options,
    peg_to_pb,
    plain_move_to_pb,
    review_summary_to_pb,
    sim_options,
    sim_to_pb,
    turn_to_pb,
)
from macondo_server.api.sessions import (
    GameBusyError,
    Session,
    SessionStore,
    UnknownGameError,
)
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon, LexiconError, UnknownLexiconError
from macondo_server.engine.replay import position_from_game, replay_gcg
from macondo_server.engine.settings import Settings
from macondo_server.model.cgp import parse_cgp, write_cgp
from macondo_server.model.gcg import GcgGame, parse_gcg
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError, excerpt
from macondo_server.model.tiles import RACK_SIZE, rack_tiles
from macondo_server.pb.macondo.v1 import engine_pb2 as pb
from macondo_server.pb.macondo.v1 import engine_pb2_grpc as pb_grpc
from macondo_server.runtime.checkpoint import CheckpointError, CheckpointStore
from macondo_server.runtime.cluster import Cluster, ClusterError
from macondo_server.runtime.jobs import Job, JobRegistry, ShuttingDownError, watch_stop
from macondo_server.runtime.limits import LimitError, Limits, ResourceLimitError

log = logging.getLogger("macondo.server")

T = TypeVar("T")
S = TypeVar("S")           # a job's state, from its setup
R = TypeVar("R")           # its result
M = TypeVar("M", bound=Message)   # the messages it streams
# an Autoplay job's state: the bots, its threads, and the cluster with what its workers rebuild the bots from
_AutoplayState = tuple[BotSpec, BotSpec, int, Cluster | None, list[dict[str, Any]] | None]

SNAPSHOT_SECONDS = 0.25
MAX_REVIEW_GAMES = 1000  # games one ReviewGames request may hold (each within max_gcg_chars)
DEADLINE_MARGIN = 0.3    # seconds kept back to deliver the final result before a deadline
MAX_ERROR_CHARS = 1000   # error messages are cut here (they must fit in a gRPC trailer)
JOIN_SECONDS = 5.0       # how long a stopped job's worker is waited for before its resources are released
MAX_NUMBER = 1e9         # any floating-point field (seconds) must be finite and within 0..MAX_NUMBER
INFER_TOP = 15           # leaves an Infer answer lists by default
MAX_INFER_TOP = 1000     # and at most

# text fields with their own limit (the others have Limits.max_field_chars)
_FIELD_LIMITS = {"cgp": "max_cgp_chars", "gcg": "max_gcg_chars"}


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str, reason: str) -> NoReturn:
    if len(message) > MAX_ERROR_CHARS:
        message = message[:MAX_ERROR_CHARS - 1] + "…"
    info = error_details_pb2.ErrorInfo(reason=reason, domain="macondo.v1")
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[detail])
    context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("abort_with_status returned")   # it raises: the RPC ends here


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
        # the operator's store of game reviews (serve --review-store): AnalyzeGame and ReviewGames reuse and add to it
        self.review_store: ReviewStore | None = None

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

    def _guard(self, context: grpc.ServicerContext, fn: Callable[..., T], *args: Any) -> T:
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

    def _position(self, msg: pb.Position) -> Position:
        if not msg.cgp:
            raise FormatError("position.cgp is empty")
        return parse_cgp(msg.cgp, catalog=self.engine.registry.catalog, lexicon=msg.lexicon or None,
                         distribution=msg.distribution or None)

    # -------------------------------------------------------------- RPCs

    def GetServerInfo(self, request: pb.GetServerInfoRequest, context: grpc.ServicerContext) -> pb.ServerInfo:
        reg = self.engine.registry

        def build() -> pb.ServerInfo:
            lexica = []
            for name in reg.available():      # described from their files: an info request loads nothing
                has_leaves, source = reg.describe(name)
                distribution, layout = reg.board_of(name)
                lexica.append(pb.LexiconInfo(name=name, has_leaves=has_leaves, source=source,
                                             distribution=distribution, layout=layout))
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

    def GenerateMoves(self, request: pb.GenerateMovesRequest,
                      context: grpc.ServicerContext) -> pb.GenerateMovesResponse:
        def run() -> pb.GenerateMovesResponse:
            check_request(request, self.limits)
            pos = self._position(request.position)
            if not 0 <= request.num_plays <= 100_000:
                raise ValueError(f"num_plays must be 0 to 100000, got {request.num_plays}")
            n, sort = generate_options(request)
            lex = self.engine.lexicon_for(pos, request.position.lexicon or None)
            klv = self.engine.named_leaves(request.leaves, lex.ld) if request.leaves else None
            res = self.engine.generate(pos, lexicon=request.position.lexicon or None, klv=klv, n=n, sort=sort)
            return generate_to_pb(res, pos, lex.name)

        return self._guard(context, run)

    def StopJob(self, request: pb.StopJobRequest, context: grpc.ServicerContext) -> pb.StopJobResponse:
        return pb.StopJobResponse(found=self.jobs.stop(request.job_id[:64]))

    # -------------------------------------------------------------- long jobs (streaming)

    def _stream(self, context: grpc.ServicerContext, kind: str, request: Message, setup: Callable[[Job], S],
                run: Callable[[S, threading.Event], R], snapshot: Callable[[S], M],
                final: Callable[[S, R, bool], M], empty: Callable[[], M],
                threads: int = 0, tt_megabytes: int = 0) -> Iterator[M]:
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
            outcome: dict[str, Any] = {}

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

    def Autoplay(self, request: pb.AutoplayRequest, context: grpc.ServicerContext) -> Iterator[pb.AutoplayProgress]:
        games = request.games or 100
        records: list[GameRecord] = []
        started = time.monotonic()

        def setup(job: Job) -> _AutoplayState:
            if not 0 < games <= self.limits.max_autoplay_games:
                raise LimitError(f"games must be 1 to {self.limits.max_autoplay_games} (limit max_autoplay_games), "
                                 f"got {request.games}", "max_autoplay_games")
            bot1, bot2 = bots_from_options(self.engine, request.lexicon, request.leaves, request.lexicon2,
                                           request.leaves2, by_name=True)
            if not request.use_cluster:
                return bot1, bot2, job.threads, None, None
            sources = bot_sources(self.engine, request.lexicon, request.leaves, request.lexicon2, request.leaves2,
                                  by_name=True)
            return bot1, bot2, job.threads, self._cluster_slot("use_cluster"), sources

        def run(state: _AutoplayState, stop: threading.Event) -> AutoplaySummary:
            bot1, bot2, threads, cluster, sources = state
            try:
                return run_autoplay(bot1, bot2, games, seed=request.seed & 0xFFFFFFFFFFFFFFFF, threads=threads,
                                    pairs=request.pairs, stop=stop, records=records, cluster=cluster, sources=sources)
            finally:
                if cluster is not None:
                    self._cluster_slots.release()

        def snapshot(state: _AutoplayState) -> pb.AutoplayProgress:
            return autoplay_to_pb(summarize(list(records), time.monotonic() - started), "", games, False, False)

        def final(state: _AutoplayState, summary: AutoplaySummary, stopped: bool) -> pb.AutoplayProgress:
            return autoplay_to_pb(summary, "", games, True, stopped)

        yield from self._stream(context, "autoplay", request, setup, run, snapshot, final, pb.AutoplayProgress,
                                threads=request.threads)

    def Simulate(self, request: pb.SimulateRequest, context: grpc.ServicerContext) -> Iterator[pb.SimulateProgress]:
        def setup(job: Job) -> SimJob:
            pos = self._position(request.position)
            self.limits.plays(request.num_plays + len(request.plays), "num_plays and plays")
            opts = sim_options(request, job.threads, self.limits.infer_racks(request.infer_max_racks))
            if request.infer_history:
                lex = self.engine.lexicon_for(pos, request.position.lexicon or None)
                opts.infer_history = self._infer_history(request.infer_history, request.position, lex)
            return SimJob(self.engine, pos, opts, stop=job.stop)

        def run(sim: SimJob, stop: threading.Event) -> SimResult:
            return sim.run(stop=stop)

        def snapshot(sim: SimJob) -> pb.SimulateProgress:
            return sim_to_pb(sim.snapshot(final=False), "", False)

        def final(sim: SimJob, res: SimResult, stopped: bool) -> pb.SimulateProgress:
            return sim_to_pb(res, "", stopped)

        yield from self._stream(context, "sim", request, setup, run, snapshot, final, pb.SimulateProgress,
                                threads=request.threads)

    def SolveEndgame(self, request: pb.SolveEndgameRequest,
                     context: grpc.ServicerContext) -> Iterator[pb.EndgameProgress]:
        tt = request.tt_megabytes or min(DEFAULT_TT_MB, self.limits.tt_megabytes_per_job)
        latest: dict[str, EndgameResult] = {}

        def setup(job: Job) -> tuple[Position, EndgameJob]:
            pos = self._position(request.position)
            return pos, EndgameJob(self.engine, pos, endgame_options(request, job.threads, tt))

        def run(state: tuple[Position, EndgameJob], stop: threading.Event) -> EndgameResult:
            return state[1].run(progress=lambda r: latest.__setitem__("r", r), stop=stop)

        def snapshot(state: tuple[Position, EndgameJob]) -> pb.EndgameProgress:
            pos, eg = state
            r = latest.get("r")
            if r is None:
                return pb.EndgameProgress(nodes=eg.nodes)
            return endgame_to_pb(r, pos, "", False, False)

        def final(state: tuple[Position, EndgameJob], res: EndgameResult, stopped: bool) -> pb.EndgameProgress:
            return endgame_to_pb(res, state[0], "", True, stopped or not res.complete)

        yield from self._stream(context, "endgame", request, setup, run, snapshot, final, pb.EndgameProgress,
                                threads=request.threads,
                                tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    def SolvePreEndgame(self, request: pb.SolvePreEndgameRequest,
                        context: grpc.ServicerContext) -> Iterator[pb.PreEndgameProgress]:
        tt = PegOptions().tt_megabytes

        def setup(job: Job) -> tuple[Position, PegJob]:
            pos = self._position(request.position)
            self.limits.plays(len(request.only_solve), "only_solve")
            opts = peg_options(request, job.threads, tt)
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
            def explain(state: tuple[Position, PegJob], stop: threading.Event) -> str:
                peg = state[1]
                with watch_stop(stop, peg.stop):
                    return eventuality(peg, request.eventuality)

            def explained(state: tuple[Position, PegJob], text: str, stopped: bool) -> pb.PreEndgameProgress:
                return pb.PreEndgameProgress(eventuality=text, final=True, stopped=stopped, complete=not stopped)

            yield from self._stream(context, "peg", request, setup, explain, lambda state: pb.PreEndgameProgress(),
                                    explained, pb.PreEndgameProgress, threads=1, tt_megabytes=tt + EVENTUALITY_TT_MB)
            return

        def run(state: tuple[Position, PegJob], stop: threading.Event) -> PegResult:
            try:
                return state[1].run(stop=stop, interval=3600)
            finally:
                if state[1].cluster is not None:
                    self._cluster_slots.release()

        def snapshot(state: tuple[Position, PegJob]) -> pb.PreEndgameProgress:
            return peg_to_pb(state[1].snapshot(final=False), state[0], "", False, request.outcomes_summary_only)

        def final(state: tuple[Position, PegJob], res: PegResult, stopped: bool) -> pb.PreEndgameProgress:
            return peg_to_pb(res, state[0], "", stopped or not res.complete, request.outcomes_summary_only)

        yield from self._stream(context, "peg", request, setup, run, snapshot, final, pb.PreEndgameProgress,
                                threads=request.threads,
                                tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    def AnalyzeGame(self, request: pb.AnalyzeGameRequest,
                    context: grpc.ServicerContext) -> Iterator[pb.AnalyzeProgress]:
        """Game review: every turn of the GCG text analysed (analysis/review.py), a message per finished turn or
        two, the whole analysis at the end; a stop keeps the turns done (the turn in flight marked incomplete)."""
        tt = min(DEFAULT_TT_MB, self.limits.tt_megabytes_per_job)
        lock = threading.Lock()
        turns: list[TurnAnalysis] = []
        seen = {"sent": 0, "done": 0, "total": 0}

        def setup(job: Job) -> tuple[GcgGame, AnalyzeOptions]:
            if not request.gcg:
                raise FormatError("gcg is empty")
            record = parse_gcg(request.gcg)
            opts = analyze_options(request, job.threads, tt)
            opts.validate()
            resolve_player(record, opts.player)
            lexicon_of(self.engine, record, opts.lexicon)
            return record, opts

        def run(state: tuple[GcgGame, AnalyzeOptions], stop: threading.Event) -> GameAnalysis:
            record, opts = state

            def progress(done: int, total: int, turn: TurnAnalysis | None) -> None:
                with lock:
                    seen["done"], seen["total"] = done, total
                    if turn is not None:
                        turns.append(turn)

            return reviewed(self.engine, record, opts, self.review_store, progress=progress, stop=stop,
                            on_store_error=self._store_error)

        def snapshot(state: tuple[GcgGame, AnalyzeOptions]) -> pb.AnalyzeProgress:
            with lock:
                new = turns[seen["sent"]:]
                seen["sent"] = len(turns)
                return pb.AnalyzeProgress(turns_done=seen["done"], turns_total=seen["total"],
                                          turns=[turn_to_pb(t) for t in new])

        def final(state: tuple[GcgGame, AnalyzeOptions], res: GameAnalysis, stopped: bool) -> pb.AnalyzeProgress:
            msg = analysis_to_pb(res, annotated_gcg=annotated_gcg(state[0], res) if request.annotated_gcg else "")
            msg.json = json.dumps(analysis_json(msg))     # `macondo analyze --json`'s shape of one game
            msg.stopped = stopped or res.stopped
            return msg

        yield from self._stream(context, "analyze", request, setup, run, snapshot, final, pb.AnalyzeProgress,
                                threads=request.threads, tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    def _store_error(self, message: str) -> None:
        log.warning("review store: %s", message)

    def ReviewGames(self, request: pb.ReviewGamesRequest,
                    context: grpc.ServicerContext) -> Iterator[pb.ReviewGamesProgress]:
        """Many games reviewed (analysis/review.py, or taken from the server's review store) and summed up per
        player (analysis/review_summary.py): a message as games finish, the summary at the end. A game that cannot
        be read or analysed is listed in `errors`; a bad option refuses the request."""
        tt = min(DEFAULT_TT_MB, self.limits.tt_megabytes_per_job)
        lock = threading.Lock()
        finished: list[pb.AnalyzeProgress] = []
        errors: list[pb.ReviewGameError] = []
        sent = {"games": 0, "errors": 0}
        total = len(request.games)

        def setup(job: Job) -> tuple[AnalyzeOptions, int]:
            if not 1 <= total <= MAX_REVIEW_GAMES:
                raise FormatError(f"games: 1 to {MAX_REVIEW_GAMES} games, got {total}")
            if request.options.gcg:
                raise FormatError("options.gcg is not used: the games go in games")
            top = request.top or DEFAULT_TOP
            if not 0 < top <= MAX_TOP:
                raise FormatError(f"top must be 0 to {MAX_TOP}, got {request.top}")
            opts = analyze_options(request.options, job.threads, tt)
            opts.validate()
            if opts.lexicon:
                self.engine.lexicon(opts.lexicon)     # an unknown lexicon refuses the request (NOT_FOUND)
            return opts, top

        def run(state: tuple[AnalyzeOptions, int], stop: threading.Event) -> ReviewSummary:
            opts, top = state
            analyses: list[GameAnalysis] = []
            for n, game in enumerate(request.games, 1):
                if stop.is_set():
                    break
                name = game.name or f"game {n}"
                try:
                    if not game.gcg:
                        raise FormatError("gcg is empty")
                    record = parse_gcg(game.gcg)
                    resolve_player(record, opts.player)
                    res = reviewed(self.engine, record, AnalyzeOptions(**vars(opts)), self.review_store, name=name,
                                   stop=stop, on_store_error=self._store_error)
                except (FormatError, LexiconError, ValueError) as exc:
                    with lock:
                        errors.append(pb.ReviewGameError(game=name, error=str(exc)))
                    continue
                analyses.append(res)
                msg = analysis_to_pb(res)
                msg.json = json.dumps(analysis_json(msg))
                with lock:
                    finished.append(msg)
            return summarize_reviews(analyses, top, failed=len(errors), stopped=stop.is_set())

        def news() -> pb.ReviewGamesProgress:
            with lock:
                msg = pb.ReviewGamesProgress(games_done=len(finished) + len(errors), games_total=total,
                                             games=finished[sent["games"]:], errors=errors[sent["errors"]:])
                sent["games"], sent["errors"] = len(finished), len(errors)
                return msg

        def final(state: tuple[AnalyzeOptions, int], res: ReviewSummary, stopped: bool) -> pb.ReviewGamesProgress:
            msg = news()
            msg.summary.CopyFrom(review_summary_to_pb(res))
            msg.summary.stopped = msg.stopped = stopped or res.stopped
            msg.final = True
            msg.json = json.dumps(review_summary_json(msg.summary))
            return msg

        yield from self._stream(context, "review", request, setup, run, lambda state: news(), final,
                                pb.ReviewGamesProgress, threads=request.options.threads,
                                tt_megabytes=self._guard(context, self.limits.tt_megabytes, tt))

    # -------------------------------------------------------------- game sessions

    def CreateGame(self, request: pb.CreateGameRequest, context: grpc.ServicerContext) -> pb.GameState:
        def run() -> pb.GameState:
            check_request(request, self.limits)
            return game_to_pb(self.sessions.create(
                request.lexicon or None, request.seed, list(request.players), request.bingo_bonus, cgp=request.cgp,
                gcg=request.gcg, turn=request.turn if request.HasField("turn") else None,
                client=client_of(context), challenge_rule=request.challenge_rule,
                clock_seconds=request.clock_seconds,
                overtime_penalty=request.overtime_penalty if request.HasField("overtime_penalty") else None))

        return self._guard(context, run)

    def GetGame(self, request: pb.GetGameRequest, context: grpc.ServicerContext) -> pb.GameState:
        return self._guard(context, lambda: game_to_pb(self.sessions.get(request.game_id)))

    def PlayMove(self, request: pb.PlayMoveRequest, context: grpc.ServicerContext) -> pb.GameState:
        def run() -> pb.GameState:
            check_request(request, self.limits)
            session = self.sessions.get(request.game_id)
            self.sessions.play(session, request.move, request.tile_order)
            return game_to_pb(session)

        return self._guard(context, run)

    def EngineMove(self, request: pb.EngineMoveRequest, context: grpc.ServicerContext) -> pb.EngineMoveResponse:
        """A static move at once; a simulating or solving strategy runs as a job (counted against the limits,
        stopped by cancellation, the deadline and shutdown, then playing the best move found so far)."""
        def run() -> pb.EngineMoveResponse:
            check_request(request, self.limits)
            strategy = parse_strategy(request.strategy)
            session = self.sessions.get(request.game_id)
            before = session.game.history_length
            if strategy.needs_job:
                bag = session.game.bag_size
                tt = ENGINE_MOVE_TT_MB if bag <= strategy.peg else 0
                with self.jobs.job("engine-move", strategy.threads, tt) as job:
                    _bind(job, context)
                    choice = self.sessions.engine_move(session, strategy, stop=job.stop, threads=job.threads)
            else:
                choice = self.sessions.engine_move(session, strategy)
            score = session.game.history()[before][6]
            pos = position_from_game(session.game, {"lex": session.lexicon.name})
            return pb.EngineMoveResponse(move=plain_move_to_pb(choice.move, pos, score), game=game_to_pb(session),
                                         phase=choice.phase, seconds=choice.seconds,
                                         budget_seconds=choice.budget, detail=choice.detail)

        return self._guard(context, run)

    def DeleteGame(self, request: pb.DeleteGameRequest, context: grpc.ServicerContext) -> pb.DeleteGameResponse:
        return pb.DeleteGameResponse(found=self.sessions.delete(request.game_id[:64]))

    # -------------------------------------------------------------- game review (sessions.py does the work)

    def _session_call(self, context: grpc.ServicerContext, request: Message,
                      change: Callable[[Session], object]) -> pb.GameState:
        """Check the request, find its game, apply `change` to it, and answer with the game's new state."""
        def run() -> pb.GameState:
            check_request(request, self.limits)
            session = self.sessions.get(request.game_id)
            change(session)
            return game_to_pb(session)

        return self._guard(context, run)

    def NavigateGame(self, request: pb.NavigateGameRequest, context: grpc.ServicerContext) -> pb.GameState:
        return self._session_call(context, request,
                                  lambda s: self.sessions.navigate(s, request.to, request.turn))

    def SetRack(self, request: pb.SetRackRequest, context: grpc.ServicerContext) -> pb.GameState:
        return self._session_call(context, request, lambda s: self.sessions.set_rack(s, request.rack))

    def SetChallengeRule(self, request: pb.SetChallengeRuleRequest, context: grpc.ServicerContext) -> pb.GameState:
        return self._session_call(context, request, lambda s: self.sessions.set_rule(s, request.rule))

    def SetNote(self, request: pb.SetNoteRequest, context: grpc.ServicerContext) -> pb.GameState:
        return self._session_call(context, request, lambda s: self.sessions.set_note(s, request.note))

    def ChallengePlay(self, request: pb.ChallengePlayRequest,
                      context: grpc.ServicerContext) -> pb.ChallengePlayResponse:
        def run() -> pb.ChallengePlayResponse:
            check_request(request, self.limits)
            session = self.sessions.get(request.game_id)
            bad, outcome = self.sessions.challenge(session)
            return pb.ChallengePlayResponse(phony=bool(bad), invalid_words=bad, outcome=outcome,
                                            game=game_to_pb(session))

        return self._guard(context, run)

    def ExportGame(self, request: pb.ExportGameRequest, context: grpc.ServicerContext) -> pb.ExportGameResponse:
        def run() -> pb.ExportGameResponse:
            check_request(request, self.limits)
            return pb.ExportGameResponse(gcg=self.sessions.export(self.sessions.get(request.game_id)))

        return self._guard(context, run)

    # -------------------------------------------------------------- inference and leave values

    def Infer(self, request: pb.InferRequest, context: grpc.ServicerContext) -> pb.InferResponse:
        """The opponent's leave from their last play (analysis/infer.py): on a position and play, or on a game at
        its cursor. Checked before any work; the judging runs as a job, so a stop returns what was judged."""
        def run() -> pb.InferResponse:
            check_request(request, self.limits)
            top = request.top or INFER_TOP
            if not 1 <= top <= MAX_INFER_TOP:
                raise ValueError(f"top must be 1 to {MAX_INFER_TOP}, got {request.top}")
            if not 0 <= request.max_racks <= self.limits.max_infer_racks:
                raise LimitError(f"max_racks must be 1 to {self.limits.max_infer_racks} (limit max_infer_racks), "
                                 f"got {request.max_racks}", "max_infer_racks")
            max_racks = self.limits.infer_racks(request.max_racks)
            opts = infer_options(request, 1, max_racks, "")
            opts.validate()    # a bad tolerance, model or temperature is refused before any work
            if request.game_id:
                if request.HasField("position") or request.play or request.withdrawn or request.history:
                    raise ValueError("with game_id the play and the earlier turns come from the game: give no "
                                     "position, play or withdrawn (nor history)")
                session = self.sessions.get(request.game_id)
                lex = session.lexicon
                with session.busy():
                    replayed = replay_gcg(session.record, lex, session.cursor, session.seed, start=session.start)
                    found = last_play_from_record(session.record, replayed, lex)
                    history = history_from_record(session.record, replayed, lex, opts.history) if opts.history else []
                    # the game's honest view at the cursor (a rack set there with SetRack included)
                    pos = session.view or (replayed.positions[-1] if replayed.positions else replayed.start)
                    last = last_play_on(pos, found.text, lex, withdrawn=found.withdrawn)
                    cgp = write_cgp(pos)
            else:
                pos = self._position(request.position)
                if not request.play:
                    raise FormatError("play is empty: give the opponent's last play as it stands on the board "
                                      "('8G Q(I)') or 'exch N', or a game_id")
                lex = self.engine.lexicon_for(pos, request.position.lexicon or None)
                last = last_play_on(pos, request.play, lex, withdrawn=request.withdrawn)
                history = self._infer_history(request.history, request.position, lex)
                cgp = write_cgp(pos)
            opts.lexicon = lex.name
            with self.jobs.job("infer", request.threads) as job:
                _bind(job, context)
                opts.threads = job.threads
                res = infer(self.engine, last, opts, stop=job.stop, history=history)
            return infer_response_to_pb(res, last.before.ld, top, lex.name, cgp)

        return self._guard(context, run)

    def _infer_history(self, turns: Iterable[pb.InferTurn], where: pb.Position, lex: Lexicon) -> list[LastPlay]:
        """The opponent's earlier turns of an Infer or Simulate request, each on the position before it (in the
        request position's lexicon and distribution)."""
        turns = list(turns)
        if len(turns) > MAX_HISTORY:
            raise ValueError(f"history holds at most {MAX_HISTORY} turns, got {len(turns)}")
        out = []
        for i, t in enumerate(turns, 1):
            try:
                before = self._position(pb.Position(cgp=t.cgp, lexicon=where.lexicon, distribution=where.distribution))
                out.append(last_play_before(before, t.play, lex, withdrawn=t.withdrawn, allow_pass=True))
            except FormatError as exc:
                raise FormatError(f"history turn {i}: {exc}") from None
        return out

    def EvaluateLeave(self, request: pb.EvaluateLeaveRequest,
                      context: grpc.ServicerContext) -> pb.EvaluateLeaveResponse:
        """The value of a leave in the lexicon's leave table (or a named leave set), as the move generator adds
        it to a move's score."""
        def run() -> pb.EvaluateLeaveResponse:
            check_request(request, self.limits)
            lex = self.engine.lexicon(request.lexicon or None)
            if request.leaves:
                klv = self.engine.named_leaves(request.leaves, lex.ld)
                leaves = request.leaves
            elif lex.klv is None:
                raise LexiconError(f"lexicon {lex.name} has no leave values (no {lex.name}.klv2); name a leave set "
                                   f"in leaves")
            else:
                klv, leaves = lex.klv, lex.name
            ld = lex.ld
            tiles = rack_tiles(ld, request.leave, "leave", fold_case=True)
            if len(tiles) > RACK_SIZE:
                raise FormatError(f"leave {excerpt(request.leave)} has {len(tiles)} tiles; at most {RACK_SIZE}")
            for ml in sorted(set(tiles)):
                if tiles.count(ml) > ld.count(ml):
                    raise FormatError(f"leave {excerpt(request.leave)} has {tiles.count(ml)} {ld.label(ml)}; the "
                                      f"distribution holds {ld.count(ml)}")
            index = klv.leave_index(tiles)
            return leave_to_pb(tiles, ld, klv.leave_value(tiles), 0 <= index < klv.n_values, lex.name, leaves)

        return self._guard(context, run)
