"""Every file an outcome is written to: the JSON reports, Markdown, JUnit, the PR comment, the
job summary, the HTML report and the stress report (`Targets` names them, `write_outputs` writes
them); the Action's step outputs and its meta.json. The writers of the flow's top: outcome.py
judges, the renderers draw, this writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from .outcome import ModelOutcome, Outcome
from .report.files import write_reports
from .strict import Record

REPORT_DIR = "toolselect-report"  # the Action's: in the workspace, uploaded as the report artifact


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
    html: Path | None = None  # the self-contained HTML report
    comment_id: str = "default"  # the comment's hidden marker
    run_url: str | None = None  # linked from the comment's footer
    report_artifact: str | None = None  # the artifact the workflow uploads the report folder as: linked too


@dataclass(frozen=True)
class Written:
    files: tuple[tuple[str, Path], ...]  # (what, where), in the order written
    comment: str  # the PR comment's body, for posting


def write_outputs(outcome: Outcome, targets: Targets) -> Written:
    """Write every file `targets` names; return them and the PR comment's body."""
    from .github.commands import append_summary
    from .nofollow import write_text
    from .render.comment import SUMMARY_CHARS, render_comment
    from .render.junit import render_junit
    from .render.markdown import render_markdown

    files: list[tuple[str, Path]] = []

    def put(what: str, path: Path, text: str) -> None:
        write_text(path, text)  # in the Action's workspace, never through a link
        files.append((what, path))

    def preview() -> str:  # the comment without its marker, at the job summary's size
        return render_comment(
            outcome,
            comment_id=None,
            run_url=targets.run_url,
            limit=SUMMARY_CHARS,
            summary_hint=False,
            artifact=artifact,
        )

    artifact = targets.report_artifact if targets.run_url else None
    comment = render_comment(outcome, comment_id=targets.comment_id, run_url=targets.run_url, artifact=artifact)
    if targets.json:
        write_reports([m.head for m in outcome.models], targets.json)
        files.append(("JSON report", targets.json))
    base_json = targets.base_json or (targets.json.with_suffix(".base.json") if targets.json else None)
    bases = [m.base for m in outcome.models if m.base is not None]
    if bases and base_json:
        write_reports(bases, base_json)
        files.append(("the base's JSON report", base_json))
    if targets.markdown:
        if outcome.compared:
            put("PR comment preview", targets.markdown, preview())
        else:
            put("Markdown report", targets.markdown, render_markdown(outcome))
    if targets.junit:
        put("JUnit report", targets.junit, render_junit(outcome))
    if targets.comment:
        put("PR comment", targets.comment, comment)
    if targets.diff_json and outcome.diff is not None:
        diffs = [m.diff for m in outcome.models if m.diff is not None]
        if outcome.several:  # {label: diff}
            text = (
                "{\n"
                + ",\n".join(
                    f"  {json.dumps(m.label)}: {m.diff.model_dump_json()}" for m in outcome.models if m.diff is not None
                )
                + "\n}"
            )
        else:
            text = diffs[0].model_dump_json(indent=2)
        put("diff", targets.diff_json, text + "\n")
    if targets.html:
        from .render.html import render_html

        put("HTML report", targets.html, render_html(outcome, run_url=targets.run_url))
    if targets.stress_json and outcome.stress is not None:
        put("stress report", targets.stress_json, outcome.stress.model_dump_json(indent=2) + "\n")
        if outcome.base_stress is not None:
            base_stress = targets.stress_json.with_suffix(".base.json")
            put("the base's stress report", base_stress, outcome.base_stress.model_dump_json(indent=2) + "\n")
    if targets.summary and append_summary(targets.summary, preview()):
        files.append(("job summary", targets.summary))
    return Written(tuple(files), comment)


def step_outputs(outcome: Outcome, comment_url: str, *, dirty: bool) -> dict[str, str]:
    """The step's outputs (action.yml declares each one)."""
    head, base, diff = outcome.head, outcome.base, outcome.diff
    delta = diff.metrics["accuracy"].delta_pt if diff else None
    return {
        "accuracy": _share(head.metrics["accuracy"].value),
        "tool-accuracy": _share(head.metrics["tool_accuracy"].value),
        "arg-accuracy": _share(head.metrics["arg_accuracy"].value),
        "base-accuracy": _share(base.metrics["accuracy"].value) if base else "",
        "accuracy-delta": f"{delta:.2f}" if delta is not None else "",
        "passed": "true" if outcome.verdict.passed else "false",
        "report": f"{REPORT_DIR}/report.json",
        "html": f"{REPORT_DIR}/report.html",
        "models": json.dumps([model_output(m) for m in outcome.models], separators=(",", ":")),
        "comment-url": comment_url,
        "cache-dirty": "true" if dirty else "false",
    }


def model_output(m: ModelOutcome) -> dict[str, Any]:
    """One model in the `models` output (JSON): `fromJSON(steps.x.outputs.models)` in a workflow."""
    head = m.head
    delta = m.diff.metrics["accuracy"].delta_pt if m.diff else None
    return {
        "label": m.label,
        "provider": head.run.provider,
        "model": head.run.model,
        "accuracy": head.metrics["accuracy"].value,
        "tool_accuracy": head.metrics["tool_accuracy"].value,
        "base_accuracy": m.base.metrics["accuracy"].value if m.base else None,
        "accuracy_delta": None if delta is None else round(delta, 2),
        "p_value": m.diff.paired.p_value if m.diff else None,
        "passed": m.verdict.passed,
        "reasons": list(m.verdict.reasons),
    }


def _share(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


class MetaFailure(Record):
    """Why the PR's run could not evaluate its base (gate.BaseFailure), as the poster reads it back."""

    reason: str = Field(max_length=4000)
    details: str = Field("", max_length=20_000)
    hint: str = Field("", max_length=4000)


class Meta(Record):
    """`toolselect-report/meta.json`: what a fork PR's run hands to the workflow_run poster."""

    schema_version: Literal[1] = 1
    event: str
    pr: int | None = None
    head_sha: str | None = None
    base_sha: str | None = None
    fork: bool = False
    base_note: str | None = None
    base_failure: MetaFailure | None = None
    run_url: str | None = None
