"""Golden files: seed-001 JSONL and toolproof-format YAML load into the same case type."""

from __future__ import annotations

import pytest

from toolselect.errors import ConfigError
from toolselect.golden import load_golden
from toolselect.lint import check_cases
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
