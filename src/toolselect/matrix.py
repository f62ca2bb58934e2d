"""The Action's matrix jobs (inputs shard, shards and merge): a shard's job writes its part and the
answers it used for the workflow to upload, and the merge job reads every shard's part back, as
untrusted reports, with their answers merged into the run's cache."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import (
    EXIT_INFRA,
    EXIT_PASSED,
    ConfigError,
    InfraError,
)
from .github.commands import Workflow
from .merging import Part
from .nofollow import fresh_folder
from .outcome import Outcome
from .outputs import REPORT_DIR, Targets, write_outputs
from .report.files import read_reports
from .settings import Settings


def matrix(inputs: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(the shard as I/N, the merge job's parts folder), from the shard, shards and merge inputs."""
    index, count, merging = inputs.get("matrix_shard"), inputs.get("shards"), inputs.get("merge")
    if (index is None) != (count is None):
        raise ConfigError(
            "a matrix job needs both inputs shard and shards, e.g. shard: ${{ matrix.shard }} and shards: 4"
        )
    if index is not None and count is not None and index > count:
        raise ConfigError(f"input shard is {index}, more than shards ({count})")
    if index is not None and merging:
        raise ConfigError("a job is a shard (shard, shards) or the merge (merge), not both")
    return (f"{index}/{count}" if index is not None else None), merging


PART, BASE_PART = "part.json", "part.base.json"


def shard_job(outcome: Outcome, settings: Settings, workspace: Path, wf: Workflow) -> int:
    """A shard's job: its part (and the base's) and every answer it used, in toolselect-report/ for
    the workflow to upload; no comment, no verdict (a slice can't be judged). 3 when its run failed."""
    from .cache import AnswerCache, export_entries

    out_dir = workspace / REPORT_DIR
    fresh_folder(out_dir)  # the PR's programs were stopped after the picks: only what this job writes
    write_outputs(outcome, Targets(json=out_dir / PART, base_json=out_dir / BASE_PART))
    keys = AnswerCache(settings.cache_dir).manifest_keys() or set()
    exported = export_entries(settings.cache_dir, keys, out_dir / "cache")
    asked = sum(m.head.counts.samples for m in outcome.models)
    print(f"shard {settings.shard}: {asked} samples; its part and {exported} answers are in {REPORT_DIR}/")
    wf.set_outputs({"report": f"{REPORT_DIR}/{PART}", "cache-dirty": "true" if exported else "false"})
    # only a run that stopped fails a shard: the share of provider errors is the merge's to judge, on the whole
    failed = next((r.gate.stopped for m in outcome.models for r in (m.head, m.base) if r and r.gate.stopped), None)
    if failed:
        wf.annotate("error", f"shard {settings.shard}: the run failed: {failed}", title="toolselect")
        return EXIT_INFRA
    if any(m.no_measurement for m in outcome.models) and outcome.base_failure is not None:
        # no base part: the merge would judge the head alone, so the comparison's failure is said here
        wf.annotate("error", f"shard {settings.shard}: {outcome.base_failure.line}", title="toolselect: no comparison")
        return EXIT_INFRA
    return EXIT_PASSED


def parts(folder: Path, cache_dir: Path, wf: Workflow, labels: Sequence[str]) -> tuple[list[Part], list[Part]]:
    """The merge job's inputs: every shard's part (head and base) under `folder` (the downloaded
    artifacts), and their answers merged into the run's cache."""
    from .cache import merge_caches

    if not folder.is_dir():
        raise InfraError(f"{folder}: no shard artifacts were downloaded here (the merge input)")
    caches = sorted(p for p in folder.rglob("cache") if p.is_dir() and not p.is_symlink())
    merged = merge_caches(caches, cache_dir)
    print(f"merged {merged.copied} answers from {len(caches)} shards into the answer cache ({merged.present} there)")

    def read(name: str) -> list[Part]:
        return [Part(str(p.relative_to(folder)), read_reports(p)) for p in sorted(folder.rglob(name))]

    heads, bases = read(PART), read(BASE_PART)
    for part in (*heads, *bases):
        if part.reports[0].part is None:
            raise ConfigError(f"{part.where}: a whole report, not a shard's part")
    if not heads:
        raise InfraError(f"{folder}: no shard's {PART}: every shard job failed, or none was downloaded")
    return heads, bases
