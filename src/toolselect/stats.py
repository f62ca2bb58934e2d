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
import sys
from collections.abc import Callable, Sequence

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


def _log_comb(n: int, k: int) -> float:
    """log C(n, k), by the log-gamma function: exact integers grow with n, this stays one float."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _tail_sum(log_term: Callable[[int], float], start: int, stop: int, step: int) -> float:
    """Σ exp(log_term(x)) for x from `start` towards `stop` (exclusive), the terms shrinking in that
    direction (a log-concave distribution, walked away from its mode). It stops once the rest is
    below 1e-17 of the sum: past the ratio r between two terms, every later ratio is smaller (log-
    concavity), so the rest is at most term · r / (1 − r)."""
    total = 0.0
    previous = None
    for x in range(start, stop, step):
        term = math.exp(log_term(x))
        total += term
        if term == 0.0:
            break  # underflow: every later term is smaller still
        if previous is not None and term < previous:
            ratio = term / previous
            if term * ratio / (1 - ratio) <= total * 1e-17:
                break
        previous = term
    return total


def sign_test(improved: int, worsened: int) -> float:
    """Exact two-sided sign test (binomial, p = 1/2) over the cases that changed; 1.0 when none did."""
    n = improved + worsened
    if n == 0:
        return 1.0
    k = min(improved, worsened)
    log_half = n * math.log(2)
    # P(X ≤ k) for X ~ Binomial(n, 1/2), from k down: k ≤ n/2, so the terms shrink that way
    tail = _tail_sum(lambda i: _log_comb(n, i) - log_half, k, -1, -1)
    return min(1.0, 2 * tail)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact test for the 2×2 table [[a, b], [c, d]] (e.g. base passed/failed,
    head passed/failed): the probability of tables at least as extreme, margins fixed.

    In log space (log-gamma), and only the terms that count: the hypergeometric probabilities rise
    to the mode and fall after it, so on each side of the mode the tables at most as likely as the
    observed one are a tail, found by bisection and summed outwards until the rest is negligible.
    100,000 samples take milliseconds, where exact integer binomials took minutes."""
    row1, row2, col1 = a + b, c + d, a + c
    n = row1 + row2
    if n == 0:
        return 1.0
    low, high = max(0, col1 - row2), min(row1, col1)
    log_total = _log_comb(n, col1)

    def log_pmf(x: int) -> float:
        return _log_comb(row1, x) + _log_comb(row2, col1 - x) - log_total

    # Ties count as extreme: a relative 1e-9 as before, or wider when log-gamma's rounding (a few
    # ulps of log n!, 1e-10 at n = 100,000) could be larger
    slack = max(math.log1p(1e-9), 32 * sys.float_info.epsilon * math.lgamma(n + 1))
    cutoff = log_pmf(a) + slack
    mode = min(high, max(low, (row1 + 1) * (col1 + 1) // (n + 2)))
    # left of the mode (mode included) the terms fall going down: the largest x with log_pmf ≤ cutoff
    lo, hi = low - 1, mode  # invariant: lo ≤ cutoff (or below the range), hi > cutoff
    if log_pmf(mode) <= cutoff:
        lo = mode
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if log_pmf(mid) <= cutoff:
                lo = mid
            else:
                hi = mid
    left = _tail_sum(log_pmf, lo, low - 1, -1) if lo >= low else 0.0
    # right of the mode the terms fall going up: the smallest x > mode with log_pmf ≤ cutoff
    lo, hi = mode, high + 1  # invariant: lo > cutoff (or the mode), hi ≤ cutoff (or above the range)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if log_pmf(mid) <= cutoff:
            hi = mid
        else:
            lo = mid
    right = _tail_sum(log_pmf, hi, high + 1, 1) if hi <= high else 0.0
    return min(1.0, left + right)
