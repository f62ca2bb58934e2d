"""The PR comment (and the job summary): the verdict first, then what changed against the base.

The body fits the budget (60,000 characters for a comment, 1 MiB for a summary): when it doesn't,
the least important sections are collapsed and dropped first, and the comment says what was cut.
Everything from the repo or the model is escaped; holdout prompts and names are never printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diff import CaseDelta, Diff
from ..gate import gate_of, significance_text
from ..report.reading import case_headline
from ..report.schema import OPTIONAL_METRICS, Report, shown_metric
from .clients import client_lines, clients_table
from .common import (
    CLUSTER_NOTE,
    DIMENSION_LABELS,
    HEADLINE_METRICS,
    METRIC_LABELS,
    bill,
    case_row,
    cases_moved,
    cell_line,
    codes_text,
    delta_text,
    dimension_rows,
    frac,
    interval,
    lint_summary,
    metric_text,
    pct,
    trace_lines,
)
from .effect import descriptions_only
from .escape import code, esc, fence
from .findings import news
from .headline import ICONS, WARN_NOTE, critical_list, paired_line, signed, title_line
from .markdown import cases_table, confusion_table, flaky_list, lint_list, position_rows
from .search import search_lines

COMMENT_LIMIT = 60_000
SUMMARY_CHARS = 1_000_000  # the job summary's budget, in characters (GitHub allows 1 MiB)
MAX_ROWS = 50
MAX_DETAIL_LINES, MAX_DETAIL_CHARS = 60, 6000  # of what a base that failed said: its last lines
MAX_TRACED = 10  # flipped trajectory cases whose traces the comment shows side by side

if TYPE_CHECKING:
    from ..outcome import ModelOutcome, Outcome
    from ..portability import Portability


def marker(comment_id: str) -> str:
    return f"<!-- toolselect:{comment_id} -->"


@dataclass(frozen=True)
class Section:
    title: str
    body: str
    priority: int  # lower is cut first
    folded: bool = True

    def render(self) -> str:
        if not self.folded:
            return self.body
        return f"<details><summary>{self.title}</summary>\n\n{self.body}\n\n</details>"


def metrics_delta_table(head: Report, diff: Diff | None) -> list[str]:
    keys = [*HEADLINE_METRICS, *(k for k in sorted(OPTIONAL_METRICS) if shown_metric(head, k) is not None)]
    if diff is None:
        out = ["| metric | head | 95% CI |", "|---|---:|---:|"]
        for key in keys:
            m = head.metrics[key]
            out.append(f"| {METRIC_LABELS[key]} | {metric_text(m, head, key)} ({frac(m)}) | {interval(m)} |")
    else:
        out = ["| metric | base | head | head 95% CI | Δ |", "|---|---:|---:|---:|---:|"]
        for key in keys:
            d = diff.metrics[key]
            base = metric_text(d.base, head, key) if d.base is not None else "n/a"
            out.append(
                f"| {METRIC_LABELS[key]} | {base} | {metric_text(d.head, head, key)} ({frac(d.head)}) | "
                f"{interval(d.head)} | {delta_text(d.delta_pt)} |"
            )
    if any(interval(head.metrics[k]).endswith("†") for k in HEADLINE_METRICS):
        out += ["", CLUSTER_NOTE]
    return out


def _case_name(case: CaseDelta) -> str:
    return f"holdout case ({esc(case.file)}:{case.line})" if case.holdout else esc(case.name)


def flips_table(cases: list[CaseDelta]) -> list[str]:
    out = ["| case | expected | base pick | head pick |", "|---|---|---|---|"]
    for case in cases[:MAX_ROWS]:
        expected = case.expected
        rate = lambda s: f" {s.passed}/{s.evaluated}" if s.evaluated > 1 else ""  # noqa: E731
        certain = f" **certain** (p = {case.p_value:.2g})" if case.certain else ""
        out.append(
            f"| {_case_name(case)}{certain} | {code(expected)} | {code(case.base.pick)}{rate(case.base)} | "
            f"{code(case.head.pick)}{rate(case.head)} |"
        )
    if len(cases) > MAX_ROWS:
        out.append(f"| … {len(cases) - MAX_ROWS} more | | | |")
    return out


def dimensions_delta_table(head: Report, base: Report | None, diff: Diff | None) -> list[str]:
    """Seed 004's dimensions of the trajectory cases, base → head with Δ (or the head's alone), and
    the failure codes on each side."""
    if head.dimensions is None and (diff is None or diff.dimensions is None):
        return []
    rows = dimension_rows(head.dimensions or {})
    if diff is None or diff.dimensions is None:
        out = ["| dimension | mean (0–3) | 95% CI | scores 0:1:2:3 | n |", "|---|---:|---:|---:|---:|"]
        out += [f"| {r.label} | {r.mean} | {r.ci} | {r.distribution} | {r.n} |" for r in rows]
        return [*out, "", f"Failure codes: {esc(codes_text(head.failure_codes or {}))}"]
    out = ["| dimension | base | head | head 95% CI | head 0:1:2:3 | Δ |", "|---|---:|---:|---:|---:|---:|"]
    now = {r.label: r for r in rows}
    for name, d in diff.dimensions.items():
        show = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
        row = now.get(DIMENSION_LABELS[name])
        if d.delta is None:
            delta = ""
        elif d.delta == 0:
            delta = "±0.00"
        else:
            delta = f"{d.delta:+.2f}".replace("-", "−") + (" 🔻" if d.delta < 0 else "")
        ci, spread = (row.ci, row.distribution) if row else ("", "")
        out.append(f"| {DIMENSION_LABELS[name]} | {show(d.base)} | {show(d.head)} | {ci} | {spread} | {delta} |")
    codes = sorted(set(head.failure_codes or {}) | set(base.failure_codes or {} if base else {}))
    moved = [
        f"{c} {(base.failure_codes or {}).get(c, 0) if base else 0} → {(head.failure_codes or {}).get(c, 0)}"
        for c in codes
    ]
    return [*out, "", "Failure codes (base → head): " + (esc(" · ".join(moved)) if moved else "none")]


def traces_side_by_side(cases: list[CaseDelta], base: Report, head: Report) -> list[str]:
    """For each flipped trajectory case, its headline sample's trace on both sides, collapsed."""
    before = {c.name: c for c in base.cases}
    after = {c.name: c for c in head.cases}
    out = []
    shown = [c for c in cases if c.expect_calls is not None and c.name in before and c.name in after]
    for case in shown[:MAX_TRACED]:
        sides = [case_headline(before[case.name])[1], case_headline(after[case.name])[1]]
        cells = [
            "<br>".join(esc(line) for line in trace_lines(s, with_args=not case.holdout)) if s else "" for s in sides
        ]
        out += [
            f"<details><summary>{_case_name(case)}: {esc(case.base.outcome)} → {esc(case.head.outcome)}</summary>",
            "",
            "| base | head |",
            "|---|---|",
            f"| {cells[0] or '(no trace)'} | {cells[1] or '(no trace)'} |",
            "",
            "</details>",
        ]
    if len(shown) > MAX_TRACED:
        out.append(f"… and {len(shown) - MAX_TRACED} more flipped trajectory cases (their traces are in the reports)")
    return out


def footer(outcome: Outcome, run_url: str | None, artifact: str | None = None) -> str:
    head, base = outcome.head, outcome.base
    r = head.run
    samples = f" × {r.repeat} samples" if r.repeat > 1 else ""
    if outcome.several:
        names = ", ".join(f"{esc(m.label)} {code((m.head.run.provider + ' ' + m.head.run.model).strip())}"
                          for m in outcome.models)  # fmt: skip
        parts = [f"models {names}", f"{head.counts.cases} cases{samples}"]
    else:
        parts = [
            f"provider {code(r.provider)}" + (f" · model {code(r.model)}" if r.model else ""),
            f"{head.counts.cases} cases{samples}",
        ]
    if r.cache_mode != "off":  # an API provider: what each side cost
        bases = [m.base for m in outcome.models if m.base is not None]
        if bases:
            calls, hits = sum(b.run.api_calls for b in bases), sum(b.run.cache_hits for b in bases)
            parts.append(f"base: {calls} API calls, {hits} cache hits")
        calls, hits = (
            sum(m.head.run.api_calls for m in outcome.models),
            sum(m.head.run.cache_hits for m in outcome.models),
        )
        parts.append(f"head: {calls} API calls, {hits} cache hits")
    hashes = f"surface {code(head.surface.hash[:12])}"
    if base is not None and base.surface.hash != head.surface.hash:
        hashes = f"surface {code(base.surface.hash[:12])} → {code(head.surface.hash[:12])}"
    parts.append(hashes)
    if run_url:
        parts.append(f"[run]({run_url})")
        if artifact:  # the HTML report, in the artifact the workflow uploads (a name we checked: [A-Za-z0-9._-])
            parts.append(f"[HTML report]({run_url}#artifacts) (artifact {code(artifact)})")
    cost = bill([m.head.run for m in outcome.models], [m.base.run for m in outcome.models if m.base is not None])
    return (f"<sub>{cost}</sub>\n\n" if cost else "") + "<sub>" + " · ".join(parts) + "</sub>"


def render_comment(
    outcome: Outcome,
    *,
    comment_id: str | None = "default",
    run_url: str | None = None,
    limit: int = COMMENT_LIMIT,
    summary_hint: bool = True,
    artifact: str | None = None,
) -> str:
    """The PR comment (with `comment_id`'s hidden marker), or without a marker the job summary. With
    several models: one line per model, what moved in opposite directions for two models, then each
    model's part under its label."""
    verdict = outcome.verdict
    top = [marker(comment_id)] if comment_id else []
    if outcome.several:
        top += [f"### {ICONS[outcome.word]} toolselect {outcome.word}: {len(outcome.models)} models", ""]
        top += [model_line(m) for m in outcome.models]
        top.append("")
        for m in outcome.models:  # each model's critical misroutes, before any number
            if found := critical_list(m.head):
                top += [f"{code(m.label)}: {found[0]}", *found[1:]]
        top += clients_table(outcome.models)
        said = [*outcome.notes, *verdict.notes]
    else:
        one = outcome.models[0]
        head, diff, base_note = outcome.head, outcome.diff, outcome.base_note
        top += [title_line(verdict, head, diff, base_note, outcome.base_failure, one.base_fails_too, outcome.word)]
        top += ["", *critical_list(head)]  # what matters most, before any number
        paired = paired_line(diff, verdict, gate_of(head).significance)
        lead = descriptions_only(diff, one.base, head, paired)  # a rewrite PR: its measured effect first
        top += lead or ([paired, ""] if paired is not None else [])
        said = [*outcome.notes, *verdict.notes, *([base_note] if base_note and diff is None else [])]
    said += [WARN_NOTE] if outcome.warned else []
    top += [f"- {'⚠️' if outcome.warned else '❌'} {esc(reason)}" for reason in verdict.reasons]
    top += [f"- ℹ️ {esc(note)}" for note in said]
    failed = outcome.base_failure
    if failed is not None and failed.hint:
        top.append(f"- 💡 {esc(failed.hint)}")
    if verdict.reasons or said or failed is not None:
        top.append("")
    if failed is not None and failed.details:
        said_there = "\n".join(failed.details.splitlines()[-MAX_DETAIL_LINES:])[-MAX_DETAIL_CHARS:]
        top += [f"<details><summary>What the base said</summary>\n\n{fence(said_there)}\n\n</details>", ""]
    stress = None
    if outcome.stress is not None:
        from .stress import CHART_TITLE, stress_markdown

        chart = stress_markdown(outcome.stress, outcome.base_stress)
        of = f" ({esc(outcome.models[0].label)})" if outcome.several else ""
        stress = Section("Stress test", f"**Stress: {CHART_TITLE.lower()}**{of}\n\n{chart}", 66, folded=False)
    sections: list[Section] = []
    if outcome.several:
        moved = outcome.portability
        if moved:
            sections.append(Section("Portability", "\n".join(portability_lines(moved)), 93, folded=False))
        for i, m in enumerate(outcome.models):
            sections += model_sections(m, label=m.label, rank=i, stress=stress, whole=comment_id is None)
    else:
        top += [*metrics_delta_table(outcome.head, outcome.diff), ""]
        sections += model_sections(outcome.models[0], stress=stress, whole=comment_id is None)
    if outcome.suggestions:  # actionable: first of the sections, and among the last cut
        from .suggest import suggestions_markdown

        sections.insert(0, Section("Description rewrites", suggestions_markdown(outcome.suggestions), 92, False))
    notes = []
    pending = outcome.head.counts.pending_cases
    if pending:
        notes.append(f"{pending} cases need review: scored and shown, not counted by the gate.")
    unasked = sum(m.head.counts.not_evaluated for m in outcome.models)
    if unasked:
        notes.append(f"{unasked} samples NOT-EVALUATED (not in the answer cache): the gate judged the rest.")
    end = [("> " + " ".join(notes)) if notes else "", footer(outcome, run_url, artifact)]
    return _fit(top, sections, end, limit, summary_hint)


def model_line(m: ModelOutcome) -> str:
    """One model's line at the top of a comment of several: its accuracy base → head, Δ, significance."""
    icon = ICONS[m.word]
    acc = m.head.metrics["accuracy"]
    run = f"{m.head.run.provider} {m.head.run.model}".strip()
    if m.diff is not None and m.diff.metrics["accuracy"].base is not None:
        d = m.diff.metrics["accuracy"]
        change = f"accuracy {pct(d.base)} → {pct(acc)} ({delta_text(d.delta_pt)}"
        paired = m.diff.paired
        change += f", {significance_text(m.diff)})" if paired.cases and (paired.improved or paired.worsened) else ")"
    elif m.base_failure is not None:
        change = f"accuracy {pct(acc)} ({frac(acc)}) · no comparison: the base could not be evaluated"
    else:
        change = f"accuracy {pct(acc)} ({frac(acc)})" + (f" · {esc(m.base_note)}" if m.base_note else "")
    return f"- {icon} **{esc(m.label)}** ({code(run)}): {change}"


def portability_lines(moved: Portability) -> list[str]:
    """Cases and cells the change moved in opposite directions for two models."""
    out = ["**Portability** — the change helped one model and hurt another", ""]
    if moved.cases:
        out += ["| case | better for | worse for |", "|---|---|---|"]
        for c in moved.cases[:MAX_ROWS]:
            helped = ", ".join(f"{esc(label)} {rates}" for label, rates in c.helped)
            hurt = ", ".join(f"{esc(label)} {rates}" for label, rates in c.hurt)
            out.append(f"| {esc(c.name)} ({esc(c.file)}:{c.line}) | {helped} | {hurt} |")
        if len(moved.cases) > MAX_ROWS:
            out.append(f"| … {len(moved.cases) - MAX_ROWS} more | | |")
        out.append("")
    for cell in moved.cells[:MAX_ROWS]:
        up = lambda moves: ", ".join(f"{esc(label)} ({_count(d)})" for label, d in moves)  # noqa: E731
        if cell.expected == cell.picked:
            out.append(f"- {code(cell.expected)} picked right: more often for {up(cell.helped)}, less often for "
                       f"{up(cell.hurt)}")  # fmt: skip
        else:
            out.append(f"- wanted {code(cell.expected)}, got {code(cell.picked)}: less often for {up(cell.helped)}, "
                       f"more often for {up(cell.hurt)}")  # fmt: skip
    return out


def _count(delta: int) -> str:
    return f"+{delta}" if delta > 0 else f"−{-delta}"


def model_sections(
    m: ModelOutcome, *, label: str = "", rank: int = 0, stress: Section | None = None, whole: bool = False
) -> list[Section]:
    """One model's part of the comment: what changed against its base (or its misses), its matrix,
    flaky cases and cases. With a `label` (several models) each section says which model it is
    about, and later models' sections are cut first. What is the same for every model — the tool
    surface's changes and findings, the `stress` test (the first model's) — comes with the first.
    `whole` (the job summary): every lint finding, not only what a pull request brought."""
    head, base, diff = m.head, m.base, m.diff
    sections: list[Section] = []

    def add(title: str, text: str, priority: int, folded: bool = True) -> None:
        if label:
            title = f"{esc(label)}: {title}" if title else ""
            text = text if folded else f"**{esc(label)}** · {text}"
            priority -= min(rank, 4)
        sections.append(Section(title, text, priority, folded))

    if label:
        add("metrics", "\n".join(metrics_delta_table(head, diff)), 85)
    dimensions = dimensions_delta_table(head, base, diff)
    if dimensions:
        title = "**Trajectories** — the tool-use dimensions" + (" (base → head)" if diff and diff.dimensions else "")
        add("", title + "\n\n" + "\n".join(dimensions), 92, folded=False)
    if diff is not None:
        confusions = [c for c in diff.cells if not c.diagonal]
        if confusions:
            text = "\n".join(cell_line(c) for c in confusions[:15])
            if len(confusions) > 15:
                text += f"\n- … {len(confusions) - 15} more cells changed (full matrix below)"
            add("", "**Confusion cells that changed** (base → head)\n\n" + text, 90, folded=False)
        moved = cases_moved(diff)
        if moved:
            add("", "Cases: " + ", ".join(f"**{p}**" if stressed else p for p, stressed in moved), 95, folded=False)
        if diff.to_failing:
            certain = sum(c.certain for c in diff.to_failing)
            title = f"Flipped to failing ({len(diff.to_failing)}" + (f", {certain} certain)" if certain else ")")
            add(title, "\n".join(flips_table(diff.to_failing)), 80)
        if diff.to_passing:
            add(f"Flipped to passing ({len(diff.to_passing)})", "\n".join(flips_table(diff.to_passing)), 60)
        traces = traces_side_by_side(diff.to_failing + diff.to_passing, base, head) if base is not None else []
        if traces:
            add("", "**Traces of the flipped trajectory cases**\n\n" + "\n".join(traces), 75, folded=False)
        if diff.tools and rank == 0:  # the surface is the same for every model: its changes are said once
            blocks = []
            for change in diff.tools:
                kind = {
                    "added": "added",
                    "removed": "removed",
                    "description": "description changed",
                    "schema": "input schema changed",
                }[change.kind]
                blocks.append(f"{code(change.name)} — {kind}")
                if change.diff:
                    blocks.append(fence(change.diff, "diff"))
            title = f"Tool surface changes ({len(diff.tools)})"
            sections.append(Section(title, "\n\n".join(blocks), 70))
        if diff.new_cases or diff.removed_cases:
            hidden = {c.name for c in (*head.cases, *(base.cases if base else ())) if c.split == "holdout"}
            shown = lambda n: "a holdout case" if n in hidden else esc(n)  # noqa: E731
            listed = [f"- new: {shown(n)}" for n in diff.new_cases[:MAX_ROWS]] + [
                f"- removed: {shown(n)}" for n in diff.removed_cases[:MAX_ROWS]
            ]
            add(f"New and removed cases ({len(diff.new_cases) + len(diff.removed_cases)})", "\n".join(listed), 30)
    else:
        rows = [case_row(c) for c in head.cases]
        failing = [r for r in rows if r.failing]
        if failing:
            add(f"Cases that missed ({len(failing)})", "\n".join(cases_table(failing[:MAX_ROWS])), 80)
    if stress is not None and rank == 0:
        sections.append(stress)
    if head.flaky:
        add(
            f"Flaky cases ({len(head.flaky)})", "They pass some samples, not all.\n\n" + "\n".join(flaky_list(head)), 55
        )
    if head.position:
        add(
            "Accuracy by the expected tool's position",
            "Each sample saw the tools in a seeded, shuffled order.\n\n" + "\n".join(position_rows(head)),
            45,
        )
    if diff is not None and diff.paired.cases:
        p = diff.paired
        text = (
            f"Paired over the {p.cases} cases on both sides: {p.improved} improved, {p.worsened} got worse; "
            f"{p.test}: p = {p.p_value:.2g}. Mean per-case change {delta_text(p.delta_pt)}"
            + (
                f", 95% CI {signed(p.ci_pt[0])}…{signed(p.ci_pt[1])} pt (paired bootstrap over cases)."
                if p.ci_pt
                else "."
            )
            + f" A case's flip is *certain* when Fisher's exact test on its own samples gives p < {p.alpha:g}."
        )
        add("How sure is this?", text, 35)
    if clients := client_lines(head, diff):
        add("As the client presents it", "\n".join(f"- {esc(line)}" for line in clients), 65)
    if searched := search_lines(head, diff):
        add("Behind the API's tool search", "\n".join(f"- {esc(line)}" for line in searched), 64)
    if head.lint and rank == 0:
        sections += _lint(head, None if whole else base, diff)
    matrix = confusion_table(head, base if diff is not None else None)
    if matrix:
        title = "Confusion matrix (head; Δ vs base in brackets)" if diff is not None else "Confusion matrix"
        add(title, "Rows: the expected tool; columns: the tool picked.\n\n" + "\n".join(matrix), 50)
    rows = [case_row(c) for c in head.cases]
    add(f"All cases ({len(rows)})", "\n".join(cases_table(rows)), 10)
    if head.surface.left_out and rank == 0:
        lo = "\n".join(f"- {code(x.name)}: {esc(x.reason)}" for x in head.surface.left_out)
        sections.append(Section(f"Left out of the tool surface ({len(head.surface.left_out)})", lo, 40))
    return sections


def _lint(head: Report, base: Report | None, diff: Diff | None) -> list[Section]:
    """The lint findings; on a pull request only those it brought (new against the base, or about a tool
    it changed): the rest were there before and are the job summary's."""
    if base is None or diff is None:
        return [Section(f"Lint: {lint_summary(head.lint)}", "\n".join(lint_list(head.lint)), 40)]
    brought = news(head.lint, base.lint, (t.name for t in diff.tools))
    if not brought:
        return []
    before = len(head.lint) - len(brought)
    said = f"Only what this pull request brought; {before} more were there before (`toolselect lint` lists them)."
    title = f"Lint: {lint_summary(brought)} new or on changed tools"
    return [Section(title, (said + "\n\n" if before else "") + "\n".join(lint_list(brought)), 40)]


def _fit(top: list[str], sections: list[Section], end: list[str], limit: int, summary_hint: bool) -> str:
    """Assemble; while over the limit, drop the least important section and say so."""
    kept = list(sections)
    cut: list[str] = []
    while True:
        parts = ["\n".join(top)] + [s.render() for s in kept]
        if cut:
            where = " — see the job summary for everything" if summary_hint else ""
            parts.append(f"> ✂️ Cut to fit: {', '.join(cut)}{where}.")
        parts += [e for e in end if e]
        body = "\n\n".join(p.strip("\n") for p in parts) + "\n"
        if len(body) <= limit or not kept:
            return body if len(body) <= limit else body[: limit - 20] + "\n\n(truncated)\n"
        victim = min(kept, key=lambda s: s.priority)
        kept.remove(victim)
        cut.append(victim.title.split(" (")[0].lower() or "a section")
