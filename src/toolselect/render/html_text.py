"""The HTML report's small parts: escaping (every string of a report goes through `esc`), names,
badges, lists and blocks."""

from __future__ import annotations

import html
from collections.abc import Iterable

from ..report.reading import right_cell
from ..report.schema import CaseOut
from .common import (
    LOWER_IS_BETTER,
    delta_text,
)
from .escape import visible


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


def cell_title(row: str, column: str) -> str:
    if row == column:
        return f"right tool: {row}"
    if right_cell(row, column):
        return f"no call, rightly: {column}"
    return f"wanted {row}, got {column}"


def outcome_badge(outcome: str) -> str:
    kind = {"PASS": "ok", "NOT-EVALUATED": "muted", "SEL-SUBOPTIMAL": "warn"}.get(outcome, "bad")
    return f'<span class="tag {kind}">{esc(outcome)}</span>'


BADGES = {"passed": ("pass", "PASS"), "failed": ("fail", "FAIL"), "would fail": ("warn", "WOULD FAIL"),
          "inconclusive": ("warn", "INCONCLUSIVE")}  # fmt: skip


def verdict_badge(verdict: bool | str) -> str:
    """A verdict's badge: by its word (Outcome.word), or passed (True) / failed (False)."""
    word = verdict if isinstance(verdict, str) else "passed" if verdict else "failed"
    kind, text = BADGES[word]
    return f'<span class="badge {kind}">{text}</span>'


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


def mini_badge(passed: bool) -> str:
    return (
        '<span class="dot pass" title="passed">✓</span>' if passed else '<span class="dot fail" title="failed">✗</span>'
    )


def block(title: str, body: str, cls: str = "") -> str:
    return f'<section class="block {cls}"><h3>{title}</h3>{body}</section>'
