"""Every file an outcome is written to: the JSON reports, Markdown, JUnit, the PR comment, the
job summary, the HTML report and the stress report (`Targets` names them, `write_outputs` writes
them). The writers of the flow's top: outcome.py judges, the renderers draw, this writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .outcome import Outcome
from .report.files import write_reports


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
