"""Results → report: metrics, per-tool precision/recall, the confusion matrix, the trajectory
dimensions, and the gate's options in force (the run judges it next: gate.judged)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast, get_args

from ..golden import Case
from ..pick import Trace, is_foreign
from ..scoring import Result
from ..severity import CriticalCode
from ..stats import cluster_bootstrap, wilson
from ..surface import Surface
from ..taxonomy import DIMENSIONS, FAILURE_CODES, FailureCode, SampleOutcome
from ..trajectory import Scores
from .reading import none_of, steals
from .schema import (
    CLIENT_FAILED,
    ERROR,
    MISSING,
    NONE,
    PENDING,
    UNKNOWN,
    CaseOut,
    CaseStatus,
    Counts,
    CriticalOut,
    DimensionOut,
    ExpectedCallOut,
    FindingOut,
    GateOut,
    JudgeOut,
    LeftOutOut,
    Metric,
    MissedOut,
    ReplyOut,
    Report,
    RunOut,
    SampleOut,
    ScoresOut,
    SearchOut,
    SearchStatsOut,
    SourceOut,
    StealOut,
    SurfaceOut,
    Third,
    ToolStats,
    TraceCallOut,
    TraceOut,
    UsageOut,
)

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
    """The confusion row: the expected tool (for a list, the picked one when it is listed); for a case
    that wants no call, the kind of reply it wants — when a reply was read: a provider that writes none
    (bm25, a `command` picker) answers `(none)`, and that is no confusion."""
    expected = result.case.expected
    if not expected:
        unread = result.pick.tool is None and result.reply is None
        return NONE if unread else none_of(result.case.expect_reply)
    return result.pick.tool if result.pick.tool in expected else expected[0]


def column_label(result: Result, surface: Surface) -> str:
    if result.outcome is SampleOutcome.ERROR:
        return ERROR
    if result.outcome is SampleOutcome.CLIENT_FAILED:
        return CLIENT_FAILED
    if result.outcome is SampleOutcome.TOOL_MISSING:
        return MISSING
    if result.pick.tool is None:
        return none_of(result.reply.kind if result.reply else None)
    if is_foreign(result.pick.tool):
        return result.pick.tool  # a client's own tool or another server's: a column of its own
    return result.pick.tool if surface.get(result.pick.tool) else UNKNOWN


def counted(result: Result) -> bool:
    """Samples the metrics and the gate count: evaluated, of a reviewed case."""
    return result.evaluated and result.case.status != PENDING


def compute_metrics(results: Sequence[Result], args_measured: bool, replies_read: bool = True) -> dict[str, Metric]:
    rs = [r for r in results if counted(r)]
    unasked = (SampleOutcome.ERROR, SampleOutcome.CLIENT_FAILED, SampleOutcome.TOOL_MISSING)
    decided = [r for r in rs if r.outcome not in unasked]
    expect_none = [r for r in decided if not r.case.expected]
    expect_tool = [r for r in decided if r.case.expected]
    # a usable reply without a call: a cut, refused or empty one is never restraint (NO-REPLY)
    no_call = [r for r in decided if r.pick.tool is None and r.outcome is not SampleOutcome.NO_REPLY]
    ambiguous = [r for r in decided if r.case.expect_reply == "clarify"]
    arg_scored = [r for r in rs if r.args_ok is not None]
    schema_scored = [r for r in rs if r.schema_ok is not None]
    return {
        "accuracy": clustered(metric(sum(r.passed for r in rs), len(rs)), rs, lambda r: r.passed),
        "tool_accuracy": clustered(metric(sum(bool(r.tool_ok) for r in rs), len(rs)), rs, lambda r: bool(r.tool_ok)),
        "arg_accuracy": metric(sum(bool(r.args_ok) for r in arg_scored), len(arg_scored), args_measured),
        "schema_valid_rate": metric(sum(bool(r.schema_ok) for r in schema_scored), len(schema_scored), args_measured),
        "no_call_precision": metric(sum(not r.case.expected for r in no_call), len(no_call)),
        "no_call_recall": metric(sum(r in no_call for r in expect_none), len(expect_none)),
        "over_trigger_rate": metric(sum(r.pick.tool is not None for r in expect_none), len(expect_none)),
        "under_trigger_rate": metric(sum(r.pick.tool is None for r in expect_tool), len(expect_tool)),
        "error_rate": metric(sum(r.outcome is SampleOutcome.ERROR for r in rs), len(rs)),
        # asked, where it should; not measured when no reply is read (a silent picker "asks" nothing)
        "clarify_rate": metric(sum(r.passed for r in ambiguous), len(ambiguous), replies_read),
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
                searched=[SearchOut(query=s.query, found=list(s.found)) for s in r.pick.searched],
                reply=ReplyOut(kind=r.reply.kind, by=r.reply.by, said=r.reply.said) if r.reply else None,
                critical=CriticalOut(code=r.critical.code, tool=r.critical.tool) if r.critical else None,
            )
            for r in results
        ],
        acceptable=list(case.acceptable),
        must_not_call=list(case.must_not_call),
        expect_reply=case.expect_reply,
        **_script_fields(case),
    )


def critical_counts(results: Sequence[Result]) -> dict[CriticalCode, int]:
    """The critical samples the gate counts (of reviewed cases), by code, in the codes' order."""
    found = Counter(r.critical.code for r in results if r.critical is not None and counted(r))
    return {code: found[code] for code in get_args(CriticalCode) if found[code]}


def expected_position(result: Result) -> int | None:
    """Where the expected tool (its confusion row) sat in the order this sample was offered."""
    if not result.tool_order or not result.case.expected:
        return None
    row = row_label(result)
    return result.tool_order.index(row) if row in result.tool_order else None


def search_stats(results: Sequence[Result], k: int, eager: Iterable[str] = ()) -> SearchStatsOut:
    """The searches before the pick — a deferred client's, or the API's own (--tool-search) — over the
    counted single-call samples that expected a deferred tool (an `eager` one is loaded, never searched
    for): was the expected tool among what a search found (recall@k), and was it then picked. The tools
    whose samples failed only because no search found them are the ones to keep loaded."""
    per_tool: dict[str, list[bool]] = defaultdict(list)
    found = not_picked = 0
    loaded = set(eager)
    missed: list[MissedOut] = []
    keep: Counter[str] = Counter()
    decided = [
        r
        for r in results
        if counted(r) and r.case.expected and r.case.script is None and not set(r.case.expected) & loaded
        and r.outcome not in (SampleOutcome.ERROR, SampleOutcome.CLIENT_FAILED, SampleOutcome.TOOL_MISSING)
    ]  # fmt: skip
    for r in decided:
        seen = {tool for s in r.pick.searched for tool in s.found}
        hit = bool(seen & set(r.case.expected))
        found += hit
        not_picked += hit and not r.tool_ok
        per_tool[row_label(r)].append(hit)
        if not hit:
            if len(missed) < MAX_MISSED:
                queries = [s.query for s in r.pick.searched]
                missed.append(MissedOut(case=r.case.name, tool=row_label(r), queries=queries[:3]))
            if not r.passed:
                keep.update(r.case.expected[:1])
    return SearchStatsOut(
        k=k,
        samples=len(decided),
        found=found,
        found_not_picked=not_picked,
        never_found=len(decided) - found,
        recall=metric(found, len(decided)),
        per_tool={tool: metric(sum(hits), len(hits)) for tool, hits in sorted(per_tool.items())},
        missed=missed,
        keep_loaded=[tool for tool, _ in keep.most_common()],
    )


MAX_MISSED = 20  # the searches that missed, listed in a report (the rest are counted in never_found)


def steal_out(cases: Sequence[CaseOut]) -> StealOut:
    """How often a client's own tools took a pick the server's tool should have had."""
    counted_ = steals(cases).values()
    by: Counter[str] = Counter()
    for _, _, took in counted_:
        by.update(took)
    return StealOut(rate=metric(sum(c[0] for c in counted_), sum(c[1] for c in counted_)), by=dict(by.most_common()))


THIRDS: tuple[str, ...] = get_args(Third)


def accuracy_by_position(results: Sequence[Result]) -> dict[str, Metric] | None:
    """Accuracy by the expected tool's position in the shuffled order: first, middle, last third."""
    buckets: dict[str, list[bool]] = {t: [] for t in THIRDS}
    for r in results:
        if not counted(r) or r.outcome is SampleOutcome.ERROR:
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
    gate: Mapping[str, Any],
    *,
    stopped: str | None = None,
    warnings: Sequence[str] = (),
    lint: Sequence[Any] = (),
) -> Report:
    by_case: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_case[r.case.name].append(r)
    metrics = compute_metrics(results, run.args_measured, run.replies_read)
    confusion = confusion_matrix(results, surface)
    expected_tools = {t for c in cases for t in c.expected}
    per_tool = tool_stats(confusion, sorted(set(surface.names) | expected_tools))
    trajectories = dimension_scores(results)
    position = accuracy_by_position(results)
    warning = position_warning(position)
    case_list = [case_out(c, by_case.get(c.name, [])) for c in cases]
    outcomes = Counter(r.outcome.value for r in results)
    built = Report(
        passed=True,  # until judged (gate.judged)
        gate=GateOut(passed=True, stopped=stopped, **gate),
        metrics=metrics,
        per_tool=per_tool,
        confusion=confusion,
        counts=Counts(
            cases=len(cases),
            samples=len(results),
            counted_samples=sum(counted(r) for r in results),
            pending_cases=sum(c.status == PENDING for c in cases),
            not_evaluated=outcomes.get(SampleOutcome.NOT_EVALUATED.value, 0),
            outcomes={o: outcomes[o.value] for o in SampleOutcome if outcomes.get(o.value)},
            critical=critical_counts(results),
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
        search=search_stats(results, run.client.deferred)
        if run.client and run.client.deferred
        else search_stats(results, run.tool_search.k, run.tool_search.eager)
        if run.tool_search
        else None,
        steal=steal_out(case_list) if run.client and (run.client.builtins or run.client.alongside) else None,
    )
    return built
