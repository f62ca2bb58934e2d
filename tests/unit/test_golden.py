"""Golden files: seed-001 JSONL and toolproof-format YAML load into the same case type."""

from __future__ import annotations

import pytest

from toolselect.errors import ConfigError, ConfigErrors
from toolselect.golden import load_golden
from toolselect.lint.stops import check_cases
from toolselect.surface import build_surface


def test_jsonl_seed_001_format(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_text(
        '{"id": "G01", "question": "Find high priority login tests", "expected_tool": "search_test_cases", '
        '"expected_args": {"query": "login", "priority": "high"}, "match": {"query": "contains"}}\n'
        "\n// a comment line\n"
        '{"id": "N01", "question": "What is a smoke test?", "expected_tool": null, "expected_args": {}}\n'
    )
    g01, n01 = load_golden(path, forbid_extra_args=False, base=tmp_path)
    assert (g01.name, g01.prompt, g01.expect_tool) == ("G01", "Find high priority login tests", "search_test_cases")
    assert g01.match == {"query": "contains"} and g01.source.file == "golden.jsonl" and g01.source.line == 1
    assert n01.expected == () and n01.source.line == 4


def test_yaml_list_in_toolproof_format(tmp_path):
    path = tmp_path / "more.yaml"
    path.write_text("# cases\n- prompt: a\n  expect_tool: x\n\n- name: second\n  prompt: b\n  expect_tool: null\n")
    a, b = load_golden(path, forbid_extra_args=True, base=tmp_path)
    assert (a.name, a.source.line, a.forbid_extra_args) == ("a", 2, True)
    assert (b.name, b.source.line) == ("second", 5)


def test_case_level_forbid_extra_args_overrides_the_default(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "q", "expected_tool": "x", "forbid_extra_args": false}\n')
    [case] = load_golden(path, forbid_extra_args=True)
    assert case.forbid_extra_args is False


def test_duplicate_names_name_both_places(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(
        '{"id": "a", "question": "q1", "expected_tool": null}\n{"id": "a", "question": "q2", "expected_tool": null}\n'
    )
    cases = load_golden(path, False, base=tmp_path)
    with pytest.raises(ConfigError) as exc:
        check_cases(cases, build_surface([], "t"))
    assert str(exc.value) == "g.jsonl:2: duplicate case name 'a' (also at g.jsonl:1); give one of them a distinct name"


def test_duplicate_json_keys_are_an_error(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "a", "question": "q1", "expected_tool": null, "id": "b"}\n')
    with pytest.raises(ConfigError, match=r"g.jsonl:1: duplicate key 'id'"):
        load_golden(path, False, base=tmp_path)


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(
        '{"id": "a", "question": "weather in Paris\u2028please", "expected_tool": null}\n', encoding="utf-8"
    )
    [case] = load_golden(path, False)
    assert case.prompt == "weather in Paris\u2028please"


def test_trajectory_cases_in_yaml_and_jsonl(tmp_path):
    yaml_file = tmp_path / "t.yaml"
    yaml_file.write_text(
        "- name: chain\n  prompt: weather, then forecast\n  expect_calls:\n"
        "    - {tool: get_weather, args: {city: Oslo}}\n    - tool: get_forecast\n  sequence: unordered\n"
        "  mocks:\n    get_weather: {result: {sky: sunny}}\n"
        "    get_forecast:\n      - {error: down, when: {city: Oslo}}\n      - {result: rain}\n  max_turns: 4\n"
        "  final: {contains: rain}\n  acceptable: [search]\n"
    )
    [case] = load_golden(yaml_file, False)
    assert case.script is not None and case.expect_tool == ("get_weather", "get_forecast")  # any may come first
    assert case.script.expect.order == "unordered" and case.script.max_turns == 4
    assert [m.error for m in case.script.mocks["get_forecast"]] == ["down", None]
    assert case.script.expect.final is not None and case.script.expect.final.contains == ("rain",)
    assert case.acceptable == ("search",)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"id": "n", "question": "hi", "expect_calls": []}\n')
    [none] = load_golden(jsonl, False)
    assert none.script is not None and none.expect_tool is None and none.script.expect.calls == ()


BAD_TRAJECTORIES = [
    ("- prompt: a\n  expect_tool: x\n  mocks: {x: {result: 1}}\n",
     "t.yaml:1: cases[0]: mocks is for trajectory cases: add expect_calls (the calls expected, in order)"),
    ("- prompt: a\n  expect_tool: x\n  expect_calls: []\n",
     "t.yaml:1: cases[0]: a case has expect_tool (one call) or expect_calls (a trajectory), not both"),
    ("- prompt: a\n  expect_calls: [{tool: x}]\n  mocks:\n    x: {result: 1, error: e}\n",
     "t.yaml:4: cases[0].mocks.x[0]: a mock answers with either result (any JSON) or error (a message)"),
    ("- prompt: a\n  expect_calls: [{tool: x}]\n  sequence: random\n",
     "t.yaml:3: cases[0].sequence must be one of 'strict', 'in_order', 'unordered' or 'any_of_these'"),
    ("- prompt: a\n  expect_calls: [{tool: x}]\n  max_turns: 0\n",
     "t.yaml:3: cases[0].max_turns must be at least 1 (got 0)"),
    ("- prompt: a\n  expect_calls:\n    - {tool: x, args: {q: a}, match: {city: regex}}\n",
     "t.yaml:3: match names 'city' but args has no 'city'"),
    ("- prompt: a\n  expect_calls: [{tool: x}]\n  final: {regex: '('}\n",
     "t.yaml:3: cases[0].final.regex: invalid regex '('"),
    ("- prompt: a\n  expect_calls: [{tol: x}]\n",
     "t.yaml:2: unknown key 'tol' in cases[0].expect_calls[0] (did you mean 'tool'?)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "said"), BAD_TRAJECTORIES)
def test_bad_trajectory_cases_say_where_and_what(tmp_path, text, said):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises((ConfigError, ConfigErrors)) as refused:
        load_golden(path, False)
    messages = getattr(refused.value, "messages", None) or [refused.value.message]
    assert any(said in m for m in messages), messages
