"""Positions <-> game states, committing moves with a draw order, and GCG replay.

The rules live in engine_cy.game; this module only translates text formats into engine calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine_cy.game import Game, GameError
from engine_cy.movegen import play_error

from .formats import (
    RACK_SIZE,
    FormatError,
    GcgGame,
    Move,
    Position,
    format_move,
    new_board,
    parse_move,
)
from .lexicon import Lexicon


def _counts_to_list(counts: list[int]) -> list[int]:
    return [ml for ml, n in enumerate(counts) for _ in range(n)]


def game_from_position(pos: Position, lex: Lexicon, seed: int = 0) -> Game:
    """Player 0 is the player on turn. An unknown (or partial) opponent rack is completed from the unseen
    tiles: by the `bagorder` opcode when given (the opponent holds the unseen tiles not in the order), else
    at random with the seed."""
    board = pos.board.copy()
    mcnz = int(pos.ops.get("mcnz", "6"))
    game = Game(lex.kwg, lex.ld, board, seed, int(pos.ops.get("bb", "50")), mcnz)
    game.set_rack(0, pos.racks[0])
    order = pos.bag_order
    known_opp = list(pos.racks[1])
    if order is not None:
        unseen = _counts_to_list(pos.unseen_counts(0))
        rest = list(unseen)
        for t in order:
            if t not in rest:
                raise FormatError("CGP opcode bagorder names tiles that are not unseen")
            rest.remove(t)
        for t in known_opp:
            if t not in rest:
                raise FormatError("CGP opcode bagorder uses tiles of the opponent's rack")
        if len(rest) <= RACK_SIZE:
            game.set_rack(1, rest)
        else:
            game.set_rack(1, known_opp)
            game.fill_rack(1)
        game.set_bag_order(order)
    else:
        game.set_rack(1, known_opp)
        game.fill_rack(1)
    game.set_scores(pos.scores[0], pos.scores[1])
    game.set_zeros_count(pos.zeros)
    if game.bag_size == 0 and (not game.rack(0) or not game.rack(1)):
        game.set_over(True, "standard")
    return game


def position_from_game(game: Game, pos_ops: dict[str, str] | None = None, show_opponent: bool = True) -> Position:
    """The game as a CGP position seen by the player on turn (racks and scores on-turn first)."""
    p = game.on_turn
    scores = game.scores
    racks = (game.rack(p), game.rack(1 - p) if show_opponent else [])
    ops = {k: v for k, v in (pos_ops or {}).items() if k != "bagorder"}
    return Position(
        board=game.board.copy(),
        racks=racks,
        scores=(scores[p], scores[1 - p]),
        zeros=game.zeros_count,
        ops=ops,
        ld=game.ld,
    )


@dataclass
class CommitResult:
    position: Position
    score: int
    game_over: bool
    end_reason: str
    bag: list[int]


def commit(pos: Position, lex: Lexicon, move_text: str, tileorder: str | None = None, seed: int = 0) -> CommitResult:
    """Play a move on a position. With a tile order (first drawn first; its length must be unseen - 7) the
    mover draws the first tiles of it and the opponent's rack becomes the unseen tiles not in it."""
    move = parse_move(move_text, pos.board, pos.ld)
    game = game_from_position(pos, lex, seed)
    if tileorder is not None:
        set_tile_order(game, pos, tileorder)
    check_legal(game, lex, move, move_text)
    score = play_move(game, move)
    return CommitResult(
        position=position_from_game(game, pos.ops),
        score=score,
        game_over=game.game_over,
        end_reason=game.end_reason_name,
        bag=game.bag_list()[::-1],
    )


def set_tile_order(game: Game, pos: Position, tileorder: str) -> None:
    """Fix the coming draws: the player on turn (who sees `pos`) draws `tileorder` first-drawn first, and
    the opponent holds the unseen tiles not in it. Its length must be the unseen count less a full rack."""
    ld = pos.ld
    try:
        order = ld.parse_rack(tileorder.upper())
    except ValueError as exc:
        raise FormatError(f"tile order {tileorder!r}: {exc}") from None
    unseen = _counts_to_list(pos.unseen_counts(0))
    if len(order) != max(0, len(unseen) - RACK_SIZE):
        raise FormatError(
            f"tile order {tileorder!r} has {len(order)} tiles; it must have {max(0, len(unseen) - RACK_SIZE)}"
            " (unseen tiles less a full opponent rack)"
        )
    rest = list(unseen)
    for t in order:
        if t not in rest:
            raise FormatError(f"tile order {tileorder!r}: {ld.label(t)} is not among the unseen tiles")
        rest.remove(t)
    game.set_rack(1 - game.on_turn, rest)
    game.set_bag_order(order)


def check_legal(game: Game, lex: Lexicon, move: Move, text: str) -> None:
    """Refuse a move the player on turn cannot make: tiles not on the rack, a placement that misses the
    centre or the tiles on the board, or one that forms a word outside the lexicon."""
    ld = lex.ld
    rack = game.rack(game.on_turn)
    for t in move.rack_tiles():
        if t not in rack:
            raise FormatError(f"illegal move {text!r}: the rack {ld.rack_str(game.rack(game.on_turn))} does not hold it")
        rack.remove(t)
    if move.kind == "place":
        why = play_error(game.board, lex.kwg, ld, move.row, move.col, move.vertical, list(move.tiles))
        if why:
            raise FormatError(f"illegal move {text!r}: {why}")


def play_move(game: Game, move: Move) -> int:
    try:
        if move.kind == "place":
            return int(game.play("place", move.row, move.col, move.vertical, move.tiles))
        if move.kind == "exchange":
            return int(game.play("exchange", tiles=list(move.tiles)))
        return int(game.play("pass"))
    except GameError as exc:
        raise FormatError(f"illegal move: {exc}") from None


# ------------------------------------------------------------------ GCG replay


@dataclass
class ReplayResult:
    game: Game
    events_applied: int
    positions: list[Position]          # after each applied event
    lexicon: str


def replay_gcg(record: GcgGame, lex: Lexicon, turn: int | None = None, seed: int = 0) -> ReplayResult:
    """Replay a GCG record event by event (racks as the file states them), up to `turn` events."""
    ld = lex.ld
    game = Game(lex.kwg, ld, new_board(), seed)
    nicks = [p[0] for p in record.players]
    events = record.events if turn is None else record.events[: max(0, turn)]
    positions: list[Position] = []
    ops = {"lex": lex.name}
    for n, ev in enumerate(events, 1):
        player = nicks.index(ev.nick)
        where = f"GCG event {n} ({ev.nick})"
        was_over = game.game_over
        try:
            if ev.type in ("play", "pass", "exchange"):
                if game.game_over:
                    raise FormatError(f"{where}: the game is already over")
                game.set_turn(player)
                if ev.rack:
                    game.set_rack(player, ld.parse_rack(ev.rack.upper()))
                if ev.type == "play":
                    move = parse_move(f"{ev.position} {ev.word}", game.board, ld)
                    _force_draws(game, player, move.rack_tiles(), _next_reveal(record.events, n, nicks, player), ld)
                    score = play_move(game, move)
                    if score != ev.score:
                        raise FormatError(
                            f"{where}: {format_move(move, ld)} scores {score}, the file says {ev.score}"
                        )
                elif ev.type == "exchange":
                    if ev.exchanged.isdigit():
                        tiles = game.rack(player)[: int(ev.exchanged)]
                    else:
                        tiles = ld.parse_rack(ev.exchanged.upper())
                    _force_draws(game, player, list(tiles), _next_reveal(record.events, n, nicks, player), ld)
                    play_move(game, Move("exchange", tiles=tuple(tiles)))
                else:
                    play_move(game, Move("pass"))
            elif ev.type == "phony_returned":
                # the challenged play comes off: its tiles go back and the turn is lost (a scoreless turn)
                hist = game.history()
                if not hist or hist[-1][0] != player or hist[-1][1] != "place":
                    raise FormatError(f"{where}: a phony is withdrawn but the last move is not its play")
                game.undo()
                game.set_turn(player)
                play_move(game, Move("pass"))
            elif ev.type == "challenge_bonus" or ev.type == "time_penalty":
                game.adjust_score(player, ev.score)
            elif ev.type in ("end_rack_points", "end_rack_penalty"):
                if not game.game_over:
                    game.adjust_score(player, ev.score)
                    game.set_over(True, "standard" if ev.type == "end_rack_points" else "consecutive_zeros")
        except (GameError, ValueError) as exc:
            if isinstance(exc, FormatError):
                raise
            raise FormatError(f"{where}: {exc}") from None
        finally:
            game.set_random_order()
        ended_here = game.game_over and not was_over and ev.type in ("play", "pass", "exchange", "phony_returned")
        if not ended_here and game.scores[player] != ev.cumulative:
            raise FormatError(
                f"{where}: cumulative score is {game.scores[player]} after replay, the file says {ev.cumulative}"
            )
        # racks are only known where the file reveals them: give each player the rack its next reveal shows
        next_is_phony = n < len(record.events) and record.events[n].type == "phony_returned"
        if not game.game_over and not next_is_phony:
            for who in (game.on_turn, 1 - game.on_turn):
                known = _next_reveal(record.events, n, nicks, who)
                if known is not None:
                    try:
                        game.set_rack(who, ld.parse_rack(known.upper()))
                    except (GameError, ValueError):
                        pass  # an inconsistent later rack is reported when its own event is replayed
        shown = position_from_game(game, ops)
        if next_is_phony and not game.game_over:
            # the game state is left alone until the withdrawal; the position shows the known rack
            known = _next_reveal(record.events, n, nicks, game.on_turn)
            if known is not None:
                shown.racks = (ld.parse_rack(known.upper()), shown.racks[1])
        positions.append(shown)
    return ReplayResult(game=game, events_applied=len(events), positions=positions, lexicon=lex.name)


def _force_draws(game: Game, player: int, used: list[int], next_rack: str | None, ld) -> None:
    """Make the coming draw give `player` the rack the file shows next, when the bag holds those tiles."""
    if next_rack is None:
        return
    kept = game.rack(player)
    for t in used:
        if t in kept:
            kept.remove(t)
    drawn = ld.parse_rack(next_rack.upper())
    for t in kept:
        if t not in drawn:
            return  # the file's next rack does not extend this one (e.g. a later phony); draw at random
        drawn.remove(t)
    bag = game.bag_list()
    for t in drawn:
        if t not in bag:
            return
        bag.remove(t)
    game.set_bag_order(drawn)


def _next_reveal(events: list, start: int, nicks: list[str], player: int) -> str | None:
    """The rack `player` holds from event index `start` on, as the file next shows it."""
    for ev in events[start:]:
        who = nicks.index(ev.nick)
        if ev.type in ("play", "pass", "exchange", "phony_returned") and ev.rack:
            if who == player:
                return str(ev.rack)
        elif ev.type == "end_rack_penalty" and who == player:
            return str(ev.exchanged)
        elif ev.type == "end_rack_points" and who != player:
            return str(ev.exchanged)
    return None
