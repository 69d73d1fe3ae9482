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
from macondo_server.engine.facade import Engine
from macondo_server.engine.replay import game_from_position
from macondo_server.model.move import Move, format_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError
from macondo_server.runtime.jobs import watch_stop

MAX_PLIES = 60
DEFAULT_TT_MB = 256


@dataclass
class EndgameOptions:
    plies: int = 4
    max_time: float = 0.0            # seconds, 0 = no limit
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    first_win: bool = False
    heuristics: bool = True          # greedy playout at leaves that are not the end of the game
    tt_megabytes: int = DEFAULT_TT_MB
    lexicon: str | None = None

    def validate(self) -> None:
        if not 1 <= self.plies <= MAX_PLIES:
            raise ValueError(f"plies must be 1 to {MAX_PLIES}, got {self.plies}")
        if self.max_time < 0:
            raise ValueError(f"max time must not be negative, got {self.max_time}")
        if not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be 1 to 256, got {self.threads}")
        if not 1 <= self.tt_megabytes <= 65536:
            raise ValueError(f"transposition table size must be 1 to 65536 MB, got {self.tt_megabytes}")


@dataclass(frozen=True)
class LineMove:
    move: Move
    text: str          # short notation, e.g. 'J11 .R'
    table: str         # table notation, e.g. 'J11 (A)R'
    score: int
    estimated: bool    # past the searched horizon (greedy playout)


@dataclass
class EndgameResult:
    value: int                 # spread change for the player on turn under best play
    final_spread: int
    line: list[LineMove]
    depth: int                 # deepest completed search
    nodes: int
    seconds: float
    complete: bool             # every requested ply was searched
    first_win: bool

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
        self.solver = EndgameSolver(lex.kwg, lex.ld, opts.tt_megabytes, int(pos.ops.get("bb", "50")))

    def stop(self) -> None:
        self.solver.stop()

    def _result(self, raw: Mapping[str, Any]) -> EndgameResult:
        line = _readable_line(self.game, raw["line"], raw.get("estimated", []), self.lex.ld)
        return EndgameResult(raw["value"], raw["final_spread"], line, raw["depth"], raw["nodes"], raw["seconds"],
                             raw["complete"], self.opts.first_win)

    def run(self, progress: Callable[[EndgameResult], None] | None = None,
            stop: threading.Event | None = None) -> EndgameResult:
        def on_depth(raw: Mapping[str, Any]) -> None:
            if progress is not None:
                progress(self._result(raw))

        o = self.opts
        with watch_stop(stop, self.solver.stop):
            raw = self.solver.solve(self.game, o.plies, max_time=o.max_time, threads=o.threads,
                                    first_win=o.first_win, heuristics=o.heuristics, progress=on_depth)
        return self._result(raw)

    @property
    def nodes(self) -> int:
        return int(self.solver.nodes)


def solve_endgame(engine: Engine, pos: Position, opts: EndgameOptions | None = None) -> EndgameResult:
    return EndgameJob(engine, pos, opts or EndgameOptions()).run()
