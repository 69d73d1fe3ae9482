"""`macondo bots`: two strategies (on one server or two) play whole games through the game-session API.

The referee game lives on the first server, which validates every move and draws the tiles. On each turn
the bot on move is asked for its play: its server gets the position the mover sees (its own rack, the
opponent's hidden unless the bag is empty) as a short-lived game, chooses with its strategy, and the play
is committed on the referee game. So two different servers, builds or strategies can be compared on equal
terms. Seeds are derived from the run seed, the game number and the turn, so a rerun replays the games.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import grpc

from .client import Client, MacondoError

if TYPE_CHECKING:
    from distributed import Client as DaskClient
    from distributed import Future

MAX_TURNS = 200
MASK64 = (1 << 64) - 1


def derive_seed(*parts: int) -> int:
    """A 63-bit seed mixed from the parts (splitmix64 steps), stable across runs and platforms."""
    x = 0x9E3779B97F4A7C15
    for p in parts:
        x = (x ^ (p & MASK64)) & MASK64
        x = (x + 0x9E3779B97F4A7C15) & MASK64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        x = z ^ (z >> 31)
    return x & 0x7FFFFFFFFFFFFFFF


@dataclass
class Bot:
    name: str
    client: Client
    strategy: str

    def choose(self, cgp: str, seed: int) -> str:
        """The play this bot makes in the position (seen by the mover), as notation."""
        mirror = self.client.create_game(cgp=cgp, seed=seed)
        try:
            return self.client.engine_move(mirror.game_id, self.strategy).move.notation
        finally:
            try:
                self.client.delete_game(mirror.game_id)
            except MacondoError:
                pass


@dataclass
class GameResult:
    index: int
    first: int                 # the bot (0 or 1) that moved first
    scores: tuple[int, int]    # by bot
    turns: int
    end_reason: str
    gcg: str
    moves: list[str] = field(default_factory=list)

    @property
    def spread(self) -> int:   # bot 1's
        return self.scores[0] - self.scores[1]


@dataclass
class Summary:
    games: int
    wins: tuple[int, int]
    draws: int
    win_rate: float            # bot 1, draws half
    win_rate_ci95: float
    mean_spread: float         # bot 1
    mean_score: tuple[float, float]
    seconds: float
    strategies: tuple[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "wins": list(self.wins), "draws": self.draws,
                "win_rate": round(self.win_rate, 6), "win_rate_ci95": round(self.win_rate_ci95, 6),
                "mean_spread": round(self.mean_spread, 3), "mean_score": [round(s, 3) for s in self.mean_score],
                "seconds": round(self.seconds, 3), "strategies": list(self.strategies)}

    def text(self) -> str:
        s1, s2 = self.strategies
        return (f"{self.games} games: {s1} won {self.wins[0]}, {s2} won {self.wins[1]}, {self.draws} drawn\n"
                f"{s1} win rate {100 * self.win_rate:.1f}% ± {100 * self.win_rate_ci95:.1f} (95%), "
                f"mean spread {self.mean_spread:+.1f}, mean scores {self.mean_score[0]:.1f} - "
                f"{self.mean_score[1]:.1f}\n"
                f"{self.seconds:.1f} s ({self.games / self.seconds if self.seconds else 0:.2f} games/s)")


def play_game(referee: Client, bots: tuple[Bot, Bot], index: int, seed: int, lexicon: str = "") -> GameResult:
    """One game; bot 1 moves first in even games, bot 2 in odd ones."""
    first = index % 2
    seats = (bots[first], bots[1 - first])           # seat 0 moves first
    state = referee.create_game(lexicon=lexicon, seed=derive_seed(seed, index),
                                players=[f"{seats[0].name}", f"{seats[1].name}"])
    moves: list[str] = []
    try:
        while not state.game_over:
            if len(moves) >= MAX_TURNS:
                raise MacondoError(grpc.StatusCode.ABORTED, f"game {index} did not end within {MAX_TURNS} turns")
            bot = seats[state.on_turn]
            notation = bot.choose(state.cgp, derive_seed(seed, index, len(moves) + 1))
            state = referee.play_move(state.game_id, notation)
            moves.append(notation)
        by_seat = tuple(state.scores)
        scores = (by_seat[0], by_seat[1]) if first == 0 else (by_seat[1], by_seat[0])
        return GameResult(index, first, scores, len(moves), state.end_reason, state.gcg, moves)
    finally:
        try:
            referee.delete_game(state.game_id)
        except MacondoError:
            pass


def summarize(results: list[GameResult], seconds: float, strategies: tuple[str, str]) -> Summary:
    n = len(results)
    wins1 = sum(r.spread > 0 for r in results)
    wins2 = sum(r.spread < 0 for r in results)
    draws = n - wins1 - wins2
    rate = (wins1 + draws / 2) / n if n else 0.0
    ci = 1.96 * math.sqrt(rate * (1 - rate) / n) if n else 0.0
    return Summary(n, (wins1, wins2), draws, rate, ci, sum(r.spread for r in results) / n if n else 0.0,
                   (sum(r.scores[0] for r in results) / n if n else 0.0,
                    sum(r.scores[1] for r in results) / n if n else 0.0), seconds, strategies)


class DaskCluster(Protocol):
    """What `cluster` arguments are: an object whose `client` is a dask.distributed Client (e.g.
    macondo_server.runtime.cluster.Cluster)."""

    @property
    def client(self) -> DaskClient: ...


def run_bots(referee: Client, bots: tuple[Bot, Bot], games: int, seed: int, lexicon: str = "",
             gcg_dir: str | None = None, on_game: Callable[[GameResult], None] | None = None,
             stop: Callable[[], bool] | None = None,
             cluster: DaskCluster | None = None) -> tuple[list[GameResult], Summary]:
    """Play `games` games (game g: tiles from (seed, g), bot 1 first when g is even). With `cluster` (an
    object whose `client` is a dask.distributed Client, e.g. macondo_server.runtime.cluster.Cluster), the games are
    played by its workers in batches, each worker talking to the same servers by address: the same games,
    the results in game order; on_game is called as games come back (in any order)."""
    out = Path(gcg_dir) if gcg_dir else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    results: list[GameResult] = []
    start = time.monotonic()

    def done(res: GameResult) -> None:
        results.append(res)
        if out is not None and res.gcg:
            (out / f"game-{res.index + 1:04d}.gcg").write_text(res.gcg, encoding="utf-8")
        if on_game is not None:
            on_game(res)

    if cluster is not None:
        seats = [BotSpec(b.name, b.client.address, b.strategy) for b in bots]
        _run_on_cluster(cluster, referee.address, (seats[0], seats[1]), games, seed, lexicon, done, stop)
        results.sort(key=lambda r: r.index)
    else:
        for g in range(games):
            if stop is not None and stop():
                break
            done(play_game(referee, bots, g, seed, lexicon))
    return results, summarize(results, time.monotonic() - start, (bots[0].strategy, bots[1].strategy))


# ---------------------------------------------------------------------------------------- on a Dask cluster

NO_WORKERS_SECONDS = 60.0      # games in flight and no worker for this long: an error, never a wait without end


class ClusterUnavailable(MacondoError):
    """The cluster cannot play the games (dask missing, no workers, a batch failing on every worker)."""

    def __init__(self, message: str) -> None:
        super().__init__(grpc.StatusCode.UNAVAILABLE, message)


@dataclass(frozen=True)
class BotSpec:
    """A bot as a worker process rebuilds it: its name, server address and strategy."""
    name: str
    address: str
    strategy: str


_W_CLIENTS: dict[str, Client] = {}


def _worker_client(address: str) -> Client:
    """This worker process's client of `address` (kept between tasks; gRPC channels serve every thread)."""
    c = _W_CLIENTS.get(address)
    if c is None:
        c = _W_CLIENTS.setdefault(address, Client(address, timeout=600.0))
    return c


class BotsBatch(TypedDict):
    """What bots_task returns."""

    games: list[GameResult]
    error: tuple[str, str] | None     # (status code name, message)


def bots_task(referee: str, seats: tuple[BotSpec, BotSpec], seed: int, lexicon: str, indices: list[int],
              run: str) -> BotsBatch:
    """Runs on a cluster worker: games `indices` exactly as play_game plays them in-process. Returns
    {"games": [GameResult, ...], "error": None or (status code name, message)} (a server's refusal comes back
    as data: the client reports it as it would in-process)."""
    out: BotsBatch = {"games": [], "error": None}
    try:
        bots = (Bot(seats[0].name, _worker_client(seats[0].address), seats[0].strategy),
                Bot(seats[1].name, _worker_client(seats[1].address), seats[1].strategy))
        ref = _worker_client(referee)
        for g in indices:
            out["games"].append(play_game(ref, bots, g, seed, lexicon))
    except MacondoError as exc:
        out["error"] = (exc.code.name, exc.message)
    return out


def _run_on_cluster(cluster: DaskCluster, referee: str, seats: tuple[BotSpec, BotSpec], games: int, seed: int,
                    lexicon: str, done: Callable[[GameResult], None], stop: Callable[[], bool] | None) -> None:
    try:
        import distributed
    except ImportError:
        raise ClusterUnavailable("--cluster needs Dask: pip install 'dask[distributed]' (the cluster extra)") from None
    import uuid

    client = cluster.client
    run = uuid.uuid4().hex

    def threads() -> int:
        try:
            nthreads: dict[str, int] = client.nthreads()
            return sum(nthreads.values())
        except Exception:  # noqa: BLE001 (the scheduler gone: no workers)
            return 0

    slots = 2 * max(1, threads())
    size = max(1, min(8, games // (4 * slots)))
    batches = [list(range(i, min(games, i + size))) for i in range(0, games, size)]
    batches.reverse()
    inflight: dict[Future[BotsBatch], list[int]] = {}
    last_worker = time.monotonic()
    checked = 0.0
    try:
        while True:
            while batches and len(inflight) < slots and not (stop is not None and stop()):
                b = batches.pop()
                fut = client.submit(bots_task, referee, seats, seed, lexicon, b, run, pure=False,
                                    key=f"bots-{run}-{b[0]}")
                inflight[fut] = b
            if not inflight or (stop is not None and stop()):
                break
            finished: set[Future[BotsBatch]]
            try:
                finished = distributed.wait(list(inflight), timeout=0.2, return_when="FIRST_COMPLETED").done
            except (distributed.TimeoutError, TimeoutError):
                finished = set()
            for fut in finished:
                b = inflight[fut]
                try:
                    got = fut.result(timeout=2.0)
                except distributed.client.FutureCancelledError:
                    inflight.pop(fut)
                    continue
                except (distributed.TimeoutError, TimeoutError):
                    if fut.status != "error":
                        continue   # its result went with its worker: it runs again (or no worker is left)
                    raise ClusterUnavailable(f"games {b[0] + 1}-{b[-1] + 1} failed on the cluster: a timeout") from None
                except Exception as exc:  # noqa: BLE001 (a batch failing on every worker it was tried on)
                    text = " ".join(str(exc).split())[:300] or type(exc).__name__
                    raise ClusterUnavailable(f"games {b[0] + 1}-{b[-1] + 1} failed on the cluster: {text}") from None
                inflight.pop(fut)
                for res in got["games"]:
                    done(res)
                if got["error"] is not None:   # a server refused (a strategy, the lexicon, a game too long)
                    code, message = got["error"]
                    raise MacondoError(getattr(grpc.StatusCode, code, grpc.StatusCode.UNKNOWN), message)
            now = time.monotonic()
            if inflight and now - checked >= 1.0:
                checked = now
                if threads() > 0:
                    last_worker = now
                elif now - last_worker > NO_WORKERS_SECONDS:
                    raise ClusterUnavailable(f"the cluster has had no workers for {NO_WORKERS_SECONDS:.0f} s "
                                             "(the games in flight are abandoned)")
    finally:
        if inflight:
            try:
                client.cancel(list(inflight))
            except Exception:  # noqa: BLE001 (ending anyway)
                pass


def main_bots(referee: Client, second: Client, strategy1: str, strategy2: str, games: int, seed: int,
              lexicon: str, gcg_dir: str | None, as_json: bool, cluster: DaskCluster | None = None) -> int:
    names = ("bot1", "bot2")
    bots = (Bot(names[0], referee, strategy1), Bot(names[1], second, strategy2))
    live = not as_json and sys.stderr.isatty()
    interrupted = False
    results: list[GameResult] = []
    if live:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                      TimeElapsedColumn(), transient=True) as bar:
            task = bar.add_task("", total=games)

            def on_game(r: GameResult) -> None:
                results.append(r)
                w = sum(x.spread > 0 for x in results)
                bar.update(task, advance=1, description=f"bot1 {w}/{len(results)} wins")

            try:
                _, summary = run_bots(referee, bots, games, seed, lexicon, gcg_dir, on_game, cluster=cluster)
            except KeyboardInterrupt:
                interrupted = True
    else:
        try:
            _, summary = run_bots(referee, bots, games, seed, lexicon, gcg_dir, results.append, cluster=cluster)
        except KeyboardInterrupt:
            interrupted = True
    results.sort(key=lambda r: r.index)   # (on a cluster they come back in any order)
    if interrupted:
        summary = summarize(results, 0.0, (strategy1, strategy2))
        print(f"interrupted after {len(results)} games", file=sys.stderr)
    if as_json:
        doc = summary.to_json()
        doc["results"] = [{"game": r.index + 1, "first": r.first + 1, "scores": list(r.scores),
                           "turns": r.turns, "end_reason": r.end_reason} for r in results]
        print(json.dumps(doc))
    else:
        for r in results:
            print(f"game {r.index + 1:>3}: bot{r.first + 1} first, {r.scores[0]:>3} - {r.scores[1]:<3} "
                  f"({r.turns} turns, {r.end_reason})")
        print(summary.text())
    return 130 if interrupted else 0
