"""Shards' parts → one run: what the parts hold, and the run's bookkeeping put back. Pure.

`toolselect merge` replays the whole plan from the answer cache (the shards' answers merged into
it), so every metric, interval, confusion cell, flaky case and diff is computed from the samples
exactly as an unsharded run computes them. The parts then give back what a replay can't know:
which samples were asked and which came from the cache, their latency and tokens, and the
run's counters, so the merged report is the unsharded one field for field (timings aside).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .pick import Pick, failed
from .report.schema import Report, RunOut, SampleOut
from .shards import Given, Shard, Unit, assign_sides, plan_units
from .surface import LeftOut, Surface, build_surface


@dataclass(frozen=True)
class Part:
    """One part file: where it is, and its reports (one per model)."""

    where: str
    reports: tuple[Report, ...]

    def given(self, labels: Sequence[str]) -> Given:
        first = self.reports[0]
        assert first.part is not None
        return Given(
            self.where,
            Shard(first.part.shard, first.part.shards),
            first.part.fingerprint,
            frozenset(units(self.reports, labels)),
        )


def units(reports: Sequence[Report], labels: Sequence[str]) -> list[Unit]:
    """The units a report (one per model) holds: its samples, by model label, case and index."""
    return [
        (label, case.name, sample.index)
        for label, report in zip(labels, reports, strict=False)
        for case in report.cases
        for sample in case.samples
    ]


def labels_of(reports: Sequence[Report]) -> list[str]:
    """The models' labels as the plan names them: a one-model run's is its model (or provider)."""
    if len(reports) == 1 and reports[0].run.label is None:
        run = reports[0].run
        return [run.model or run.provider]
    return [r.run.label or "" for r in reports]


def assigned(sides: Sequence[Sequence[Report]], count: int) -> dict[Unit, int]:
    """Which shard each unit of a whole run belongs to, from the run's own reports: the head's decide,
    the base's own units follow (as the shards assigned them)."""

    def units_of(reports: Sequence[Report]) -> list[tuple[Unit, int]]:
        first = reports[0]
        costs = [(c.name, len(c.expect_calls) + 1 if c.expect_calls is not None else 1) for c in first.cases]
        return plan_units(labels_of(reports), costs, first.run.repeat)

    return assign_sides(units_of(sides[0]), units_of(sides[1]) if len(sides) > 1 else [], count)


def answered(reports: Sequence[Report], labels: Sequence[str]) -> list[Unit]:
    """The units a part has an answer for (not never-asked, not a provider error)."""
    return [
        (label, case.name, s.index)
        for label, report in zip(labels, reports, strict=False)
        for case in report.cases
        for s in case.samples
        if s.outcome not in ("NOT-EVALUATED", "ERROR")
    ]


def recorded_errors(parts: Sequence[Part], labels: Sequence[str]) -> dict[Unit, Pick]:
    """The samples the shards recorded as provider errors, as they were: a replay from the cache
    can't know them (failures are never cached)."""
    return {
        (label, case.name, s.index): failed(s.reasons[0] if s.reasons else "the provider failed")
        for part in parts
        for label, report in zip(labels, part.reports, strict=False)
        for case in report.cases
        for s in case.samples
        if s.outcome == "ERROR"
    }


def surface_of(report: Report) -> Surface:
    """The tool surface a part was evaluated on, rebuilt from its definitions (no server to start)."""
    out = report.surface
    rebuilt = build_surface([dict(d) for d in out.definitions], out.origin)
    left_out = tuple(LeftOut(lo.name, lo.reason) for lo in out.left_out)
    from dataclasses import replace

    return replace(rebuilt, left_out=left_out)


BOOKKEEPING = ("cached", "latency_ms", "usage")


def put_back(merged: Report, parts: Sequence[Report]) -> Report:
    """The merged replay of one model with what its parts recorded: each sample's cache flag,
    latency and tokens; the run's counters (summed), its cache mode, its start and end; the
    provider's warnings."""
    samples: dict[tuple[str, int], SampleOut] = {
        (case.name, s.index): s for part in parts for case in part.cases for s in case.samples
    }
    cases = []
    for case in merged.cases:
        kept = []
        for s in case.samples:
            recorded = samples.get((case.name, s.index))
            kept.append(s.model_copy(update={k: getattr(recorded, k) for k in BOOKKEEPING}) if recorded else s)
        cases.append(case.model_copy(update={"samples": kept}))
    runs = [p.run for p in parts]
    counters = (
        "cache_hits",
        "api_calls",
        "cache_writes",
        "input_tokens",
        "output_tokens",
        "prompt_cache_write_tokens",
        "prompt_cache_read_tokens",
        "pool_shrinks",
    )
    costs = [r.cost_usd for r in runs]
    run: RunOut = merged.run.model_copy(
        update={k: sum(getattr(r, k) for r in runs) for k in counters}
        | {
            "cost_usd": None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6),
            "cache_mode": runs[0].cache_mode,
            "endpoint": runs[0].endpoint,
            "concurrency": runs[0].concurrency,
            "started_at": min(r.started_at for r in runs),
            "finished_at": max(r.finished_at for r in runs),
            "duration_s": max(r.duration_s for r in runs),
        }
    )
    said = set(merged.warnings)
    extra = list(dict.fromkeys(w for p in parts for w in p.warnings if w not in said and not _position(w)))
    return merged.model_copy(update={"cases": cases, "run": run, "warnings": [*extra, *merged.warnings]})


def _position(warning: str) -> bool:
    """The position warning a part computed on its slice: the merge computes it on the whole."""
    return warning.startswith("the expected tool's position moves accuracy by")
