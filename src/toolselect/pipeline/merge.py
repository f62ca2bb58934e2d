"""Shards' parts put back together into the run they split (no server, no request)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..config import Loaded
from ..diff import diff_reports
from ..errors import ConfigError, InfraError
from ..gate import gate_of
from ..merging import Part
from ..outcome import Comparison
from ..report.schema import Report
from ..settings import Settings
from .eval import run_eval
from .prepare import Hooks
from .sides import Against


async def run_merge(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    heads: Sequence[Part],
    bases: Sequence[Part] = (),
    hooks: Hooks = Hooks(),
    *,
    against: Against | None = None,
) -> tuple[Comparison, ...]:
    """Shards' parts → the run they split: the parts checked (one plan, every shard once), the whole
    plan replayed from the answer cache on the parts' own tool surfaces (no server, no request), each
    part's samples checked to be exactly its shard's, and the bookkeeping put back. The answer of a
    unit not in the cache is the run's failure (exit 3), naming the shard that should have asked it."""
    from ..merging import answered, assigned, labels_of, put_back, recorded_errors, surface_of
    from ..shards import Shard, check_plan, check_shards

    labels = list(settings.labels)
    sides = [("head", heads), *([("base", bases)] if bases else [])]
    count = {name: check_shards([p.given(labels) for p in parts], name) for name, parts in sides}
    if bases and count["base"] != count["head"]:
        raise ConfigError(
            f"the head has {count['head']} shards and the base {count['base']}: one run splits both alike"
        )
    whole = replace(settings, shard=Shard(0, count["head"]), cache_mode="only")  # replayed: nothing is asked
    if against is not None:
        against = replace(against, over=replace(against.over, cache_mode="only"))
    frozen = (surface_of(heads[0].reports[0]), surface_of(bases[0].reports[0]) if bases else None)
    prints: dict[str, str | None] = {}
    recorded = {name: recorded_errors(parts, labels) for name, parts in sides}
    runs = await run_eval(
        loaded, whole, environ, hooks, against=against, frozen=frozen, fingerprints=prints, recorded=recorded
    )
    merged_sides = [("head", heads, [r.head for r in runs])]
    if bases:
        replayed = [r.base for r in runs]
        if any(b is None for b in replayed):
            failed = next((r for r in runs if r.base is None), None)
            note = (failed.base_failure.reason if failed.base_failure else failed.base_note) if failed else None
            note = note or "no base"
            raise InfraError(f"the base parts were given, but the base could not be replayed: {note}")
        merged_sides.append(("base", bases, [b for b in replayed if b is not None]))
    put: dict[str, list[Report]] = {}
    whose = assigned([reports for _, _, reports in merged_sides], count["head"])
    for name, parts, reports in merged_sides:
        check_plan([p.given(labels) for p in parts], prints.get(name), whose, name)
        asked = {u for p in parts for u in answered(p.reports, labels)}  # what the shards had an answer for
        for m, report in enumerate(reports):
            label = labels_of(reports)[m]
            lost = [
                (c.name, s.index)
                for c in report.cases
                for s in c.samples
                if s.outcome == "NOT-EVALUATED" and (label, c.name, s.index) in asked
            ]
            if lost:
                shards = sorted({whose[(label, case, index)] for case, index in lost})
                case, index = lost[0]
                raise InfraError(
                    f"the {name}'s shard {', '.join(f'{s}/{count[name]}' for s in shards)}: {len(lost)} answered "
                    f"samples are not in the answer cache (e.g. case {case!r} sample {index})",
                    hint="merge the shards' answers first: toolselect cache merge CACHE_DIR… (the Action does it)",
                )
        put[name] = [put_back(r, [p.reports[m] for p in parts]) for m, r in enumerate(reports)]
    out = []
    for i, run in enumerate(runs):
        head = put["head"][i]
        if not bases or run.base is None:
            out.append(replace(run, head=head))
            continue
        base = put["base"][i]
        out.append(replace(run, head=head, base=base, diff=diff_reports(base, head, alpha=gate_of(head).alpha)))
    return tuple(out)
