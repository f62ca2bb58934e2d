"""(base report, head report) → diff. Pure: no I/O.

Every metric base → head with Δ in points; every confusion cell that changed, biggest change
first; the cases that flipped (paired by name, else by prompt), each with its state — *broke*
(passed every sample on the base, passes none now), *destabilized* (passed every sample on the
base, now flips between samples), *fixed* (passes every sample now, did not on the base),
*inconclusive* (more than half of a side's samples are errors: nothing to tell) — and the whole
comparison's `inconclusive` when it can tell nothing; new and removed cases; the tool surface
diff (tools added, removed, each changed description or schema as a unified diff); and what each
side cost.
"""

from __future__ import annotations

import difflib
import json
from typing import Any, Literal, get_args

from pydantic import Field

from .report.reading import case_headline, expected_text, pick_name, right_cell, search_hits, steals
from .report.schema import DIMENSIONS, CaseOut, Metric, Report, Sequence_, only_when_set
from .stats import fisher_exact, paired_bootstrap, sign_test
from .strict import Record
from .taxonomy import ReplyKind


class MetricDelta(Record):
    base: Metric | None
    head: Metric
    delta_pt: float | None  # head − base in percentage points; null when either side is unmeasured


class CellDelta(Record):
    expected: str
    picked: str
    base: int
    head: int

    @property
    def delta(self) -> int:
        return self.head - self.base

    @property
    def diagonal(self) -> bool:
        return right_cell(self.expected, self.picked)


class DimensionDelta(Record):
    """One of seed 004's dimensions, base → head (mean 0–3; null when no sample was scored on it)."""

    base: float | None
    head: float | None
    delta: float | None
    base_n: int
    head_n: int


class CaseSide(Record):
    pass_rate: float | None
    passed: int
    evaluated: int
    pick: str  # the headline pick, e.g. "get_weather" or "(none)"
    outcome: str


CaseState = Literal["broke", "destabilized", "fixed", "inconclusive"]
CASE_STATES: tuple[str, ...] = get_args(CaseState)  # in the order said


class CaseDelta(Record):
    name: str
    expect_tool: str | list[str] | None
    holdout: bool
    file: str
    line: int
    base: CaseSide
    head: CaseSide
    p_value: float = 1.0  # Fisher's exact test on this case's base vs head samples
    certain: bool = False  # p_value < alpha: the flip is certain on its own, whatever the suite says
    expect_calls: list[str] | None = only_when_set()  # a trajectory case: the expected calls' tools
    sequence: Sequence_ | None = only_when_set()
    expect_reply: ReplyKind | None = only_when_set()  # no call, and this kind of reply
    state: CaseState | None = only_when_set()  # None: it moved, but none of the four

    @property
    def expected(self) -> str:
        return expected_text(self.expect_tool, self.expect_calls, self.sequence, self.expect_reply)


class Paired(Record):
    """The suite-level comparison with the case as the unit."""

    cases: int  # cases evaluated on both sides
    improved: int  # pass rate went up
    worsened: int  # pass rate went down
    test: str  # "McNemar's exact test" (one sample per case) or "exact sign test over cases"
    p_value: float
    delta_pt: float | None  # mean change of the per-case pass rate, in points
    ci_pt: tuple[float, float] | None  # its 95% interval (paired bootstrap over cases)
    alpha: float  # the level `certain` and "significant" use


class ToolChange(Record):
    name: str
    kind: Literal["added", "removed", "description", "schema"]
    diff: str = ""  # unified diff for description/schema changes


class SideStats(Record):
    surface_hash: str
    cases: int
    counted_cases: int  # reviewed cases with an evaluated sample: what the gate counts
    samples: int
    cache_hits: int
    api_calls: int


class RateDelta(Record):
    """A rate base → head, paired over the cases on both sides: how many cases it rose in and fell in,
    and the exact sign test's p."""

    base: float | None
    head: float | None
    delta_pt: float | None
    rose: int
    fell: int
    p_value: float


class StealDelta(RateDelta):
    """The steal rate (report.steal): a client's own tools taking picks."""


class SearchDelta(RateDelta):
    """The search's recall (report.search), and the cases whose tool every search found on the base and
    none finds on the head (found → never found)."""

    lost: list[str] = Field(default_factory=list)


class Diff(Record):
    schema_version: Literal[1] = 1
    metrics: dict[str, MetricDelta]
    cells: list[CellDelta]
    to_failing: list[CaseDelta]
    to_passing: list[CaseDelta]
    changed: list[CaseDelta]  # pass rate moved without flipping (repeats)
    inconclusive_cases: list[CaseDelta] = only_when_set([])  # moved, but mostly errors on a side: not flips
    inconclusive: str | None = only_when_set()  # the comparison as a whole can tell nothing: why
    new_cases: list[str]
    removed_cases: list[str]
    tools: list[ToolChange]
    base: SideStats
    head: SideStats
    paired: Paired
    dimensions: dict[str, DimensionDelta] | None = only_when_set()  # trajectory cases on either side
    steal: StealDelta | None = only_when_set()  # a client's own tools taking picks, on both sides
    search: SearchDelta | None = only_when_set()  # a search before the pick (tool search, a deferring client)

    @property
    def states(self) -> dict[str, int]:
        """How many cases are in each state (broke, destabilized, fixed, inconclusive), those with any."""
        moved = [*self.to_failing, *self.to_passing, *self.changed, *self.inconclusive_cases]
        return {s: n for s in CASE_STATES if (n := sum(c.state == s for c in moved))}

    @property
    def has_changes(self) -> bool:
        deltas = [m.delta_pt for m in self.metrics.values() if m.delta_pt]
        return bool(
            deltas
            or self.cells
            or self.to_failing
            or self.to_passing
            or self.changed
            or self.inconclusive_cases
            or self.new_cases
            or self.removed_cases
            or self.tools
            or any(d.delta for d in (self.dimensions or {}).values())
        )


def metric_delta(base: Metric | None, head: Metric) -> MetricDelta:
    delta = None
    if base is not None and base.value is not None and head.value is not None:
        delta = round((head.value - base.value) * 100, 6)
    return MetricDelta(base=base, head=head, delta_pt=delta)


def changed_cells(base: dict[str, dict[str, int]], head: dict[str, dict[str, int]]) -> list[CellDelta]:
    """Cells whose count moved; off-diagonal (confusions) before diagonal, biggest |Δ| first."""
    keys = {(e, p) for side in (base, head) for e, row in side.items() for p in row}
    cells = [
        CellDelta(expected=e, picked=p, base=base.get(e, {}).get(p, 0), head=head.get(e, {}).get(p, 0)) for e, p in keys
    ]
    cells = [c for c in cells if c.delta]
    return sorted(cells, key=lambda c: (c.diagonal, -abs(c.delta), -c.head, c.expected, c.picked))


def _side(case: CaseOut) -> CaseSide:
    outcome, sample = case_headline(case)
    return CaseSide(
        pass_rate=case.pass_rate, passed=case.passed, evaluated=case.evaluated, pick=pick_name(sample), outcome=outcome
    )


def pair_cases(
    base: list[CaseOut], head: list[CaseOut]
) -> tuple[list[tuple[CaseOut, CaseOut]], list[CaseOut], list[CaseOut]]:
    """Pair by name, then the rest by prompt: (pairs, only in head, only in base)."""
    by_name = {c.name: c for c in base}
    pairs, unpaired = [], []
    for case in head:
        match = by_name.pop(case.name, None)
        (pairs.append((match, case)) if match is not None else unpaired.append(case))
    by_prompt = {c.prompt: c for c in by_name.values()}
    new = []
    for case in unpaired:
        match = by_prompt.pop(case.prompt, None)
        (pairs.append((match, case)) if match is not None else new.append(case))
    return pairs, new, list(by_prompt.values())


def unmeasured(case: CaseOut) -> bool:
    """More than half of the case's evaluated samples are errors (the provider, the client): its pass
    rate says nothing about the model."""
    errors = sum(s.outcome in ("ERROR", "CLIENT-FAILED") for s in case.samples)
    return 2 * errors > case.evaluated


def state_of(base: CaseOut, head: CaseOut) -> CaseState | None:
    """A moved case's state (see the module's docstring); None when none of them applies."""
    if unmeasured(base) or unmeasured(head):
        return "inconclusive"
    if base.passed == base.evaluated:
        return "broke" if head.passed == 0 else "destabilized" if head.passed < head.evaluated else None
    return "fixed" if head.passed == head.evaluated else None


def suite_inconclusive(compared: int, inconclusive: int, base: Report, head: Report) -> str | None:
    """Why the comparison as a whole can tell nothing: no case could be compared though both sides
    counted some, or more cases were too errored to tell than could be told."""
    told = compared - inconclusive
    if told == 0 and _counted(base) and _counted(head):
        if inconclusive:
            return f"all {inconclusive} cases that moved are mostly errors on one side"
        return "no case was evaluated on both sides (renamed, or pending review on one side)"
    if inconclusive > told:
        return f"{inconclusive} of the {compared} cases compared are mostly errors on one side"
    return None


def _counted(report: Report) -> bool:
    return any(c.evaluated and c.status != "needs_review" for c in report.cases)


def passing(case: CaseOut) -> bool | None:
    """A case passes when every evaluated sample passed; None when nothing was evaluated."""
    return None if not case.evaluated else case.passed == case.evaluated


def surface_changes(base: list[dict[str, Any]], head: list[dict[str, Any]]) -> list[ToolChange]:
    old = {d["name"]: d for d in base}
    new = {d["name"]: d for d in head}
    out: list[ToolChange] = []
    for name in new.keys() - old.keys():
        out.append(ToolChange(name=name, kind="added", diff=_unified("", _text(new[name]), name)))
    for name in old.keys() - new.keys():
        out.append(ToolChange(name=name, kind="removed"))
    for name in old.keys() & new.keys():
        a, b = old[name], new[name]
        if _text(a) != _text(b):
            out.append(ToolChange(name=name, kind="description", diff=_unified(_text(a), _text(b), name)))
        if a.get("inputSchema") != b.get("inputSchema"):
            out.append(
                ToolChange(
                    name=name,
                    kind="schema",
                    diff=_unified(_json(a.get("inputSchema")), _json(b.get("inputSchema")), name),
                )
            )
    order = {"removed": 0, "added": 1, "description": 2, "schema": 3}
    return sorted(out, key=lambda t: (order[t.kind], t.name))


def _text(definition: dict[str, Any]) -> str:
    description = definition.get("description") or ""
    return description if isinstance(description, str) else json.dumps(description)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


DIFF_MAX_LINES = 400  # per side: a description or schema longer than this is diffed in part (a
# crafted pair of 50,000-line descriptions kept difflib busy for 14 s; nobody reads such a diff)


def _unified(a: str, b: str, name: str) -> str:
    old, new = a.splitlines(), b.splitlines()
    cut = len(old) > DIFF_MAX_LINES or len(new) > DIFF_MAX_LINES
    lines = difflib.unified_diff(
        old[:DIFF_MAX_LINES], new[:DIFF_MAX_LINES], fromfile=f"base/{name}", tofile=f"head/{name}", lineterm="", n=3
    )
    text = "\n".join(lines)
    return text + (f"\n… (only the first {DIFF_MAX_LINES} lines of each side are compared)" if cut else "")


def _stats(report: Report) -> SideStats:
    return SideStats(
        surface_hash=report.surface.hash,
        cases=report.counts.cases,
        samples=report.counts.samples,
        counted_cases=sum(1 for c in report.cases if c.evaluated and c.status != "needs_review"),
        cache_hits=report.run.cache_hits,
        api_calls=report.run.api_calls,
    )


def dimension_deltas(base: Report, head: Report) -> dict[str, DimensionDelta] | None:
    if base.dimensions is None and head.dimensions is None:
        return None
    out = {}
    for name in DIMENSIONS:
        before, after = (base.dimensions or {}).get(name), (head.dimensions or {}).get(name)
        b, h = before.mean if before else None, after.mean if after else None
        out[name] = DimensionDelta(
            base=b,
            head=h,
            delta=None if b is None or h is None else round(h - b, 6),
            base_n=before.n if before else 0,
            head_n=after.n if after else 0,
        )
    return out


def diff_reports(base: Report, head: Report, alpha: float = 0.05) -> Diff:
    """`alpha` marks certain flips (Fisher, per case) and significant suite changes."""
    pairs, new, removed = pair_cases(base.cases, head.cases)
    to_failing, to_passing, changed, errored = [], [], [], []
    differences: list[float] = []
    improved = worsened = 0
    single = True
    for old, now in pairs:
        before, after = passing(old), passing(now)
        was, rate = old.pass_rate, now.pass_rate
        if before is None or after is None or was is None or rate is None or "needs_review" in (old.status, now.status):
            continue  # unevaluated or pending on either side: not counted by the gate, not compared
        single = single and old.evaluated == 1 and now.evaluated == 1
        differences.append(rate - was)
        improved += rate > was
        worsened += rate < was
        p = fisher_exact(old.passed, old.evaluated - old.passed, now.passed, now.evaluated - now.passed)
        delta = CaseDelta(
            name=now.name,
            expect_tool=now.expect_tool,
            holdout=now.split == "holdout",
            file=now.source.file,
            line=now.source.line,
            base=_side(old),
            head=_side(now),
            p_value=p,
            certain=p < alpha,
            expect_calls=[c.tool for c in now.expect_calls] if now.expect_calls is not None else None,
            sequence=now.sequence,
            expect_reply=now.expect_reply,
            state=state_of(old, now) if rate != was else None,
        )
        if delta.state == "inconclusive":
            errored.append(delta)
        elif (before and not after) or (delta.certain and rate < was):
            to_failing.append(delta)
        elif (after and not before) or (delta.certain and rate > was):
            to_passing.append(delta)
        elif was != rate:
            changed.append(delta)
    certain_first = lambda d: (not d.certain, d.p_value)  # noqa: E731
    ci = paired_bootstrap(differences)
    paired = Paired(
        cases=len(differences),
        improved=improved,
        worsened=worsened,
        test="McNemar's exact test" if single else "exact sign test over cases",
        p_value=sign_test(improved, worsened),
        delta_pt=round(sum(differences) / len(differences) * 100, 6) if differences else None,
        ci_pt=(round(ci[0] * 100, 6), round(ci[1] * 100, 6)) if ci else None,
        alpha=alpha,
    )
    return Diff(
        metrics={k: metric_delta(base.metrics.get(k), m) for k, m in head.metrics.items()},
        cells=changed_cells(base.confusion, head.confusion),
        to_failing=sorted(to_failing, key=certain_first),
        to_passing=sorted(to_passing, key=certain_first),
        changed=changed,
        inconclusive_cases=errored,
        inconclusive=suite_inconclusive(len(differences), len(errored), base, head),
        new_cases=[c.name for c in new],
        removed_cases=[c.name for c in removed],
        tools=surface_changes(base.surface.definitions, head.surface.definitions),
        base=_stats(base),
        head=_stats(head),
        paired=paired,
        dimensions=dimension_deltas(base, head),
        steal=steal_delta(base, head),
        search=search_delta(base, head),
    )


def search_delta(base: Report, head: Report) -> SearchDelta | None:
    """The search recall's change, paired by case; the cases that went from found to never found."""
    if base.search is None or head.search is None:
        return None
    eager = [*(base.run.tool_search.eager if base.run.tool_search else []),
             *(head.run.tool_search.eager if head.run.tool_search else [])]  # fmt: skip
    before, after = search_hits(base.cases, eager), search_hits(head.cases, eager)
    lost = [name for name, (hits, n) in after.items() if n and hits == 0 and name in before and _all(before[name])]
    return SearchDelta(**_paired(before, after, base.search.recall.value, head.search.recall.value), lost=lost)


def steal_delta(base: Report, head: Report) -> StealDelta | None:
    """The steal rate's change, paired by case (a case's share of stolen samples rose or fell)."""
    if base.steal is None or head.steal is None:
        return None
    before = {name: (took, n) for name, (took, n, _) in steals(base.cases).items()}
    after = {name: (took, n) for name, (took, n, _) in steals(head.cases).items()}
    return StealDelta(**_paired(before, after, base.steal.rate.value, head.steal.rate.value))


def _all(counted: tuple[int, int]) -> bool:
    return counted[1] > 0 and counted[0] == counted[1]


def _paired(
    before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]], b: float | None, h: float | None
) -> dict[str, Any]:
    """A rate's change, paired by case: (samples counted, samples) per case on each side; the cases
    whose share rose or fell, the sign test over them, and the rate's own change in points."""
    rose = fell = 0
    for name, (hits, n) in after.items():
        if name in before and n and before[name][1]:
            share, was = hits / n, before[name][0] / before[name][1]
            rose += share > was
            fell += share < was
    delta = round((h - b) * 100, 6) if b is not None and h is not None else None
    return {"base": b, "head": h, "delta_pt": delta, "rose": rose, "fell": fell, "p_value": sign_test(rose, fell)}


def _client(report: Report) -> str:
    """How the model met the tools: no client, a client's profile (simulated), or the real client."""
    c = report.run.client
    if c is None:
        return "none"
    return f"{c.name} {c.driven} (the real client)" if c.driven else f"{c.name} (its profile)"


def incomparable(base: Report, head: Report) -> list[str]:
    """Why two reports can't be compared fairly (another model, provider, client, tool-search mode or
    settings answered one of them)."""
    reasons = []
    for field, label in (
        ("provider", "provider"),
        ("model", "model"),
        ("repeat", "repeat"),
        ("temperature", "temperature"),
        ("seed", "seed"),
        ("endpoint", "endpoint"),
        ("shuffle", "tool-order shuffling"),
        ("system", "system prompt"),
    ):
        a, b = getattr(base.run, field), getattr(head.run, field)
        if a != b:
            reasons.append(f"different {label}: base {a!r}, head {b!r}")
    searched = [r.run.tool_search.mode if r.run.tool_search else "off" for r in (base, head)]
    if searched[0] != searched[1]:
        reasons.append(f"different tool search: base {searched[0]!r}, head {searched[1]!r}")
    clients = _client(base), _client(head)
    if clients[0] != clients[1]:
        reasons.append(f"different client: base {clients[0]!r}, head {clients[1]!r}")
    return reasons
