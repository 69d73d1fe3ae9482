"""Inference of the opponent's kept tiles from their play, and from their turns before it (docs/inference.md).

Only public information is used: the board before each of the opponent's turns, the turn itself (an exchange
only by its tile count), the tiles the player now on turn cannot see, and tiles known for certain (a withdrawn
phony's). For each rack the opponent could have held, the engine's static evaluation of the rack's moves gives
the likelihood of the play: `tolerance` (1 when the play is within `tolerance` points of equity of the rack's
best, else 0) or `softmax` (exp(value / T) over the sum for the rack's top moves). Weighted by how likely their
draw was, the racks give a distribution over the leave the opponent kept. Their earlier turns (back to an
exchange, or `history` turns) multiply in the likelihood of what they did then with the tiles of this rack they
may already have held (_history_factor). The racks are enumerated exhaustively when the distinct leaves number
at most `max_racks`, else `max_racks` random draws are judged (a Monte Carlo estimate of the same
distribution). The judging runs in engine_cy.infer with the GIL released."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from engine_cy.cross_set import compute_all
from engine_cy.infer import InferWorker, count_leaves, enumerate_leaves, sample_leaves, split_racks
from engine_cy.rules import play_error, score_play
from macondo_server.engine.facade import EQUITY_SCALE, Engine
from macondo_server.engine.lexicon import Lexicon
from macondo_server.engine.replay import ReplayResult
from macondo_server.model.coords import format_coord, parse_coord
from macondo_server.model.gcg import GcgGame
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError, check_text, excerpt
from macondo_server.model.tiles import RACK_SIZE, board_tile, split_labels

DEFAULT_TOLERANCE = 3.0       # points of equity, as Macondo's classic rangefinder
MAX_TOLERANCE = 1000.0
MODELS = ("tolerance", "softmax")
DEFAULT_MODEL = "softmax"
VALUES = ("equity", "winpct")
DEFAULT_VALUE = "equity"
DEFAULT_TEMPERATURE = 2.0     # points of equity (win percentage points with value winpct)
MAX_TEMPERATURE = 1e9           # large enough for the uniform limit
DEFAULT_TOP_N = 20            # the rack's moves the softmax's sum runs over, best by equity first
MAX_TOP_N = 1000
DEFAULT_HISTORY = 8           # earlier turns of the opponent weighed (each back to an exchange at most)
MAX_HISTORY = 100
HISTORY_MASS = 0.999          # an earlier turn re-weighs the racks holding this share of the posterior
DEFAULT_MAX_RACKS = 50_000
MAX_RACKS = 10_000_000
CHUNK = 256                   # racks per worker call between stop checks


@dataclass
class InferOptions:
    tolerance: float = DEFAULT_TOLERANCE
    max_racks: int = DEFAULT_MAX_RACKS
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    seed: int = 0
    lexicon: str | None = None
    model: str = DEFAULT_MODEL           # tolerance | softmax
    temperature: float = DEFAULT_TEMPERATURE
    top_n: int = DEFAULT_TOP_N
    value: str = DEFAULT_VALUE           # equity | winpct (the softmax's value of a move)
    history: int = DEFAULT_HISTORY       # earlier turns of the opponent weighed, when they are given

    def validate(self) -> None:
        if not (isinstance(self.tolerance, (int, float)) and math.isfinite(self.tolerance)
                and 0 <= self.tolerance <= MAX_TOLERANCE):
            raise FormatError(f"inference tolerance must be 0 to {MAX_TOLERANCE:g} points, got {self.tolerance}")
        if not 1 <= self.max_racks <= MAX_RACKS:
            raise FormatError(f"inference racks must be 1 to {MAX_RACKS}, got {self.max_racks}")
        if not 1 <= self.threads <= 256:
            raise FormatError(f"threads must be 1 to 256, got {self.threads}")
        if self.model not in MODELS:
            raise FormatError(f"inference model must be tolerance or softmax, got {excerpt(str(self.model))}")
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
                and 0 <= self.temperature <= MAX_TEMPERATURE):
            raise FormatError(f"inference temperature must be 0 to {MAX_TEMPERATURE:g}, got {self.temperature}")
        if not 1 <= self.top_n <= MAX_TOP_N:
            raise FormatError(f"inference top moves must be 1 to {MAX_TOP_N}, got {self.top_n}")
        if self.value not in VALUES:
            raise FormatError(f"inference value must be equity or winpct, got {excerpt(str(self.value))}")
        if not 0 <= self.history <= MAX_HISTORY:
            raise FormatError(f"inference history must be 0 to {MAX_HISTORY} turns, got {self.history}")

    def describe(self) -> str:
        """The model in a few words, as the outputs print it."""
        if self.model == "tolerance":
            return f"tolerance {self.tolerance:g} points"
        unit = "points" if self.value == "equity" else "win % points"
        return f"softmax, T {self.temperature:g} {unit} over each rack's top {self.top_n} moves"


@dataclass
class LastPlay:
    """The opponent's last play as the player on turn saw it, on the board before it."""
    kind: str                           # "place", "exchange" or "pass" (a pass only as an earlier turn)
    before: Position                    # the position before the play (board; racks[0] = the inferrer's)
    move: Move | None = None            # placements (a withdrawn phony too)
    n_exchanged: int = 0
    withdrawn: bool = False             # a phony challenged off: its tiles are back on the opponent's rack
    text: str = ""
    spread: int = 0                     # the mover's score minus the inferrer's, before the play
    weighed: bool = True                # an earlier pass read from a game record is not (it may be a turn lost
                                        # to a challenge): the rack carries over unweighed

    @property
    def played(self) -> list[int]:
        return list(self.move.rack_tiles()) if self.move is not None else []


@dataclass
class InferredLeave:
    tiles: tuple[int, ...]
    text: str
    posterior: float                     # 0..1 among the consistent racks
    prior: float                         # 0..1 for a random draw of that many tiles from the pool
    racks: int                           # racks judged that kept it (draws when sampled)


@dataclass
class InferResult:
    play: str
    kind: str
    known: list[int]                     # tiles certainly on the opponent's rack (a withdrawn phony)
    leave_size: int                      # tiles kept by the play (exchange: 7 - n)
    method: str                          # "exhaustive", "sampled", "none" (nothing kept)
    racks_judged: int
    racks_consistent: int
    distinct_leaves: int                 # distinct leaves the pool can supply
    leaves: list[InferredLeave]          # consistent leaves, most likely first
    tile_found: list[float]              # per letter: expected count in the kept leave, inferred
    tile_expected: list[float]           # the same for a random draw
    tolerance: float
    seconds: float
    stopped: bool
    pool: list[int]                      # counts by letter the leave is drawn from
    # for the simulation: the consistent leaves (counts by letter) and their weights
    leave_counts: np.ndarray | None = None
    leave_weights: np.ndarray | None = None
    model: str = "tolerance"
    temperature: float = 0.0             # the softmax's
    describe: str = ""                   # the model in a few words (InferOptions.describe)
    history: list[str] = field(default_factory=list)   # the earlier turns weighed, oldest first
    history_racks: int = 0               # racks judged for them
    effective_leaves: float = 0.0        # exp(entropy) of the posterior: equally likely leaves it is worth


# ------------------------------------------------------------------ the last play


def _exchange_count(word: str, q: str) -> int:
    if word.isascii() and word.isdigit() and len(word) <= 2:
        n = int(word)
    elif word and all(ch == "?" or ch.isalpha() for ch in word) and len(word) <= RACK_SIZE:
        n = len(word)    # the tiles themselves are not known to the player on turn: only their number counts
    else:
        raise FormatError(f"bad exchange {q}: expected 'exch N' (tiles exchanged, 1 to {RACK_SIZE})")
    if not 1 <= n <= RACK_SIZE:
        raise FormatError(f"bad exchange {q}: exchange 1 to {RACK_SIZE} tiles")
    return n


def last_play_on(pos: Position, text: str, lex: Lexicon, withdrawn: bool = False, allow_pass: bool = False) -> LastPlay:
    """The opponent's last play `text` in the position `pos` now (the player on turn is the inferrer):
    a placement as it stands on the board (letters outside parentheses are the tiles it put down, '.' or
    (X) the tiles it played through), `exch N` (an exchange of N tiles), or with `withdrawn` a phony that
    was challenged off (not on the board; its tiles are back on the opponent's rack). `allow_pass`: a pass is
    taken too (an earlier turn; the last one must keep tiles to infer)."""
    text = check_text(text, "last play", 64)
    s = " ".join(text.split())
    q = excerpt(text)
    if not s:
        raise FormatError("empty last play")
    parts = s.split(" ")
    ld = pos.ld
    if parts[0].lower() in ("exch", "exchange", "-"):
        if withdrawn:
            raise FormatError("a withdrawn phony is a placement, not an exchange")
        if len(parts) != 2:
            raise FormatError(f"bad exchange {q}: expected 'exch N'")
        return LastPlay("exchange", pos, None, _exchange_count(parts[1], q), False, s,
                        pos.scores[1] - pos.scores[0])
    if s.lower() in ("pass", "(pass)"):
        if allow_pass:
            if withdrawn:
                raise FormatError("a withdrawn phony is a placement, not a pass")
            return LastPlay("pass", pos, None, 0, False, "pass", pos.scores[1] - pos.scores[0])
        raise FormatError("a pass reveals nothing about the rack: nothing to infer")
    if len(parts) != 2:
        raise FormatError(f"bad last play {q}: expected 'COORD WORD' or 'exch N'")
    board = pos.board.copy()
    if withdrawn:
        move = parse_move(s, board, ld)
    else:
        # lift the tiles the play put down off the board: the board before it
        row, col, vertical = parse_coord(parts[0], board.dim)
        dr, dc = (1, 0) if vertical else (0, 1)
        inside = False
        k = 0
        for lab in split_labels(parts[1], f"bad last play {q}:"):
            if lab == "(":
                inside = True
                continue
            if lab == ")":
                inside = False
                continue
            r, c = row + dr * k, col + dc * k
            k += 1
            if not (0 <= r < board.dim and 0 <= c < board.dim):
                raise FormatError(f"bad last play {q}: the word runs off the board")
            if inside or lab == ".":
                continue
            want = board_tile(ld, lab, f"bad last play {q}")
            if board.tile(r, c) != want:
                held = ld.label(board.tile(r, c)) if board.tile(r, c) else "nothing"
                raise FormatError(f"last play {q} is not on the board: {format_coord(r, c, False)} holds {held}, "
                                  f"not {lab}")
            board.set_tile(r, c, 0)
        move = parse_move(s, board, ld)
    if move.kind != "place":
        raise FormatError(f"bad last play {q}: expected a placement or 'exch N'")
    why = play_error(board, lex.kwg, ld, move.row, move.col, move.vertical, list(move.tiles))
    if why and not (withdrawn and why.endswith(" is not a word in the lexicon")):
        raise FormatError(f"last play {q} is not a legal play on the board before it: {why}")
    before = Position(board, pos.racks, pos.scores, pos.zeros, dict(pos.ops), ld)
    spread = pos.scores[1] - pos.scores[0]
    if not withdrawn:     # the score now counts the play
        scored = board.copy()
        compute_all(scored, lex.kwg, ld)
        spread -= int(score_play(scored, ld, move.row, move.col, move.vertical, list(move.tiles), pos.bingo_bonus))
    return LastPlay("place", before, move, 0, withdrawn, s, spread)


def last_play_before(pos_before: Position, text: str, lex: Lexicon, withdrawn: bool = False,
                     allow_pass: bool = False) -> LastPlay:
    """The same from the position BEFORE the play, with the opponent on turn there: the CGP's second rack is
    the inferrer's; the rack of the player on turn (the opponent) is never looked at."""
    ld = pos_before.ld
    ours = Position(pos_before.board.copy(), (list(pos_before.racks[1]), []), pos_before.scores[::-1],
                    pos_before.zeros, dict(pos_before.ops), ld)
    text = check_text(text, "last play", 64)
    s = " ".join(text.split())
    parts = s.split(" ")
    if parts and parts[0].lower() in ("exch", "exchange", "-") or (allow_pass and s.lower() in ("pass", "(pass)")):
        return last_play_on(ours, s, lex, withdrawn, allow_pass)
    if s.lower() in ("pass", "(pass)"):
        raise FormatError("a pass reveals nothing about the rack: nothing to infer")
    move = parse_move(s, ours.board, ld)
    if move.kind != "place":
        raise FormatError(f"bad last play {excerpt(text)}: expected a placement or 'exch N'")
    why = play_error(ours.board, lex.kwg, ld, move.row, move.col, move.vertical, list(move.tiles))
    if why and not (withdrawn and why.endswith(" is not a word in the lexicon")):
        raise FormatError(f"last play {excerpt(text)} is not a legal play here: {why}")
    return LastPlay("place", ours, move, 0, withdrawn, s, pos_before.scores[0] - pos_before.scores[1])


_NOT_MOVES = ("challenge_bonus", "time_penalty", "end_rack_points", "end_rack_penalty")


def last_play_from_record(record: GcgGame, res: ReplayResult, lex: Lexicon) -> LastPlay:
    """From a replayed GCG record (gamestate.replay_gcg up to some turn): the opponent's last play before that
    turn as the player then on turn saw it, on the position they know. A FormatError when there is none to
    infer from (their last move a pass, our own move since, no move yet)."""
    pos = res.positions[-1] if res.positions else res.start
    game = res.game
    on_turn = game.on_turn if res.positions else res.start_player
    nicks = [p[0] for p in record.players]
    events = record.events[:res.events_applied]
    history = game.history()
    for k in range(len(events) - 1, -1, -1):
        ev = events[k]
        if ev.type in _NOT_MOVES:
            continue
        player = nicks.index(ev.nick)
        if player == on_turn:
            break
        if ev.type == "play":
            mine = [h for h in history if h[0] == player]
            if not mine or mine[-1][1] != "place":
                break
            _, kind, row, col, vertical, tiles, _, _ = mine[-1]
            text = format_move(Move(kind, row, col, vertical, tuple(tiles)), pos.ld, pos.board, style="table")
            return last_play_on(pos, text.strip(), lex)
        if ev.type == "exchange":
            return last_play_on(pos, f"exch {ev.exchanged}", lex)
        if ev.type == "phony_returned" and k > 0 and events[k - 1].type == "play":
            return last_play_on(pos, f"{events[k - 1].position} {events[k - 1].word}", lex, withdrawn=True)
        break
    raise FormatError("nothing to infer from: the opponent's last move before this turn was not a play or an "
                      "exchange")


def _placed_text(before: Board, after: Board, coord: str, ld: LetterDistribution) -> str:
    """A placement that took `before` to `after`, from its coordinate: the word runs from there while `after`
    has tiles; the squares empty in `before` are the tiles it put down. As it stands on `after`."""
    row, col, vertical = parse_coord(coord, after.dim)
    dr, dc = (1, 0) if vertical else (0, 1)
    tiles = []
    r, c = row, col
    while 0 <= r < after.dim and 0 <= c < after.dim and after.tile(r, c):
        tiles.append(0 if before.tile(r, c) else after.tile(r, c))
        r, c = r + dr, c + dc
    if not any(tiles):
        raise FormatError(f"the record's play at {excerpt(coord)} put no tile down")
    return format_move(Move("place", row, col, vertical, tuple(tiles)), ld, after, style="table").strip()


def history_from_record(record: GcgGame, res: ReplayResult, lex: Lexicon, limit: int = MAX_HISTORY) -> list[LastPlay]:
    """The opponent's turns before the last play last_play_from_record finds, oldest first, each as the
    player now on turn saw it: plays, withdrawn phonies and passes (a pass carries the rack over unweighed: a
    record writes a turn lost to a challenge the same way), back to their first turn or an exchange (not
    included: its kept tiles are unknown), at most `limit`. Empty when there is nothing to infer from."""
    on_turn = res.game.on_turn if res.positions else res.start_player
    nicks = [p[0] for p in record.players]
    events = record.events[:res.events_applied]
    ld = lex.ld

    def after(i: int) -> Position:
        return res.positions[i]

    def board_before(i: int) -> Board:
        return res.positions[i - 1].board if i > 0 else res.start.board

    # the last play itself (as last_play_from_record)
    k = len(events) - 1
    while k >= 0 and events[k].type in _NOT_MOVES:
        k -= 1
    if k < 0 or nicks.index(events[k].nick) == on_turn or events[k].type not in ("play", "exchange",
                                                                                  "phony_returned"):
        return []
    if events[k].type == "exchange":
        return []
    i = k - 2 if events[k].type == "phony_returned" else k - 1
    out: list[LastPlay] = []
    while i >= 0 and len(out) < limit:
        ev = events[i]
        if ev.type in _NOT_MOVES or nicks.index(ev.nick) == on_turn:
            i -= 1
            continue
        if ev.type == "phony_returned" and i > 0 and events[i - 1].type == "play":
            out.append(last_play_on(after(i), f"{events[i - 1].position} {events[i - 1].word}", lex, withdrawn=True))
            i -= 2
            continue
        if ev.type == "pass":
            turn = last_play_on(after(i), "pass", lex, allow_pass=True)
            turn.weighed = False
            out.append(turn)
        elif ev.type == "play":
            out.append(last_play_on(after(i), _placed_text(board_before(i), after(i).board, ev.position, ld), lex))
        else:
            break
        i -= 1
    return out[::-1]


# ------------------------------------------------------------------ inference


def _prior(pool: list[int], counts: Iterable[int]) -> float:
    n = sum(pool)
    k = int(sum(int(c) for c in counts))
    total = math.comb(n, k)
    ways = 1
    for p, c in zip(pool, counts, strict=False):
        ways *= math.comb(p, int(c))
    return ways / total if total else 0.0


def _log_prior(pool: list[int], counts: np.ndarray) -> np.ndarray:
    """log of _prior for each row of counts [n, size] (all of one size)."""
    k = int(counts[0].sum()) if len(counts) else 0
    top = RACK_SIZE + 1
    table = np.array([[math.lgamma(p + 1) - math.lgamma(c + 1) - math.lgamma(p - c + 1) if c <= p else -math.inf
                       for c in range(top)] for p in pool], dtype=np.float64)
    n = sum(pool)
    total = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) if 0 <= k <= n else 0.0
    cols = np.arange(len(pool))
    out: np.ndarray = table[cols[None, :], np.minimum(counts.astype(np.int64), RACK_SIZE)].sum(axis=1) - total
    return out


def _opening_penalty(lp: LastPlay) -> int:
    """The vowel penalty (millipoints) move generation takes from an opening play's equity, for the play."""
    board = lp.before.board
    if lp.kind != "place" or lp.move is None or board.n_tiles != 0:
        return 0
    m = lp.move
    d = 1 if m.vertical else 0
    pen = 0
    for k, t in enumerate(m.tiles):
        i = (m.row if m.vertical else m.col) + k
        if t and lp.before.ld.is_vowel(t & 0x7F):
            pen += board.opening_penalty(d, i)
    return pen


def _bag_before(lp: LastPlay) -> int:
    """The bag as the opponent saw it before the turn: the tiles the inferrer could not see then, less their
    full rack."""
    return sum(lp.before.unseen_counts(0)) - RACK_SIZE


def _workers(lp: LastPlay, lex: Lexicon, opts: InferOptions, threads: int) -> list[InferWorker]:
    """The judges of one turn of the opponent, on the board before it, by the options' model."""
    pos = lp.before
    ld = pos.ld
    board = pos.board.copy()
    compute_all(board, lex.kwg, ld)
    bb = pos.bingo_bonus
    bag = _bag_before(lp)
    score = 0
    if lp.kind == "place":
        assert lp.move is not None
        score = int(score_play(board, ld, lp.move.row, lp.move.col, lp.move.vertical, list(lp.move.tiles), bb))
    model: dict[str, object] = {}
    if opts.model == "softmax":
        model = {"model": "softmax", "temperature": float(opts.temperature), "top_n": opts.top_n,
                 "win_table": lex.win_table() if opts.value == "winpct" else None, "spread": float(lp.spread),
                 "unseen": bag + RACK_SIZE, "phony": lp.withdrawn}
    tol_mp = int(round(opts.tolerance * EQUITY_SCALE))
    return [InferWorker(board, lex.kwg, lex.klv, ld, lp.kind, lp.played if lp.kind == "place" else [],  # type: ignore[arg-type]
                        score, lp.n_exchanged, bag, tol_mp, bb, play_adjust=-_opening_penalty(lp),
                        **model)  # type: ignore[arg-type]
            for _ in range(threads)]


def _judge(workers: list[InferWorker], leaves: np.ndarray, stop: threading.Event | None,
           deadline: float | None) -> tuple[np.ndarray, np.ndarray, int]:
    """Judge every leave (counts [n, size]) with a turn's workers: (log-likelihood, kept leaves, judged), in
    the order given when all were judged (else the judged ones first)."""
    n, size = leaves.shape
    accepted = np.zeros(n, dtype=np.uint8)
    kept = np.zeros((n, size), dtype=np.uint8)
    best_eq = np.zeros(n, dtype=np.int32)
    play_eq = np.zeros(n, dtype=np.int32)
    loglik = np.full(n, -np.inf, dtype=np.float64)
    weights = np.zeros(n, dtype=np.float64)
    judged = _run_workers(workers, leaves, weights, accepted, kept, best_eq, play_eq, stop, None, deadline,
                          loglik=loglik)
    return loglik, kept, judged


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a uint8 matrix and, for each row, the index of its distinct row."""
    if len(rows) == 0:
        return rows, np.zeros(0, dtype=np.int64)
    view = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1])))[:, 0]
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1).astype(np.int64)


def _group_logsumexp(groups: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """log of the sum of exp(values) by group (0..n-1); -inf for an empty group."""
    top = np.full(n, -np.inf)
    np.maximum.at(top, groups, values)
    safe = np.where(np.isfinite(top), top, 0.0)
    sums = np.bincount(groups, weights=np.exp(values - safe[groups]), minlength=n)
    with np.errstate(divide="ignore"):
        return np.where(sums > 0, np.log(sums) + safe, -np.inf)


class _History:
    """The opponent's earlier turns, newest first, and what weighing them cost."""

    def __init__(self, lex: Lexicon, turns: list[LastPlay], opts: InferOptions, stop: threading.Event | None,
                 deadline: float | None) -> None:
        self.lex = lex
        self.turns = turns
        self.opts = opts
        self.stop = stop
        self.deadline = deadline
        self.racks_judged = 0
        self.stopped = False
        self.used = 0

    def _judged(self, turn: LastPlay, racks: np.ndarray) -> np.ndarray | None:
        """The log-likelihood of `turn` for each of `racks` (counts [n, size]), or None when the run was stopped
        before all were judged (the history is then left out: `stopped`)."""
        ll, _, judged = _judge(_workers(turn, self.lex, self.opts, self.opts.threads),
                               np.ascontiguousarray(racks), self.stop, self.deadline)
        self.racks_judged += judged
        if judged < len(racks):
            self.stopped = True
            return None
        return ll

    def factor(self, racks: np.ndarray, logmass: np.ndarray, j: int = 0) -> np.ndarray:
        """log of the earlier turns' likelihood (turns[j:]) given the opponent's rack at the turn after turn j
        (counts [n, size]; logmass: the log posterior of each rack so far, which decides the racks
        re-weighed): the sum, over the leaves turn j can have kept, of their probability given the rack times
        the likelihood of turn j with that leave and of the turns before it."""
        n = len(racks)
        zero = np.zeros(n)
        if j >= len(self.turns) or n == 0 or self.stopped:
            return zero
        turn = self.turns[j]
        if turn.kind == "exchange":
            return zero
        # the racks holding HISTORY_MASS of the mass, at most max_racks of them
        finite = np.isfinite(logmass)
        if not finite.any():
            return zero
        mass = np.where(finite, np.exp(logmass - logmass[finite].max()), 0.0)
        order = np.argsort(-mass, kind="stable")
        cum = np.cumsum(mass[order])
        keep_n = int(np.searchsorted(cum, HISTORY_MASS * cum[-1]) + 1)
        keep = order[:min(keep_n, self.opts.max_racks, int(finite.sum()))]
        sub = np.ascontiguousarray(racks[keep])
        ld = turn.before.ld
        size = ld.size
        if turn.kind == "pass" or turn.withdrawn:
            # the rack stays as it was: the turn's own likelihood on it, then the turns before
            holds: np.ndarray = np.ones(len(sub), dtype=bool)
            leaves = sub
            if turn.withdrawn:
                phony = np.bincount(np.array(turn.played, dtype=np.int64), minlength=size).astype(np.int16)
                holds = np.asarray((sub.astype(np.int16) >= phony[None, :]).all(axis=1))
                leaves = np.where(holds[:, None], sub.astype(np.int16) - phony[None, :], 0).astype(np.uint8)
            if turn.weighed:
                judged_ll = self._judged(turn, leaves)
                if judged_ll is None:
                    return zero
                ll = judged_ll
            else:
                ll = np.zeros(len(sub))
            ll = np.where(holds, ll, -np.inf)
            self.used = max(self.used, j + 1)
            got = ll + self.factor(sub, logmass[keep] + ll, j + 1)
        else:
            played_list = turn.played
            played = np.bincount(np.array(played_list, dtype=np.int64), minlength=size)
            avail = turn.before.unseen_counts(0)
            # (every rack here is a full one: the tiles of a play and the leave of a rack of 7 it kept)
            k = RACK_SIZE - len(played_list)
            parents, leaves, prob = split_racks(sub, k, [int(x) for x in played], avail)
            distinct, inverse = _unique_rows(leaves)
            judged_ll = self._judged(turn, distinct)
            if judged_ll is None:
                return zero
            ll = judged_ll
            self.used = max(self.used, j + 1)
            racks_before = (distinct.astype(np.int16) + played[None, :].astype(np.int16)).astype(np.uint8)
            with np.errstate(divide="ignore"):
                row_log = np.log(prob) + ll[inverse]
                child_mass = _group_logsumexp(inverse, logmass[keep][parents] + row_log, len(distinct))
            earlier = self.factor(racks_before, child_mass, j + 1)
            got = _group_logsumexp(parents, row_log + earlier[inverse], len(sub))
        # the racks not re-weighed take the mass-weighted mean factor of those that were
        out = np.zeros(n)
        out[keep] = got
        rest = np.ones(n, dtype=bool)
        rest[keep] = False
        if rest.any():
            w = mass[keep]
            fin = np.isfinite(got)
            mean = -np.inf
            if fin.any() and w[fin].sum() > 0:
                top = got[fin].max()
                mean = float(np.log((w[fin] * np.exp(got[fin] - top)).sum() / w.sum()) + top)
            out[rest] = mean
        return out


def infer(engine: Engine, lp: LastPlay, opts: InferOptions, known: list[int] | None = None,
          stop: threading.Event | None = None, progress: Callable[[int, int], None] | None = None,
          deadline: float | None = None, history: list[LastPlay] | None = None) -> InferResult:
    """Infer the leave the opponent kept with `lp`. `known`: tiles certainly on their rack now (a withdrawn
    phony's, which default to the phony's tiles). `history`: their turns before `lp`, oldest first (the last
    opts.history of them back to an exchange are weighed). `stop` set, or time.monotonic() past `deadline`,
    ends the judging early: the result then covers the racks judged (a random part of the enumeration), and
    an earlier turn left unfinished is not weighed."""
    opts.validate()
    t0 = time.monotonic()
    if lp.kind == "pass":
        raise FormatError("a pass reveals nothing about the rack: nothing to infer")
    pos = lp.before
    ld = pos.ld
    lex = engine.lexicon_for(pos, opts.lexicon)
    if lex.ld.size != ld.size:
        raise FormatError("the lexicon's letter distribution does not match the position's")
    for h in history or []:
        if h.before.ld.size != ld.size:
            raise FormatError("the history's positions are not in the position's letter distribution")
    # tiles the inferrer cannot see now: the bag and the opponent's rack (the board now holds the play)
    unseen = pos.unseen_counts(0)
    played = lp.played
    if lp.kind == "place" and not lp.withdrawn:
        for t in played:
            unseen[t] -= 1
            if unseen[t] < 0:
                raise FormatError(f"last play {excerpt(lp.text)} uses more {ld.label(t)} tiles than are unseen")
    if lp.withdrawn:
        known = list(played) if known is None else list(known)
        rest = list(known)
        for t in played:
            if t not in rest:
                raise FormatError("the known opponent tiles must include the withdrawn phony's tiles")
            rest.remove(t)
        if rest:
            raise FormatError("with a withdrawn phony the known opponent tiles are the phony's tiles")
    else:
        known = []
    pool = list(unseen)
    for t in known:
        pool[t] -= 1
        if pool[t] < 0:
            raise FormatError(f"known opponent tile {ld.label(t)} is not among the unseen tiles")
    # the bag as the opponent saw it before the play: the unseen tiles then, less their full rack
    unseen_before = sum(unseen) + (len(played) if lp.kind == "place" and not lp.withdrawn else 0)
    bag_before = unseen_before - RACK_SIZE
    if lp.kind == "exchange":
        if bag_before < RACK_SIZE:
            raise FormatError(f"an exchange needs {RACK_SIZE} tiles in the bag; there were {max(0, bag_before)}")
        k = RACK_SIZE
        leave_size = RACK_SIZE - lp.n_exchanged
    else:
        if bag_before <= 0:
            raise FormatError("the bag was empty before the play: the opponent's rack is known, nothing to infer")
        k = RACK_SIZE - len(played)
        leave_size = k
    if k > sum(pool):
        raise FormatError("too few unseen tiles for the opponent's rack")
    expected = [leave_size * p / sum(pool) if sum(pool) else 0.0 for p in pool]
    summary = opts.describe()
    if lp.kind == "place" and k == 0:
        return InferResult(lp.text, lp.kind, known, 0, "none", 0, 0, 1, [], [0.0] * ld.size, expected,
                           opts.tolerance, time.monotonic() - t0, False, pool, model=opts.model,
                           temperature=opts.temperature, describe=summary)
    distinct = count_leaves(pool, k)
    if distinct <= opts.max_racks:
        method = "exhaustive"
        cand, weights = enumerate_leaves(pool, k)
        # judged in a random order, so that a stop leaves an unbiased part of the enumeration
        perm = np.random.default_rng(opts.seed & 0xFFFFFFFFFFFFFFFF).permutation(len(cand))
        cand = np.ascontiguousarray(cand[perm])
        weights = np.ascontiguousarray(weights[perm])
    else:
        method = "sampled"
        cand = sample_leaves(pool, k, opts.max_racks, opts.seed & 0xFFFFFFFFFFFFFFFF)
        weights = np.ones(len(cand), dtype=np.float64)
    n = len(cand)
    workers = _workers(lp, lex, opts, opts.threads)
    accepted = np.zeros(n, dtype=np.uint8)
    kept = np.zeros((n, ld.size), dtype=np.uint8)
    best_eq = np.zeros(n, dtype=np.int32)
    play_eq = np.zeros(n, dtype=np.int32)
    loglik = np.full(n, -np.inf, dtype=np.float64)
    judged = _run_workers(workers, cand, weights, accepted, kept, best_eq, play_eq, stop, progress, deadline,
                          loglik=loglik)
    stopped = judged < n
    cand, weights, kept, loglik = cand[:judged], weights[:judged], kept[:judged], loglik[:judged]
    # each rack's log posterior weight: its draw's weight times the likelihood of the play
    with np.errstate(divide="ignore"):
        logw = np.log(weights) + loglik
    # the earlier turns, newest first, back to an exchange
    turns = list(reversed((history or [])[-opts.history:] if opts.history else []))
    for i, h in enumerate(turns):
        if h.kind == "exchange":
            turns = turns[:i + 1]
            break
    hist = _History(lex, turns, opts, stop, deadline)
    if turns and np.isfinite(logw).any():
        played_counts = np.bincount(np.array(played if lp.kind == "place" else [], dtype=np.int64),
                                    minlength=ld.size).astype(np.int16)
        racks = (cand.astype(np.int16) + played_counts[None, :]).astype(np.uint8)
        logw = logw + hist.factor(racks, logw)
        stopped = stopped or hist.stopped
    # the racks by the leave they keep, weighted
    finite = np.isfinite(logw)
    idx = np.nonzero(finite)[0]
    if len(idx):
        w_rack = np.exp(logw[idx] - logw[idx].max())
        leaves_u, inv = _unique_rows(kept[idx])
        w_leave: np.ndarray = np.bincount(inv, weights=w_rack, minlength=len(leaves_u))
        n_leave: np.ndarray = np.bincount(inv, minlength=len(leaves_u))
    else:
        leaves_u = np.zeros((0, ld.size), dtype=np.uint8)
        w_leave = np.zeros(0)
        n_leave = np.zeros(0, dtype=np.int64)
    nz = w_leave > 0
    leaves_u, w_leave, n_leave = leaves_u[nz], w_leave[nz], n_leave[nz]
    total = float(w_leave.sum())
    order = np.lexsort((np.arange(len(w_leave)), -w_leave))
    leaves_u, w_leave, n_leave = leaves_u[order], w_leave[order], n_leave[order]
    post = w_leave / total if total > 0 else w_leave
    priors = np.exp(_log_prior(pool, leaves_u)) if len(leaves_u) else np.zeros(0)
    # each leave's tiles, in letter order: the letters of the flattened counts, cut at the leaves' sizes
    flat = np.repeat(np.tile(np.arange(ld.size), len(leaves_u)), leaves_u.reshape(-1)).tolist()
    ends = np.cumsum(leaves_u.sum(axis=1, dtype=np.int64)).tolist()
    leaves: list[InferredLeave] = []
    begin = 0
    for end, p_j, q_j, c_j in zip(ends, post.tolist(), priors.tolist(), n_leave.tolist(), strict=True):
        tiles = tuple(flat[begin:end])
        begin = end
        leaves.append(InferredLeave(tiles, ld.rack_str(tiles) or "-", p_j, q_j, c_j))
    found = [0.0] * ld.size
    if total > 0:
        found = [float(x) for x in (leaves_u.astype(np.float64) * post[:, None]).sum(axis=0)]
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = float(np.exp(-(post * np.log(np.where(post > 0, post, 1.0))).sum())) if total > 0 else 0.0
    return InferResult(lp.text, lp.kind, known, leave_size, method, judged, int(len(idx)), distinct, leaves,
                       found, expected, opts.tolerance, time.monotonic() - t0, stopped, pool,
                       np.ascontiguousarray(leaves_u), np.ascontiguousarray(w_leave), model=opts.model,
                       temperature=opts.temperature, describe=summary,
                       history=[h.text for h in reversed(turns[:hist.used])], history_racks=hist.racks_judged,
                       effective_leaves=effective)


def _run_workers(workers: list[InferWorker], cand: np.ndarray, weights: np.ndarray, accepted: np.ndarray,
                 kept: np.ndarray, best_eq: np.ndarray, play_eq: np.ndarray, stop: threading.Event | None,
                 progress: Callable[[int, int], None] | None, deadline: float | None = None,
                 loglik: np.ndarray | None = None) -> int:
    """Judge every candidate, split in contiguous slices between the workers; returns how many were judged
    (all of them unless stopped: then the judged ones are moved to the front of every array)."""
    n = len(cand)
    nt = len(workers)
    bounds = [n * t // nt for t in range(nt + 1)]
    done = [0] * nt

    def work(t: int) -> None:
        lo, hi = bounds[t], bounds[t + 1]
        pos = lo
        w = workers[t]
        while pos < hi and not w.stop:
            end = min(hi, pos + CHUNK)
            got = w.run(cand, pos, end, accepted, kept, best_eq, play_eq, loglik)
            done[t] = pos + got - lo
            if got < end - pos:
                break
            pos = end

    def should_stop() -> bool:
        return (stop is not None and stop.is_set()) or (deadline is not None and time.monotonic() >= deadline)

    if should_stop():  # already stopped or past the deadline: judge nothing (a fast machine ends before a poll)
        for w in workers:
            w.stop = 1
    threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(nt)]
    for th in threads:
        th.start()
    last = time.monotonic()
    while any(th.is_alive() for th in threads):
        for th in threads:
            th.join(0.02)
        if should_stop():
            for w in workers:
                w.stop = 1
        if progress is not None and time.monotonic() - last >= 0.5:
            last = time.monotonic()
            progress(sum(done), n)
    if all(done[t] == bounds[t + 1] - bounds[t] for t in range(nt)):
        return n
    # stopped: each slice judged a prefix of itself; move those racks to the front
    order = np.concatenate([np.arange(bounds[t], bounds[t] + done[t]) for t in range(nt)]).astype(np.int64)
    m = len(order)
    accepted[:m] = accepted[order]
    kept[:m] = kept[order]
    best_eq[:m] = best_eq[order]
    play_eq[:m] = play_eq[order]
    cand[:m] = cand[order]
    weights[:m] = weights[order]
    if loglik is not None:
        loglik[:m] = loglik[order]
    return m


def describe_play(lp: LastPlay) -> str:
    if lp.kind == "exchange":
        return f"exch {lp.n_exchanged}"
    assert lp.move is not None
    return format_move(lp.move, lp.before.ld, lp.before.board, style="table").strip()
