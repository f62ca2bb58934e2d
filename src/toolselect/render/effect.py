"""The measured effect of a pull request that changes only tool descriptions: what the PR comment
leads with, so "reads better, selects worse" shows at once."""

from __future__ import annotations

import json

from ..acceptance import tokens
from ..diff import Diff
from ..gate import significance_text
from ..report.schema import Report
from .common import cell_line, delta_text, pct
from .escape import code, esc


def descriptions_only(diff: Diff | None, base: Report | None, head: Report, paired: str | None) -> list[str]:
    """A pull request that changes only tool descriptions (a rewrite, maybe one made to please a
    quality score) leads with what it did to selection: accuracy Δ with its paired test (`paired`,
    the comment's paired line, when there is one), the confusion cells it heated and cooled, and the
    tool list's tokens."""
    if diff is None or base is None or not diff.tools or any(t.kind != "description" for t in diff.tools):
        return []
    names = ", ".join(code(t.name) for t in diff.tools[:5]) + (
        f" and {len(diff.tools) - 5} more" * (len(diff.tools) > 5)
    )
    acc = diff.metrics["accuracy"]
    was = f"{pct(acc.base)} → " if acc.base is not None else ""
    moved = [c for c in diff.cells if not c.diagonal]
    heated = [cell_line(c).removeprefix("- ") for c in moved if c.delta > 0][:5]
    cooled = [cell_line(c).removeprefix("- ") for c in moved if c.delta < 0][:5]
    before, after = _list_tokens(base), _list_tokens(head)
    shift = delta_text(acc.delta_pt)
    sure = f"{significance_text(diff)} by {esc(diff.paired.test)}"
    share = f", {(after - before) / before:+.1%}" if before else ""
    return [
        f"**Only tool descriptions changed** ({names}). What they did to selection:",
        "",
        f"- accuracy {was}{pct(acc.head)}"
        + (f": {paired[:1].lower()}{paired[1:]}" if paired else f" ({shift}), {sure}"),
        f"- confusions heated: {'; '.join(heated) or 'none'}",
        f"- confusions cooled: {'; '.join(cooled) or 'none'}",
        f"- tool-list tokens {before} → {after} ({after - before:+d}{share})",
        "",
    ]


def _list_tokens(report: Report) -> int:
    """The tool list's tokens as the model is sent it (the budget's estimate)."""
    listed = [
        [d.get("name"), d.get("description") or "", d.get("inputSchema") or {}] for d in report.surface.definitions
    ]
    return tokens(json.dumps(listed))
