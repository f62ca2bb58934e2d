"""What every renderer shows, computed once from a report: case rows, hot cells, labels."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..lint.finding import Finding
from ..pick import Usage, is_foreign
from ..prices import cached_share
from ..report.build import CLIENT_FAILED, ERROR, MISSING, UNKNOWN
from ..report.reading import REPLIED, calls_text, case_expected, case_headline, none_of, right_cell
from ..report.schema import NONE, CaseOut, DimensionOut, FindingOut, Metric, Report, RunOut, SampleOut, ScoresOut
from ..taxonomy import DIMENSIONS, REPLY_KINDS
from .escape import code

if TYPE_CHECKING:  # a run with no base loads no diff
    from ..diff import CellDelta, Diff, RateDelta

METRIC_LABELS = {
    "accuracy": "accuracy (right tool and arguments)",
    "tool_accuracy": "tool accuracy",
    "arg_accuracy": "argument accuracy",
    "schema_valid_rate": "schema-valid arguments",
    "no_call_precision": "no-call precision",
    "no_call_recall": "restraint (no-call recall)",
    "over_trigger_rate": "over-triggering",
    "under_trigger_rate": "under-triggering",
    "error_rate": "provider errors",
    "clarify_rate": "clarification rate (cases that expect a question)",
}


@dataclass(frozen=True)
class CaseRow:
    case: CaseOut
    outcome: str  # the case's headline outcome
    rate: str  # "3/3" style when repeated, else ""
    expected: str
    picked: str
    why: str
    sample: SampleOut | None

    @property
    def failing(self) -> bool:
        return self.outcome not in ("PASS", "NOT-EVALUATED")


def pct(m: Metric | float | None, digits: int = 1) -> str:
    value = m.value if isinstance(m, Metric) else m
    return "n/a" if value is None else f"{value * 100:.{digits}f}%"


def frac(m: Metric) -> str:
    return f"{m.numerator}/{m.denominator}"


def interval(m: Metric | None) -> str:
    """'56.0–84.2%' (with a † when the interval resamples cases), or '' when there is none."""
    if m is None or m.ci is None:
        return ""
    mark = "†" if m.ci_method and m.ci_method.startswith("cluster") else ""
    return f"{m.ci[0] * 100:.1f}–{m.ci[1] * 100:.1f}%{mark}"


CLUSTER_NOTE = "† samples of one case are correlated, so this interval resamples cases (a cluster bootstrap)"


def args_text(args: Any, limit: int = 60) -> str:
    if args is None or args == {}:
        return ""
    text = json.dumps(args, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def picked_label(sample: SampleOut | None, with_args: bool = True, limit: int = 60) -> str:
    if sample is None:
        return ""
    if sample.outcome == "ERROR":
        return "(error)"
    if sample.outcome == "NOT-EVALUATED":
        return "(not asked)"
    if sample.trace is not None:
        return calls_text(sample.trace)
    if sample.picked_tool is None:
        return none_of(sample.reply.kind if sample.reply else None)
    extra = args_text(sample.picked_args, limit) if with_args else ""
    if with_args and sample.picked_args is None and sample.raw_args is not None:
        extra = repr(sample.raw_args[:limit])
    return f"{sample.picked_tool} {extra}".strip()


def case_row(case: CaseOut) -> CaseRow:
    outcome, shown = case_headline(case)
    rate = f"{case.passed}/{case.evaluated}" if len(case.samples) > 1 else ""
    if case.split == "holdout":  # arguments and reasons can quote the prompt: the tool only
        return CaseRow(
            case=case,
            outcome=outcome,
            rate=rate,
            expected=case_expected(case),
            picked=picked_label(shown, with_args=False),
            why="",
            sample=shown,
        )
    return CaseRow(
        case=case,
        outcome=outcome,
        rate=rate,
        expected=case_expected(case),
        picked=picked_label(shown),
        why=(shown.reasons[0] if shown and shown.reasons else ""),
        sample=shown,
    )


def labels(report: Report) -> tuple[list[str], list[str]]:
    """Rows (expected) and columns (picked) of the confusion matrix, tools in surface order."""
    order = {name: i for i, name in enumerate(report.surface.tools)}
    rows = set(report.confusion)
    cols = {c for row in report.confusion.values() for c in row}

    def key(label: str) -> tuple[int, int, str]:
        special = {NONE: 2, UNKNOWN: 3, ERROR: 4, CLIENT_FAILED: 5, MISSING: 6}
        rank = special.get(label, 2 if label.startswith("(none: ") else 1 if is_foreign(label) else 0)
        return (rank, order.get(label, len(order)), label)

    # every row is a column too (its diagonal), but (none): its right cells are the replies' columns
    shown = cols | {r for r in rows if r != NONE or not any(c in REPLIED for c in cols)}
    return sorted(rows, key=key), sorted(shown, key=key)


def hot_cells(confusion: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    """Off-diagonal cells, biggest first: (expected, picked, count)."""
    cells = [(e, p, n) for e, row in confusion.items() for p, n in row.items() if not right_cell(e, p) and n]
    return sorted(cells, key=lambda c: (-c[2], c[0], c[1]))


def accuracy_line(report: Report) -> str:
    """What the gate judged, in words: accuracy against min_accuracy, or why there is nothing to judge."""
    acc = report.metrics["accuracy"]
    if acc.value is not None:
        return f"accuracy {pct(acc)} ({frac(acc)}), min {report.gate.min_accuracy * 100:g}%"
    if report.counts.pending_cases:
        return f"nothing for the gate to judge yet: {report.counts.pending_cases} cases need review"
    return "nothing for the gate to judge: no sample was evaluated"


def metric_text(m: Metric | None, report: Report, key: str) -> str:
    """A rate as shown: '72.2%', 'n/a', or 'not measured' for argument metrics of a tools-only provider."""
    if m is not None and m.value is None and key in ARG_METRICS and not report.run.args_measured:
        return "not measured"
    if m is not None and m.value is None and key == "clarify_rate" and not report.run.replies_read:
        return "not measured"
    return pct(m)


ARG_METRICS = ("arg_accuracy", "schema_valid_rate")
LOWER_IS_BETTER = frozenset({"under_trigger_rate", "over_trigger_rate", "error_rate"})  # a rise is worse


HEADLINE_METRICS = ("accuracy", "tool_accuracy", "arg_accuracy", "no_call_recall", "over_trigger_rate", "error_rate")


def rate_change(name: str, moved: RateDelta | None) -> str | None:
    """`steal rate 10.0% → 25.0% (+15.0 pt; rose in 2 cases, fell in 0; sign test p = 0.5)`, when it moved."""
    if moved is None or moved.base is None or moved.head is None or not moved.delta_pt:
        return None
    return (
        f"{name} {moved.base:.1%} → {moved.head:.1%} ({delta_text(moved.delta_pt)}; rose in {moved.rose} cases, "
        f"fell in {moved.fell}; sign test p = {moved.p_value:.2g})"
    )


def delta_text(value: float | None) -> str:
    """A change in points: `+2.5 pt`, `−4.8 pt`, `±0.0 pt`, or `n/a`."""
    if value is None:
        return "n/a"
    if abs(value) < 0.05:
        return "±0.0 pt"
    return f"{'+' if value > 0 else '−'}{abs(value):.1f} pt"


def tools_count(n: int) -> str:
    return f"{n} tool" if n == 1 else f"{n} tools"


def lint_summary(findings: Sequence[Finding | FindingOut]) -> str:
    """'1 error, 3 warnings, 1 note' (empty when there is nothing)."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for f in findings:
        counts[f.severity] += 1
    words = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("note", "notes")}
    return ", ".join(f"{n} {words[k][n != 1]}" for k, n in counts.items() if n)


DIMENSION_LABELS = {
    "selection": "selection (the right tool first)",
    "arguments": "arguments (schema-valid, the right values)",
    "recovery": "error recovery (after a stubbed error)",
    "restraint": "restraint (no more calls than needed)",
}


@dataclass(frozen=True)
class DimensionRow:
    label: str
    mean: str  # "2.40" or "n/a"
    ci: str  # "1.90–2.80" or ""
    distribution: str  # "0:1 1:0 2:3 3:8"
    n: int


def dimension_rows(dimensions: Mapping[str, DimensionOut]) -> list[DimensionRow]:
    rows = []
    for name in DIMENSIONS:
        d = dimensions.get(name)
        if d is None:
            continue
        rows.append(
            DimensionRow(
                label=DIMENSION_LABELS[name],
                mean="n/a" if d.mean is None else f"{d.mean:.2f}",
                ci=f"{d.ci[0]:.2f}–{d.ci[1]:.2f}" if d.ci else "",
                distribution=" ".join(f"{k}:{v}" for k, v in d.distribution.items()),
                n=d.n,
            )
        )
    return rows


def codes_text(codes: Mapping[str, int]) -> str:
    """`REC-LOOP 2 · RES-OVERCALL 1`, or `none` when no failure code applied."""
    return " · ".join(f"{code} {n}" for code, n in codes.items()) or "none"


def trace_lines(sample: SampleOut, with_args: bool = True, limit: int = 80, max_calls: int = 12) -> list[str]:
    """A trajectory sample's trace, one line per call (the first `max_calls`) and one for the final
    answer."""
    trace = sample.trace
    if trace is None:
        return []
    out = []
    shown = trace.tool_calls[:max_calls]
    for i, call in enumerate(shown, 1):
        args = args_text(call.arguments, limit) if with_args else ""
        if with_args and call.arguments is None and call.raw_arguments is not None:
            args = repr(call.raw_arguments[:limit])
        if not with_args:
            answer = "→ error" if call.error is not None else "→ result"
        elif call.error is not None:
            answer = f"error: {call.error}"
        else:
            answer = "→ " + (
                call.result if isinstance(call.result, str) else json.dumps(call.result, ensure_ascii=False)
            )
        if len(answer) > limit:
            answer = answer[: limit - 1] + "…"
        out.append(f"{i}. [turn {call.turn}] {call.name} {args} {answer}".replace("  ", " "))
    if len(trace.tool_calls) > len(shown):
        out.append(f"… {len(trace.tool_calls) - len(shown)} more calls")
    if trace.final_response is not None:
        final = trace.final_response if with_args else "(text)"
        out.append(f"final: {final[: limit * 2] + ('…' if len(final) > limit * 2 else '')}")
    elif trace.hit_max_turns:
        out.append(f"stopped at max_turns ({trace.turns} turns) without a final answer")
    return out


def scores_text(scores: ScoresOut) -> str:
    """`selection 3 · arguments 2 · recovery — · restraint 1 · RES-OVERCALL`"""
    parts = [f"{d} {'—' if (v := getattr(scores, d)) is None else v}" for d in DIMENSIONS]
    return " · ".join(parts + list(scores.codes))


def cases_moved(diff: Diff) -> list[tuple[str, bool]]:
    """What moved between base and head, as phrases — ("3 flipped to failing", stressed), ("1 new", …) —
    for every view to set in its own type."""
    said = [
        (f"{len(diff.to_failing)} flipped to failing", True),
        (f"{len(diff.to_passing)} flipped to passing", False),
        (f"{len(diff.new_cases)} new", False),
        (f"{len(diff.removed_cases)} removed", False),
    ]
    counts = (diff.to_failing, diff.to_passing, diff.new_cases, diff.removed_cases)
    return [phrase for phrase, items in zip(said, counts, strict=True) if items]


# ----------------------------------------------------------------------------- the bill


def usd(value: float) -> str:
    """$0.06; under a cent, two significant digits ($0.0042); nothing at all: $0."""
    if value == 0:
        return "$0"
    return f"${value:.2f}" if value >= 0.01 else f"${value:.2g}"


def bill(heads: Sequence[RunOut], bases: Sequence[RunOut] = ()) -> str | None:
    """What the run cost, in one line: `cost $0.06: head $0.05, base $0.01; 83% of input tokens from the
    prompt cache`. None for a run no model API answered (a local provider); tokens only where no price
    is known."""
    runs = [*heads, *bases]
    if not runs or all(r.cache_mode == "off" for r in runs):
        return None
    if not any(r.api_calls for r in runs):
        return "cost $0: every answer came from the answer cache"
    tokens = sum(
        (Usage(r.input_tokens, r.output_tokens, r.prompt_cache_write_tokens, r.prompt_cache_read_tokens) for r in runs),
        Usage(0, 0),
    )
    share = cached_share(tokens)
    cached = f"; {share:.0%} of input tokens from the prompt cache" if share else ""
    costs = [r.cost_usd for r in runs]
    if any(c is None for c in costs):
        unpriced = f"tokens {tokens.prompt_tokens:,} in, {tokens.output_tokens or 0:,} out"
        return f"{unpriced} (no price known for this model){cached}{batched(runs)}"
    parts = [f"head {usd(sum(r.cost_usd or 0 for r in heads))}"] if bases else []
    parts += [f"base {usd(sum(r.cost_usd or 0 for r in bases))}"] if bases else []
    split = f": {', '.join(parts)}" if parts else ""
    return f"cost {usd(sum(c or 0 for c in costs))}{split}{cached}{batched(runs)}"


def batched(runs: Sequence[RunOut]) -> str:
    """`; 540 requests batched at half price (12 asked one by one after the batch timed out)`, or nothing."""
    done = [r.batch for r in runs if r.batch is not None]
    answered, late = sum(b.answered for b in done), sum(b.late for b in done)
    if not done or not (answered or late):
        return ""
    said = f"; {answered:,} request{'s' * (answered != 1)} batched at half price" if answered else "; nothing batched"
    return said + (f" ({late:,} asked one by one: see the warnings)" if late else "")


def cell_line(cell: CellDelta) -> str:
    if cell.diagonal:
        kind = "✅ more right" if cell.delta > 0 else "⚠️ fewer right"
        return f"- {kind}: {right_text(cell.expected, cell.picked, code)}: {cell.base} → {cell.head}"
    kind = "🔺" if cell.delta > 0 else "🔻"
    return f"- {kind} wanted {code(cell.expected)}, got {code(cell.picked)}: {cell.base} → {cell.head}"


def right_text(expected: str, picked: str, quote: Callable[[str], str]) -> str:
    """A right cell in words: the tool, or a (none) row's kind of reply (`(none)` as `(none: clarify)`)."""
    return quote(expected) if expected == picked else f"{quote(expected)} as {quote(picked)}"


def replies_line(report: Report) -> str | None:
    """`replies without a call: 2 clarify · 1 unable · 1 answer · 1 empty` (counted samples, from the
    matrix's columns), or that the kinds were not measured (a provider that writes no reply); None
    when there is nothing to say."""
    if not report.run.replies_read:
        silent = sum(row.get(NONE, 0) for row in report.confusion.values())
        return f"replies without a call: not measured ({report.run.provider} writes no reply)" if silent else None
    counts = {k: sum(row.get(none_of(k), 0) for row in report.confusion.values()) for k in REPLY_KINDS}
    if not any(counts.values()):
        return None
    return "replies without a call: " + " · ".join(f"{n} {k}" for k, n in counts.items() if n)


def states_text(states: Mapping[str, int], between: str = " · ") -> str:
    """'2 broke · 1 destabilized · 3 fixed · 1 inconclusive': the moved cases by state (diff.py)."""
    return between.join(f"{n} {state}" for state, n in states.items())


def column_word(models: Sequence[Any]) -> str:
    """What a run's rows are: models, clients (one model asked as each client presents the surface),
    or both (`model@client`)."""
    clients = [m for m in models if m.head.run.client is not None]
    if not clients:
        return "model"
    return "client" if all("@" not in m.label for m in clients) and len(clients) == len(models) else "model@client"
