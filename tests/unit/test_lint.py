"""Lint: each finding from a deliberately bad surface and a deliberately weak golden set."""

from __future__ import annotations

import json
from collections import Counter

from tests.conftest import DATA
from toolselect.golden import load_golden
from toolselect.lint.finding import confusable_pairs
from toolselect.lint.golden import lint_golden
from toolselect.lint.surface import lint_surface
from toolselect.surface import build_surface

LINT = DATA / "lint"


def surface(name: str):
    return build_surface(json.loads((LINT / name).read_text())["tools"], name)


def test_a_bad_surface_produces_each_surface_finding_once():
    findings = lint_surface(surface("bad_tools.json"), "tools.json")
    counts = Counter((f.code, f.severity) for f in findings)
    assert counts == Counter(
        {
            ("name-empty", "error"): 1,
            ("name-duplicate", "error"): 1,
            ("description-missing", "error"): 1,
            ("description-long", "warning"): 1,
            ("name-unsafe", "warning"): 1,
            ("input-schema-invalid", "error"): 1,
            ("input-schema-not-object", "error"): 1,
            ("required-not-in-properties", "error"): 1,
            ("output-schema-invalid", "error"): 1,
            ("no-required", "warning"): 1,
            ("param-no-description", "warning"): 1,
            ("enum-unexplained", "warning"): 1,
            ("description-identical", "error"): 1,
            ("confusable", "warning"): 1,
            ("no-annotations", "warning"): 1,
        }
    )
    by_code = {f.code: f for f in findings}
    assert by_code["name-unsafe"].message.endswith("it is sent as search_orders")
    assert by_code["param-no-description"].message == "compose_mail: parameter body has no description"
    assert by_code["name-empty"].message.startswith("tools[0] in bad_tools.json's tools/list has no name")
    assert (
        by_code["required-not-in-properties"].message == "convert_currency: required field(s) to are not in properties"
    )
    assert by_code["description-identical"].message.startswith("send_sms, send_fax have byte-identical descriptions")
    assert all(f.fix and f.file == "tools.json" for f in findings)


def test_a_weak_golden_set_produces_each_golden_finding():
    s = surface("weather_tools.json")
    cases = load_golden(LINT / "weak.jsonl", forbid_extra_args=False, base=DATA.parent.parent)
    findings = lint_golden(cases, s)
    codes = Counter(f.code for f in findings)
    assert set(codes) == {
        "case-unknown-tool",
        "case-expects-left-out",
        "arg-undeclared",
        "arg-invalid-value",
        "case-duplicate-name",
        "prompt-duplicate",
        "prompt-copies-description",
        "coverage-no-case",
        "coverage-few-cases",
        "coverage-negatives",
        "coverage-boundary",
        "pending-review",
    }
    by_code = {f.code: f for f in findings}
    assert "(did you mean 'get_weather'?)" in by_code["case-unknown-tool"].message
    assert by_code["arg-invalid-value"].message.endswith("'kelvin' is not one of ['metric', 'imperial']")
    assert by_code["arg-invalid-value"].line == 4 and by_code["arg-invalid-value"].severity == "error"
    assert codes["coverage-no-case"] == 1  # one finding, one fix, for every tool without a case
    assert by_code["coverage-no-case"].message == "no case expects get_forecast, convert_temperature, search_web"
    assert by_code["coverage-boundary"].message.startswith(
        "no case sits on the boundary between get_weather and get_forecast"
    )
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


def test_loose_matching_values_are_not_called_invalid():
    from toolselect.golden import Case, Source

    s = build_surface(
        [
            {
                "name": "search_orders",
                "description": "Find orders.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "filter": {
                            "type": "object",
                            "description": "what to match",
                            "properties": {"status": {"type": "string"}, "limit": {"type": "integer"}},
                            "required": ["status", "limit"],
                        },
                        "units": {
                            "type": "string",
                            "enum": ["metric", "imperial"],
                            "description": "metric or imperial",
                        },
                        "days": {"type": "integer", "maximum": 10, "description": "days"},
                    },
                },
            }
        ],
        "t",
    )
    cases = [
        Case(
            "partial", "p1", "search_orders", {"filter": {"status": "open"}}, Source("g", 1)
        ),  # extra keys are allowed
        Case("case", "p2", "search_orders", {"units": "Metric"}, Source("g", 2)),  # strings ignore case
        Case("near", "p3", "search_orders", {"days": 11}, Source("g", 3), match={"days": {"approx": 2}}),
        Case("wrong-type", "p4", "search_orders", {"days": "3"}, Source("g", 4)),  # "3" never equals 3
        Case(
            "strict", "p5", "search_orders", {"filter": {"status": "open"}}, Source("g", 5), match={"filter": "exact"}
        ),
    ]
    invalid = [f.line for f in lint_golden(cases, s) if f.code == "arg-invalid-value"]
    assert invalid == [4, 5]


def test_enum_values_must_each_be_explained():
    def findings(description):
        s = build_surface(
            [
                {
                    "name": "t",
                    "description": "x",
                    "inputSchema": {
                        "type": "object",
                        "required": ["u"],
                        "properties": {"u": {"type": "string", "enum": ["c", "f"], "description": description}},
                    },
                }
            ],
            "t",
        )
        return [f.code for f in lint_surface(s)]

    assert "enum-unexplained" in findings("Which scale to use")  # 'c' inside 'scale' is no explanation
    assert "enum-unexplained" not in findings("c: Celsius, f: Fahrenheit")


def test_holdout_case_names_stay_out_of_lint_messages():
    from toolselect.golden import Case, Source

    s = surface("weather_tools.json")
    case = Case("what is the weather in my secret town", "q", "get_wether", {}, Source("g", 9), split="holdout")
    [finding] = [f for f in lint_golden([case], s) if f.code == "case-unknown-tool"]
    assert "secret town" not in finding.message and "(a holdout case)" in finding.message


def test_findings_of_one_code_on_one_tool_are_grouped():
    schema = {
        "type": "object",
        "required": ["city"],
        "properties": {
            "city": {"type": "string"},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "lang": {"type": "string", "enum": ["en", "fr"]},
            "days": {"type": "integer", "description": "how many days ahead, 1-10"},
        },
    }
    tools = [{"name": "get_weather", "description": "Current weather in a city.", "inputSchema": schema}]
    findings = lint_surface(build_surface(tools, "t"), "tools.json")
    by_code = Counter(f.code for f in findings)
    assert by_code["param-no-description"] == 1 and by_code["enum-unexplained"] == 1
    messages = {f.code: f.message for f in findings}
    assert messages["param-no-description"] == "get_weather: parameters city, units, lang have no description"
    assert messages["enum-unexplained"] == (
        "get_weather: enums units (metric, imperial), lang (en, fr) do not explain their values"
    )


def test_a_tool_without_a_name_is_named_by_its_place():
    tools = [
        {"name": "get_forecast", "description": "Forecast.", "inputSchema": {"type": "object"}},
        {"description": "Current weather conditions in a city right now.", "inputSchema": {"type": "object"}},
    ]
    s = build_surface(tools, "t")
    assert s.nameless == ("tools[1]",)
    [finding] = [f for f in lint_surface(s, "tools.json") if f.code == "name-empty"]
    assert finding.message == (
        'tools[1] in t\'s tools/list has no name (its description begins "Current weather conditions in a city rig…"): '
        "it is left out of what the model sees"
    )


def test_every_tool_a_trajectory_case_names_is_checked(tmp_path):
    golden = tmp_path / "t.yaml"
    golden.write_text(
        "- name: typo\n  prompt: weather then forecast\n"
        "  expect_calls: [{tool: get_weather}, {tool: get_forecst}]\n  acceptable: [search_webb]\n"
        "  mocks:\n    get_wether: {error: down}\n"
        "- name: unchecked\n  prompt: forecast\n  expect_calls: [{tool: get_weather, args: {town: x}}]\n"
        "  mocks:\n    get_weather: {error: down}\n"
    )
    surface = build_surface(
        [{"name": n, "description": n, "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
         for n in ("get_weather", "get_forecast", "search_web")],
        "t",
    )  # fmt: skip
    findings = lint_golden(load_golden(golden, False), surface)
    found = {(f.code, f.case, f.message.split(":", 1)[-1].strip()) for f in findings}
    messages = " | ".join(m for _, _, m in found)
    assert "expects tool 'get_forecst', which the tool surface does not have (did you mean 'get_forecast'?)" in messages
    assert "acceptable names 'search_webb'" in messages and "mocks names 'get_wether'" in messages
    assert "args key 'town' of the call to get_weather is not a parameter of get_weather" in messages
    assert any(code == "arg-undeclared" and case == "unchecked" for code, case, _ in found)
    assert any(code == "trajectory-error-unchecked" and case == "unchecked" for code, case, _ in found)
