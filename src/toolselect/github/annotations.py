"""Workflow annotations at file:line: failing cases at their golden file line, lint findings where
they are. Paths are made relative to the repository, as GitHub wants them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..lint.finding import Finding
from ..report.reading import case_headline, pick_name
from ..report.schema import FindingOut, Report
from .commands import Workflow

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def repo_path(workdir: Path, workspace: Path) -> Callable[[str | None], str | None]:
    """A file named relative to `workdir`, as a path relative to the repository (`workspace`)."""

    def convert(file: str | None) -> str | None:
        if not file:
            return None
        try:
            return (workdir / file).resolve().relative_to(workspace).as_posix()
        except ValueError:
            return None

    return convert


def annotate_cases(
    head: Report, wf: Workflow, where: Callable[[str | None], str | None], *, passed: bool = False
) -> None:
    """One annotation per failing reviewed case, at its golden file line: an `error` when the gate
    failed, a `warning` when it passed (a miss the gate allows is no error). Cases that failed every
    sample first."""
    failing = []
    for case in head.cases:
        outcome, sample = case_headline(case)
        if outcome in ("PASS", "NOT-EVALUATED") or case.status == "needs_review":
            continue
        failing.append((case.passed / case.evaluated if case.evaluated else 0.0, case, outcome, sample))
    for _, case, outcome, sample in sorted(failing, key=lambda f: f[0]):
        rate = f" ({case.passed}/{case.evaluated} samples passed)" if len(case.samples) > 1 else ""
        if case.split == "holdout":
            message = f"a holdout case failed: {outcome}{rate}"
        else:
            why = sample.reasons[0] if sample and sample.reasons else f"picked {pick_name(sample)}"
            message = f"case '{case.name}': {why}{rate}"
        wf.annotate(
            "warning" if passed else "error",
            message,
            file=where(case.source.file),
            line=case.source.line,
            title=f"toolselect {outcome}",
            rank=1,
        )


def annotate_findings(
    findings: Sequence[Finding | FindingOut],
    wf: Workflow,
    where: Callable[[str | None], str | None] = lambda file: file,
    *,
    notes: bool = True,
) -> None:
    """Lint findings at their file and line; `notes`: info findings too (as notices). After the run's
    own annotations and the failing cases (`Workflow.annotations` keeps GitHub's limit)."""
    from ..render.findings import sorted_findings

    shown = [f for f in sorted_findings(findings) if notes or f.severity != "info"]
    for f in shown:
        message = f.message + (f" — fix: {f.fix}" if f.fix else "")
        wf.annotate(
            LEVELS[f.severity], message, file=where(f.file), line=f.line, title=f"toolselect lint {f.code}", rank=2
        )
