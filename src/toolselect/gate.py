"""The gate: its options, and the verdict over a head report and, when there is one, its diff. Pure.

The rule, in one place: **the head's own gate always counts** — max_critical first (a destructive
or writing misroute, or a forbidden call: severity.py), min_accuracy, max_error_rate,
max_over_trigger and min_tool_recall, judged on the head report alone — and a comparison with a
base adds max_drop, significance and fail_on_certain_flips. A head that misses min_accuracy fails
even when it did not drop (a live run, `toolselect diff` and the fork poster alike); without a
usable baseline only the head's gate decides. Whether a failed verdict fails the check is the
caller's policy (a fork PR only gets a notice), not the verdict's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model

from .options import BY_KEY, OPTIONS, Option
from .strict import Authored

if TYPE_CHECKING:
    from .diff import Diff
    from .report.schema import DimensionOut, Metric, Report, ToolStats


# the lint findings (lint/client.py) that say a client can't take the surface as it is
CLIENT_LIMITS = ("client-name-too-long", "client-name-invalid", "client-tool-dropped", "client-too-many-tools")


@dataclass(frozen=True)
class Gate:
    """The gate's options (declared in options.py: groups "gate" and "compare")."""

    min_accuracy: float
    max_error_rate: float
    max_over_trigger: float | None
    min_tool_recall: Mapping[str, float]
    min_dimension: Mapping[str, float]
    max_drop: float | None
    significance: float | None
    fail_on_certain_flips: bool
    base_failure: str  # "fail": a base that can't be evaluated fails the run (exit 3); "pass": the head decides
    fail_on_client_limits: bool = True  # a client that can't take the surface fails (evals.clients)
    max_steal_rise: float | None = None  # points: a significant rise of a client's steal rate fails
    max_search_recall_drop: float | None = None  # points: a significant drop of the search's recall fails
    min_clarify: float | None = None  # the clarification rate on cases that expect a question
    max_critical: int = 0  # critical misroutes (severity.py) the head may have
    mode: str = "enforce"  # "warn": a failed verdict is said as "would fail" and exits 0 (outcome.exit_code)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Gate:
        """From option values; a key that is missing or None takes the option's default."""

        picked = {}
        for f in fields(cls):
            value = values.get(f.name)
            picked[f.name] = BY_KEY[f.name].default if value is None else value
        return cls(**picked)

    def values(self) -> dict[str, Any]:
        """The options by name, as a report records them."""
        return {f.name: getattr(self, f.name) for f in fields(self)} | {
            "min_tool_recall": dict(self.min_tool_recall),
            "min_dimension": dict(self.min_dimension),
        }

    def overridden(self, values: Mapping[str, Any]) -> Gate:
        """This gate with the options `values` gives (None: keep this gate's)."""
        return Gate.from_values(self.values() | {k: v for k, v in values.items() if v is not None})

    @property
    def alpha(self) -> float:
        """The level certain flips and "significant" use."""
        return self.significance or 0.05


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())  # said, but not failing (e.g. a drop that is not significant)


def error_rate_exceeded(errors: Metric, max_error_rate: float) -> bool:
    return errors.value is not None and errors.value > max_error_rate + 1e-12


@dataclass(frozen=True)
class BaseFailure:
    """Why a comparison that was asked for did not run: the base could not be evaluated (the ref
    didn't resolve, its setup, server or provider failed). Not "no baseline": an infrastructure
    failure, unless the gate's base_failure is "pass"."""

    reason: str  # one line
    details: str = ""  # what the base's programs said (their output, a traceback): shown folded
    hint: str = ""  # the likely fix

    @classmethod
    def of(cls, message: str, hint: str | None = None) -> BaseFailure:
        """From an error's message: its first line is the reason, the rest its details."""
        first, _, rest = message.strip().partition("\n")
        return cls(first.strip(), rest.strip("\n"), hint or "")

    @property
    def line(self) -> str:
        return f"the comparison was not run: the base could not be evaluated: {self.reason}"


def failed_base(base: Report) -> BaseFailure | None:
    """The failure of a base whose own run failed (it can't judge the head), else None."""
    failure = run_failure(base)
    return BaseFailure(f"the base run failed ({failure})") if failure else None


def run_failure(report: Report) -> str | None:
    """Why a run is no measurement at all (an infrastructure failure, exit 3): it stopped, or more
    samples than max_error_rate failed at the provider."""
    if report.gate.stopped:
        return report.gate.stopped
    errors = report.metrics["error_rate"]
    if error_rate_exceeded(errors, report.gate.max_error_rate):
        return f"{errors.numerator}/{errors.denominator} samples failed at the provider"
    return None


def head_reasons(
    metrics: Mapping[str, Metric],
    per_tool: Mapping[str, ToolStats],
    gate: Gate,
    stopped: str | None = None,
    unevaluated: int = 0,
    dimensions: Mapping[str, DimensionOut] | None = None,
    client_limits: Sequence[str] = (),
    missing: Sequence[str] = (),
    cut_short: int = 0,
    critical: tuple[int, Sequence[str]] = (0, ()),
) -> list[str]:
    """The head's own gate: no more critical misroutes than max_critical (`critical`: each one, said
    as (samples, a line per case); the first reason, whatever else fails), nothing stopped the run,
    errors within max_error_rate, something was evaluated, accuracy ≥ min_accuracy, over-triggering
    within max_over_trigger, each tool's recall at or above its floor, each of seed 004's dimensions
    (trajectory cases) at or above its floor."""
    reasons = []
    count, lines = critical
    if count > gate.max_critical:
        more = f"; and {len(lines) - 1} more case{'s' * (len(lines) > 2)}" if len(lines) > 1 else ""
        reasons.append(
            f"{count} critical misroute{'s' * (count != 1)} (max_critical {gate.max_critical}): {lines[0]}{more}"
        )
    accuracy, errors = metrics["accuracy"], metrics["error_rate"]
    if stopped:
        reasons.append(f"the run stopped: {stopped}")
    if error_rate_exceeded(errors, gate.max_error_rate):
        reasons.append(
            f"{errors.numerator}/{errors.denominator} samples failed at the provider "
            f"({errors.value:.1%} > max_error_rate {gate.max_error_rate:.0%}): an outage is not a result"
        )
    if accuracy.denominator == 0 and unevaluated:
        reasons.append(
            f"nothing was evaluated: {unevaluated} samples of reviewed cases are NOT-EVALUATED (no answer in the cache)"
        )
    if accuracy.value is not None and accuracy.numerator < gate.min_accuracy * accuracy.denominator - 1e-9:
        reasons.append(
            f"accuracy {accuracy.value:.1%} ({accuracy.numerator}/{accuracy.denominator}) "
            f"is below min_accuracy {gate.min_accuracy:.0%}"
        )
    over = metrics["over_trigger_rate"]
    if gate.max_over_trigger is not None and over.value is not None and over.value > gate.max_over_trigger + 1e-12:
        reasons.append(
            f"over-triggering {over.value:.1%} ({over.numerator}/{over.denominator} no-tool samples called a tool) "
            f"is above max_over_trigger {gate.max_over_trigger:.0%}"
        )
    asked = metrics.get("clarify_rate")
    if gate.min_clarify is not None:
        if asked is not None and asked.value is None and asked.denominator:
            reasons.append(
                "min_clarify is set, but the clarification rate is not measured: the provider writes no reply "
                "(run it on a model that writes: anthropic, openai, openai-responses, gemini)"
            )
        elif asked is None or asked.value is None:
            reasons.append("min_clarify is set, but no counted case expects a question (expect_reply: clarify)")
        elif asked.numerator < gate.min_clarify * asked.denominator - 1e-9:
            reasons.append(
                f"clarification rate {asked.value:.1%} ({asked.numerator}/{asked.denominator} samples asked the user) "
                f"is below min_clarify {gate.min_clarify:.0%}"
            )
    for tool, floor in gate.min_tool_recall.items():
        stats = per_tool.get(tool)
        recall = stats.recall if stats else None
        if recall is None or recall.value is None:
            reasons.append(f"min_tool_recall names {tool}, but no counted case expects it")
        elif recall.value < floor - 1e-12:
            reasons.append(
                f"recall of {tool} is {recall.value:.1%} ({recall.numerator}/{recall.denominator}), "
                f"below its floor {floor:.0%}"
            )
    for name, floor in gate.min_dimension.items():
        d = (dimensions or {}).get(name)
        if d is None or d.mean is None:
            reasons.append(f"min_dimension names {name}, but no counted trajectory sample is scored on it")
        elif d.mean < floor - 1e-12:
            reasons.append(f"{name} scores {d.mean:.2f} on average (n = {d.n}), below its floor {floor:g} (0–3)")
    if cut_short:  # --max-fail stopped the asking: a partial run is no pass
        reasons.append(f"--max-fail stopped the run: {cut_short} samples were not asked")
    if missing:  # cases that expect a tool the surface does not have: whatever the rates say, the suite broke
        reasons.append(missing_reason(missing))
    if gate.fail_on_client_limits and client_limits:
        more = f" (and {len(client_limits) - 1} more client limits)" if len(client_limits) > 1 else ""
        reasons.append(f"{client_limits[0]}{more}: fail-on-client-limits")
    return reasons


def significance_text(diff: Diff) -> str:
    p = diff.paired
    word = "significant" if p.p_value < p.alpha else "not significant"
    return f"{word} (p = {p.p_value:.2g})"


def drop_fails(delta_pt: float | None, p_value: float, max_drop: float | None, significance: float | None) -> bool:
    """The drop rule, on its own: a drop beyond `max_drop` points fails — and, with `significance`,
    only when the paired test also finds it (p < α). `significance` alone means `max_drop` 0."""
    limit = max_drop if max_drop is not None else (0.0 if significance is not None else None)
    if limit is None or delta_pt is None or delta_pt >= -limit - 1e-9:
        return False
    return significance is None or p_value < significance


def comparison_reasons(diff: Diff | None, gate: Gate) -> tuple[list[str], list[str]]:
    """(reasons the comparison fails, notes): `max_drop` 0 fires on any drop; with
    `significance`, a drop fails only when it exceeds `max_drop` and p < α."""
    reasons: list[str] = []
    notes: list[str] = []
    if diff is None:
        return reasons, notes
    delta, p = diff.metrics["accuracy"].delta_pt, diff.paired.p_value
    dropped = f"accuracy dropped {-(delta or 0):.1f} pt vs the base"
    bound = f", more than max-drop {gate.max_drop:g} pt" if gate.max_drop is not None else ""
    if drop_fails(delta, p, gate.max_drop, gate.significance):
        significant = (
            f", and the drop is significant (p = {p:.2g} < {gate.significance:g})" if gate.significance else ""
        )
        reasons.append(dropped + bound + significant)
    elif gate.significance is not None and drop_fails(delta, p, gate.max_drop, None):
        notes.append(f"{dropped}{bound}, but it is not significant (p = {p:.2g} ≥ {gate.significance:g}): not failing")
    steal = diff.steal
    if gate.max_steal_rise is not None and steal is not None and steal.delta_pt is not None:
        rose = f"the steal rate rose {steal.delta_pt:.1f} pt vs the base ({steal.base:.0%} → {steal.head:.0%})"
        if steal.delta_pt > gate.max_steal_rise and steal.p_value < gate.alpha:
            reasons.append(f"{rose}, more than max-steal-rise {gate.max_steal_rise:g} pt (p = {steal.p_value:.2g})")
        elif steal.delta_pt > gate.max_steal_rise:
            notes.append(f"{rose}, but it is not significant (p = {steal.p_value:.2g}): not failing")
    found = diff.search
    if gate.max_search_recall_drop is not None and found is not None and found.delta_pt is not None:
        fell = f"search recall dropped {-found.delta_pt:.1f} pt vs the base ({found.base:.0%} → {found.head:.0%})"
        lost = f"; found → never found: {', '.join(found.lost[:5])}" if found.lost else ""
        if -found.delta_pt > gate.max_search_recall_drop and found.p_value < gate.alpha:
            reasons.append(
                f"{fell}, more than max-search-recall-drop {gate.max_search_recall_drop:g} pt "
                f"(p = {found.p_value:.2g}){lost}"
            )
        elif -found.delta_pt > gate.max_search_recall_drop:
            notes.append(f"{fell}, but it is not significant (p = {found.p_value:.2g}): not failing{lost}")
    if gate.fail_on_certain_flips:
        certain = [c.name if not c.holdout else "a holdout case" for c in diff.to_failing if c.certain]
        if certain:
            shown = ", ".join(certain[:5]) + (f" and {len(certain) - 5} more" if len(certain) > 5 else "")
            reasons.append(f"{len(certain)} case(s) certainly flipped to failing (Fisher's exact test): {shown}")
    return reasons, notes


def missing_reason(missing: Sequence[str]) -> str:
    """'2 cases expect get_forecast, which the tool surface does not have (removed or renamed?): a, b'."""
    by_tool: dict[str, list[str]] = {}
    for line in missing:
        tool, _, case = line.partition("\t")
        by_tool.setdefault(tool, []).append(case)
    parts = []
    for tool, cases in by_tool.items():
        shown = ", ".join(cases[:5]) + (f" and {len(cases) - 5} more" if len(cases) > 5 else "")
        parts.append(f"{len(cases)} case{'s' * (len(cases) != 1)} expect{'s' * (len(cases) == 1)} {tool} ({shown})")
    return "; ".join(parts) + ", which the tool surface does not have (removed or renamed?): TOOL-MISSING"


def tools_missing(report: Report) -> list[str]:
    """'tool<TAB>case' for each reviewed case scored TOOL-MISSING (the tools from its reason)."""
    out = []
    for c in report.cases:
        sample = next((s for s in c.samples if s.outcome == "TOOL-MISSING"), None)
        if sample is None or c.status == "needs_review":
            continue
        said = sample.reasons[0] if sample.reasons else ""
        tools = said.removeprefix("expects ").split(", which")[0] or "?"
        out.append(f"{tools}\t{c.name if c.split != 'holdout' else 'a holdout case'}")
    return out


def critical_samples(report: Report) -> tuple[int, list[str]]:
    """The critical samples of reviewed cases (the number the gate counts), and a line for each case
    and call: 'cal-read: called delete_all (…) (CRIT-DESTRUCTIVE), 3 of 3 samples'."""
    total, lines = 0, []
    for c in report.cases:
        if c.status == "needs_review":
            continue
        name = c.name if c.split != "holdout" else "a holdout case"
        found: Counter[str] = Counter()
        for s in c.samples:
            if s.critical is not None:
                found[f"{s.reasons[0] if s.reasons else f'called {s.critical.tool}'} ({s.critical.code})"] += 1
        for said, n in found.items():
            total += n
            lines.append(f"{name}: {said}" + (f", {n} of {len(c.samples)} samples" if len(c.samples) > 1 else ""))
    return total, lines


def cut_short(report: Report) -> int:
    """Samples --max-fail kept from being asked (NOT-EVALUATED, their reason says so)."""
    return sum(
        s.outcome == "NOT-EVALUATED" and bool(s.reasons) and s.reasons[0].startswith("--max-fail ")
        for c in report.cases
        for s in c.samples
    )


def unevaluated(report: Report) -> int:
    """Samples of reviewed cases that were never asked (NOT-EVALUATED)."""
    return sum(s.outcome == "NOT-EVALUATED" for c in report.cases if c.status != "needs_review" for s in c.samples)


def gate_of(report: Report) -> Gate:
    """The gate a report was judged under: the options its `gate` record holds."""
    return Gate.from_values(report.gate.model_dump())


def judged(report: Report, gate: Gate) -> Report:
    """The report with the head's own gate applied — the one place it is: `passed`, and its `gate`
    record (every option in force, the reasons). A report just built comes here once (pipeline/execute.py);
    a saved report comes here again under the gate it is compared with (it is untrusted, and flags
    or inputs may change the options). Every verdict and every view reads this record."""
    limits = [f.message for f in report.lint if f.code in CLIENT_LIMITS and f.severity == "error"]
    reasons = head_reasons(
        report.metrics,
        report.per_tool,
        gate,
        report.gate.stopped,
        unevaluated(report),
        report.dimensions,
        limits,
        tools_missing(report),
        cut_short(report),
        critical_samples(report),
    )
    record = report.gate.model_copy(update={**gate.values(), "passed": not reasons, "reasons": reasons})
    return report.model_copy(update={"passed": not reasons, "gate": record})


def decide_verdict(
    head: Report,
    diff: Diff | None,
    notes: tuple[str, ...] = (),
    base_failure: BaseFailure | None = None,
) -> Verdict:
    """The verdict: the head's own gate as its report records it (`judged`), plus the comparison
    under the same gate when there is a diff — or, when the comparison could not run, that (a
    failure unless the gate's base_failure is "pass")."""
    gate = gate_of(head)
    compared, said = comparison_reasons(diff, gate)
    first = []  # the comparison that did not run, or told nothing, is said first: the verdict means little
    if base_failure is not None and comparison_failed(base_failure, gate):
        first.append(base_failure.line)
    elif base_failure is not None:
        said.append(f"{base_failure.line} (base-failure: pass: the head's own gate decides)")
    if (told := inconclusive_line(diff)) and gate.base_failure != "pass":
        first.append(told)
    elif told:
        said.append(f"{told} (base-failure: pass: the head's own gate decides)")
    reasons = (*first, *head.gate.reasons, *compared)
    return Verdict(passed=not reasons, reasons=reasons, notes=(*notes, *said))


def inconclusive_line(diff: Diff | None) -> str | None:
    """The comparison ran but can tell nothing (diff.suite_inconclusive): never a silent "no change";
    like a base that could not be evaluated, no measurement (exit 3) unless base_failure is "pass"."""
    return f"the comparison is inconclusive: {diff.inconclusive}" if diff is not None and diff.inconclusive else None


def comparison_failed(base_failure: BaseFailure | None, gate: Gate) -> bool:
    """The run is no measurement (exit 3): a comparison was asked for and could not run."""
    return base_failure is not None and gate.base_failure != "pass"


# --------------------------------------------------------------------------- the gate in a config


def _bounds(option: Option) -> dict[str, Any]:
    if option.kind == "floors":
        return {}
    return {
        k: v for k, v in (("ge", option.ge), ("gt", option.gt), ("le", option.le), ("lt", option.lt)) if v is not None
    }


GATE_KEYS = tuple(o.key for o in OPTIONS if o.group in ("gate", "compare") and o.config == "evals")

# One model's own gate (evals.models[].gate): any gate option, the rest from evals:.
GateEntry = create_model(  # type: ignore[call-overload]
    "GateEntry",
    __base__=Authored,
    **{key: (BY_KEY[key].field()[0] | None, Field(None, **_bounds(BY_KEY[key]))) for key in GATE_KEYS},
)
