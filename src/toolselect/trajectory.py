"""(trajectory expectation, recorded trajectory) → seed 004's four scores and failure codes. Pure.

A trajectory is every tool call a model made in one conversation (each answered with a stubbed
result or error, never executed) and its final text. It is scored on four dimensions, 0–3 each, by
these rules (seed 004's anchors, made mechanical):

- **selection** (None when no tool is expected): 3 the first call is the expected first tool (any
  expected tool for `unordered` / `any_of_these`; for `in_order`, the first call to an expected
  tool — calls before it count against restraint); 2 it is an `acceptable` tool (SEL-SUBOPTIMAL);
  1 a wrong first call the model corrected later (an expected tool is called afterwards); 0 a wrong
  tool never corrected, or no call at all (SEL-WRONG, SEL-MISSED).
- **arguments** (None when no matched expected call names arguments): 0 a call to an expected tool
  with arguments unparseable or invalid against its schema (ARG-INVALID); 1 schema-valid, not the
  expected values (ARG-SEMANTIC); 2 right values with keys the case didn't name, where
  `forbid_extra_args` is off; 3 right values, nothing extra.
- **recovery** (None when no mock answered with an error): 0 the same failing call (same tool,
  same arguments) made more than once again (REC-LOOP); 3 a later call succeeded (a retry or
  another way); otherwise the final answer decides — with `final` checks (or, without them, a
  judge's verdict): 1 it doesn't surface the failure (REC-SILENT), 2 if another call was tried
  first (REC-SILENT), 3 it does; with neither, 2 (unchecked, no code).
- **restraint**: 0 a call when none was expected (RES-UNNECESSARY); 1 a successful call the
  expected ones don't account for, or a call to a tool the server lacks (RES-OVERCALL); 2 the
  right calls in a wasteful order; 3 the minimum calls, in order. Each expected call takes the
  first call to its tool that succeeded (else one that failed), so a retry after an error is not
  extra; an error a mock answered is recovery's business, not restraint's.

A sample passes when its calls match the expected sequence, no failure code applies, the final
checks (if any) pass and the conversation ended with a text answer within `max_turns`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .matching import loose_equal, match_value
from .taxonomy import FAILURE_CODES


class Order(StrEnum):
    STRICT = "strict"  # exactly these calls, in this order
    IN_ORDER = "in_order"  # these calls in this order; others allowed, counted against restraint
    UNORDERED = "unordered"  # these calls, in any order
    ANY_OF = "any_of_these"  # one of these calls is enough


@dataclass(frozen=True)
class ExpectedCall:
    tool: str
    args: Mapping[str, Any] | None = None  # None: any arguments
    match: Mapping[str, Any] = field(default_factory=dict)  # per-key match modes (matching.match_value)


@dataclass(frozen=True)
class FinalCheck:
    """Checks on the final text answer: every `contains` (case-insensitive), every `regex`, no
    `not_contains`."""

    contains: tuple[str, ...] = ()
    regex: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()

    def problems(self, text: str | None) -> list[str]:
        said = text or ""
        out = [f"the final answer doesn't mention {c!r}" for c in self.contains if c.casefold() not in said.casefold()]
        out += [f"the final answer doesn't match /{r}/" for r in self.regex if not re.search(r, said)]
        out += [f"the final answer mentions {c!r}" for c in self.not_contains if c.casefold() in said.casefold()]
        return out


@dataclass(frozen=True)
class Expectation:
    calls: tuple[ExpectedCall, ...]  # empty: no tool call is expected
    order: Order = Order.STRICT
    acceptable: frozenset[str] = frozenset()
    final: FinalCheck | None = None
    forbid_extra_args: bool = False


@dataclass(frozen=True)
class Mock:
    """A stubbed answer of one tool: a result (any JSON) or an error, for calls whose arguments
    match `when` (loosely, key by key; empty: every call)."""

    result: Any = None
    error: str | None = None
    when: Mapping[str, Any] = field(default_factory=dict)

    def answers(self, args: Any) -> bool:
        return all(isinstance(args, Mapping) and k in args and loose_equal(args[k], v) for k, v in self.when.items())


DEFAULT_RESULT = {"status": "ok"}  # what a tool without a matching mock answers
DEFAULT_MAX_TURNS = 8


@dataclass(frozen=True)
class Script:
    """A trajectory case's script: what is expected, the stubs, and where the loop stops."""

    expect: Expectation
    mocks: Mapping[str, tuple[Mock, ...]] = field(default_factory=dict)
    max_turns: int = DEFAULT_MAX_TURNS


class Stubs:
    """Answers a conversation's calls from the script's mocks: per tool, the mocks whose `when`
    matches are consumed in order and the last of them repeats; a call no mock matches gets
    DEFAULT_RESULT. One per conversation (it remembers what was consumed)."""

    def __init__(self, mocks: Mapping[str, tuple[Mock, ...]]) -> None:
        self.mocks = mocks
        self.used: dict[str, set[int]] = {}

    def answer(self, tool: str, args: Any) -> Mock:
        candidates = [i for i, m in enumerate(self.mocks.get(tool, ())) if m.answers(args)]
        if not candidates:
            return Mock(result=DEFAULT_RESULT)
        used = self.used.setdefault(tool, set())
        index = next((i for i in candidates if i not in used), candidates[-1])
        used.add(index)
        return self.mocks[tool][index]


@dataclass(frozen=True)
class Call:
    """One recorded call: its arguments as parsed (None when they could not be), what was wrong with
    them against the tool's schema (None when valid), the error a mock answered (None: a result),
    and whether the tool is not on the surface at all (its call was answered with an error by the
    loop, not by a mock: an extra call, not something to recover from)."""

    tool: str
    args: Mapping[str, Any] | None
    schema_problem: str | None = None
    error: str | None = None
    off_surface: bool = False


@dataclass(frozen=True)
class Trajectory:
    calls: tuple[Call, ...]
    final: str | None  # the final text answer; None when the loop ended without one
    hit_max_turns: bool = False
    surfaced: bool | None = None  # a judge's verdict: does the final answer surface the error (no `final`)


@dataclass(frozen=True)
class Scores:
    selection: int | None
    arguments: int | None
    recovery: int | None
    restraint: int
    codes: tuple[str, ...]  # seed 004's failure codes that apply, in taxonomy order
    sequence_ok: bool
    passed: bool
    reasons: tuple[str, ...]


def args_match(expected: ExpectedCall, call: Call) -> bool:
    if expected.args is None:
        return True
    if call.args is None:
        return False
    for key, value in expected.args.items():
        mode = expected.match.get(key, "loose")
        if key not in call.args:
            if mode == "any_of" and None in value:
                continue
            return False
        if not match_value(call.args[key], value, mode):
            return False
    return True


def _matches(expected: ExpectedCall, call: Call, args_measured: bool = True) -> bool:
    if not args_measured:
        return expected.tool == call.tool
    return expected.tool == call.tool and call.schema_problem is None and args_match(expected, call)


def sequence_matches(expect: Expectation, calls: Sequence[Call], args_measured: bool = True) -> bool:
    """Whether the calls satisfy the expected ones under the case's order."""
    if not args_measured:
        expect = replace(expect, calls=tuple(ExpectedCall(e.tool) for e in expect.calls))
    wanted = list(expect.calls)
    made = list(calls)
    if expect.order == Order.ANY_OF:
        return any(_matches(e, c) for e in wanted for c in made)
    if expect.order == Order.STRICT:
        return len(made) == len(wanted) and all(_matches(e, c) for e, c in zip(wanted, made, strict=True))
    if expect.order == Order.IN_ORDER:
        rest = iter(made)
        return all(any(_matches(e, c) for c in rest) for e in wanted)
    # unordered: each expected call matched by a distinct call, and no call left over
    free = list(made)
    for e in wanted:
        hit = next((c for c in free if _matches(e, c)), None)
        if hit is None:
            return False
        free.remove(hit)
    return not free


def score(expect: Expectation, trajectory: Trajectory, args_measured: bool = True) -> Scores:
    """`args_measured` False (a provider that picks tools only): arguments are not scored and
    calls match on the tool alone."""
    calls = trajectory.calls
    codes: set[str] = set()
    reasons: list[str] = []
    ok_calls = [c for c in calls if c.error is None]
    wanted_tools = [e.tool for e in expect.calls]

    # selection
    selection: int | None = None
    if expect.calls:
        firsts = {wanted_tools[0]} if expect.order in (Order.STRICT, Order.IN_ORDER) else set(wanted_tools)
        # in_order allows other calls before the expected ones (restraint counts them)
        judged_first = (
            next((c for c in calls if c.tool in wanted_tools), None) if expect.order == Order.IN_ORDER else None
        )
        first_call = judged_first or (calls[0] if calls else None)
        if first_call is None:
            selection = 0
            codes.add("SEL-MISSED")
            reasons.append(f"no tool called; expected {wanted_tools[0]}")
        elif first_call.tool in firsts:
            selection = 3
        elif first_call.tool in expect.acceptable:
            selection = 2
            codes.add("SEL-SUBOPTIMAL")
            reasons.append(f"called {first_call.tool}, which works, but {wanted_tools[0]} is the better choice")
        else:
            corrected = any(c.tool in wanted_tools for c in calls[calls.index(first_call) + 1 :])
            selection = 1 if corrected else 0
            codes.add("SEL-WRONG")
            reasons.append(
                f"first called {first_call.tool}, expected {' or '.join(sorted(firsts))}"
                + (" (corrected later)" if corrected else "")
            )

    # arguments: the calls to expected tools
    arguments: int | None = None
    to_expected = [(e, c) for e in expect.calls for c in calls if c.tool == e.tool]
    judged = [(e, c) for e, c in to_expected if e.args is not None] if args_measured else []
    if judged:
        if any(c.schema_problem or c.args is None for _, c in judged):
            arguments = 0
            codes.add("ARG-INVALID")
            bad = next(c for _, c in judged if c.schema_problem or c.args is None)
            reasons.append(f"{bad.tool}: {bad.schema_problem or 'arguments could not be parsed'}")
        elif not all(any(args_match(e, c) for c in calls if c.tool == e.tool) for e, _ in judged):
            arguments = 1
            codes.add("ARG-SEMANTIC")
            missed = next(e for e, _ in judged if not any(args_match(e, c) for c in calls if c.tool == e.tool))
            reasons.append(f"{missed.tool}: no call with the expected arguments {dict(missed.args or {})}")
        else:
            unnamed = any(set(c.args or {}) - set(e.args or {}) for e, c in judged if args_match(e, c))
            arguments = 2 if unnamed else 3
            if unnamed and expect.forbid_extra_args:
                arguments = 1
                codes.add("ARG-SEMANTIC")
                reasons.append("arguments the case didn't name (forbid_extra_args)")

    # recovery: only after a mock's error (the loop's own answers to an unknown tool are restraint's)
    recovery: int | None = None
    final_problems = expect.final.problems(trajectory.final) if expect.final else []
    failing = [i for i, c in enumerate(calls) if c.error is not None]
    surfaced = trajectory.surfaced if not expect.final else None
    if failing:
        first = calls[failing[0]]
        after = calls[failing[0] + 1 :]
        recovered = any(c.error is None and not c.off_surface for c in after)  # a retry or another way worked
        tried_other = any((c.tool, _key(c.args)) != (first.tool, _key(first.args)) for c in after)
        silent = bool(final_problems) if expect.final else surfaced is False
        if _repeats_a_failing_call(calls):
            recovery = 0
            codes.add("REC-LOOP")
            reasons.append(f"repeated the failing call {first.tool} more than once")
        elif recovered:
            recovery = 3
        elif silent:
            recovery = 2 if tried_other else 1
            codes.add("REC-SILENT")
            said = final_problems[0] if final_problems else "the judge found the final answer doesn't surface it"
            reasons.append("after the error, " + said)
        elif expect.final or surfaced:
            recovery = 3
        else:
            recovery = 2  # stopped after the error; whether the answer surfaced it is not checked

    # restraint
    extra = _extra_calls(expect, calls)
    if not expect.calls and calls:
        restraint = 0
        codes.add("RES-UNNECESSARY")
        reasons.append(f"called {calls[0].tool}; no tool call was needed")
    elif extra:
        restraint = 1
        codes.add("RES-OVERCALL")
        needed = 1 if expect.order == Order.ANY_OF else len(expect.calls)
        reasons.append(f"{len(extra)} call(s) more than needed ({', '.join(c.tool for c in extra)}; {needed} would do)")
    elif (
        expect.order in (Order.STRICT, Order.IN_ORDER)
        and sorted(c.tool for c in ok_calls) == sorted(wanted_tools)
        and [c.tool for c in ok_calls] != wanted_tools
    ):
        restraint = 2
        reasons.append("the right calls in another order")
    else:
        restraint = 3

    sequence_ok = sequence_matches(expect, calls, args_measured) if expect.calls else not calls
    if expect.calls and not sequence_ok and not reasons:
        reasons.append(
            f"the calls ({', '.join(c.tool for c in calls) or 'none'}) don't match the expected {expect.order}"
        )
    if "REC-SILENT" not in codes:
        reasons += final_problems
    if trajectory.hit_max_turns:
        reasons.append("no final answer within max_turns")
    passed = sequence_ok and not codes and not final_problems and not trajectory.hit_max_turns
    return Scores(
        selection=selection,
        arguments=arguments,
        recovery=recovery,
        restraint=restraint,
        codes=tuple(c for c in FAILURE_CODES if c in codes),
        sequence_ok=sequence_ok,
        passed=passed,
        reasons=tuple(reasons),
    )


def _extra_calls(expect: Expectation, calls: Sequence[Call]) -> list[Call]:
    """The successful calls the expected ones don't account for. Each expected call takes the first
    free call to its tool that succeeded (else one that failed: a retry after an error is not an
    extra); for `any_of_these` one call is all that is needed."""
    taken: set[int] = set()
    wanted = list(expect.calls)
    for e in wanted:
        free = [i for i, c in enumerate(calls) if i not in taken and c.tool == e.tool]
        if free:
            taken.add(next((i for i in free if calls[i].error is None), free[0]))
        if expect.order == Order.ANY_OF and taken:
            break
    if expect.order == Order.ANY_OF and not taken:
        return [c for c in calls if c.error is None or c.off_surface][1:]
    return [c for i, c in enumerate(calls) if i not in taken and (c.error is None or c.off_surface)]


def _key(args: Mapping[str, Any] | None) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _repeats_a_failing_call(calls: Sequence[Call]) -> bool:
    """The same call (tool and arguments) as one that failed, made more than once again."""
    seen: dict[tuple[str, str], int] = {}
    failed: set[tuple[str, str]] = set()
    for c in calls:
        key = (c.tool, _key(c.args))
        if key in failed:
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                return True
        if c.error is not None:
            failed.add(key)
    return False
