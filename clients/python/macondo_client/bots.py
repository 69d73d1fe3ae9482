"""`macondo bots`: the arena. Two players (strategies on one server or two, or another engine through an
adapter process) play whole games through the game-session API in seeded pairs with the seats swapped.

The referee game lives on the first server, which validates every move, draws the tiles and, with a clock,
keeps each player's time. On each turn the player on move is asked for its play: a server bot gets the
position it sees (its own rack, the opponent's hidden unless the bag is empty, its clock in the CGP's tmr op)
as a short-lived game and chooses with its strategy; an adapter bot gets the same position as a line of JSON
(see CommandBot). The play is committed on the referee game. Game pair k (games 2k and 2k+1) uses one tile
seed with bot 1 first, then bot 2 first; seeds come from the run seed, so a rerun replays the games.
"""

from __future__ import annotations

import json
import math
import shlex
import statistics
import subprocess
import sys
import threading
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
ANSWER_GRACE = 120.0          # seconds past the mover's clock (or fixed budget) before a bot's server counts as silent
MASK64 = (1 << 64) - 1
PRE_ENDGAME_TILES = 6          # the bag sizes of the pre-endgame phase, for the report by phase
GAME_PHASES = ("early", "pre-endgame", "endgame")


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


def game_phase(bag: int) -> str:
    """The phase of the game by the tiles in the bag before a move."""
    return "endgame" if bag == 0 else "pre-endgame" if bag <= PRE_ENDGAME_TILES else "early"


@dataclass
class Played:
    """One bot's answer: its move and what it says about it."""
    notation: str
    phase: str = ""            # how it chose (static, sim, pre-endgame, endgame; "" from an adapter)
    seconds: float = 0.0       # wall time of the question, seen by the arena
    detail: str = ""


@dataclass
class Bot:
    """A strategy on an engine server (see the EngineMove strategies: static, sim, best, the levels)."""
    name: str
    client: Client
    strategy: str
    move_time: float = 0.0     # with it, each move's budget (sent as the strategy's max_time)

    @property
    def label(self) -> str:
        return self.strategy

    def effective_strategy(self) -> str:
        if self.move_time <= 0:
            return self.strategy
        kind, _, rest = self.strategy.partition(":")
        if kind.strip() not in ("sim", "best") or "max_time=" in rest:
            return self.strategy      # static and the levels answer at once; a strategy's own max_time stands
        return f"{kind}:{rest + ',' if rest else ''}max_time={self.move_time:g}"

    def choose(self, cgp: str, seed: int, bag: int, gcg: str = "", on_turn: int = 0,
               clock: float | None = None) -> Played:
        """The play this bot makes in the position (seen by the mover, clock included), as notation. With the
        game's record (`gcg`, a game from the empty board) the bot's server gets the game so far as the mover
        knows it (the opponent's racks left out), so it can infer from the opponent's turns."""
        t0 = time.monotonic()
        if gcg:
            mirror = self.client.create_game(gcg=honest_record(gcg, on_turn), seed=seed,
                                             clock_seconds=max(0.01, clock) if clock is not None else 0.0)
        else:
            mirror = self.client.create_game(cgp=cgp, seed=seed)
        # the move takes at most the mover's clock (or the fixed budget); the deadline only catches a server
        # that never answers
        if clock is not None:
            deadline: float | None = max(0.0, clock) + ANSWER_GRACE
        elif self.move_time > 0 and "max_time=" not in self.strategy:
            deadline = self.move_time + ANSWER_GRACE
        else:
            deadline = None
        try:
            r = self.client.engine_move(mirror.game_id, self.effective_strategy(), timeout=deadline)
            return Played(r.move.notation, r.phase, time.monotonic() - t0, r.detail)
        finally:
            try:
                self.client.delete_game(mirror.game_id)
            except MacondoError:
                pass


class CommandBot:
    """Another engine's bot through an adapter process (started once, kept for the run). The arena writes one
    JSON object a line: {"cgp": position as the mover sees it, "seconds": this move's budget, "seed": int};
    the adapter answers {"move": notation} or {"error": "..."}; {"quit": true} or the end of input ends it.
    With a clock and no fixed time a move, the budget is the clock left shared over the turns to come.

    An adapter that fails a move (it exits, gives no answer within `timeout` or the move's budget and two
    minutes, whichever is longer, or answers garbage or an error)
    is killed and started again, and the move asked again with the budget left, up to `retries` times a move;
    each restart is said on stderr and counted (`restarts`). The time lost counts as the move's."""

    def __init__(self, name: str, command: str, move_time: float = 0.0, timeout: float = 600.0,
                 retries: int = 2) -> None:
        self.name = name
        self.command = command
        self.move_time = move_time
        self.timeout = timeout
        self.retries = retries
        self.restarts = 0
        self._local = threading.local()          # one adapter process per thread that asks
        self._all: list[subprocess.Popen[str]] = []
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return "adapter: " + (shlex.split(self.command)[0] if self.command.strip() else "?")

    def _process(self) -> subprocess.Popen[str]:
        proc: subprocess.Popen[str] | None = getattr(self._local, "proc", None)
        if proc is None or proc.poll() is not None:
            try:
                proc = subprocess.Popen(shlex.split(self.command), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)
            except (OSError, ValueError) as exc:
                raise MacondoError(grpc.StatusCode.FAILED_PRECONDITION,
                                   f"cannot start the adapter {self.command!r}: {exc}") from None
            self._local.proc = proc
            with self._lock:
                self._all.append(proc)
        return proc

    def _drop(self) -> None:
        """Kill this thread's adapter process (the next question starts a new one)."""
        proc: subprocess.Popen[str] | None = getattr(self._local, "proc", None)
        self._local.proc = None
        if proc is not None and proc.poll() is None:
            proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def budget(self, cgp: str, bag: int) -> float:
        if self.move_time > 0:
            return self.move_time
        left = clock_of(cgp)
        if left is None:
            return 1.0
        turns = math.ceil(bag / 8) + 2
        return max(0.05, (left * 0.95 - 1.0) / turns)

    def choose(self, cgp: str, seed: int, bag: int, gcg: str = "", on_turn: int = 0,
               clock: float | None = None) -> Played:
        t0 = time.monotonic()
        budget = self.budget(cgp, bag)
        for attempt in range(self.retries + 1):
            left = max(0.05, budget - (time.monotonic() - t0))
            try:
                return self._ask({"cgp": cgp, "seconds": round(left, 3), "seed": seed}, t0)
            except MacondoError as exc:
                if exc.code == grpc.StatusCode.FAILED_PRECONDITION:
                    raise                        # it cannot even be started: asking again will not help
                self._drop()
                if attempt == self.retries:
                    raise MacondoError(exc.code, f"{exc.message} (after {self.retries} restart"
                                                 f"{'' if self.retries == 1 else 's'} for this move)") from None
                with self._lock:
                    self.restarts += 1
                print(f"arena: {self.name}: {exc.message}; restarting the adapter and asking again", file=sys.stderr,
                      flush=True)
        raise AssertionError("unreachable")

    def _ask(self, request: dict[str, Any], t0: float) -> Played:
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except OSError as exc:
            raise MacondoError(grpc.StatusCode.UNAVAILABLE, f"the adapter {self.label} stopped: {exc}") from None
        # (a long budget, on a long clock, is waited for in full)
        line = _read_line(proc, max(self.timeout, float(request["seconds"]) + ANSWER_GRACE))
        if not line:
            raise MacondoError(grpc.StatusCode.UNAVAILABLE, f"the adapter {self.label} gave no answer")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise MacondoError(grpc.StatusCode.INTERNAL,
                               f"the adapter {self.label} answered {line[:80]!r}, not JSON") from None
        if not isinstance(reply, dict) or not isinstance(reply.get("move"), str):
            err = reply.get("error") if isinstance(reply, dict) else None
            raise MacondoError(grpc.StatusCode.INTERNAL, f"the adapter {self.label} failed: {err or line[:80]}")
        return Played(reply["move"], "", time.monotonic() - t0, str(reply.get("detail", ""))[:200])

    def close(self) -> None:
        with self._lock:
            procs, self._all = self._all, []
        for proc in procs:
            if proc.poll() is None:
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(json.dumps({"quit": True}) + "\n")
                    proc.stdin.close()
                    proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """One line of the adapter's output, or "" after `timeout` seconds (the process is then killed)."""
    out: list[str] = []
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: out.append(proc.stdout.readline() if proc.stdout else ""),
                              daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        proc.kill()
        return ""
    return out[0].strip() if out else ""


def honest_record(gcg: str, on_turn: int) -> str:
    """A game record as the player on turn (0 or 1: the record's first or second player) knows it: the
    opponent's racks, on their turns and in the last-rack pragma, left out."""
    nicks = [line.split()[1] for line in gcg.splitlines() if line.startswith(("#player1 ", "#player2 "))]
    if len(nicks) != 2:
        return gcg
    other = nicks[1 - on_turn]
    out = []
    for line in gcg.splitlines():
        if line.startswith(f"#rack{2 - on_turn} "):
            continue
        if line.startswith(f">{other}:"):
            head, _, rest = line.partition(":")
            toks = rest.split()
            # a turn line: RACK POSITION WORD SCORE TOTAL (or RACK -EXCHANGED SCORE TOTAL, RACK - SCORE TOTAL);
            # end-of-game lines (the rack in parentheses) carry no hidden rack
            if toks and not toks[0].startswith("(") and len(toks) >= 4:
                line = f"{head}: {' '.join(toks[1:])}"
        out.append(line)
    return "\n".join(out) + "\n"


def clock_of(cgp: str) -> float | None:
    """Seconds left on the mover's clock, from the CGP's tmr op (None: untimed)."""
    for op in cgp.split(";"):
        parts = op.split()
        if len(parts) == 2 and parts[0] == "tmr":
            mine, _, _ = parts[1].partition("/")
            try:
                return int(mine) / 1000.0
            except ValueError:
                return None
    return None


AnyBot = Bot | CommandBot


@dataclass
class MoveRecord:
    bot: int                   # 0 or 1 (bot 1, bot 2)
    notation: str
    bag: int                   # tiles in the bag before it
    phase: str                 # how the bot chose ("" from an adapter)
    seconds: float
    spread_after: int          # bot 1's spread after it


@dataclass
class GameResult:
    index: int
    first: int                 # the bot (0 or 1) that moved first
    scores: tuple[int, int]    # by bot
    turns: int
    end_reason: str
    gcg: str
    moves: list[str] = field(default_factory=list)
    records: list[MoveRecord] = field(default_factory=list)
    time_penalties: tuple[int, int] = (0, 0)   # by bot
    overtime: tuple[float, float] = (0.0, 0.0)  # seconds over the clock, by bot

    @property
    def spread(self) -> int:   # bot 1's
        return self.scores[0] - self.scores[1]

    @property
    def decided_in(self) -> str:
        """The phase of the game the result was decided in: that of the move after which the winner was never
        again behind or level ("early" when they never were)."""
        if self.spread == 0:
            return "drawn"
        sign = 1 if self.spread > 0 else -1
        decided = 0
        for i, rec in enumerate(self.records):
            if sign * rec.spread_after <= 0:
                decided = i + 1
        if decided >= len(self.records):
            decided = len(self.records) - 1
        return game_phase(self.records[decided].bag) if self.records else "early"


def play_game(referee: Client, bots: tuple[AnyBot, AnyBot], index: int, seed: int, lexicon: str = "",
              clock: float = 0.0, positions: list[str] | None = None) -> GameResult:
    """One game of pair index // 2 (its tiles from the pair's seed): bot 1 moves first in even games, bot 2 in
    odd ones. With `clock`, each player has that many seconds on the referee's clock. With `positions` (CGPs
    with both racks), pair k starts at position k modulo their number, the player on turn in seat 0."""
    first = index % 2
    seats = (bots[first], bots[1 - first])           # seat 0 moves first
    cgp = positions[(index // 2) % len(positions)] if positions else ""
    state = referee.create_game(lexicon=lexicon, seed=derive_seed(seed, index // 2), cgp=cgp,
                                players=[f"{seats[0].name}", f"{seats[1].name}"], clock_seconds=clock)
    moves: list[str] = []
    records: list[MoveRecord] = []
    try:
        while not state.game_over:
            if len(moves) >= MAX_TURNS:
                raise MacondoError(grpc.StatusCode.ABORTED, f"game {index} did not end within {MAX_TURNS} turns")
            seat = state.on_turn
            bot = seats[seat]
            bag = state.bag_count
            clock_left = list(state.clock_remaining)[seat] if state.clock_remaining else None
            played = bot.choose(state.cgp, derive_seed(seed, index // 2, len(moves) + 1), bag,
                                gcg=state.gcg if not cgp else "", on_turn=seat, clock=clock_left)
            state = referee.play_move(state.game_id, played.notation)
            moves.append(played.notation)
            now = list(state.scores)
            spread = now[0] - now[1] if first == 0 else now[1] - now[0]
            records.append(MoveRecord(seat if first == 0 else 1 - seat, played.notation, bag, played.phase,
                                      played.seconds, spread))
        by_seat = tuple(state.scores)
        scores = (by_seat[0], by_seat[1]) if first == 0 else (by_seat[1], by_seat[0])
        pen = (state.time_penalties[0], state.time_penalties[1]) if state.time_penalties else (0, 0)
        left = list(state.clock_remaining) or [0.0, 0.0]
        over = (max(0.0, -left[0]), max(0.0, -left[1]))
        if first == 1:
            pen, over = (pen[1], pen[0]), (over[1], over[0])
        return GameResult(index, first, scores, len(moves), state.end_reason, state.gcg, moves, records, pen, over)
    finally:
        try:
            referee.delete_game(state.game_id)
        except MacondoError:
            pass


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
    spread_ci95: float = 0.0
    move_seconds: tuple[dict[str, float], dict[str, float]] = ({}, {})   # per bot: median, p95, max, mean
    overtime_games: tuple[int, int] = (0, 0)     # games a bot went over its clock
    lost_on_time: tuple[int, int] = (0, 0)       # games a bot lost that it won on the board
    by_phase: dict[str, dict[str, float]] = field(default_factory=dict)   # decided in: games, bot 1 win rate
    bot_phases: tuple[dict[str, int], dict[str, int]] = ({}, {})   # how each bot chose its moves
    adapter_restarts: tuple[int, int] = (0, 0)   # restarts of a failing adapter bot (CommandBot.restarts)

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "wins": list(self.wins), "draws": self.draws,
                "win_rate": round(self.win_rate, 6), "win_rate_ci95": round(self.win_rate_ci95, 6),
                "mean_spread": round(self.mean_spread, 3), "spread_ci95": round(self.spread_ci95, 3),
                "mean_score": [round(s, 3) for s in self.mean_score],
                "seconds": round(self.seconds, 3), "strategies": list(self.strategies),
                "move_seconds": [dict(m) for m in self.move_seconds],
                "overtime_games": list(self.overtime_games), "lost_on_time": list(self.lost_on_time),
                "by_phase": self.by_phase, "bot_phases": [dict(b) for b in self.bot_phases],
                "adapter_restarts": list(self.adapter_restarts)}

    def text(self) -> str:
        s1, s2 = self.strategies
        lines = [f"{self.games} games: {s1} won {self.wins[0]}, {s2} won {self.wins[1]}, {self.draws} drawn",
                 f"{s1} win rate {100 * self.win_rate:.1f}% ± {100 * self.win_rate_ci95:.1f} (95%), "
                 f"mean spread {self.mean_spread:+.1f} ± {self.spread_ci95:.1f}, mean scores "
                 f"{self.mean_score[0]:.1f} - {self.mean_score[1]:.1f}"]
        for k, name in enumerate(self.strategies):
            m = self.move_seconds[k]
            if m:
                how = ", ".join(f"{ph} {n}" for ph, n in sorted(self.bot_phases[k].items()))
                lines.append(f"{name}: seconds a move median {m['median']:.2f}, 95th percentile {m['p95']:.2f}, "
                             f"max {m['max']:.2f}; over the clock in {self.overtime_games[k]} games, lost on "
                             f"time {self.lost_on_time[k]}" + (f"; moves by {how}" if how else ""))
        if self.by_phase:
            parts = [f"{ph} {int(v['games'])} games, {s1} {100 * v['win_rate']:.1f}%"
                     for ph, v in self.by_phase.items()]
            lines.append("decided in: " + "; ".join(parts))
        if any(self.adapter_restarts):
            lines.append("adapter restarts: " + ", ".join(f"{name} {n}" for name, n in
                                                          zip(self.strategies, self.adapter_restarts, strict=True)))
        lines.append(f"{self.seconds:.1f} s ({self.games / self.seconds if self.seconds else 0:.2f} games/s)")
        return "\n".join(lines)


def result_to_json(r: GameResult) -> dict[str, Any]:
    """One game as a line of the arena's log: its result and each move's bot, bag, phase, seconds and spread."""
    return {"game": r.index + 1, "first": r.first + 1, "scores": list(r.scores), "turns": r.turns,
            "end_reason": r.end_reason, "decided_in": r.decided_in, "time_penalties": list(r.time_penalties),
            "overtime": [round(x, 3) for x in r.overtime],
            "moves": [[m.bot + 1, m.notation, m.bag, m.phase, round(m.seconds, 4), m.spread_after] for m in r.records]}


def result_from_json(doc: dict[str, Any]) -> GameResult:
    """A game read back from the arena's log (result_to_json)."""
    records = [MoveRecord(int(b) - 1, str(n), int(bag), str(ph), float(sec), int(sp))
               for b, n, bag, ph, sec, sp in doc["moves"]]
    pen, over = doc.get("time_penalties", [0, 0]), doc.get("overtime", [0.0, 0.0])
    return GameResult(int(doc["game"]) - 1, int(doc["first"]) - 1, (int(doc["scores"][0]), int(doc["scores"][1])),
                      int(doc["turns"]), str(doc["end_reason"]), "", [r.notation for r in records], records,
                      (int(pen[0]), int(pen[1])), (float(over[0]), float(over[1])))


def win_interval(wins: float, n: int) -> tuple[float, float]:
    """The rate and the half-width of its 95% interval (normal approximation; draws count half)."""
    if not n:
        return 0.0, 0.0
    rate = wins / n
    return rate, 1.96 * math.sqrt(rate * (1 - rate) / n)


def summarize(results: list[GameResult], seconds: float, strategies: tuple[str, str]) -> Summary:
    n = len(results)
    wins1 = sum(r.spread > 0 for r in results)
    wins2 = sum(r.spread < 0 for r in results)
    draws = n - wins1 - wins2
    rate, ci = win_interval(wins1 + draws / 2, n)
    spreads = [r.spread for r in results]
    sd = statistics.stdev(spreads) if n > 1 else 0.0
    times: tuple[list[float], list[float]] = ([], [])
    how: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for r in results:
        for m in r.records:
            times[m.bot].append(m.seconds)
            if m.phase:
                how[m.bot][m.phase] = how[m.bot].get(m.phase, 0) + 1
    by_phase: dict[str, dict[str, float]] = {}
    for ph in (*GAME_PHASES, "drawn"):
        group = [r for r in results if r.decided_in == ph]
        if group:
            w = sum(r.spread > 0 for r in group) + sum(r.spread == 0 for r in group) / 2
            gr, gci = win_interval(w, len(group))
            by_phase[ph] = {"games": len(group), "win_rate": round(gr, 6), "win_rate_ci95": round(gci, 6)}
    over = tuple(sum(r.overtime[k] > 0 for r in results) for k in range(2))
    lost = (sum(r.spread < 0 and r.spread + r.time_penalties[0] - r.time_penalties[1] > 0 for r in results),
            sum(r.spread > 0 and r.spread + r.time_penalties[0] - r.time_penalties[1] < 0 for r in results))
    return Summary(n, (wins1, wins2), draws, rate, ci, sum(spreads) / n if n else 0.0,
                   (sum(r.scores[0] for r in results) / n if n else 0.0,
                    sum(r.scores[1] for r in results) / n if n else 0.0), seconds, strategies,
                   spread_ci95=1.96 * sd / math.sqrt(n) if n > 1 else 0.0,
                   move_seconds=(_time_stats(times[0]), _time_stats(times[1])),
                   overtime_games=(over[0], over[1]), lost_on_time=lost, by_phase=by_phase, bot_phases=how)


def _time_stats(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {}
    s = sorted(xs)
    p95 = s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]
    return {"median": round(statistics.median(s), 4), "p95": round(p95, 4), "max": round(s[-1], 4),
            "mean": round(sum(s) / len(s), 4), "moves": len(s)}


class DaskCluster(Protocol):
    """What `cluster` arguments are: an object whose `client` is a dask.distributed Client (e.g.
    macondo_server.runtime.cluster.Cluster)."""

    @property
    def client(self) -> DaskClient: ...


def run_bots(referee: Client, bots: tuple[AnyBot, AnyBot], games: int, seed: int, lexicon: str = "",
             gcg_dir: str | None = None, on_game: Callable[[GameResult], None] | None = None,
             stop: Callable[[], bool] | None = None,
             cluster: DaskCluster | None = None, clock: float = 0.0, parallel: int = 1,
             first_game: int = 0, positions: list[str] | None = None) -> tuple[list[GameResult], Summary]:
    """Play games first_game .. first_game + games - 1 (pair g // 2 shares its tiles; bot 1 first when g is
    even), `parallel` at a time. With `cluster` (an object whose `client` is a dask.distributed Client, e.g.
    macondo_server.runtime.cluster.Cluster), the games are played by its workers in batches, each worker
    talking to the same servers by address: the same games, the results in game order; on_game is called as
    games come back (in any order)."""
    out = Path(gcg_dir) if gcg_dir else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    results: list[GameResult] = []
    start = time.monotonic()
    lock = threading.Lock()

    def done(res: GameResult) -> None:
        with lock:
            results.append(res)
            if out is not None and res.gcg:
                (out / f"game-{res.index + 1:04d}.gcg").write_text(res.gcg, encoding="utf-8")
            if on_game is not None:
                on_game(res)

    indices = list(range(first_game, first_game + games))
    if cluster is not None:
        if positions:
            raise ValueError("games from given positions are played in this process, not on a cluster")
        seats = [spec_of(b) for b in bots]
        _run_on_cluster(cluster, referee.address, (seats[0], seats[1]), indices, seed, lexicon, clock, done, stop)
    elif parallel > 1:
        from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

        pending = iter(indices)
        halt = threading.Event()     # a failure or an interrupt: no new game starts

        def worker() -> None:
            while not halt.is_set() and not (stop is not None and stop()):
                with lock:
                    g = next(pending, None)
                if g is None:
                    return
                done(play_game(referee, bots, g, seed, lexicon, clock, positions))

        pool = ThreadPoolExecutor(parallel)
        try:
            futures = [pool.submit(worker) for _ in range(parallel)]
            finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for f in finished:
                f.result()      # the first failure, raised here
        finally:
            halt.set()          # the games in flight end; an interrupt returns as soon as they have
            pool.shutdown(wait=True)
    else:
        for g in indices:
            if stop is not None and stop():
                break
            done(play_game(referee, bots, g, seed, lexicon, clock, positions))
    results.sort(key=lambda r: r.index)
    return results, summarize(results, time.monotonic() - start, (bots[0].label, bots[1].label))


# ---------------------------------------------------------------------------------------- on a Dask cluster

NO_WORKERS_SECONDS = 60.0      # games in flight and no worker for this long: an error, never a wait without end


class ClusterUnavailable(MacondoError):
    """The cluster cannot play the games (dask missing, no workers, a batch failing on every worker)."""

    def __init__(self, message: str) -> None:
        super().__init__(grpc.StatusCode.UNAVAILABLE, message)


@dataclass(frozen=True)
class BotSpec:
    """A bot as a worker process rebuilds it: its name, and its server address and strategy or its adapter
    command."""
    name: str
    address: str
    strategy: str
    move_time: float = 0.0
    command: str = ""


def spec_of(bot: AnyBot) -> BotSpec:
    if isinstance(bot, CommandBot):
        return BotSpec(bot.name, "", "", bot.move_time, bot.command)
    return BotSpec(bot.name, bot.client.address, bot.strategy, bot.move_time)


_W_ADAPTERS: dict[tuple[str, str, float], CommandBot] = {}


def _worker_bot(spec: BotSpec) -> AnyBot:
    """The bot a spec describes, in this worker process (adapters and clients kept between tasks)."""
    if spec.command:
        key = (spec.name, spec.command, spec.move_time)
        bot = _W_ADAPTERS.get(key)
        if bot is None:
            bot = _W_ADAPTERS.setdefault(key, CommandBot(spec.name, spec.command, spec.move_time))
        return bot
    return Bot(spec.name, _worker_client(spec.address), spec.strategy, spec.move_time)


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
              run: str, clock: float = 0.0) -> BotsBatch:
    """Runs on a cluster worker: games `indices` exactly as play_game plays them in-process. Returns
    {"games": [GameResult, ...], "error": None or (status code name, message)} (a server's refusal comes back
    as data: the client reports it as it would in-process)."""
    out: BotsBatch = {"games": [], "error": None}
    try:
        bots = (_worker_bot(seats[0]), _worker_bot(seats[1]))
        ref = _worker_client(referee)
        for g in indices:
            out["games"].append(play_game(ref, bots, g, seed, lexicon, clock))
    except MacondoError as exc:
        out["error"] = (exc.code.name, exc.message)
    return out


def _run_on_cluster(cluster: DaskCluster, referee: str, seats: tuple[BotSpec, BotSpec], indices: list[int],
                    seed: int, lexicon: str, clock: float, done: Callable[[GameResult], None],
                    stop: Callable[[], bool] | None) -> None:
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
    games = len(indices)
    size = max(1, min(8, games // (4 * slots)))
    batches = [indices[i:i + size] for i in range(0, games, size)]
    batches.reverse()
    inflight: dict[Future[BotsBatch], list[int]] = {}
    last_worker = time.monotonic()
    checked = 0.0
    try:
        while True:
            while batches and len(inflight) < slots and not (stop is not None and stop()):
                b = batches.pop()
                fut = client.submit(bots_task, referee, seats, seed, lexicon, b, run, clock, pure=False,
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


@dataclass
class ArenaOptions:
    """What `macondo bots` plays: games, seed, lexicon, each player's clock and fixed time a move, games at
    once, the first game's number (a run split over processes), and the adapter commands (replacing a server
    bot)."""
    games: int = 20
    seed: int = 1
    lexicon: str = ""
    clock: float = 0.0
    move_time: float = 0.0
    parallel: int = 1
    first_game: int = 0
    commands: tuple[str, str] = ("", "")
    positions: list[str] = field(default_factory=list)   # CGPs (both racks) the game pairs start from
    log: str = ""              # a file each game is appended to as a JSON line as soon as it ends
    adapter_retries: int = 2   # restarts of a failing adapter a move (CommandBot.retries)


def main_bots(referee: Client, second: Client, strategy1: str, strategy2: str, opts: ArenaOptions,
              gcg_dir: str | None, as_json: bool, cluster: DaskCluster | None = None) -> int:
    names = ("bot1", "bot2")
    made: list[AnyBot] = []
    for k, (client, strategy) in enumerate(((referee, strategy1), (second, strategy2))):
        command = opts.commands[k]
        made.append(CommandBot(names[k], command, opts.move_time, retries=opts.adapter_retries) if command
                    else Bot(names[k], client, strategy, opts.move_time))
    bots = (made[0], made[1])
    labels = (bots[0].label, bots[1].label)
    live = not as_json and sys.stderr.isatty()
    interrupted = False
    results: list[GameResult] = []

    log = open(opts.log, "a", encoding="utf-8") if opts.log else None   # noqa: SIM115 (closed below)

    def logged(on_game: Callable[[GameResult], None]) -> Callable[[GameResult], None]:
        def call(r: GameResult) -> None:
            if log is not None:
                log.write(json.dumps(result_to_json(r)) + "\n")
                log.flush()
            on_game(r)
        return call

    def play(on_game: Callable[[GameResult], None]) -> Summary:
        return run_bots(referee, bots, opts.games, opts.seed, opts.lexicon, gcg_dir, logged(on_game), cluster=cluster,
                        clock=opts.clock, parallel=opts.parallel, first_game=opts.first_game,
                        positions=opts.positions or None)[1]

    try:
        if live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                          TimeElapsedColumn(), transient=True) as bar:
                task = bar.add_task("", total=opts.games)

                def on_game(r: GameResult) -> None:
                    results.append(r)
                    w = sum(x.spread > 0 for x in results)
                    bar.update(task, advance=1, description=f"bot1 {w}/{len(results)} wins")

                try:
                    summary = play(on_game)
                except KeyboardInterrupt:
                    interrupted = True
        else:
            try:
                summary = play(results.append)
            except KeyboardInterrupt:
                interrupted = True
    finally:
        if log is not None:
            log.close()
        for b in bots:
            if isinstance(b, CommandBot):
                b.close()
    results.sort(key=lambda r: r.index)   # (on a cluster they come back in any order)
    if interrupted:
        summary = summarize(results, 0.0, labels)
        print(f"interrupted after {len(results)} games", file=sys.stderr)
    restarts = tuple(b.restarts if isinstance(b, CommandBot) else 0 for b in bots)
    summary.adapter_restarts = (restarts[0], restarts[1])
    if as_json:
        doc = summary.to_json()
        doc["results"] = [{k: v for k, v in result_to_json(r).items() if k != "moves"} for r in results]
        print(json.dumps(doc))
    else:
        for r in results:
            pen = f", time penalties {r.time_penalties[0]}/{r.time_penalties[1]}" if any(r.time_penalties) else ""
            print(f"game {r.index + 1:>3}: bot{r.first + 1} first, {r.scores[0]:>3} - {r.scores[1]:<3} "
                  f"({r.turns} turns, {r.end_reason}, decided in the {r.decided_in}{pen})")
        print(summary.text())
    return 130 if interrupted else 0
