"""Game sessions for bots over the API: create a game, play moves (validated), let the engine move."""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from engine_cy.game import Game

from .engine import Engine
from .formats import MAX_NAME_CHARS, FormatError, Move, excerpt, new_board, parse_cgp, parse_gcg, parse_move
from .gamestate import (
    check_legal,
    game_from_position,
    lexicon_for_record,
    play_move,
    position_from_game,
    replay_gcg,
    set_tile_order,
)
from .lexicon import Lexicon
from .limits import Limits, ResourceLimitError


class UnknownGameError(KeyError):
    pass


class TooManyGamesError(ResourceLimitError):
    pass


class GameBusyError(RuntimeError):
    """Another request is changing this game right now."""


@dataclass
class Session:
    game_id: str
    game: Game
    lexicon: Lexicon
    players: list[str]
    from_start: bool = True          # started from an empty board, so its history is the whole game
    client: str = ""                 # the connection that created it (sessions are capped per client)
    warnings: list[str] = field(default_factory=list)   # what loading it left uncertain (an incomplete GCG)
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Hold the game for one change; a second request meanwhile is refused rather than queued."""
        if not self.lock.acquire(timeout=0.5):
            raise GameBusyError(f"game {self.game_id} is busy with another request")
        try:
            yield
        finally:
            self.last_used = time.monotonic()
            self.lock.release()


class SessionStore:
    """Open games, at most `limits.max_sessions` in all and `limits.max_sessions_per_client` per client;
    a game not used for `limits.session_idle_seconds` is closed."""

    def __init__(self, engine: Engine, limits: Limits | None = None) -> None:
        self.engine = engine
        self.limits = limits or Limits.load(environ={})
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self, lexicon: str | None, seed: int, players: list[str], bingo_bonus: int,
               cgp: str = "", gcg: str = "", turn: int | None = None, client: str = "") -> Session:
        """A new game from an empty board, or from a CGP position, or from a GCG record replayed to `turn`
        events (all of them by default)."""
        if cgp and gcg:
            raise ValueError("give a CGP position or a GCG record, not both")
        if turn is not None and not gcg:
            raise ValueError("turn applies to a GCG record only")
        if players and len(players) != 2:
            raise ValueError(f"a game has two players, got {len(players)}")
        names = list(players) if players else ["player1", "player2"]
        check_names(names)
        if not 0 <= bingo_bonus <= 1000:
            raise ValueError(f"bingo bonus must be 0 to 1000, got {bingo_bonus}")
        seed &= 0xFFFFFFFFFFFFFFFF
        self._reserve(client)
        warnings: list[str] = []
        # text lengths were bounded by the service's check_request (and the parsers' own caps)
        if cgp:
            pos = parse_cgp(cgp)
            lex = self.engine.lexicon_for(pos, lexicon or None)
            if bingo_bonus:
                pos.ops["bb"] = str(bingo_bonus)
            game = game_from_position(pos, lex, seed)
            from_start = False
        elif gcg:
            record = parse_gcg(gcg)
            name, warnings = lexicon_for_record(record, self.engine.registry.available(),
                                                self.engine.settings.default_lexicon, lexicon or None)
            lex = self.engine.lexicon(name)
            if turn is not None and not 0 <= turn <= len(record.events):
                raise ValueError(f"turn {turn} is out of range: the record has {len(record.events)} events")
            replay = replay_gcg(record, lex, turn, seed)
            game = replay.game
            warnings += replay.warnings
            if not players:
                names = [p[0] for p in record.players]
                check_names(names)
            from_start = False
        else:
            lex = self.engine.lexicon(lexicon or None)
            game = Game(lex.kwg, lex.ld, new_board(), seed, bingo_bonus or 50, 6)
            game.fill_rack(0)
            game.fill_rack(1)
            from_start = True
        session = Session(secrets.token_hex(12), game, lex, names, from_start, client, warnings=warnings)
        with self._lock:
            self._check_room(client)
            self._sessions[session.game_id] = session
        return session

    def _check_room(self, client: str) -> None:
        lim = self.limits
        if len(self._sessions) >= lim.max_sessions:
            raise TooManyGamesError(f"{len(self._sessions)} games are open; the limit max_sessions is "
                                    f"{lim.max_sessions}", "max_sessions")
        mine = sum(1 for s in self._sessions.values() if s.client == client)
        if mine >= lim.max_sessions_per_client:
            raise TooManyGamesError(f"this client has {mine} games open; the limit max_sessions_per_client is "
                                    f"{lim.max_sessions_per_client} (delete games or let them expire after "
                                    f"{lim.session_idle_seconds} s idle)", "max_sessions_per_client")

    def _reserve(self, client: str) -> None:
        """Close idle games, then refuse early (before any parsing work) when there is no room."""
        self.expire()
        with self._lock:
            self._check_room(client)

    def expire(self, now: float | None = None) -> int:
        """Close the games idle for longer than the limit; returns how many."""
        now = time.monotonic() if now is None else now
        cutoff = now - self.limits.session_idle_seconds
        with self._lock:
            idle = [gid for gid, s in self._sessions.items() if s.last_used < cutoff and not s.lock.locked()]
            for gid in idle:
                del self._sessions[gid]
        return len(idle)

    def count(self) -> int:
        with self._lock:
            return len(self._sessions)

    def get(self, game_id: str) -> Session:
        if len(game_id) > 64:
            raise UnknownGameError("unknown game (the id is longer than 64 characters)")
        now = time.monotonic()
        with self._lock:
            session = self._sessions.get(game_id)
            if session is not None:
                if session.last_used < now - self.limits.session_idle_seconds and not session.lock.locked():
                    del self._sessions[game_id]    # idle past the limit: closed (the sweeper closes the rest)
                    session = None
                else:
                    session.last_used = now
        if session is None:
            raise UnknownGameError(f"unknown game {game_id!r} (ended, deleted or expired)")
        return session

    def delete(self, game_id: str) -> bool:
        with self._lock:
            return self._sessions.pop(game_id, None) is not None

    def play(self, session: Session, text: str, tile_order: str = "") -> None:
        game, ld = session.game, session.lexicon.ld
        with session.busy():
            if game.game_over:
                raise FormatError("the game is over")
            move = parse_move(text, game.board, ld)
            check_legal(game, session.lexicon, move, text)
            if tile_order:
                set_tile_order(game, position_from_game(game, show_opponent=False), tile_order)
            try:
                play_move(game, move)
            finally:
                game.set_random_order()

    def engine_move(self, session: Session, strategy: Strategy, stop: threading.Event | None = None,
                    threads: int = 1) -> Move:
        """Let the engine choose and play: 'static' (best static equity), or 'sim' (simulation while tiles
        are in the bag, an exact endgame search once it is empty). `stop` ends a simulation or a search
        early; the best move found so far is played."""
        game, lex = session.game, session.lexicon
        with session.busy():
            if game.game_over:
                raise FormatError("the game is over")
            move = self._choose(game, lex, strategy, stop, threads) if strategy.kind == "sim" else None
            if move is None:
                p = game.on_turn
                gen = self.engine.movegen(lex, lex.klv)
                opp = game.rack(1 - p) if game.bag_size == 0 else None
                gen.generate(game.board, game.rack(p), game.bag_size, opp, mode="best")
                kind_, row, col, vertical, tiles = gen.moves(1)[0][:5]
                move = Move(kind_, row, col, vertical, tuple(tiles))
            play_move(game, move)
            return move

    def _choose(self, game: Game, lex: Lexicon, st: Strategy, stop: threading.Event | None,
                threads: int) -> Move | None:
        from .endgame import EndgameJob, EndgameOptions
        from .sim import SimJob, SimOptions

        pos = position_from_game(game, {"lex": lex.name}, show_opponent=False)
        if game.bag_size == 0:
            # both racks are known once the bag is empty: solve the endgame
            full = position_from_game(game, {"lex": lex.name}, show_opponent=True)
            eg = EndgameJob(self.engine, full, EndgameOptions(plies=st.endgame_plies, max_time=st.endgame_time,
                                                              threads=threads, tt_megabytes=ENGINE_MOVE_TT_MB))
            best = eg.run(stop=stop).best_move
            return best.move if best else None
        opts = SimOptions(plies=st.plies, num_plays=st.num_plays, iterations=st.iterations, threads=threads,
                          seed=game.hash_key & 0x7FFFFFFFFFFFFFFF, max_time=st.max_time)
        job = SimJob(self.engine, pos, opts, stop=stop)
        if stop is not None and stop.is_set():
            return None
        res = job.run(stop=stop)
        return res.plays[0].gen.move if res.plays else None


ENGINE_MOVE_TT_MB = 64


def check_names(names: list[str]) -> None:
    if len(names) != 2 or names[0] == names[1] or not all(n.strip() for n in names):
        raise ValueError("player nicknames must be two different non-empty names")
    for n in names:
        if len(n) > MAX_NAME_CHARS or not n.isprintable():
            raise ValueError(f"player nickname {excerpt(n)} must be printable and at most {MAX_NAME_CHARS} "
                             "characters")


@dataclass(frozen=True)
class Strategy:
    """An engine-move strategy: 'static', or 'sim' with its simulation and endgame settings."""
    kind: str = "static"
    iterations: int = 200
    plies: int = 2
    num_plays: int = 10
    threads: int = 1
    max_time: float = 0.0
    endgame_plies: int = 4
    endgame_time: float = 5.0

    @property
    def needs_job(self) -> bool:
        return self.kind == "sim"


# key -> (kind, lowest, highest)
SIM_KEYS: dict[str, tuple[type, float, float]] = {
    "iterations": (int, 1, 2**31 - 1), "plies": (int, 0, 50), "num_plays": (int, 1, 10_000),
    "threads": (int, 1, 4096), "max_time": (float, 0, 86_400), "endgame_plies": (int, 1, 25),
    "endgame_time": (float, 0, 86_400),
}
_INT_TEXT = re.compile(r"[0-9]{1,12}")
_FLOAT_TEXT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?")


def parse_strategy(text: str) -> Strategy:
    """'static', 'sim' or 'sim:key=value,...' -> Strategy; numbers in ASCII digits within their ranges."""
    text = (text or "static").strip()
    if len(text) > 256:
        raise ValueError(f"strategy {excerpt(text)} is longer than 256 characters")
    kind, _, rest = text.partition(":")
    if kind not in ("static", "sim"):
        raise ValueError(f"unknown strategy {excerpt(kind)} (available: static, sim[:iterations=N,plies=P,...])")
    params: dict[str, int | float] = {}
    if rest:
        if kind == "static":
            raise ValueError("the static strategy takes no options")
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or key not in SIM_KEYS:
                raise ValueError(f"strategy option {excerpt(item)}: expected one of {', '.join(sorted(SIM_KEYS))} "
                                 "as key=value")
            typ, lo, hi = SIM_KEYS[key]
            pattern = _INT_TEXT if typ is int else _FLOAT_TEXT
            if not pattern.fullmatch(value):
                what = "a whole number" if typ is int else "a number"
                raise ValueError(f"strategy option {key}: {excerpt(value)} is not {what}")
            number = typ(value)
            if not lo <= number <= hi:
                raise ValueError(f"strategy option {key} must be {lo:g} to {hi:g}, got {number:g}")
            params[key] = number
    return Strategy(kind, **params)  # type: ignore[arg-type]
