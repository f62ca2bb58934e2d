"""Reports on disk: written case by case, and read back as untrusted data (a fork PR's artifact is
written by anyone) — bounded before it is parsed, checked after."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ..explain import dotted, show
from ..locate import display_path
from ..taxonomy import SampleOutcome
from .schema import (
    MAX_MODELS,
    METRIC_NAMES,
    MODELS_SCHEMA_VERSION,
    OPTIONAL_METRICS,
    PENDING,
    SCHEMA_VERSION,
    GateOut,
    Metric,
    Report,
    ScoresOut,
)

# --------------------------------------------------------------------------- files


def write_reports(reports: Sequence[Report], path: Path) -> None:
    """One model's report (schema_version 1), or several models' (schema_version 2: `passed`, and
    `models`, each a whole schema-1 report with `run.label`), written case by case."""
    from ..nofollow import writing

    def put(f: Any, report: Report, pad: str) -> None:
        summary = report.model_dump_json(indent=2, exclude={"cases"})  # as the cases: pydantic's JSON
        f.write(summary[:-2].replace("\n", "\n" + pad) + f',\n{pad}  "cases": [')
        for i, case in enumerate(report.cases):
            f.write((f"\n{pad}    " if i == 0 else f",\n{pad}    ") + case.model_dump_json())
        f.write(f"\n{pad}  ]\n{pad}}}")

    with writing(path) as f:  # in the Action's workspace, never through a link
        if len(reports) == 1:
            put(f, reports[0], "")
        else:
            passed = json.dumps(all(r.passed for r in reports))
            f.write(f'{{\n  "schema_version": {MODELS_SCHEMA_VERSION},\n  "passed": {passed},\n  "models": [')
            for i, report in enumerate(reports):
                f.write("\n    " if i == 0 else ",\n    ")
                put(f, report, "    ")
            f.write("\n  ]\n}")
        f.write("\n")


# A report read from disk may be a fork PR's artifact, i.e. written by anyone: it is bounded before
# it is parsed, and checked after. The largest report we measured — 10,000 cases × 3 samples, each
# sample's order of 30 shuffled tools recorded (the scale docs/benchmarks.md runs) — is 24 MB with
# 210,000 JSON arrays and objects; the limits leave 2.5 to 15 times that. Above them a file is
# refused before it is parsed: Python's JSON parser takes up to ~26× a file's size in memory (an
# empty list is 56 bytes), so a 50 MB file of `[]` would take 1.3 GB.
MAX_REPORT_BYTES = 64 * 1024 * 1024
MAX_CONTAINERS = 2_000_000  # JSON arrays and objects ('[' and '{', counted before parsing)
MAX_CASES = 50_000
MAX_SAMPLES = 500_000  # in all cases together
MAX_SAMPLES_PER_CASE = 1_000  # repeat: 1000 is already a thousand model calls per case
MAX_TRACE_CALLS = 1_000  # calls in one trace: max_turns 50 × 20 parallel calls
MAX_TOOLS = 1_000  # per list of tools (surface, per-tool stats, confusion rows and columns)
TOLERANCE = 1e-9  # for rates written as floats and read back


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def read_report(path: Path) -> Report:
    """A one-model report file (see `read_reports`); a report of several models is refused."""
    reports = read_reports(path)
    if len(reports) > 1:
        labels = ", ".join(r.run.label or "?" for r in reports)
        raise ConfigError(f"{display_path(path)}: a report of {len(reports)} models ({labels}); one was expected")
    return reports[0]


def read_reports(path: Path) -> tuple[Report, ...]:
    """A report file — one model's (schema_version 1) or several models' (2) — refused with a message
    that says what is wrong and where (a ConfigError) when it is too big, not JSON, not a toolselect
    report, or its numbers don't add up."""
    shown = display_path(path)

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"{shown}: not a valid toolselect report: {problem}")

    limit_mb = MAX_REPORT_BYTES // (1024 * 1024)
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size if path.is_file() else MAX_REPORT_BYTES
            if size > MAX_REPORT_BYTES:
                raise ConfigError(
                    f"{shown}: {size:,} bytes, more than the {limit_mb} MB ({MAX_REPORT_BYTES:,} bytes) a "
                    "toolselect report can be; not read"
                )
            raw = f.read(size + 1)  # bounded even when the size can't be known first (a pipe)
    except FileNotFoundError:
        raise ConfigError(f"{shown}: report not found") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: not a readable toolselect report ({exc})") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise ConfigError(
            f"{shown}: more than the {limit_mb} MB ({MAX_REPORT_BYTES:,} bytes) a toolselect report can be; not read"
        )
    containers = raw.count(b"[") + raw.count(b"{")
    if containers > MAX_CONTAINERS:
        raise bad(f"more than {MAX_CONTAINERS:,} JSON arrays and objects ({containers:,} '[' and '{{'); not parsed")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ConfigError(f"{shown}: not a readable toolselect report ({exc})") from None
    del raw
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(data, dict) or version not in (SCHEMA_VERSION, MODELS_SCHEMA_VERSION):
        raise ConfigError(
            f"{shown}: not a toolselect report with schema_version {SCHEMA_VERSION} or {MODELS_SCHEMA_VERSION} "
            f"(found {show(version)})"
        )
    if version == SCHEMA_VERSION:
        return (_validated(data, bad, ""),)
    unknown = sorted(set(data) - {"schema_version", "passed", "models"})
    models = data.get("models")
    if unknown:
        raise bad(f"unknown key {show(unknown[0])} (a report of several models has schema_version, passed, models)")
    if not isinstance(models, list) or not 2 <= len(models) <= MAX_MODELS:
        raise bad(f"models: a list of 2 to {MAX_MODELS} reports, one per model")
    cases = sum(len(m["cases"]) for m in models if isinstance(m, dict) and isinstance(m.get("cases"), list))
    if cases > MAX_CASES:
        raise bad(f"{cases:,} cases in all models, more than the {MAX_CASES:,} a report can have")
    reports = tuple(_validated(m, bad, f"models[{i}].") for i, m in enumerate(models))
    labels = [r.run.label for r in reports]
    if None in labels:
        raise bad(f"models[{labels.index(None)}].run.label: missing (each model of a report has its label)")
    if len(set(labels)) < len(labels):
        raise bad(f"models: two reports have the label {show(next(x for x in labels if labels.count(x) > 1))}")
    if not isinstance(data.get("passed"), bool) or data["passed"] != all(r.passed for r in reports):
        raise bad("passed does not agree with the models' own gates")
    return reports


def _validated(data: Any, bad: Callable[[str], ConfigError], at_: str) -> Report:
    """One model's report from parsed JSON: bounded, validated, and consistent."""
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise bad(f"{at_}schema_version: {SCHEMA_VERSION} expected for one model's report")
    problem = _too_many(data)
    if problem:
        raise bad(at_ + problem)
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        at = f"{dotted(loc[:-2])} key {show(loc[-2])}" if loc[-1:] == ("[key]",) else dotted(loc)
        said = first["msg"].removeprefix("Value error, ")
        got = f" (got {show(first['input'], 60)})" if first["type"] != "missing" and _scalar(first["input"]) else ""
        raise bad(f"{at_}{at}: {said}{got}") from None
    problem = next(_inconsistencies(report), None)
    if problem:
        raise bad(at_ + problem)
    return report


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _too_many(data: dict[str, Any]) -> str | None:
    """Item counts over the limits, checked on the parsed JSON before validation builds objects."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        return None  # validation says what is wrong
    if len(cases) > MAX_CASES:
        return f"cases: {len(cases):,} cases, more than the {MAX_CASES:,} a report can have"
    total = 0
    for i, case in enumerate(cases):
        samples = case.get("samples") if isinstance(case, dict) else None
        if isinstance(samples, list):
            if len(samples) > MAX_SAMPLES_PER_CASE:
                return (
                    f"cases[{i}].samples: {len(samples):,} samples, "
                    f"more than the {MAX_SAMPLES_PER_CASE:,} a case can have"
                )
            total += len(samples)
    if total > MAX_SAMPLES:
        return f"cases: {total:,} samples in all, more than the {MAX_SAMPLES:,} a report can have"
    for i, case in enumerate(cases):
        for j, sample in enumerate(case.get("samples") or [] if isinstance(case, dict) else []):
            trace = sample.get("trace") if isinstance(sample, dict) else None
            calls = trace.get("tool_calls") if isinstance(trace, dict) else None
            if isinstance(calls, list) and len(calls) > MAX_TRACE_CALLS:
                return (
                    f"cases[{i}].samples[{j}].trace: {len(calls):,} calls, more than the {MAX_TRACE_CALLS:,} a "
                    "trace can have"
                )
    surface = data["surface"] if isinstance(data.get("surface"), dict) else {}
    lists = {
        "surface.tools": surface.get("tools"),
        "surface.definitions": surface.get("definitions"),
        "surface.left_out": surface.get("left_out"),
        "per_tool": data.get("per_tool"),
        "confusion": data.get("confusion"),
    }
    for where, items in lists.items():
        if isinstance(items, (list, dict)) and len(items) > MAX_TOOLS:
            return f"{where}: {len(items):,} tools, more than the {MAX_TOOLS:,} a report can have"
    confusion = data.get("confusion")
    if isinstance(confusion, dict):
        columns = {c for row in confusion.values() if isinstance(row, dict) for c in row}
        if len(columns) > MAX_TOOLS + 3:
            return f"confusion: {len(columns):,} columns, more than the {MAX_TOOLS + 3:,} a report can have"
    return None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE


def _gate_problems(gate: GateOut) -> Iterator[str]:
    """The gate's numbers within the ranges their options declare (options.py)."""
    from ..options import BY_KEY

    for key in (k for k in GateOut.model_fields if k in BY_KEY):
        option, value = BY_KEY[key], getattr(gate, key)
        named = value.items() if isinstance(value, dict) else [(None, value)]
        for name, number in named:
            if isinstance(number, bool) or not isinstance(number, (int, float)):
                continue
            if not math.isfinite(number) or option.out_of_range(number):
                at = f"gate.{key}" + (f"[{show(name)}]" if name is not None else "")
                yield f"{at} is {number!r}, not {option.bounds()}" + (f" ({option.unit})" if option.unit else "")


def _share(value: float | None, where: str) -> Iterator[str]:
    if value is not None and not -TOLERANCE <= value <= 1 + TOLERANCE:
        yield f"{where} is {value!r}, not a share between 0 and 1"


def _metric_problems(m: Metric, where: str) -> Iterator[str]:
    if m.numerator > m.denominator:
        yield f"{where}: numerator {m.numerator} is more than denominator {m.denominator}"
    if m.value is not None:
        if m.denominator == 0:
            yield f"{where}: value {m.value!r} with denominator 0 (it is null when nothing was counted)"
        elif not _close(m.value, m.numerator / m.denominator):
            yield f"{where}: value {m.value!r} is not numerator/denominator ({m.numerator}/{m.denominator})"
    if m.ci is not None:
        low, high = m.ci
        yield from _share(low, f"{where}.ci[0]")
        yield from _share(high, f"{where}.ci[1]")
        if low > high + TOLERANCE:
            yield f"{where}.ci: low {low!r} is above high {high!r}"


def _trajectory_problems(report: Report, scored: list[ScoresOut]) -> Iterator[str]:
    """The dimensions and failure-code counts are the samples' own: recomputed and compared."""
    if (report.dimensions is None) != (not scored):
        yield "dimensions: present without counted trajectory samples, or missing with them"
    for name, d in (report.dimensions or {}).items():
        values = [v for s in scored if (v := getattr(s, name)) is not None]
        if d.n != len(values) or sum(d.distribution.values()) != d.n:
            yield f"dimensions.{name}: n {d.n} and its distribution are not the samples' ({len(values)} scored)"
        if dict(Counter(str(v) for v in values)) != {k: v for k, v in d.distribution.items() if v}:
            yield f"dimensions.{name}.distribution: not the samples' scores"
        if (d.mean is None) != (not values) or (d.mean is not None and not _close(d.mean, sum(values) / len(values))):
            yield f"dimensions.{name}.mean: {d.mean!r} is not the mean of the samples' scores"
        if d.ci is not None and not (0 - TOLERANCE <= d.ci[0] <= d.ci[1] + TOLERANCE <= 3 + 2 * TOLERANCE):
            yield f"dimensions.{name}.ci: {list(d.ci)} is not an interval within 0–3"
    counted = Counter(code for s in scored for code in s.codes)
    if report.failure_codes is not None and dict(counted) != {k: v for k, v in report.failure_codes.items() if v}:
        yield "failure_codes: not the counts of the counted samples' codes"


def _inconsistencies(report: Report) -> Iterator[str]:
    """What doesn't add up in a validated report, one message each (the first is raised)."""
    from ..providers.registry import PROVIDERS

    for name, m in report.metrics.items():
        yield from _metric_problems(m, f"metrics.{name}")
    missing = [m for m in METRIC_NAMES if m not in report.metrics and m not in OPTIONAL_METRICS]
    if missing:
        yield f"metrics {', '.join(missing)} missing"
    for third, m in (report.position or {}).items():
        yield from _metric_problems(m, f"position.{third}")
    for tool, stats in report.per_tool.items():
        yield from _metric_problems(stats.precision, f"per_tool[{show(tool)}].precision")
        yield from _metric_problems(stats.recall, f"per_tool[{show(tool)}].recall")
        yield from _share(stats.f1, f"per_tool[{show(tool)}].f1")
    total = 0
    outcomes: Counter[str] = Counter()
    scored: list[ScoresOut] = []
    for i, case in enumerate(report.cases):
        where = f"cases[{i}]"
        evaluated = sum(s.outcome != SampleOutcome.NOT_EVALUATED for s in case.samples)
        passed = sum(s.outcome == SampleOutcome.PASS for s in case.samples)
        if case.passed > case.evaluated:
            yield f"{where}.passed: {case.passed} is more than evaluated ({case.evaluated})"
        if (case.passed, case.evaluated) != (passed, evaluated):
            yield (
                f"{where}: passed/evaluated {case.passed}/{case.evaluated}, but its samples say "
                f"{passed}/{evaluated} (PASS / not NOT-EVALUATED)"
            )
        if case.pass_rate is None and case.evaluated:
            yield f"{where}.pass_rate: null, but evaluated is {case.evaluated}"
        elif case.pass_rate is not None and not case.evaluated:
            yield f"{where}.pass_rate: {case.pass_rate!r}, but no sample was evaluated (it is null then)"
        elif case.pass_rate is not None and not _close(case.pass_rate, case.passed / case.evaluated):
            yield f"{where}.pass_rate: {case.pass_rate!r} is not passed/evaluated ({case.passed}/{case.evaluated})"
        for j, sample in enumerate(case.samples):
            if sample.latency_ms is not None and not 0 <= sample.latency_ms < math.inf:
                yield f"{where}.samples[{j}].latency_ms: {sample.latency_ms!r} is not a duration"
            if (sample.trace is not None or sample.scores is not None) and case.expect_calls is None:
                yield f"{where}.samples[{j}]: a trace or scores on a case without expect_calls"
            if sample.scores is not None:
                if case.status != PENDING and sample.outcome != SampleOutcome.NOT_EVALUATED:
                    scored.append(sample.scores)
                if sample.outcome == SampleOutcome.PASS and sample.scores.codes:
                    yield f"{where}.samples[{j}]: outcome PASS with failure codes {', '.join(sample.scores.codes)}"
            for k, call in enumerate(sample.trace.tool_calls if sample.trace else []):
                if not 0 <= call.timestamp_ms < math.inf:
                    at = f"{where}.samples[{j}].trace.tool_calls[{k}]"
                    yield f"{at}.timestamp_ms: {call.timestamp_ms!r} is not a time"
        total += len(case.samples)
        outcomes.update(s.outcome for s in case.samples)
    counts = report.counts
    if counts.cases != len(report.cases):
        yield f"counts.cases: {counts.cases}, but the report has {len(report.cases)} cases"
    if counts.samples != total:
        yield f"counts.samples: {counts.samples}, but its cases have {total} samples"
    if {k: v for k, v in counts.outcomes.items() if v} != {k: v for k, v in outcomes.items() if v}:
        yield "counts.outcomes: not the outcomes of the cases' samples"
    unasked = outcomes.get(SampleOutcome.NOT_EVALUATED, 0)
    if counts.not_evaluated != unasked:
        yield f"counts.not_evaluated: {counts.not_evaluated}, but {unasked} samples are"
    pending = sum(c.status == PENDING for c in report.cases)
    if counts.pending_cases != pending:
        yield f"counts.pending_cases: {counts.pending_cases}, but {pending} cases need review"
    if counts.counted_samples > counts.samples:
        yield f"counts.counted_samples: {counts.counted_samples} is more than counts.samples ({counts.samples})"
    cells = sum(n for row in report.confusion.values() for n in row.values())
    if cells > counts.counted_samples:
        yield f"confusion: {cells} samples, more than counts.counted_samples ({counts.counted_samples})"
    yield from _trajectory_problems(report, scored)
    names = {c.name for c in report.cases}
    if not set(report.flaky) <= names:
        yield "flaky names a case the report does not have"
    yield from _gate_problems(report.gate)
    run = report.run
    if run.provider not in PROVIDERS:
        yield f"run.provider: {show(run.provider)} is not a toolselect provider (known: {', '.join(PROVIDERS)})"
    for key in ("duration_s", "cost_usd"):
        value = getattr(run, key)
        if value is not None and not 0 <= value < math.inf:
            yield f"run.{key}: {value!r} is not a number ≥ 0"
