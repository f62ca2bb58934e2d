"""The statistics against known values."""

from __future__ import annotations

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
