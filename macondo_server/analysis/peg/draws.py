"""The bag's draws: every ordered draw with its weight, draw groups (draws that give the same position after
a play) and their labels."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from engine_cy.alphabet import LetterDistribution


def ordered_draws(counts: list[int], k: int,
                  stopping: Callable[[], bool] | None = None) -> list[tuple[tuple[int, ...], int]] | None:
    """Every distinct ordered draw of k tiles from `counts`, with its weight: the number of ordered draws of
    distinguishable tiles it stands for (the product of the falling multiplicities). The draws of each length
    extend those one tile shorter, in machine-letter order, so the list is in lexicographic order.
    `stopping` (optional) is asked between extensions; once it says so, None is returned."""
    if k <= 0:
        return [((), 1)]
    level: list[tuple[tuple[int, ...], int, list[int]]] = [((), 1, list(counts))]
    for _ in range(k - 1):
        if stopping is not None and stopping():
            return None
        nxt: list[tuple[tuple[int, ...], int, list[int]]] = []
        for seq, weight, left in level:
            for ml, n in enumerate(left):
                if n:
                    rest = left.copy()
                    rest[ml] -= 1
                    nxt.append((seq + (ml,), weight * n, rest))
        level = nxt
    if stopping is not None and stopping():
        return None
    return [(seq + (ml,), weight * n) for seq, weight, left in level for ml, n in enumerate(left) if n]


def group_key(seq: tuple[int, ...], tiles_played: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Draws that give the same position after a play of `tiles_played` tiles: what we draw (a multiset)
    and what stays in the bag (in order)."""
    t = min(tiles_played, len(seq))
    return tuple(sorted(seq[:t])), seq[t:]


def draw_label(ld: LetterDistribution, seq: tuple[int, ...], tiles_played: int) -> str:
    head, rest = group_key(seq, tiles_played)
    return "[" + "".join(ld.label(t) for t in head) + "]" + "".join(ld.label(t) for t in rest)


class GroupTemplate:
    """The draw groups of every play that draws the same number of tiles: a representative draw of each
    (the first in the order of ordered_draws) and its total weight, in that order; shared by those plays,
    each of which makes its own DrawGroups from it when a pass first takes it (see LazyGroups)."""

    __slots__ = ("tiles_played", "seqs", "weights", "total", "weight_squares")

    def __init__(self, tiles_played: int, seqs: list[tuple[int, ...]], weights: list[int]) -> None:
        self.tiles_played = tiles_played
        self.seqs = seqs
        self.weights = weights
        self.total = sum(weights)
        self.weight_squares = sum(w * w for w in weights)

    def __len__(self) -> int:
        return len(self.seqs)


def draw_groups(draws: list[tuple[tuple[int, ...], int]], tiles_played: int,
                stopping: Callable[[], bool] | None = None) -> GroupTemplate | None:
    """The draw groups of a play of `tiles_played` tiles (see group_key), in the order of `draws`;
    `stopping` (optional) is asked every few thousand draws, and once it says so, None is returned."""
    k = len(draws[0][0]) if draws else 0
    t = min(tiles_played, k)
    if t <= 1:
        # what we draw is one tile or none: every ordered draw is its own group
        return GroupTemplate(tiles_played, [seq for seq, _ in draws], [w for _, w in draws])
    index: dict[tuple[int, ...], int] = {}
    seqs: list[tuple[int, ...]] = []
    weights: list[int] = []
    for n, (seq, w) in enumerate(draws):
        if not n & 4095 and stopping is not None and stopping():
            return None
        # the multiset drawn, then the bag's order (every draw has k tiles, so the key is unambiguous)
        key = tuple(sorted(seq[:t])) + seq[t:]
        i = index.get(key)
        if i is None:
            index[key] = len(seqs)
            seqs.append(seq)
            weights.append(w)
        else:
            weights[i] += w
    return GroupTemplate(tiles_played, seqs, weights)


def counts_str(ld: LetterDistribution, counts: list[int]) -> str:
    """Tile counts (by machine letter) as text."""
    return "".join(ld.label(m) * n for m, n in enumerate(counts))


class DrawGroup:
    """One draw group of one play: a representative draw, its weight and the verdicts found for it. Its label
    is made when first asked for (a pass over millions of draw groups asks for few)."""

    __slots__ = ("_label", "seq", "weight", "outcome", "spread", "quick", "quick2", "capped", "_ld", "_tiles")

    def __init__(self, label: str | None, seq: tuple[int, ...], weight: int, outcome: int | None = None,
                 ld: LetterDistribution | None = None, tiles_played: int = 0) -> None:
        self._label = label
        self.seq = seq               # a representative draw order (first drawn first)
        self.weight = weight
        self.outcome = outcome       # the full-depth verdict
        self.spread: int | None = None
        self.quick: int | None = None    # the quick pass's verdict (a preview at low fidelity)
        self.quick2: int | None = None   # the quick pass's second level's verdict (2-ply endgames)
        self.capped = False          # a continuation past the nesting cap took part in the full verdict
        self._ld = ld
        self._tiles = tiles_played

    @property
    def label(self) -> str:
        if self._label is None:
            assert self._ld is not None
            self._label = draw_label(self._ld, self.seq, self._tiles)
        return self._label

    def __repr__(self) -> str:
        return f"DrawGroup({self.label!r}, weight={self.weight}, outcome={self.outcome})"


class LazyGroups(Sequence[DrawGroup]):
    """A play's draw groups, made from its GroupTemplate the first time one is asked for (thread-safe): a
    solve with thousands of plays and millions of draw groups makes only those of the plays it reaches.
    len() and `made` never make them."""

    def __init__(self, template: GroupTemplate, ld: LetterDistribution) -> None:
        self.template = template
        self._ld = ld
        self._items: list[DrawGroup] | None = None
        self._lock = threading.Lock()

    @property
    def made(self) -> list[DrawGroup] | None:
        """The groups if they have been made, else None."""
        return self._items

    def _make(self) -> list[DrawGroup]:
        items = self._items
        if items is None:
            with self._lock:
                items = self._items
                if items is None:
                    t, ld = self.template.tiles_played, self._ld
                    items = [DrawGroup(None, seq, w, None, ld, t)
                             for seq, w in zip(self.template.seqs, self.template.weights, strict=True)]
                    self._items = items
        return items

    def __len__(self) -> int:
        return len(self.template)

    @overload
    def __getitem__(self, i: int) -> DrawGroup: ...

    @overload
    def __getitem__(self, i: slice) -> list[DrawGroup]: ...

    def __getitem__(self, i: int | slice) -> DrawGroup | list[DrawGroup]:
        return self._make()[i]

    def __iter__(self) -> Iterator[DrawGroup]:
        return iter(self._make())


def made_groups(groups: Sequence[DrawGroup]) -> Sequence[DrawGroup] | None:
    """A play's draw groups if they exist as objects (a list, or LazyGroups once made), else None."""
    return groups.made if isinstance(groups, LazyGroups) else groups
