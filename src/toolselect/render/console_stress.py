"""The stress test on the console: the curve (a table and a sparkline), the cliff, the culprits, retrieval
and name collisions."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..stress import StressReport, sparkline
from .common import pct


def print_stress(console: Console, report: StressReport) -> None:
    """The curve (a table and a sparkline), the cliff, the culprits, the collisions."""
    table = Table(title="Accuracy as the tool list grows", title_justify="left")
    for col in ("distractors", "tools", "accuracy", "95% CI", "no call", "tokens/request", "samples"):
        table.add_column(col, justify="right")
    for p in report.points:
        acc, ci = p.accuracy, p.accuracy.ci
        tokens = "" if p.tokens_per_request is None else f"{p.tokens_per_request:,.0f}"
        cliff = report.cliff is not None and p.size == report.cliff.size
        table.add_row(
            str(p.size) + (" [bold red]← cliff[/]" if cliff else ""),
            str(p.tools),
            pct(acc.value),
            f"{ci[0] * 100:.1f}–{ci[1] * 100:.1f}%" if ci else "",
            pct(p.no_call_rate.value),
            ("≈" if p.tokens_estimated and tokens else "") + tokens,
            str(p.samples),
        )
    console.print(table)
    line = sparkline([p.accuracy.value for p in report.points])
    console.print(f"accuracy {line}  ({', '.join(str(p.size) for p in report.points)} distractors)")
    c = report.cliff
    if c is not None:
        console.print(
            f"[bold red]cliff[/] at {c.size} distractors: {c.delta_pt:+.1f} pt per case against your tools alone "
            f"({c.worsened} cases worse, {c.improved} better; sign test p = {c.p_value:.2g})"
        )
    else:
        console.print("[green]no cliff[/]: accuracy is never significantly below your tools alone")
    if report.culprits:
        culprits = Table(title="Culprits: distractors picked instead of your tools", title_justify="left")
        for col in ("distractor", "server", "instead of", "times", "at sizes"):
            culprits.add_column(col, justify="right" if col == "times" else "left")
        for k in report.culprits[:15]:
            culprits.add_row(
                escape(k.distractor), escape(k.server), escape(k.instead_of), str(k.count),
                ", ".join(map(str, k.sizes)),
            )  # fmt: skip
        console.print(culprits)
    if report.retrieval is not None:
        rv = report.retrieval
        recall = " · ".join(f"@{k} {pct(r.value, 0)}" for k, r in rv.recall.items())
        console.print(
            f"[bold]retrieval[/] ({escape(rv.retriever)}, over all {rv.pool_tools} tools): recall {recall}; "
            f"selection with the top {rv.top_k} offered {pct(rv.accuracy_top_k.value)} "
            f"({rv.accuracy_top_k.numerator}/{rv.accuracy_top_k.denominator}) vs "
            f"{pct(rv.accuracy_all.value)} ({rv.accuracy_all.numerator}/{rv.accuracy_all.denominator}) with all"
        )
    if report.collisions:
        shown = ", ".join(
            f"{escape(c.tool)} ({escape(c.server)}) → {escape(c.offered_as)}" for c in report.collisions[:8]
        )
        more = f" and {len(report.collisions) - 8} more" if len(report.collisions) > 8 else ""
        console.print(f"[yellow]name collisions[/], prefixed as clients do: {shown}{more}")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    r = report.run
    console.print(f"[dim]{r.api_calls} API calls, {r.cache_hits} cache hits, {r.duration_s:.1f} s[/]")
