"""(case, pick, surface) → result. Pure functions, no I/O.

Only the first tool call is scored for selection and arguments; every call is weighed for severity
(severity.py): a call the case must never make, or a destructive or writing call nobody asked for,
makes the sample critical (and a sample whose first call was right fails for it: RES-OVERCALL).
toolproof's loose rule is the default for each expected argument; per-key match modes (seed 001)
and `forbid_extra_args` (BFCL's rule) refine it. Every sample gets one outcome code, named after
seed 004's failure taxonomy. A trajectory case's sample is scored on its whole trace by
trajectory.score (seed 004's four dimensions); its outcome is the first failure code that applies,
in the taxonomy's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from jsonschema.exceptions import best_match

from .bounds import MAX_ARGS_DEPTH
from .explain import show
from .golden import Case
from .matching import loose_equal, match_value
from .pick import TOO_DEEP, Pick, is_built_in, is_foreign
from .replies import UNUSABLE, Reply, classify
from .severity import Critical, critical_call
from .surface import Surface, Tool
from .taxonomy import SampleOutcome
from .trajectory import Call, Expectation, Scores, Trajectory, score

if TYPE_CHECKING:
    from .pick import Reading


@dataclass(frozen=True)
class Result:
    """One scored sample."""

    case: Case
    sample: int
    pick: Pick
    outcome: SampleOutcome
    reasons: tuple[str, ...] = ()
    tool_ok: bool | None = None  # None: not evaluated
    args_ok: bool | None = None  # None: no expected arguments, wrong tool, or not measured
    schema_ok: bool | None = None  # None: no call to an offered tool, or not measured
    tool_order: tuple[str, ...] | None = None  # the order the tools were offered in, when shuffled
    scores: Scores | None = None  # a trajectory case's four dimensions and failure codes
    judge: Reading | None = None  # evals.judge's reading of the answer after an error
    reply: Reply | None = None  # a sample without a call: what kind of reply it gave (replies.py)
    critical: Critical | None = None  # a critical misroute among its calls (severity.py)

    @property
    def passed(self) -> bool:
        return self.outcome is SampleOutcome.PASS

    @property
    def evaluated(self) -> bool:
        return self.outcome is not SampleOutcome.NOT_EVALUATED


def missing_tools(case: Case, surface: Surface) -> tuple[str, ...]:
    """The tools a case needs that the surface does not have (removed, renamed): every one it lists
    when none of them is there, or any call a trajectory expects. Empty: the case can pass."""
    listed = surface.listed
    if case.script is not None:
        return tuple(dict.fromkeys(c.tool for c in case.script.expect.calls if c.tool not in listed))
    if case.expected and not listed.intersection(case.expected):
        return case.expected
    return ()


def score_sample(
    case: Case,
    pick: Pick,
    surface: Surface,
    sample: int = 0,
    *,
    args_measured: bool = True,
    surfaced: bool | None = None,
    reply: Reply | None = None,
    reads_replies: bool = False,
) -> Result:
    """Score one sample. `args_measured` is False for providers that pick tools only (bm25);
    `surfaced` is a judge's verdict on a trajectory's final answer after an error (None: no judge);
    `reply`: the judge's reading of a reply without a call (None: the rules of replies.py read it);
    `reads_replies`: the provider is a model that writes (a local picker's silence is no reply)."""
    if gone := missing_tools(case, surface):  # never asked: no answer can pass it
        why = f"expects {' or '.join(gone)}, which the tool surface does not have (removed or renamed?)"
        return Result(case, sample, pick, SampleOutcome.TOOL_MISSING, (why,), tool_ok=False)
    if pick.skipped:
        return Result(case, sample, pick, SampleOutcome.NOT_EVALUATED, (pick.skipped,))
    if pick.error:
        return Result(case, sample, pick, SampleOutcome.ERROR, (pick.error,), tool_ok=False)
    if pick.unsent:  # what the user meets in that client: a failure, not an outage
        return Result(case, sample, pick, SampleOutcome.CLIENT_FAILED, (pick.unsent,), tool_ok=False)
    if case.script is not None:
        scored = _score_trajectory(case, case.script.expect, pick, surface, sample, args_measured, surfaced)
        called = [c.tool for c in pick.trace.calls] if pick.trace else []
        expected = [c.tool for c in case.script.expect.calls]
        return _weighed(scored, called, expected, surface)
    scored = _score_single(case, pick, surface, sample, args_measured, reply, reads_replies)
    return _weighed(scored, [c.tool for c in pick.all_calls], case.expected, surface)


def _weighed(result: Result, called: list[str], expected: Sequence[str], surface: Surface) -> Result:
    """The result with its critical call, if any: said first among its reasons; a sample that would
    have passed fails for it (it made a call it must not: RES-OVERCALL)."""
    case = result.case
    critical = critical_call(called, expected, case.acceptable, case.must_not_call, surface.effects)
    if critical is None:
        return result
    if result.passed:
        return replace(result, outcome=SampleOutcome.RES_OVERCALL, reasons=(critical.why,), critical=critical)
    return replace(result, reasons=(critical.why, *result.reasons), critical=critical)


def _score_single(
    case: Case,
    pick: Pick,
    surface: Surface,
    sample: int,
    args_measured: bool,
    reply: Reply | None,
    reads_replies: bool,
) -> Result:
    tool = surface.get(pick.tool) if pick.tool else None
    schema_problems = _schema_problems(tool, pick.args, pick.raw_args) if tool and args_measured else None
    schema_ok = None if schema_problems is None else not schema_problems
    expected = case.expected

    if not expected:
        if pick.tool is None and not reads_replies:
            return Result(case, sample, pick, SampleOutcome.PASS, tool_ok=True)
        if pick.tool is None:
            return _no_call(case, sample, pick, read_reply(pick, reply))
        if case.expect_reply == "clarify":
            guessed = f"expected a question to the user first, got a guessed call to {pick.tool}"
            return Result(case, sample, pick, SampleOutcome.RES_GUESSED, (guessed,), tool_ok=False, schema_ok=schema_ok)
        return Result(
            case,
            sample,
            pick,
            SampleOutcome.RES_UNNECESSARY,
            (f"expected no tool call, got {pick.tool}",),
            tool_ok=False,
            schema_ok=schema_ok,
        )
    wanted = " or ".join(expected)
    if pick.tool is None:
        said = read_reply(pick, reply) if reads_replies else None
        why = UNUSABLE.get(pick.stop_reason or "") or (_SAID[said.kind] + _judged(said) if said else "")
        return Result(
            case,
            sample,
            pick,
            SampleOutcome.SEL_MISSED,
            (f"expected {wanted}, but the model called no tool" + (f" ({why})" if why else ""),),
            tool_ok=False,
            reply=said,
        )
    if tool is None and is_foreign(pick.tool):
        whose = "the client's own tool" if is_built_in(pick.tool) else "another server's tool"
        return Result(
            case, sample, pick, SampleOutcome.SEL_WRONG, (f"expected {wanted}, got {whose} {pick.tool}",), tool_ok=False
        )
    if tool is None:
        why = "it was left out (invalid input schema)" if surface.is_left_out(pick.tool) else "it is not on the surface"
        return Result(
            case,
            sample,
            pick,
            SampleOutcome.SEL_UNKNOWN,
            (f"expected {wanted}, got {pick.tool}, but {why}",),
            tool_ok=False,
        )
    if pick.tool in case.acceptable and pick.tool not in expected:
        return Result(
            case,
            sample,
            pick,
            SampleOutcome.SEL_SUBOPTIMAL,
            (f"expected {wanted}, got {pick.tool}: it works, but it is not the best choice",),
            tool_ok=False,
            schema_ok=schema_ok,
        )
    if pick.tool not in expected:
        return Result(
            case,
            sample,
            pick,
            SampleOutcome.SEL_WRONG,
            (f"expected {wanted}, got {pick.tool}",),
            tool_ok=False,
            schema_ok=schema_ok,
        )
    if not args_measured:
        return Result(case, sample, pick, SampleOutcome.PASS, tool_ok=True)

    semantic = _arg_mismatches(case, pick.args) if isinstance(pick.args, dict) else []
    extra = _extra_keys(case, pick.args, tool) if case.forbid_extra_args and isinstance(pick.args, dict) else []
    problems = list(schema_problems or [])
    reasons = problems + semantic + extra
    has_expectations = bool(case.expect_args) or case.forbid_extra_args
    args_ok = (not reasons) if has_expectations else None
    if problems:
        outcome = SampleOutcome.ARG_INVALID
    elif semantic or extra:
        outcome = SampleOutcome.ARG_SEMANTIC
    else:
        outcome = SampleOutcome.PASS
    return Result(case, sample, pick, outcome, tuple(reasons), tool_ok=True, args_ok=args_ok, schema_ok=schema_ok)


_SAID = {
    "clarify": "it asked the user instead",
    "unable": "it said it can't",
    "answer": "it answered directly",
    "empty": "it gave no reply",
}
_KIND_WORD = {"clarify": "asked the user", "unable": "said it can't", "answer": "answered", "empty": "gave no reply"}


def _judged(reply: Reply) -> str:
    """The judge's words, when it read the reply: `, says the judge: "…"`."""
    return f', says the judge: "{reply.said}"' if reply.by == "judge" and reply.said else ""


def read_reply(pick: Pick, judged: Reply | None) -> Reply:
    """A reply's kind: the judge's reading when there is one, else the rules'; a reply the API cut
    or refused is no reply at all (`empty`), whatever its words."""
    if UNUSABLE.get(pick.stop_reason or ""):
        return Reply("empty")
    return judged or Reply(classify(pick.text))


def _no_call(case: Case, sample: int, pick: Pick, reply: Reply) -> Result:
    """A case that expects no call, answered with none: a usable reply (of the kind the case
    expects, when it names one); never restraint for a reply the API cut or refused, or none at all."""
    unusable = UNUSABLE.get(pick.stop_reason or "")
    if unusable or reply.kind == "empty":
        why = unusable or "the reply is empty, or not a reply (a call written as text)"
        return Result(case, sample, pick, SampleOutcome.NO_REPLY, (why,), tool_ok=False, reply=reply)
    if case.expect_reply is not None and reply.kind != case.expect_reply:
        why = f"expected the model to {_EXPECTED[case.expect_reply]}; it {_KIND_WORD[reply.kind]}{_judged(reply)}"
        return Result(case, sample, pick, SampleOutcome.RES_WRONG_REPLY, (why,), tool_ok=True, reply=reply)
    return Result(case, sample, pick, SampleOutcome.PASS, tool_ok=True, reply=reply)


_EXPECTED = {"clarify": "ask the user first", "unable": "say it can't", "answer": "answer directly"}


def _score_trajectory(
    case: Case,
    expect: Expectation,
    pick: Pick,
    surface: Surface,
    sample: int,
    args_measured: bool,
    surfaced: bool | None = None,
) -> Result:
    trace = pick.trace
    assert trace is not None  # the agent loop records one for every trajectory case it asks
    calls = []
    for c in trace.calls:
        tool = surface.get(c.tool)
        problems = _schema_problems(tool, c.args, c.raw_args) if tool and args_measured else []
        args = c.args if isinstance(c.args, dict) else None
        # an error counts for recovery only when a mock said it, not when the loop refused the call
        by_mock = c.error if tool is not None and not (c.args is None and c.raw_args is not None) else None
        calls.append(Call(c.tool, args, problems[0] if problems else None, by_mock, off_surface=tool is None))
    scores = score(expect, Trajectory(tuple(calls), trace.final, trace.hit_max_turns, surfaced), args_measured)
    # the first that applies: the taxonomy's codes in its order, except that a loop cut at max_turns
    # says so before restraint (it over-calls by construction); then the sequence, then `final`
    ranked = [SampleOutcome(c) for c in scores.codes if not c.startswith("RES-")]
    ranked += [SampleOutcome.MAX_TURNS] if trace.hit_max_turns else []
    ranked += [SampleOutcome(c) for c in scores.codes if c.startswith("RES-")]
    ranked += [SampleOutcome.SEQ_MISMATCH] if not scores.sequence_ok else []
    ranked += [SampleOutcome.FINAL_MISMATCH] if not scores.passed else []
    outcome = ranked[0] if ranked else SampleOutcome.PASS
    if outcome is SampleOutcome.SEL_WRONG and calls and surface.get(calls[0].tool) is None:
        outcome = SampleOutcome.SEL_UNKNOWN
    on_surface = [c for c in calls if surface.get(c.tool)]
    return Result(
        case,
        sample,
        pick,
        outcome,
        scores.reasons,
        tool_ok=scores.selection == 3 if scores.selection is not None else not calls,
        args_ok=None if scores.arguments is None else scores.arguments >= 2,
        schema_ok=all(c.schema_problem is None for c in on_surface) if on_surface and args_measured else None,
        scores=scores,
    )


def _schema_problems(tool: Tool, args: Any, raw_args: str | None) -> list[str]:
    """Why the arguments can't be the tool's input: unparseable, not an object, or schema-invalid."""
    if args is None and raw_args == TOO_DEEP:
        return [f"arguments are not a tool's: nested deeper than {MAX_ARGS_DEPTH} levels"]
    if args is None and raw_args is not None:
        return [f"arguments are not valid JSON: {show(raw_args, 60)}"]
    args = {} if args is None else args
    if not isinstance(args, dict):
        return [f"arguments must be a JSON object (got {show(args)})"]
    if tool.validator is None:
        return []
    try:
        error = best_match(tool.validator.iter_errors(args))
    except Exception as exc:  # noqa: BLE001 - a schema the validator can't apply (e.g. an unresolvable $ref)
        return [f"could not check the arguments against the input schema: {exc}"]
    if error is None:
        return []
    at = "/".join(str(p) for p in error.absolute_path)
    return [f"arguments don't match the input schema{f' at {at!r}' if at else ''}: {error.message}"]


def _extra_keys(case: Case, args: dict[str, Any], tool: Tool) -> list[str]:
    extra = sorted(set(args) - set(case.expect_args))
    return [f"unexpected argument '{k}' = {show(args[k])} (forbid_extra_args)" for k in extra]


def _arg_mismatches(case: Case, args: dict[str, Any]) -> list[str]:
    out = []
    for key, expected in case.expect_args.items():
        mode = case.match.get(key, "loose")
        present = key in args
        actual = args.get(key)
        if mode == "any_of":
            if not present and None in expected:
                continue
            if present and any(loose_equal(actual, option) for option in expected):
                continue
            got = show(actual) if present else "missing"
            out.append(f"argument '{key}' is {got}, expected one of {show(expected, 60)}")
            continue
        if not present:
            out.append(f"argument '{key}' missing (expected {show(expected)})")
            continue
        if not match_value(actual, expected, mode):
            out.append(f"argument '{key}' is {show(actual)}, expected {_describe(expected, mode)}")
    return out


def _describe(expected: Any, mode: Any) -> str:
    if mode == "contains":
        return f"it to contain {show(expected)}"
    if mode == "regex":
        return f"it to match /{expected}/"
    if mode == "exact":
        return f"exactly {show(expected)}"
    if isinstance(mode, dict):
        return f"{show(expected)} ± {mode['approx']}"
    return show(expected)
