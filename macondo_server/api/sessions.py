"""Game sessions for bots over the API: create a game, play moves (validated), let the engine move."""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine_cy.game import Game, GameError
from macondo_server.analysis.player import Choice, Strategy, Turn, choose
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon, record_pragmas
from macondo_server.engine.replay import (
    ReplayResult,
    check_legal,
    game_from_position,
    invalid_words,
    lexicon_for_record,
    play_move,
    position_from_game,
    record_setup,
    replay_gcg,
    set_tile_order,
)
from macondo_server.model.cgp import parse_cgp
from macondo_server.model.coords import format_coord
from macondo_server.model.gcg import GcgEvent, GcgGame, parse_gcg, write_gcg
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position, parse_clock
from macondo_server.model.text import MAX_GCG_CHARS, MAX_GCG_EVENTS, MAX_NAME_CHARS, FormatError, excerpt
from macondo_server.model.tiles import RACK_SIZE, rack_tiles
from macondo_server.runtime.limits import Limits, ResourceLimitError, current_principal

if TYPE_CHECKING:
    from macondo_server.analysis.infer import LastPlay

log = logging.getLogger("macondo.server")


class UnknownGameError(KeyError):
    pass


class TooManyGamesError(ResourceLimitError):
    pass


class GameBusyError(RuntimeError):
    """Another request is changing this game right now."""


CHALLENGE_RULES = ("void", "single", "double", "five", "ten")
CHALLENGE_BONUS = {"five": 5, "ten": 10}
MAX_NOTE_CHARS = 2000      # one event's note (a GCG line holds at most formats.MAX_GCG_LINE_CHARS)
DEFAULT_OVERTIME_PENALTY = 10   # points per minute or part of one over the clock (tournament rules)
MAX_CLOCK_SECONDS = 86_400.0
UNSUCCESSFUL_CHALLENGE = "#unsuccessful-challenge"   # the note under a turn lost to a failed double challenge
NAVIGATION = ("first", "last", "next", "previous", "turn")


@dataclass
class Session:
    """An open game: its events (`record`, a loaded GCG or the moves played) and a cursor. `game` is the
    engine's state after `cursor` events (it may hold tiles the player on turn cannot know: random fills
    of unknown racks); `view` is that position as the player on turn knows it, and only `view` reaches
    a client or an analysis."""
    game_id: str
    game: Game
    lexicon: Lexicon
    players: list[str]
    from_start: bool = True          # started from an empty board, so its history is the whole game
    client: str = ""                 # the principal that created it (sessions are capped per principal)
    warnings: list[str] = field(default_factory=list)   # what loading it left uncertain (an incomplete GCG)
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    record: GcgGame = field(default_factory=GcgGame)
    cursor: int = 0
    view: Position | None = None
    rule: str = "void"
    start: Game | None = None        # the starting game of a session begun at a CGP position
    seed: int = 0
    # the game clock (a timed game): seconds left by player index when the current turn began, the moment
    # it began, the overtime penalty (points per minute or part of one over) and the penalties settled
    clock: list[float] | None = None
    turn_began: float = field(default_factory=time.monotonic)
    overtime_penalty: int = DEFAULT_OVERTIME_PENALTY
    time_penalties: list[int] = field(default_factory=lambda: [0, 0])

    def clock_left(self, player: int) -> float | None:
        """Seconds left on `player`'s clock now (negative: overtime); None in an untimed game."""
        if self.clock is None:
            return None
        left = self.clock[player]
        if player == self.game.on_turn and not self.game.game_over:
            left -= time.monotonic() - self.turn_began
        return left

    @property
    def nicks(self) -> list[str]:
        return [p[0] for p in self.record.players]

    def player_of(self, ev: GcgEvent) -> int:
        return self.nicks.index(ev.nick)

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
    """Open games, at most `limits.max_sessions` in all and `limits.max_sessions_per_client` per client (a
    principal: a token's name, or an address; limits.current_principal); a game not used for
    `limits.session_idle_seconds` is closed.

    No client can keep another out: when the store is full, a client holding fewer games than its fair share
    (max_sessions divided by the clients holding games, itself included) takes the place of the least
    recently used game of the client(s) holding the most; a client at or above its share is refused."""

    def __init__(self, engine: Engine, limits: Limits | None = None) -> None:
        self.engine = engine
        self.limits = limits or Limits.load(environ={})
        self._sessions: dict[str, Session] = {}
        self._owned: dict[str, int] = {}             # principal -> games open
        self._evicted: OrderedDict[str, str] = OrderedDict()   # game id -> why it was closed (recent ones)
        self._lock = threading.Lock()

    def create(self, lexicon: str | None, seed: int, players: list[str], bingo_bonus: int,
               cgp: str = "", gcg: str = "", turn: int | None = None, client: str = "",
               challenge_rule: str = "", clock_seconds: float = 0.0,
               overtime_penalty: int | None = None) -> Session:
        """A new game from an empty board, or from a CGP position, or from a GCG record replayed to `turn`
        events (all of them by default; the later events stay, for navigation). `clock_seconds` (each
        player's), or a CGP's tmr op, makes it a timed game: a player's time runs on their turn, and time
        over costs `overtime_penalty` points per minute or part of one when the game ends."""
        if not 0 <= clock_seconds <= MAX_CLOCK_SECONDS or clock_seconds != clock_seconds:
            raise ValueError(f"clock must be 0 to {MAX_CLOCK_SECONDS:.0f} seconds, got {clock_seconds:g}")
        if overtime_penalty is not None and not 0 <= overtime_penalty <= 1000:
            raise ValueError(f"overtime penalty must be 0 to 1000 points a minute, got {overtime_penalty}")
        clock: list[float] | None = [clock_seconds, clock_seconds] if clock_seconds > 0 else None
        rule = check_rule(challenge_rule or "void")
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
        client = current_principal.get() or client
        self._reserve(client)
        warnings: list[str] = []
        start: Game | None = None
        # text lengths were bounded by the service's check_request (and the parsers' own caps)
        if cgp:
            pos = parse_cgp(cgp, catalog=self.engine.registry.catalog, lexicon=lexicon or None)
            lex = self.engine.lexicon_for(pos, lexicon or None)
            if bingo_bonus:
                pos.ops["bb"] = str(bingo_bonus)
            game = game_from_position(pos, lex, seed)
            if "tmr" in pos.ops:
                if clock is not None:
                    raise ValueError("give the clock as clock_seconds or as the CGP's tmr op, not both")
                on_turn_ms, other_ms = parse_clock(pos.ops["tmr"])
                clock = [on_turn_ms / 1000, other_ms / 1000]     # player 0 is the player on turn
            start = game.clone()
            record = GcgGame(players=[(n, n) for n in names],
                             pragmas=record_pragmas(lex, pos.board.layout_name))
            cursor = 0
            from_start = False
        elif gcg:
            record = parse_gcg(gcg)
            reg = self.engine.registry
            name, warnings = lexicon_for_record(record, reg.available(), self.engine.settings.default_lexicon,
                                                lexicon or None, reg.distribution_of)
            lex, layout = record_setup(record, self.engine.lexicon(name))
            if turn is not None and not 0 <= turn <= len(record.events):
                raise ValueError(f"turn {turn} is out of range: the record has {len(record.events)} events")
            warnings += replay_gcg(record, lex, None, seed).warnings   # the whole record must replay
            cursor = len(record.events) if turn is None else turn
            game = Game(lex.kwg, lex.ld, lex.catalog.board(layout), seed)   # replaced below, at the cursor
            if not players:
                names = [p[0] for p in record.players]
                check_names(names)
            from_start = False
        else:
            lex = self.engine.lexicon(lexicon or None)
            game = Game(lex.kwg, lex.ld, lex.new_board(), seed, bingo_bonus or 50, 6)
            game.fill_rack(0)
            game.fill_rack(1)
            start = game.clone()           # its bingo bonus and first racks, for replays
            record = GcgGame(players=[(n, n) for n in names], pragmas=record_pragmas(lex))
            cursor = 0
            from_start = True
        session = Session(secrets.token_hex(12), game, lex, names, from_start, client, warnings=warnings,
                          record=record, cursor=cursor, rule=rule, start=start, seed=seed, clock=clock,
                          overtime_penalty=DEFAULT_OVERTIME_PENALTY if overtime_penalty is None else overtime_penalty)
        if gcg:
            self._rebuild(session)
        else:
            _keep_racks(session)
            self._rebuild(session, keep_game=True)
        with self._lock:
            self._check_room(client)
            self._sessions[session.game_id] = session
            self._owned[client] = self._owned.get(client, 0) + 1
        return session

    def _check_room(self, client: str, make_room: bool = True) -> None:
        """With the lock held: refuse a client at its own cap; in a full store, make room for a client below
        its fair share (see the class; only a check without `make_room`) or refuse it."""
        lim = self.limits
        mine = self._owned.get(client, 0)
        if mine >= lim.max_sessions_per_client:
            raise TooManyGamesError(f"this client has {mine} games open; the limit max_sessions_per_client is "
                                    f"{lim.max_sessions_per_client} (delete games or let them expire after "
                                    f"{lim.session_idle_seconds} s idle)", "max_sessions_per_client")
        if len(self._sessions) < lim.max_sessions:
            return
        clients = len(self._owned) + (0 if mine else 1)
        share = lim.max_sessions // clients
        if mine < share and self._evict_for(client, make_room):
            return
        raise TooManyGamesError(f"{len(self._sessions)} games are open; the limit max_sessions is "
                                f"{lim.max_sessions}, and this client holds {mine}, its share of the store "
                                f"among {clients} clients is {share}", "max_sessions")

    def _evict_for(self, client: str, close: bool = True) -> bool:
        """With the lock held: close the least recently used game (not busy) of the clients holding the most
        games, for `client` (only look for one unless `close`); False when there is none to close."""
        most = max((n for owner, n in self._owned.items() if owner != client), default=0)
        if most == 0:
            return False
        heaviest = {owner for owner, n in self._owned.items() if n == most and owner != client}
        idle = [s for s in self._sessions.values() if s.client in heaviest and not s.lock.locked()]
        if not idle:
            return False
        if not close:
            return True
        oldest = min(idle, key=lambda s: s.last_used)
        victim = oldest.client
        self._drop(oldest.game_id)
        self._evicted[oldest.game_id] = (f"closed to make room for another client's game: the server held its "
                                         f"limit max_sessions ({self.limits.max_sessions}) and this game's client "
                                         f"held the most")
        while len(self._evicted) > self.limits.max_sessions:
            self._evicted.popitem(last=False)
        log.info("closed game %s of the client holding the most games (%d) to make room", oldest.game_id,
                 self._owned.get(victim, 0) + 1)
        return True

    def _drop(self, game_id: str) -> Session | None:
        """With the lock held: forget a game and its client's count."""
        session = self._sessions.pop(game_id, None)
        if session is not None:
            left = self._owned.get(session.client, 0) - 1
            if left > 0:
                self._owned[session.client] = left
            else:
                self._owned.pop(session.client, None)
        return session

    def _reserve(self, client: str) -> None:
        """Close idle games, then refuse early (before any parsing work) when there is no room."""
        self.expire()
        with self._lock:
            self._check_room(client, make_room=False)

    def expire(self, now: float | None = None) -> int:
        """Close the games idle for longer than the limit; returns how many."""
        now = time.monotonic() if now is None else now
        cutoff = now - self.limits.session_idle_seconds
        with self._lock:
            idle = [gid for gid, s in self._sessions.items() if s.last_used < cutoff and not s.lock.locked()]
            for gid in idle:
                self._drop(gid)
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
                    self._drop(game_id)    # idle past the limit: closed (the sweeper closes the rest)
                    session = None
                else:
                    session.last_used = now
            why = self._evicted.get(game_id) if session is None else None
        if session is None:
            raise UnknownGameError(f"unknown game {game_id!r} ({why or 'ended, deleted or expired'})")
        return session

    def delete(self, game_id: str) -> bool:
        with self._lock:
            return self._drop(game_id) is not None

    # -------------------------------------------------------------- the record and the cursor

    def _replay(self, session: Session, turn: int, record: GcgGame | None = None) -> ReplayResult:
        return replay_gcg(record or session.record, session.lexicon, turn, session.seed, start=session.start)

    def _rebuild(self, session: Session, keep_game: bool = False) -> None:
        """The game and its honest view after `cursor` events, replayed from the record; `keep_game` keeps
        the engine's state (a move just played at the end: its bag order stays) and only renews the view."""
        res = self._replay(session, session.cursor)
        if not keep_game:
            session.game = res.game
        session.view = res.positions[-1] if res.positions else res.start

    def navigate(self, session: Session, to: str, turn: int = 0) -> None:
        """Move the cursor: first, last, next, previous, or turn (events applied, 0 to the number of events)."""
        with session.busy():
            n = len(session.record.events)
            if to == "first":
                target = 0
            elif to == "last":
                target = n
            elif to == "next":
                if session.cursor >= n:
                    raise FormatError(f"already at the end of the game (event {n} of {n})")
                target = session.cursor + 1
            elif to == "previous":
                if session.cursor <= 0:
                    raise FormatError("already at the start of the game")
                target = session.cursor - 1
            elif to == "turn":
                if type(turn) is not int or not 0 <= turn <= n:
                    raise FormatError(f"turn {excerpt(str(turn))} is out of range: the game has {n} events "
                                      f"(turn 0 is the start, {n} the end)")
                target = turn
            else:
                raise FormatError(f"unknown navigation {excerpt(to)} (one of {', '.join(NAVIGATION)})")
            session.cursor = target
            self._rebuild(session)

    def set_rule(self, session: Session, rule: str) -> None:
        with session.busy():
            session.rule = check_rule(rule)

    def set_rack(self, session: Session, text: str) -> None:
        """Give the player on turn this rack, from the tiles they cannot see (not the opponent's known
        tiles). At the end of the game it becomes the record's last known rack; earlier it holds until the
        cursor moves (a move played from it records it)."""
        game, ld = session.game, session.lexicon.ld
        with session.busy():
            if game.game_over:
                raise FormatError("the game is over")
            view = session.view
            assert view is not None
            tiles = rack_tiles(ld, text, "rack", fold_case=True)
            if not 1 <= len(tiles) <= RACK_SIZE:
                raise FormatError(f"rack {excerpt(text)} has {len(tiles)} tiles; 1 to {RACK_SIZE}")
            # the distribution less the board and the opponent's known tiles: the bag, the unknown part of
            # the opponent's rack and the player's own rack
            pool = view.unseen_counts(1)
            for t in tiles:
                if pool[t] <= 0:
                    raise FormatError(f"rack {excerpt(text)}: no {ld.label(t)} left among the unseen tiles")
                pool[t] -= 1
            p = game.on_turn
            try:
                game.set_rack(p, tiles)
            except GameError as exc:
                raise FormatError(f"rack {excerpt(text)}: {exc}") from None
            if session.cursor == len(session.record.events):
                _keep_racks(session)
            view.racks = (list(tiles), list(game.rack(1 - p)) if game.bag_size == 0 else list(view.racks[1]))

    def set_note(self, session: Session, note: str) -> None:
        """Attach a note to the event before the cursor (an empty note removes it)."""
        with session.busy():
            if session.cursor == 0:
                raise FormatError("no event to attach a note to: the cursor is at the start of the game")
            text = clean_note(note)
            ev = session.record.events[session.cursor - 1]
            old, ev.note = ev.note, text
            if len(write_gcg(session.record)) > MAX_GCG_CHARS:
                ev.note = old
                raise FormatError(f"with this note the game would be longer than a GCG may be ({MAX_GCG_CHARS} "
                                  "characters)")

    def export(self, session: Session) -> str:
        """The whole game as GCG text (for the client to write)."""
        with session.busy():
            if not session.from_start and session.start is not None:
                raise FormatError("this game began at a CGP position, which GCG cannot record; only games from "
                                  "the empty board (new or loaded from GCG) can be exported")
            text = write_gcg(session.record)
            if len(text) > MAX_GCG_CHARS:
                raise FormatError(f"the game's GCG would be {len(text)} characters long; at most {MAX_GCG_CHARS}")
            return text

    def _append(self, session: Session, events: list[GcgEvent]) -> None:
        """Drop the events after the cursor, add these, and move the cursor to the new end."""
        kept = session.record.events[:session.cursor]
        if len(kept) + len(events) > MAX_GCG_EVENTS:
            raise FormatError(f"the game would have more than {MAX_GCG_EVENTS} events")
        session.record.events = kept + events
        session.cursor = len(session.record.events)

    def _play_events(self, session: Session, rack_known: bool) -> list[GcgEvent]:
        """GCG events for the move the engine game just made (its last history entry), with the end of the
        game settled as a record writes it: end-rack points for going out, rack penalties after the
        scoreless turns."""
        game, ld = session.game, session.lexicon.ld
        nick = session.nicks
        player, kind, row, col, vertical, tiles, score, rack = game.history()[-1]
        total = _record_totals(session, session.cursor)
        rack_s = ld.rack_str(list(rack)) if rack_known else ""
        if kind == "place":
            total[player] += score
            word = format_move(Move("place", row, col, vertical, tuple(tiles)), ld).split(" ", 1)[1]
            evs = [GcgEvent("play", nick[player], rack_s, format_coord(row, col, vertical), word, score=score,
                            cumulative=total[player])]
        elif kind == "exchange":
            evs = [GcgEvent("exchange", nick[player], rack_s, exchanged=ld.rack_str(list(tiles)),
                            cumulative=total[player])]
        else:
            evs = [GcgEvent("pass", nick[player], rack_s, cumulative=total[player])]
        if game.game_over:
            evs += _end_events(session, total)
            evs += _time_penalty_events(session, total)
        return evs

    def _commit(self, session: Session, move: Move, tile_order: str = "", allow_phony: bool = False,
                text: str = "") -> int:
        """Play `move` at the cursor (the events after it are dropped) and record it."""
        game = session.game
        view = session.view
        assert view is not None
        if game.game_over:
            raise FormatError("the game is over")
        rack_known = bool(view.racks[0]) or game.bag_size == 0
        if move.kind != "pass" and not rack_known:
            raise FormatError(f"the rack of {session.players[game.on_turn]} is not known here: set it first "
                              "(SetRack; rack LETTERS in the shell)")
        check_legal(game, session.lexicon, move, text or format_move(move, session.lexicon.ld), allow_phony)
        if len(session.record.events[:session.cursor]) + 5 > MAX_GCG_EVENTS:
            raise FormatError(f"the game would have more than {MAX_GCG_EVENTS} events")
        _tick(session)
        if tile_order:
            set_tile_order(game, position_from_game(game, show_opponent=False), tile_order)
        try:
            score = play_move(game, move)
        finally:
            game.set_random_order()
        self._append(session, self._play_events(session, rack_known))
        _keep_racks(session)
        self._rebuild(session, keep_game=True)
        return score

    def play(self, session: Session, text: str, tile_order: str = "") -> None:
        """Play a move in notation at the cursor. Under the void challenge rule a phony is refused; under
        the others it stands until challenged."""
        with session.busy():
            move = parse_move(text, session.game.board, session.lexicon.ld)
            self._commit(session, move, tile_order, allow_phony=session.rule != "void", text=text)

    def challenge(self, session: Session) -> tuple[list[str], str]:
        """Challenge the last play before the cursor under the game's rule; returns (invalid words, what
        happened). A phony comes off and its player loses the turn; a valid play costs the challenger a
        turn (double) or gives its player a bonus (five, ten); single has no penalty. Under void phonies
        cannot be played, so there is nothing to challenge. End-rack points after a play that went out are
        settled again."""
        with session.busy():
            rule = session.rule
            if rule == "void":
                raise FormatError("the challenge rule is void: phonies cannot be played, so there is nothing to "
                                  "challenge (choose single, double, five or ten)")
            events = session.record.events
            i = session.cursor - 1
            while i >= 0 and events[i].type == "end_rack_points":
                i -= 1
            if i < 0 or events[i].type != "play":
                what = "nothing has been played" if i < 0 else f"the last event is a {events[i].type.replace('_', ' ')}"
                raise FormatError(f"there is no play to challenge: {what}")
            play_ev = events[i]
            mover = session.player_of(play_ev)
            challenger = 1 - mover
            ld = session.lexicon.ld
            before = self._replay(session, i)
            move = parse_move(f"{play_ev.position} {play_ev.word}", before.game.board, ld)
            bad = invalid_words(before.game, session.lexicon, move)
            after = self._replay(session, i + 1)
            own = after.positions[-1].racks[0] if after.positions else []
            racks: list[list[int] | None] = [list(after.game.rack(0)), list(after.game.rack(1))]
            if not own and after.game.bag_size > 0:
                racks[challenger] = None           # the challenger's rack is not known here
            nick = session.nicks
            total = _record_totals(session, i + 1)
            new: list[GcgEvent] = []
            if bad:
                total[mover] -= play_ev.score
                new.append(GcgEvent("phony_returned", nick[mover], play_ev.rack, score=-play_ev.score,
                                    cumulative=total[mover]))
                outcome = (f"{play_ev.position} {play_ev.word} is a phony ({', '.join(bad)}): it comes off and "
                           f"{nick[mover]} loses the turn")
                racks[mover] = None                # the withdrawal gives the tiles back (the replay does)
            elif rule == "double":
                known = racks[challenger]
                rack_s = ld.rack_str(known) if known is not None else ""
                new.append(GcgEvent("pass", nick[challenger], rack_s, cumulative=total[challenger],
                                    note=UNSUCCESSFUL_CHALLENGE))
                outcome = f"{play_ev.position} {play_ev.word} is valid: {nick[challenger]} loses the turn (double)"
            elif rule in CHALLENGE_BONUS:
                bonus = CHALLENGE_BONUS[rule]
                total[mover] += bonus
                new.append(GcgEvent("challenge_bonus", nick[mover], score=bonus, cumulative=total[mover]))
                outcome = f"{play_ev.position} {play_ev.word} is valid: {nick[mover]} gets {bonus} points ({rule})"
            else:
                outcome = f"{play_ev.position} {play_ev.word} is valid: no penalty (single)"
            session.cursor = i + 1
            self._append(session, new)
            _set_racks(session, racks)
            res = self._replay(session, session.cursor)
            if res.game.game_over:
                # the play went out and stays: its end-rack points (or, after a sixth scoreless turn, the
                # rack penalties) are settled again
                session.game = res.game
                totals = _record_totals(session)
                self._append(session, _end_events(session, totals) + _time_penalty_events(session, totals))
                _set_racks(session, [None, None])
            elif bad:
                # the withdrawal gave the mover's tiles back (the replay did): known again
                racks[mover] = list(res.game.rack(mover))
                _set_racks(session, racks)
            self._rebuild(session)
            return bad, outcome

    def engine_move(self, session: Session, strategy: Strategy, stop: threading.Event | None = None,
                    threads: int = 1) -> Choice:
        """Let the engine choose with `strategy` (analysis/player.py) and play. In a timed game the player's
        clock sets the budget; `stop` ends a simulation or a search early; the best move found so far is
        played."""
        game, lex = session.game, session.lexicon
        with session.busy():
            if game.game_over:
                raise FormatError("the game is over")
            view = session.view
            if view is not None and not view.racks[0] and game.bag_size > 0:
                raise FormatError(f"the rack of {session.players[game.on_turn]} is not known here: set it first "
                                  "(SetRack; rack LETTERS in the shell)")
            turn = Turn(clock=session.clock_left(game.on_turn), last_play=_last_play(session),
                        history=_history(session) if strategy.infer else ())
            choice = choose(self.engine, game, lex, strategy, turn, stop=stop, threads=threads)
            self._commit(session, choice.move)
            return choice



def check_rule(rule: str) -> str:
    name = (rule or "").strip().lower()
    name = {"5pt": "five", "10pt": "ten", "5": "five", "10": "ten"}.get(name, name)
    if name not in CHALLENGE_RULES:
        raise FormatError(f"unknown challenge rule {excerpt(rule)} (one of {', '.join(CHALLENGE_RULES)})")
    return name


def clean_note(note: str) -> str:
    """A note as GCG can carry it: lines (CR and CRLF become LF) trimmed as a reader trims them, no other
    control characters, at most MAX_NOTE_CHARS."""
    if len(note) > MAX_NOTE_CHARS:
        raise FormatError(f"the note has {len(note)} characters; at most {MAX_NOTE_CHARS}")
    lines = [line.strip() for line in note.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    for line in lines:
        bad = next((c for c in line if not c.isprintable() and c != "\t"), None)
        if bad is not None:
            raise FormatError(f"the note holds the control character U+{ord(bad):04X}")
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _last_play(session: Session) -> str | None:
    """The opponent's last turn before the cursor as inference reads it (a placement as it stands on the
    board, or `exch N`); None when the last event is not the opponent's play or exchange."""
    events = session.record.events[:session.cursor]
    if not events:
        return None
    ev = events[-1]
    if session.player_of(ev) == session.game.on_turn:
        return None
    if ev.type == "play":
        return f"{ev.position} {ev.word}"
    if ev.type == "exchange" and ev.exchanged:
        ex = ev.exchanged
        n = int(ex) if ex.isdigit() else len(rack_tiles(session.lexicon.ld, ex, "exchange", fold_case=True))
        return f"exch {n}"
    return None


def _history(session: Session) -> tuple[LastPlay, ...]:
    """The opponent's turns before their last play, as the player on turn saw them, for inference (the
    record's own view: a record made for this player leaves the opponent's racks out)."""
    from macondo_server.analysis.infer import DEFAULT_HISTORY, history_from_record

    replayed = replay_gcg(session.record, session.lexicon, session.cursor, session.seed, start=session.start)
    return tuple(history_from_record(session.record, replayed, session.lexicon, DEFAULT_HISTORY))


def _tick(session: Session) -> None:
    """Charge the time since the turn began to the player on turn's clock, and start the next turn's."""
    now = time.monotonic()
    if session.clock is not None and not session.game.game_over:
        session.clock[session.game.on_turn] -= now - session.turn_began
    session.turn_began = now


def overtime_points(seconds_left: float, per_minute: int) -> int:
    """The penalty for a clock at `seconds_left` (negative: over): `per_minute` points per minute or part
    of one over."""
    if seconds_left >= 0:
        return 0
    return per_minute * math.ceil(-seconds_left / 60.0 - 1e-9)


def _time_penalty_events(session: Session, total: list[int]) -> list[GcgEvent]:
    """At the end of a timed game: a time penalty for each player over their time, taken from their score
    (in the engine's game and the record alike)."""
    if session.clock is None:
        return []
    out: list[GcgEvent] = []
    for k in range(2):
        points = overtime_points(session.clock[k], session.overtime_penalty)
        if points and not session.time_penalties[k]:
            session.time_penalties[k] = points
            total[k] -= points
            session.game.adjust_score(k, -points)
            rack = session.lexicon.ld.rack_str(list(session.game.rack(k)))
            out.append(GcgEvent("time_penalty", session.nicks[k], rack, score=-points, cumulative=total[k]))
    return out


def _set_racks(session: Session, racks: list[list[int] | None]) -> None:
    """The record's last known racks (#rack1, #rack2) by player index; None drops one."""
    ld = session.lexicon.ld
    pragmas = [(k, v) for k, v in session.record.pragmas if k not in ("rack1", "rack2")]
    for k, rack in enumerate(racks):
        if rack:
            pragmas.append((f"rack{k + 1}", ld.rack_str(rack)))
    session.record.pragmas = pragmas


def _keep_racks(session: Session) -> None:
    """At the end of the record, keep the engine's racks as the last known ones (so that a replay, after
    navigating away and back, finds the same racks); a finished game needs none."""
    game = session.game
    if game.game_over:
        _set_racks(session, [None, None])
    else:
        _set_racks(session, [list(game.rack(0)), list(game.rack(1))])


def _record_totals(session: Session, upto: int | None = None) -> list[int]:
    """Each player's score after the record's first `upto` events (all by default)."""
    total = list(session.start.scores) if session.start is not None else [0, 0]
    events = session.record.events if upto is None else session.record.events[:upto]
    for ev in events:
        total[session.player_of(ev)] = ev.cumulative
    return total


def _end_events(session: Session, total: list[int]) -> list[GcgEvent]:
    """The events that settle a finished game (session.game): end-rack points for the player who went out
    (twice the opponent's rack), or each player's rack penalty after the scoreless turns."""
    game, ld = session.game, session.lexicon.ld
    nick = session.nicks
    out: list[GcgEvent] = []
    if game.end_reason_name == "standard":
        goer = 0 if not game.rack(0) else 1
        left = list(game.rack(1 - goer))
        if left:
            value = 2 * sum(ld.score(t) for t in left)
            total[goer] += value
            out.append(GcgEvent("end_rack_points", nick[goer], exchanged=ld.rack_str(left), score=value,
                                cumulative=total[goer]))
    elif game.end_reason_name == "consecutive_zeros":
        for k in (game.on_turn, 1 - game.on_turn):
            rack = list(game.rack(k))
            if rack:
                value = sum(ld.score(t) for t in rack)
                total[k] -= value
                out.append(GcgEvent("end_rack_penalty", nick[k], ld.rack_str(rack), exchanged=ld.rack_str(rack),
                                    score=-value, cumulative=total[k]))
    return out


def check_names(names: list[str]) -> None:
    if len(names) != 2 or names[0] == names[1] or not all(n.strip() for n in names):
        raise ValueError("player nicknames must be two different non-empty names")
    for n in names:
        if len(n) > MAX_NAME_CHARS or not n.isprintable():
            raise ValueError(f"player nickname {excerpt(n)} must be printable and at most {MAX_NAME_CHARS} "
                             "characters")
