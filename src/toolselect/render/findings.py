"""Lint findings as every view shows them: the golden set's first, then the surface's; a few of each
code in full and the rest counted; one line that tallies every code. At 46 tools a surface has a
hundred findings of three kinds, and the one error must not drown in them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..lint.finding import Finding
from ..report.schema import FindingOut

AnyFinding = Finding | FindingOut

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
SCOPES = (("golden", "Golden set"), ("surface", "Tool surface"))


def sorted_findings(findings: Iterable[AnyFinding]) -> list[AnyFinding]:
    """The golden set's findings first, then the surface's; within each, errors first, then by code,
    then in file order."""
    scope = {name: i for i, (name, _) in enumerate(SCOPES)}
    return sorted(
        findings,
        key=lambda f: (scope[f.scope], SEVERITY_ORDER[f.severity], f.code, f.file or "", f.line or 0),
    )


@dataclass(frozen=True)
class FindingGroup:
    title: str  # "Golden set", "Tool surface"
    shown: list[AnyFinding]
    more: list[tuple[str, int]]  # (code, how many of it are not shown), most first
    total: int


def finding_groups(findings: Iterable[AnyFinding], per_code: int | None) -> list[FindingGroup]:
    """The findings by scope (golden set, then surface); at most `per_code` of each code are shown
    (None: all); an error is always shown."""
    out = []
    ordered = sorted_findings(findings)
    for scope, title in SCOPES:
        mine = [f for f in ordered if f.scope == scope]
        if not mine:
            continue
        seen: Counter[str] = Counter()
        shown, hidden = [], Counter[str]()
        for f in mine:
            seen[f.code] += 1
            if per_code is None or f.severity == "error" or seen[f.code] <= per_code:
                shown.append(f)
            else:
                hidden[f.code] += 1
        out.append(FindingGroup(title, shown, _most_first(hidden), len(mine)))
    return out


def tally(findings: Iterable[AnyFinding]) -> str:
    """One line for every code: '186 prompt-todo · 46 param-no-description · 43 confusable'."""
    return " · ".join(f"{n} {code}" for code, n in _most_first(Counter(f.code for f in findings)))


def more_text(more: Sequence[tuple[str, int]]) -> str:
    """'… 40 more coverage-boundary, 183 more prompt-todo' ('' when nothing is left out)."""
    return ("… " + ", ".join(f"{n} more {code}" for code, n in more)) if more else ""


def news(head: Sequence[AnyFinding], base: Sequence[AnyFinding], changed_tools: Iterable[str]) -> list[AnyFinding]:
    """The head's findings a pull request brought: not among the base's, or about a tool it changed."""
    changed = set(changed_tools)
    before = {_key(f) for f in base}
    return [f for f in head if _key(f) not in before or (f.tool is not None and f.tool in changed)]


def _key(f: AnyFinding) -> tuple[str, str, str | None, str | None, str]:
    return (f.code, f.scope, f.tool, f.case, f.message)


def _most_first(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
