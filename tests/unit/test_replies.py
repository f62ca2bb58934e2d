"""Replies without a tool call: their kind read by the rules (measured against labelled replies), the
cases that expect a kind, and how a sample is scored by it — pure, no model."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.builders import weather_surface, write_config
from tests.conftest import TESTS
from toolselect.config import Overrides, load_config
from toolselect.errors import ConfigError
from toolselect.golden import Case, Source
from toolselect.pick import Pick
from toolselect.replies import classify
from toolselect.report.reading import right_cell
from toolselect.resolve import load_cases, resolve_settings
from toolselect.scoring import score_sample
from toolselect.taxonomy import SampleOutcome

REPLIES = TESTS / "data" / "replies"
DEVELOPED_ON = ("labelled.jsonl", "fresh.jsonl", "heldout.jsonl", "final.jsonl", "untouched.jsonl")


@pytest.mark.parametrize("name", DEVELOPED_ON)
def test_the_rules_agree_with_nine_in_ten_labelled_replies_of_every_kind(name):
    rows = [json.loads(line) for line in (REPLIES / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 80 and {r["kind"] for r in rows} == {"clarify", "unable", "answer", "empty"}
    read = Counter((r["kind"], classify(r["text"])) for r in rows)
    for kind in ("clarify", "unable", "answer", "empty"):  # per kind, not only overall
        labelled = sum(n for (want, _), n in read.items() if want == kind)
        assert read[(kind, kind)] >= 0.9 * labelled, (kind, read)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Could you tell me:\n1. the city\n2. the dates?", "clarify"),  # list-shaped
        ("I need a few details first:\n- the date\n- the time", "clarify"),
        ("Tell me the city and I'll check.", "clarify"),  # a request, no question mark
        ("Economy or business?", "clarify"),
        ("It's 22°C in Paris. Anything else I can help with?", "answer"),  # a courtesy at the end
        ("Who doesn't love rain? Here in Oslo it keeps the air clean all year round.", "answer"),  # rhetorical
        ("I can't book flights. Would you like me to search the web instead?", "unable"),  # an offer
        ('Here is a polite decline: "Unfortunately I can\'t make it on Friday, but thank you!"', "answer"),
        ("Lo siento, no puedo reservar hoteles.", "unable"),
        ("Pour quelle ville voulez-vous la météo ?", "clarify"),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', "empty"),  # a call written as text
        ("  …  ", "empty"),
        ("2 + 2 = 4.", "answer"),
    ],
)
def test_each_kind_by_its_rule(text, kind):
    assert classify(text) == kind


def case(expect_tool=None, expect_reply=None) -> Case:
    return Case("c", "What's the weather like?", expect_tool, {}, Source("g.yaml", 3), expect_reply=expect_reply)


SURFACE = weather_surface("Forecast for the coming days")


def score(c: Case, pick: Pick, reads: bool = True):
    return score_sample(c, pick, SURFACE, reads_replies=reads)


def test_a_clarify_case_fails_a_guess_and_an_answer_and_passes_a_question():
    clarify = case(expect_reply="clarify")
    asked = score(clarify, Pick(text="Which city?"))
    assert asked.outcome == SampleOutcome.PASS and asked.reply is not None and asked.reply.kind == "clarify"
    guessed = score(clarify, Pick(tool="get_weather", args={"city": "Paris"}))
    assert guessed.outcome == SampleOutcome.RES_GUESSED
    assert guessed.reasons == ("expected a question to the user first, got a guessed call to get_weather",)
    answered = score(clarify, Pick(text="It's sunny in Paris."))
    assert answered.outcome == SampleOutcome.RES_WRONG_REPLY
    assert answered.reasons == ("expected the model to ask the user first; it answered",)
    assert (
        score(case(), Pick(tool="get_weather", args={})).outcome == SampleOutcome.RES_UNNECESSARY
    )  # no kind: as before


def test_a_cut_refused_or_empty_reply_is_never_restraint():
    for stop, said in (("max_tokens", "cut at the token limit"), ("length", "cut at the token limit"),
                       ("refusal", "the API refused"), ("content_filter", "content filter")):  # fmt: skip
        cut = score(case(), Pick(text="It's sunny in", stop_reason=stop))
        assert cut.outcome == SampleOutcome.NO_REPLY and said in cut.reasons[0]
    assert score(case(), Pick(text="")).outcome == SampleOutcome.NO_REPLY
    assert score(case(), Pick(text="You're welcome!")).outcome == SampleOutcome.PASS  # any usable reply, no kind asked
    # a local picker (bm25) writes nothing: its silence is no call, as before, with no kind
    quiet = score(case(expect_reply="clarify"), Pick(text=""), reads=False)
    assert quiet.outcome == SampleOutcome.PASS and quiet.reply is None


def test_a_missed_call_says_what_the_model_did_instead():
    missed = score(case("get_weather"), Pick(text="I don't have access to weather data."))
    assert missed.outcome == SampleOutcome.SEL_MISSED and missed.reply is not None and missed.reply.kind == "unable"
    assert missed.reasons == ("expected get_weather, but the model called no tool (it said it can't)",)


def test_expect_reply_is_for_a_case_that_expects_no_call_in_yaml_and_jsonl(tmp_path):
    (tmp_path / "golden.jsonl").write_text(
        '{"id": "a", "question": "Weather?", "expected_tool": null, "expect_reply": "clarify"}\n'
        '{"id": "b", "question": "Weather in Oslo?", "expected_tool": "get_weather", "expect_reply": "clarify"}\n'
    )
    path = write_config(tmp_path, "tools_file: t.json\nevals:\n  provider: bm25\n  golden: golden.jsonl\n")
    loaded = load_config(path, {})
    with pytest.raises(ConfigError) as refused:
        load_cases(loaded, resolve_settings(loaded, Overrides(), {}, tmp_path))
    assert "golden.jsonl:2" in refused.value.message and "golden.jsonl:1" not in refused.value.message
    assert "expect_reply is for a case that expects no call: set expected_tool: null" in refused.value.message
    (tmp_path / "golden.jsonl").write_text('{"id": "a", "question": "Weather?", "expected_tool": null, '
                                           '"expect_reply": "ask"}\n')  # fmt: skip
    with pytest.raises(ConfigError) as unknown:
        load_cases(loaded, resolve_settings(loaded, Overrides(), {}, tmp_path))
    assert "golden.jsonl:1" in unknown.value.message and "clarify" in unknown.value.message
    (tmp_path / "golden.jsonl").write_text('{"id": "a", "question": "Weather?", "expected_tool": null, '
                                           '"expect_reply": "unable"}\n')  # fmt: skip
    [ok] = load_cases(loaded, resolve_settings(loaded, Overrides(), {}, tmp_path))
    assert ok.expect_reply == "unable"


def test_a_no_call_row_is_right_with_any_usable_reply_and_says_which():
    from toolselect.diff import CellDelta
    from toolselect.render.common import cell_line, hot_cells

    assert [right_cell("(none)", c) for c in ("(none: clarify)", "(none: answer)", "(none: empty)", "get_weather")] == [
        True, True, False, False
    ]  # fmt: skip
    assert not right_cell("(none: clarify)", "(none: answer)")  # the case expects a question
    moved = CellDelta(expected="(none)", picked="(none: clarify)", base=0, head=2)
    assert cell_line(moved) == "- ✅ more right: `(none)` as `(none: clarify)`: 0 → 2"
    assert hot_cells({"(none)": {"(none: answer)": 3, "(none: empty)": 1}}) == [("(none)", "(none: empty)", 1)]
