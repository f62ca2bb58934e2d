"""After a run: one `Outcome` — the head, the base and the diff when there is one, the verdict —
its exit code, and every file it is written to. The CLI and the Action both finish a run here.

- `evaluate` judges a live run of the pipeline (the head, or the head and a base commit);
- `compare_saved` judges two saved reports (`toolselect diff`, the fork-PR poster) under the gate
  the head's run recorded, with the caller's options on top;
- `exit_code`: 3 when the run is no measurement (it stopped, the provider failed too often, or
  the comparison asked for could not run), else 1 when the verdict failed and the gate is enforced, else 0;

The verdict's rule (the head's own gate always counts) is written down in gate.py; the files an
outcome is written to are outputs.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .errors import EXIT_GATE_FAILED, EXIT_INFRA, EXIT_PASSED, ConfigError
from .gate import (
    BaseFailure,
    Gate,
    Verdict,
    comparison_failed,
    comparison_reasons,
    decide_verdict,
    failed_base,
    gate_of,
    inconclusive_line,
    judged,
    run_failure,
)
from .report.schema import Report

BASE_REFUSED = "base refused"  # a base another model, provider, client or tool-search mode answered: not diffed

if TYPE_CHECKING:  # imported where used: a run without a base, a stress test or rewrites loads none of them
    from .diff import Diff
    from .portability import Portability
    from .stress import StressReport
    from .suggestions import Suggestion


@dataclass(frozen=True)
class Comparison:
    """What a run measured of one model: the head, and the base with the diff when there is a usable
    baseline."""

    head: Report
    base: Report | None = None
    diff: Diff | None = None
    base_note: str | None = None  # why there is no baseline (the base has no config)
    label: str = ""  # the model's label (evals.models); "" for a one-model run: the model's name
    base_failure: BaseFailure | None = None  # why the comparison asked for did not run


@dataclass(frozen=True)
class ModelOutcome:
    """One model's part of a run: its head report, its base report and diff when there is a usable
    baseline, and its own verdict (under its own gate)."""

    label: str  # how the model is named in every view, e.g. "claude-haiku-4-5" (unique in a run)
    head: Report
    base: Report | None
    diff: Diff | None
    verdict: Verdict
    base_note: str | None = None  # why this model has no baseline (the base has no config)
    base_failure: BaseFailure | None = None  # why the comparison asked for could not run
    no_measurement: bool = False  # the comparison could not run and the gate's base_failure is "fail"
    base_fails_too: bool = False  # failed on the head's own gate alone, and the base fails it as well
    inconclusive: str | None = None  # the comparison ran and can tell nothing (it fails as no measurement)

    @property
    def warned(self) -> bool:
        """Its verdict failed in mode: warn: said as "would fail"."""
        return not self.verdict.passed and self.head.gate.mode == "warn"

    @property
    def word(self) -> str:
        """Its verdict as the views say it: passed; inconclusive (failed only because its comparison
        could tell nothing); would fail (mode: warn); failed."""
        if self.verdict.passed:
            return "passed"
        if self.inconclusive is not None and self.verdict.reasons == (self.inconclusive,):
            return "inconclusive"
        return "would fail" if self.warned else "failed"


@dataclass(frozen=True)
class Outcome:
    """What a run measured and its verdict: one `ModelOutcome` per model (one for a one-model run),
    and the verdict over all of them (each model's reasons named by its label when there are several).
    `head`, `base`, `diff` and `base_note` are the first model's: a one-model run's."""

    models: tuple[ModelOutcome, ...]
    verdict: Verdict
    base_label: str | None = None  # what the head was compared with (a git ref, a file); None: head only
    notes: tuple[str, ...] = ()  # about the run, said with the verdict (e.g. a fork PR's)
    enforced: bool = True  # False: a failed verdict is said, but the exit code stays 0 (a fork PR)
    stress: StressReport | None = None  # the stress test's curve (a `stress:` section), and the base's
    base_stress: StressReport | None = None
    suggestions: tuple[Suggestion, ...] = ()  # the Action's `suggest`: rewrites tried, the accepted placed

    @property
    def head(self) -> Report:
        return self.models[0].head

    @property
    def word(self) -> str:
        """The verdict as every view says it: passed; inconclusive (it failed only because a comparison
        could tell nothing); would fail (mode: warn); failed."""
        if self.verdict.passed:
            return "passed"
        failing = [m for m in self.models if not m.verdict.passed]
        told = failing and all(m.word == "inconclusive" for m in failing)
        if told and len(self.verdict.reasons) == len(failing):  # (no stress test's reason besides)
            return "inconclusive"
        return "would fail" if self.warned else "failed"

    @property
    def warned(self) -> bool:
        """The verdict failed, and every model that failed it is in mode: warn (its gate record says
        so): the views say "would fail", and the check passes."""
        failing = [m for m in self.models if not m.verdict.passed] or self.models[:1]  # (or the stress test's)
        return not self.verdict.passed and all(m.head.gate.mode == "warn" for m in failing)

    @property
    def base(self) -> Report | None:
        return self.models[0].base

    @property
    def diff(self) -> Diff | None:
        return self.models[0].diff

    @property
    def base_note(self) -> str | None:
        return self.models[0].base_note

    @property
    def base_failure(self) -> BaseFailure | None:
        return next((m.base_failure for m in self.models if m.base_failure is not None), None)

    @property
    def several(self) -> bool:
        """More than one model: the views lead with a model × metric table and a portability section."""
        return len(self.models) > 1

    @property
    def compared(self) -> bool:
        """A comparison was asked for (whether or not a usable baseline came of it)."""
        return self.base_label is not None

    @property
    def portability(self) -> Portability:
        """Cases and confusion cells the change moved in opposite directions for two models."""
        from .portability import portability

        return portability([(m.label, m.diff) for m in self.models if m.diff is not None])


def evaluate(
    runs: Comparison | Sequence[Comparison],
    gate: Gate | None = None,
    *,
    base_label: str | None = None,
    base_note: str | None = None,
    notes: tuple[str, ...] = (),
    enforced: bool = True,
) -> Outcome:
    """A live run (`pipeline.eval.run_eval`: each model's head, or head and base commit) judged: each
    model under the gate its head report recorded — its own, per model — or, when `gate` is given,
    its head judged again under that one."""
    runs = (runs,) if isinstance(runs, Comparison) else tuple(runs)
    if gate is not None:
        runs = tuple(replace(run, head=judged(run.head, gate)) for run in runs)
    models = tuple(_judged(run, base_note) for run in runs)
    return Outcome(
        models=models,
        verdict=joint_verdict(models),
        base_label=base_label,
        notes=notes,
        enforced=enforced,
    )


def joint_verdict(models: Sequence[ModelOutcome]) -> Verdict:
    """Every model's verdict in one: passed when each passed; with several models each reason and
    note says which model it is about."""
    if len(models) == 1:
        return models[0].verdict
    return Verdict(
        passed=all(m.verdict.passed for m in models),
        reasons=tuple(f"{m.label}: {r}" for m in models for r in m.verdict.reasons),
        notes=tuple(f"{m.label}: {n}" for m in models for n in m.verdict.notes),
    )


def compare_saved(
    base: Report | Sequence[Report] | None,
    head: Report | Sequence[Report],
    gate_options: Mapping[str, Any],
    *,
    base_label: str,
    base_note: str | None = None,
    base_failure: BaseFailure | None = None,
    notes: tuple[str, ...] = (),
    enforced: bool = True,
    refuse_incomparable: bool = False,
) -> Outcome:
    """Saved reports, judged as a live run would be: each model under the gate its head run recorded,
    with `gate_options` (flags, inputs; None means "as recorded") on top. Several models are paired
    by label. A base that is missing or measured something else (another model, provider or
    settings: `diff.incomparable`) is no baseline for that model — or, with `refuse_incomparable`
    (two reports a person named), the last is an error; a base whose own run failed, or
    `base_failure` (the PR's run could not evaluate its base), is the comparison's failure."""
    from .diff import incomparable

    heads = (head,) if isinstance(head, Report) else tuple(head)
    bases = (base,) if isinstance(base, Report) else tuple(base or ())
    by_label = {b.run.label: b for b in bases}
    runs = []
    for h in heads:
        gate = gate_of(h).overridden(gate_options)
        h = judged(h, gate)  # read back, so untrusted: judged again, under the options given
        b = by_label.get(h.run.label) if len(heads) > 1 or len(bases) > 1 else (bases[0] if bases else None)
        note, failure = base_note, base_failure
        if b is None and bases:
            note = f"no baseline: the base report has no model labelled {h.run.label!r}"
            if refuse_incomparable:
                raise ConfigError(f"{base_label} has no model labelled {h.run.label!r}")
        if b is not None and (reasons := incomparable(b, h)):
            said = "can't be compared: " + "; ".join(reasons)
            if refuse_incomparable:
                raise ConfigError(f"{base_label} and the head {said}")
            b, note = None, f"{BASE_REFUSED}: the base report {said}"
        if b is not None and (failed := failed_base(b)):
            b, failure = None, failed
        from .diff import diff_reports

        diff = diff_reports(b, h, alpha=gate.alpha) if b is not None else None
        runs.append(Comparison(h, b, diff, note, label=h.run.label or "", base_failure=failure))
    models = tuple(_judged(run) for run in runs)
    return Outcome(models, joint_verdict(models), base_label=base_label, notes=notes, enforced=enforced)


def _judged(run: Comparison, base_note: str | None = None) -> ModelOutcome:
    gate = gate_of(run.head)
    failure = run.base_failure if run.diff is None else None
    verdict = decide_verdict(run.head, run.diff, base_failure=failure)
    told = inconclusive_line(run.diff)
    moved = run.diff.metrics["accuracy"].delta_pt if run.diff is not None else None
    base_too = (  # it isn't this PR: nothing dropped, and the base fails the same gate
        not verdict.passed
        and run.base is not None
        and moved is not None
        and moved > -0.05
        and not comparison_reasons(run.diff, gate)[0]
        and not judged(run.base, gate).passed
    )
    return ModelOutcome(
        label=run.label or run.head.run.model or run.head.run.provider,
        head=run.head,
        base=run.base,
        diff=run.diff,
        verdict=verdict,
        base_note=None if failure else run.base_note or base_note,
        base_failure=failure,
        no_measurement=comparison_failed(failure, gate) or bool(told and gate.base_failure != "pass"),
        inconclusive=told if gate.base_failure != "pass" else None,
        base_fails_too=base_too,
    )


def with_stress(outcome: Outcome, head: StressReport, base: StressReport | None, note: str | None = None) -> Outcome:
    """The outcome with the stress test's curves, and its gate in the verdict: the min_accuracy_at
    and fail_on_cliff_move the head's stress run recorded."""
    from .stress import stress_reasons

    reasons = stress_reasons(head, base)
    verdict = outcome.verdict
    joined = Verdict(
        passed=verdict.passed and not reasons,
        reasons=(*verdict.reasons, *reasons),
        notes=(*verdict.notes, *([note] if note else [])),
    )
    return replace(outcome, stress=head, base_stress=base, verdict=joined)


def exit_code(outcome: Outcome) -> int:
    """0 passed, 1 the gate failed (where it is enforced, and not in mode: warn), 3 the run is no
    measurement: a model's run failed, or a comparison asked for could not run (unless base_failure is
    "pass") — warn mode or not: what was not measured is no pass."""
    if any(run_failure(m.head) or m.no_measurement for m in outcome.models):  # in whatever order
        return EXIT_INFRA
    if outcome.verdict.passed or not outcome.enforced or outcome.warned:
        return EXIT_PASSED
    return EXIT_GATE_FAILED
