"""Typed facade over engine_cy: loads lexica once, keeps one move generator per thread, and returns
frozen result dataclasses. The engine work itself runs in Cython with the GIL released."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from engine_cy.alphabet import LetterDistribution
from engine_cy.klv import Klv
from engine_cy.movegen import MoveGen
from macondo_server.engine.lexicon import Lexicon, LexiconError, LexiconRegistry, load_klv
from macondo_server.engine.settings import Settings
from macondo_server.model.move import Move, format_move, parse_move
from macondo_server.model.position import Position
from macondo_server.model.text import FormatError, check_text, excerpt
from macondo_server.model.tiles import RACK_SIZE, rack_tiles

EQUITY_SCALE = 1000


@dataclass(frozen=True)
class GeneratedMove:
    move: Move
    score: int
    equity_mp: int                 # millipoints
    leave: tuple[int, ...]
    tiles_played: int

    @property
    def equity(self) -> float:
        return self.equity_mp / EQUITY_SCALE


@dataclass(frozen=True)
class GenResult:
    moves: list[GeneratedMove]
    placements: int
    exchanges: int
    passes: int


def find_move(moves: list[GeneratedMove], text: str, pos: Position) -> GeneratedMove:
    """The generated move that the notation `text` names (parsed against the board), or a FormatError."""
    key = format_move(parse_move(text, pos.board, pos.ld), pos.ld, pos.board)
    for m in moves:
        if format_move(m.move, pos.ld, pos.board) == key:
            return m
    raise FormatError(f"move {excerpt(text)} is not a legal play here")


def known_opponent_tiles(pos: Position, text: str) -> list[int]:
    """Machine letters of opponent tiles given as text (`--opp-rack`), checked against the unseen tiles."""
    ld = pos.ld
    check_text(text, "opponent rack", 64)
    known = rack_tiles(ld, text, "opponent rack", fold_case=True)
    if len(known) > RACK_SIZE:
        raise FormatError(f"opponent rack {excerpt(text)} has more than {RACK_SIZE} tiles")
    pool = pos.unseen_counts(0)
    for t in known:
        if pool[t] <= 0:
            raise FormatError(f"opponent rack {excerpt(text)}: {ld.label(t)} is not among the unseen tiles")
        pool[t] -= 1
    return known


def bag_for_mover(pos: Position) -> int:
    """Tiles in the bag as the player on turn sees it: unseen tiles less the opponent's rack, which
    holds min(7, unseen) tiles whether or not the CGP names them."""
    return max(0, sum(pos.unseen_counts(0)) - RACK_SIZE)


class Engine:
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.load()
        self.registry = LexiconRegistry(self.settings)
        self._local = threading.local()
        self._klv_cache: dict[str, Klv] = {}
        self._lock = threading.Lock()

    def lexicon(self, name: str | None = None) -> Lexicon:
        return self.registry.get(name)

    def lexicon_for(self, pos: Position, name: str | None = None) -> Lexicon:
        """The lexicon a position is played with (`name`, else its lex op, else the default), with the
        position's letter distribution."""
        lex = self.registry.get(name or pos.lexicon or self.settings.default_lexicon, pos.ld.name)
        if lex.ld is not pos.ld and lex.ld.table() != pos.ld.table():
            raise LexiconError(f"the position's letter distribution {pos.ld.name} is not the {lex.ld.name} table "
                               f"lexicon {lex.name} is played with here (another file of the same name)")
        return lex

    def leaves(self, path: str, ld: LetterDistribution | None = None) -> Klv:
        """A KLV2 file named by path: for the command line only (whoever runs it chose the path). Requests
        over the network name leave sets with `named_leaves`. Its leaves must fit `ld` (default english)."""
        key = f"{path}\0{ld.name if ld is not None else ''}"
        with self._lock:
            if key not in self._klv_cache:
                p = Path(path)
                if not p.is_file():
                    raise LexiconError(f"leave file {path} does not exist")
                self._klv_cache[key] = load_klv(p, "leave file ", ld)
            return self._klv_cache[key]

    def named_leaves(self, name: str, ld: LetterDistribution | None = None) -> Klv:
        """The leave set NAME.klv2 in the server's data directories (cached by name; never a path); its leaves
        must fit `ld` (default english)."""
        path = self.registry.find_leaves(name)
        key = f"name:{name}\0{ld.name if ld is not None else ''}"
        with self._lock:
            if key not in self._klv_cache:
                self._klv_cache[key] = load_klv(path, f"leave set {name}: ", ld)
            return self._klv_cache[key]

    def movegen(self, lex: Lexicon, klv: Klv | None = None, bingo_bonus: int = 50) -> MoveGen:
        """This thread's generator for a lexicon and leave set (created once, reused)."""
        cache = getattr(self._local, "gens", None)
        if cache is None:
            cache = self._local.gens = {}
        key = (lex.name, lex.ld.name, id(klv) if klv is not None else None)
        gen = cache.get(key)
        if gen is None:
            gen = MoveGen(lex.kwg, lex.ld, klv)
            cache[key] = gen
        gen.bingo_bonus = bingo_bonus
        return gen

    def generate(
        self,
        pos: Position,
        lexicon: str | None = None,
        leaves_path: str | None = None,
        n: int | None = None,
        sort: str = "equity",
        klv: Klv | None = None,
    ) -> GenResult:
        """Every legal move for the player on turn (top n when n is given), ranked by equity or score."""
        if sort not in ("equity", "score"):
            raise ValueError(f"unknown sort {sort!r} (equity or score)")
        if n is not None and n <= 0:
            raise ValueError(f"number of moves must be positive, got {n}")
        lex = self.lexicon_for(pos, lexicon)
        if klv is None:
            klv = self.leaves(leaves_path, lex.ld) if leaves_path else lex.klv
        rack = list(pos.racks[0])
        if not rack:
            raise FormatError("the player on turn has no tiles on the rack")
        bb = int(pos.ops.get("bb", "50"))
        gen = self.movegen(lex, klv, bb)
        bag = bag_for_mover(pos)
        opp = None
        if bag == 0:
            counts = pos.unseen_counts(0)
            opp = [ml for ml in range(len(counts)) for _ in range(counts[ml])]
        if sort == "equity" and n is not None:
            gen.generate(pos.board, rack, bag, opp, mode="top", n=n)
        else:
            gen.generate(pos.board, rack, bag, opp)
        raw = gen.moves()
        moves = [
            GeneratedMove(
                move=Move(kind, row, col, vertical, tuple(tiles)),
                score=score,
                equity_mp=equity,
                leave=tuple(leave),
                tiles_played=tp,
            )
            for (kind, row, col, vertical, tiles, score, equity, tp, leave) in raw
        ]
        if sort == "score":
            moves.sort(key=lambda m: -m.score)  # stable: equity order breaks ties
            if n is not None:
                moves = moves[:n]
        placements, exchanges, passes = gen.counts()
        return GenResult(moves=moves, placements=placements, exchanges=exchanges, passes=passes)

    @staticmethod
    def describe(m: GeneratedMove, pos: Position, style: str = "short") -> str:
        return format_move(m.move, pos.ld, pos.board, style=style)
