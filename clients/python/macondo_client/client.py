"""A typed Python client for the engine's gRPC API (macondo.v1).

    with Client("127.0.0.1:50051") as c:
        moves = c.generate(cgp, num_plays=5)
        for snap in c.simulate(cgp, iterations=500, seed=1):   # live snapshots, the last one final
            print(snap.iterations, snap.plays[0].move.notation)

Errors come back as `MacondoError` subclasses that carry the status code, the server's message and its
machine-readable reason. Streams can be stopped (`stream.stop()`); the server then sends its best result
so far as the final snapshot.

Interactive programs: do not let a KeyboardInterrupt arise inside a stream's iteration (gRPC's iterator
does not survive it: the next read fails with 'Internal gRPC call error 8' and the channel can hang).
Consume the stream in a thread and call `stop()` from the main thread on Ctrl-C, as `macondo shell` does.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from .pb.macondo.v1 import engine_pb2 as pb
from .pb.macondo.v1 import engine_pb2_grpc as pb_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024

__all__ = [
    "Client", "Stream", "MacondoError", "InvalidArgument", "NotFound", "ResourceExhausted", "DeadlineExceeded",
    "Unavailable", "pb",
]


class MacondoError(Exception):
    """An RPC failed. `code` is the gRPC status code, `reason` the server's ErrorInfo reason when given."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason

    def __str__(self) -> str:
        return self.message


class InvalidArgument(MacondoError):
    pass


class NotFound(MacondoError):
    pass


class ResourceExhausted(MacondoError):
    pass


class DeadlineExceeded(MacondoError):
    pass


class Unavailable(MacondoError):
    pass


_ERRORS = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
}


def _translate(exc: grpc.RpcError) -> MacondoError:
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    message = (exc.details() if hasattr(exc, "details") else "") or str(code)
    reason = ""
    try:
        status = rpc_status.from_call(exc)
    except (ValueError, AttributeError):
        status = None
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
    if code == grpc.StatusCode.UNAVAILABLE:
        message = f"the engine server is unavailable ({message})"
    return _ERRORS.get(code, MacondoError)(code, message, reason)


def _request(cls: Any, **fields: Any) -> Any:
    """Build a request message; an unknown or mistyped option is a ValueError that names it."""
    known = {f.name for f in cls.DESCRIPTOR.fields}
    unknown = sorted(k for k in fields if k not in known)
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)} for {cls.DESCRIPTOR.name}; "
                         f"known: {', '.join(sorted(known))}")
    try:
        return cls(**{k: v for k, v in fields.items() if v is not None})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{cls.DESCRIPTOR.name}: {exc}") from None


T = TypeVar("T")


class Stream(Generic[T]):
    """Snapshots of a long job, the last one marked `final`. Iterate it, or call `result()` for the final
    snapshot. `stop()` (from any thread) asks the server to stop; the stream then ends with the best result
    so far. `latest` is the newest snapshot seen."""

    def __init__(self, client: Client, call: Any) -> None:
        self._client = client
        self._call = call
        self._lock = threading.Lock()
        self._stop_requested = False
        self.job_id = ""
        self.latest: T | None = None

    def __iter__(self) -> Iterator[T]:
        try:
            for msg in self._call:
                with self._lock:
                    self.latest = msg
                    first_id = not self.job_id and bool(msg.job_id)
                    if first_id:
                        self.job_id = msg.job_id
                    pending = first_id and self._stop_requested
                if pending:
                    self._client.stop_job(self.job_id)
                yield msg
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.CANCELLED and self._stop_requested:
                return
            raise _translate(exc) from None

    def result(self) -> T:
        """Consume the stream and return the final snapshot."""
        for _ in self:
            pass
        if self.latest is None:
            raise MacondoError(grpc.StatusCode.UNKNOWN, "the stream ended without a result")
        return self.latest

    def stop(self) -> None:
        with self._lock:
            self._stop_requested = True
            job_id = self.job_id
        if job_id:
            self._client.stop_job(job_id)

    def cancel(self) -> None:
        """Abandon the stream without waiting for a result."""
        with self._lock:
            self._stop_requested = True
        self._call.cancel()


class _BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):  # type: ignore[misc]
    """Adds `authorization: Bearer TOKEN` to every call."""

    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def _details(self, details: Any) -> Any:
        return _CallDetails(details.method, details.timeout, [*(details.metadata or ()), self._header],
                            details.credentials, getattr(details, "wait_for_ready", None),
                            getattr(details, "compression", None))

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)


class _CallDetails(grpc.ClientCallDetails):  # type: ignore[misc]
    def __init__(self, method: str, timeout: float | None, metadata: Any, credentials: Any,
                 wait_for_ready: bool | None, compression: Any) -> None:
        self.method, self.timeout, self.metadata = method, timeout, metadata
        self.credentials, self.wait_for_ready, self.compression = credentials, wait_for_ready, compression


class Client:
    """A connection to one engine server. `timeout` is the deadline of unary calls (seconds);
    `stream_timeout` that of streams (None: no deadline; the jobs' own time limits apply).
    `token`: the bearer token a server with tokens requires (sent on every call); `ca_file`: a PEM file of
    the certificate authority that signed a TLS server's certificate (TLS is used when it is given)."""

    def __init__(self, address: str = DEFAULT_ADDRESS, timeout: float = 60.0, stream_timeout: float | None = None,
                 connect_timeout: float | None = 5.0, token: str | None = None, ca_file: str | None = None) -> None:
        self.address = address
        self.timeout = timeout
        self.stream_timeout = stream_timeout
        options = [
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ]
        if ca_file:
            try:
                with open(ca_file, "rb") as fh:
                    ca = fh.read()
            except OSError as exc:
                raise ValueError(f"cannot read the CA file {ca_file}: {exc.strerror}") from None
            self._channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=ca),
                                                options=options)
        else:
            self._channel = grpc.insecure_channel(address, options=options)
        if token:
            self._channel = grpc.intercept_channel(self._channel, _BearerToken(token))
        if connect_timeout is not None:
            try:
                grpc.channel_ready_future(self._channel).result(timeout=connect_timeout)
            except grpc.FutureTimeoutError:
                self._channel.close()
                raise Unavailable(grpc.StatusCode.UNAVAILABLE,
                                  f"cannot reach an engine server at {address} within {connect_timeout:g} s") from None
        self.stub = pb_grpc.EngineStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- plumbing

    def _unary(self, method: str, request: Any, timeout: float | None = None, job: bool = False) -> Any:
        # as a future: a KeyboardInterrupt while waiting then leaves gRPC consistent (the call is cancelled),
        # where one inside a blocking call's completion-queue wait can break the channel. A call that runs a
        # job on the server (job=True) takes the streams' deadline: the job's own time limits apply.
        future = getattr(self.stub, method).future(
            request, timeout=timeout or (self.stream_timeout if job else self.timeout))
        try:
            return future.result()
        except grpc.RpcError as exc:
            raise _translate(exc) from None
        except KeyboardInterrupt:
            future.cancel()
            raise

    def _stream(self, method: str, request: Any, timeout: float | None = None) -> Stream[Any]:
        call = getattr(self.stub, method)(request, timeout=timeout or self.stream_timeout)
        return Stream(self, call)

    @staticmethod
    def _position(cgp: str, lexicon: str = "") -> pb.Position:
        return pb.Position(cgp=cgp, lexicon=lexicon or "")

    # -------------------------------------------------------------- RPCs

    def server_info(self) -> pb.ServerInfo:
        reply: pb.ServerInfo = self._unary("GetServerInfo", pb.GetServerInfoRequest())
        return reply

    def generate(self, cgp: str, num_plays: int = 15, all: bool = False, sort: str = "equity",
                 lexicon: str = "", leaves: str = "") -> pb.GenerateMovesResponse:
        if sort not in ("equity", "score"):
            raise ValueError(f"sort must be 'equity' or 'score', got {sort!r}")
        req = pb.GenerateMovesRequest(position=self._position(cgp, lexicon), num_plays=num_plays, all=all,
                                      sort=pb.SORT_SCORE if sort == "score" else pb.SORT_EQUITY, leaves=leaves)
        reply: pb.GenerateMovesResponse = self._unary("GenerateMoves", req)
        return reply

    def simulate(self, cgp: str, lexicon: str = "", timeout: float | None = None,
                 **options: Any) -> Stream[pb.SimulateProgress]:
        """Options: plies, num_plays, plays (list of moves), iterations, stop (95/98/99), max_time, threads,
        seed, opp_rack, stats (each play's score histograms, heatmaps and the opponent's rack around their
        reply); inference: infer_play (the opponent's last play as on the board, or 'exch N'),
        infer_withdrawn, infer_model, infer_temperature, infer_tolerance, infer_max_racks, infer_history (their
        earlier turns, as infer's history)."""
        req = _request(pb.SimulateRequest, position=self._position(cgp, lexicon), **options)
        return self._stream("Simulate", req, timeout)

    def solve_endgame(self, cgp: str, lexicon: str = "", timeout: float | None = None,
                      **options: Any) -> Stream[pb.EndgameProgress]:
        """Options: plies, max_time, threads, first_win, disable_heuristics, tt_megabytes, top_k (the best K first
        moves with exact values and lines), also_solve (list of first moves valued exactly too)."""
        req = _request(pb.SolveEndgameRequest, position=self._position(cgp, lexicon), **options)
        return self._stream("SolveEndgame", req, timeout)

    def solve_pre_endgame(self, cgp: str, lexicon: str = "", timeout: float | None = None,
                          **options: Any) -> Stream[pb.PreEndgameProgress]:
        """Options: endgame_plies, only_solve (list), max_tiles_left, max_nested_depth, skip_deep_pass,
        early_cutoff, skip_tiebreaker, opp_rack, threads, max_time, endgame_heuristics."""
        req = _request(pb.SolvePreEndgameRequest, position=self._position(cgp, lexicon), **options)
        return self._stream("SolvePreEndgame", req, timeout)

    def analyze(self, gcg: str, timeout: float | None = None, **options: Any) -> Stream[pb.AnalyzeProgress]:
        """Analyse every turn of a game given as GCG text: a message as turns finish (`turns` holds the new
        ones), the last one final with every turn, the per-player summary and `json`. Options: player,
        lexicon, sim_iterations, sim_plies, sim_plays, sim_max_time, peg_max_bag, peg_plays, peg_endgame_plies,
        peg_max_time, endgame_plies, endgame_max_time, endgame_candidates, threads, seed, annotated_gcg."""
        return self._stream("AnalyzeGame", _request(pb.AnalyzeGameRequest, gcg=gcg, **options), timeout)

    def review_games(self, games: list[pb.ReviewGame] | list[tuple[str, str]], top: int | None = None,
                     timeout: float | None = None, **options: Any) -> Stream[pb.ReviewGamesProgress]:
        """Review many games (ReviewGame messages, or (name, GCG text) pairs) and sum them up per player: a
        message as games finish (`games` holds the new ones, `errors` the games refused), the last one final with
        the `summary` and its `json`. Options: those of analyze (player, lexicon, budgets, threads, seed)."""
        items = [g if isinstance(g, pb.ReviewGame) else pb.ReviewGame(name=g[0], gcg=g[1]) for g in games]
        req = pb.ReviewGamesRequest(games=items, options=_request(pb.AnalyzeGameRequest, **options), top=top or 0)
        return self._stream("ReviewGames", req, timeout)

    def autoplay(self, timeout: float | None = None, **options: Any) -> Stream[pb.AutoplayProgress]:
        """Options: games, lexicon, leaves, lexicon2, leaves2, seed, threads, pairs."""
        return self._stream("Autoplay", _request(pb.AutoplayRequest, **options), timeout)

    def infer(self, cgp: str = "", play: str = "", lexicon: str = "", game_id: str = "",
              timeout: float | None = None, **options: Any) -> pb.InferResponse:
        """What the opponent's last play says about the tiles they kept: on a position (`cgp`, the inferrer on
        turn) and their `play` as it stands on the board ('8G Q(I)', 'exch N'), or on a game session at its
        cursor (`game_id`: the play and the opponent's earlier turns come from the game). Options: withdrawn (the
        play was a phony challenged off), model ('softmax' or 'tolerance'), temperature, tolerance, history (with
        cgp: the opponent's earlier turns, oldest first, as pb.InferTurn or dicts of cgp, play, withdrawn),
        history_turns, max_racks, threads, seed, top."""
        fields: dict[str, Any] = dict(options)
        if cgp:
            fields["position"] = self._position(cgp, lexicon)
        elif lexicon:
            raise ValueError("lexicon goes with a cgp (a game session has its own lexicon)")
        req = _request(pb.InferRequest, play=play or None, game_id=game_id or None, **fields)
        reply: pb.InferResponse = self._unary("Infer", req, timeout)
        return reply

    def evaluate_leave(self, leave: str, lexicon: str = "", leaves: str = "") -> pb.EvaluateLeaveResponse:
        """The value of a leave (0 to 7 tiles, '?' a blank) in the lexicon's leave table, or in the named leave
        set (ServerInfo.leave_sets): `value` in points, `millipoints` exact."""
        req = pb.EvaluateLeaveRequest(leave=leave, lexicon=lexicon, leaves=leaves)
        reply: pb.EvaluateLeaveResponse = self._unary("EvaluateLeave", req)
        return reply

    def stop_job(self, job_id: str) -> bool:
        return bool(self._unary("StopJob", pb.StopJobRequest(job_id=job_id)).found)

    # -------------------------------------------------------------- game sessions

    def create_game(self, lexicon: str = "", seed: int = 0, players: list[str] | None = None,
                    bingo_bonus: int = 0, cgp: str = "", gcg: str = "", turn: int | None = None,
                    challenge_rule: str = "", clock_seconds: float = 0.0,
                    overtime_penalty: int | None = None) -> pb.GameState:
        """A new game; `clock_seconds` makes it a timed game (each player's clock; a CGP's tmr op does too)."""
        req = pb.CreateGameRequest(lexicon=lexicon, seed=seed, players=players or [], bingo_bonus=bingo_bonus,
                                   cgp=cgp, gcg=gcg, challenge_rule=challenge_rule, clock_seconds=clock_seconds)
        if turn is not None:
            req.turn = turn
        if overtime_penalty is not None:
            req.overtime_penalty = overtime_penalty
        reply: pb.GameState = self._unary("CreateGame", req)
        return reply

    def get_game(self, game_id: str) -> pb.GameState:
        reply: pb.GameState = self._unary("GetGame", pb.GetGameRequest(game_id=game_id))
        return reply

    def play_move(self, game_id: str, move: str, tile_order: str = "") -> pb.GameState:
        reply: pb.GameState = self._unary("PlayMove", pb.PlayMoveRequest(game_id=game_id, move=move,
                                                                         tile_order=tile_order))
        return reply

    def engine_move(self, game_id: str, strategy: str = "static", timeout: float | None = None) -> pb.EngineMoveResponse:
        """The engine's move in the game, played. A simulating or solving strategy runs as a job for as long as
        its budget allows (from the game clock, `max_time` or the strategy's defaults, within the server's job
        limits): minutes on a tournament clock. So the call has the streams' deadline (`stream_timeout`, none
        by default) unless `timeout` is given, not that of the quick unary calls."""
        req = pb.EngineMoveRequest(game_id=game_id, strategy=strategy)
        reply: pb.EngineMoveResponse = self._unary("EngineMove", req, timeout, job=True)
        return reply

    def delete_game(self, game_id: str) -> bool:
        return bool(self._unary("DeleteGame", pb.DeleteGameRequest(game_id=game_id)).found)

    # -------------------------------------------------------------- game review

    def navigate(self, game_id: str, to: str, turn: int = 0) -> pb.GameState:
        """to: first, last, next, previous, or turn (with `turn`: events applied, 0 = the start)."""
        reply: pb.GameState = self._unary("NavigateGame", pb.NavigateGameRequest(game_id=game_id, to=to,
                                                                                 turn=turn))
        return reply

    def set_rack(self, game_id: str, rack: str) -> pb.GameState:
        reply: pb.GameState = self._unary("SetRack", pb.SetRackRequest(game_id=game_id, rack=rack))
        return reply

    def set_challenge_rule(self, game_id: str, rule: str) -> pb.GameState:
        reply: pb.GameState = self._unary("SetChallengeRule", pb.SetChallengeRuleRequest(game_id=game_id,
                                                                                         rule=rule))
        return reply

    def challenge(self, game_id: str) -> pb.ChallengePlayResponse:
        reply: pb.ChallengePlayResponse = self._unary("ChallengePlay",
                                                      pb.ChallengePlayRequest(game_id=game_id))
        return reply

    def set_note(self, game_id: str, note: str) -> pb.GameState:
        reply: pb.GameState = self._unary("SetNote", pb.SetNoteRequest(game_id=game_id, note=note))
        return reply

    def export_game(self, game_id: str) -> str:
        """The game as GCG text (the caller writes it where it likes)."""
        reply: pb.ExportGameResponse = self._unary("ExportGame", pb.ExportGameRequest(game_id=game_id))
        return reply.gcg


@contextlib.contextmanager
def connect(address: str, timeout: float = 600.0, token: str | None = None,
            ca_file: str | None = None) -> Iterator[Client]:
    """A client of the engine server at `address` (HOST:PORT), closed when the block ends; `token` and
    `ca_file` as for Client.

    The client never starts an engine of its own: `macondo shell` and `macondo bots` without `--server` start
    one in the engine's process (macondo_server.api.inprocess)."""
    if not address:
        raise ValueError("connect() needs a server address HOST:PORT")
    with Client(address, timeout=timeout, token=token, ca_file=ca_file) as client:
        yield client
