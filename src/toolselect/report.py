"""Results → report: metrics, per-tool precision/recall, the confusion matrix, the gate verdict.

The report is a pydantic model written as JSON (`schema_version: 1`, documented in
docs/report-format.md). The renderers, the base-branch diff and the Action all read this one type,
so a report loaded from disk and one just built are handled the same way.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from .errors import ConfigError
from .gate import Gate, head_reasons
from .golden import Case
from .locate import display_path
from .scoring import Outcome, Result
from .stats import cluster_bootstrap, wilson
from .strict import Record
from .surface import Surface

SCHEMA_VERSION: Literal[1] = 1
NONE, UNKNOWN, ERROR = "(none)", "(unknown)", "(error)"
PENDING = "needs_review"


class Metric(Record):
    """A rate with its counts and a 95% interval; `value` is null when not measured (never 0)."""

    value: float | None
    numerator: int
    denominator: int
    ci: tuple[float, float] | None = None
    ci_method: str | None = None  # "wilson", or "cluster bootstrap over cases" when samples repeat


class ToolStats(Record):
    precision: Metric
    recall: Metric
    f1: float | None
    support: int


class SourceOut(Record):
    file: str
    line: int


class UsageOut(Record):
    input_tokens: int | None = None
    output_tokens: int | None = None


class SampleOut(Record):
    index: int
    outcome: str
    picked_tool: str | None
    picked_args: Any = None
    raw_args: str | None = None
    text: str = ""
    reasons: list[str] = Field(default_factory=list)
    calls: int = 0
    cached: bool = False
    latency_ms: float | None = None
    usage: UsageOut | None = None
    stop_reason: str | None = None
    tool_order: list[str] | None = None  # the order the tools were offered in (shuffled samples)
    position: int | None = None  # where the expected tool was in that order (0-based)


class CaseOut(Record):
    name: str
    prompt: str
    source: SourceOut
    expect_tool: str | list[str] | None
    expect_args: dict[str, Any] = Field(default_factory=dict)
    match: dict[str, Any] = Field(default_factory=dict)
    forbid_extra_args: bool = False
    tags: list[str] = Field(default_factory=list)
    split: str | None = None
    status: str = "reviewed"
    passed: int  # samples that passed
    evaluated: int  # samples that were asked
    pass_rate: float | None
    samples: list[SampleOut]


class LeftOutOut(Record):
    name: str
    reason: str


class SurfaceOut(Record):
    hash: str
    origin: str
    tools: list[str]
    left_out: list[LeftOutOut] = Field(default_factory=list)
    definitions: list[dict[str, Any]] = Field(default_factory=list)


class RunOut(Record):
    toolselect_version: str
    provider: str
    model: str
    endpoint: str | None = None
    repeat: int
    concurrency: int
    started_at: str
    finished_at: str
    duration_s: float
    args_measured: bool
    config: str | None = None
    system: str | None = None
    temperature: float | None = None
    seed: int | None = None
    shuffle: bool = False
    cache_mode: str = "off"  # use | refresh | only | off
    cache_hits: int = 0
    api_calls: int = 0
    cache_writes: int = 0  # new answers saved to the cache
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # null: no price known for this model
    pool_shrinks: int = 0  # how often rate limits halved the requests in flight


class GateOut(Record):
    """The head's own gate as judged when the report was built, and every gate option in force (the
    comparison's too, so a saved report can be compared under the gate its run had)."""

    passed: bool
    min_accuracy: float
    max_error_rate: float
    max_over_trigger: float | None = None
    min_tool_recall: dict[str, float] = Field(default_factory=dict)
    max_drop: float | None = None
    significance: float | None = None
    fail_on_certain_flips: bool = False
    reasons: list[str] = Field(default_factory=list)
    stopped: str | None = None  # why the run stopped early (infrastructure failure)

    def options(self) -> Gate:
        """The gate this report was judged under."""
        return Gate.from_values(self.model_dump())


class FindingOut(Record):
    code: str
    severity: Literal["error", "warning", "info"]
    scope: Literal["surface", "golden"]
    message: str
    fix: str = ""
    tool: str | None = None
    case: str | None = None
    file: str | None = None
    line: int | None = None


class Counts(Record):
    cases: int
    samples: int
    counted_samples: int  # evaluated samples of reviewed cases: what the metrics and the gate use
    pending_cases: int  # status: needs_review (scored and shown, not counted)
    not_evaluated: int
    outcomes: dict[str, int]


class Report(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    passed: bool
    gate: GateOut
    metrics: dict[str, Metric]
    per_tool: dict[str, ToolStats]
    confusion: dict[str, dict[str, int]]
    counts: Counts
    cases: list[CaseOut]
    surface: SurfaceOut
    run: RunOut
    lint: list[FindingOut] = Field(default_factory=list)  # what `toolselect lint` finds, before any model is asked
    flaky: list[str] = Field(default_factory=list)  # cases whose pass rate is strictly between 0 and 1
    position: dict[str, Metric] | None = None  # accuracy by the expected tool's third (shuffled runs)
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- building


def metric(numerator: int, denominator: int, measured: bool = True) -> Metric:
    value = numerator / denominator if measured and denominator else None
    ci = wilson(numerator, denominator) if value is not None else None
    return Metric(value=value, numerator=numerator, denominator=denominator, ci=ci, ci_method="wilson" if ci else None)


def clustered(m: Metric, results: Sequence[Result], hit: Callable[[Result], bool]) -> Metric:
    """The same rate with the case as the unit: when a case has several samples they are
    correlated, so the interval resamples cases (a cluster bootstrap), not samples."""
    per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        per_case[r.case.name][0] += hit(r)
        per_case[r.case.name][1] += 1
    if m.value is None or all(total <= 1 for _, total in per_case.values()):
        return m
    passed, totals = zip(*per_case.values(), strict=True)
    return m.model_copy(
        update={"ci": cluster_bootstrap(list(passed), list(totals)), "ci_method": "cluster bootstrap over cases"}
    )


def row_label(result: Result) -> str:
    """The confusion row: the expected tool (for a list, the picked one when it is listed)."""
    expected = result.case.expected
    if not expected:
        return NONE
    return result.pick.tool if result.pick.tool in expected else expected[0]


def column_label(result: Result, surface: Surface) -> str:
    if result.outcome is Outcome.ERROR:
        return ERROR
    if result.pick.tool is None:
        return NONE
    return result.pick.tool if surface.get(result.pick.tool) else UNKNOWN


def counted(result: Result) -> bool:
    """Samples the metrics and the gate count: evaluated, of a reviewed case."""
    return result.evaluated and result.case.status != PENDING


METRIC_NAMES = (
    "accuracy",
    "tool_accuracy",
    "arg_accuracy",
    "schema_valid_rate",
    "no_call_precision",
    "no_call_recall",
    "over_trigger_rate",
    "under_trigger_rate",
    "error_rate",
)


def compute_metrics(results: Sequence[Result], args_measured: bool) -> dict[str, Metric]:
    rs = [r for r in results if counted(r)]
    decided = [r for r in rs if r.outcome is not Outcome.ERROR]
    expect_none = [r for r in decided if not r.case.expected]
    expect_tool = [r for r in decided if r.case.expected]
    no_call = [r for r in decided if r.pick.tool is None]
    arg_scored = [r for r in rs if r.args_ok is not None]
    schema_scored = [r for r in rs if r.schema_ok is not None]
    return {
        "accuracy": clustered(metric(sum(r.passed for r in rs), len(rs)), rs, lambda r: r.passed),
        "tool_accuracy": clustered(metric(sum(bool(r.tool_ok) for r in rs), len(rs)), rs, lambda r: bool(r.tool_ok)),
        "arg_accuracy": metric(sum(bool(r.args_ok) for r in arg_scored), len(arg_scored), args_measured),
        "schema_valid_rate": metric(sum(bool(r.schema_ok) for r in schema_scored), len(schema_scored), args_measured),
        "no_call_precision": metric(sum(not r.case.expected for r in no_call), len(no_call)),
        "no_call_recall": metric(sum(r.pick.tool is None for r in expect_none), len(expect_none)),
        "over_trigger_rate": metric(sum(r.pick.tool is not None for r in expect_none), len(expect_none)),
        "under_trigger_rate": metric(sum(r.pick.tool is None for r in expect_tool), len(expect_tool)),
        "error_rate": metric(sum(r.outcome is Outcome.ERROR for r in rs), len(rs)),
    }


def confusion_matrix(results: Iterable[Result], surface: Surface) -> dict[str, dict[str, int]]:
    cells: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        if counted(r):
            cells[row_label(r)][column_label(r, surface)] += 1
    return {row: dict(sorted(cols.items())) for row, cols in sorted(cells.items())}


def tool_stats(confusion: dict[str, dict[str, int]], tools: Iterable[str]) -> dict[str, ToolStats]:
    out = {}
    for tool in tools:
        support = sum(confusion.get(tool, {}).values())
        hits = confusion.get(tool, {}).get(tool, 0)
        picked = sum(row.get(tool, 0) for row in confusion.values())
        precision, recall = metric(hits, picked), metric(hits, support)
        p, r = precision.value, recall.value
        if p is None and r is None:
            f1 = None
        else:  # an undefined side counts as 0: a tool never picked (or never expected) has F1 0
            p, r = p or 0.0, r or 0.0
            f1 = 2 * p * r / (p + r) if p + r else 0.0
        out[tool] = ToolStats(precision=precision, recall=recall, f1=f1, support=support)
    return out


def case_out(case: Case, results: Sequence[Result]) -> CaseOut:
    evaluated = [r for r in results if r.evaluated]
    passed = sum(r.passed for r in evaluated)
    return CaseOut(
        name=case.name,
        prompt=case.prompt,
        source=SourceOut(file=case.source.file, line=case.source.line),
        expect_tool=list(case.expect_tool) if isinstance(case.expect_tool, tuple) else case.expect_tool,
        expect_args=case.expect_args,
        match=case.match,
        forbid_extra_args=case.forbid_extra_args,
        tags=list(case.tags),
        split=case.split,
        status=case.status,
        passed=passed,
        evaluated=len(evaluated),
        pass_rate=passed / len(evaluated) if evaluated else None,
        samples=[
            SampleOut(
                index=r.sample,
                outcome=r.outcome.value,
                picked_tool=r.pick.tool,
                picked_args=r.pick.args,
                raw_args=r.pick.raw_args if r.pick.args is None else None,
                text=r.pick.text,
                reasons=list(r.reasons),
                calls=r.pick.calls,
                cached=r.pick.cached,
                latency_ms=None if r.pick.latency_ms is None else round(r.pick.latency_ms, 1),
                usage=UsageOut(**vars(r.pick.usage)) if r.pick.usage else None,
                stop_reason=r.pick.stop_reason,
                tool_order=list(r.tool_order) if r.tool_order else None,
                position=expected_position(r),
            )
            for r in results
        ],
    )


def expected_position(result: Result) -> int | None:
    """Where the expected tool (its confusion row) sat in the order this sample was offered."""
    if not result.tool_order or not result.case.expected:
        return None
    row = row_label(result)
    return result.tool_order.index(row) if row in result.tool_order else None


THIRDS = ("first", "middle", "last")


def accuracy_by_position(results: Sequence[Result]) -> dict[str, Metric] | None:
    """Accuracy by the expected tool's position in the shuffled order: first, middle, last third."""
    buckets: dict[str, list[bool]] = {t: [] for t in THIRDS}
    for r in results:
        if not counted(r) or r.outcome is Outcome.ERROR:
            continue
        pos = expected_position(r)
        if pos is None or r.tool_order is None:
            continue
        n = len(r.tool_order)
        buckets[THIRDS[round(pos * 2 / (n - 1)) if n > 1 else 0]].append(r.passed)
    if not any(buckets.values()):
        return None
    return {t: metric(sum(v), len(v)) for t, v in buckets.items()}


def position_warning(table: dict[str, Metric] | None) -> str | None:
    if not table:
        return None
    values = {t: m.value for t, m in table.items() if m.value is not None and m.denominator >= 5}
    if len(values) < 2:
        return None
    spread = (max(values.values()) - min(values.values())) * 100
    if spread < 20:
        return None
    shown = ", ".join(f"{t} {v:.0%}" for t, v in values.items())
    return (
        f"the expected tool's position moves accuracy by {spread:.0f} points ({shown}): the model favours tools "
        "by where they are listed; make the descriptions carry the choice"
    )


def build_report(
    cases: Sequence[Case],
    results: Sequence[Result],
    surface: Surface,
    run: RunOut,
    gate: Gate,
    *,
    stopped: str | None = None,
    warnings: Sequence[str] = (),
    lint: Sequence[Any] = (),
) -> Report:
    by_case: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_case[r.case.name].append(r)
    metrics = compute_metrics(results, run.args_measured)
    confusion = confusion_matrix(results, surface)
    expected_tools = {t for c in cases for t in c.expected}
    per_tool = tool_stats(confusion, sorted(set(surface.names) | expected_tools))
    unevaluated = sum(1 for r in results if not r.evaluated and r.case.status != PENDING)
    reasons = head_reasons(metrics, per_tool, gate, stopped, unevaluated)
    position = accuracy_by_position(results)
    warning = position_warning(position)
    case_list = [case_out(c, by_case.get(c.name, [])) for c in cases]
    outcomes = Counter(r.outcome.value for r in results)
    return Report(
        passed=not reasons,
        gate=GateOut(passed=not reasons, reasons=reasons, stopped=stopped, **gate.values()),
        metrics=metrics,
        per_tool=per_tool,
        confusion=confusion,
        counts=Counts(
            cases=len(cases),
            samples=len(results),
            counted_samples=sum(counted(r) for r in results),
            pending_cases=sum(c.status == PENDING for c in cases),
            not_evaluated=outcomes.get(Outcome.NOT_EVALUATED.value, 0),
            outcomes={o.value: outcomes.get(o.value, 0) for o in Outcome if outcomes.get(o.value)},
        ),
        cases=case_list,
        surface=SurfaceOut(
            hash=surface.hash,
            origin=surface.origin,
            tools=list(surface.names),
            left_out=[LeftOutOut(name=lo.name, reason=lo.reason) for lo in surface.left_out],
            definitions=[dict(d) for d in surface.definitions],
        ),
        run=run,
        lint=[FindingOut(**vars(f)) for f in lint],
        flaky=[c.name for c in case_list if c.pass_rate is not None and 0 < c.pass_rate < 1],
        position=position,
        warnings=[*warnings, *([warning] if warning else [])],
    )


def case_headline(case: CaseOut) -> tuple[str, SampleOut | None]:
    """A case's headline outcome and the sample that shows it: PASS when every evaluated sample
    passed, else its most common failing outcome (and its first failing sample)."""
    evaluated = [s for s in case.samples if s.outcome != Outcome.NOT_EVALUATED]
    failing = [s for s in evaluated if s.outcome != Outcome.PASS]
    if failing:
        worst = Counter(s.outcome for s in failing).most_common(1)[0][0]
        return worst, failing[0]
    if evaluated:
        return Outcome.PASS.value, evaluated[0]
    return Outcome.NOT_EVALUATED.value, case.samples[0] if case.samples else None


def pick_name(sample: SampleOut | None) -> str:
    """What a sample picked, in one word: a tool, (none), (error) or (not asked)."""
    if sample is None or sample.outcome == Outcome.NOT_EVALUATED:
        return "(not asked)"
    if sample.outcome == Outcome.ERROR:
        return ERROR
    return sample.picked_tool or NONE


# --------------------------------------------------------------------------- files


def write_report(report: Report, path: Path) -> None:
    """The report as JSON: the summary indented, then one case per line, written case by case so a
    suite of 10,000 cases × 3 samples never needs the whole text in memory at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    summary = json.dumps(report.model_dump(mode="json", exclude={"cases"}), indent=2, ensure_ascii=False)
    with path.open("w", encoding="utf-8") as f:
        f.write(summary[:-2] + ',\n  "cases": [')
        for i, case in enumerate(report.cases):
            f.write(("\n    " if i == 0 else ",\n    ") + case.model_dump_json())
        f.write("\n  ]\n}\n")


def read_report(path: Path) -> Report:
    shown = display_path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{shown}: report not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{shown}: not a readable toolselect report ({exc})") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        version = data.get("schema_version") if isinstance(data, dict) else None
        raise ConfigError(f"{shown}: not a toolselect report with schema_version {SCHEMA_VERSION} (found {version!r})")
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{shown}: not a valid toolselect report: {loc}: {first['msg']}") from None
    missing = [m for m in METRIC_NAMES if m not in report.metrics]
    names = {c.name for c in report.cases}
    if missing or not set(report.flaky) <= names:
        problem = f"metrics {', '.join(missing)} missing" if missing else "flaky names a case the report does not have"
        raise ConfigError(f"{shown}: not a valid toolselect report: {problem}")
    return report
