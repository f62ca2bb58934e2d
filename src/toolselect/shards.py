"""Shards: a big run split into N deterministic slices, and the checks that put them back together. Pure.

A *unit* is one sample of one case for one model: (model label, case name, sample index). Every
unit goes to exactly one shard. The assignment is the same on every machine: units are taken
costliest first (a trajectory case costs the turns it is expected to take; each repeat is a unit
of its own), ties broken by a stable hash of the unit, and each goes to the shard with the least
cost so far — so N shards carry nearly equal work, not just equal counts.

A shard's report is a *part*: an ordinary report of its own samples, marked with its shard, the
count of shards and the plan's *fingerprint* (a hash of what decides the answers: the config's
models and settings, every case, the tool surface). `toolselect merge` accepts the parts only when
they share one fingerprint and each shard is there once.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .golden import Case

Unit = tuple[str, str, int]  # (model label, case name, sample index)
SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, label: str = "--shard") -> Shard:
    m = SHARD.fullmatch(text)
    if m is None:
        raise ConfigError(f"{label} must be I/N, e.g. 2/4 for the second of four shards (got {text!r})")
    index, count = int(m.group(1)), int(m.group(2))
    if not 1 <= count <= 256 or not 1 <= index <= count:
        raise ConfigError(f"{label} {text.strip()}: I must be between 1 and N, and N between 1 and 256")
    return Shard(index, count)


def cost(case: Case) -> int:
    """The requests a sample of the case is expected to take: a trajectory case, one turn per
    expected call and one for the answer; a single call, one."""
    return len(case.script.expect.calls) + 1 if case.script is not None else 1


def _rank(unit: Unit) -> str:
    return hashlib.sha256(json.dumps(unit).encode()).hexdigest()


def assign(units: Iterable[tuple[Unit, int]], count: int) -> dict[Unit, int]:
    """Each unit's shard (1-based): costliest first, ties by a stable hash, each to the shard with
    the least cost so far (the lowest index on a tie)."""
    return _spread(units, [0] * count)


def assign_sides(head: Sequence[tuple[Unit, int]], base: Sequence[tuple[Unit, int]], count: int) -> dict[Unit, int]:
    """Head and base together: the head's units decide (so a run without its base splits the same),
    a unit on both sides keeps the head's shard, and the base's own units are spread after them."""
    first = assign(head, count)
    rest = [(u, w) for u, w in base if u not in first]
    if not rest:
        return first
    loads = [0] * count
    for unit, weight in head:
        loads[first[unit] - 1] += weight
    return first | _spread(rest, loads)


def _spread(units: Iterable[tuple[Unit, int]], loads: list[int]) -> dict[Unit, int]:
    ordered = sorted(units, key=lambda u: (-u[1], _rank(u[0])))
    heap = [(load, i + 1) for i, load in enumerate(loads)]
    heapq.heapify(heap)
    out: dict[Unit, int] = {}
    for unit, weight in ordered:
        load, index = heapq.heappop(heap)
        out[unit] = index
        heapq.heappush(heap, (load + weight, index))
    return out


def plan_units(labels: Sequence[str], cases: Sequence[tuple[str, int]], repeat: int) -> list[tuple[Unit, int]]:
    """Every unit of a run and its cost: `cases` are (name, cost) pairs."""
    return [((label, name, i), weight) for label in labels for name, weight in cases for i in range(repeat)]


def fingerprint(parts: Mapping[str, Any]) -> str:
    """A short stable hash of what decides a run's answers: the same on every machine (sets sorted,
    dataclasses as their fields, nothing left to `repr`'s or hashing's order)."""
    text = json.dumps(canonical(parts), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def canonical(value: Any) -> Any:
    """A value as plain JSON: dataclasses as dicts of their fields, sets sorted, enums by value."""
    import dataclasses
    import enum

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return canonical(value.value)
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


@dataclass(frozen=True)
class Given:
    """One part as `merge` sees it: where it came from, its shard, its fingerprint, its units."""

    where: str
    shard: Shard
    fingerprint: str
    units: frozenset[Unit]


def check_shards(parts: Sequence[Given], side: str) -> int:
    """The parts are shards of one plan (one fingerprint, one count), each shard once, none missing:
    the count of shards. Each refusal names the part (a ConfigError: exit 2), or the missing shard
    (an InfraError: exit 3 — its job failed; no verdict from partial data)."""
    from .errors import InfraError

    if not parts:
        raise ConfigError(f"no {side} parts given")
    first = parts[0]
    for p in parts:
        if p.fingerprint != first.fingerprint or p.shard.count != first.shard.count:
            raise ConfigError(
                f"{p.where} (shard {p.shard}, plan {p.fingerprint}) is not of the same plan as {first.where} "
                f"(shard {first.shard}, plan {first.fingerprint}): a part of another run, commit or config"
            )
    seen: dict[int, str] = {}
    for p in parts:
        if p.shard.index in seen:
            raise ConfigError(f"shard {p.shard} of the {side} is given twice: {seen[p.shard.index]} and {p.where}")
        seen[p.shard.index] = p.where
    missing = [i for i in range(1, first.shard.count + 1) if i not in seen]
    if missing:
        names = ", ".join(f"{i}/{first.shard.count}" for i in missing)
        raise InfraError(
            f"the {side} lacks shard {names}: its job failed or its part was not downloaded; no verdict from partial "
            "data",
            hint="re-run the failed shard job, then the merge",
        )
    return first.shard.count


def check_plan(parts: Sequence[Given], expected: str | None, assigned: Mapping[Unit, int], side: str) -> None:
    """The parts are of this plan — `expected`, the fingerprint this config, these cases and this
    tool surface give — and each holds exactly the units assigned to it."""
    for p in parts:
        if expected is not None and p.fingerprint != expected:
            raise ConfigError(
                f"{p.where} is a part of another plan ({p.fingerprint}; this config, its cases and the tool surface "
                f"give {expected}): the shards and the merge must run one commit, one config and the same flags"
            )
    for p in parts:
        wanted = {u for u, shard in assigned.items() if shard == p.shard.index}
        if p.units != wanted:
            extra, lacking = sorted(p.units - wanted), sorted(wanted - p.units)
            said = []
            if lacking:
                said.append(f"{len(lacking)} of its samples are missing (e.g. {_unit_text(lacking[0])})")
            if extra:
                said.append(f"{len(extra)} samples are not its own (e.g. {_unit_text(extra[0])})")
            raise ConfigError(f"{p.where} (shard {p.shard} of the {side}): " + "; ".join(said))


def _unit_text(unit: Unit) -> str:
    label, case, sample = unit
    return f"case {case!r} sample {sample}" + (f" of model {label}" if label else "")
