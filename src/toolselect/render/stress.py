"""The stress test in Markdown (a report of its own, and the PR comment's section): a Mermaid
`xychart-beta` line chart of accuracy against the tools offered — GitHub renders it — for the base
and the head, the cliff, the culprits and retrieval. Only numbers go inside the chart; every name
from the repo or the pool is escaped in the tables."""

from __future__ import annotations

from ..stress import StressReport
from .common import pct
from .escape import code, esc

CHART_TITLE = "Accuracy as the tool list grows"


def _value(report: StressReport | None, size: int) -> float | None:
    point = next((p for p in report.points if p.size == size), None) if report else None
    return None if point is None or point.accuracy.value is None else round(point.accuracy.value * 100, 1)


def mermaid_chart(head: StressReport, base: StressReport | None = None) -> str:
    """The curve as a Mermaid line chart: the x axis is the distractors added at each size, one line
    per side (the base first when there is one). A size one side lacks is drawn at 0 — never the
    case for two runs of the same config."""
    sizes = [p.size for p in head.points if _value(head, p.size) is not None]  # nothing evaluated: not drawn
    if base is not None:
        sizes = [s for s in sizes if _value(base, s) is not None]
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{CHART_TITLE}"',
        f'    x-axis "distractors added" [{", ".join(str(s) for s in sizes)}]',
        '    y-axis "accuracy (%)" 0 --> 100',
    ]
    sides = [base, head] if base is not None else [head]
    for side in sides:
        values = [_value(side, s) for s in sizes]
        lines.append(f"    line [{', '.join(f'{v:g}' if v is not None else '0' for v in values)}]")
    return "\n".join([*lines, "```"])


def _cliff_text(report: StressReport | None) -> str:
    if report is None:
        return "n/a"
    c = report.cliff
    return "none" if c is None else f"at {c.size} (p = {c.p_value:.2g}, {_signed(c.delta_pt)} pt per case)"


def _signed(points: float) -> str:
    return "±0.0" if abs(points) < 0.05 else f"{points:+.1f}".replace("-", "−")


def stress_markdown(head: StressReport, base: StressReport | None = None, culprits: int = 10) -> str:
    out = [mermaid_chart(head, base), ""]
    if base is not None:
        out += ["Lines: the base, then the head.", ""]
        out += ["| distractors | tools | base | head | Δ |", "|---:|---:|---:|---:|---:|"]
        for p in head.points:
            before = _value(base, p.size)
            now = p.accuracy.value
            delta = "" if before is None or now is None else f"{_signed(now * 100 - before)} pt"
            shown = "n/a" if before is None else f"{before:.1f}%"
            out.append(f"| {p.size} | {p.tools} | {shown} | {pct(p.accuracy.value)} | {delta} |")
        out += ["", f"**Cliff**: base {_cliff_text(base)} → head {_cliff_text(head)}", ""]
    else:
        out += ["| distractors | tools | accuracy | 95% CI | no call |", "|---:|---:|---:|---:|---:|"]
        for p in head.points:
            ci = p.accuracy.ci
            interval = f"{ci[0] * 100:.1f}–{ci[1] * 100:.1f}%" if ci else ""
            out.append(f"| {p.size} | {p.tools} | {pct(p.accuracy.value)} | {interval} | {pct(p.no_call_rate.value)} |")
        out += ["", f"**Cliff**: {_cliff_text(head)}", ""]
    if head.culprits:
        out += ["**Culprits**: distractors picked instead of your tools", ""]
        out += ["| distractor | server | instead of | times | at sizes |", "|---|---|---|---:|---|"]
        for k in head.culprits[:culprits]:
            sizes = ", ".join(str(s) for s in k.sizes)
            out.append(f"| {code(k.distractor)} | {esc(k.server)} | {code(k.instead_of)} | {k.count} | {sizes} |")
        if len(head.culprits) > culprits:
            out.append(f"| … {len(head.culprits) - culprits} more | | | | |")
        out.append("")
    rv = head.retrieval
    if rv is not None:
        recall = ", ".join(f"@{esc(k)} {pct(r.value, 0)}" for k, r in rv.recall.items())
        said = (
            f"**Retrieval** ({esc(rv.retriever)}, over all {rv.pool_tools} tools): recall {recall}; selection "
            f"with the top {rv.top_k} offered {pct(rv.accuracy_top_k.value)} vs {pct(rv.accuracy_all.value)} with "
            "every tool offered."
        )
        out += [said, ""]
    if head.collisions:
        out += [f"{len(head.collisions)} name collisions, offered as `server__tool`.", ""]
    return "\n".join(out).rstrip("\n") + "\n"
