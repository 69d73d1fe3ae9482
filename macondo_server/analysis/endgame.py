"""Endgame solving for positions (CLI, server): validation, the engine_cy solver, and readable results."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine_cy.alphabet import LetterDistribution
from engine_cy.endgame import EndgameSolver, decode_line
from engine_cy.game import Game
from engine_cy.move import pack
from macondo_server.engine.facade import Engine, find_move
from macondo_server.engine.replay import game_from_position
from macondo_server.model.move import Move, format_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError
from macondo_server.runtime.jobs import watch_stop

MAX_PLIES = 60
DEFAULT_PLIES = 4          # the depth when neither plies nor a time limit is given
DEFAULT_TT_MB = 256
MAX_TOP_K = 64             # first moves a top-k solve keeps (the solver's EG_MAX_TOP)
MAX_ALSO_SOLVE = 64        # first moves valued besides them (the solver's EG_MAX_FORCED)


def game_length_bound(tiles_on_turn: int, tiles_opponent: int) -> int:
    """Plies after which every line of an empty-bag endgame has ended: under the solvers' rules two scoreless
    turns in a row end the game, a placement uses at least one tile and emptying a rack ends the game. So at
    most n0 + n1 - 1 placements, with at most one scoreless turn before each and two after the last. A search
    this deep reaches no horizon: its value is exact and deeper searches cannot change it."""
    return 2 * (tiles_on_turn + tiles_opponent)


@dataclass
class EndgameOptions:
    plies: int | None = None         # None: see plies_cap()
    max_time: float = 0.0            # seconds, 0 = no limit
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    first_win: bool = False
    heuristics: bool = True          # greedy playout at leaves that are not the end of the game
    tt_megabytes: int = DEFAULT_TT_MB
    lexicon: str | None = None
    top_k: int = 1                   # the best k first moves, each with its exact value and line
    also_solve: list[str] = field(default_factory=list)   # first moves valued exactly too (notation)

    def validate(self) -> None:
        if self.plies is not None and not 1 <= self.plies <= MAX_PLIES:
            raise ValueError(f"plies must be 1 to {MAX_PLIES}, got {self.plies}")
        if not 1 <= self.top_k <= MAX_TOP_K:
            raise ValueError(f"top must be 1 to {MAX_TOP_K}, got {self.top_k}")
        if len(self.also_solve) > MAX_ALSO_SOLVE:
            raise ValueError(f"at most {MAX_ALSO_SOLVE} also-solve moves, got {len(self.also_solve)}")
        if self.first_win and (self.top_k > 1 or self.also_solve):
            raise ValueError("first-win only establishes win / draw / loss: it does not combine with top or "
                             "also-solve, whose values are exact")
        if self.max_time < 0:
            raise ValueError(f"max time must not be negative, got {self.max_time}")
        if not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be 1 to 256, got {self.threads}")
        if not 1 <= self.tt_megabytes <= 65536:
            raise ValueError(f"transposition table size must be 1 to 65536 MB, got {self.tt_megabytes}")

    def plies_cap(self) -> tuple[int, str]:
        """The depth asked for and where it comes from: "given" (explicit plies), "solve" (a time limit without
        plies: deepen until solved, bounded by MAX_PLIES) or "default" (neither: DEFAULT_PLIES)."""
        if self.plies is not None:
            return self.plies, "given"
        if self.max_time > 0:
            return MAX_PLIES, "solve"
        return DEFAULT_PLIES, "default"


@dataclass(frozen=True)
class LineMove:
    move: Move
    text: str          # short notation, e.g. 'J11 .R'
    table: str         # table notation, e.g. 'J11 (A)R'
    score: int
    estimated: bool    # past the searched horizon (greedy playout)


@dataclass(frozen=True)
class RankedLine:
    """One first move with its value and principal line (the move first): a top-k line, or an also-solve
    move's (value None: a stop came before it was searched)."""
    value: int | None          # spread change for the player on turn when it plays this first move
    final_spread: int | None
    line: list[LineMove]
    requested: str = ""        # also-solve: the move as it was given


@dataclass
class EndgameResult:
    value: int                 # spread change for the player on turn under best play
    final_spread: int
    line: list[LineMove]
    depth: int                 # deepest completed search
    nodes: int
    seconds: float
    complete: bool             # every requested ply was searched (or the search is exact: see solved)
    first_win: bool
    solved: bool = False       # the search reached game_length_bound: every line ends the game, the value is exact
    stop_reason: str = ""      # "solved", "plies cap N" (+ " (default)"), "time limit", "stopped"
    # a top-k solve (top_k > 1 or also-solve): the best first moves, best first (the first is `line`), and one
    # line per also-solve move in the order given; each value exact at the depth reached
    top: list[RankedLine] = field(default_factory=list)
    also: list[RankedLine] = field(default_factory=list)

    @property
    def best_move(self) -> LineMove | None:
        return self.line[0] if self.line else None


def _readable_line(game: Game, exact: list[tuple[int, int]], estimated: list[tuple[int, int]],
                   ld: LetterDistribution) -> list[LineMove]:
    g = game.clone()
    out: list[LineMove] = []
    for i, (kind, row, col, vertical, tiles, score) in enumerate(decode_line(game, exact + estimated)):
        mv = Move(kind, row, col, vertical, tuple(tiles))
        out.append(LineMove(mv, format_move(mv, ld, g.board), format_move(mv, ld, g.board, style="table"),
                            score, i >= len(exact)))
        g.play(kind, row, col, vertical, tiles, score)
    return out


class EndgameJob:
    """One endgame solve: validated on construction, run() in any thread, stop() from any other."""

    def __init__(self, engine: Engine, pos: Position, opts: EndgameOptions) -> None:
        opts.validate()
        self.opts = opts
        self.pos = pos
        lex = engine.lexicon_for(pos, opts.lexicon)
        unseen = sum(pos.unseen_counts(0))
        if not pos.racks[0]:
            raise FormatError("the player on turn has no tiles: the game is over")
        if unseen > 7:
            raise FormatError(
                f"the bag is not empty ({unseen - 7} tiles): the endgame solver needs an empty bag "
                "(use peg for 1 to 6 tiles)"
            )
        self.lex = lex
        self.game = game_from_position(pos, lex)
        self.also_texts, self.also_packed = self._also_moves(engine, pos, opts.also_solve)
        self.solver = EndgameSolver(lex.kwg, lex.ld, opts.tt_megabytes, int(pos.ops.get("bb", "50")))
        self.bound = game_length_bound(len(pos.racks[0]), unseen)
        self.cap, self.cap_source = opts.plies_cap()
        self.search_plies = min(self.cap, self.bound)   # deeper than the bound changes nothing
        self._stopped = False

    def _also_moves(self, engine: Engine, pos: Position, texts: list[str]) -> tuple[list[str], list[int]]:
        """The also-solve moves: each checked legal here (a FormatError names the one that is not), written as the
        move list writes it, given twice only once; and their packed forms."""
        if not texts:
            return [], []
        moves = engine.generate(pos, lexicon=self.lex.name).moves
        shown: list[str] = []
        packed: list[int] = []
        for text in texts:
            m = find_move(moves, text, pos).move
            key = format_move(m, pos.ld, pos.board)
            if key not in shown:
                shown.append(key)
                packed.append(pack(m.kind, m.row, m.col, m.vertical, m.tiles))
        return shown, packed

    def stop(self) -> None:
        self._stopped = True
        self.solver.stop()

    def _ranked(self, entry: Mapping[str, Any] | None, requested: str = "") -> RankedLine:
        if entry is None:
            return RankedLine(None, None, [], requested)
        return RankedLine(entry["value"], entry["final_spread"],
                          _readable_line(self.game, entry["line"], entry.get("estimated", []), self.lex.ld),
                          requested)

    def _result(self, raw: Mapping[str, Any], final: bool = False) -> EndgameResult:
        line = _readable_line(self.game, raw["line"], raw.get("estimated", []), self.lex.ld)
        depth = raw["depth"]
        solved = depth >= self.bound or (raw["complete"] and not raw["line"])   # or the game was already over
        complete = raw["complete"] or solved
        reason = ""
        if final:
            if solved:
                reason = "solved"
            elif complete:
                reason = f"plies cap {self.cap}" + (" (default)" if self.cap_source == "default" else "")
            elif self._stopped:
                reason = "stopped"
            else:
                reason = "time limit"
        top = [self._ranked(e) for e in raw.get("lines", [])]
        also = [self._ranked(e, text) for e, text in zip(raw.get("also", []), self.also_texts, strict=True)]
        return EndgameResult(raw["value"], raw["final_spread"], line, depth, raw["nodes"], raw["seconds"],
                             complete, self.opts.first_win, solved, reason, top, also)

    def run(self, progress: Callable[[EndgameResult], None] | None = None,
            stop: threading.Event | None = None) -> EndgameResult:
        def on_depth(raw: Mapping[str, Any]) -> None:
            if progress is not None:
                progress(self._result(raw))

        o = self.opts
        with watch_stop(stop, self.stop):
            raw = self.solver.solve(self.game, self.search_plies, max_time=o.max_time, threads=o.threads,
                                    first_win=o.first_win, heuristics=o.heuristics, progress=on_depth,
                                    top_k=o.top_k, also=self.also_packed)
        return self._result(raw, final=True)

    @property
    def nodes(self) -> int:
        return int(self.solver.nodes)


def solve_endgame(engine: Engine, pos: Position, opts: EndgameOptions | None = None) -> EndgameResult:
    return EndgameJob(engine, pos, opts or EndgameOptions()).run()
