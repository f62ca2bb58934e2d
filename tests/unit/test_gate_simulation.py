"""The significance-aware gate is quiet on noise and still catches real regressions.

1,000 seeded simulated PRs (50 cases, repeat 3, per-case pass probabilities from a Beta
distribution), fed through the gate's own rule and the product's sign test: see
scripts/gate_simulation.py and "Choosing your gate" in docs/gate.md for the numbers.
"""

from __future__ import annotations

import importlib.util
import math

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("gate_simulation", ROOT / "scripts" / "gate_simulation.py")
assert spec is not None and spec.loader is not None
simulation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(simulation)

ALPHA = 0.05
MARGIN = 3 * math.sqrt(ALPHA * (1 - ALPHA) / 1000)  # three standard errors of a rate over 1,000 PRs


def test_no_change_rarely_fails_the_significance_aware_gate_but_often_fails_a_plain_one():
    significant = simulation.simulate(shift=0.0, max_drop=0.0, significance=ALPHA)
    plain = simulation.simulate(shift=0.0, max_drop=0.0, significance=None)
    print(f"false alarms: significance-aware {significant:.1%}, plain max-drop 0 {plain:.1%}")
    assert significant <= ALPHA + MARGIN
    assert plain >= 0.30 and plain >= 10 * max(significant, 0.01)


def test_a_true_ten_point_regression_is_usually_caught():
    power = simulation.simulate(shift=0.10, max_drop=0.0, significance=ALPHA, seed=13)
    more_samples = simulation.simulate(shift=0.10, max_drop=0.0, significance=ALPHA, seed=13, repeat=5)
    print(f"power for a 10-point drop: repeat 3 {power:.1%}, repeat 5 {more_samples:.1%}")
    assert power >= 0.35  # docs: 47.8%
    assert more_samples > power  # more samples per case, more power
