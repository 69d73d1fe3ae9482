"""Positions <-> game states, committing moves with a draw order, and GCG replay.

The rules live in engine_cy.game; this module only translates text formats into engine calls. Every
input is untrusted: whatever goes wrong on the way into the engine comes out as a FormatError naming the
field (and, for GCG records, the line) at fault.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine_cy.alphabet import LetterDistribution
from engine_cy.game import Game, GameError
from engine_cy.rules import formed_words, play_error
from macondo_server.engine.lexicon import Lexicon, LexiconError
from macondo_server.model.gcg import GcgEvent, GcgGame
from macondo_server.model.languages import (
    DEFAULT_DISTRIBUTION,
    check_table_name,
    distribution_by_name,
    language_of,
)
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import (
    MAX_GCG_EVENTS,
    MAX_SCORE,
    MAX_TILES_CHARS,
    FormatError,
    check_text,
    excerpt,
    parse_int,
)
from macondo_server.model.tiles import (
    RACK_SIZE,
    board_tile,
    count_excess,
    rack_tiles,
    split_labels,
)

# messages of foreign exceptions (engine errors) are cut to this length when wrapped in a FormatError
_MAX_WRAPPED_MESSAGE = 200


def _short(exc: BaseException) -> str:
    msg = str(exc)
    return msg if len(msg) <= _MAX_WRAPPED_MESSAGE else msg[: _MAX_WRAPPED_MESSAGE - 1] + "…"


def _counts_to_list(counts: list[int]) -> list[int]:
    return [ml for ml, n in enumerate(counts) for _ in range(n)]


def check_position(pos: Position) -> tuple[int, int]:
    """Refuse a position the engine cannot take (whatever built it): scores, scoreless turns, ops, rack
    sizes and tile counts. Returns (bingo bonus, scoreless-turn limit)."""
    bb = pos.bingo_bonus
    mcnz = pos.max_scoreless_turns
    for i, s in enumerate(pos.scores):
        if type(s) is not int or not -MAX_SCORE <= s <= MAX_SCORE:
            raise FormatError(
                f"position score {i + 1} {excerpt(str(s))}: out of range ({-MAX_SCORE} to {MAX_SCORE})"
            )
    if type(pos.zeros) is not int or not 0 <= pos.zeros <= mcnz:
        raise FormatError(
            f"position consecutive zero turns {excerpt(str(pos.zeros))}: out of range (0 to {mcnz})"
        )
    if len(pos.racks) != 2:
        raise FormatError(f"position has {len(pos.racks)} racks; expected 2")
    for i, rack in enumerate(pos.racks):
        if len(rack) > RACK_SIZE:
            raise FormatError(f"position rack {i + 1} has {len(rack)} tiles; at most {RACK_SIZE}")
        if any(type(t) is not int or not 0 <= t < pos.ld.size for t in rack):
            raise FormatError(f"position rack {i + 1} holds a tile outside the alphabet")
    count_excess(pos.ld, pos.bag_counts(), "the position has")
    return bb, mcnz


def game_from_position(pos: Position, lex: Lexicon, seed: int = 0) -> Game:
    """Player 0 is the player on turn. An unknown (or partial) opponent rack is completed from the unseen
    tiles: by the `bagorder` opcode when given (the opponent holds the unseen tiles not in the order), else
    at random with the seed. A position whose scoreless turns reached the limit is a finished game."""
    bb, mcnz = check_position(pos)
    try:
        board = pos.board.copy()
        game = Game(lex.kwg, lex.ld, board, seed, bb, mcnz)
        game.set_rack(0, pos.racks[0])
        order = pos.bag_order
        known_opp = list(pos.racks[1])
        if order is not None:
            unseen = _counts_to_list(pos.unseen_counts(0))
            rest = list(unseen)
            for t in order:
                if t not in rest:
                    raise FormatError(f"CGP op bagorder: {lex.ld.label(t)} is not among the unseen tiles")
                rest.remove(t)
            for t in known_opp:
                if t not in rest:
                    raise FormatError("CGP op bagorder uses tiles of the opponent's rack")
                rest.remove(t)
            # the opponent's unknown tiles come from the unseen tiles outside the order (drawing them from
            # the whole bag could take tiles the order needs)
            need = RACK_SIZE - len(known_opp)
            fill = rest if len(rest) <= need else random.Random(seed).sample(rest, need)
            game.set_rack(1, known_opp + fill)
            game.set_bag_order(order)
        else:
            game.set_rack(1, known_opp)
            game.fill_rack(1)
        game.set_scores(pos.scores[0], pos.scores[1])
        game.set_zeros_count(pos.zeros)
        if game.bag_size == 0 and (not game.rack(0) or not game.rack(1)):
            game.set_over(True, "standard")
        elif pos.zeros >= mcnz:
            game.set_over(True, "consecutive_zeros")
    except (GameError, OverflowError) as exc:
        raise FormatError(f"position: {_short(exc)}") from None
    return game


def position_from_game(
    game: Game, pos_ops: dict[str, str] | None = None, show_opponent: bool = True
) -> Position:
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


def commit(
    pos: Position, lex: Lexicon, move_text: str, tileorder: str | None = None, seed: int = 0
) -> CommitResult:
    """Play a move on a position. With a tile order (first drawn first; its length must be unseen - 7) the
    mover draws the first tiles of it and the opponent's rack becomes the unseen tiles not in it."""
    move = parse_move(move_text, pos.board, pos.ld)
    game = game_from_position(pos, lex, seed)
    if game.game_over:
        raise FormatError("the game is over")
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


def honest_after_commit(before: Position, res: CommitResult, tileorder: str | None) -> Position:
    """The position after a commit as the player now on turn knows it: their own rack only when it was known
    (given in `before` as the opponent's rack, or fixed by a tile order; not the random tiles a commit deals to
    an unknown rack), and none of the mover's new tiles, unless the bag is empty or the game over (then every
    tile is known)."""
    after = res.position
    if res.game_over or not res.bag:
        return after
    own = list(after.racks[0]) if (tileorder is not None or before.racks[1]) else []
    return dataclasses.replace(after, racks=(own, []))


def set_tile_order(game: Game, pos: Position, tileorder: str) -> None:
    """Fix the coming draws: the player on turn (who sees `pos`) draws `tileorder` first-drawn first, and
    the opponent holds the unseen tiles not in it. Its length must be the unseen count less a full rack."""
    ld = pos.ld
    check_text(tileorder, "tile order", MAX_TILES_CHARS)
    order = rack_tiles(ld, tileorder, "tile order", fold_case=True)
    q = excerpt(tileorder)
    unseen = _counts_to_list(pos.unseen_counts(0))
    if len(order) != max(0, len(unseen) - RACK_SIZE):
        raise FormatError(
            f"tile order {q} has {len(order)} tiles; it must have {max(0, len(unseen) - RACK_SIZE)}"
            " (unseen tiles less a full opponent rack)"
        )
    rest = list(unseen)
    for t in order:
        if t not in rest:
            raise FormatError(f"tile order {q}: {ld.label(t)} is not among the unseen tiles")
        rest.remove(t)
    try:
        game.set_rack(1 - game.on_turn, rest)
        game.set_bag_order(order)
    except GameError as exc:
        raise FormatError(f"tile order {q}: {_short(exc)}") from None


_NOT_A_WORD = " is not a word in the lexicon"


def check_legal(game: Game, lex: Lexicon, move: Move, text: str, allow_phony: bool = False) -> None:
    """Refuse a move the player on turn cannot make: tiles not on the rack, a placement that misses the
    centre or the tiles on the board, or (unless `allow_phony`: a challenge rule under which a phony can
    be played and challenged off) one that forms a word outside the lexicon."""
    ld = lex.ld
    rack = game.rack(game.on_turn)
    for t in move.rack_tiles():
        if t not in rack:
            held = ld.rack_str(game.rack(game.on_turn))
            raise FormatError(f"illegal move {excerpt(text)}: the rack {held} does not hold it")
        rack.remove(t)
    if move.kind == "place":
        why = play_error(game.board, lex.kwg, ld, move.row, move.col, move.vertical, list(move.tiles))
        # the word check comes last in play_error: a word message means the placement itself is sound
        if why and not (allow_phony and why.endswith(_NOT_A_WORD)):
            raise FormatError(f"illegal move {excerpt(text)}: {why}")


def invalid_words(game: Game, lex: Lexicon, move: Move) -> list[str]:
    """The words a placement forms on the game's board that the lexicon lacks (a phony's words)."""
    words = formed_words(game.board, move.row, move.col, move.vertical, list(move.tiles))
    return [lex.ld.word_str(list(w)) for w in words if not lex.kwg.contains(w)]


def play_move(game: Game, move: Move) -> int:
    try:
        if move.kind == "place":
            return int(game.play("place", move.row, move.col, move.vertical, move.tiles))
        if move.kind == "exchange":
            return int(game.play("exchange", tiles=list(move.tiles)))
        return int(game.play("pass"))
    except (GameError, OverflowError) as exc:
        raise FormatError(f"illegal move: {_short(exc)}") from None


# ------------------------------------------------------------------ GCG replay


@dataclass
class ReplayResult:
    game: Game
    events_applied: int
    # after each applied event, as the player then on turn knows it: their own rack (empty when the file
    # never shows it), the opponent's tiles they know of (a withdrawn phony's tiles; every tile once the
    # bag is empty), never a rack the file reveals only later
    positions: list[Position]
    lexicon: str
    start: Position                     # before the first event, as its player knows it
    start_player: int = 0
    warnings: list[str] = field(default_factory=list)   # the record is incomplete: what was assumed


_MOVES = ("play", "pass", "exchange", "phony_returned")


def _where(ev: GcgEvent, n: int) -> str:
    who = excerpt(ev.nick, 20)
    return f"GCG line {ev.line} (event {n}, {who})" if ev.line else f"GCG event {n} ({who})"


def lexicon_for_record(record: GcgGame, available: Sequence[str], default: str,
                       requested: str | None = None,
                       distribution_of: Callable[[str], str | None] = distribution_by_name) -> tuple[str, list[str]]:
    """The lexicon to replay a record with, and warnings: the one requested, else the file's #lexicon when
    it is available, else an available one of the same family or language (a warning says so; plays are not
    checked on import), else (for an english game, or no #lexicon at all: a warning says so) the default. A
    game in a language no available lexicon is for (its #tile-distribution, or its #lexicon's) is refused with a
    FormatError saying so, not replayed into a misleading score mismatch. `distribution_of` names a lexicon's
    distribution (default: the one its name implies)."""
    dist = (record.pragma("tile-distribution") or record.pragma("tile-set") or "").strip()
    if dist:
        try:
            dist = check_table_name(dist, "GCG #tile-distribution: letter distribution")
        except FormatError as exc:
            raise FormatError(str(exc)) from None
    if requested:
        return requested, []
    named = (record.pragma("lexicon") or "").strip()
    language = language_of(dist) if dist else None
    if named and language is None:
        implied = distribution_by_name(named)
        language = language_of(implied) if implied else None

    def lang(name: str) -> str:
        return language_of(distribution_of(name) or DEFAULT_DISTRIBUTION)

    if not named and (language is None or language == lang(default)):
        # said, not assumed silently: a game of another lexicon would be judged by the wrong word list
        return default, [f"the GCG has no #lexicon line: using the default lexicon {default}; if the game was "
                         "played with another, name it with --lexicon (in an API request: its lexicon field)"]
    known = {a.upper(): a for a in available}
    if named and named.upper() in known:
        return known[named.upper()], []
    family = named.upper().rstrip("0123456789")
    kin = sorted(a for a in available if family and a.upper().rstrip("0123456789") == family)
    if kin:
        # the same family's edition at hand (NWL20 for NWL18)
        return kin[-1], [f"lexicon {excerpt(named)} is not available; replayed with {kin[-1]}"
                         " (plays are not checked on import)"]
    if language is None or language == lang(default):
        return default, [f"lexicon {excerpt(named)} is not available; replayed with {default}"
                         " (plays are not checked on import)"]
    same = [a for a in available if lang(a) == language]
    what = f"GCG #lexicon {excerpt(named)}" if named else f"GCG #tile-distribution {excerpt(dist)}"
    if not same:
        raise FormatError(
            f"{what}: the game is in {language} and no {language} lexicon is available"
            f" (available: {', '.join(available) or 'none'}); add one to the data directory or name it with"
            " --lexicon"
        )
    return same[-1], [f"{what}: " + (f"lexicon {excerpt(named)} is not available; " if named else "no #lexicon line; ")
                      + f"replayed with the {language} lexicon {same[-1]} (plays are not checked on import)"]


def record_setup(record: GcgGame, lex: Lexicon) -> tuple[Lexicon, str]:
    """The lexicon as a record plays it (with its #tile-distribution; on the 21x21 board, #board-layout
    SuperCrosswordGame, the `_super` form of the lexicon's own) and the record's board layout (its
    #board-layout, else the distribution's board)."""
    named_layout = (record.pragma("board-layout") or "").strip()
    dist = (record.pragma("tile-distribution") or record.pragma("tile-set") or "").strip()
    try:
        layout = lex.catalog.layout_name(named_layout) if named_layout else None
    except FormatError as exc:
        raise FormatError(f"GCG #board-layout: {exc}") from None
    try:
        if dist:
            lex = lex.for_distribution(dist)
        elif layout is not None:
            lex = lex.for_layout(layout)
    except (LexiconError, FormatError) as exc:
        raise FormatError(f"GCG #tile-distribution: {exc}" if dist else f"GCG #board-layout: {exc}") from None
    return lex, layout or lex.layout


def check_record_tiles(record: GcgGame, ld: LetterDistribution) -> None:
    """A letter the letter distribution lacks means a game in another language: say so before replaying
    (else the first sign of it would be a score that does not add up). Other unreadable tiles are left to
    the event's own replay, which reports them."""
    for n, ev in enumerate(record.events, 1):
        fields: list[tuple[str, str, bool]] = [("rack", ev.rack, True)]
        if ev.type == "play":
            fields.append(("word", ev.word, False))
        elif ev.type == "exchange" and not ev.exchanged[:1].isdigit():
            fields.append(("exchanged tiles", ev.exchanged, True))
        elif ev.type in ("end_rack_points", "end_rack_penalty"):
            fields.append(("end-of-game rack", ev.exchanged, True))
        for what, text, is_rack in fields:
            if not text:
                continue
            try:
                labels = split_labels(text, what, ld)
            except FormatError:
                continue
            for lab in labels:
                if lab in "?." or not lab.strip("[]").isalpha():
                    continue
                try:
                    if is_rack:
                        rack_tiles(ld, lab, what, fold_case=True)
                    else:
                        board_tile(ld, lab, what)
                except FormatError:
                    raise FormatError(
                        f"{_where(ev, n)}: {what} {excerpt(text, 20)}: unknown tile {excerpt(lab)}: the game is"
                        f" not in the {ld.name} letter distribution (name its distribution with #tile-distribution,"
                        f" its lexicon with #lexicon or --lexicon)"
                    ) from None


def _next_reveals(record: GcgGame, players: list[int]) -> list[tuple[str | None, str | None]]:
    """For each event index i, the rack each player holds from event i on, as the file next shows it
    (None where it never does, or where their next move is written without a rack; #rack1/#rack2 give the
    last known racks). One backward pass: looking ahead from every event is quadratic."""
    events = record.events
    cur: list[str | None] = [record.pragma("rack1") or None, record.pragma("rack2") or None]
    out: list[tuple[str | None, str | None]] = [(None, None)] * (len(events) + 1)
    out[len(events)] = (cur[0], cur[1])
    for i in range(len(events) - 1, -1, -1):
        ev, who = events[i], players[i]
        if ev.type in _MOVES:
            # a move written without its rack: the rack held before it is not known (an earlier reveal
            # further on is a later rack, not this one)
            cur[who] = ev.rack or None
        elif ev.type == "end_rack_penalty":
            cur[who] = ev.exchanged
        elif ev.type == "end_rack_points":
            cur[1 - who] = ev.exchanged
        out[i] = (cur[0], cur[1])
    return out


def _minus(tiles: list[int], used: Sequence[int]) -> list[int]:
    rest = list(tiles)
    for t in used:
        if t in rest:
            rest.remove(t)
    return rest


def _union(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Per letter the larger count (a rack known to hold `a` and to hold `b` holds both)."""
    out = list(a)
    extra = list(b)
    for t in a:
        if t in extra:
            extra.remove(t)
    return out + extra


def _rack_value(ld: LetterDistribution, tiles: Sequence[int]) -> int:
    return sum(ld.score(t) for t in tiles)


@dataclass
class _Replay:
    """State of a replay beyond the engine's: what each player knows of the other's rack, and a game end
    waiting for the file's end-of-game events."""

    known: list[list[int]]                  # tiles of player i known to the other player
    before_play: list[list[int]]            # known[i] before i's last tile play (a withdrawn phony)
    out_player: int = -1                    # who went out, their end-rack points not yet credited
    out_bonus: int = 0                      # what the engine credited for it (2 x the opponent's rack)
    out_line: int = 0
    final_pass_done: bool = False
    zeros_end: bool = False                 # six scoreless turns ended it; rack penalties not yet seen
    missing_racks: list[int] = field(default_factory=list)


def replay_gcg(record: GcgGame, lex: Lexicon, turn: int | None = None, seed: int = 0,
               start: Game | None = None) -> ReplayResult:
    """Replay a GCG record event by event (racks as the file states them), up to `turn` events; from the
    empty board, or from a copy of `start` (a game session that began at a CGP position).

    Each event's scores must add up (previous total + score = cumulative) and agree with the engine's. The
    end of a game is read as the reference engines write it: after a play that goes out, a challenge
    bonus, the opponent's final pass (or turn lost to a failed double challenge) and the end-rack points
    (twice the rack, or the rack once with the opponent's penalty); after six scoreless turns each player's
    rack penalty. An incomplete record (racks missing, game not finished) loads with warnings."""
    lex, layout = record_setup(record, lex)
    ld = lex.ld
    if len(record.players) != 2:
        raise FormatError(f"GCG has {len(record.players)} players; expected 2")
    if len(record.events) > MAX_GCG_EVENTS:
        raise FormatError(f"GCG has {len(record.events)} events; at most {MAX_GCG_EVENTS}")
    nicks = [p[0] for p in record.players]
    players: list[int] = []
    for n, ev in enumerate(record.events, 1):
        if ev.nick not in nicks:
            raise FormatError(f"{_where(ev, n)}: unknown player")
        players.append(nicks.index(ev.nick))
    check_record_tiles(record, ld)
    reveals = _next_reveals(record, players)
    parsed: dict[str, list[int] | None] = {}

    def known_rack(text: str | None) -> list[int] | None:
        """A rack the file shows later, or None when it shows none or one that does not read (that event
        reports it when it is replayed)."""
        if text is None:
            return None
        if text not in parsed:
            try:
                tiles = rack_tiles(ld, text, "rack", fold_case=True)
                parsed[text] = tiles if len(tiles) <= RACK_SIZE else None
            except FormatError:
                parsed[text] = None
        got = parsed[text]
        return None if got is None else list(got)

    game = start.clone() if start is not None else Game(lex.kwg, ld, lex.catalog.board(layout), seed)
    events = record.events if turn is None else record.events[: max(0, turn)]
    positions: list[Position] = []
    ops = {"lex": lex.name}
    file_total = list(game.scores) if start is not None else [0, 0]
    st = _Replay(known=[[], []], before_play=[[], []])
    warnings: list[str] = []
    for n, ev in enumerate(events, 1):
        player = players[n - 1]
        where = _where(ev, n)
        if type(ev.score) is not int or type(ev.cumulative) is not int or max(
            abs(ev.score), abs(ev.cumulative)
        ) > MAX_SCORE:
            raise FormatError(f"{where}: scores out of range ({-MAX_SCORE} to {MAX_SCORE})")
        if file_total[player] + ev.score != ev.cumulative:
            raise FormatError(
                f"{where}: the scores do not add up: {file_total[player]} {ev.score:+d}"
                f" is not {ev.cumulative}"
            )
        file_total[player] = ev.cumulative
        try:
            _apply_event(game, ev, player, n, reveals, known_rack, lex, st)
        except FormatError as exc:
            raise FormatError(f"{where}: {exc}") from None
        except (GameError, ValueError, OverflowError) as exc:
            raise FormatError(f"{where}: {_short(exc)}") from None
        finally:
            game.set_random_order()
        if game.scores[player] != ev.cumulative:
            raise FormatError(
                f"{where}: cumulative score is {game.scores[player]} after replay,"
                f" the file says {ev.cumulative}"
            )
        # racks are only known where the file reveals them: give each player the rack its next reveal shows
        next_is_phony = n < len(record.events) and record.events[n].type == "phony_returned"
        if not game.game_over and not next_is_phony:
            for who in (game.on_turn, 1 - game.on_turn):
                known = known_rack(reveals[n][who])
                if known is not None:
                    try:
                        game.set_rack(who, known)
                    except GameError:
                        pass  # an inconsistent later rack is reported when its own event is replayed
        positions.append(_seen_position(game, ops, reveals[n], known_rack, st, next_is_phony))
    if st.missing_racks:
        lines = ", ".join(str(x) for x in st.missing_racks[:8]) + (" …" if len(st.missing_racks) > 8 else "")
        warnings.append(f"no rack is given on GCG line(s) {lines}: the other tiles of those racks were drawn"
                        " at random")
    if turn is None or turn >= len(record.events):
        if st.out_player >= 0:
            warnings.append(
                f"{nicks[st.out_player]} went out on GCG line {st.out_line} but the file credits no end-rack"
                f" points ({st.out_bonus} by the rules); the scores are the file's"
            )
        elif st.zeros_end:
            warnings.append("the game ended after six scoreless turns but the file gives no rack penalties;"
                            " the scores are the file's")
        elif not game.game_over:
            on_turn = nicks[game.on_turn]
            warnings.append(f"the game is not finished ({len(events)} events, {game.bag_size} tiles in the bag);"
                            f" {on_turn} is on turn")
        if positions and not positions[-1].racks[0] and not game.game_over and game.bag_size > 0:
            warnings.append(f"the file does not show the rack of {nicks[game.on_turn]}, who is on turn")
    first = players[0] if players else (start.on_turn if start is not None else 0)
    if not events and not game.game_over:
        # no event applied: the first mover is on turn, and each player holds the rack the file shows next
        game.set_turn(first)
        for who in (first, 1 - first):
            known = known_rack(reveals[0][who])
            if known is not None:
                try:
                    game.set_rack(who, known)
                except GameError:
                    pass  # reported when the event showing it is replayed
    if start is None:
        begin = Position(board=lex.catalog.board(layout), racks=(known_rack(reveals[0][first]) or [], []),
                         scores=(0, 0), zeros=0, ops=dict(ops), ld=ld)
    else:
        begin = position_from_game(start, ops, show_opponent=start.bag_size == 0)
        begin.racks = (known_rack(reveals[0][first]) or begin.racks[0], begin.racks[1])
    return ReplayResult(game=game, events_applied=len(events), positions=positions, lexicon=lex.name,
                        warnings=warnings, start=begin, start_player=first)


def _seen_position(game: Game, ops: dict[str, str], reveal: tuple[str | None, str | None],
                   known_rack: Callable[[str | None], list[int] | None], st: _Replay,
                   next_is_phony: bool) -> Position:
    """The position as the player on turn knows it (see ReplayResult.positions)."""
    p = game.on_turn
    pos = position_from_game(game, ops)
    own_reveal = known_rack(reveal[p])
    own: list[int]
    if game.game_over:
        own = game.rack(p)
    elif own_reveal is None and game.bag_size > 0:
        own = []                 # the file never shows it: unknown, not made up
    elif next_is_phony and own_reveal is not None:
        own = own_reveal         # the engine's racks wait for the withdrawal
    else:
        own = game.rack(p)       # the engine holds the revealed rack
    opp_rack = game.rack(1 - p)
    if game.bag_size == 0 or game.game_over:
        opp = opp_rack           # the bag is empty: the unseen tiles are the opponent's rack
    else:
        rest = list(opp_rack)
        opp = []
        for t in st.known[1 - p]:
            if t in rest:
                rest.remove(t)
                opp.append(t)
    pos.racks = (list(own), list(opp))
    return pos


def _apply_event(game: Game, ev: GcgEvent, player: int, n: int,
                 reveals: list[tuple[str | None, str | None]], known_rack: Callable[[str | None], list[int] | None],
                 lex: Lexicon, st: _Replay) -> None:
    """One GCG event on the game; errors name the problem, the caller adds the line."""
    ld = lex.ld
    rack = _event_rack(ld, ev.rack, "rack") if ev.rack else None
    end_tiles = _event_rack(ld, ev.exchanged, "end-of-game rack") if ev.type in (
        "end_rack_points", "end_rack_penalty") else []
    if ev.type in ("play", "pass", "exchange"):
        if game.game_over:
            if (ev.type == "pass" and st.out_player >= 0 and player != st.out_player
                    and not st.final_pass_done):
                st.final_pass_done = True  # the final pass, or a turn lost to a failed double challenge
                if rack is not None and sorted(rack) != sorted(game.rack(player)):
                    raise FormatError(
                        f"the rack {excerpt(ev.rack)} is not what is left ({ld.rack_str(game.rack(player))})"
                    )
                return
            raise FormatError("the game is already over")
        game.set_turn(player)
        if rack is not None:
            game.set_rack(player, rack)
        elif ev.type != "pass":
            st.missing_racks.append(ev.line)
        next_rack = known_rack(reveals[n][player])
        before = game.scores[player]
        if ev.type == "play":
            move = parse_move(f"{ev.position} {ev.word}", game.board, ld)
            if rack is None:
                _hold(game, player, move.rack_tiles())
            _force_draws(game, player, move.rack_tiles(), next_rack)
            st.before_play[player] = list(st.known[player])
            st.known[player] = _minus(st.known[player], move.rack_tiles())
            score = play_move(game, move)
            if score != ev.score:
                raise FormatError(f"{format_move(move, ld)} scores {score}, the file says {ev.score}")
        elif ev.type == "exchange":
            if ev.exchanged[:1].isascii() and ev.exchanged[:1].isdigit():
                count = parse_int(ev.exchanged, "the number of exchanged tiles", 1, RACK_SIZE)
                held = game.rack(player)
                if len(held) < count:
                    raise FormatError(f"an exchange of {count} tiles from a rack of {len(held)}")
                tiles = held[:count]
            else:
                tiles = rack_tiles(ld, ev.exchanged, "exchanged tiles", fold_case=True)
                if not 1 <= len(tiles) <= RACK_SIZE:
                    raise FormatError(f"an exchange of {len(tiles)} tiles; 1 to {RACK_SIZE} can be exchanged")
                if rack is None:
                    _hold(game, player, tiles)
            _force_draws(game, player, list(tiles), next_rack)
            st.known[player] = []  # the opponent sees how many tiles went back, not which
            play_move(game, Move("exchange", tiles=tuple(sorted(tiles))))
        else:
            play_move(game, Move("pass"))
        _note_game_end(game, player, before + (ev.score if ev.type == "play" else 0), ev.line, st)
    elif ev.type == "phony_returned":
        # the challenged play comes off: its tiles go back and the turn is lost (a scoreless turn)
        hist = game.history()
        if not hist or hist[-1][0] != player or hist[-1][1] != "place":
            raise FormatError("a phony is withdrawn but the last move is not its play")
        phony = [0 if t & 0x80 else t for t in hist[-1][5] if t]
        game.undo()
        if st.out_player == player:
            st.out_player, st.out_bonus, st.final_pass_done = -1, 0, False
        if rack is not None and sorted(rack) != sorted(game.rack(player)):
            raise FormatError(
                f"the withdrawn play was made from {ld.rack_str(game.rack(player))},"
                f" the file says {excerpt(ev.rack)}"
            )
        # the opponent has seen these tiles: they are known to be on the rack again
        st.known[player] = _union(st.before_play[player], phony)
        game.set_turn(player)
        play_move(game, Move("pass"))
        _note_game_end(game, player, game.scores[player], ev.line, st)
    elif ev.type in ("challenge_bonus", "time_penalty"):
        game.adjust_score(player, ev.score)
    elif ev.type == "end_rack_points":
        value = _rack_value(ld, end_tiles)
        if ev.score not in (2 * value, value):
            raise FormatError(
                f"end-rack points {ev.score:+d}: the rack {excerpt(ev.exchanged)} is worth {value}"
                f" (going out earns {2 * value})"
            )
        if st.out_player >= 0 and st.out_player != player:
            raise FormatError(f"end-rack points for {excerpt(ev.nick)}, who did not go out")
        if game.game_over and st.out_player < 0:
            raise FormatError("end-rack points after the game ended")
        game.adjust_score(player, ev.score)
        game.set_over(True, "standard")
        st.out_player = -1
    elif ev.type == "end_rack_penalty":
        value = _rack_value(ld, end_tiles)
        if -ev.score != value:
            raise FormatError(f"rack penalty {ev.score:+d}: the rack {excerpt(ev.exchanged)} is worth {value}")
        game.adjust_score(player, ev.score)
        st.zeros_end = False
        if not game.game_over:
            game.set_over(True, "consecutive_zeros")
    else:
        raise FormatError(f"unknown event type {excerpt(str(ev.type))}")


def _note_game_end(game: Game, player: int, expected: int, line: int, st: _Replay) -> None:
    """The engine settles the end of the game at once (2 x the opponent's rack to whoever goes out, rack
    penalties after six scoreless turns); a GCG record writes those as separate events, so the engine's
    settlement is taken back here and the file's events apply it."""
    if not game.game_over:
        return
    ld = game.ld
    if game.end_reason_name == "standard":
        bonus = game.scores[player] - expected
        game.adjust_score(player, -bonus)
        st.out_player, st.out_bonus, st.out_line, st.final_pass_done = player, bonus, line, False
    elif game.end_reason_name == "consecutive_zeros":
        for who in (0, 1):
            game.adjust_score(who, _rack_value(ld, game.rack(who)))
        st.zeros_end = True


def _hold(game: Game, player: int, tiles: Sequence[int]) -> None:
    """Make sure `player` (whose rack the file does not show) holds `tiles`: the rest of the rack is kept
    where it can be, and the rack is then filled at random."""
    cur = game.rack(player)
    if not _minus(list(tiles), cur):
        return
    new = list(tiles)
    for t in _minus(cur, tiles):
        if len(new) < len(cur):
            new.append(t)
    game.set_rack(player, new[:RACK_SIZE])
    game.fill_rack(player)


def _event_rack(ld: LetterDistribution, text: str, what: str) -> list[int]:
    tiles = rack_tiles(ld, text, what, fold_case=True)
    if len(tiles) > RACK_SIZE:
        raise FormatError(f"{what} {excerpt(text)} has {len(tiles)} tiles; at most {RACK_SIZE}")
    return tiles


def _force_draws(game: Game, player: int, used: list[int], next_rack: list[int] | None) -> None:
    """Make the coming draw give `player` the rack the file shows next, when the bag holds those tiles."""
    if next_rack is None:
        return
    kept = game.rack(player)
    for t in used:
        if t in kept:
            kept.remove(t)
    drawn = list(next_rack)
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
