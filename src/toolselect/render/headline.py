"""A verdict's first lines, for the PR comment and the Markdown report: the headline (passed,
failed, or in warn mode "would fail"; accuracy base → head; what decided), the paired comparison
under it, and the critical misroutes, listed before anything else (severity.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..gate import critical_samples, significance_text
from ..outcome import BASE_REFUSED
from .common import delta_text, frac, pct, states_text
from .escape import esc

if TYPE_CHECKING:
    from ..diff import Diff
    from ..gate import BaseFailure, Verdict
    from ..report.schema import Report

MAX_CRITICAL = 10  # critical misroutes listed one by one; the rest counted


ICONS = {"passed": "✅", "failed": "❌", "would fail": "⚠️", "inconclusive": "❔"}  # by Outcome.word
WARN_NOTE = "mode: warn — not failing the check on this verdict (mode: enforce fails it)"


def critical_list(report: Report) -> list[str]:
    """The critical misroutes the gate counts, one bullet each (then a blank line); empty when none."""
    count, found = critical_samples(report)
    if not found:
        return []
    lines = [f"- ⛔ {esc(line)}" for line in found[:MAX_CRITICAL]]
    if len(found) > MAX_CRITICAL:
        lines.append(f"- ⛔ and {len(found) - MAX_CRITICAL} more cases (the report lists every one)")
    samples = f"{count} sample{'s' * (count != 1)}"
    said = f"**Critical misroutes ({samples})**: a destructive or writing call nobody asked for, or a forbidden one"
    return [said, "", *lines, ""]


HEADLINE_CHARS = 150  # the comment's headline is one line: the verdict, accuracy base → head, the first reason


def title_line(
    verdict: Verdict,
    head: Report,
    diff: Diff | None,
    base_note: str | None,
    failed: BaseFailure | None = None,
    base_too: bool = False,
    word: str = "",
) -> str:
    """One line of at most HEADLINE_CHARS: the verdict, accuracy base → head, and what decided a
    failure (its first reason; "fails on the base too" when the base fails the same gate and nothing
    dropped); with a base, how many cases broke, destabilized, were fixed or are inconclusive. The
    interval and the paired test are the next line's (`paired_line`). `word`: the
    outcome's (Outcome.word: "would fail" in warn mode, "inconclusive"); by default passed or failed."""
    word = word or ("passed" if verdict.passed else "failed")
    icon = ICONS[word]
    acc = head.metrics["accuracy"]
    if failed is not None:
        change = f"no comparison: the base could not be evaluated (head accuracy {pct(acc)}, {frac(acc)})"
    elif diff is not None and diff.metrics["accuracy"].base is not None:
        moved = diff.metrics["accuracy"]
        change = f"accuracy {pct(moved.base)} → {pct(acc)} ({delta_text(moved.delta_pt)})"
        change += f" · {states_text(diff.states, ', ')}" if diff.states else ""
    else:
        refused = base_note is not None and base_note.startswith(BASE_REFUSED)
        change = f"accuracy {pct(acc)} ({frac(acc)})" + (
            f" · {BASE_REFUSED}" if refused else " · no baseline" if base_note else ""
        )
    line = f"### {icon} toolselect {word}: {change}"
    if failed is None and not verdict.passed and verdict.reasons:
        why = ("fails on the base too: " if base_too else "") + verdict.reasons[0]
        room = HEADLINE_CHARS - len(line) - 3
        shown = esc(" ".join(why.split()))
        if len(shown) > room:
            shown = shown[: max(0, room - 1)].rstrip("\\ ") + "…"
        line += f" — {shown}"
    return line


def paired_line(diff: Diff | None, verdict: Verdict, significance: float | None) -> str | None:
    """The paired comparison under the headline: the difference over the cases on both sides, its
    interval and test — and, when a drop failed without a significance test, that the drop decided."""
    if diff is None or diff.metrics["accuracy"].base is None:
        return None
    paired = diff.paired
    if paired.ci_pt is None or not paired.cases:
        return None
    whole = (
        paired.cases == diff.head.counted_cases == diff.base.counted_cases
        and abs((paired.delta_pt or 0) - (diff.metrics["accuracy"].delta_pt or 0)) < 0.05
    )
    over = "the whole suite" if whole else f"the {paired.cases} cases on both sides"
    low, high = signed(paired.ci_pt[0]), signed(paired.ci_pt[1])
    text = f"Paired over {over}: {delta_text(paired.delta_pt)}, 95% CI {low}…{high}"
    if paired.improved or paired.worsened:
        text += f", {significance_text(diff)}"
        dropped = any(r.startswith("accuracy dropped") for r in verdict.reasons)
        if dropped and significance is None and paired.p_value >= paired.alpha:
            text += " — max-drop decided, not the test (`significance: 0.05` fails only significant drops)"
    return text + "."


def signed(points: float) -> str:
    return f"{'+' if points > 0 else '−' if points < 0 else ''}{abs(points):.1f}"
