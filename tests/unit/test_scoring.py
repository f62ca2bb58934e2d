"""Scoring rules: toolproof's loose rule, the match modes, forbid_extra_args and outcome codes."""

from __future__ import annotations

import pytest

from toolselect.golden import Case, Source
from toolselect.matching import exact_equal, loose_equal, match_value
from toolselect.pick import Pick, failed, parse_args, skipped
from toolselect.scoring import score_sample
from toolselect.surface import build_surface
from toolselect.taxonomy import SampleOutcome

TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    {
        "name": "get_forecast",
        "description": "Forecast",
        "inputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "maximum": 7},
                "extra": {"type": "string"},
            },
            "required": ["city"],
        },
    },
    {
        "name": "search.web",
        "description": "Search",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
    {"name": "broken", "description": "bad schema", "inputSchema": {"type": "strng"}},
]
SURFACE = build_surface(TOOLS, "test")


def case(expect_tool="get_weather", expect_args=None, match=None, forbid=False) -> Case:
    return Case(
        name="c",
        prompt="p",
        expect_tool=expect_tool,
        expect_args=expect_args or {},
        source=Source("g.yaml", 3),
        match=match or {},
        forbid_extra_args=forbid,
    )


def outcome(c: Case, p: Pick, **kw) -> SampleOutcome:
    return score_sample(c, p, SURFACE, **kw).outcome


# --- toolproof's loose rule -------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "same"),
    [
        ("  PARIS ", "paris", True),  # trimmed and case-folded
        ("Straße", "STRASSE", True),  # casefold, not lower
        ("New  York", "new york", False),  # inner whitespace is not collapsed
        (5, 5.0, True),  # numbers by value
        ("5", 5, False),  # a string is not a number
        (True, 1, False),  # a bool is not a number
        (1, True, False),
        (True, True, True),
        (1.0000001, 1.0, False),  # no tolerance
        ({"a": 1, "b": 2}, {"a": 1}, True),  # extra keys allowed
        ({"a": 2}, {"a": 1}, False),
        ({"b": 1}, {"a": 1}, False),
        ([1, "X"], [1, "x"], True),  # element by element
        ([1, 2], [2, 1], False),  # order matters
        ([1], [1, 2], False),
        (None, None, True),
        ("x", None, False),
    ],
)
def test_loose_equal(actual, expected, same):
    assert loose_equal(actual, expected) is same


@pytest.mark.parametrize(
    ("actual", "expected", "mode", "same"),
    [
        ("login page tests", "LOGIN", "contains", True),
        ("logout", "login", "contains", False),
        (42, "42", "contains", False),
        ("TC-42", r"^TC-\d+$", "regex", True),
        ("tc-42", r"^TC-\d+$", "regex", False),  # regex is case-sensitive, on the raw string
        ("high", ["High", "urgent"], "any_of", True),
        ("low", ["high", "urgent"], "any_of", False),
        (5.04, 5, {"approx": 0.05}, True),
        (5.2, 5, {"approx": 0.05}, False),
        ("5", 5, {"approx": 1}, False),
        ("Paris", "Paris", "exact", True),
        ("paris", "Paris", "exact", False),
        (" Paris", "Paris", "exact", False),
        ({"a": 1, "b": 2}, {"a": 1}, "exact", False),  # exact: no extra keys
        (5.0, 5, "exact", True),  # JSON has one number type
        (True, 1, "exact", False),
    ],
)
def test_match_modes(actual, expected, mode, same):
    assert match_value(actual, expected, mode) is same


def test_exact_nested_lists():
    assert exact_equal([{"a": [1, "x"]}], [{"a": [1, "x"]}])
    assert not exact_equal([{"a": [1, "X"]}], [{"a": [1, "x"]}])


# --- outcome codes ------------------------------------------------------------------------


def test_pass_with_loose_args():
    assert (
        outcome(case(expect_args={"city": "Paris"}), Pick("get_weather", {"city": " paris "}, calls=1))
        is SampleOutcome.PASS
    )


def test_no_tool_expected_and_none_called_passes():
    assert outcome(case(expect_tool=None), Pick(None)) is SampleOutcome.PASS


def test_res_unnecessary_whatever_the_name():
    assert outcome(case(expect_tool=None), Pick("get_weather", {"city": "x"})) is SampleOutcome.RES_UNNECESSARY
    assert outcome(case(expect_tool=None), Pick("made_up", {})) is SampleOutcome.RES_UNNECESSARY


def test_sel_missed():
    r = score_sample(case(), Pick(None, text="I can't check the weather."), SURFACE)
    assert r.outcome is SampleOutcome.SEL_MISSED
    assert r.reasons == ("expected get_weather, but the model called no tool",)


def test_sel_wrong_and_unknown():
    assert outcome(case(), Pick("get_forecast", {"city": "x"})) is SampleOutcome.SEL_WRONG
    assert outcome(case(), Pick("made_up", {"x": 1})) is SampleOutcome.SEL_UNKNOWN


def test_pick_of_left_out_tool_is_unknown_not_a_crash():
    r = score_sample(case(expect_tool="broken"), Pick("broken", {"x": 1}), SURFACE)
    assert r.outcome is SampleOutcome.SEL_UNKNOWN
    assert "left out" in r.reasons[0]


def test_expect_tool_list_accepts_any():
    c = case(expect_tool=("get_weather", "get_forecast"), expect_args={"city": "Oslo"})
    assert outcome(c, Pick("get_forecast", {"city": "oslo"})) is SampleOutcome.PASS
    assert outcome(c, Pick("get_weather", {"city": "oslo"})) is SampleOutcome.PASS
    assert outcome(c, Pick("search.web", {"query": "oslo"})) is SampleOutcome.SEL_WRONG


def test_arg_invalid_schema():
    r = score_sample(
        case(expect_tool="get_forecast", expect_args={"city": "Berlin"}),
        Pick("get_forecast", {"city": "Berlin", "days": "3"}),
        SURFACE,
    )
    assert r.outcome is SampleOutcome.ARG_INVALID
    assert r.reasons[0] == "arguments don't match the input schema at 'days': '3' is not of type 'integer'"
    assert r.schema_ok is False and r.args_ok is False


def test_arg_invalid_when_raw_text_is_not_json():
    r = score_sample(case(), Pick("get_weather", None, raw_args='{"city": "Paris"} trailing'), SURFACE)
    assert r.outcome is SampleOutcome.ARG_INVALID
    assert "not valid JSON" in r.reasons[0]


def test_arg_invalid_required_missing_even_without_expected_args():
    r = score_sample(case(), Pick("get_weather", {}), SURFACE)
    assert r.outcome is SampleOutcome.ARG_INVALID
    assert r.args_ok is None  # no expected arguments: not counted in arg accuracy


def test_arg_semantic():
    r = score_sample(case(expect_args={"city": "Paris"}), Pick("get_weather", {"city": "London"}), SURFACE)
    assert r.outcome is SampleOutcome.ARG_SEMANTIC
    assert r.reasons == ("argument 'city' is 'London', expected 'Paris'",)


def test_missing_expected_key_is_semantic():
    c = case(expect_tool="get_forecast", expect_args={"city": "Oslo", "days": 5})
    r = score_sample(c, Pick("get_forecast", {"city": "Oslo"}), SURFACE)
    assert r.outcome is SampleOutcome.ARG_SEMANTIC
    assert r.reasons == ("argument 'days' missing (expected 5)",)


def test_keys_not_listed_are_not_checked():
    c = case(expect_tool="get_forecast", expect_args={"city": "Oslo"})
    assert outcome(c, Pick("get_forecast", {"city": "Oslo", "days": 3})) is SampleOutcome.PASS


def test_any_of_with_null_allows_absent_key():
    c = case(expect_tool="get_forecast", expect_args={"city": "Oslo", "days": [None, 7]}, match={"days": "any_of"})
    assert outcome(c, Pick("get_forecast", {"city": "Oslo"})) is SampleOutcome.PASS
    assert outcome(c, Pick("get_forecast", {"city": "Oslo", "days": 7})) is SampleOutcome.PASS
    assert outcome(c, Pick("get_forecast", {"city": "Oslo", "days": 3})) is SampleOutcome.ARG_SEMANTIC
    strict = case(expect_tool="get_forecast", expect_args={"city": "Oslo", "days": [7]}, match={"days": "any_of"})
    assert outcome(strict, Pick("get_forecast", {"city": "Oslo"})) is SampleOutcome.ARG_SEMANTIC


def test_forbid_extra_args_semantic_vs_invalid():
    c = case(expect_tool="get_forecast", expect_args={"city": "Oslo"}, forbid=True)
    r = score_sample(c, Pick("get_forecast", {"city": "Oslo", "extra": "x"}), SURFACE)
    assert r.outcome is SampleOutcome.ARG_SEMANTIC
    assert "unexpected argument 'extra'" in r.reasons[0]
    # get_weather's schema says additionalProperties: false, so the schema itself rejects it
    w = case(expect_args={"city": "Oslo"}, forbid=True)
    assert outcome(w, Pick("get_weather", {"city": "Oslo", "bogus": 1})) is SampleOutcome.ARG_INVALID
    assert outcome(c, Pick("get_forecast", {"city": "Oslo"})) is SampleOutcome.PASS


def test_error_and_not_evaluated():
    assert outcome(case(), failed("429 rate limited")) is SampleOutcome.ERROR
    assert outcome(case(), skipped("not in cache")) is SampleOutcome.NOT_EVALUATED


def test_tool_only_provider_judges_the_tool_alone():
    r = score_sample(case(expect_args={"city": "Paris"}), Pick("get_weather"), SURFACE, args_measured=False)
    assert r.outcome is SampleOutcome.PASS
    assert r.args_ok is None and r.schema_ok is None


def test_schema_validity_is_recorded_for_wrong_tools_too():
    r = score_sample(case(), Pick("get_forecast", {"days": 3}), SURFACE)
    assert r.outcome is SampleOutcome.SEL_WRONG
    assert r.schema_ok is False


@pytest.mark.parametrize(
    ("text", "value", "raw"),
    [
        ('{"a": 1}', {"a": 1}, None),
        ("", {}, None),
        ('{"a": 1}}', None, '{"a": 1}}'),
        ("not json", None, "not json"),
    ],
)
def test_parse_args(text, value, raw):
    assert parse_args(text) == (value, raw)
