"""The bag's draws: every ordered draw with its weight, draw groups (draws that give the same position after
a play) and their labels."""

from __future__ import annotations

from dataclasses import dataclass

from engine_cy.alphabet import LetterDistribution


def ordered_draws(counts: list[int], k: int) -> list[tuple[tuple[int, ...], int]]:
    """Every distinct ordered draw of k tiles from `counts`, with its weight: the number of ordered draws of
    distinguishable tiles it stands for (the product of the falling multiplicities)."""
    out: list[tuple[tuple[int, ...], int]] = []
    cur: list[int] = []
    c = list(counts)

    def rec(weight: int) -> None:
        if len(cur) == k:
            out.append((tuple(cur), weight))
            return
        for ml, n in enumerate(c):
            if n:
                c[ml] -= 1
                cur.append(ml)
                rec(weight * n)
                cur.pop()
                c[ml] += 1

    rec(1)
    return out


def group_key(seq: tuple[int, ...], tiles_played: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Draws that give the same position after a play of `tiles_played` tiles: what we draw (a multiset)
    and what stays in the bag (in order)."""
    t = min(tiles_played, len(seq))
    return tuple(sorted(seq[:t])), seq[t:]


def draw_label(ld: LetterDistribution, seq: tuple[int, ...], tiles_played: int) -> str:
    head, rest = group_key(seq, tiles_played)
    return "[" + "".join(ld.label(t) for t in head) + "]" + "".join(ld.label(t) for t in rest)


def draw_groups(ld: LetterDistribution, draws: list[tuple[tuple[int, ...], int]],
                tiles_played: int) -> list[tuple[str, tuple[int, ...], int]]:
    """The draw groups of a play of `tiles_played` tiles: (label, a representative draw, total weight) in the
    order of `draws` (see ordered_draws)."""
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[str, tuple[int, ...], int]] = {}
    for seq, w in draws:
        gk = group_key(seq, tiles_played)
        if gk in groups:
            lab, first, total = groups[gk]
            groups[gk] = (lab, first, total + w)
        else:
            groups[gk] = (draw_label(ld, seq, tiles_played), seq, w)
    return list(groups.values())


def counts_str(ld: LetterDistribution, counts: list[int]) -> str:
    """Tile counts (by machine letter) as text."""
    return "".join(ld.label(m) * n for m, n in enumerate(counts))


@dataclass
class DrawGroup:
    label: str
    seq: tuple[int, ...]      # a representative draw order (first drawn first)
    weight: int
    outcome: int | None = None
    spread: int | None = None
    quick: int | None = None  # the quick pass's verdict (a preview at low fidelity)
    quick2: int | None = None  # the quick pass's second level's verdict (2-ply endgames)
    capped: bool = False      # a continuation past the nesting cap took part in the full verdict
