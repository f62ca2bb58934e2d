"""The report as one self-contained HTML page: every model's verdict, metrics, per-tool table, the
confusion matrix as a heatmap whose cells list their cases, the changes against the base, flaky
cases, traces, lint findings and warnings.

The page loads nothing: its style and its one small script (render/assets/report.css and report.js,
read as package data) are inline, and a Content-Security-Policy
allows that script by its hash and nothing else, so no script written into a report could run even
if escaping failed. Every string from the report (prompts, tool names and descriptions, arguments,
reasons, file names, labels) goes through `esc`; the script reads nothing but ids this module makes.
Without JavaScript every model's section is shown one after the other, and each confusion cell is a
link to the list of its cases; with it, a switcher shows one model at a time (or all side by side)
and a click on a cell shows that cell's cases only. Holdout cases show their tool only, as in the
other views: no name, prompt, arguments or reasons.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from ..diff import CaseDelta, CaseSide, CellDelta, Diff
from ..gate import significance_text
from ..report.build import ERROR, NONE, UNKNOWN
from ..report.schema import PENDING, CaseOut, Report, SampleOut, case_expected
from ..scoring import Outcome as SampleOutcome
from .common import (
    CLUSTER_NOTE,
    DIMENSION_LABELS,
    HEADLINE_METRICS,
    LOWER_IS_BETTER,
    METRIC_LABELS,
    args_text,
    case_row,
    cases_moved,
    codes_text,
    delta_text,
    dimension_rows,
    frac,
    hot_cells,
    interval,
    labels,
    lint_summary,
    metric_text,
    pct,
    picked_label,
    sorted_findings,
    trace_lines,
)
from .escape import visible

if TYPE_CHECKING:
    from ..outcome import ModelOutcome, Outcome

Cell = tuple[str, str]  # (expected row, picked column)

# --------------------------------------------------------------------------- cells


def expected_tools(case: CaseOut) -> list[str]:
    """The tools a case accepts as its first call (empty: no call expected)."""
    if case.expect_tool is None:
        return []
    return [case.expect_tool] if isinstance(case.expect_tool, str) else list(case.expect_tool)


def confusion_cell(case: CaseOut, sample: SampleOut, offered: Collection[str]) -> Cell | None:
    """The confusion cell report.confusion counts this sample in, or None when it is not counted (a
    NOT-EVALUATED sample, or a case that needs review). report.py's `counted`, `row_label` and
    `column_label` for a case read back from a report: the row is the expected tool (for a list, the
    picked tool when it is listed, else the first); the column is (error) for an ERROR sample, (none)
    when no tool was called, the tool when it was `offered`, else (unknown). A trajectory case is
    placed by its first call, which is its `picked_tool`."""
    if sample.outcome == SampleOutcome.NOT_EVALUATED or case.status == PENDING:
        return None
    expected = expected_tools(case)
    picked = sample.picked_tool
    row = (picked if picked is not None and picked in expected else expected[0]) if expected else NONE
    if sample.outcome == SampleOutcome.ERROR:
        column = ERROR
    elif picked is None:
        column = NONE
    else:
        column = picked if picked in offered else UNKNOWN
    return row, column


@dataclass(frozen=True)
class Member:
    """A case in a cell (or among the samples not counted): its samples there, in order."""

    case: CaseOut
    samples: tuple[SampleOut, ...]


def cell_members(report: Report) -> tuple[dict[Cell, list[Member]], list[Member]]:
    """Each confusion cell's cases with their samples in it (a case whose samples differ is in several
    cells), and the cases with samples the matrix doesn't count. Counting the samples of each cell
    gives `report.confusion` exactly."""
    offered = set(report.surface.tools)
    cells: dict[Cell, list[Member]] = {}
    uncounted: list[Member] = []
    for case in report.cases:
        placed: dict[Cell | None, list[SampleOut]] = {}
        for sample in case.samples:
            placed.setdefault(confusion_cell(case, sample, offered), []).append(sample)
        for cell, samples in placed.items():
            member = Member(case, tuple(samples))
            if cell is None:
                uncounted.append(member)
            else:
                cells.setdefault(cell, []).append(member)
    return cells, uncounted


# --------------------------------------------------------------------------- text


def esc(value: object) -> str:
    """Text for HTML, element content or a quoted attribute alike: bidi, zero-width and control
    characters shown as ⟨U+XXXX⟩ (so nothing is reordered or hidden), line breaks as spaces, and
    & < > " ' escaped."""
    return html.escape(visible(str(value)), quote=True)


def esc_lines(text: str) -> str:
    """Like `esc`, keeping the line breaks (for <pre>)."""
    return "\n".join(esc(line) for line in text.split("\n"))


def code(value: object) -> str:
    return f"<code>{esc(value)}</code>"


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else f"−{-n}"


def case_name(case: CaseOut) -> str:
    """A case's name as shown (escaped): holdout cases by their place, as the other views do."""
    if case.split == "holdout":
        return f"holdout case ({esc(case.source.file)}:{case.source.line})"
    return esc(case.name)


def shown_name(case: CaseOut) -> str:
    """The text `case_name` shows (unescaped), for tests and tools that compare names."""
    return f"holdout case ({case.source.file}:{case.source.line})" if case.split == "holdout" else case.name


def cell_title(row: str, column: str) -> str:
    if row == column:
        return f"right tool: {row}"
    return f"wanted {row}, got {column}"


def outcome_badge(outcome: str) -> str:
    kind = {"PASS": "ok", "NOT-EVALUATED": "muted", "SEL-SUBOPTIMAL": "warn"}.get(outcome, "bad")
    return f'<span class="tag {kind}">{esc(outcome)}</span>'


def verdict_badge(passed: bool) -> str:
    return '<span class="badge pass">PASS</span>' if passed else '<span class="badge fail">FAIL</span>'


def delta_span(value: float | None, key: str = "accuracy") -> str:
    """A change in points, coloured by its direction for `key`: for the rates where lower is better
    (under- and over-triggering, provider errors) a rise is worse."""
    if value is None:
        return ""
    better = -value if key in LOWER_IS_BETTER else value
    kind = "better" if better >= 0.05 else "worse" if better <= -0.05 else "flat"
    return f'<span class="delta {kind}">{esc(delta_text(value))}</span>'


def ul(items: Iterable[str], cls: str = "") -> str:
    """A list of already escaped items ('' when there are none)."""
    lis = "".join(f"<li>{item}</li>" for item in items)
    return f'<ul class="{cls}">{lis}</ul>' if lis else ""


# --------------------------------------------------------------------------- the page


def render_html(outcome: Outcome, *, run_url: str | None = None) -> str:
    """The whole outcome (each model, its base and diff) as one self-contained HTML5 document."""
    several = len(outcome.models) > 1
    verdict = outcome.verdict
    word = "passed" if verdict.passed else "failed"
    ids = [f"m{i}" for i in range(len(outcome.models))]
    title = f"toolselect {word}" + ("" if several else f": {outcome.models[0].label}")
    tabs = ""
    if several:
        buttons = "".join(
            f'<a class="tab" href="#{mid}" data-show="{mid}">{esc(m.label)} {mini_badge(m.verdict.passed)}</a>'
            for mid, m in zip(ids, outcome.models, strict=True)
        )
        buttons += (
            '<button type="button" class="tab" data-show="all" hidden data-js-only>all models side by side</button>'
        )
        tabs = f'<nav class="switcher" aria-label="models">{buttons}</nav>'
    top = [
        '<header class="top">',
        f'<div class="brand">toolselect {verdict_badge(verdict.passed)}</div>',
        tabs or f'<div class="one">{esc(outcome.models[0].label)}</div>',
        "</header>",
    ]
    body = [*top, "<main>", summary(outcome)]
    if several:
        body.append(overview(outcome, ids))
    body.append(f'<div class="models" style="--n:{len(outcome.models)}">')
    body += [model_section(outcome, m, mid, several) for mid, m in zip(ids, outcome.models, strict=True)]
    body.append("</div>")
    body.append(page_footer(run_url))
    body.append("</main>")
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="referrer" content="no-referrer">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="color-scheme" content="light dark">',
            f"<title>{esc(title)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            *body,
            f"<script>{SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def mini_badge(passed: bool) -> str:
    return (
        '<span class="dot pass" title="passed">✓</span>' if passed else '<span class="dot fail" title="failed">✗</span>'
    )


def summary(outcome: Outcome) -> str:
    """The joint verdict, its reasons and notes, and what was compared with."""
    v = outcome.verdict
    one = outcome.models[0]
    word = "passed" if v.passed else "failed"
    head = f"toolselect {word}"
    if len(outcome.models) == 1:
        head += ": " + esc(accuracy_line(one))
    else:
        head += f" for {len(outcome.models)} models"
    out = [f'<section class="summary {"pass" if v.passed else "fail"}">', f"<h1>{verdict_badge(v.passed)} {head}</h1>"]
    said = [*outcome.notes, *v.notes]
    if len(outcome.models) == 1 and one.base_note and one.diff is None:
        said.append(one.base_note)
    out.append(ul((esc(r) for r in v.reasons), "reasons"))
    out.append(ul((esc(n) for n in said), "notes"))
    failed = outcome.base_failure
    if failed is not None:
        if failed.hint:
            out.append(f'<p class="meta">fix: {esc(failed.hint)}</p>')
        if failed.details:
            out.append(f"<details><summary>What the base said</summary><pre>{esc(failed.details)}</pre></details>")
    if outcome.base_label is not None:
        out.append(f'<p class="meta">compared with {code(outcome.base_label)}</p>')
    out.append("</section>")
    return "\n".join(out)


def accuracy_line(m: ModelOutcome) -> str:
    """`accuracy 76.2% → 73.8% (−2.4 pt), not significant (p = 1)`, or `accuracy 73.8% (31/42)` (text)."""
    acc = m.head.metrics["accuracy"]
    diff = m.diff
    if diff is not None and diff.metrics["accuracy"].base is not None:
        moved = diff.metrics["accuracy"]
        line = f"accuracy {pct(moved.base)} → {pct(acc)} ({delta_text(moved.delta_pt)})"
        if diff.paired.cases and (diff.paired.improved or diff.paired.worsened):
            line += f", {significance_text(diff)}"
        return line
    return f"accuracy {pct(acc)} ({frac(acc)})"


OVERVIEW_METRICS = ("accuracy", "tool_accuracy", "no_call_recall", "over_trigger_rate", "error_rate")


def overview(outcome: Outcome, ids: Sequence[str]) -> str:
    """The model × metric table (several models)."""
    head = "".join(f'<th class="num">{esc(METRIC_LABELS[k])}</th>' for k in OVERVIEW_METRICS)
    rows = []
    for mid, m in zip(ids, outcome.models, strict=True):
        cells = []
        for key in OVERVIEW_METRICS:
            metric = m.head.metrics[key]
            d = m.diff.metrics[key].delta_pt if m.diff is not None else None
            cells.append(
                f'<td class="num">{esc(metric_text(metric, m.head, key))} <span class="n">{frac(metric)}</span>'
                f"{'<br>' + delta_span(d, key) if m.diff is not None else ''}</td>"
            )
        if m.diff is not None:
            vs = esc(accuracy_line(m))
        else:
            why = "no comparison: the base could not be evaluated" if m.base_failure else m.base_note or "no baseline"
            vs = f'<span class="muted">{esc(why)}</span>' if outcome.compared else "—"
        run = m.head.run
        who = f"{esc(run.provider)}" + (f" · {esc(run.model)}" if run.model else "")
        rows.append(
            f'<tr><th><a href="#{mid}" data-show="{mid}">{esc(m.label)}</a><div class="sub">{who}</div></th>'
            f"<td>{verdict_badge(m.verdict.passed)}</td>{''.join(cells)}<td>{vs}</td></tr>"
        )
    return (
        '<section class="overview"><h2>Models</h2><div class="scroll"><table class="grid">'
        f"<thead><tr><th>model</th><th>verdict</th>{head}<th>base → head</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>{portability(outcome)}</section>"
    )


def portability(outcome: Outcome) -> str:
    """The cases and confusion cells the change moved in opposite directions for two models."""
    moved = outcome.portability
    if not moved:
        return ""
    out = ["<h3>Portability: the change helped one model and hurt another</h3>"]
    if moved.cases:
        rows = "".join(
            f"<tr><td>{esc(c.name)}<div class='src'>{esc(c.file)}:{c.line}</div></td>"
            f"<td>{esc(', '.join(f'{label} {rates}' for label, rates in c.helped))}</td>"
            f"<td>{esc(', '.join(f'{label} {rates}' for label, rates in c.hurt))}</td></tr>"
            for c in moved.cases
        )
        out.append(
            '<table class="grid portability"><thead><tr><th>case</th><th>better for</th><th>worse for</th></tr>'
            f"</thead><tbody>{rows}</tbody></table>"
        )
    items = []
    for cell in moved.cells:
        better = ", ".join(f"{label} ({signed(d)})" for label, d in cell.helped)
        worse = ", ".join(f"{label} ({signed(d)})" for label, d in cell.hurt)
        if cell.expected == cell.picked:
            items.append(
                f"{code(cell.expected)} picked right: more often for {esc(better)}, less often for {esc(worse)}"
            )
        else:
            items.append(
                f"wanted {code(cell.expected)}, got {code(cell.picked)}: less often for {esc(better)}, "
                f"more often for {esc(worse)}"
            )
    return "".join(out) + ul(items, "portability-cells")


def model_section(outcome: Outcome, m: ModelOutcome, mid: str, several: bool) -> str:
    report, diff = m.head, m.diff
    run = report.run
    samples = f" × {run.repeat} samples" if run.repeat > 1 else ""
    meta = [f"provider {code(run.provider)}"]
    if run.model:
        meta.append(f"model {code(run.model)}")
    meta.append(f"{report.counts.cases} cases{samples}")
    meta.append(f"tool surface {len(report.surface.tools)} tools, hash {code(report.surface.hash[:12])}")
    if m.base is not None and m.base.surface.hash != report.surface.hash:
        meta[-1] += f" (base {code(m.base.surface.hash[:12])})"
    out = [
        f'<section class="model" id="{mid}" data-model="{mid}">',
        '<div class="headline">',
        f"<h2>{esc(m.label)} {verdict_badge(m.verdict.passed)}</h2>",
        f'<p class="acc">{esc(accuracy_line(m))}</p>',
        f'<p class="meta">{" · ".join(meta)}</p>',
    ]
    if report.gate.stopped:
        out.append(f'<p class="stopped"><strong>The run stopped:</strong> {esc(report.gate.stopped)}</p>')
    if several:
        out.append(ul((esc(r) for r in m.verdict.reasons), "reasons"))
        out.append(ul((esc(n) for n in m.verdict.notes), "notes"))
        if m.base_note and diff is None:
            out.append(ul([esc(m.base_note)], "notes"))
    if diff is not None:
        out.append(cases_said(diff, mid))
    out.append("</div>")
    out.append('<div class="pair">')
    out.append(block("Metrics", metrics_table(report, diff)))
    side = [block("Per tool", per_tool_table(report))] if report.per_tool else []
    dims = dimensions_table(report, diff)
    if dims:
        side.append(block("Trajectories — the tool-use dimensions", dims))
    out.append('<div class="stack">' + "".join(side) + "</div>")
    out.append("</div>")
    out.append(matrix_and_cases(report, m.base if diff is not None else None, mid))
    if diff is not None:
        out.append(changes(diff, m.base, report, mid))
    out.append(extras(report))
    out.append(model_footer(report, m.base))
    out.append("</section>")
    return "\n".join(out)


def block(title: str, body: str, cls: str = "") -> str:
    return f'<section class="block {cls}"><h3>{title}</h3>{body}</section>'


# --------------------------------------------------------------------------- tables


def metrics_table(report: Report, diff: Diff | None) -> str:
    rows = []
    for key, label in METRIC_LABELS.items():
        m = report.metrics[key]
        cells = f'<td class="num">{esc(metric_text(m, report, key))}</td><td class="num n">{frac(m)}</td>'
        cells += f'<td class="num n">{esc(interval(m))}</td>'
        if diff is not None:
            d = diff.metrics.get(key)
            base = esc(metric_text(d.base, report, key)) if d is not None and d.base is not None else "n/a"
            cells = (
                f'<td class="num n">{base}</td>'
                + cells
                + f'<td class="num">{delta_span(d.delta_pt if d else None, key)}</td>'
            )
        strong = ' class="key"' if key in HEADLINE_METRICS[:2] else ""
        rows.append(f"<tr{strong}><th>{esc(label)}</th>{cells}</tr>")
    head = "<th>metric</th>" + ('<th class="num">base</th>' if diff is not None else "")
    head += '<th class="num">value</th><th class="num">n/N</th><th class="num">95% CI</th>'
    head += '<th class="num">Δ</th>' if diff is not None else ""
    note = ""
    if any(interval(m).endswith("†") for m in report.metrics.values()):
        note = f'<p class="note">{esc(CLUSTER_NOTE)}</p>'
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>{note}'


def per_tool_table(report: Report) -> str:
    rows = []
    for name, s in report.per_tool.items():
        f1 = "n/a" if s.f1 is None else f"{s.f1:.2f}"
        rows.append(
            f"<tr><th>{code(name)}</th>"
            f"<td class='num'>{pct(s.precision)} <span class='n'>{frac(s.precision)}</span></td>"
            f"<td class='num'>{pct(s.recall)} <span class='n'>{frac(s.recall)}</span></td>"
            f"<td class='num n'>{esc(interval(s.recall))}</td><td class='num'>{f1}</td>"
            f"<td class='num'>{s.support}</td></tr>"
        )
    return (
        '<table class="grid"><thead><tr><th>tool</th><th class="num">precision</th><th class="num">recall</th>'
        '<th class="num">recall 95% CI</th><th class="num">F1</th><th class="num">support</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def dimensions_table(report: Report, diff: Diff | None) -> str:
    """Seed 004's dimensions of the trajectory cases ('' without any), with base → head when diffed."""
    if report.dimensions is None:
        return ""
    deltas = diff.dimensions if diff is not None and diff.dimensions else {}
    by_label = {DIMENSION_LABELS[k]: k for k in DIMENSION_LABELS}
    rows = []
    for r in dimension_rows(report.dimensions):
        d = deltas.get(by_label[r.label])
        change = ""
        if d is not None and d.delta is not None:
            kind = "down" if d.delta < 0 else "up" if d.delta > 0 else "flat"
            shown = "±0.00" if d.delta == 0 else f"{d.delta:+.2f}".replace("-", "−")
            base = "n/a" if d.base is None else f"{d.base:.2f}"
            change = f'{base} → <span class="delta {kind}">{shown}</span>'
        rows.append(
            f"<tr><th>{esc(r.label)}</th><td class='num'>{esc(r.mean)}</td><td class='num n'>{esc(r.ci)}</td>"
            f"<td class='num n'>{esc(r.distribution)}</td><td class='num'>{r.n}</td>"
            + (f"<td class='num'>{change}</td>" if deltas else "")
            + "</tr>"
        )
    head = "<th>dimension</th><th class='num'>mean (0–3)</th><th class='num'>95% CI</th>"
    head += "<th class='num'>scores 0:1:2:3</th><th class='num'>n</th>" + (
        "<th class='num'>base → Δ</th>" if deltas else ""
    )
    codes = f'<p class="note">Failure codes: {esc(codes_text(report.failure_codes or {}))}</p>'
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>{codes}'


# --------------------------------------------------------------------------- the matrix


def matrix_and_cases(report: Report, base: Report | None, mid: str) -> str:
    """The heatmap (rows expected, columns picked; colour: the share of its row) and below it every
    counted sample's case, grouped by cell: each cell links to its group."""
    rows, cols = labels(report)
    if base is not None:
        b_rows, b_cols = labels(base)
        rows = rows + [r for r in b_rows if r not in rows]
        cols = cols + [c for c in b_cols if c not in cols]
    members, uncounted = cell_members(report)
    ids = {(r, c): f"{mid}-cell-{i}-{j}" for i, r in enumerate(rows) for j, c in enumerate(cols)}
    # a report read back is checked for sums, not cell by cell: a sample's cell may be missing from it
    ids |= {cell: f"{mid}-cell-x{k}" for k, cell in enumerate(c for c in members if c not in ids)}
    grouped = cases_block(sorted_cells(members, rows, cols), uncounted, ids, mid)
    if not rows:
        return block("Confusion matrix", '<p class="muted">No counted samples.</p>') + grouped
    head = "".join(f'<th class="col"><span>{esc(c)}</span></th>' for c in cols)
    lines = []
    for r in rows:
        now_row = report.confusion.get(r, {})
        total = sum(now_row.values())
        tds = []
        for c in cols:
            now = now_row.get(c, 0)
            before = base.confusion.get(r, {}).get(c, 0) if base is not None else now
            kind = "diag" if r == c else "off"
            classes = ["hm", kind] if now else ["hm", "empty"]
            if now != before:
                classes.append("changed")
            share = now / total if total else 0.0
            if share >= 0.55:
                classes.append("hi")
            change = f" <small>({signed(now - before)})</small>" if now != before else ""
            label = esc(f"{cell_title(r, c)}: {now}" + (f" (base {before})" if base is not None else ""))
            if now:
                cell_id = ids[(r, c)]
                inner = f'<a class="cell" href="#{cell_id}" data-cell="{cell_id}" title="{label}">{now}{change}</a>'
            else:
                inner = f'<span title="{label}">{change.strip()}</span>' if change else ""
            style = f' style="--s:{share:.3f}"' if now else ""
            tds.append(f'<td class="{" ".join(classes)}"{style}>{inner}</td>')
        lines.append(f'<tr><th class="row">{esc(r)}</th>{"".join(tds)}<td class="total">{total}</td></tr>')
    legend = (
        '<p class="legend">Rows: the expected tool; columns: the tool picked. A cell\'s colour is its share of '
        'the row: <span class="sw diag"></span> right tool, <span class="sw off"></span> a confusion.'
        + (' <span class="sw changed"></span> changed against the base (Δ in brackets).' if base is not None else "")
        + " Click a cell for its cases.</p>"
    )
    title = "Confusion matrix" + (" (head; Δ vs base in brackets)" if base is not None else "")
    table = (
        f'<div class="scroll"><table class="heatmap"><thead><tr><th class="corner">expected ↓ picked →</th>{head}'
        f'<th class="col total"><span>total</span></th></tr></thead><tbody>{"".join(lines)}</tbody></table></div>'
    )
    aside = hot_aside(report, base, ids)
    body = f'<div class="matrix-wrap">{table}{aside}</div>{legend}'
    return block(title, body, "matrix") + grouped


def hot_aside(report: Report, base: Report | None, ids: dict[Cell, str], limit: int = 12) -> str:
    """The biggest confusions, each a link to its cases ('' when every pick was right)."""
    hot = hot_cells(report.confusion)
    if not hot:
        return (
            '<aside class="hot"><h4>Confusions</h4><p class="muted">None: every pick was the expected tool.</p></aside>'
        )
    items = []
    for e, p, n in hot[:limit]:
        before = base.confusion.get(e, {}).get(p, 0) if base is not None else n
        was = f' <span class="n">(base {before})</span>' if before != n else ""
        cell_id = ids[(e, p)]
        items.append(
            f'<a href="#{cell_id}" data-cell="{cell_id}"><b>{n}</b> × wanted {code(e)}, got {code(p)}</a>{was}'
        )
    more = f'<p class="n">… {len(hot) - limit} more cells</p>' if len(hot) > limit else ""
    return f'<aside class="hot"><h4>Confusions (wanted → got)</h4>{ul(items)}{more}</aside>'


def sorted_cells(
    members: dict[Cell, list[Member]], rows: list[str], cols: list[str]
) -> list[tuple[Cell, list[Member]]]:
    """Confusions first (most samples first), then the right tools in the matrix's order."""
    order = {(r, c): (i, j) for i, r in enumerate(rows) for j, c in enumerate(cols)}

    def size(item: tuple[Cell, list[Member]]) -> int:
        return sum(len(m.samples) for m in item[1])

    items = list(members.items())
    off = sorted((x for x in items if x[0][0] != x[0][1]), key=lambda x: (-size(x), order.get(x[0], (0, 0))))
    diag = sorted((x for x in items if x[0][0] == x[0][1]), key=lambda x: order.get(x[0], (0, 0)))
    return off + diag


def cases_block(cells: list[tuple[Cell, list[Member]]], uncounted: list[Member], ids: dict[Cell, str], mid: str) -> str:
    groups = []
    for (r, c), members in cells:
        n = sum(len(m.samples) for m in members)
        kind = "diag" if r == c else "off"
        heading = (
            f"right tool: {code(r)}" if r == c else f"wanted {code(r)}, got {code(c)}"
        ) + f' <span class="count">{n} sample{"s" if n != 1 else ""}</span>'
        cell_id = ids[(r, c)]
        groups.append(
            f'<section class="group {kind}" id="{cell_id}" data-group="{cell_id}"><h4>{heading}</h4>'
            f"{case_table(members)}</section>"
        )
    if uncounted:
        n = sum(len(m.samples) for m in uncounted)
        gid = f"{mid}-uncounted"
        groups.append(
            f'<section class="group muted-group" id="{gid}" data-group="{gid}"><h4>not counted: needs review or '
            f'not evaluated <span class="count">{n} sample{"s" if n != 1 else ""}</span></h4>'
            f"{case_table(uncounted)}</section>"
        )
    if not groups:
        return ""
    bar = (
        '<div class="filter" data-filter hidden><span>Showing one cell\'s cases.</span> '
        '<button type="button" data-all-cases>show all cases</button></div>'
    )
    return block("Cases, by confusion cell", bar + "".join(groups), "cases")


def case_table(members: Sequence[Member]) -> str:
    rows = "".join(case_tr(m) for m in members)
    return (
        '<table class="grid cases-t"><thead><tr><th>case</th><th>prompt</th><th>expected</th><th>picked</th>'
        f"<th>outcome</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def case_tr(member: Member) -> str:
    case = member.case
    sample = member.samples[0]
    holdout = case.split == "holdout"
    expected = esc(case_expected(case))
    tags = "".join(f'<span class="tag">{esc(t)}</span>' for t in case.tags)
    pending = ' <span class="tag warn">needs review</span>' if case.status == PENDING else ""
    name = f'<div class="name">{case_name(case)}{pending}</div>'
    if not holdout:  # a holdout case is named by its place already
        name += f'<div class="src">{esc(case.source.file)}:{case.source.line}</div>'
        name += f'<div class="tags">{tags}</div>' if tags else ""
    prompt = '<span class="muted">(holdout: not shown)</span>' if holdout else esc(case.prompt)
    picked = esc(picked_label(sample, with_args=False))
    args = sample_args(sample) if sample.trace is None and not holdout else ""  # a trace shows its own
    if args:
        picked += f'<div class="args">{esc(args)}</div>'
    total = len(case.samples)
    outcome = outcome_badge(sample.outcome)
    if total > 1:
        indexes = ", ".join(f"#{s.index}" for s in member.samples)
        which = f"all {total} samples" if len(member.samples) == total else f"samples {indexes} of {total}"
        outcome += f'<div class="sub">{which} · passed {case.passed}/{case.evaluated}</div>'
    why = "" if holdout else "".join(f"<div>{esc(r)}</div>" for r in sample.reasons)
    trace = ""
    if sample.trace is not None:
        lines = trace_lines(sample, with_args=not holdout, limit=120)
        text = chr(10).join(esc(line) for line in lines)
        trace = (
            f'<tr class="trace-row"><td></td><td colspan="5"><pre class="trace">{text}</pre></td></tr>' if lines else ""
        )
    return (
        f"<tr><td>{name}</td><td class='prompt'>{prompt}</td><td>{expected}</td><td>{picked}</td>"
        f"<td>{outcome}</td><td class='why'>{why}</td></tr>{trace}"
    )


def sample_args(sample: SampleOut) -> str:
    """A sample's arguments as JSON, or the model's text when it was not JSON ('' when there are none)."""
    if sample.picked_args is None and sample.raw_args is not None:
        return repr(sample.raw_args[:300])
    return args_text(sample.picked_args, 300)


# --------------------------------------------------------------------------- the diff


def changes(diff: Diff, base: Report | None, head: Report, mid: str) -> str:
    """What changed against the base: confusion cells, flipped cases, tool descriptions, new and removed
    cases, and how sure the change is."""
    out = []
    confusions = [c for c in diff.cells if not c.diagonal]
    right = [c for c in diff.cells if c.diagonal]
    if confusions or right:
        out.append(block("Confusion cells that changed (base → head)", ul(cell_line(c) for c in confusions + right)))
    if diff.to_failing:
        certain = sum(c.certain for c in diff.to_failing)
        title = f"Flipped to failing ({len(diff.to_failing)}" + (f", {certain} certain)" if certain else ")")
        out.append(block(title, flips_table(diff.to_failing, base, head), "flips bad"))
    if diff.to_passing:
        out.append(
            block(f"Flipped to passing ({len(diff.to_passing)})", flips_table(diff.to_passing, base, head), "flips")
        )
    if diff.tools:
        kinds = {
            "added": "added",
            "removed": "removed",
            "description": "description changed",
            "schema": "input schema changed",
        }
        items = []
        for change in diff.tools:
            item = f"<div>{code(change.name)} — {kinds[change.kind]}</div>"
            if change.diff:
                item += unified_diff(change.diff)
            items.append(item)
        out.append(block(f"Tool surface changes ({len(diff.tools)})", "".join(items), "tools"))
    if diff.new_cases or diff.removed_cases:
        now = {c.name: c for c in head.cases}
        before = {c.name: c for c in base.cases} if base is not None else {}
        named = lambda n, cases: case_name(cases[n]) if n in cases else esc(n)  # noqa: E731 (holdout: its place)
        listed = [f"new: {named(n, now)}" for n in diff.new_cases]
        listed += [f"removed: {named(n, before)}" for n in diff.removed_cases]
        out.append(block(f"New and removed cases ({len(listed)})", ul(listed)))
    p = diff.paired
    if p.cases:
        ci = f", 95% CI {p.ci_pt[0]:+.1f}…{p.ci_pt[1]:+.1f} pt (paired bootstrap over cases)." if p.ci_pt else "."
        text = (
            f"Paired over the {p.cases} cases on both sides: {p.improved} improved, {p.worsened} got worse; "
            f"{p.test}: p = {p.p_value:.2g}. Mean per-case change {delta_text(p.delta_pt)}{ci.replace('-', '−')} "
            f"A case's flip is <em>certain</em> when Fisher's exact test on its own samples gives p < {p.alpha:g}."
        )
        out.append(block("How sure is this?", f"<p>{text}</p>"))
    return f'<div class="changes" id="{mid}-changes">' + "".join(out) + "</div>" if out else ""


def cases_said(diff: Diff, mid: str) -> str:
    """`Cases: 3 flipped to failing, 1 flipped to passing`, linked to the changes ('' when none moved)."""
    said = [f"<strong>{p}</strong>" if stressed else p for p, stressed in cases_moved(diff)]
    if not said:
        return ""
    return f'<p class="meta">Cases: {", ".join(said)} — <a href="#{mid}-changes">what changed</a></p>'


def cell_line(cell: CellDelta) -> str:
    move = f"{cell.base} → {cell.head}"
    if cell.diagonal:
        kind = "more right" if cell.delta > 0 else "fewer right"
        cls = "up" if cell.delta > 0 else "down"
        return f'<span class="delta {cls}">{kind}</span>: {code(cell.expected)}: {move}'
    cls = "down" if cell.delta > 0 else "up"
    arrow = "▲" if cell.delta > 0 else "▼"
    return f'<span class="delta {cls}">{arrow}</span> wanted {code(cell.expected)}, got {code(cell.picked)}: {move}'


def flips_table(cases: list[CaseDelta], base: Report | None, head: Report) -> str:
    before = {c.name: c for c in base.cases} if base is not None else {}
    after = {c.name: c for c in head.cases}
    rows = []
    for case in cases:
        name = f"holdout case ({esc(case.file)}:{case.line})" if case.holdout else esc(case.name)
        certain = f' <span class="tag bad">certain (p = {case.p_value:.2g})</span>' if case.certain else ""

        def rate(side: CaseSide) -> str:
            return f' <span class="n">{side.passed}/{side.evaluated}</span>' if side.evaluated > 1 else ""

        traces = ""
        if case.expect_calls is not None and case.name in before and case.name in after:
            sides = [first_shown(before[case.name]), first_shown(after[case.name])]
            lines = [trace_lines(s, with_args=not case.holdout, limit=100) if s else [] for s in sides]
            shown = [chr(10).join(esc(x) for x in ls) or "(no trace)" for ls in lines]
            traces = (
                '<tr class="sub-row"><td></td><td colspan="3"><div class="side-by-side-traces">'
                + "".join(
                    f'<div><div class="sub">{side}</div><pre class="trace">{text}</pre></div>'
                    for side, text in zip(("base", "head"), shown, strict=True)
                )
                + "</div></td></tr>"
            )
        rows.append(
            f"<tr><td>{name}{certain}<div class='src'>{esc(case.file)}:{case.line}</div></td>"
            f"<td>{esc(case.expected)}</td>"
            f"<td>{esc(case.base.pick)}{rate(case.base)} {outcome_badge(case.base.outcome)}</td>"
            f"<td>{esc(case.head.pick)}{rate(case.head)} {outcome_badge(case.head.outcome)}</td></tr>{traces}"
        )
    return (
        '<table class="grid"><thead><tr><th>case</th><th>expected</th><th>base pick</th><th>head pick</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def first_shown(case: CaseOut) -> SampleOut | None:
    return case_row(case).sample


def unified_diff(text: str) -> str:
    out = []
    for line in text.split("\n"):
        cls = "add" if line.startswith("+") and not line.startswith("+++") else ""
        cls = "del" if line.startswith("-") and not line.startswith("---") else cls
        cls = "hunk" if line.startswith("@@") else cls
        out.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line))
    return f'<pre class="udiff">{chr(10).join(out)}</pre>'


# --------------------------------------------------------------------------- the rest


def extras(report: Report) -> str:
    out = []
    if report.flaky:
        by_name = {c.name: c for c in report.cases}
        items = [
            f"{case_name(by_name[n])}: {by_name[n].passed}/{by_name[n].evaluated} samples passed"
            for n in report.flaky
            if n in by_name
        ]
        out.append(block(f"Flaky cases ({len(report.flaky)})", "<p>They pass some samples, not all.</p>" + ul(items)))
    if report.position:
        rows = "".join(
            f"<tr><th>{esc(third)} third</th><td class='num'>{pct(m)}</td><td class='num n'>{frac(m)}</td>"
            f"<td class='num n'>{esc(interval(m))}</td></tr>"
            for third, m in report.position.items()
        )
        out.append(
            block(
                "Accuracy by the expected tool's position",
                "<p>Each sample saw the tools in a seeded, shuffled order.</p><table class='grid'><thead><tr>"
                "<th>expected tool's position</th><th class='num'>accuracy</th><th class='num'>n/N</th>"
                f"<th class='num'>95% CI</th></tr></thead><tbody>{rows}</tbody></table>",
            )
        )
    if report.lint:
        items = []
        for f in sorted_findings(report.lint):
            where = f"{f.file}:{f.line}" if f.file and f.line else f.file
            place = f' <span class="src">{esc(where)}</span>' if where else ""
            fix = f'<div class="fix">fix: {esc(f.fix)}</div>' if f.fix else ""
            items.append(
                f'<span class="tag {f.severity}">{esc(f.severity)}</span> {code(f.code)}{place}: {esc(f.message)}{fix}'
            )
        out.append(block(f"Lint: {esc(lint_summary(report.lint))}", ul(items, "findings")))
    if report.surface.left_out:
        items = [f"{code(lo.name)}: {esc(lo.reason)}" for lo in report.surface.left_out]
        out.append(
            block(f"Left out of the tool surface ({len(items)})", "<p>Their input schema is invalid.</p>" + ul(items))
        )
    notes = []
    if report.counts.pending_cases:
        notes.append(f"{report.counts.pending_cases} cases need review: scored and shown, not counted by the gate.")
    if report.counts.not_evaluated:
        notes.append(f"{report.counts.not_evaluated} samples were NOT-EVALUATED (not counted).")
    notes += [esc(w) for w in report.warnings]
    if notes:
        out.append(block("Warnings", ul(notes, "warnings"), "warn-block"))
    out.append(surface_block(report))
    return "".join(out)


def surface_block(report: Report) -> str:
    """Every listed tool's name, title and description, collapsed."""
    items = []
    for d in report.surface.definitions:
        name = d.get("name")
        desc = d.get("description")
        title = d.get("title")
        schema = d.get("inputSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        params = ", ".join(str(k) for k in props) if isinstance(props, dict) else ""
        items.append(
            f"<dt>{code(name if name is not None else '(no name)')}"
            + (f" <span class='sub'>{esc(title)}</span>" if isinstance(title, str) and title else "")
            + "</dt><dd>"
            + (
                f"<div class='desc'>{esc_lines(desc)}</div>"
                if isinstance(desc, str) and desc
                else "<div class='muted'>(no description)</div>"
            )
            + (f"<div class='sub'>arguments: {esc(params)}</div>" if params else "")
            + "</dd>"
        )
    if not items:
        return ""
    return (
        '<details class="block surface"><summary>'
        f"Tool surface ({len(items)} tools, {esc(report.surface.origin)})</summary>"
        f"<dl>{''.join(items)}</dl></details>"
    )


def model_footer(report: Report, base: Report | None) -> str:
    r = report.run
    parts = [f"toolselect {esc(r.toolselect_version)}", f"started {esc(r.started_at)}", f"{r.duration_s:.1f} s"]
    if r.cache_mode != "off":
        if base is not None:
            parts.append(f"base: {base.run.api_calls} API calls, {base.run.cache_hits} cache hits")
        parts.append(f"head: {r.api_calls} API calls, {r.cache_hits} cache hits")
    if r.config:
        parts.append(f"config {code(r.config)}")
    return f'<p class="foot">{" · ".join(parts)}</p>'


def page_footer(run_url: str | None) -> str:
    run = f" · run: <code class='url'>{esc(run_url)}</code>" if run_url else ""
    return f'<footer class="page">Written by toolselect: one self-contained page that loads nothing{run}</footer>'


# --------------------------------------------------------------------------- style and script


def _asset(name: str) -> str:
    """A file of render/assets/ (package data: the page's style and script are written as CSS and
    JavaScript, not Python strings)."""
    return resources.files("toolselect.render").joinpath("assets", name).read_text(encoding="utf-8")


STYLE = _asset("report.css")
SCRIPT = _asset("report.js")
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '{SCRIPT_HASH}'; "
    "base-uri 'none'; form-action 'none'"
)
