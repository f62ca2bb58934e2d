"""What a changed tool text did: per tool whose text changed, its recall and precision base → head
(with Fisher's exact test), the confusion cells it is part of, and the cases that flipped with it.
Pure: (diff, base report, head report) → impacts. The review comments on source lines say this.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from .diff import CaseDelta, CellDelta, Diff
from .report.schema import Metric, Report
from .sourcelines import TextChange, text_changes
from .stats import fisher_exact


@dataclass(frozen=True)
class RateChange:
    """A per-tool rate, base → head; `p`: Fisher's exact test on the two sides' counts."""

    base: Metric | None
    head: Metric
    p: float | None

    @property
    def delta_pt(self) -> float | None:
        if self.base is None or self.base.value is None or self.head.value is None:
            return None
        return round((self.head.value - self.base.value) * 100, 6)


@dataclass(frozen=True)
class ToolImpact:
    tool: str
    changes: tuple[TextChange, ...]  # what changed in the tool's text (description first)
    recall: RateChange
    precision: RateChange
    cells: tuple[CellDelta, ...]  # off-diagonal cells with the tool on either side that moved
    flips: tuple[CaseDelta, ...]  # cases that flipped (to failing first) expecting or picking the tool
    alpha: float
    model: str = ""  # the model these numbers are about, in a run of several models (its label)

    @property
    def regressed(self) -> bool:
        """The model picks it worse: lower recall or precision, a confusion with it grew, or a case
        expecting or picking it flipped to failing."""
        drops = any((r.delta_pt or 0) < 0 for r in (self.recall, self.precision))
        return drops or any(c.delta > 0 for c in self.cells) or any(_failing(f) for f in self.flips)


def _failing(case: CaseDelta) -> bool:
    """A flip to failing (the diff lists it as such: its pass rate went down)."""
    return (case.head.pass_rate or 0) < (case.base.pass_rate or 0)


def _rate(base: Metric | None, head: Metric) -> RateChange:
    p = None
    if base is not None and base.denominator and head.denominator:
        p = fisher_exact(
            base.numerator, base.denominator - base.numerator, head.numerator, head.denominator - head.numerator
        )
    return RateChange(base, head, p)


def _expects(case: CaseDelta, tool: str) -> bool:
    expected = case.expect_tool
    return tool == expected or (isinstance(expected, list) and tool in expected)


def tool_impacts(diff: Diff, base: Report, head: Report) -> list[ToolImpact]:
    """One impact per tool whose text changed between the two surfaces, regressions first."""
    changed = text_changes(base.surface.definitions, head.surface.definitions)
    out = []
    for tool, changes in changed.items():
        stats = head.per_tool.get(tool)
        if stats is None:
            continue
        before = base.per_tool.get(tool)
        cells = tuple(c for c in diff.cells if not c.diagonal and tool in (c.expected, c.picked))
        flips = tuple(
            f for f in (*diff.to_failing, *diff.to_passing) if _expects(f, tool) or tool in (f.base.pick, f.head.pick)
        )
        out.append(
            ToolImpact(
                tool=tool,
                changes=tuple(changes),
                recall=_rate(before.recall if before else None, stats.recall),
                precision=_rate(before.precision if before else None, stats.precision),
                cells=cells,
                flips=flips,
                alpha=diff.paired.alpha,
            )
        )
    return sorted(out, key=lambda i: (not i.regressed, i.tool))


def across_models(per_model: Sequence[tuple[str, list[ToolImpact]]]) -> list[ToolImpact]:
    """Several models' impacts as one per tool: the first model that picks it worse, else the first
    model's — so a change that helps one model and hurts another is commented on as the hurt. Each
    impact is labelled with its model when there are several."""
    if len(per_model) == 1:
        return per_model[0][1]
    chosen: dict[str, ToolImpact] = {}
    for label, impacts in per_model:
        for impact in impacts:
            held = chosen.get(impact.tool)
            if held is None or (impact.regressed and not held.regressed):
                chosen[impact.tool] = replace(impact, model=label)
    return list(chosen.values())


def selected(impacts: Iterable[ToolImpact], every_change: bool) -> list[ToolImpact]:
    """The impacts a review comments on: the regressions, or every changed tool."""
    return [i for i in impacts if every_change or i.regressed]
