"""The verdict over a head report and, when there is one, its diff against the base."""

from __future__ import annotations

from dataclasses import dataclass, field

from .diff import Diff
from .report import Report


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())  # said, but not failing (e.g. a fork PR's notice)


def compare_reasons(diff: Diff | None, max_drop: float | None) -> list[str]:
    """`max_drop` is in percentage points: 0 fires on any drop, 5 allows five points."""
    if diff is None or max_drop is None:
        return []
    delta = diff.metrics["accuracy"].delta_pt
    if delta is not None and delta < -max_drop - 1e-9:
        return [f"accuracy dropped {-delta:.1f} pt vs the base, more than max-drop {max_drop:g} pt"]
    return []


def judge(head: Report, diff: Diff | None, max_drop: float | None) -> Verdict:
    reasons = [*head.gate.reasons, *compare_reasons(diff, max_drop)]
    return Verdict(passed=not reasons, reasons=tuple(reasons))
