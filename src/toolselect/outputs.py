"""Every file an outcome is written to: the JSON reports, Markdown, JUnit, the PR comment, the
job summary, the HTML report and the stress report (`Targets` names them; `WRITERS`, the table of
formats, says how each is written, one row each; `write_outputs` writes them); the Action's step
outputs (meta.json's shape is meta.py's). The writers of the flow's top: outcome.py judges, the renderers draw,
this writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .outcome import ModelOutcome, Outcome
from .report.files import write_reports

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
    drawing: Drawing

    @property
    def comment(self) -> str:
        """The PR comment's body, for posting: drawn when asked for (a local run never needs it)."""
        return self.drawing.comment


class Drawing:
    """An outcome on its way to its files, with the PR comment and its preview each drawn once for
    every writer that shows them."""

    def __init__(self, outcome: Outcome, targets: Targets) -> None:
        self.outcome, self.targets = outcome, targets
        self.artifact = targets.report_artifact if targets.run_url else None

    @cached_property
    def comment(self) -> str:
        from .render.comment import render_comment

        t = self.targets
        return render_comment(self.outcome, comment_id=t.comment_id, run_url=t.run_url, artifact=self.artifact)

    @cached_property
    def preview(self) -> str:
        """The comment without its marker, at the job summary's size."""
        from .render.comment import SUMMARY_CHARS, render_comment

        return render_comment(
            self.outcome,
            comment_id=None,
            run_url=self.targets.run_url,
            limit=SUMMARY_CHARS,
            summary_hint=False,
            artifact=self.artifact,
        )


Files = list[tuple[str, Path]]  # what was written, and where


@dataclass(frozen=True)
class Writer:
    """One row of the table of formats: the `Targets` field that names its file, and how it is
    written there (returning what it wrote: a row may write nothing, or a second file beside)."""

    target: str
    write: Callable[[Drawing, Path], Files]
    where: Callable[[Targets], Path | None] | None = None  # where when the field is empty (the base's JSON)


def text_file(what: Callable[[Drawing], tuple[str, str] | None]) -> Callable[[Drawing, Path], Files]:
    """A writer of one text file: `what` gives (what it is, its text), or None for nothing to write."""

    def write(d: Drawing, path: Path) -> Files:
        from .nofollow import write_text

        drawn = what(d)
        if drawn is None:
            return []
        write_text(path, drawn[1])  # in the Action's workspace, never through a link
        return [(drawn[0], path)]

    return write


def _json(d: Drawing, path: Path) -> Files:
    write_reports([m.head for m in d.outcome.models], path)
    return [("JSON report", path)]


def _base_json(d: Drawing, path: Path) -> Files:
    bases = [m.base for m in d.outcome.models if m.base is not None]
    if not bases:
        return []
    write_reports(bases, path)
    return [("the base's JSON report", path)]


def _markdown(d: Drawing) -> tuple[str, str]:
    from .render.markdown import render_markdown

    return ("PR comment preview", d.preview) if d.outcome.compared else ("Markdown report", render_markdown(d.outcome))


def _junit(d: Drawing) -> tuple[str, str]:
    from .render.junit import render_junit

    return "JUnit report", render_junit(d.outcome)


def _diff(d: Drawing) -> tuple[str, str] | None:
    if d.outcome.diff is None:
        return None
    diffs = [(m.label, m.diff) for m in d.outcome.models if m.diff is not None]
    if d.outcome.several:  # {label: diff}
        text = "{\n" + ",\n".join(f"  {json.dumps(label)}: {diff.model_dump_json()}" for label, diff in diffs) + "\n}"
    else:
        text = diffs[0][1].model_dump_json(indent=2)
    return "diff", text + "\n"


def _html(d: Drawing) -> tuple[str, str]:
    from .render.html import render_html

    return "HTML report", render_html(d.outcome, run_url=d.targets.run_url)


def _stress(d: Drawing, path: Path) -> Files:
    from .nofollow import write_text

    o = d.outcome
    if o.stress is None:
        return []
    sides = [("stress report", o.stress, path)]
    if o.base_stress is not None:
        sides.append(("the base's stress report", o.base_stress, path.with_suffix(".base.json")))
    for _, report, where in sides:
        write_text(where, report.model_dump_json(indent=2) + "\n")
    return [(what, where) for what, _, where in sides]


def _summary(d: Drawing, path: Path) -> Files:
    from .github.commands import append_summary

    return [("job summary", path)] if append_summary(path, d.preview) else []


# The formats, in the order they are written. A new one: its renderer (render/), a `Targets` field,
# and a row here (CONTRIBUTING.md: "Add a renderer").
WRITERS: tuple[Writer, ...] = (
    Writer("json", _json),
    Writer("base_json", _base_json, where=lambda t: t.json.with_suffix(".base.json") if t.json else None),
    Writer("markdown", text_file(_markdown)),
    Writer("junit", text_file(_junit)),
    Writer("comment", text_file(lambda d: ("PR comment", d.comment))),
    Writer("diff_json", text_file(_diff)),
    Writer("html", text_file(_html)),
    Writer("stress_json", _stress),
    Writer("summary", _summary),
)


def write_outputs(outcome: Outcome, targets: Targets) -> Written:
    """Write every file `targets` names; return them and the PR comment's body."""
    drawing = Drawing(outcome, targets)
    files: Files = []
    for row in WRITERS:
        path = getattr(targets, row.target) or (row.where(targets) if row.where else None)
        if path is not None:
            files += row.write(drawing, path)
    return Written(tuple(files), drawing)


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
        "verdict": outcome.word,
        "critical": str(sum(sum((m.head.counts.critical or {}).values()) for m in outcome.models)),
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
