"""Portability: what a change did to one model and the opposite to another. Pure.

A description rewritten for one model's taste can cost another model the same case. Given each
model's diff (base → head), a *case* moved in opposite directions when its pass rate went up for
one model and down for another; a *confusion cell* did when it moved the right way for one model
(a diagonal cell up, a confusion down) and the wrong way for another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only a run with a base has diffs to read
    from .diff import CaseDelta, Diff


@dataclass(frozen=True)
class CaseMove:
    name: str
    file: str
    line: int
    helped: tuple[tuple[str, str], ...]  # (model label, "base → head" pass rates) where it got better
    hurt: tuple[tuple[str, str], ...]  # … and where it got worse


@dataclass(frozen=True)
class CellMove:
    expected: str
    picked: str
    helped: tuple[tuple[str, int], ...]  # (model label, Δ count)
    hurt: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Portability:
    cases: tuple[CaseMove, ...]
    cells: tuple[CellMove, ...]

    def __bool__(self) -> bool:
        return bool(self.cases or self.cells)


def _rates(c: CaseDelta) -> str:
    def show(rate: float | None) -> str:
        return "n/a" if rate is None else f"{rate:.0%}"

    return f"{show(c.base.pass_rate)} → {show(c.head.pass_rate)}"


def portability(diffs: Sequence[tuple[str, Diff]]) -> Portability:
    """The cases and cells that moved in opposite directions for two (or more) models. `diffs`:
    (model label, its diff), in the run's model order; models without a baseline are left out."""
    helped: dict[str, list[tuple[str, str]]] = {}
    hurt: dict[str, list[tuple[str, str]]] = {}
    where: dict[str, tuple[str, int]] = {}
    for label, diff in diffs:
        for c in (*diff.to_passing, *diff.to_failing, *diff.changed):
            if c.holdout or c.base.pass_rate is None or c.head.pass_rate is None:
                continue  # a holdout case is never named; an unmeasured side has no direction
            if c.head.pass_rate == c.base.pass_rate:
                continue
            side = helped if c.head.pass_rate > c.base.pass_rate else hurt
            side.setdefault(c.name, []).append((label, _rates(c)))
            where[c.name] = (c.file, c.line)
    cases = tuple(
        CaseMove(name, *where[name], tuple(helped[name]), tuple(hurt[name]))
        for name in sorted(set(helped) & set(hurt), key=lambda n: where[n])
    )
    good: dict[tuple[str, str], list[tuple[str, int]]] = {}
    bad: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for label, diff in diffs:
        for cell in diff.cells:
            delta = cell.head - cell.base
            if not delta:
                continue
            better = delta > 0 if cell.diagonal else delta < 0
            (good if better else bad).setdefault((cell.expected, cell.picked), []).append((label, delta))
    cells = tuple(
        CellMove(expected, picked, tuple(good[(expected, picked)]), tuple(bad[(expected, picked)]))
        for expected, picked in sorted(set(good) & set(bad))
    )
    return Portability(cases, cells)
