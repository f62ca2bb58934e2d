"""JUnit XML: one testcase per case — a missed case is a failing testcase (toolproof's never fail;
a critical misroute's type is its code, e.g. CRIT-DESTRUCTIVE), an ERROR is an error, a
NOT-EVALUATED or pending case is skipped — plus one testcase for the gate: a failure (its message
begins "would fail (mode: warn)" in warn mode), or an error when the comparison was inconclusive."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ..gate import Verdict
from ..report.schema import Report
from .common import case_row, codes_text, dimension_rows, picked_label, scores_text, trace_lines

if TYPE_CHECKING:
    from ..outcome import Outcome


def render_junit(outcome: Outcome) -> str:
    """The cases, and a `gate` testcase that fails with the verdict's reasons. An outcome of several
    models: a testsuite per model, named `toolselect[label]`, each with its own verdict."""
    if not outcome.several:
        suites = [_suite(outcome.head, outcome.verdict, "toolselect", "toolselect", outcome.word)]
    else:
        suites = [
            _suite(m.head, m.verdict, f"toolselect[{m.label}]", f"toolselect.{m.label.replace('.', '_')}", m.word)
            for m in outcome.models
        ]
    total = {key: sum(int(s.get(key, "0")) for s in suites) for key in ("tests", "failures", "errors")}
    root = ET.Element("testsuites", {"name": "toolselect", **{k: str(v) for k, v in total.items()}})
    root.extend(suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(report: Report, verdict: Verdict, name: str, prefix: str, word: str) -> ET.Element:
    rows = [case_row(c) for c in report.cases]
    suite = ET.Element("testsuite", name=name, timestamp=report.run.started_at, time=f"{report.run.duration_s:.3f}")
    failures = errors = skipped = 0
    for row in rows:
        case = row.case
        classname = f"{prefix}." + PurePosixPath(case.source.file).stem.replace(".", "_")
        latency = sum(s.latency_ms or 0 for s in case.samples) / 1000
        tc = ET.SubElement(
            suite,
            "testcase",
            classname=classname,
            name=case.name,
            file=case.source.file,
            line=str(case.source.line),
            time=f"{latency:.3f}",
        )
        holdout = case.split == "holdout"  # arguments and reasons can quote the prompt
        detail = "\n".join(
            f"sample {s.index}: {s.outcome} picked {picked_label(s, with_args=not holdout)}"
            + (f" — {'; '.join(s.reasons)}" if s.reasons and not holdout else "")
            + (f"\n  scores: {scores_text(s.scores)}" if s.scores else "")
            + "".join(f"\n  {line}" for line in trace_lines(s, with_args=not holdout))
            for s in case.samples
        )
        message = f"{row.outcome}{' ' + row.rate if row.rate else ''}: {row.why}".strip(": ")
        if case.status == "needs_review":
            ET.SubElement(tc, "skipped", message=f"needs review (not counted): {message}")
            skipped += 1
        elif row.outcome == "NOT-EVALUATED":
            ET.SubElement(tc, "skipped", message=row.why or "not evaluated")
            skipped += 1
        elif row.outcome == "ERROR":
            ET.SubElement(tc, "error", message=message, type="ERROR").text = detail
            errors += 1
        elif row.failing:
            critical = next((s.critical.code for s in case.samples if s.critical is not None), None)
            ET.SubElement(tc, "failure", message=message, type=critical or row.outcome).text = detail
            failures += 1
        ET.SubElement(tc, "system-out").text = f"prompt: {case.prompt}\n{detail}" if case.split != "holdout" else detail
    gate = ET.SubElement(suite, "testcase", classname=prefix, name="gate", time="0")
    acc = report.metrics["accuracy"]
    said = (
        f"provider={report.run.provider} model={report.run.model} accuracy={acc.numerator}/{acc.denominator} "
        f"min_accuracy={report.gate.min_accuracy}"
    )
    if report.dimensions is not None:  # trajectory cases: seed 004's dimensions and failure codes
        said += "".join(
            f"\n{r.label}: mean {r.mean}{f' (95% CI {r.ci})' if r.ci else ''}, scores {r.distribution}, n {r.n}"
            for r in dimension_rows(report.dimensions)
        )
        said += f"\nfailure codes: {codes_text(report.failure_codes or {})}"
        properties = ET.SubElement(suite, "properties")
        for name, d in report.dimensions.items():
            if d.mean is not None:
                ET.SubElement(properties, "property", name=f"dimension.{name}", value=f"{d.mean:.4f}")
        for code, n in (report.failure_codes or {}).items():
            ET.SubElement(properties, "property", name=f"failure_code.{code}", value=str(n))
    ET.SubElement(gate, "system-out").text = said
    if word == "inconclusive":  # the comparison could tell nothing: not a measured failure
        reasons = "; ".join(verdict.reasons)
        ET.SubElement(gate, "error", message=reasons, type="inconclusive").text = reasons
        errors += 1
    elif not verdict.passed:
        reasons = ("would fail (mode: warn): " if word == "would fail" else "") + (
            "; ".join(verdict.reasons) or "gate failed"
        )
        ET.SubElement(gate, "failure", message=reasons, type="gate").text = reasons
        failures += 1
    suite.set("tests", str(len(rows) + 1))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    return suite
