"""A report's records read as words: a case's headline sample, a pick's name, the expected calls as
text, the cells of the confusion matrix that are right, how often a client's tools took a pick."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..taxonomy import SampleOutcome
from .schema import ERROR, NONE, PENDING, CaseOut, SampleOut, TraceOut


def steals(cases: Sequence[CaseOut]) -> dict[str, tuple[int, int, Counter[str]]]:
    """Per case that expects one of the server's tools: (its samples a client's own tool took, its
    decided samples, which tools took them). A report read back is scored the same way."""
    from ..pick import is_foreign

    out: dict[str, tuple[int, int, Counter[str]]] = {}
    for case in cases:
        if not case.expect_tool or case.status == PENDING or case.expect_calls is not None:
            continue
        decided = [s for s in case.samples if s.outcome not in ("NOT-EVALUATED", "ERROR", "CLIENT-FAILED")]
        took = Counter(s.picked_tool for s in decided if s.picked_tool is not None and is_foreign(s.picked_tool))
        out[case.name] = (sum(took.values()), len(decided), took)
    return out


def case_headline(case: CaseOut) -> tuple[str, SampleOut | None]:
    """A case's headline outcome and the sample that shows it: PASS when every evaluated sample
    passed, else its most common failing outcome (and its first failing sample)."""
    evaluated = [s for s in case.samples if s.outcome != SampleOutcome.NOT_EVALUATED]
    failing = [s for s in evaluated if s.outcome != SampleOutcome.PASS]
    if failing:
        worst = Counter(s.outcome for s in failing).most_common(1)[0][0]
        return worst, failing[0]
    if evaluated:
        return SampleOutcome.PASS.value, evaluated[0]
    return SampleOutcome.NOT_EVALUATED.value, case.samples[0] if case.samples else None


def pick_name(sample: SampleOut | None) -> str:
    """What a sample picked, in one word: a tool, (none), (error) or (not asked); for a trajectory,
    its calls in order (✗: answered with an error), e.g. `get_forecast✗ → get_weather`."""
    if sample is None or sample.outcome == SampleOutcome.NOT_EVALUATED:
        return "(not asked)"
    if sample.outcome == SampleOutcome.ERROR:
        return ERROR
    if sample.trace is not None:
        return calls_text(sample.trace)
    if sample.picked_tool is None and sample.reply is not None:
        return none_of(sample.reply.kind)
    return sample.picked_tool or NONE


def none_of(kind: str | None) -> str:
    """No call, and the kind of reply: `(none: clarify)`; `(none)` when no kind was read."""
    return f"(none: {kind})" if kind else NONE


REPLIED = frozenset(none_of(k) for k in ("clarify", "unable", "answer"))  # a usable reply without a call


def right_cell(expected: str, picked: str) -> bool:
    """A confusion cell of right answers: the tool wanted, or — for a case that wants no call and
    names no kind of reply — no call with any usable reply (`(none)` row, `(none: answer)` column)."""
    return expected == picked or (expected == NONE and picked in REPLIED)


MAX_SHOWN_CALLS = 6


def calls_text(trace: TraceOut) -> str:
    """A trajectory's calls in one line: `a → b✗ → b`, `(none)`, `… (max turns)` at the limit."""
    names = [c.name + ("✗" if c.error is not None else "") for c in trace.tool_calls]
    if len(names) > MAX_SHOWN_CALLS:
        names = [*names[: MAX_SHOWN_CALLS - 1], f"… {len(names) - MAX_SHOWN_CALLS + 1} more"]
    text = " → ".join(names) or NONE
    return text + (" (max turns)" if trace.hit_max_turns else "")


SEQUENCE_JOIN = {"strict": " → ", "in_order": " → … ", "unordered": " + ", "any_of_these": " | "}


def expected_text(
    expect_tool: str | list[str] | None,
    expect_calls: Sequence[str] | None,
    sequence: str | None,
    expect_reply: str | None = None,
) -> str:
    """What a case expects, in one line: a tool, `a | b`, `(none)`, `(none: clarify)`; a
    trajectory's calls joined by its sequence: `a → b` (strict), `a → … b` (in order, others
    allowed), `a + b` (any order), `a | b` (one of them)."""
    if expect_calls is not None:
        return SEQUENCE_JOIN[sequence or "strict"].join(expect_calls) or NONE
    if expect_tool is None:
        return none_of(expect_reply)
    return " | ".join(expect_tool) if isinstance(expect_tool, list) else expect_tool


def case_expected(case: CaseOut) -> str:
    calls = [c.tool for c in case.expect_calls] if case.expect_calls is not None else None
    return expected_text(case.expect_tool, calls, case.sequence, case.expect_reply)


def search_hits(cases: Sequence[CaseOut], eager: Sequence[str] = ()) -> dict[str, tuple[int, int]]:
    """Per reviewed single-call case whose tool is behind a search (not `eager`): (samples whose
    searches found the expected tool, samples answered)."""
    out: dict[str, tuple[int, int]] = {}
    unasked = ("NOT-EVALUATED", "ERROR", "CLIENT-FAILED", "TOOL-MISSING")
    for case in cases:
        tool = case.expect_tool
        if not isinstance(tool, str) or tool in eager or case.status == PENDING or case.expect_calls is not None:
            continue
        decided = [s for s in case.samples if s.outcome not in unasked]
        if decided:
            out[case.name] = (sum(any(tool in s.found for s in sample.searched) for sample in decided), len(decided))
    return out
