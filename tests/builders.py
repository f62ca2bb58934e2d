"""Builders for the unit tests (which import them from here, never from one another): reports,
gates, surfaces and settings made in memory or in a test's folder, `mutate` for a report's JSON, and
the HTML tests' real reports of the bundled example (`screenshot`) and their hostile twins."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.conftest import ROOT, run_record
from toolselect.config import Overrides, load_config
from toolselect.gate import Gate, judged
from toolselect.golden import Case, Source
from toolselect.outcome import Outcome, compare_saved, joint_verdict
from toolselect.pick import Pick
from toolselect.report.build import build_report as _build_report
from toolselect.report.schema import LeftOutOut, Report
from toolselect.resolve import resolve_settings
from toolselect.scoring import score_sample
from toolselect.surface import build_surface


def build_report(cases, results, surface, run, gate, **kwargs) -> Report:
    """A report as a run makes it: built from its results, then judged by its gate."""
    return judged(_build_report(cases, results, surface, run, gate.values(), **kwargs), gate)


# ----------------------------------------------------------------------------- a weather report, base or head

OBJ = {"type": "object", "properties": {"city": {"type": "string"}}}
RUN = run_record("openai")


def gate(**values) -> Gate:
    """The gate: every option at its default, min_accuracy 0.5 unless given."""
    return Gate.from_values({"min_accuracy": 0.5, **values})


def weather_surface(forecast_description: str):
    """get_weather and get_forecast, the forecast described as given."""
    return build_surface(
        [
            {"name": "get_weather", "description": "Weather now", "inputSchema": OBJ},
            {"name": "get_forecast", "description": forecast_description, "inputSchema": OBJ},
        ],
        "t",
    )


def weather_report(picks: dict[str, str | None], description: str = "Forecast for the coming days", names=None):
    """Four weather cases (or those `names`) picked as `picks` says, get_forecast described as given;
    judged by `gate()`."""
    s = weather_surface(description)
    expected = {
        "rain tomorrow": "get_forecast",
        "wind now": "get_weather",
        "week ahead": "get_forecast",
        "thanks": None,
    }
    cases = [Case(n, n, expected[n], {}, Source("g.jsonl", i + 1)) for i, n in enumerate(names or expected)]
    results = [score_sample(c, Pick(picks[c.name], {}), s, 0) for c in cases]
    return build_report(cases, results, s, RUN, gate())


# ----------------------------------------------------------------------------- a report with markup and a holdout

_QUERY_OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}
SEARCH_SURFACE = build_surface(
    [{"name": "search|web", "inputSchema": _QUERY_OBJ}, {"name": "other", "inputSchema": _QUERY_OBJ}], "t"
)
COMMAND_RUN = run_record("command")


def markup_report():
    """Two cases, both missed: one named with a mention and a marker, its pick's arguments HTML with
    pipes; one holdout. Judged under min_accuracy 1: failed as built."""
    cases = [
        Case("ping @octocat <!-- toolselect:x -->", "p1", "search|web", {}, Source("g.yaml", 3)),
        Case("secret holdout", "the holdout prompt", "other", {}, Source("g.yaml", 9), split="holdout"),
    ]
    picks = [Pick("other", {"q": "<b>|x|</b>"}), Pick("search|web", {})]
    results = [score_sample(c, p, SEARCH_SURFACE, 0) for c, p in zip(cases, picks, strict=False)]
    return build_report(
        cases, results, SEARCH_SURFACE, COMMAND_RUN, Gate.from_values({"min_accuracy": 1, "max_error_rate": 0})
    )


# ----------------------------------------------------------------------------- settings from a config file


def write_config(folder: Path, text: str, name: str = "toolselect.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


BASE_CONFIG = """
server:
  command: [python, server.py]
  env: {TOKEN: "${MY_TOKEN}"}
evals:
  provider: anthropic
  model: yaml-model
  min_accuracy: 0.8
  cases:
    - prompt: hi
      expect_tool: null
"""


def settings(tmp_path, over=Overrides(), env=None, text=BASE_CONFIG):
    """The config `text` written to `tmp_path`, loaded and resolved: (loaded, settings)."""
    path = write_config(tmp_path, text)
    environ = {"MY_TOKEN": "t0k"} | (env or {})
    loaded = load_config(path, environ)
    return loaded, resolve_settings(loaded, over, environ, tmp_path)


# ----------------------------------------------------------------------------- a report's JSON, changed


def mutate(data: dict, path: tuple, value) -> dict:
    """`data` with the value at `path` (keys and indexes) set to `value`, changed in place."""
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


# ----------------------------------------------------------------------------- the HTML report's reports


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("html_screenshot", ROOT / "scripts" / "html_screenshot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


screenshot = _load_script()  # scripts/html_screenshot.py
Reports = dict[tuple[str, str], Report]


def hostile(i: int) -> str:
    """A string that runs a script wherever it is pasted into HTML unescaped, numbered by field."""
    return f"<script>window.pwned={i}</script>\"><img src=x onerror=window.pwned={i}>'&amp;"


RENAMED_TOOL = "get_weather_alerts"  # renamed to a hostile name in every place a tool name is written


def hostile_report(report: Report, tool: str, start: int, model: str, *, stopped: bool = False) -> Report:
    """The report with a hostile string in every field the page shows: case names, prompts, files,
    tags, reasons, arguments, traces, a tool's name (everywhere) and every description, lint
    findings, warnings, the left-out tools, the run's model, config and origin, and (`stopped`) why the
    run stopped."""
    text = report.model_dump_json().replace(RENAMED_TOOL, json.dumps(tool)[1:-1])
    report = Report.model_validate_json(text)
    n = iter(range(start, start + 10_000))
    cases = []
    for k, case in enumerate(report.cases):
        samples = []
        for s in case.samples:
            update: dict[str, Any] = {"reasons": [*s.reasons, hostile(next(n))]}
            if s.picked_tool is not None and s.trace is None:  # a trajectory's are its first call's
                update["picked_args"] = {"city": hostile(next(n))}
            if s.trace is not None:
                answer = lambda c: "result" if c.error is None else "error"  # noqa: E731 (a call has one)
                calls = [
                    c.model_copy(update={"arguments": {"q": hostile(next(n))}, answer(c): hostile(next(n))})
                    for c in s.trace.tool_calls
                ]
                final = hostile(next(n))
                update["trace"] = s.trace.model_copy(update={"tool_calls": calls, "final_response": final})
            samples.append(s.model_copy(update=update))
        source = case.source.model_copy(update={"file": hostile(next(n))})
        cases.append(
            case.model_copy(
                update={
                    "name": case.name + hostile(900_000 + k),  # the same on both sides: cases pair
                    "prompt": hostile(next(n)),
                    "source": source,
                    "tags": [hostile(next(n))],
                    "samples": samples,
                }
            )
        )
    surface = report.surface.model_copy(
        update={
            "definitions": [
                {**d, "description": hostile(next(n)), "title": hostile(next(n))} for d in report.surface.definitions
            ],
            "left_out": [LeftOutOut(name=hostile(next(n)), reason=hostile(next(n)))],
            "origin": hostile(next(n)),
        }
    )
    lint = [
        f.model_copy(update={"message": hostile(next(n)), "fix": hostile(next(n)), "file": hostile(next(n))})
        for f in report.lint
    ]
    return report.model_copy(
        update={
            "cases": cases,
            "surface": surface,
            "lint": lint,
            "warnings": [hostile(next(n))],
            "flaky": [cases[0].name],
            "run": report.run.model_copy(update={"model": model, "config": hostile(next(n))}),
            "gate": report.gate.model_copy(update={"stopped": hostile(next(n)) if stopped else None}),
        }
    )


def hostile_outcome(reports: Reports) -> tuple[Outcome, str]:
    """Two models' outcomes built from hostile reports, with a hostile label, base label, notes and
    reasons; and the hostile tool name."""
    tool = hostile(0)
    models = []
    for i, label in enumerate(screenshot.MODELS):
        model = hostile(50 + i)  # the same on both sides: a base of another model is no baseline
        base = hostile_report(reports[(label, "base")], tool, 50_000 * (i + 1), model)
        head = hostile_report(reports[(label, "head")], tool, 10_000 * (i + 1), model, stopped=True)
        one = compare_saved(base, head, {"max_drop": 0}, base_label="main")
        m = one.models[0]
        verdict = replace(m.verdict, reasons=(*m.verdict.reasons, hostile(80 + i)), notes=(hostile(70 + i),))
        models.append(replace(m, label=label + hostile(60 + i), verdict=verdict))
    outcome = Outcome(models=tuple(models), verdict=joint_verdict(models), base_label=hostile(99), notes=(hostile(98),))
    return outcome, tool


# ----------------------------------------------------------------------------- reports on disk, and names


def write_report(report: Report, path: Path) -> None:
    """One model's report written as toolselect writes it."""
    from toolselect.report.files import write_reports

    write_reports((report,), path)


def shown_name(case: Any) -> str:
    """The text the HTML report shows for a case (unescaped): a holdout case by its place."""
    return f"holdout case ({case.source.file}:{case.source.line})" if case.split == "holdout" else case.name


class Clock:
    """A clock a test moves by hand (`clock.now += 30`)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now
