"""After a run: one `Outcome` — the head, the base and the diff when there is one, the verdict —
its exit code, and every file it is written to. The CLI and the Action both finish a run here.

- `evaluate` judges a live run of the pipeline (the head, or the head and a base commit);
- `compare_saved` judges two saved reports (`toolselect diff`, the fork-PR poster) under the gate
  the head's run recorded, with the caller's options on top;
- `exit_code`: 3 when the run is no measurement (it stopped, or the provider failed too often),
  else 1 when the verdict failed and the gate is enforced, else 0;
- `write_outputs`: the JSON reports, Markdown, JUnit, the PR comment and the job summary.

The verdict's rule (the head's own gate always counts) is written down in gate.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .diff import Diff, diff_reports
from .errors import EXIT_GATE_FAILED, EXIT_INFRA, EXIT_PASSED, ConfigError
from .gate import Gate, Verdict, decide_verdict, failed_base, run_failure
from .pipeline import Comparison
from .report import Report, write_report
from .stress import StressReport, stress_reasons


@dataclass(frozen=True)
class Outcome:
    head: Report
    base: Report | None
    diff: Diff | None
    verdict: Verdict
    base_label: str | None = None  # what the head was compared with (a git ref, a file); None: head only
    base_note: str | None = None  # why there is no baseline (or that none was asked for)
    notes: tuple[str, ...] = ()  # about the run, said with the verdict (e.g. a fork PR's)
    enforced: bool = True  # False: a failed verdict is said, but the exit code stays 0 (a fork PR)
    stress: StressReport | None = None  # the stress test's curve (a `stress:` section), and the base's
    base_stress: StressReport | None = None

    @property
    def compared(self) -> bool:
        """A comparison was asked for (whether or not a usable baseline came of it)."""
        return self.base_label is not None


def evaluate(
    run: Comparison,
    gate: Gate,
    *,
    base_label: str | None = None,
    base_note: str | None = None,
    notes: tuple[str, ...] = (),
    enforced: bool = True,
) -> Outcome:
    """A live run (`pipeline.run_eval`: the head, or the head and a base commit) judged under `gate`:
    the one place a verdict is given (compare_saved comes here too)."""
    return Outcome(
        head=run.head,
        base=run.base,
        diff=run.diff,
        verdict=decide_verdict(run.head, run.diff, gate),
        base_label=base_label,
        base_note=run.base_note or base_note,
        notes=notes,
        enforced=enforced,
    )


def compare_saved(
    base: Report | None,
    head: Report,
    gate_options: Mapping[str, Any],
    *,
    base_label: str,
    base_note: str | None = None,
    notes: tuple[str, ...] = (),
    enforced: bool = True,
    refuse_incomparable: bool = False,
) -> Outcome:
    """Two saved reports, judged as a live run would be: under the gate the head's run recorded,
    with `gate_options` (flags, inputs; None means "as recorded") on top. A base that is missing,
    whose own run failed, or that measured something else (another model, provider or settings:
    `diff.incomparable`) is no baseline — or, with `refuse_incomparable` (two reports a person
    named), the last is an error."""
    from .diff import incomparable

    gate = head.gate.options().overridden(gate_options)
    if base is not None and (reasons := incomparable(base, head)):
        said = "can't be compared: " + "; ".join(reasons)
        if refuse_incomparable:
            raise ConfigError(f"{base_label} and the head {said}")
        base, base_note = None, f"no baseline: the base report {said}"
    if base is not None and (failed := failed_base(base)):
        base, base_note = None, failed
    diff = diff_reports(base, head, alpha=gate.alpha) if base is not None else None
    return evaluate(
        Comparison(head, base, diff, base_note), gate, base_label=base_label, notes=notes, enforced=enforced
    )


def with_stress(outcome: Outcome, head: StressReport, base: StressReport | None, note: str | None = None) -> Outcome:
    """The outcome with the stress test's curves, and its gate in the verdict: the min_accuracy_at
    and fail_on_cliff_move the head's stress run recorded."""
    reasons = stress_reasons(head, base)
    verdict = outcome.verdict
    joined = Verdict(
        passed=verdict.passed and not reasons,
        reasons=(*verdict.reasons, *reasons),
        notes=(*verdict.notes, *([note] if note else [])),
    )
    return replace(outcome, stress=head, base_stress=base, verdict=joined)


def exit_code(outcome: Outcome) -> int:
    """0 passed, 1 the gate failed (where it is enforced), 3 the run is no measurement."""
    if run_failure(outcome.head):
        return EXIT_INFRA
    if outcome.verdict.passed or not outcome.enforced:
        return EXIT_PASSED
    return EXIT_GATE_FAILED


@dataclass(frozen=True)
class Targets:
    """Where an outcome is written; None: not written."""

    json: Path | None = None  # the head's report; the base's goes beside it (`*.base.json`)
    base_json: Path | None = None  # the base's report somewhere else
    markdown: Path | None = None  # the report; with a comparison, the PR comment as a preview
    junit: Path | None = None
    comment: Path | None = None  # the PR comment as posted (with its hidden marker)
    diff_json: Path | None = None  # the diff alone
    stress_json: Path | None = None  # the stress test's report (the base's beside it: `*.base.json`)
    summary: Path | None = None  # the job summary (appended, cut to GitHub's limit)
    comment_id: str = "default"  # the comment's hidden marker
    run_url: str | None = None  # linked from the comment's footer


@dataclass(frozen=True)
class Written:
    files: tuple[tuple[str, Path], ...]  # (what, where), in the order written
    comment: str  # the PR comment's body, for posting


def write_outputs(outcome: Outcome, targets: Targets) -> Written:
    """Write every file `targets` names; return them and the PR comment's body."""
    from .github.commands import append_summary
    from .render.comment import SUMMARY_CHARS, render_comment
    from .render.junit import render_junit
    from .render.markdown import render_markdown

    files: list[tuple[str, Path]] = []

    def put(what: str, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        files.append((what, path))

    def preview() -> str:  # the comment without its marker, at the job summary's size
        return render_comment(
            outcome, comment_id=None, run_url=targets.run_url, limit=SUMMARY_CHARS, summary_hint=False
        )

    comment = render_comment(outcome, comment_id=targets.comment_id, run_url=targets.run_url)
    if targets.json:
        write_report(outcome.head, targets.json)
        files.append(("JSON report", targets.json))
    base_json = targets.base_json or (targets.json.with_suffix(".base.json") if targets.json else None)
    if outcome.base is not None and base_json:
        write_report(outcome.base, base_json)
        files.append(("the base's JSON report", base_json))
    if targets.markdown:
        if outcome.compared:
            put("PR comment preview", targets.markdown, preview())
        else:
            put("Markdown report", targets.markdown, render_markdown(outcome.head))
    if targets.junit:
        put("JUnit report", targets.junit, render_junit(outcome.head, outcome.verdict))
    if targets.comment:
        put("PR comment", targets.comment, comment)
    if targets.diff_json and outcome.diff is not None:
        put("diff", targets.diff_json, outcome.diff.model_dump_json(indent=2) + "\n")
    if targets.stress_json and outcome.stress is not None:
        put("stress report", targets.stress_json, outcome.stress.model_dump_json(indent=2) + "\n")
        if outcome.base_stress is not None:
            base_stress = targets.stress_json.with_suffix(".base.json")
            put("the base's stress report", base_stress, outcome.base_stress.model_dump_json(indent=2) + "\n")
    if targets.summary and append_summary(targets.summary, preview()):
        files.append(("job summary", targets.summary))
    return Written(tuple(files), comment)
