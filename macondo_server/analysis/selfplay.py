"""Bot-vs-bot self-play: orchestration, statistics, GCG output and its cluster task. The games run in
engine_cy.autoplay with the GIL released; game g's tiles depend only on (seed, g), so results are the same
for any thread count and timing, in-process or on a Dask cluster."""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_cy.alphabet import LetterDistribution
from engine_cy.autoplay import AutoplayWorker, game_seed
from engine_cy.board import Board
from engine_cy.game import Game
from engine_cy.klv import Klv
from macondo_server.engine.facade import Engine
from macondo_server.engine.lexicon import Lexicon, LexiconError, record_pragmas
from macondo_server.model.coords import format_coord
from macondo_server.model.gcg import GcgEvent, GcgGame, write_gcg
from macondo_server.model.languages import language_of
from macondo_server.model.move import Move, format_move
from macondo_server.runtime.cluster import (
    Cluster,
    lexicon_fingerprint,
    map_batches,
    run_stopped,
    worker_lexicon,
)

# what a cluster worker rebuilds a bot from (bot_sources): lexicon name and fingerprint, leaves as bytes or None
BotSource = dict[str, Any]
# one game a cluster task played: (game, first bot, scores, bingos, turns, end reason, GCG text or None)
PlayedGame = tuple[int, int, tuple[int, int], tuple[int, int], int, str, str | None]


@dataclass
class BotSpec:
    lexicon: Lexicon
    leaves: Klv | None
    name: str = "bot"


@dataclass
class GameRecord:
    index: int
    first_bot: int
    scores: tuple[int, int]          # by bot
    bingos: tuple[int, int]
    turns: int
    end_reason: str


@dataclass
class AutoplaySummary:
    games: int
    wins: list[int]
    draws: int
    mean_score: list[float]
    mean_spread: float               # bot 1 minus bot 2
    spread_stdev: float
    bingos_per_game: list[float]
    turns_per_game: float
    games_per_second: float
    seconds: float
    win_rate: float                  # bot 1, draws counting half
    win_rate_ci95: float             # half-width of the 95% interval
    records: list[GameRecord] = field(default_factory=list)


def bots_from_options(engine: Engine, lexicon: str | None, leaves: str | None, lexicon2: str | None,
                      leaves2: str | None, by_name: bool = False,
                      distribution: str | None = None, layout: str | None = None) -> tuple[BotSpec, BotSpec]:
    """The two bots of `macondo autoplay` / the Autoplay RPC: bot 2 defaults to bot 1's lexicon and leaves.
    Leaves are file paths at the command line, leave-set names in the data directories (`by_name`) for
    requests. Both play with bot 1's distribution (`distribution` when given, else its lexicon's own, in its
    `_super` form on the 21x21 `layout`); a lexicon of another language is refused."""
    load = engine.named_leaves if by_name else engine.leaves
    lex1 = _first_lexicon(engine, lexicon, distribution, layout)
    lex2 = same_distribution(lex1, engine.lexicon(lexicon2)) if lexicon2 else lex1
    klv1 = load(leaves, lex1.ld) if leaves else lex1.klv
    klv2 = load(leaves2, lex2.ld) if leaves2 else (lex2.klv if lexicon2 else klv1)
    return BotSpec(lex1, klv1, "bot1"), BotSpec(lex2, klv2, "bot2")


def _first_lexicon(engine: Engine, lexicon: str | None, distribution: str | None, layout: str | None) -> Lexicon:
    lex = engine.lexicon(lexicon or None)
    if distribution:
        return lex.for_distribution(distribution)
    return lex.for_layout(layout) if layout else lex


def same_distribution(first: Lexicon, other: Lexicon) -> Lexicon:
    """`other` played with `first`'s distribution: two lexica meet in one game only with the same tiles."""
    if other.ld.name == first.ld.name:
        return other
    if language_of(other.ld.name) != language_of(first.ld.name):
        raise LexiconError(f"lexica {first.name} ({first.ld.name}) and {other.name} ({other.ld.name}) have different "
                           "letter distributions: the games of one run use one distribution")
    return other.for_distribution(first.ld.name)


def bot_sources(engine: Engine, lexicon: str | None, leaves: str | None, lexicon2: str | None,
                leaves2: str | None, by_name: bool = False, distribution: str | None = None,
                layout: str | None = None) -> list[BotSource]:
    """What a cluster worker needs to rebuild the bots of bots_from_options (same arguments): each bot's lexicon
    by name and content fingerprint, and its leaves as the file's bytes (None: the lexicon's own leaves). The
    worker reads lexica from its own data directories; leaves, and a `layout`'s board, travel with the task,
    never as a path."""

    def leaves_bytes(spec: str) -> bytes:
        path = engine.registry.find_leaves(spec) if by_name else Path(spec)
        engine.named_leaves(spec, lex1.ld) if by_name else engine.leaves(spec, lex1.ld)   # the local bots' checks
        return Path(path).read_bytes()

    lex1 = _first_lexicon(engine, lexicon, distribution, layout)
    lex2 = same_distribution(lex1, engine.lexicon(lexicon2)) if lexicon2 else lex1
    board = lex1.catalog.board(layout) if layout else None
    data1 = leaves_bytes(leaves) if leaves else None
    data2 = leaves_bytes(leaves2) if leaves2 else (None if lexicon2 else data1)
    out = []
    for lex, data in ((lex1, data1), (lex2, data2)):
        out.append({"lexicon": lex.name, "fingerprint": lexicon_fingerprint(engine, lex.name), "leaves": data,
                    "leaves_sha": hashlib.sha256(data).hexdigest() if data is not None else None,
                    "distribution": lex.ld.name})
        if board is not None:
            out[-1].update(layout=board.layout_name, layout_text=board.layout_text())
    return out


def summarize(records: list[GameRecord], seconds: float) -> AutoplaySummary:
    n = len(records)
    wins = [0, 0]
    draws = 0
    spreads = []
    for r in records:
        s = r.scores[0] - r.scores[1]
        spreads.append(s)
        if s > 0:
            wins[0] += 1
        elif s < 0:
            wins[1] += 1
        else:
            draws += 1
    mean_spread = sum(spreads) / n if n else 0.0
    var = sum((x - mean_spread) ** 2 for x in spreads) / (n - 1) if n > 1 else 0.0
    rate = (wins[0] + 0.5 * draws) / n if n else 0.0
    ci = 1.96 * math.sqrt(rate * (1 - rate) / n) if n else 0.0
    return AutoplaySummary(
        games=n,
        wins=wins,
        draws=draws,
        mean_score=[sum(r.scores[b] for r in records) / n if n else 0.0 for b in (0, 1)],
        mean_spread=mean_spread,
        spread_stdev=math.sqrt(var),
        bingos_per_game=[sum(r.bingos[b] for r in records) / n if n else 0.0 for b in (0, 1)],
        turns_per_game=sum(r.turns for r in records) / n if n else 0.0,
        games_per_second=n / seconds if seconds > 0 else 0.0,
        seconds=seconds,
        win_rate=rate,
        win_rate_ci95=ci,
        records=sorted(records, key=lambda r: r.index),
    )


def history_to_gcg(worker_game: Game, ld: LetterDistribution, names: tuple[str, str], first_bot: int) -> GcgGame:
    """A finished game's move history as a GCG record (seat 0 moved first)."""
    seat_names = (names[first_bot], names[1 - first_bot])
    game = GcgGame(players=[(seat_names[0], seat_names[0]), (seat_names[1], seat_names[1])])
    board = worker_game.board.copy()
    board.clear()
    cum = [0, 0]
    for player, kind, row, col, vertical, tiles, score, rack in worker_game.history():
        nick = seat_names[player]
        rack_s = ld.rack_str(rack)
        if kind == "place":
            cum[player] += score
            word = format_move(Move("place", row, col, vertical, tiles), ld).split(" ", 1)[1]
            ev = GcgEvent("play", nick, rack_s, format_coord(row, col, vertical), word, score=score,
                          cumulative=cum[player])
            for i, t in enumerate(tiles):
                if t:
                    board.set_tile(row + i * vertical, col + i * (not vertical), t)
        elif kind == "exchange":
            ev = GcgEvent("exchange", nick, rack_s, exchanged=ld.rack_str(list(tiles)), cumulative=cum[player])
        else:
            ev = GcgEvent("pass", nick, rack_s, cumulative=cum[player])
        game.events.append(ev)
    final = worker_game.scores
    for seat in (0, 1):
        if final[seat] != cum[seat]:
            delta = final[seat] - cum[seat]
            cum[seat] = final[seat]
            other_rack = ld.rack_str(worker_game.rack(1 - seat))
            own_rack = ld.rack_str(worker_game.rack(seat))
            if worker_game.end_reason_name == "standard":
                game.events.append(GcgEvent("end_rack_points", seat_names[seat], exchanged=other_rack, score=delta,
                                            cumulative=cum[seat]))
            else:
                game.events.append(GcgEvent("end_rack_penalty", seat_names[seat], own_rack, exchanged=own_rack,
                                            score=delta, cumulative=cum[seat]))
    return game


def run_autoplay(
    bot1: BotSpec,
    bot2: BotSpec,
    games: int,
    seed: int = 0,
    threads: int = 1,
    pairs: bool = False,
    gcg_dir: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
    records: list[GameRecord] | None = None,
    cluster: Cluster | None = None,
    sources: list[BotSource] | None = None,
    layout: str | None = None,
) -> AutoplaySummary:
    """Play `games` games; bot 1 moves first in even games. With pairs, games 2k and 2k+1 share their tiles
    (each bot gets the draws the other had). Setting `stop` ends the run after the games in progress;
    the summary covers the games finished. With `cluster` (and the bots' `sources`, see bot_sources) the games
    run there in batches, game for game the same as here. The games are played on `layout` (a name of bot 1's
    lexicon's catalog), else on the board of bot 1's distribution."""
    if games <= 0:
        raise ValueError(f"number of games must be positive, got {games}")
    if threads <= 0:
        raise ValueError(f"threads must be positive, got {threads}")
    if bot1.lexicon.ld.table() != bot2.lexicon.ld.table():
        raise ValueError(f"both bots must use the same letter distribution ({bot1.lexicon.name}: "
                         f"{bot1.lexicon.ld.name}, {bot2.lexicon.name}: {bot2.lexicon.ld.name})")
    out_dir = Path(gcg_dir) if gcg_dir else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    names = (bot1.name, bot2.name) if bot1.name != bot2.name else ("bot1", "bot2")
    records = [] if records is None else records  # callers may pass a list to watch results arrive
    lock = threading.Lock()
    done = [0]
    stop = stop or threading.Event()
    if cluster is not None:
        if sources is None:
            raise ValueError("self-play on a cluster needs the bots' sources (bot_sources)")
        return _run_on_cluster(cluster, sources, games, seed, pairs, out_dir, names, progress, stop, records)
    workers = [
        AutoplayWorker(bot1.lexicon.kwg, bot1.leaves, bot2.lexicon.kwg, bot2.leaves, bot1.lexicon.ld,
                       bot1.lexicon.catalog.board(layout) if layout else bot1.lexicon.new_board())
        for _ in range(threads)
    ]

    def work(t: int) -> None:
        w = workers[t]
        for g in range(t, games, threads):
            if stop.is_set():
                return
            tile_seed = game_seed(seed, g // 2 if pairs else g)
            first = g % 2
            scores, bingos, turns, reason = w.play(tile_seed, first)
            rec = GameRecord(g, first, scores, bingos, turns, reason)
            if out_dir is not None:
                gcg = history_to_gcg(w.game_state(), bot1.lexicon.ld, names, first)
                gcg.pragmas.extend(record_pragmas(bot1.lexicon, layout))
                (out_dir / f"game-{g:05d}.gcg").write_text(write_gcg(gcg), encoding="utf-8")
            with lock:
                records.append(rec)
                done[0] += 1
                if progress:
                    progress(done[0], games)

    t0 = time.perf_counter()
    pool = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(threads)]
    for th in pool:
        th.start()
    try:
        for th in pool:
            while th.is_alive():
                th.join(0.2)
    except KeyboardInterrupt:
        stop.set()
        for w in workers:
            w.stop = True
        for th in pool:
            th.join()
    return summarize(records, time.perf_counter() - t0)


def _run_on_cluster(cluster: Cluster, sources: list[BotSource], games: int, seed: int, pairs: bool, out_dir: Path | None,
                    names: tuple[str, str], progress: Callable[[int, int], None] | None, stop: threading.Event,
                    records: list[GameRecord]) -> AutoplaySummary:
    t0 = time.perf_counter()

    def on_games(batch: list[PlayedGame]) -> None:
        for g, first, scores, bingos, turns, reason, gcg in batch:
            if out_dir is not None and gcg is not None:
                (out_dir / f"game-{g:05d}.gcg").write_text(gcg, encoding="utf-8")
            records.append(GameRecord(g, first, (scores[0], scores[1]), (bingos[0], bingos[1]), turns, reason))
        if progress:
            progress(len(records), games)

    try:
        run_autoplay_tasks(cluster, sources, games, seed & 0xFFFFFFFFFFFFFFFF, pairs,
                           names if out_dir is not None else None, on_games, stop.is_set)
    except KeyboardInterrupt:
        stop.set()
    return summarize(records, time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------- the cluster task

_W_LOCK = threading.Lock()
_W_BOTS: OrderedDict[tuple[Any, ...], tuple[AutoplayWorker, Lexicon]] = OrderedDict()


def _autoplay_worker(bots: list[BotSource]) -> tuple[AutoplayWorker, Lexicon]:
    """This process's self-play worker for the two bots (lexicon by name and fingerprint, leaves as bytes or
    the lexicon's own), kept between tasks."""
    # one per thread (a worker process may run several tasks at once)
    key = (tuple((b["lexicon"], b["fingerprint"], b["leaves_sha"], b.get("distribution"), b.get("layout"),
                  b.get("layout_text")) for b in bots),
           threading.get_ident())
    with _W_LOCK:
        have = _W_BOTS.get(key)
        if have is not None:
            _W_BOTS.move_to_end(key)
            return have
    lexes = [worker_lexicon(b["lexicon"], b["fingerprint"]).for_distribution(b.get("distribution")) for b in bots]
    klvs = [Klv(b["leaves"]) if b["leaves"] is not None else lex.klv for b, lex in zip(bots, lexes, strict=True)]
    text = bots[0].get("layout_text")
    board = Board(text, bots[0]["layout"]) if text else lexes[0].new_board()
    made = (AutoplayWorker(lexes[0].kwg, klvs[0], lexes[1].kwg, klvs[1], lexes[0].ld, board), lexes[0])
    with _W_LOCK:
        _W_BOTS[key] = made
        while len(_W_BOTS) > 16:
            _W_BOTS.popitem(last=False)
    return made


def autoplay_task(bots: list[BotSource], seed: int, pairs: bool, names: tuple[str, str] | None, indices: list[int],
                  run: str) -> list[PlayedGame]:
    """Runs on a Dask worker: play games `indices` (game g: tiles from (seed, g // 2 with pairs else g), bot 1
    first when g is even), as the in-process harness does; a stopped run's task ends at the next game.
    Returns (g, first bot, scores, bingos, turns, end reason, GCG text or None) per game played."""
    w, lex = _autoplay_worker(bots)
    out: list[PlayedGame] = []
    for g in indices:
        if run_stopped(run):
            break
        first = g % 2
        scores, bingos, turns, reason = w.play(game_seed(seed, g // 2 if pairs else g), first)
        gcg = None
        if names is not None:
            rec = history_to_gcg(w.game_state(), lex.ld, names, first)
            rec.pragmas.extend(record_pragmas(lex, bots[0].get("layout")))
            gcg = write_gcg(rec)
        out.append((g, first, (scores[0], scores[1]), (bingos[0], bingos[1]), turns, reason, gcg))
    return out


def run_autoplay_tasks(cluster: Cluster, bots: list[BotSource], games: int, seed: int, pairs: bool,
                       names: tuple[str, str] | None, on_games: Callable[[list[PlayedGame]], None],
                       stopped: Callable[[], bool]) -> int:
    """Self-play split across the cluster in batches of games; on_games(list of game tuples) as batches come
    back. Returns the tasks sent."""
    return map_batches(cluster, autoplay_task, list(range(games)), (bots, seed, pairs, names), on_games, stopped,
                       label="self-play", key="autoplay")
