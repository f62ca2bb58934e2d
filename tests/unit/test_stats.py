"""The statistics against known values."""

from __future__ import annotations

import itertools
import math

import pytest

from toolselect.stats import cluster_bootstrap, fisher_exact, paired_bootstrap, sign_test, wilson


def test_wilson_known_values():
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)  # the textbook 80% of 10
    low, high = wilson(10, 10)
    assert high == 1.0 and round(low, 4) == 0.7225
    assert wilson(0, 0) is None


def test_sign_test_is_exact():
    assert sign_test(0, 0) == 1.0
    assert sign_test(0, 5) == pytest.approx(2 / 32)  # 0.0625: five out of five is not below 0.05
    assert sign_test(0, 6) == pytest.approx(2 / 64)
    assert sign_test(3, 3) == 1.0
    assert sign_test(1, 9) == pytest.approx(2 * 11 / 1024)


def test_fisher_exact_matches_reference_values():
    assert fisher_exact(5, 0, 0, 5) == pytest.approx(2 / 252)  # 5/5 → 0/5: a certain flip
    assert fisher_exact(3, 0, 0, 3) == pytest.approx(0.1)  # 3/3 → 0/3 is not certain on its own
    assert fisher_exact(1, 0, 0, 1) == pytest.approx(1.0)  # one sample each side proves nothing
    assert fisher_exact(8, 2, 1, 5) == pytest.approx(0.0349650, rel=1e-4)  # R: fisher.test(matrix(c(8,1,2,5),2))


def test_cluster_bootstrap_is_wider_than_samples_pretending_independence():
    # 20 cases × 5 samples, each case all-pass or all-fail: only 20 independent units
    passed = [5] * 14 + [0] * 6
    totals = [5] * 20
    low, high = cluster_bootstrap(passed, totals)
    naive = wilson(70, 100)
    assert low < naive[0] and high > naive[1]
    assert cluster_bootstrap(passed, totals) == (low, high)  # seeded: the same report, the same interval


def test_paired_bootstrap():
    assert paired_bootstrap([]) is None
    assert paired_bootstrap([0.0, 0.0]) == (0.0, 0.0)
    low, high = paired_bootstrap([-1.0] * 5 + [0.0] * 45)
    assert low < -0.09 < high <= 0.0


def exact_fisher(a: int, b: int, c: int, d: int) -> float:
    """Fisher's test as it was written before: exact integer binomials (minutes at 10,000 samples)."""
    row1, row2, col1 = a + b, c + d, a + c
    n = row1 + row2
    if n == 0:
        return 1.0

    def pmf(x: int) -> float:
        return math.comb(row1, x) * math.comb(row2, col1 - x) / math.comb(n, col1)

    observed = pmf(a)
    low, high = max(0, col1 - row2), min(row1, col1)
    return min(1.0, sum(p for x in range(low, high + 1) if (p := pmf(x)) <= observed * (1 + 1e-9)))


def exact_sign_test(improved: int, worsened: int) -> float:
    n = improved + worsened
    if n == 0:
        return 1.0
    k = min(improved, worsened)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def test_fisher_exact_equals_the_exact_integer_formula_on_small_tables():
    worst = max(abs(fisher_exact(*table) - exact_fisher(*table)) for table in itertools.product(range(11), repeat=4))
    assert worst <= 1e-12
    for table in [(30, 20, 20, 30), (100, 0, 0, 100), (97, 3, 80, 20), (300, 200, 200, 300)]:
        assert fisher_exact(*table) == pytest.approx(exact_fisher(*table), rel=1e-9, abs=1e-15)


def test_sign_test_equals_the_exact_integer_formula():
    worst = max(abs(sign_test(i, w) - exact_sign_test(i, w)) for i, w in itertools.product(range(80), repeat=2))
    assert worst <= 1e-12
    assert sign_test(490, 610) == pytest.approx(exact_sign_test(490, 610), rel=1e-9)


def test_fisher_exact_and_the_sign_test_at_100000_samples():
    """Exact integer binomials took minutes here (a crafted artifact's counts); log space takes ms."""
    assert fisher_exact(50_000, 0, 0, 50_000) == 0.0  # 100% → 0%: certain
    assert fisher_exact(25_000, 25_000, 25_000, 25_000) == pytest.approx(1.0)  # no change at all
    assert fisher_exact(50_000, 0, 49_999, 1) == pytest.approx(1.0)  # one sample of 100,000: nothing
    assert fisher_exact(25_300, 24_700, 24_700, 25_300) < 0.001  # a 1.2-point change over 50,000 samples each
    assert sign_test(50_000, 50_000) == pytest.approx(1.0) and sign_test(0, 100_000) == 0.0
