"""What a client did to the surface, in words and in the comment's table (evals.clients): the
names it gave, the tools it never sent, the picks of its own tools, what its search found. Plain
text; each view escapes it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..outcome import ModelOutcome
from ..report.schema import ClientOut, Report
from .common import frac, interval, pct, rate_change
from .escape import code, esc

if TYPE_CHECKING:  # a run with no base loads no diff
    from ..diff import Diff


def steal_text(report: Report) -> str:
    """`25.0% (1/4)`: the share of picks a client's own tools took from the server's, or `—`."""
    return f"{pct(report.steal.rate)} ({frac(report.steal.rate)})" if report.steal else "—"


def client_lines(report: Report, diff: Diff | None = None) -> list[str]:
    """What the client a report was asked through did to the surface, and what its search found
    (plain text: each view escapes it). Nothing for the raw tool list."""
    c = report.run.client
    if c is None:
        return []
    first = next(iter(c.renamed.values()), None)
    if c.driven is not None:  # the real client asked each sample: what it sent is its own
        lines = [f"{c.title} {c.driven}, driven: the real client, run for each sample against a local endpoint"]
        if c.driven_as:
            lines.append(f"taking the endpoint {c.driven_as}")
        if c.network:
            lines.append(f"its network: {c.network}")
    else:
        seen = f"emulated: {c.observed} as captured {c.checked}" if c.observed else f"emulated: facts of {c.checked}"
        lines = [
            f"{c.title} ({seen}): {len(report.surface.tools) - len(c.dropped)} of "
            f"{len(report.surface.tools)} tools sent" + (f", named like {first}" if first else "")
        ]
    if c.refused:
        lines.append(f"nothing was sent: {c.refused}")
    if c.dropped:
        shown = ", ".join(f"{d.tool} (#{d.position + 1})" for d in c.dropped[:6])
        lines.append(f"never sent: {shown}{f' and {len(c.dropped) - 6} more' if len(c.dropped) > 6 else ''}")
    if c.grouped:
        lines.append(f"{len(c.grouped)} tools behind its tool groups, not offered in this emulation")
    if c.builtins:
        lines.append(
            f"{len(c.builtins)} built-in tools offered first ({', '.join(c.builtins[:5])}"
            f"{', …' if len(c.builtins) > 5 else ''})"
        )
    if c.alongside:
        shown = ", ".join(f"{server} ({n} tools)" for server, n in c.alongside.items())
        lines.append(f"beside other servers, named as {c.title} names them: {shown}")
    if report.steal is not None:
        took = ", ".join(f"{tool} {n}" for tool, n in list(report.steal.by.items())[:5])
        lines.append(
            f"steal rate {steal_text(report)}, 95% CI {interval(report.steal.rate)}: samples that expected your "
            f"tool and got the client's own or another server's" + (f" ({took})" if took else "")
        )
    if (moved := rate_change("steal rate", diff.steal if diff else None)) is not None:
        lines.append(moved)
    s = report.search
    if c.deferred and s is not None:
        lines.append(
            f"definitions behind its search: the expected tool found in {s.found} of {s.samples} samples "
            f"(recall@{s.k} {pct(s.recall)}); found but not picked {s.found_not_picked}; never found {s.never_found}"
        )
        missed = [(t, m) for t, m in s.per_tool.items() if m.value is not None and m.value < 1]
        if missed:
            lines.append(
                "not found by its search: " + ", ".join(f"{t} {m.numerator}/{m.denominator}" for t, m in missed[:8])
            )
    return lines


def _listed(expect: str | list[str] | None) -> list[str]:
    return [expect] if isinstance(expect, str) else list(expect or [])


CLIENT_COLUMNS = ("", "client", "accuracy", "steal rate", "never sent (expected)", "search found", "gate")


@dataclass(frozen=True)
class ClientRow:
    """One model asked through one client, in plain text (each view escapes it)."""

    label: str
    client: str
    accuracy: str
    steal: str
    never_sent: tuple[str, ...]  # golden tools the client never sends
    found: str
    passed: bool


def client_rows(models: Sequence[ModelOutcome]) -> list[ClientRow]:
    """With clients (evals.clients), one row per model and client; empty when no model was asked
    through a client."""
    if not any(m.head.run.client for m in models):
        return []
    rows = []
    for m in models:
        c, head = m.head.run.client, m.head
        expected = {t for case in head.cases for t in _listed(case.expect_tool)}
        search = head.search
        rows.append(
            ClientRow(
                m.label,
                (c.title if c else "the raw tool list")
                + (f" {mode(c)}" if c and c.name != "raw" else "")  # the raw list is no client to emulate
                + (" (nothing sent)" if c and c.refused else ""),
                pct(head.metrics["accuracy"]),
                steal_text(head),
                tuple(d.tool for d in c.dropped if d.tool in expected) if c else (),
                f"{search.found}/{search.samples} (@{search.k})" if search is not None else "—",
                m.verdict.passed,
            )
        )
    return rows


def mode(c: ClientOut) -> str:
    """How a client was asked: `2.1.332 (driven)`, `2.1.332 (driven as a gateway)`, `(emulated: 2.1.332 as
    captured)`, `(emulated)`."""
    if c.driven:
        return f"{c.driven} (driven{' as a gateway' if c.gateway else ''})"
    return f"(emulated: {c.observed} as captured)" if c.observed else "(emulated)"


def clients_table(models: Sequence[ModelOutcome]) -> list[str]:
    """The comment's client table (Markdown), or nothing."""
    rows = client_rows(models)
    if not rows:
        return []
    lines = ["| " + " | ".join(CLIENT_COLUMNS).strip() + " |", "|" + "---|" * len(CLIENT_COLUMNS)]
    for r in rows:
        never = ", ".join(code(t) for t in r.never_sent[:3]) + (" …" if len(r.never_sent) > 3 else "") or "—"
        lines.append(
            f"| {esc(r.label)} | {esc(r.client)} | {r.accuracy} | {r.steal} | {never} | {r.found} "
            f"| {'✅' if r.passed else '❌'} |"
        )
    return [*lines, ""]
