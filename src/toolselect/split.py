"""The honest split of a golden set for description rewrites (`toolselect fix`): tuning cases a
rewrite may be shaped on, held-out cases it is judged on. Pure.

A case marked `split: holdout` is always held out (seed 001's held-out slice). The rest are split
per expected tool (the first one; "(none)" for no-tool cases), so every tool is on both sides when
it has two cases or more: within a tool, cases are ordered by a seeded hash of their name and the
first ones are held out until the tool's held-out share (its marked cases counted) reaches `share`.
The same cases, seed and share always give the same split, whatever order the cases come in (a
case's place in its tool's order is its own hash's, not its place in the file).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .golden import Case

NO_TOOL = "(none)"


@dataclass(frozen=True)
class Split:
    """Case names on each side, and how they were chosen (recorded with every rewrite's evidence)."""

    tuning: tuple[str, ...]
    holdout: tuple[str, ...]
    seed: int
    share: float
    marked: tuple[str, ...]  # held out by `split: holdout`, whatever the share

    def side(self, name: str) -> str:
        return "holdout" if name in self.holdout else "tuning"


def split_cases(cases: Sequence[Case], share: float = 0.5, seed: int = 0) -> Split:
    """`cases` split into tuning and held-out (`share` of each tool's cases held out, rounded up,
    but never all of a tool's cases when it has two or more)."""
    if not 0 < share < 1:
        raise ValueError("share must be between 0 and 1")
    strata: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        strata[case.expected[0] if case.expected else NO_TOOL].append(case)
    held: set[str] = set()
    marked = [c.name for c in cases if c.holdout]
    for group in strata.values():
        forced = [c for c in group if c.holdout]
        held.update(c.name for c in forced)
        wanted = math.ceil(share * len(group))
        if len(group) >= 2:
            wanted = min(wanted, len(group) - 1)  # every tool keeps a tuning case
        free = sorted((c for c in group if not c.holdout), key=lambda c: _rank(seed, c.name))
        held.update(c.name for c in free[: max(0, wanted - len(forced))])
    names = [c.name for c in cases]
    return Split(
        tuning=tuple(n for n in names if n not in held),
        holdout=tuple(n for n in names if n in held),
        seed=seed,
        share=share,
        marked=tuple(marked),
    )


def _rank(seed: int, name: str) -> str:
    return hashlib.sha256(f"{seed}:split:{name}".encode()).hexdigest()
