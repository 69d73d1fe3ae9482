"""Inference of the opponent's kept tiles from their last play (docs/inference.md).

Only public information is used: the board before the opponent's play, the play itself (an exchange only by
its tile count), the tiles the player now on turn cannot see, and tiles known for certain (a withdrawn
phony's). For each rack the opponent could have held, a static search says whether the play was within
`tolerance` points of equity of their best; the consistent racks, weighted by how likely their draw was,
give a distribution over the leave the opponent kept. The racks are enumerated exhaustively when the
distinct leaves number at most `max_racks`, else `max_racks` random draws are judged (a Monte Carlo
estimate of the same distribution). The judging runs in engine_cy.infer with the GIL released."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from engine_cy.cross_set import compute_all
from engine_cy.infer import InferWorker, count_leaves, enumerate_leaves, sample_leaves
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

    def validate(self) -> None:
        if not (isinstance(self.tolerance, (int, float)) and math.isfinite(self.tolerance)
                and 0 <= self.tolerance <= MAX_TOLERANCE):
            raise FormatError(f"inference tolerance must be 0 to {MAX_TOLERANCE:g} points, got {self.tolerance}")
        if not 1 <= self.max_racks <= MAX_RACKS:
            raise FormatError(f"inference racks must be 1 to {MAX_RACKS}, got {self.max_racks}")
        if not 1 <= self.threads <= 256:
            raise FormatError(f"threads must be 1 to 256, got {self.threads}")


@dataclass
class LastPlay:
    """The opponent's last play as the player on turn saw it, on the board before it."""
    kind: str                           # "place" or "exchange"
    before: Position                    # the position before the play (board; racks[0] = the inferrer's)
    move: Move | None = None            # placements (a withdrawn phony too)
    n_exchanged: int = 0
    withdrawn: bool = False             # a phony challenged off: its tiles are back on the opponent's rack
    text: str = ""

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


def last_play_on(pos: Position, text: str, lex: Lexicon, withdrawn: bool = False) -> LastPlay:
    """The opponent's last play `text` in the position `pos` now (the player on turn is the inferrer):
    a placement as it stands on the board (letters outside parentheses are the tiles it put down, '.' or
    (X) the tiles it played through), `exch N` (an exchange of N tiles), or with `withdrawn` a phony that
    was challenged off (not on the board; its tiles are back on the opponent's rack)."""
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
        return LastPlay("exchange", pos, None, _exchange_count(parts[1], q), False, s)
    if s.lower() in ("pass", "(pass)"):
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
    return LastPlay("place", before, move, 0, withdrawn, s)


def last_play_before(pos_before: Position, text: str, lex: Lexicon, withdrawn: bool = False) -> LastPlay:
    """The same from the position BEFORE the play, with the opponent on turn there: the CGP's second rack is
    the inferrer's; the rack of the player on turn (the opponent) is never looked at."""
    ld = pos_before.ld
    ours = Position(pos_before.board.copy(), (list(pos_before.racks[1]), []), pos_before.scores[::-1],
                    pos_before.zeros, dict(pos_before.ops), ld)
    text = check_text(text, "last play", 64)
    s = " ".join(text.split())
    parts = s.split(" ")
    if parts and parts[0].lower() in ("exch", "exchange", "-"):
        return last_play_on(ours, s, lex, withdrawn)
    if s.lower() in ("pass", "(pass)"):
        raise FormatError("a pass reveals nothing about the rack: nothing to infer")
    move = parse_move(s, ours.board, ld)
    if move.kind != "place":
        raise FormatError(f"bad last play {excerpt(text)}: expected a placement or 'exch N'")
    why = play_error(ours.board, lex.kwg, ld, move.row, move.col, move.vertical, list(move.tiles))
    if why and not (withdrawn and why.endswith(" is not a word in the lexicon")):
        raise FormatError(f"last play {excerpt(text)} is not a legal play here: {why}")
    return LastPlay("place", ours, move, 0, withdrawn, s)


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


# ------------------------------------------------------------------ inference


def _prior(pool: list[int], counts: Iterable[int]) -> float:
    n = sum(pool)
    k = int(sum(int(c) for c in counts))
    total = math.comb(n, k)
    ways = 1
    for p, c in zip(pool, counts, strict=False):
        ways *= math.comb(p, int(c))
    return ways / total if total else 0.0


def infer(engine: Engine, lp: LastPlay, opts: InferOptions, known: list[int] | None = None,
          stop: threading.Event | None = None, progress: Callable[[int, int], None] | None = None,
          deadline: float | None = None) -> InferResult:
    """Infer the leave the opponent kept with `lp`. `known`: tiles certainly on their rack now (a withdrawn
    phony's, which default to the phony's tiles). `stop` set, or time.monotonic() past `deadline`, ends the
    judging early: the result then covers the racks judged (a random part of the enumeration)."""
    opts.validate()
    t0 = time.monotonic()
    pos = lp.before
    ld = pos.ld
    lex = engine.lexicon_for(pos, opts.lexicon)
    if lex.ld.size != ld.size:
        raise FormatError("the lexicon's letter distribution does not match the position's")
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
    if lp.kind == "place" and k == 0:
        return InferResult(lp.text, lp.kind, known, 0, "none", 0, 0, 1, [], [0.0] * ld.size, expected,
                           opts.tolerance, time.monotonic() - t0, False, pool)
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
    board = pos.board.copy()
    compute_all(board, lex.kwg, ld)
    tol_mp = int(round(opts.tolerance * EQUITY_SCALE))
    bb = pos.bingo_bonus
    if lp.kind == "place":
        assert lp.move is not None
        score = int(score_play(board, ld, lp.move.row, lp.move.col, lp.move.vertical, list(lp.move.tiles), bb))
        workers = [InferWorker(board, lex.kwg, lex.klv, ld, "place", played, score, 0, bag_before, tol_mp, bb)
                   for _ in range(opts.threads)]
    else:
        workers = [InferWorker(board, lex.kwg, lex.klv, ld, "exchange", [], 0, lp.n_exchanged, bag_before, tol_mp,
                               bb) for _ in range(opts.threads)]
    accepted = np.zeros(n, dtype=np.uint8)
    kept = np.zeros((n, ld.size), dtype=np.uint8)
    best_eq = np.zeros(n, dtype=np.int32)
    play_eq = np.zeros(n, dtype=np.int32)
    judged = _run_workers(workers, cand, weights, accepted, kept, best_eq, play_eq, stop, progress, deadline)
    # consistent racks -> their kept leaves, weighted
    idx = np.nonzero(accepted[:judged])[0]
    table: dict[bytes, list[float]] = {}
    for i in idx:
        key = kept[i].tobytes()
        e = table.get(key)
        if e is None:
            table[key] = [float(weights[i]), 1]
        else:
            e[0] += float(weights[i])
            e[1] += 1
    total = sum(e[0] for e in table.values())
    leaves: list[InferredLeave] = []
    counts_arr = np.zeros((len(table), ld.size), dtype=np.uint8)
    w_arr = np.zeros(len(table), dtype=np.float64)
    for j, (key, (w, c)) in enumerate(sorted(table.items(), key=lambda kv: (-kv[1][0], kv[0]))):
        counts = np.frombuffer(key, dtype=np.uint8)
        counts_arr[j] = counts
        w_arr[j] = w
        tiles = tuple(ml for ml in range(ld.size) for _ in range(int(counts[ml])))
        leaves.append(InferredLeave(tiles, ld.rack_str(list(tiles)) or "-", w / total, _prior(pool, counts), int(c)))
    found = [0.0] * ld.size
    if total > 0:
        found = [float((counts_arr[:, ml].astype(np.float64) * w_arr).sum() / total) for ml in range(ld.size)]
    return InferResult(lp.text, lp.kind, known, leave_size, method, judged, int(len(idx)), distinct, leaves,
                       found, expected, opts.tolerance, time.monotonic() - t0, judged < n, pool,
                       counts_arr, w_arr)


def _run_workers(workers: list[InferWorker], cand: np.ndarray, weights: np.ndarray, accepted: np.ndarray,
                 kept: np.ndarray, best_eq: np.ndarray, play_eq: np.ndarray, stop: threading.Event | None, progress: Callable[[int, int], None] | None,
                 deadline: float | None = None) -> int:
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
            got = w.run(cand, pos, end, accepted, kept, best_eq, play_eq)
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
            th.join(0.05)
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
    return m


def describe_play(lp: LastPlay) -> str:
    if lp.kind == "exchange":
        return f"exch {lp.n_exchanged}"
    assert lp.move is not None
    return format_move(lp.move, lp.before.ld, lp.before.board, style="table").strip()
