"""Lint: each finding from a deliberately bad surface and a deliberately weak golden set."""

from __future__ import annotations

import json
from collections import Counter

from tests.conftest import DATA
from toolselect.golden import load_golden
from toolselect.lint import confusable_pairs, lint_golden, lint_surface
from toolselect.surface import build_surface

LINT = DATA / "lint"


def surface(name: str):
    return build_surface(json.loads((LINT / name).read_text())["tools"], name)


def test_a_bad_surface_produces_each_surface_finding_once():
    findings = lint_surface(surface("bad_tools.json"), "tools.json")
    counts = Counter((f.code, f.severity) for f in findings)
    assert counts == Counter({
        ("name-empty", "error"): 1, ("name-duplicate", "error"): 1, ("description-missing", "error"): 1,
        ("description-long", "warning"): 1, ("name-unsafe", "warning"): 1, ("input-schema-invalid", "error"): 1,
        ("input-schema-not-object", "error"): 1, ("required-not-in-properties", "error"): 1,
        ("output-schema-invalid", "error"): 1, ("no-required", "warning"): 1, ("param-no-description", "warning"): 1,
        ("enum-unexplained", "warning"): 1, ("description-identical", "error"): 1, ("confusable", "warning"): 1,
    })
    by_code = {f.code: f for f in findings}
    assert by_code["name-unsafe"].message.endswith("it is sent as search_orders")
    assert by_code["param-no-description"].message == "compose_mail.body has no description"
    assert by_code["required-not-in-properties"].message == "convert_currency: required field(s) to are not in properties"
    assert by_code["description-identical"].message.startswith("send_sms, send_fax have byte-identical descriptions")
    assert all(f.fix and f.file == "tools.json" for f in findings)


def test_a_weak_golden_set_produces_each_golden_finding():
    s = surface("weather_tools.json")
    cases = load_golden(LINT / "weak.jsonl", forbid_extra_args=False, base=DATA.parent.parent)
    findings = lint_golden(cases, s)
    codes = Counter(f.code for f in findings)
    assert set(codes) == {
        "case-unknown-tool", "case-expects-left-out", "arg-undeclared", "arg-invalid-value", "case-duplicate-name",
        "prompt-duplicate", "prompt-copies-description", "coverage-no-case", "coverage-few-cases",
        "coverage-negatives", "coverage-boundary", "pending-review",
    }
    by_code = {f.code: f for f in findings}
    assert "(did you mean 'get_weather'?)" in by_code["case-unknown-tool"].message
    assert by_code["arg-invalid-value"].message.endswith("'kelvin' is not one of ['metric', 'imperial']")
    assert by_code["arg-invalid-value"].line == 4 and by_code["arg-invalid-value"].severity == "error"
    assert codes["coverage-no-case"] == 3  # get_forecast, convert_temperature, search_web
    assert by_code["coverage-boundary"].message.startswith("no case sits on the boundary between get_weather and get_forecast")
    assert by_code["coverage-negatives"].file.endswith("weak.jsonl")


def test_on_the_example_server_the_confusable_pair_ranks_first():
    pairs = confusable_pairs(surface("weather_tools.json"), threshold=0.0)
    assert pairs[0][1:] == ("get_weather", "get_forecast")
    assert pairs[0][0] > 2 * pairs[1][0]


def test_the_example_golden_set_is_clean():
    from tests.conftest import EXAMPLE

    s = surface("weather_tools.json")
    cases = load_golden(EXAMPLE / "golden.jsonl", forbid_extra_args=False)
    findings = [f for f in lint_golden(cases, s) if f.code != "coverage-no-case" or f.tool != "get_radar"]
    assert [f.code for f in findings] == []
