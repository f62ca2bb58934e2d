"""The held-out test a description rewrite must pass before it is ever suggested. Pure.

A rewrite is judged on the held-out cases only (split.py), sample by sample against the current
description with the same samples, by the paired exact test the gate uses (McNemar's: the exact
sign test over the discordant samples). It is accepted only when all of these hold:

- held-out accuracy improves, with p < α;
- no other tool's recall drops significantly (Holm's correction over the tools tested);
- the description grows by at most `max_growth` (20%) in tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .stats import sign_test

MAX_GROWTH = 0.2  # a rewrite may be this much longer than the description it replaces, in tokens


@dataclass(frozen=True)
class BeforeAfter:
    """One held-out sample, before and after the rewrite: its expected tool, and whether it passed."""

    tool: str | None
    before: bool
    after: bool


@dataclass(frozen=True)
class Judged:
    """A rewrite's held-out evidence and whether it passed."""

    accepted: bool
    n: int  # held-out samples
    before: int  # of them passing with the current description
    after: int  # …with the rewrite
    p_value: float
    tokens_before: int
    tokens_after: int
    dropped: tuple[
        tuple[str, int, int, float], ...
    ]  # another tool's recall that fell significantly: (tool, before, after, p)
    why: str  # one line: what decided it

    @property
    def gained(self) -> int:
        return self.after - self.before


def tokens(text: str) -> int:
    """About how many tokens a text is (the budget's estimate: 4 characters a token)."""
    return max(1, len(text) // 4)


def judge(
    samples: Sequence[BeforeAfter],
    target: str,
    current: str,
    rewrite: str,
    alpha: float = 0.05,
    max_growth: float = MAX_GROWTH,
) -> Judged:
    """The held-out test for a rewrite of `target`'s description (`current` → `rewrite`)."""
    better = sum(s.after and not s.before for s in samples)
    worse = sum(s.before and not s.after for s in samples)
    p = sign_test(better, worse)
    before, after = sum(s.before for s in samples), sum(s.after for s in samples)
    dropped = _dropped(samples, target, alpha)
    grown = (tokens(rewrite), tokens(current))
    evidence = f"held-out accuracy {before}/{len(samples)} → {after}/{len(samples)}, p = {p:.2g}"
    if grown[0] > grown[1] * (1 + max_growth):
        why = f"too long: {grown[1]} → {grown[0]} tokens, more than +{max_growth:.0%} ({evidence})"
    elif after <= before:
        why = f"no better on the held-out cases: {evidence}"
    elif p >= alpha:
        why = f"not significant: {evidence} (needs p < {alpha:g})"
    elif dropped:
        tool, was, now, q = dropped[0]
        why = f"{tool}'s recall fell {was} → {now} (Holm-adjusted p = {q:.2g}): {evidence}"
    else:
        why = f"accepted: {evidence}; {grown[1]} → {grown[0]} tokens"
    accepted = why.startswith("accepted")
    return Judged(accepted, len(samples), before, after, p, grown[1], grown[0], tuple(dropped), why)


def _dropped(samples: Sequence[BeforeAfter], target: str, alpha: float) -> list[tuple[str, int, int, float]]:
    """Other tools whose held-out recall fell significantly, after Holm's correction over every
    other tool tested: (tool, passing before, after, adjusted p)."""
    by: dict[str, list[BeforeAfter]] = {}
    for s in samples:
        if s.tool is not None and s.tool != target:
            by.setdefault(s.tool, []).append(s)
    tests = []
    for tool, group in sorted(by.items()):
        fell = sum(s.before and not s.after for s in group)
        rose = sum(s.after and not s.before for s in group)
        if fell > rose:
            tests.append((sign_test(rose, fell), tool, sum(s.before for s in group), sum(s.after for s in group)))
    out = []
    m = len(by)
    for rank, (p, tool, was, now) in enumerate(sorted(tests)):
        adjusted = min(1.0, p * (m - rank))
        if adjusted >= alpha:
            break  # Holm: the first that isn't significant stops the rest
        out.append((tool, was, now, adjusted))
    return out


def none_passed(tool: str, tried: int, best: Judged) -> str:
    """`3 rewrites tried for get_forecast; none passed the held-out test (best: +1 of 12, p = 0.5)`:
    `best` is the held-out test of the best candidate on the tuning cases."""
    return (
        f"{tried} rewrite{'s' * (tried != 1)} tried for {tool}; none passed the held-out test "
        f"(best: {best.gained:+d} of {best.n}, p = {best.p_value:.2g}: {best.why})"
    )
