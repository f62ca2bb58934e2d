"""Results → report: metrics, per-tool precision/recall, the confusion matrix, the gate verdict.

The report is a pydantic model written as JSON (`schema_version: 1`, documented in
docs/report-format.md). The renderers, the base-branch diff and the Action all read this one type,
so a report loaded from disk and one just built are handled the same way.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import AfterValidator, Field, ValidationError

from .errors import ConfigError
from .explain import dotted, show
from .gate import Gate, head_reasons
from .golden import Case
from .locate import display_path
from .pick import Trace
from .scoring import Outcome, Result
from .stats import cluster_bootstrap, wilson
from .strict import Record
from .surface import Surface
from .taxonomy import DIMENSIONS, FAILURE_CODES, FailureCode
from .trajectory import Scores

SCHEMA_VERSION: Literal[1] = 1
NONE, UNKNOWN, ERROR = "(none)", "(unknown)", "(error)"
PENDING = "needs_review"

# The enumerated fields: a report read from disk (a fork PR's artifact is untrusted) holds one of
# these values or is refused; the JSON is the same strings.
Count = Annotated[int, Field(ge=0)]
CaseStatus = Literal["reviewed", "needs_review"]
CacheMode = Literal["use", "refresh", "only", "off"]  # as config.CacheMode
CiMethod = Literal["wilson", "cluster bootstrap over cases"]
MetricName = Literal[
    "accuracy",
    "tool_accuracy",
    "arg_accuracy",
    "schema_valid_rate",
    "no_call_precision",
    "no_call_recall",
    "over_trigger_rate",
    "under_trigger_rate",
    "error_rate",
]
Third = Literal["first", "middle", "last"]
Sequence_ = Literal["strict", "in_order", "unordered", "any_of_these"]
LintCode = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,63}$")]  # e.g. "description-missing"
Label = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+~-]{0,63}$")]  # a model's label (config.py's)
MODELS_SCHEMA_VERSION: Literal[2] = 2
MAX_MODELS = 16
SurfaceHash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]  # sha256 hex


def _keys_of(names: tuple[str, ...]) -> AfterValidator:
    """A mapping's keys must be among `names` (typed `str` keys, for callers that index by name)."""

    def check(value: dict[str, Any]) -> dict[str, Any]:
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"unknown key {show(unknown[0])} (known: {', '.join(names)})")
        return value

    return AfterValidator(check)


class Metric(Record):
    """A rate with its counts and a 95% interval; `value` is null when not measured (never 0)."""

    value: float | None
    numerator: Count
    denominator: Count
    ci: tuple[float, float] | None = None
    ci_method: CiMethod | None = None  # "cluster bootstrap over cases" when samples repeat


class ToolStats(Record):
    precision: Metric
    recall: Metric
    f1: float | None
    support: Count


class SourceOut(Record):
    file: str
    line: Count


class UsageOut(Record):
    input_tokens: Count | None = None
    output_tokens: Count | None = None


def only_when_set(default: Any = None) -> Any:
    """A field a single-call report leaves out (so its JSON stays as it was before trajectories):
    omitted when None, or, for a list or mapping default, when empty."""
    if isinstance(default, (list, dict)):
        return Field(default_factory=type(default), exclude_if=lambda v: not v)
    return Field(default, exclude_if=lambda v: v is None)


class TraceCallOut(Record):
    """One call in a trace (seed 004's tool_calls[]): name, arguments, when, the stub's answer."""

    name: str
    arguments: Any = None
    raw_arguments: str | None = only_when_set()
    turn: Count
    timestamp_ms: Annotated[float, Field(ge=0)]  # the model's time until the answer carrying the call
    result: Any = None
    error: str | None = only_when_set()


class TraceOut(Record):
    """Seed 004's trace capture schema, per sample of a trajectory case."""

    request: str
    tool_calls: list[TraceCallOut]
    final_response: str | None
    expected_tools: list[str]
    expected_no_tools: bool
    turns: Count
    hit_max_turns: bool = False


Score = Annotated[int, Field(ge=0, le=3)]


class JudgeOut(Record):
    """evals.judge's reading of a trajectory's final answer after a tool error."""

    surfaced: bool | None  # null: the judge answered neither yes nor no
    said: str = ""
    cached: bool = False


class JudgeRunOut(Record):
    model: str
    api_calls: Count = 0
    cache_hits: Count = 0


class ScoresOut(Record):
    """Seed 004's four dimensions, 0–3 (null: the dimension doesn't apply), and the failure codes."""

    selection: Score | None
    arguments: Score | None
    recovery: Score | None
    restraint: Score
    codes: list[FailureCode] = Field(default_factory=list)


class SampleOut(Record):
    index: Count
    outcome: Outcome
    picked_tool: str | None
    picked_args: Any = None
    raw_args: str | None = None
    text: str = ""
    reasons: list[str] = Field(default_factory=list)
    calls: Count = 0
    cached: bool = False
    latency_ms: float | None = None
    usage: UsageOut | None = None
    stop_reason: str | None = None
    tool_order: list[str] | None = None  # the order the tools were offered in (shuffled samples)
    position: Count | None = None  # where the expected tool was in that order (0-based)
    trace: TraceOut | None = only_when_set()  # a trajectory case's whole conversation
    scores: ScoresOut | None = only_when_set()
    judge: JudgeOut | None = only_when_set()


class ExpectedCallOut(Record):
    tool: str
    args: dict[str, Any] | None = None
    match: dict[str, Any] = Field(default_factory=dict)


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
    status: CaseStatus = "reviewed"
    passed: Count  # samples that passed
    evaluated: Count  # samples that were asked
    pass_rate: float | None
    samples: list[SampleOut]
    acceptable: list[str] = only_when_set([])
    # a trajectory case
    expect_calls: list[ExpectedCallOut] | None = only_when_set()
    sequence: Sequence_ | None = only_when_set()
    max_turns: Annotated[int, Field(ge=1, le=50)] | None = only_when_set()
    final: dict[Literal["contains", "regex", "not_contains"], list[str]] | None = only_when_set()


class LeftOutOut(Record):
    name: str
    reason: str


class SurfaceOut(Record):
    hash: SurfaceHash
    origin: str
    tools: list[str]
    left_out: list[LeftOutOut] = Field(default_factory=list)
    definitions: list[dict[str, Any]] = Field(default_factory=list)


class RunOut(Record):
    toolselect_version: str
    provider: str
    model: str
    endpoint: str | None = None
    repeat: Annotated[int, Field(ge=1)]
    concurrency: Annotated[int, Field(ge=1)]
    started_at: str
    finished_at: str
    duration_s: float
    args_measured: bool
    config: str | None = None
    system: str | None = None
    temperature: float | None = None
    seed: int | None = None
    shuffle: bool = False
    cache_mode: CacheMode = "off"
    cache_hits: Count = 0
    api_calls: Count = 0
    cache_writes: Count = 0  # new answers saved to the cache
    input_tokens: Count = 0
    output_tokens: Count = 0
    cost_usd: float | None = 0.0  # null: no price known for this model
    pool_shrinks: Count = 0  # how often a 429 (or 529) slowed the run's pace
    judge: JudgeRunOut | None = only_when_set()  # evals.judge: its model and what it cost, apart
    label: Label | None = only_when_set()  # the model's label in a run of several models (evals.models)


class GateOut(Record):
    """The head's own gate as judged when the report was built, and every gate option in force (the
    comparison's too, so a saved report can be compared under the gate its run had)."""

    passed: bool
    min_accuracy: float
    max_error_rate: float
    max_over_trigger: float | None = None
    min_tool_recall: dict[str, float] = Field(default_factory=dict)
    min_dimension: Annotated[dict[str, float], _keys_of(DIMENSIONS)] = only_when_set({})
    max_drop: float | None = None
    significance: float | None = None
    fail_on_certain_flips: bool = False
    base_failure: Literal["fail", "pass"] = "fail"
    reasons: list[str] = Field(default_factory=list)
    stopped: str | None = None  # why the run stopped early (infrastructure failure)

    def options(self) -> Gate:
        """The gate this report was judged under."""
        return Gate.from_values(self.model_dump())


class FindingOut(Record):
    code: LintCode
    severity: Literal["error", "warning", "info"]
    scope: Literal["surface", "golden"]
    message: str
    fix: str = ""
    tool: str | None = None
    case: str | None = None
    file: str | None = None
    line: Count | None = None


class DimensionOut(Record):
    """One of seed 004's dimensions over the counted trajectory samples it applies to: the mean
    score (0–3) with a 95% interval (a bootstrap over cases), and how many samples scored 0, 1, 2, 3."""

    mean: float | None
    ci: tuple[float, float] | None = None
    n: Count
    distribution: dict[Literal["0", "1", "2", "3"], Count]


class Counts(Record):
    cases: Count
    samples: Count
    counted_samples: Count  # evaluated samples of reviewed cases: what the metrics and the gate use
    pending_cases: Count  # status: needs_review (scored and shown, not counted)
    not_evaluated: Count
    outcomes: dict[Outcome, Count]


class PartOut(Record):
    """A shard's report (`--shard I/N`): which slice it holds and the plan it belongs to."""

    shard: Annotated[int, Field(ge=1, le=256)]
    shards: Annotated[int, Field(ge=1, le=256)]
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class Report(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    passed: bool
    gate: GateOut
    metrics: Annotated[dict[str, Metric], _keys_of(get_args(MetricName))]
    per_tool: dict[str, ToolStats]
    confusion: dict[str, dict[str, Count]]
    counts: Counts
    cases: list[CaseOut]
    surface: SurfaceOut
    run: RunOut
    lint: list[FindingOut] = Field(default_factory=list)  # what `toolselect lint` finds, before any model is asked
    flaky: list[str] = Field(default_factory=list)  # cases whose pass rate is strictly between 0 and 1
    # accuracy by the expected tool's third (shuffled runs)
    position: Annotated[dict[str, Metric], _keys_of(get_args(Third))] | None = None
    warnings: list[str] = Field(default_factory=list)
    # trajectory cases: seed 004's dimensions and how often each failure code applied
    dimensions: Annotated[dict[str, DimensionOut], _keys_of(DIMENSIONS)] | None = only_when_set()
    failure_codes: Annotated[dict[str, Count], _keys_of(FAILURE_CODES)] | None = only_when_set()
    part: PartOut | None = only_when_set()  # a shard's report: one slice of the units, merged by `toolselect merge`


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


METRIC_NAMES: tuple[str, ...] = get_args(MetricName)


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


def trace_out(case: Case, trace: Trace | None) -> TraceOut | None:
    if trace is None or case.script is None:
        return None
    return TraceOut(
        request=case.prompt,
        tool_calls=[
            TraceCallOut(
                name=c.tool,
                arguments=c.args,
                raw_arguments=c.raw_args if c.args is None else None,
                turn=c.turn,
                timestamp_ms=c.at_ms,
                result=c.result if c.error is None else None,
                error=c.error,
            )
            for c in trace.calls
        ],
        final_response=trace.final,
        expected_tools=[e.tool for e in case.script.expect.calls],
        expected_no_tools=not case.script.expect.calls,
        turns=trace.turns,
        hit_max_turns=trace.hit_max_turns,
    )


def scores_out(scores: Scores | None) -> ScoresOut | None:
    if scores is None:
        return None
    return ScoresOut(
        selection=scores.selection,
        arguments=scores.arguments,
        recovery=scores.recovery,
        restraint=scores.restraint,
        codes=cast(list[FailureCode], list(scores.codes)),
    )


def _script_fields(case: Case) -> dict[str, Any]:
    script = case.script
    if script is None:
        return {}
    final = script.expect.final
    return {
        "expect_calls": [
            ExpectedCallOut(tool=e.tool, args=None if e.args is None else dict(e.args), match=dict(e.match))
            for e in script.expect.calls
        ],
        "sequence": script.expect.order.value,
        "max_turns": script.max_turns,
        "final": {k: list(v) for k, v in vars(final).items() if v} if final else None,
    }


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
        status=cast(CaseStatus, case.status),
        passed=passed,
        evaluated=len(evaluated),
        pass_rate=passed / len(evaluated) if evaluated else None,
        samples=[
            SampleOut(
                index=r.sample,
                outcome=r.outcome,
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
                trace=trace_out(case, r.pick.trace),
                scores=scores_out(r.scores),
                judge=JudgeOut(surfaced=r.judge.surfaced, said=r.judge.said, cached=r.judge.cached)
                if r.judge
                else None,
            )
            for r in results
        ],
        acceptable=list(case.acceptable),
        **_script_fields(case),
    )


def expected_position(result: Result) -> int | None:
    """Where the expected tool (its confusion row) sat in the order this sample was offered."""
    if not result.tool_order or not result.case.expected:
        return None
    row = row_label(result)
    return result.tool_order.index(row) if row in result.tool_order else None


THIRDS: tuple[str, ...] = get_args(Third)


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


def dimension_scores(results: Sequence[Result]) -> tuple[dict[str, DimensionOut], dict[str, int]] | None:
    """Seed 004's dimensions over the counted trajectory samples (None: the run has none), and how
    many samples each failure code applied to."""
    scored = [r for r in results if counted(r) and r.scores is not None]
    if not scored:
        return None
    dimensions = {}
    for name in DIMENSIONS:
        values = [(r.case.name, v) for r in scored if (v := getattr(r.scores, name)) is not None]
        per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for case_name, v in values:
            per_case[case_name][0] += v
            per_case[case_name][1] += 3
        total = [p for p, _ in per_case.values()], [t for _, t in per_case.values()]
        ci = cluster_bootstrap(*total) if values else None
        dimensions[name] = DimensionOut(
            mean=sum(v for _, v in values) / len(values) if values else None,
            ci=(ci[0] * 3, ci[1] * 3) if ci else None,
            n=len(values),
            distribution={str(k): sum(v == k for _, v in values) for k in range(4)},  # type: ignore[misc]
        )
    codes = Counter(code for r in scored for code in (r.scores.codes if r.scores else ()))
    return dimensions, {code: codes[code] for code in FAILURE_CODES if codes[code]}


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
    trajectories = dimension_scores(results)
    reasons = head_reasons(metrics, per_tool, gate, stopped, unevaluated, trajectories[0] if trajectories else None)
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
            outcomes={o: outcomes[o.value] for o in Outcome if outcomes.get(o.value)},
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
        dimensions=trajectories[0] if trajectories else None,
        failure_codes=trajectories[1] if trajectories else None,
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
    """What a sample picked, in one word: a tool, (none), (error) or (not asked); for a trajectory,
    its calls in order (✗: answered with an error), e.g. `get_forecast✗ → get_weather`."""
    if sample is None or sample.outcome == Outcome.NOT_EVALUATED:
        return "(not asked)"
    if sample.outcome == Outcome.ERROR:
        return ERROR
    if sample.trace is not None:
        return calls_text(sample.trace)
    return sample.picked_tool or NONE


MAX_SHOWN_CALLS = 6


def calls_text(trace: TraceOut) -> str:
    """A trajectory's calls in one line: `a → b✗ → b`, `(none)`, `… (max turns)` at the limit."""
    names = [c.name + ("✗" if c.error is not None else "") for c in trace.tool_calls]
    if len(names) > MAX_SHOWN_CALLS:
        names = [*names[: MAX_SHOWN_CALLS - 1], f"… {len(names) - MAX_SHOWN_CALLS + 1} more"]
    text = " → ".join(names) or NONE
    return text + (" (max turns)" if trace.hit_max_turns else "")


SEQUENCE_JOIN = {"strict": " → ", "in_order": " → … ", "unordered": " + ", "any_of_these": " | "}


def expected_text(expect_tool: str | list[str] | None, expect_calls: Sequence[str] | None, sequence: str | None) -> str:
    """What a case expects, in one line: a tool, `a | b`, `(none)`; a trajectory's calls joined by
    its sequence: `a → b` (strict), `a → … b` (in order, others allowed), `a + b` (any order),
    `a | b` (one of them)."""
    if expect_calls is not None:
        return SEQUENCE_JOIN[sequence or "strict"].join(expect_calls) or NONE
    if expect_tool is None:
        return NONE
    return " | ".join(expect_tool) if isinstance(expect_tool, list) else expect_tool


def case_expected(case: CaseOut) -> str:
    calls = [c.tool for c in case.expect_calls] if case.expect_calls is not None else None
    return expected_text(case.expect_tool, calls, case.sequence)


# --------------------------------------------------------------------------- files


def write_report(report: Report, path: Path) -> None:
    """The report as JSON: the summary indented, then one case per line, written case by case so a
    suite of 10,000 cases × 3 samples never needs the whole text in memory at once."""
    write_reports((report,), path)


def write_reports(reports: Sequence[Report], path: Path) -> None:
    """One model's report (schema_version 1), or several models' (schema_version 2: `passed`, and
    `models`, each a whole schema-1 report with `run.label`), written case by case."""
    from .nofollow import writing

    def put(f: Any, report: Report, pad: str) -> None:
        summary = json.dumps(report.model_dump(mode="json", exclude={"cases"}), indent=2, ensure_ascii=False)
        f.write(summary[:-2].replace("\n", "\n" + pad) + f',\n{pad}  "cases": [')
        for i, case in enumerate(report.cases):
            f.write((f"\n{pad}    " if i == 0 else f",\n{pad}    ") + case.model_dump_json())
        f.write(f"\n{pad}  ]\n{pad}}}")

    with writing(path) as f:  # in the Action's workspace, never through a link
        if len(reports) == 1:
            put(f, reports[0], "")
        else:
            passed = json.dumps(all(r.passed for r in reports))
            f.write(f'{{\n  "schema_version": {MODELS_SCHEMA_VERSION},\n  "passed": {passed},\n  "models": [')
            for i, report in enumerate(reports):
                f.write("\n    " if i == 0 else ",\n    ")
                put(f, report, "    ")
            f.write("\n  ]\n}")
        f.write("\n")


# A report read from disk may be a fork PR's artifact, i.e. written by anyone: it is bounded before
# it is parsed, and checked after. The largest report we measured — 10,000 cases × 3 samples, each
# sample's order of 30 shuffled tools recorded (the scale docs/benchmarks.md runs) — is 24 MB with
# 210,000 JSON arrays and objects; the limits leave 2.5 to 15 times that. Above them a file is
# refused before it is parsed: Python's JSON parser takes up to ~26× a file's size in memory (an
# empty list is 56 bytes), so a 50 MB file of `[]` would take 1.3 GB.
MAX_REPORT_BYTES = 64 * 1024 * 1024
MAX_CONTAINERS = 2_000_000  # JSON arrays and objects ('[' and '{', counted before parsing)
MAX_CASES = 50_000
MAX_SAMPLES = 500_000  # in all cases together
MAX_SAMPLES_PER_CASE = 1_000  # repeat: 1000 is already a thousand model calls per case
MAX_TRACE_CALLS = 1_000  # calls in one trace: max_turns 50 × 20 parallel calls
MAX_TOOLS = 1_000  # per list of tools (surface, per-tool stats, confusion rows and columns)
TOLERANCE = 1e-9  # for rates written as floats and read back


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def read_report(path: Path) -> Report:
    """A one-model report file (see `read_reports`); a report of several models is refused."""
    reports = read_reports(path)
    if len(reports) > 1:
        labels = ", ".join(r.run.label or "?" for r in reports)
        raise ConfigError(f"{display_path(path)}: a report of {len(reports)} models ({labels}); one was expected")
    return reports[0]


def read_reports(path: Path) -> tuple[Report, ...]:
    """A report file — one model's (schema_version 1) or several models' (2) — refused with a message
    that says what is wrong and where (a ConfigError) when it is too big, not JSON, not a toolselect
    report, or its numbers don't add up."""
    shown = display_path(path)

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"{shown}: not a valid toolselect report: {problem}")

    limit_mb = MAX_REPORT_BYTES // (1024 * 1024)
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size if path.is_file() else MAX_REPORT_BYTES
            if size > MAX_REPORT_BYTES:
                raise ConfigError(
                    f"{shown}: {size:,} bytes, more than the {limit_mb} MB ({MAX_REPORT_BYTES:,} bytes) a "
                    "toolselect report can be; not read"
                )
            raw = f.read(size + 1)  # bounded even when the size can't be known first (a pipe)
    except FileNotFoundError:
        raise ConfigError(f"{shown}: report not found") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: not a readable toolselect report ({exc})") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise ConfigError(
            f"{shown}: more than the {limit_mb} MB ({MAX_REPORT_BYTES:,} bytes) a toolselect report can be; not read"
        )
    containers = raw.count(b"[") + raw.count(b"{")
    if containers > MAX_CONTAINERS:
        raise bad(f"more than {MAX_CONTAINERS:,} JSON arrays and objects ({containers:,} '[' and '{{'); not parsed")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ConfigError(f"{shown}: not a readable toolselect report ({exc})") from None
    del raw
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(data, dict) or version not in (SCHEMA_VERSION, MODELS_SCHEMA_VERSION):
        raise ConfigError(
            f"{shown}: not a toolselect report with schema_version {SCHEMA_VERSION} or {MODELS_SCHEMA_VERSION} "
            f"(found {show(version)})"
        )
    if version == SCHEMA_VERSION:
        return (_validated(data, bad, ""),)
    unknown = sorted(set(data) - {"schema_version", "passed", "models"})
    models = data.get("models")
    if unknown:
        raise bad(f"unknown key {show(unknown[0])} (a report of several models has schema_version, passed, models)")
    if not isinstance(models, list) or not 2 <= len(models) <= MAX_MODELS:
        raise bad(f"models: a list of 2 to {MAX_MODELS} reports, one per model")
    cases = sum(len(m["cases"]) for m in models if isinstance(m, dict) and isinstance(m.get("cases"), list))
    if cases > MAX_CASES:
        raise bad(f"{cases:,} cases in all models, more than the {MAX_CASES:,} a report can have")
    reports = tuple(_validated(m, bad, f"models[{i}].") for i, m in enumerate(models))
    labels = [r.run.label for r in reports]
    if None in labels:
        raise bad(f"models[{labels.index(None)}].run.label: missing (each model of a report has its label)")
    if len(set(labels)) < len(labels):
        raise bad(f"models: two reports have the label {show(next(x for x in labels if labels.count(x) > 1))}")
    if not isinstance(data.get("passed"), bool) or data["passed"] != all(r.passed for r in reports):
        raise bad("passed does not agree with the models' own gates")
    return reports


def _validated(data: Any, bad: Callable[[str], ConfigError], at_: str) -> Report:
    """One model's report from parsed JSON: bounded, validated, and consistent."""
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise bad(f"{at_}schema_version: {SCHEMA_VERSION} expected for one model's report")
    problem = _too_many(data)
    if problem:
        raise bad(at_ + problem)
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        at = f"{dotted(loc[:-2])} key {show(loc[-2])}" if loc[-1:] == ("[key]",) else dotted(loc)
        said = first["msg"].removeprefix("Value error, ")
        got = f" (got {show(first['input'], 60)})" if first["type"] != "missing" and _scalar(first["input"]) else ""
        raise bad(f"{at_}{at}: {said}{got}") from None
    problem = next(_inconsistencies(report), None)
    if problem:
        raise bad(at_ + problem)
    return report


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _too_many(data: dict[str, Any]) -> str | None:
    """Item counts over the limits, checked on the parsed JSON before validation builds objects."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        return None  # validation says what is wrong
    if len(cases) > MAX_CASES:
        return f"cases: {len(cases):,} cases, more than the {MAX_CASES:,} a report can have"
    total = 0
    for i, case in enumerate(cases):
        samples = case.get("samples") if isinstance(case, dict) else None
        if isinstance(samples, list):
            if len(samples) > MAX_SAMPLES_PER_CASE:
                return (
                    f"cases[{i}].samples: {len(samples):,} samples, "
                    f"more than the {MAX_SAMPLES_PER_CASE:,} a case can have"
                )
            total += len(samples)
    if total > MAX_SAMPLES:
        return f"cases: {total:,} samples in all, more than the {MAX_SAMPLES:,} a report can have"
    for i, case in enumerate(cases):
        for j, sample in enumerate(case.get("samples") or [] if isinstance(case, dict) else []):
            trace = sample.get("trace") if isinstance(sample, dict) else None
            calls = trace.get("tool_calls") if isinstance(trace, dict) else None
            if isinstance(calls, list) and len(calls) > MAX_TRACE_CALLS:
                return (
                    f"cases[{i}].samples[{j}].trace: {len(calls):,} calls, more than the {MAX_TRACE_CALLS:,} a "
                    "trace can have"
                )
    surface = data["surface"] if isinstance(data.get("surface"), dict) else {}
    lists = {
        "surface.tools": surface.get("tools"),
        "surface.definitions": surface.get("definitions"),
        "surface.left_out": surface.get("left_out"),
        "per_tool": data.get("per_tool"),
        "confusion": data.get("confusion"),
    }
    for where, items in lists.items():
        if isinstance(items, (list, dict)) and len(items) > MAX_TOOLS:
            return f"{where}: {len(items):,} tools, more than the {MAX_TOOLS:,} a report can have"
    confusion = data.get("confusion")
    if isinstance(confusion, dict):
        columns = {c for row in confusion.values() if isinstance(row, dict) for c in row}
        if len(columns) > MAX_TOOLS + 3:
            return f"confusion: {len(columns):,} columns, more than the {MAX_TOOLS + 3:,} a report can have"
    return None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE


def _gate_problems(gate: GateOut) -> Iterator[str]:
    """The gate's numbers within the ranges their options declare (options.py)."""
    from .options import BY_KEY

    for key in Gate.__dataclass_fields__:
        option, value = BY_KEY[key], getattr(gate, key)
        named = value.items() if isinstance(value, dict) else [(None, value)]
        for name, number in named:
            if isinstance(number, bool) or not isinstance(number, (int, float)):
                continue
            if not math.isfinite(number) or option.out_of_range(number):
                at = f"gate.{key}" + (f"[{show(name)}]" if name is not None else "")
                yield f"{at} is {number!r}, not {option.bounds()}" + (f" ({option.unit})" if option.unit else "")


def _share(value: float | None, where: str) -> Iterator[str]:
    if value is not None and not -TOLERANCE <= value <= 1 + TOLERANCE:
        yield f"{where} is {value!r}, not a share between 0 and 1"


def _metric_problems(m: Metric, where: str) -> Iterator[str]:
    if m.numerator > m.denominator:
        yield f"{where}: numerator {m.numerator} is more than denominator {m.denominator}"
    if m.value is not None:
        if m.denominator == 0:
            yield f"{where}: value {m.value!r} with denominator 0 (it is null when nothing was counted)"
        elif not _close(m.value, m.numerator / m.denominator):
            yield f"{where}: value {m.value!r} is not numerator/denominator ({m.numerator}/{m.denominator})"
    if m.ci is not None:
        low, high = m.ci
        yield from _share(low, f"{where}.ci[0]")
        yield from _share(high, f"{where}.ci[1]")
        if low > high + TOLERANCE:
            yield f"{where}.ci: low {low!r} is above high {high!r}"


def _trajectory_problems(report: Report, scored: list[ScoresOut]) -> Iterator[str]:
    """The dimensions and failure-code counts are the samples' own: recomputed and compared."""
    if (report.dimensions is None) != (not scored):
        yield "dimensions: present without counted trajectory samples, or missing with them"
    for name, d in (report.dimensions or {}).items():
        values = [v for s in scored if (v := getattr(s, name)) is not None]
        if d.n != len(values) or sum(d.distribution.values()) != d.n:
            yield f"dimensions.{name}: n {d.n} and its distribution are not the samples' ({len(values)} scored)"
        if dict(Counter(str(v) for v in values)) != {k: v for k, v in d.distribution.items() if v}:
            yield f"dimensions.{name}.distribution: not the samples' scores"
        if (d.mean is None) != (not values) or (d.mean is not None and not _close(d.mean, sum(values) / len(values))):
            yield f"dimensions.{name}.mean: {d.mean!r} is not the mean of the samples' scores"
        if d.ci is not None and not (0 - TOLERANCE <= d.ci[0] <= d.ci[1] + TOLERANCE <= 3 + 2 * TOLERANCE):
            yield f"dimensions.{name}.ci: {list(d.ci)} is not an interval within 0–3"
    counted = Counter(code for s in scored for code in s.codes)
    if report.failure_codes is not None and dict(counted) != {k: v for k, v in report.failure_codes.items() if v}:
        yield "failure_codes: not the counts of the counted samples' codes"


def _inconsistencies(report: Report) -> Iterator[str]:
    """What doesn't add up in a validated report, one message each (the first is raised)."""
    from .providers.registry import PROVIDERS

    for name, m in report.metrics.items():
        yield from _metric_problems(m, f"metrics.{name}")
    missing = [m for m in METRIC_NAMES if m not in report.metrics]
    if missing:
        yield f"metrics {', '.join(missing)} missing"
    for third, m in (report.position or {}).items():
        yield from _metric_problems(m, f"position.{third}")
    for tool, stats in report.per_tool.items():
        yield from _metric_problems(stats.precision, f"per_tool[{show(tool)}].precision")
        yield from _metric_problems(stats.recall, f"per_tool[{show(tool)}].recall")
        yield from _share(stats.f1, f"per_tool[{show(tool)}].f1")
    total = 0
    outcomes: Counter[str] = Counter()
    scored: list[ScoresOut] = []
    for i, case in enumerate(report.cases):
        where = f"cases[{i}]"
        evaluated = sum(s.outcome != Outcome.NOT_EVALUATED for s in case.samples)
        passed = sum(s.outcome == Outcome.PASS for s in case.samples)
        if case.passed > case.evaluated:
            yield f"{where}.passed: {case.passed} is more than evaluated ({case.evaluated})"
        if (case.passed, case.evaluated) != (passed, evaluated):
            yield (
                f"{where}: passed/evaluated {case.passed}/{case.evaluated}, but its samples say "
                f"{passed}/{evaluated} (PASS / not NOT-EVALUATED)"
            )
        if case.pass_rate is None and case.evaluated:
            yield f"{where}.pass_rate: null, but evaluated is {case.evaluated}"
        elif case.pass_rate is not None and not case.evaluated:
            yield f"{where}.pass_rate: {case.pass_rate!r}, but no sample was evaluated (it is null then)"
        elif case.pass_rate is not None and not _close(case.pass_rate, case.passed / case.evaluated):
            yield f"{where}.pass_rate: {case.pass_rate!r} is not passed/evaluated ({case.passed}/{case.evaluated})"
        for j, sample in enumerate(case.samples):
            if sample.latency_ms is not None and not 0 <= sample.latency_ms < math.inf:
                yield f"{where}.samples[{j}].latency_ms: {sample.latency_ms!r} is not a duration"
            if (sample.trace is not None or sample.scores is not None) and case.expect_calls is None:
                yield f"{where}.samples[{j}]: a trace or scores on a case without expect_calls"
            if sample.scores is not None:
                if case.status != PENDING and sample.outcome != Outcome.NOT_EVALUATED:
                    scored.append(sample.scores)
                if sample.outcome == Outcome.PASS and sample.scores.codes:
                    yield f"{where}.samples[{j}]: outcome PASS with failure codes {', '.join(sample.scores.codes)}"
            for k, call in enumerate(sample.trace.tool_calls if sample.trace else []):
                if not 0 <= call.timestamp_ms < math.inf:
                    at = f"{where}.samples[{j}].trace.tool_calls[{k}]"
                    yield f"{at}.timestamp_ms: {call.timestamp_ms!r} is not a time"
        total += len(case.samples)
        outcomes.update(s.outcome for s in case.samples)
    counts = report.counts
    if counts.cases != len(report.cases):
        yield f"counts.cases: {counts.cases}, but the report has {len(report.cases)} cases"
    if counts.samples != total:
        yield f"counts.samples: {counts.samples}, but its cases have {total} samples"
    if {k: v for k, v in counts.outcomes.items() if v} != {k: v for k, v in outcomes.items() if v}:
        yield "counts.outcomes: not the outcomes of the cases' samples"
    if counts.not_evaluated != outcomes.get(Outcome.NOT_EVALUATED, 0):
        yield f"counts.not_evaluated: {counts.not_evaluated}, but {outcomes.get(Outcome.NOT_EVALUATED, 0)} samples are"
    pending = sum(c.status == PENDING for c in report.cases)
    if counts.pending_cases != pending:
        yield f"counts.pending_cases: {counts.pending_cases}, but {pending} cases need review"
    if counts.counted_samples > counts.samples:
        yield f"counts.counted_samples: {counts.counted_samples} is more than counts.samples ({counts.samples})"
    cells = sum(n for row in report.confusion.values() for n in row.values())
    if cells > counts.counted_samples:
        yield f"confusion: {cells} samples, more than counts.counted_samples ({counts.counted_samples})"
    yield from _trajectory_problems(report, scored)
    names = {c.name for c in report.cases}
    if not set(report.flaky) <= names:
        yield "flaky names a case the report does not have"
    yield from _gate_problems(report.gate)
    run = report.run
    if run.provider not in PROVIDERS:
        yield f"run.provider: {show(run.provider)} is not a toolselect provider (known: {', '.join(PROVIDERS)})"
    for key in ("duration_s", "cost_usd"):
        value = getattr(run, key)
        if value is not None and not 0 <= value < math.inf:
            yield f"run.{key}: {value!r} is not a number ≥ 0"
