"""The verdict over a head report and, when there is one, its diff against the base.

Head-only gates (min_accuracy, max_error_rate, max_over_trigger, min_tool_recall) are in the
report itself; this adds the comparison: `max_drop` (points), `significance` (a drop fails only
when it is also significant), `fail_on_certain_flips`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .diff import Diff
from .report import Report


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())  # said, but not failing (e.g. a fork PR's notice)


@dataclass(frozen=True)
class Comparing:
    """The comparison gate's options (config `evals:`, CLI flags and Action inputs share names)."""

    max_drop: float | None = None
    significance: float | None = None
    fail_on_certain_flips: bool = False


def comparing(settings) -> Comparing:
    """The comparison options of resolved Settings."""
    return Comparing(settings.max_drop, settings.significance, settings.fail_on_certain_flips)


def significance_text(diff: Diff) -> str:
    p = diff.paired
    word = "significant" if p.p_value < p.alpha else "not significant"
    return f"{word} (p = {p.p_value:.2g})"


def drop_fails(delta_pt: float | None, p_value: float, max_drop: float | None, significance: float | None) -> bool:
    """The drop rule, on its own: a drop beyond `max_drop` points fails — and, with `significance`,
    only when the paired test also finds it (p < α). `significance` alone means `max_drop` 0."""
    limit = max_drop if max_drop is not None else (0.0 if significance is not None else None)
    if limit is None or delta_pt is None or delta_pt >= -limit - 1e-9:
        return False
    return significance is None or p_value < significance


def compare(diff: Diff | None, options: Comparing) -> tuple[list[str], list[str]]:
    """(reasons the comparison fails, notes): `max_drop` 0 fires on any drop; with
    `significance`, a drop fails only when it exceeds `max_drop` and p < α."""
    reasons: list[str] = []
    notes: list[str] = []
    if diff is None:
        return reasons, notes
    delta, p = diff.metrics["accuracy"].delta_pt, diff.paired.p_value
    dropped = f"accuracy dropped {-(delta or 0):.1f} pt vs the base"
    bound = f", more than max-drop {options.max_drop:g} pt" if options.max_drop is not None else ""
    if drop_fails(delta, p, options.max_drop, options.significance):
        significant = (
            f", and the drop is significant (p = {p:.2g} < {options.significance:g})" if options.significance else ""
        )
        reasons.append(dropped + bound + significant)
    elif options.significance is not None and drop_fails(delta, p, options.max_drop, None):
        notes.append(
            f"{dropped}{bound}, but it is not significant (p = {p:.2g} ≥ {options.significance:g}): not failing"
        )
    if options.fail_on_certain_flips:
        certain = [c.name if not c.holdout else "a holdout case" for c in diff.to_failing if c.certain]
        if certain:
            shown = ", ".join(certain[:5]) + (f" and {len(certain) - 5} more" if len(certain) > 5 else "")
            reasons.append(f"{len(certain)} case(s) certainly flipped to failing (Fisher's exact test): {shown}")
    return reasons, notes


def compare_reasons(diff: Diff | None, max_drop: float | None) -> list[str]:
    return compare(diff, Comparing(max_drop=max_drop))[0]


def judge(head: Report, diff: Diff | None, options: Comparing | float | None = None) -> Verdict:
    if not isinstance(options, Comparing):
        options = Comparing(max_drop=options)
    reasons, notes = compare(diff, options)
    reasons = [*head.gate.reasons, *reasons]
    return Verdict(passed=not reasons, reasons=tuple(reasons), notes=tuple(notes))
