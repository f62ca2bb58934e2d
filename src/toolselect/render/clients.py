"""What a client did to the surface, in words and in the comment's table (evals.clients): the
names it gave, the tools it never sent, the picks of its own tools, what its search found. Plain
text; each view escapes it."""

from __future__ import annotations

from collections.abc import Sequence

from ..outcome import ModelOutcome
from ..pick import is_built_in
from ..report.build import NONE
from ..report.schema import Report
from .common import pct
from .escape import code, esc


def built_in_picks(report: Report) -> int:
    """Counted samples that expected one of the server's tools and got the client's own tool."""
    return sum(
        n for row, cols in report.confusion.items() if row != NONE for col, n in cols.items() if is_built_in(col)
    )


def client_lines(report: Report) -> list[str]:
    """What the client a report was asked through did to the surface, and what its search found
    (plain text: each view escapes it). Nothing for the raw tool list."""
    c = report.run.client
    if c is None:
        return []
    first = next(iter(c.renamed.values()), None)
    lines = [
        f"{c.title} (facts of {c.checked}): {len(report.surface.tools) - len(c.dropped)} of "
        f"{len(report.surface.tools)} tools sent" + (f", named like {first}" if first else "")
    ]
    if c.refused:
        lines.append(f"nothing was sent: {c.refused}")
    if c.dropped:
        shown = ", ".join(f"{d.tool} (#{d.position + 1})" for d in c.dropped[:6])
        lines.append(f"never sent: {shown}{f' and {len(c.dropped) - 6} more' if len(c.dropped) > 6 else ''}")
    if c.grouped:
        lines.append(f"{len(c.grouped)} tools behind its tool groups, not offered in this emulation")
    if c.builtins:
        stolen = built_in_picks(report)
        lines.append(
            f"{len(c.builtins)} built-in tools offered first ({', '.join(c.builtins[:5])}"
            f"{', …' if len(c.builtins) > 5 else ''}); picked instead of the server's tool in {stolen} samples"
        )
    s = report.search
    if c.deferred and s is not None:
        lines.append(
            f"definitions behind its search: the expected tool found in {s.found} of {s.samples} samples "
            f"(recall@{s.k} {pct(s.recall)}); found but not picked {s.found_not_picked}; never found {s.never_found}"
        )
        missed = [(t, m) for t, m in s.per_tool.items() if m.value is not None and m.value < 1]
        if missed:
            lines.append(
                "not found by its search: " + ", ".join(f"{t} {m.numerator}/{m.denominator}" for t, m in missed[:8])
            )
    return lines


def _listed(expect: str | list[str] | None) -> list[str]:
    return [expect] if isinstance(expect, str) else list(expect or [])


def clients_table(models: Sequence[ModelOutcome]) -> list[str]:
    """With clients (evals.clients): one row per model and client — accuracy, picks of the client's
    own tools, golden tools it never sends, its search's recall, the gate."""
    if not any(m.head.run.client for m in models):
        return []
    rows = [
        "| | client | accuracy | built-in picks | never sent (expected) | search found | gate |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in models:
        c, head = m.head.run.client, m.head
        expected = {t for case in head.cases for t in _listed(case.expect_tool)}
        dropped = [d.tool for d in c.dropped if d.tool in expected] if c else []
        search = head.search
        found = f"{search.found}/{search.samples} (@{search.k})" if search is not None else "—"
        title = esc(c.title) if c else "the raw tool list"
        if c and c.refused:
            title += " (nothing sent)"
        stolen = built_in_picks(head) if c and c.builtins else "—"
        rows.append(
            f"| {esc(m.label)} | {title} | {pct(head.metrics['accuracy'])} | {stolen} "
            f"| {', '.join(code(t) for t in dropped[:3]) or '—'}{' …' if len(dropped) > 3 else ''} | {found} "
            f"| {'✅' if m.verdict.passed else '❌'} |"
        )
    return [*rows, ""]
