"""A position: board, racks, scores, scoreless turns and the CGP ops that go with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine_cy.alphabet import LetterDistribution
from engine_cy.board import Board
from macondo_server.model.text import (
    DEFAULT_BINGO_BONUS,
    DEFAULT_SCORELESS_TURNS,
    MAX_BINGO_BONUS,
    MAX_SCORELESS_TURNS,
    MAX_TILES_CHARS,
    FormatError,
    check_text,
    excerpt,
    parse_int,
)
from macondo_server.model.tiles import RACK_SIZE, rack_tiles

# ------------------------------------------------------------------ CGP


# Integer ops: (lowest, highest, default)
_OP_INTS = {
    "bb": (0, MAX_BINGO_BONUS, DEFAULT_BINGO_BONUS),
    "mcnz": (1, MAX_SCORELESS_TURNS, DEFAULT_SCORELESS_TURNS),
}


MAX_CLOCK_MS = 86_400_000     # a clock op's values: at most a day either way (negative: overtime)


def parse_clock(value: str) -> tuple[int, int]:
    """The CGP op `tmr A/B`: milliseconds left on the clocks of the player on turn (A) and the other (B),
    negative past the end of the time."""
    first, slash, second = value.partition("/")
    if not slash:
        raise FormatError(f"CGP op tmr {excerpt(value)}: expected milliseconds left as ON_TURN/OTHER")
    return (parse_int(first.strip(), "CGP op tmr", -MAX_CLOCK_MS, MAX_CLOCK_MS, "minus"),
            parse_int(second.strip(), "CGP op tmr", -MAX_CLOCK_MS, MAX_CLOCK_MS, "minus"))


def op_int(ops: dict[str, str], key: str) -> int:
    """The integer op `key` (bb, mcnz) or its default, checked against its range."""
    lo, hi, default = _OP_INTS[key]
    if key not in ops:
        return default
    return parse_int(ops[key], f"CGP op {key}", lo, hi)



@dataclass
class Position:
    """A CGP position: racks[0] belongs to the player on turn."""

    board: Board
    racks: tuple[list[int], list[int]]
    scores: tuple[int, int]
    zeros: int
    ops: dict[str, str] = field(default_factory=dict)
    ld: LetterDistribution = field(default_factory=LetterDistribution.english)

    @property
    def lexicon(self) -> str | None:
        return self.ops.get("lex")

    @property
    def bag_order(self) -> list[int] | None:
        if "bagorder" not in self.ops:
            return None
        return rack_tiles(self.ld, check_text(self.ops["bagorder"], "CGP op bagorder", MAX_TILES_CHARS),
                          "CGP op bagorder")

    @property
    def bingo_bonus(self) -> int:
        """The `bb` op (default 50), checked."""
        return op_int(self.ops, "bb")

    @property
    def max_scoreless_turns(self) -> int:
        """The `mcnz` op (default 6), checked."""
        return op_int(self.ops, "mcnz")

    def unseen_counts(self, for_player: int = 0) -> list[int]:
        """Tiles not on the board and not on `for_player`'s rack (bag + opponent rack)."""
        counts = self.bag_counts()
        for t in self.racks[1 - for_player]:
            counts[t] += 1
        return counts

    def bag_counts(self) -> list[int]:
        """The distribution minus board tiles minus both written racks."""
        ld = self.ld
        counts = [ld.count(i) for i in range(ld.size)]
        dim = self.board.dim
        for r in range(dim):
            for c in range(dim):
                t = self.board.tile(r, c)
                if t:
                    counts[0 if t & 0x80 else t] -= 1
        for rack in self.racks:
            for t in rack:
                counts[t] -= 1
        return counts

    def bag_size(self) -> int:
        """The distribution minus the board and both written racks (the bag and the unknown part of the
        opponent's rack when that rack is written partly or not at all)."""
        return sum(self.bag_counts())

    @property
    def known_opp(self) -> list[int]:
        """The opponent's tiles the player on turn knows of (CGP's second rack, which may be partial or
        empty: e.g. the tiles of a withdrawn phony; every unseen tile once the bag is empty)."""
        return list(self.racks[1])

    def tiles_in_bag(self) -> int:
        """The bag as the player on turn counts it: the unseen tiles less the opponent's rack, which holds
        a full rack (or every unseen tile when fewer remain) whether or not the CGP writes it."""
        return max(0, sum(self.unseen_counts(0)) - max(RACK_SIZE, len(self.racks[1])))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (
            self.board == other.board
            and [sorted(r) for r in self.racks] == [sorted(r) for r in other.racks]
            and self.scores == other.scores
            and self.zeros == other.zeros
            and self.ops == other.ops
        )
