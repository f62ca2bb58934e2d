"""The report as GitHub-flavoured Markdown (the same content as the console).

Everything that comes from the repo or the model is escaped: no raw HTML, no pinging @mentions,
no table-breaking pipes, no hidden-comment markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..gate import Verdict
from ..lint.finding import Finding
from ..report.reading import right_cell
from ..report.schema import FindingOut, Report, shown_metric
from .clients import client_lines
from .common import (
    CLUSTER_NOTE,
    METRIC_LABELS,
    CaseRow,
    accuracy_line,
    bill,
    case_row,
    codes_text,
    column_word,
    delta_text,
    dimension_rows,
    frac,
    hot_cells,
    interval,
    labels,
    lint_summary,
    metric_text,
    pct,
    replies_line,
)
from .escape import code, esc
from .findings import finding_groups, more_text, tally
from .search import search_lines

if TYPE_CHECKING:
    from ..outcome import Outcome


def case_label(row: CaseRow) -> str:
    """A case's name, except holdout cases, whose names may carry their prompt."""
    if row.case.split == "holdout":
        return f"holdout case ({esc(row.case.source.file)}:{row.case.source.line})"
    return esc(row.case.name)


def metrics_table(report: Report) -> list[str]:
    out = ["| metric | value | n/d | 95% CI |", "|---|---:|---:|---:|"]
    for key, label in METRIC_LABELS.items():
        if (m := shown_metric(report, key)) is None:
            continue
        out.append(f"| {label} | {metric_text(m, report, key)} | {frac(m)} | {interval(m)} |")
    if (said := replies_line(report)) is not None:
        out += ["", esc(said[:1].upper() + said[1:]) + "."]
    if any(interval(m).endswith("†") for m in report.metrics.values()):
        out += ["", CLUSTER_NOTE]
    return out


def position_rows(report: Report) -> list[str]:
    if not report.position:
        return []
    out = ["| expected tool's position | accuracy | n/d | 95% CI |", "|---|---:|---:|---:|"]
    out += [f"| {esc(third)} third | {pct(m)} | {frac(m)} | {interval(m)} |" for third, m in report.position.items()]
    return out


def flaky_list(report: Report, limit: int = 50) -> list[str]:
    rates = {c.name: c for c in report.cases}
    out = []
    for name in report.flaky[:limit]:
        case = rates[name]
        label = f"holdout case ({esc(case.source.file)}:{case.source.line})" if case.split == "holdout" else esc(name)
        out.append(f"- {label}: {case.passed}/{case.evaluated} samples passed")
    if len(report.flaky) > limit:
        out.append(f"- … {len(report.flaky) - limit} more")
    return out


def confusion_table(report: Report, base: Report | None = None) -> list[str]:
    """Rows expected, columns picked; confusions in bold; with a base, each changed cell's Δ. Only the
    rows and columns that hold a confusion or a changed cell (with each kept row's right answers), and
    a line saying how many were left out: at 46 tools the rest is a wall of right answers."""
    rows, cols = labels(report)
    if base is not None:
        b_rows, b_cols = labels(base)
        rows = rows + [r for r in b_rows if r not in rows]
        cols = cols + [c for c in b_cols if c not in cols]
    if not rows:
        return []

    def count(side: Report | None, row: str, col: str) -> int:
        return side.confusion.get(row, {}).get(col, 0) if side is not None else 0

    def telling(row: str, col: str) -> bool:  # a confusion, or a cell that moved
        now = count(report, row, col)
        return (bool(now) and not right_cell(row, col)) or (base is not None and now != count(base, row, col))

    cells = [(r, c) for r in rows for c in cols if telling(r, c)]
    kept_rows = [r for r in rows if any(r == x for x, _ in cells)]
    kept_cols = [
        c
        for c in cols
        if any(c == y for _, y in cells) or any(right_cell(r, c) and count(report, r, c) for r in kept_rows)
    ]
    if not kept_rows:
        return []
    out = [
        "| expected ＼ picked | " + " | ".join(code(c) for c in kept_cols) + " |",
        "|---|" + "---:|" * len(kept_cols),
    ]
    for row in kept_rows:
        texts = []
        for col in kept_cols:
            now = count(report, row, col)
            text = "·" if not now else (f"{now}" if right_cell(row, col) else f"**{now}**")
            before = count(base, row, col) if base is not None else now
            if now != before:
                text += f" ({'+' if now > before else '−'}{abs(now - before)})"
            texts.append(text)
        out.append(f"| {code(row)} | " + " | ".join(texts) + " |")
    left_rows, left_cols = len(rows) - len(kept_rows), len(cols) - len(kept_cols)
    if left_rows or left_cols:
        out += ["", f"_{_left_out(left_rows, left_cols)} with only right answers (and nothing changed) left out._"]
    return out


def _left_out(rows: int, cols: int) -> str:
    said = [f"{n} {word}{'s' * (n != 1)}" for n, word in ((rows, "row"), (cols, "column")) if n]
    return " and ".join(said)


def hot_list(report: Report, limit: int = 10) -> list[str]:
    hot = hot_cells(report.confusion)
    more = [f"- … {len(hot) - limit} more (the HTML report and the JSON hold them all)"] if len(hot) > limit else []
    return [f"- {n} × wanted {code(e)}, got {code(p)}" for e, p, n in hot[:limit]] + more


def per_tool_table(report: Report) -> list[str]:
    out = ["| tool | precision | recall (95% CI) | F1 | support |", "|---|---:|---:|---:|---:|"]
    for name, s in report.per_tool.items():
        f1 = "n/a" if s.f1 is None else f"{s.f1:.2f}"
        ci = f" ({interval(s.recall)})" if s.recall.ci else ""
        out.append(f"| {code(name)} | {pct(s.precision)} | {pct(s.recall)}{ci} | {f1} | {s.support} |")
    return out


def cases_table(rows: list[CaseRow]) -> list[str]:
    out = ["| outcome | case | expected | picked | why |", "|---|---|---|---|---|"]
    for row in rows:
        outcome = esc(row.outcome) + (f" {row.rate}" if row.rate else "")
        pending = " _(needs review)_" if row.case.status == "needs_review" else ""
        out.append(
            f"| {outcome} | {case_label(row)}{pending} | {esc(row.expected)} | {esc(row.picked)} | {esc(row.why)} |"
        )
    return out


def lint_list(findings: Sequence[Finding | FindingOut], per_code: int | None = 2) -> list[str]:
    """The findings, the golden set's then the surface's: severity, where, what, and the fix; at most
    `per_code` of each code (None: all), the rest counted, and a line that tallies every code."""
    out: list[str] = []
    icon = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}
    groups = finding_groups(findings, per_code)
    for group in groups:
        out += [f"**{group.title}** ({group.total})", ""]
        for f in group.shown:
            place = f" ({esc(f.file)}:{f.line})" if f.file and f.line else ""
            fix = f" — {esc(f.fix)}" if f.fix else ""
            out.append(f"- {icon[f.severity]} {code(f.code)}{place}: {esc(f.message)}{fix}")
        if group.more:
            out.append(f"- {esc(more_text(group.more))}")
        out.append("")
    if any(g.more for g in groups) or len({f.code for f in findings}) > 1:
        out.append(
            f"By code: {esc(tally(findings))}"
            + (" (`toolselect lint --all` lists them all)" if any(g.more for g in groups) else "")
        )
    return out[:-1] if out and out[-1] == "" else out


def dimensions_table(report: Report) -> list[str]:
    """Seed 004's dimensions of the trajectory cases, and the failure codes ([] without any)."""
    if report.dimensions is None:
        return []
    out = ["| dimension | mean (0–3) | 95% CI | scores 0:1:2:3 | n |", "|---|---:|---:|---:|---:|"]
    out += [f"| {r.label} | {r.mean} | {r.ci} | {r.distribution} | {r.n} |" for r in dimension_rows(report.dimensions)]
    return [*out, "", f"Failure codes: {esc(codes_text(report.failure_codes or {}))}"]


def render_markdown(what: Outcome) -> str:
    """The report of a run: one model's, or for several models a model × metric table, then each
    model's report under its label (each with its own verdict)."""
    from .headline import ICONS, WARN_NOTE

    if not what.several:
        return _one_model(what.head, what.verdict, what.word)
    lines = [f"## {ICONS[what.word]} toolselect {what.word}: {len(what.models)} models", ""]
    lines += [*([f"- {WARN_NOTE}", ""] if what.warned else []), *models_table(what), ""]
    for m in what.models:
        body = (
            _one_model(m.head, m.verdict, m.word)
            .replace("\n### ", "\n#### ")
            .replace("## ", f"### {code(m.label)}: ", 1)
        )
        lines += [body]
    return "\n".join(lines)


def models_table(outcome: Outcome) -> list[str]:
    """One row per model: accuracy (base → head, Δ, significance when compared) and the headline metrics."""
    from ..gate import significance_text

    compared = any(m.diff is not None for m in outcome.models)
    head = [column_word(outcome.models), "accuracy", *(["base → head", "Δ", "significance"] if compared else [])]
    head += ["tool accuracy", "restraint", "over-triggering", "errors", "gate"]
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"
    lines = ["| " + " | ".join(head) + " |", rule]
    for m in outcome.models:
        r = m.head.metrics
        cells = [code(m.label), pct(r["accuracy"])]
        if compared:
            if m.diff is not None:
                d = m.diff.metrics["accuracy"]
                cells += [f"{pct(d.base)} → {pct(d.head)}", delta_text(d.delta_pt), significance_text(m.diff)]
            else:
                cells += ["no baseline", "", ""]
        cells += [pct(r["tool_accuracy"]), pct(r["no_call_recall"]), pct(r["over_trigger_rate"]), pct(r["error_rate"])]
        cells.append("✅ pass" if m.verdict.passed else "⚠️ would fail" if m.warned else "❌ fail")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _one_model(report: Report, verdict: Verdict, word: str) -> str:
    """One model's report: the verdict's word (Outcome.word), its critical misroutes first, the rest."""
    from .headline import ICONS, WARN_NOTE, critical_list

    run = report.run
    lines = [f"## {ICONS[word]} toolselect {word}: {esc(accuracy_line(report))}", "", *critical_list(report)]
    model = f" · model {code(run.model)}" if run.model else ""
    samples = f" × {run.repeat} samples" if run.repeat > 1 else ""
    lines.append(
        f"provider {code(run.provider)}{model} · {report.counts.cases} cases{samples} · "
        f"tool surface {len(report.surface.tools)} tools, hash {code(report.surface.hash[:12])}"
        + (f" · {esc(cost)}" if (cost := bill([run])) else "")
    )
    lines.append("")
    if report.gate.stopped:
        lines += [f"**The run stopped:** {esc(report.gate.stopped)}", ""]
    for reason in verdict.reasons:
        lines.append(f"- {esc(reason)}")
    if word == "would fail":
        lines.append(f"- {WARN_NOTE}")
    if verdict.reasons:
        lines.append("")
    lines += [*metrics_table(report), ""]
    if report.dimensions is not None:
        lines += ["### Trajectories", "", *dimensions_table(report), ""]
    hot = hot_list(report)
    if hot:
        lines += ["**Confusions** (wanted → got)", "", *hot, ""]
    matrix = confusion_table(report)
    if matrix:
        lines += ["### Confusion matrix", "", "Rows: the expected tool; columns: the tool picked.", "", *matrix, ""]
    if report.per_tool:
        lines += ["### Per tool", "", *per_tool_table(report), ""]
    if report.flaky:
        lines += [
            f"### Flaky cases ({len(report.flaky)})",
            "",
            "They pass some samples, not all.",
            "",
            *flaky_list(report),
            "",
        ]
    if report.position:
        lines += [
            "### Accuracy by the expected tool's position",
            "",
            "Each sample saw the tools in a seeded, shuffled order.",
            "",
        ]
        lines += [*position_rows(report), ""]
    rows = [case_row(c) for c in report.cases]
    failing = [r for r in rows if r.failing]
    if failing:
        lines += [f"### Cases that missed ({len(failing)})", "", *cases_table(failing), ""]
    lines += ["<details><summary>All cases</summary>", "", *cases_table(rows), "", "</details>", ""]
    if report.surface.left_out:
        lines += ["**Left out of the tool surface** (invalid input schema):", ""]
        lines += [f"- {code(lo.name)}: {esc(lo.reason)}" for lo in report.surface.left_out] + [""]
    if clients := client_lines(report):
        lines += ["**As the client presents it**", "", *[f"- {esc(line)}" for line in clients], ""]
    if searched := search_lines(report):
        lines += ["**Behind the API's tool search**", "", *[f"- {esc(line)}" for line in searched], ""]
    if report.lint:
        lines += [f"### Lint: {lint_summary(report.lint)}", "", *lint_list(report.lint), ""]
    notes = []
    if report.counts.pending_cases:
        notes.append(f"{report.counts.pending_cases} cases need review: scored and shown, not counted by the gate.")
    if report.counts.not_evaluated:
        notes.append(f"{report.counts.not_evaluated} samples were NOT-EVALUATED (not counted).")
    notes += [esc(w) for w in report.warnings]
    if notes:
        lines += [f"> {n}" for n in notes] + [""]
    return "\n".join(lines)
