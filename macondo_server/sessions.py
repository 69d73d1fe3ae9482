"""Game sessions for bots over the API: create a game, play moves (validated), let the engine move."""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

from engine_cy.game import Game

from .engine import Engine
from .formats import FormatError, Move, new_board, parse_cgp, parse_gcg, parse_move
from .gamestate import (
    check_legal,
    game_from_position,
    play_move,
    position_from_game,
    replay_gcg,
    set_tile_order,
)
from .lexicon import Lexicon

MAX_SESSIONS = 1000
MAX_TEXT_CHARS = 4096


class UnknownGameError(KeyError):
    pass


class TooManyGamesError(RuntimeError):
    pass


@dataclass
class Session:
    game_id: str
    game: Game
    lexicon: Lexicon
    players: list[str]
    from_start: bool = True          # started from an empty board, so its history is the whole game
    lock: threading.Lock = field(default_factory=threading.Lock)


class SessionStore:
    def __init__(self, engine: Engine, max_sessions: int = MAX_SESSIONS) -> None:
        self.engine = engine
        self.max_sessions = max_sessions
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self, lexicon: str | None, seed: int, players: list[str], bingo_bonus: int,
               cgp: str = "", gcg: str = "", turn: int | None = None) -> Session:
        """A new game from an empty board, or from a CGP position, or from a GCG record replayed to `turn`
        events (all of them by default)."""
        if cgp and gcg:
            raise ValueError("give a CGP position or a GCG record, not both")
        if turn is not None and not gcg:
            raise ValueError("turn applies to a GCG record only")
        if players and len(players) != 2:
            raise ValueError(f"a game has two players, got {len(players)}")
        names = list(players) if players else ["player1", "player2"]
        if names[0] == names[1] or not all(n.strip() for n in names):
            raise ValueError("player nicknames must be two different non-empty names")
        if not 0 <= bingo_bonus <= 1000:
            raise ValueError(f"bingo bonus must be 0 to 1000, got {bingo_bonus}")
        seed &= 0xFFFFFFFFFFFFFFFF
        if cgp:
            if len(cgp) > MAX_TEXT_CHARS:
                raise ValueError(f"the CGP is longer than {MAX_TEXT_CHARS} characters")
            pos = parse_cgp(cgp)
            lex = self.engine.lexicon_for(pos, lexicon or None)
            if bingo_bonus:
                pos.ops["bb"] = str(bingo_bonus)
            game = game_from_position(pos, lex, seed)
            from_start = False
        elif gcg:
            if len(gcg) > MAX_TEXT_CHARS * 64:
                raise ValueError(f"the GCG is longer than {MAX_TEXT_CHARS * 64} characters")
            record = parse_gcg(gcg)
            lex = self.engine.lexicon(lexicon or record.pragma("lexicon") or None)
            if turn is not None and not 0 <= turn <= len(record.events):
                raise ValueError(f"turn {turn} is out of range: the record has {len(record.events)} events")
            game = replay_gcg(record, lex, turn, seed).game
            if not players:
                names = [p[0] for p in record.players]
            from_start = False
        else:
            lex = self.engine.lexicon(lexicon or None)
            game = Game(lex.kwg, lex.ld, new_board(), seed, bingo_bonus or 50, 6)
            game.fill_rack(0)
            game.fill_rack(1)
            from_start = True
        session = Session(uuid.uuid4().hex[:12], game, lex, names, from_start)
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise TooManyGamesError(f"{len(self._sessions)} games are open; the limit is {self.max_sessions}")
            self._sessions[session.game_id] = session
        return session

    def get(self, game_id: str) -> Session:
        with self._lock:
            session = self._sessions.get(game_id)
        if session is None:
            raise UnknownGameError(f"unknown game {game_id!r}")
        return session

    def delete(self, game_id: str) -> bool:
        with self._lock:
            return self._sessions.pop(game_id, None) is not None

    def play(self, session: Session, text: str, tile_order: str = "") -> None:
        game, ld = session.game, session.lexicon.ld
        with session.lock:
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

    def engine_move(self, session: Session, strategy: str) -> Move:
        """Let the engine choose and play: 'static' (best static equity), or 'sim' with options such as
        'sim:iterations=200,plies=2,num_plays=10,threads=1' (an exact endgame search once the bag is empty)."""
        kind, params = parse_strategy(strategy)
        game, lex = session.game, session.lexicon
        with session.lock:
            if game.game_over:
                raise FormatError("the game is over")
            move = self._choose(game, lex, kind, params) if kind == "sim" else None
            if move is None:
                p = game.on_turn
                gen = self.engine.movegen(lex, lex.klv)
                opp = game.rack(1 - p) if game.bag_size == 0 else None
                gen.generate(game.board, game.rack(p), game.bag_size, opp, mode="best")
                kind_, row, col, vertical, tiles = gen.moves(1)[0][:5]
                move = Move(kind_, row, col, vertical, tuple(tiles))
            play_move(game, move)
            return move

    def _choose(self, game: Game, lex: Lexicon, kind: str, params: dict[str, float]) -> Move | None:
        from .endgame import EndgameJob, EndgameOptions
        from .sim import SimJob, SimOptions

        pos = position_from_game(game, {"lex": lex.name}, show_opponent=False)
        threads = int(params.get("threads", 1))
        if game.bag_size == 0:
            # both racks are known once the bag is empty: solve the endgame
            full = position_from_game(game, {"lex": lex.name}, show_opponent=True)
            eg = EndgameJob(self.engine, full, EndgameOptions(plies=int(params.get("endgame_plies", 4)),
                                                              max_time=params.get("endgame_time", 5.0),
                                                              threads=threads, tt_megabytes=64))
            best = eg.run().best_move
            return best.move if best else None
        opts = SimOptions(plies=int(params.get("plies", 2)), num_plays=int(params.get("num_plays", 10)),
                          iterations=int(params.get("iterations", 200)), threads=threads,
                          seed=game.hash_key & 0x7FFFFFFFFFFFFFFF, max_time=params.get("max_time", 0.0))
        res = SimJob(self.engine, pos, opts).run()
        return res.plays[0].gen.move if res.plays else None


SIM_KEYS = {"iterations", "plies", "num_plays", "threads", "max_time", "endgame_plies", "endgame_time"}


def parse_strategy(text: str) -> tuple[str, dict[str, float]]:
    """'static', 'sim' or 'sim:key=value,...' -> (kind, options)."""
    text = (text or "static").strip()
    kind, _, rest = text.partition(":")
    if kind not in ("static", "sim"):
        raise ValueError(f"unknown strategy {kind!r} (available: static, sim[:iterations=N,plies=P,...])")
    params: dict[str, float] = {}
    if rest:
        if kind == "static":
            raise ValueError("the static strategy takes no options")
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or key not in SIM_KEYS:
                raise ValueError(f"strategy option {item!r}: expected one of {', '.join(sorted(SIM_KEYS))} "
                                 "as key=value")
            try:
                params[key] = float(value)
            except ValueError:
                raise ValueError(f"strategy option {item!r}: {value!r} is not a number") from None
    return kind, params
