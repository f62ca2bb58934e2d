"""How often does each gate fire? A seeded simulation of pull requests, through the gate's own rule.

Every simulated PR has 50 cases whose pass probabilities are drawn from Beta(4, 1) (mean 0.8);
the base and the head each get `repeat` samples per case. With no true change the head uses the
same probabilities (so every firing is a false alarm); with a true regression the head's
probabilities are lower by `shift`. For each PR the gate rule (`toolselect.gate.drop_fails`) is fed
the accuracy change and the paired test (`toolselect.stats.sign_test` over the cases that changed),
exactly as a real comparison computes them.

    python scripts/gate_simulation.py      # the table in docs/gate.md, "Choosing your gate"
"""

from __future__ import annotations

import random

from toolselect.gate import drop_fails
from toolselect.stats import sign_test


def simulate(
    prs: int = 1000,
    cases: int = 50,
    repeat: int = 3,
    shift: float = 0.0,
    max_drop: float | None = 0.0,
    significance: float | None = 0.05,
    seed: int = 11,
) -> float:
    """The share of simulated PRs on which the gate fails."""
    rng = random.Random(seed)
    fired = 0
    for _ in range(prs):
        base_p = [rng.betavariate(4, 1) for _ in range(cases)]
        head_p = [max(0.0, p - shift) for p in base_p]
        base = [sum(rng.random() < p for _ in range(repeat)) for p in base_p]
        head = [sum(rng.random() < p for _ in range(repeat)) for p in head_p]
        delta_pt = (sum(head) - sum(base)) / (cases * repeat) * 100
        improved = sum(h > b for h, b in zip(head, base, strict=True))
        worsened = sum(h < b for h, b in zip(head, base, strict=True))
        fired += drop_fails(delta_pt, sign_test(improved, worsened), max_drop, significance)
    return fired / prs


def table() -> list[tuple[str, float, float, float]]:
    rows = []
    for label, max_drop, significance in (
        ("max-drop 0", 0.0, None),
        ("max-drop 3", 3.0, None),
        ("max-drop 5", 5.0, None),
        ("max-drop 0, significance 0.05", 0.0, 0.05),
        ("max-drop 3, significance 0.05", 3.0, 0.05),
    ):
        rows.append(
            (
                label,
                simulate(shift=0.0, max_drop=max_drop, significance=significance),
                simulate(shift=0.05, max_drop=max_drop, significance=significance, seed=12),
                simulate(shift=0.10, max_drop=max_drop, significance=significance, seed=13),
            )
        )
    return rows


if __name__ == "__main__":
    print("50 cases, repeat 3, 1,000 simulated PRs each")
    print(f"{'gate':<32} {'false alarms (no change)':>25} {'catches a 5-pt drop':>20} {'catches a 10-pt drop':>21}")
    for label, null, five, ten in table():
        print(f"{label:<32} {null:>25.1%} {five:>20.1%} {ten:>21.1%}")
