"""A report read from disk is untrusted (the fork poster reads a fork PR's artifact): its enumerated
fields are checked, its numbers must add up, its size is bounded before it is parsed, and whatever
text it carries is escaped in the comment."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from tests.builders import build_report, mutate, write_report
from tests.conftest import run_record
from tests.unit.gfm import live
from toolselect.errors import ConfigError
from toolselect.gate import Gate
from toolselect.golden import Case, Source
from toolselect.lint.finding import Finding
from toolselect.locate import display_path
from toolselect.outcome import compare_saved
from toolselect.pick import Pick
from toolselect.render.comment import render_comment
from toolselect.render.markdown import render_markdown
from toolselect.report.files import MAX_CONTAINERS, MAX_REPORT_BYTES, read_report
from toolselect.scoring import score_sample
from toolselect.surface import build_surface

OBJ = {"type": "object", "properties": {"city": {"type": "string"}}}
EVIL = (
    "<img src=https://evil.example/x.png> [click](https://evil.example) \\[again\\](https://evil.example) "
    "@acme/security @octocat www.evil.example acme/infra#12 \u202eexe.txt\u202c **bold** "
    "<!-- toolselect:default -->"
)
EVIL_TOOL = "lookup<img src=x>@acme/team|\u202e"
METRIC = {"value": None, "numerator": 0, "denominator": 0}


def crafted(description: str = "Looks things up") -> dict:
    """A consistent report whose every string a fork controls carries HTML, links and pings."""
    surface = build_surface(
        [
            {"name": "get_weather", "description": "Weather now", "inputSchema": OBJ},
            {"name": EVIL_TOOL, "description": description, "inputSchema": OBJ},
        ],
        EVIL,
    )
    cases = [
        Case(f"case {EVIL}", f"prompt {EVIL}", "get_weather", {"city": "x"}, Source(f"{EVIL}.jsonl", 1)),
        Case(f"other {EVIL}", "p", EVIL_TOOL, {}, Source("g.jsonl", 2)),
        Case("third", "q", "get_weather", {}, Source("g.jsonl", 3)),
    ]
    picks = [Pick(EVIL_TOOL, {"city": EVIL}, text=EVIL), Pick(EVIL, {"q": EVIL}), Pick("get_weather", {})]
    results = [score_sample(c, p, surface, 0) for c, p in zip(cases, picks, strict=True)]
    lint = [Finding("description-missing", "error", EVIL, EVIL, "surface", EVIL_TOOL, None, EVIL, 3)]
    report = build_report(
        cases,
        results,
        surface,
        run_record("command").model_copy(update={"model": EVIL}),
        Gate.from_values({"min_accuracy": 1, "max_error_rate": 0, "min_tool_recall": {EVIL_TOOL: 0.9}}),
        warnings=[EVIL],
        lint=lint,
    )
    data = report.model_dump(mode="json")
    data["gate"]["reasons"].append(EVIL)
    data["surface"]["left_out"] = [{"name": EVIL, "reason": EVIL}]
    return data


def written(tmp_path: Path, data: dict, name: str = "report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def refused(tmp_path: Path, data: dict) -> str:
    with pytest.raises(ConfigError) as exc:
        read_report(written(tmp_path, data))
    return str(exc.value)


def test_a_crafted_report_renders_no_html_links_pings_or_bidi(tmp_path):
    head = read_report(written(tmp_path, crafted(EVIL), "head.json"))
    base = read_report(written(tmp_path, crafted(), "base.json"))
    bodies = {
        "comment, head only": render_comment(compare_saved(None, head, {}, base_label="b", base_note=EVIL)),
        "comment with a base": render_comment(compare_saved(base, head, {}, base_label="b")),
        "markdown report": render_markdown(compare_saved(None, head, {}, base_label="b")),
    }
    for what, body in bodies.items():
        assert EVIL_TOOL.split("<")[0] in body and "exe.txt" in body, what  # the text is shown…
        assert live(body) == [], what  # …but nothing in it is live
        assert body.count("<!-- toolselect:") == (0 if what == "markdown report" else 1), what
    # the crafted strings reached every kind of place: names, prompts' files, picks, reasons, lint, tools
    comment = bodies["comment with a base"]
    assert "Tool surface changes" in comment and "Lint: 1 error" in comment and "Left out" in comment


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        (("cases", 0, "samples", 0, "outcome"), "<img src=x> @acme/team", "cases[0].samples[0].outcome: Input should"),
        (("counts", "outcomes"), {"PASS": 1, "<b>pwn</b>": 2}, "counts.outcomes key '<b>pwn</b>': Input should"),
        (("cases", 1, "status"), "@acme/team", "cases[1].status: Input should be 'reviewed' or 'needs_review'"),
        (("run", "cache_mode"), "[x](https://evil)", "run.cache_mode: Input should be 'use', 'refresh', 'only'"),
        (("metrics", "accuracy", "ci_method"), "<b>", "metrics.accuracy.ci_method: Input should be 'wilson'"),
        (("metrics", "<img src=x>"), METRIC, "metrics: unknown key '<img src=x>' (known: accuracy, "),
        (("position",), {"<b>": METRIC}, "position: unknown key '<b>' (known: first, middle, last)"),
        (("lint", 0, "code"), "<img src=x>", "lint[0].code: String should match pattern"),
        (("lint", 0, "severity"), "critical", "lint[0].severity: Input should be 'error', 'warning' or 'info'"),
        (("surface", "hash"), "<img src=x>", "surface.hash: String should match pattern"),
        (("run", "provider"), "<img src=x>", "run.provider: '<img src=x>' is not a toolselect provider"),
    ],
)
def test_enumerated_fields_are_checked_when_read(tmp_path, where, value, said):
    data = crafted()
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    message = refused(tmp_path, data)
    assert message.startswith(f"{display_path(tmp_path / 'report.json')}: not a valid toolselect report: ")
    assert said in message
    assert "Traceback" not in message and "\n" not in message


def test_an_enum_violation_is_shown_with_the_value_it_got(tmp_path):
    data = crafted()
    data["cases"][0]["samples"][0]["outcome"] = "SEL-WRONGISH"
    assert "(got 'SEL-WRONGISH')" in refused(tmp_path, data)


def test_the_json_format_is_unchanged(tmp_path):
    """Enums are written as the same strings as before, and read back to an equal report."""
    data = crafted()
    path = written(tmp_path, data)
    report = read_report(path)
    write_report(report, tmp_path / "again.json")
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert again == data
    assert again["cases"][0]["samples"][0]["outcome"] == "SEL-WRONG" and again["counts"]["outcomes"] == {
        "SEL-UNKNOWN": 1,
        "SEL-WRONG": 1,
        "PASS": 1,
    }


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (("cases", 2, "pass_rate"), None, "cases[2].pass_rate: null, but evaluated is 1"),
        (("cases", 2, "pass_rate"), 0.5, "cases[2].pass_rate: 0.5 is not passed/evaluated (1/1)"),
        (("cases", 0, "passed"), 2, "cases[0].passed: 2 is more than evaluated (1)"),
        (("cases", 0, "evaluated"), 10_000, "cases[0]: passed/evaluated 0/10000, but its samples say 0/1"),
        (("cases", 0, "evaluated"), -1, "cases[0].evaluated: Input should be greater than or equal to 0"),
        (("metrics", "accuracy", "numerator"), 9, "metrics.accuracy: numerator 9 is more than denominator 3"),
        (("metrics", "accuracy", "value"), 0.9, "metrics.accuracy: value 0.9 is not numerator/denominator (1/3)"),
        (("metrics", "accuracy", "ci"), [0.2, 7.0], "metrics.accuracy.ci[1] is 7.0, not a share between 0 and 1"),
        (("counts", "samples"), 4, "counts.samples: 4, but its cases have 3 samples"),
        (("counts", "outcomes"), {"PASS": 3}, "counts.outcomes: not the outcomes of the cases' samples"),
        (("confusion", "get_weather", "get_weather"), 50, "confusion: 52 samples, more than counts.counted_samples"),
        (("gate", "min_accuracy"), 3, "gate.min_accuracy is 3.0, not between 0 and 1 (it is a share: 0.9 means 90%)"),
        (("gate", "max_drop"), -2, "gate.max_drop is -2.0, not 0 or more (it is in points: 5 means five points)"),
        (("gate", "significance"), 1.5, "gate.significance is 1.5, not between 0 and 1"),
        (("gate", "min_tool_recall"), {"get_weather": 1.2}, "gate.min_tool_recall['get_weather'] is 1.2, not between"),
        (("flaky",), ["nobody"], "flaky names a case the report does not have"),
    ],
)
def test_numbers_that_do_not_add_up_are_refused_with_where_and_what(tmp_path, path, value, said):
    message = refused(tmp_path, mutate(crafted(), path, value))
    assert said in message, message
    assert "Traceback" not in message


def test_nan_and_infinity_are_not_numbers(tmp_path):
    text = json.dumps(crafted()).replace('"duration_s": 0.0', '"duration_s": NaN')
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="NaN is not a number JSON allows"):
        read_report(path)


def test_a_case_claiming_10000_samples_is_refused_at_once(tmp_path):
    """Before: Fisher's exact test on the claimed counts took 92 s. Now the counts must match the
    samples listed (at most 1,000 per case): refused before any statistics run."""
    data = crafted()
    for case in data["cases"]:
        case.update(passed=10_000 if case["passed"] else 0, evaluated=10_000, pass_rate=case["passed"] and 1.0)
    message = refused(tmp_path, data)
    assert "passed/evaluated 0/10000, but its samples say 0/1" in message


def test_too_many_samples_in_a_case_are_refused_before_validation(tmp_path):
    data = crafted()
    sample = data["cases"][2]["samples"][0]
    data["cases"][2]["samples"] = [sample] * 1_001
    assert "cases[2].samples: 1,001 samples, more than the 1,000 a case can have" in refused(tmp_path, data)


def _fill(path: Path, size: int) -> None:
    """`[[],[],…]` of exactly `size` bytes: what makes Python's JSON parser take ~26× a file's size."""
    chunk = b"[]," * (1 << 18)
    with path.open("wb") as f:
        f.write(b"[")
        left = size - 2
        while left > 0:
            part = chunk[: min(len(chunk), left)]
            f.write(part)
            left -= len(part)
        f.write(b"]")


def _refused_with_peak(path: Path) -> tuple[str, int]:
    """The error, and the most memory reading the file took (timing is for benchmarks, not tests)."""
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as exc:
            read_report(path)
        return str(exc.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "report.json"
    _fill(path, MAX_REPORT_BYTES + 1)
    message, peak = _refused_with_peak(path)
    assert "67,108,865 bytes, more than the 64 MB (67,108,864 bytes) a toolselect report can be; not read" in message
    assert peak < 1024 * 1024  # not read, let alone parsed


def test_a_50_mb_file_of_empty_lists_is_refused_before_it_is_parsed(tmp_path):
    """The finding: 50 MB of `[]` took 1.3 GB to parse. It is under the size limit, but it has far
    more arrays than a report can: refused from a count of the raw bytes, in bounded memory."""
    path = tmp_path / "report.json"
    _fill(path, 50 * 1024 * 1024)
    message, peak = _refused_with_peak(path)
    assert f"more than {MAX_CONTAINERS:,} JSON arrays and objects" in message and "not parsed" in message
    assert peak < 60 * 1024 * 1024  # the file's bytes, not 26× them


def test_not_json_and_not_a_report_are_still_clear(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a readable toolselect report"):
        read_report(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a toolselect report with schema_version 1"):
        read_report(path)
    with pytest.raises(ConfigError, match="report not found"):
        read_report(tmp_path / "missing.json")
