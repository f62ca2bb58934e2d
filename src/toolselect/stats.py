"""Honest numbers for small golden sets. Pure functions, exact where it matters, seeded where not.

- Wilson 95% intervals for every rate.
- With repeats, samples of one case are correlated, so accuracy's interval resamples *cases*
  (a cluster bootstrap), not samples.
- Base vs head: the case is the unit. An exact two-sided sign test over the cases whose pass rate
  changed (McNemar's exact test when every case has one sample), a paired bootstrap interval for the
  accuracy difference, and Fisher's exact test per case to mark a flip that is certain on its own.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z95 = 1.959963984540054
SEED = 20261130  # fixed: the same report always gets the same interval


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k successes in n trials."""
    if n <= 0:
        return None
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def _resamples(units: int) -> int:
    """Enough resamples for a stable 95% interval, bounded so 10,000 cases stay fast."""
    return max(400, min(2000, 2_000_000 // max(units, 1)))


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def cluster_bootstrap(passed: Sequence[int], totals: Sequence[int], seed: int = SEED) -> tuple[float, float] | None:
    """95% percentile interval of Σpassed/Σtotals, resampling whole cases (clusters)."""
    units = [(p, t) for p, t in zip(passed, totals, strict=True) if t > 0]
    if not units:
        return None
    if len(units) == 1:
        return wilson(units[0][0], units[0][1])
    rng = random.Random(seed)
    n = len(units)
    ratios = []
    for _ in range(_resamples(n)):
        k = m = 0
        for _ in range(n):
            p, t = units[rng.randrange(n)]
            k += p
            m += t
        ratios.append(k / m)
    return _percentile(ratios, 0.025), _percentile(ratios, 0.975)


def paired_bootstrap(differences: Sequence[float], seed: int = SEED) -> tuple[float, float] | None:
    """95% percentile interval of the mean per-case difference (head − base), resampling cases."""
    if not differences:
        return None
    if all(d == differences[0] for d in differences):
        return differences[0], differences[0]
    rng = random.Random(seed)
    n = len(differences)
    means = [sum(differences[rng.randrange(n)] for _ in range(n)) / n for _ in range(_resamples(n))]
    return _percentile(means, 0.025), _percentile(means, 0.975)


def sign_test(improved: int, worsened: int) -> float:
    """Exact two-sided sign test (binomial, p = 1/2) over the cases that changed; 1.0 when none did."""
    n = improved + worsened
    if n == 0:
        return 1.0
    k = min(improved, worsened)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact test for the 2×2 table [[a, b], [c, d]] (e.g. base passed/failed,
    head passed/failed): the probability of tables at least as extreme, margins fixed."""
    row1, row2, col1 = a + b, c + d, a + c
    n = row1 + row2
    if n == 0:
        return 1.0

    def pmf(x: int) -> float:
        return math.comb(row1, x) * math.comb(row2, col1 - x) / math.comb(n, col1)

    observed = pmf(a)
    low, high = max(0, col1 - row2), min(row1, col1)
    return min(1.0, sum(p for x in range(low, high + 1) if (p := pmf(x)) <= observed * (1 + 1e-9)))
