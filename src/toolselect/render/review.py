"""The PR review's words: one inline comment per located tool — what changed for it base → head, the
confusion cells it is part of, the cases that flipped with it — and the review's short body.

Each comment starts with a hidden marker that names the tool and a key of what was found (the tool,
the file and the changed text): a later run finds its own comments by it, leaves an unchanged
finding alone, edits one whose numbers moved, and resolves one that no longer holds.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from dataclasses import dataclass

from ..impact import RateChange, ToolImpact
from ..sourcelines import Location
from .comment import flips_table
from .common import cell_line, delta_text, frac, pct
from .escape import code, esc

_MARK = re.compile(
    r"<!-- toolselect-review:([A-Za-z0-9_.-]+) tool=([^ ]*) key=([0-9a-f]+)( suggestion)?( resolved)? -->"
)
MAX_FLIPS = 10


@dataclass(frozen=True)
class Mark:
    comment_id: str
    tool: str
    key: str
    resolved: bool = False
    suggestion: bool = False  # a tested rewrite (a suggestion block), not a finding about a change

    def text(self) -> str:
        # a tool name can't end the HTML comment (a lone surrogate becomes its escape)
        tool = urllib.parse.quote(self.tool, safe="", errors="backslashreplace")
        state = (" suggestion" if self.suggestion else "") + (" resolved" if self.resolved else "")
        return f"<!-- toolselect-review:{self.comment_id} tool={tool} key={self.key}{state} -->"


def read_mark(body: str, comment_id: str) -> Mark | None:
    """The marker at the start of one of our review comments, for this comment id; else None."""
    m = _MARK.match(body or "")
    if m is None or m.group(1) != comment_id:
        return None
    return Mark(m.group(1), urllib.parse.unquote(m.group(2)), m.group(3), bool(m.group(5)), bool(m.group(4)))


def review_marker(comment_id: str) -> str:
    return f"<!-- toolselect-review:{comment_id} -->"


def finding_key(impact: ToolImpact, where: Location) -> str:
    """Same tool, same file, same changed text: the same finding (its numbers may move)."""
    text = "\x00".join(f"{c.field}\x01{c.new}" for c in impact.changes)
    return hashlib.sha256(f"{impact.tool}\x00{where.path}\x00{text}".encode(errors="surrogatepass")).hexdigest()[:16]


def _rate_row(label: str, rate: RateChange, alpha: float) -> str:
    base = f"{pct(rate.base)} ({frac(rate.base)})" if rate.base is not None else "n/a (new tool)"
    head = f"{pct(rate.head)} ({frac(rate.head)})" if rate.head.value is not None else "n/a"
    delta = delta_text(rate.delta_pt) if rate.delta_pt is not None else "n/a"
    if rate.p is not None and rate.delta_pt:
        sure = "significant" if rate.p < alpha else "could be chance"
        delta += f" · p = {rate.p:.2g}, {sure}"
    return f"| {label} | {base} | {head} | {delta} |"


def headline(impact: ToolImpact) -> str:
    name = code(impact.tool)
    who = code(impact.model) if impact.model else "the model"
    if impact.regressed:
        return f"#### 🔻 toolselect: {who} picks {name} worse since this change"
    better = any((r.delta_pt or 0) > 0 for r in (impact.recall, impact.precision)) or impact.flips
    if better:
        return f"#### ✅ toolselect: {who} picks {name} better since this change"
    return f"#### ℹ️ toolselect: {name}'s text changed; the model picks it as before"


_PARAMETER = re.compile(r"parameter `(.*)`: (description|enum)", re.DOTALL)


def field_text(field: str) -> str:
    """ "parameter `units`: enum" → "enum of parameter `units`", the name as escaped inline code."""
    m = _PARAMETER.fullmatch(field)
    return f"{m.group(2)} of parameter {code(m.group(1))}" if m else esc(field)


def inline_body(impact: ToolImpact, where: Location, mark: Mark, report_url: str | None) -> str:
    """One review comment on the lines of `where`."""
    fields = [c.field for c in impact.changes]
    here = field_text(where.field)
    others = [field_text(f) for f in fields if f != where.field]
    lines = [mark.text(), headline(impact), ""]
    lines_word = "these lines" if where.line > where.start_line else "this line"
    said = f"The {here} of {code(impact.tool)} changed on {lines_word}"
    lines.append(said + (f" (also changed: {', '.join(others)})." if others else "."))
    lines += [
        "",
        f"| {code(impact.tool)} | base | head | Δ |",
        "|---|---:|---:|---|",
        _rate_row("recall", impact.recall, impact.alpha),
        _rate_row("precision", impact.precision, impact.alpha),
    ]
    if impact.cells:
        lines += ["", f"**Confusions with {code(impact.tool)}** (base → head)", ""]
        lines += [cell_line(c) for c in impact.cells[:10]]
        if len(impact.cells) > 10:
            lines.append(f"- … {len(impact.cells) - 10} more")
    if impact.flips:
        lines += ["", f"**Cases that flipped** ({len(impact.flips)})", ""]
        lines += flips_table(list(impact.flips[:MAX_FLIPS]))
        if len(impact.flips) > MAX_FLIPS:
            lines.append(f"\n… and {len(impact.flips) - MAX_FLIPS} more in the report.")
    link = f"[the full report]({report_url})" if report_url else "the full report in the PR's toolselect comment"
    lines += [
        "",
        (
            "<sub>Recall: of the cases that want it, the share that get it; precision: of its picks, the share "
            f"that were wanted. See {link}.</sub>"
        ),
    ]
    return "\n".join(lines) + "\n"


def resolved_body(body: str, mark: Mark, why: str) -> str:
    """Our earlier comment, marked resolved, with why at the top (the rest kept as it was)."""
    rest = body.split("\n", 1)[1] if "\n" in body else ""
    if mark.suggestion:  # a withdrawn suggestion keeps its headline, never a block that could still be applied
        rest = rest.split("\n", 1)[0] + "\n"
    done = Mark(mark.comment_id, mark.tool, mark.key, resolved=True, suggestion=mark.suggestion)
    return f"{done.text()}\n> ✅ **Resolved:** {esc(why)}\n\n{rest}"


def review_body(comment_id: str, impacts: list[ToolImpact], report_url: str | None, suggested: int = 0) -> str:
    worse = sum(i.regressed for i in impacts)
    if worse == 1:
        what = "1 changed tool text made the model pick its tool worse"
    elif worse:
        what = f"{worse} changed tool texts made the model pick their tools worse"
    else:
        what = f"{len(impacts)} changed tool text{'s' if len(impacts) != 1 else ''}"
    if suggested:
        rewrites = f"{suggested} tested rewrite{'s' * (suggested != 1)} suggested"
        what = f"{what}; {rewrites}" if impacts else rewrites
    link = f" · [the full report]({report_url})" if report_url else ""
    return f"{review_marker(comment_id)}\n**toolselect:** {what}: see the comments on the lines that changed{link}.\n"


def why_resolved(tool: str, impact: ToolImpact | None, sha: str, listed: bool = True) -> str:
    """Why an earlier comment on `tool` no longer holds at commit `sha` (`listed`: the head's server
    still lists the tool)."""
    at = f"at {sha[:12]}"
    if not listed:
        return f"{at}, the server no longer lists {tool}"
    if impact is None:
        return f"{at}, the text of {tool} is the same as on the base branch again"
    if not impact.regressed:
        r, p = impact.recall, impact.precision
        return (
            f"{at}, the model picks {tool} as well as on the base (recall {pct(r.base)} → {pct(r.head)}, "
            f"precision {pct(p.base)} → {pct(p.head)})"
        )
    return f"{at}, this text is no longer where the pull request changes it; the toolselect comment has the numbers"


def why_withdrawn(tool: str, sha: str) -> str:
    """Why an earlier suggestion for `tool` is withdrawn at commit `sha`."""
    return (
        f"at {sha[:12]}, this rewrite of {tool} is no longer suggested: the description changed since (or was "
        "accepted), or a newer rewrite replaces it"
    )


def annotation_text(impact: ToolImpact, where: Location) -> str:
    """One line for a workflow annotation on the changed text (plain text: annotations are not Markdown)."""
    r, p = impact.recall, impact.precision
    parts = [
        f"{where.field.replace('`', '')} of {impact.tool} changed" + (f" ({impact.model})" if impact.model else "")
    ]
    if r.base is not None:
        parts.append(f"recall {pct(r.base)} → {pct(r.head)}, precision {pct(p.base)} → {pct(p.head)}")
    grew = [c for c in impact.cells if c.delta > 0]
    if grew:
        parts.append("; ".join(f"wanted {c.expected}, got {c.picked}: {c.base} → {c.head}" for c in grew[:3]))
    failing = sum(1 for f in impact.flips if f.head.outcome != "PASS")
    if failing:
        parts.append(f"{failing} case{'s' if failing != 1 else ''} flipped to failing")
    return ". ".join(parts)
