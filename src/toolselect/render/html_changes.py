"""The HTML report's changes against the base: the metrics moved, the confusion cells that moved,
the flipped cases, and each changed tool text as a unified diff."""

from __future__ import annotations

from ..diff import CaseDelta, CaseSide, CellDelta, Diff
from ..report.schema import CaseOut, Report, SampleOut
from .common import (
    case_row,
    cases_moved,
    delta_text,
    right_text,
    trace_lines,
)
from .html_text import block, case_name, code, esc, outcome_badge, ul


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
        return f'<span class="delta {cls}">{kind}</span>: {right_text(cell.expected, cell.picked, code)}: {move}'
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
