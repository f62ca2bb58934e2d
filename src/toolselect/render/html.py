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
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING

from ..diff import Diff
from ..gate import critical_samples, significance_text
from ..report.schema import Report, shown_metric
from .clients import CLIENT_COLUMNS, client_lines, client_rows
from .common import (
    CLUSTER_NOTE,
    DIMENSION_LABELS,
    HEADLINE_METRICS,
    METRIC_LABELS,
    bill,
    codes_text,
    delta_text,
    dimension_rows,
    frac,
    interval,
    lint_summary,
    metric_text,
    pct,
)
from .findings import sorted_findings
from .headline import WARN_NOTE
from .html_changes import cases_said, changes
from .html_matrix import matrix_and_cases
from .html_text import block, case_name, code, delta_span, esc, esc_lines, mini_badge, signed, ul, verdict_badge
from .search import search_lines

if TYPE_CHECKING:
    from ..outcome import ModelOutcome, Outcome


def render_html(outcome: Outcome, *, run_url: str | None = None) -> str:
    """The whole outcome (each model, its base and diff) as one self-contained HTML5 document."""
    several = len(outcome.models) > 1
    word = outcome.word
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
        f'<div class="brand">toolselect {verdict_badge(word)}</div>',
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


def summary(outcome: Outcome) -> str:
    """The joint verdict, its reasons and notes, and what was compared with."""
    v, word = outcome.verdict, outcome.word
    one = outcome.models[0]
    head = f"toolselect {word}"
    if len(outcome.models) == 1:
        head += ": " + esc(accuracy_line(one))
    else:
        head += f" for {len(outcome.models)} models"
    kind = "pass" if v.passed else "fail" if word == "failed" else "warn"
    out = [f'<section class="summary {kind}">', f"<h1>{verdict_badge(word)} {head}</h1>"]
    for m in outcome.models:  # the critical misroutes first, apart (severity.py)
        count, found = critical_samples(m.head)
        if found:
            of = f"{esc(m.label)}: " if len(outcome.models) > 1 else ""
            out.append(f"<p><strong>{of}critical misroutes ({count} sample{'s' * (count != 1)})</strong></p>")
            out.append(ul((f"⛔ {esc(line)}" for line in found), "critical"))
    said = [*outcome.notes, *v.notes, *([WARN_NOTE] if outcome.warned else [])]
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
            f"<td>{verdict_badge(m.word)}</td>{''.join(cells)}<td>{vs}</td></tr>"
        )
    return (
        '<section class="overview"><h2>Models</h2><div class="scroll"><table class="grid">'
        f"<thead><tr><th>model</th><th>verdict</th>{head}<th>base → head</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>{clients_grid(outcome)}{portability(outcome)}</section>"
    )


def clients_grid(outcome: Outcome) -> str:
    """One row per model and client (evals.clients), or nothing."""
    rows = client_rows(outcome.models)
    if not rows:
        return ""
    cells = [
        f'<tr><th>{esc(r.label)}</th><td>{esc(r.client)}</td><td class="num">{esc(r.accuracy)}</td>'
        f'<td class="num">{esc(r.steal)}</td><td>{", ".join(code(t) for t in r.never_sent) or "—"}</td>'
        f'<td class="num">{esc(r.found)}</td><td>{verdict_badge(r.passed)}</td></tr>'
        for r in rows
    ]
    head = "".join(f"<th>{esc(c)}</th>" for c in CLIENT_COLUMNS)
    return (
        f'<h3>Clients</h3><div class="scroll"><table class="grid"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(cells)}</tbody></table></div>"
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
        f"<h2>{esc(m.label)} {verdict_badge(m.word)}</h2>",
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


def metrics_table(report: Report, diff: Diff | None) -> str:
    rows = []
    for key, label in METRIC_LABELS.items():
        if (m := shown_metric(report, key)) is None:
            continue
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
    if clients := client_lines(report):
        client = report.run.client
        renamed = [f"{code(old)} → {code(new)}" for old, new in (client.renamed if client else {}).items()][:100]
        listed = ul([esc(line) for line in clients]) + (f"<p>Renamed:</p>{ul(renamed)}" if renamed else "")
        out.append(block("As the client presents it", listed))
    if searched := search_lines(report):
        per_tool = report.search.per_tool if report.search else {}
        found = [f"{code(tool)}: found in {m.numerator} of {m.denominator}" for tool, m in per_tool.items()]
        out.append(
            block("Behind the API's tool search", ul([esc(line) for line in searched]) + f"<p>Per tool:</p>{ul(found)}")
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
    if cost := bill([r], [base.run] if base is not None else []):
        parts.append(esc(cost) + (f" ({esc(r.priced_by)})" if r.priced_by and r.api_calls else ""))
    if r.config:
        parts.append(f"config {code(r.config)}")
    return f'<p class="foot">{" · ".join(parts)}</p>'


def page_footer(run_url: str | None) -> str:
    run = f" · run: <code class='url'>{esc(run_url)}</code>" if run_url else ""
    return f'<footer class="page">Written by toolselect: one self-contained page that loads nothing{run}</footer>'


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
