"""The API's own tool search in words (--tool-search): did a search find each tool, what it cost to
defer, the searches that missed, and which tools to keep loaded — with the snippet for toolselect and
what each client honours. Plain text; each view escapes it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..report.schema import Report
from .common import pct, rate_change

if TYPE_CHECKING:  # a run with no base loads no diff
    from ..diff import Diff

# Where a client lets a server keep a tool loaded (docs/tool-search.md has the sources).
KEEP_LOADED_ELSEWHERE = (
    'Claude Code: `_meta: {"anthropic/alwaysLoad": true}` on the tool (or `alwaysLoad: true` on the server in '
    ".mcp.json); the Anthropic API: no `defer_loading` on the tool (mcp_toolset: configs.<tool>.defer_loading: "
    "false); Codex defers every MCP tool and has no setting for one"
)
MAX_LISTED = 8


def tool_tokens(report: Report, names: list[str]) -> int:
    """The tokens the named tools' definitions add to every request (as the budget counts them)."""
    by_name = {str(d.get("name")): d for d in report.surface.definitions}
    chosen = [by_name[n] for n in names if n in by_name]
    listed = [[d.get("name"), d.get("description") or "", d.get("inputSchema") or {}] for d in chosen]
    return len(json.dumps(listed)) // 4 if listed else 0


def search_lines(report: Report, diff: Diff | None = None) -> list[str]:
    """The tool search's numbers, in a few lines; nothing when the run deferred nothing to the API."""
    ts, s = report.run.tool_search, report.search
    if ts is None or s is None:
        return []
    found = (
        f"{ts.mode} tool search: the expected tool found in {s.found} of {s.samples} samples (recall@{ts.k} "
        f"{pct(s.recall)}); found but not picked {s.found_not_picked}; never found {s.never_found}"
    )
    lines = [found]
    saved = 1 - ts.tokens_deferred / ts.tokens_loaded if ts.tokens_loaded else 0.0
    eager = f"; {len(ts.eager)} kept loaded ({', '.join(ts.eager[:MAX_LISTED])})" if ts.eager else ""
    lines.append(
        f"tool list per request: {ts.tokens_deferred:,} tokens deferred vs {ts.tokens_loaded:,} with every tool "
        f"loaded ({saved:.0%} less){eager}{loaded_share(report)}"
    )
    missed = [(t, m) for t, m in s.per_tool.items() if m.value is not None and m.value < 1]
    if missed:
        lines.append(
            "not always found: "
            + ", ".join(f"{t} {m.numerator}/{m.denominator}" for t, m in missed[:MAX_LISTED])
            + (f" … {len(missed) - MAX_LISTED} more" if len(missed) > MAX_LISTED else "")
        )
    for miss in s.missed[:3]:
        asked = "; ".join(f"“{q}”" for q in miss.queries) or "no search"
        lines.append(f"missed: {miss.case!r} wanted {miss.tool}, searched {asked}")
    lines += search_changes(diff)
    if s.keep_loaded:
        cost = tool_tokens(report, s.keep_loaded)
        lines.append(
            f"keep loaded: eager: [{', '.join(s.keep_loaded)}] — their cases failed only because no search found "
            f"them; +{cost:,} tokens per request"
        )
        lines.append(f"elsewhere: {KEEP_LOADED_ELSEWHERE}")
    return lines


def loaded_share(report: Report) -> str:
    """`; 4.2 of 90 tools loaded per sample (4.7%)`: what the searches and the eager tools loaded."""
    total = len(report.surface.tools)
    eager = set(report.run.tool_search.eager) if report.run.tool_search else set()
    loaded = [
        len({t for s in sample.searched for t in s.found} | eager)
        for case in report.cases
        for sample in case.samples
        if sample.searched
    ]
    if not loaded or not total:
        return ""
    mean = sum(loaded) / len(loaded)
    return f"; {mean:.1f} of {total} tools loaded per sample ({mean / total:.1%})"


def search_changes(diff: Diff | None) -> list[str]:
    """How the search moved against the base: its recall, and the cases it found before and never now."""
    lines = []
    if (moved := rate_change("search recall", diff.search if diff else None)) is not None:
        lines.append(moved)
    if diff is not None and diff.search is not None and diff.search.lost:
        lost = diff.search.lost
        more = f" … {len(lost) - MAX_LISTED} more" if len(lost) > MAX_LISTED else ""
        lines.append(f"found → never found: {', '.join(repr(c) for c in lost[:MAX_LISTED])}{more}")
    return lines
