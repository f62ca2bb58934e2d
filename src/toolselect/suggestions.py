"""Where a tested rewrite lands in a pull request. Pure: reports, texts and patches in, values out.

Which tools to rewrite (`targets`: those whose recall the PR lowered, or the sides of the hottest
confusion cells), and, for a rewrite that passed the held-out test, the lines of its source file it
replaces (`place`): a one-click suggestion when every one of them is in the PR's diff (GitHub takes
a suggestion nowhere else), else a unified diff the sticky comment carries folded. A rewrite that did
not pass is never placed: its note says what was tried.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from .acceptance import Judged
from .literal import NotWritten, Rewrite, applied, rewrite, unified
from .report.schema import Report

MAX_SUGGESTED = 3  # tools rewritten in one pull request
Mode = Literal["regressions", "confusions"]


@dataclass(frozen=True)
class Suggestion:
    """One target tool's rewrite as the PR is told it."""

    tool: str
    note: str  # accepted: the held-out evidence; else what was tried and why none passed
    rewriter: str  # provider:model
    tried: int
    judged: Judged | None = None  # the best candidate's held-out test
    description: str = ""  # the accepted text
    path: str | None = None  # the file holding the description, from the repository's root
    rewrite: Rewrite | None = None  # its lines and their replacement
    patch: str = ""  # the file's unified diff
    in_diff: bool = False  # every line it replaces is in the PR's diff: a one-click suggestion
    unplaced: str = ""  # why an accepted rewrite has no patch (its literal was not found, or would not read back)

    @property
    def accepted(self) -> bool:
        return bool(self.description)


def targets(mode: Mode, head: Report, base: Report | None, listed: Collection[str]) -> list[str]:
    """The tools to rewrite for one model, most affected first. regressions: the tools whose recall
    fell from the base to the head; confusions: for each of the head's off-diagonal cells, hottest
    first, the tool its cases expected (or, for cases that expected no call, the tool picked)."""
    score = _scores(mode, head, base, listed)
    return sorted(score, key=lambda t: (-score[t], t))[:MAX_SUGGESTED]


def most_affected(mode: Mode, sides: Sequence[tuple[Report, Report | None]], listed: Collection[str]) -> int:
    """Which model of a run (its head and base reports) the rewrites are tested with: the one whose
    recall fell most (regressions), or with the most confused picks (confusions); the first on a tie."""
    totals = [sum(_scores(mode, head, base, listed).values()) for head, base in sides]
    return max(range(len(sides)), key=lambda i: (totals[i], -i))


def _scores(mode: Mode, head: Report, base: Report | None, listed: Collection[str]) -> dict[str, float]:
    score: dict[str, float] = {}
    if mode == "regressions":
        for tool, stats in head.per_tool.items() if base is not None else ():
            before = base.per_tool.get(tool) if base is not None else None
            was, now = (before.recall.value if before else None), stats.recall.value
            if tool in listed and was is not None and now is not None and now < was:
                score[tool] = was - now
        return score
    for expected, row in head.confusion.items():
        for picked, n in row.items():
            side = expected if expected in listed else picked
            if expected != picked and n and side in listed:
                score[side] = score.get(side, 0.0) + n
    return score


def place(
    s: Suggestion, path: str, text: str, current: str, window: tuple[int, int] | None, diff_lines: Collection[int]
) -> Suggestion:
    """An accepted suggestion on its file (`path` from the repository's root, `text` the head's):
    the literal holding `current` within `window` (the located lines; None: the whole file) rewritten,
    in the diff when every replaced line is one of `diff_lines` (the head-side lines of the file's
    patch: a contiguous run of them is one hunk)."""
    lines = text.splitlines()
    start, end = window or (1, len(lines))
    made = rewrite(path, text, start, end, current, s.description)
    if isinstance(made, NotWritten) and window is not None:
        made = rewrite(path, text, 1, len(lines), current, s.description)
    if isinstance(made, NotWritten):  # not found, or the file would not read back: reported, never offered
        return unplaced(s, made.why)
    patch = unified(path, text, applied(text, made), context=2)
    inside = all(n in diff_lines for n in range(made.start, made.end + 1))
    return replace(s, path=path, rewrite=made, patch=patch, in_diff=inside)


def unplaced(s: Suggestion, why: str) -> Suggestion:
    """An accepted suggestion with no patch (its source could not be read, holds no literal of it, or
    would not read back as the new text)."""
    return replace(s, unplaced=why)


def evidence(s: Suggestion) -> str:
    """`held-out accuracy 2/8 → 8/8 (+6 samples, p = 0.031) · tokens 12 → 10 (-17%) · 3 candidates
    by openai:gpt-4.1`"""
    j = s.judged
    assert j is not None
    growth = (j.tokens_after - j.tokens_before) / j.tokens_before if j.tokens_before else 0.0
    return (
        f"held-out accuracy {j.before}/{j.n} → {j.after}/{j.n} ({j.gained:+d} samples, p = {j.p_value:.2g}) · "
        f"description tokens {j.tokens_before} → {j.tokens_after} ({growth:+.1%}) · best of {s.tried} "
        f"candidate{'s' * (s.tried != 1)} by {s.rewriter}"
    )
