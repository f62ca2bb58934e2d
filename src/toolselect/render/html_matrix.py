"""The HTML report's confusion matrix: a heatmap whose cells each list their cases (which sample
falls in which cell, the same count as report.confusion), and the tables of cases."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..pick import is_foreign
from ..report.build import CLIENT_FAILED, ERROR, MISSING, UNKNOWN
from ..report.reading import case_expected, none_of, right_cell
from ..report.schema import PENDING, CaseOut, Report, SampleOut
from ..taxonomy import SampleOutcome
from .common import (
    args_text,
    hot_cells,
    labels,
    picked_label,
    trace_lines,
)
from .html_text import block, case_name, cell_title, code, esc, outcome_badge, signed, ul

Cell = tuple[str, str]  # (expected row, picked column)


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
    when no tool was called, the tool when it was `offered` (or a client's built-in), else (unknown).
    A trajectory case is placed by its first call, which is its `picked_tool`."""
    if sample.outcome == SampleOutcome.NOT_EVALUATED or case.status == PENDING:
        return None
    expected = expected_tools(case)
    picked = sample.picked_tool
    row = (
        (picked if picked is not None and picked in expected else expected[0])
        if expected
        else none_of(case.expect_reply)
    )
    if sample.outcome == SampleOutcome.ERROR:
        column = ERROR
    elif sample.outcome == SampleOutcome.CLIENT_FAILED:
        column = CLIENT_FAILED
    elif sample.outcome == SampleOutcome.TOOL_MISSING:
        column = MISSING
    elif picked is None:
        column = none_of(sample.reply.kind if sample.reply else None)
    else:
        column = picked if picked in offered or is_foreign(picked) else UNKNOWN
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
            kind = "diag" if right_cell(r, c) else "off"
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
        kind = "diag" if right_cell(r, c) else "off"
        heading = (
            (f"right tool: {code(r)}" if r == c else f"no call, rightly: {code(c)}")
            if right_cell(r, c)
            else f"wanted {code(r)}, got {code(c)}"
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
