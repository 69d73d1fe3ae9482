"""Best-arm identification for the simulation: which play is best, named with a stated error probability.

The plays are arms; a sample is one play simulated for one draw (a playout), its value the play's win
probability (or its equity once every game is decided). Draws are common: every play simulated on draw k
meets the same opponent rack and bag order, so two plays are compared by their differences on the draws both
were simulated on, which vary much less than either play's samples (on midgame positions the samples of two
plays correlate at about 0.5 to 0.75).

- Stopping (a generalised likelihood ratio, Chernoff's rule, on the paired differences): for the empirical
  leader a and another play b with n common draws whose differences a - b have mean m > 0 and variance v, the
  evidence that a beats b is
      Z(a, b) = n m^2 / (2 v)          (0 when m <= 0),
  the log-likelihood ratio of "a beats b" against the closest alternative where they are equal (Gaussian
  differences of that variance). The run stops once Z(leader, b) exceeds
      beta(t, delta) = log((K - 1) (1 + log t) / delta)
  for every other play b (t samples so far, K plays, delta = 1 - confidence): a union of the K - 1 pairwise tests
  at level delta / (K - 1), each with the slowly growing log t term of the Garivier-Kaufmann thresholds, which
  keeps the chance of naming a worse play within delta over the whole run (in the Gaussian approximation).
- Sampling (Top-Two): each draw simulates the empirical leader and a challenger, the play of least
  Z(leader, b) + log n(leader, b) (the closest to beating the leader, penalised by how well the pair is known
  already); both on the same draw, which is what their comparison uses.

The playouts and the pairs' sums run in engine_cy.sim (GIL released); this module keeps the few numbers a
decision needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

INITIAL_SAMPLES = 50     # every play's first draws, in common, before any decision
BATCH = 32               # draws per round (each simulates the leader and its challenger)
MIN_CONFIDENCE = 0.5
MAX_CONFIDENCE = 0.9999


@dataclass(frozen=True)
class Pair:
    """The differences a - b of two plays on their common draws."""
    n: int
    mean: float
    var: float           # sample variance, floored (see pairs_from_sums)


def pairs_from_sums(sums: Sequence[tuple[int, float, float]], floor: float) -> list[Pair]:
    """Pairs from (n, sum, sum of squares) of the differences, each variance at least `floor` (a pair whose first
    differences happened to agree must not look infinitely well known)."""
    out = []
    for n, s, sq in sums:
        mean = s / n if n else 0.0
        var = (sq - s * s / n) / (n - 1) if n > 1 else 0.0
        out.append(Pair(n, mean, max(var, floor)))
    return out


def variance_floor(variances: Sequence[float]) -> float:
    """A hundredth of the median of the plays' own sample variances (at least 1e-12)."""
    positive = sorted(v for v in variances if v > 0)
    return max(1e-12, 0.01 * positive[len(positive) // 2]) if positive else 1e-12


def glr(p: Pair) -> float:
    """Z(a, b) from the pair's differences a - b: the evidence that a beats b (0 when it does not seem to)."""
    if p.n == 0 or p.mean <= 0:
        return 0.0
    return p.n * p.mean * p.mean / (2 * p.var)


def threshold(samples: int, arms: int, delta: float) -> float:
    """beta(t, delta) = log((K - 1) (1 + log t) / delta)."""
    return math.log(max(1, arms - 1) * (1 + math.log(max(samples, 1))) / delta)


def leader_of(means: Sequence[float], counts: Sequence[int]) -> int:
    """The empirical best play (on a tie, the one with more samples, then the first)."""
    return max(range(len(means)), key=lambda i: (means[i], counts[i], -i))


def challenger_of(pairs: Sequence[Pair], leader: int, excluded: Sequence[int] = ()) -> int:
    """The play of least Z(leader, b) + log n(leader, b), pairs[b] being the leader's differences with b; -1 when
    none is left."""
    best, best_cost = -1, math.inf
    for b, p in enumerate(pairs):
        if b == leader or b in excluded:
            continue
        cost = glr(p) + math.log(max(p.n, 1))
        if cost < best_cost:
            best, best_cost = b, cost
    return best


def separated(pairs: Sequence[Pair], leader: int, samples: int, delta: float,
              excluded: Sequence[int] = ()) -> tuple[bool, float, float]:
    """Whether the leader is separated from every other play (those in `excluded` aside) after `samples` samples,
    with the least Z and the threshold it is held to."""
    beta = threshold(samples, len(pairs), delta)
    least = min((glr(p) for b, p in enumerate(pairs) if b != leader and b not in excluded), default=math.inf)
    return least > beta, least, beta
