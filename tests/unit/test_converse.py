"""The agent loop's pure parts: stubs answering calls, the conversation's state, the budget walking
a cached trajectory, and a trajectory report rendered and diffed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import build_report, gate, mutate
from tests.conftest import run_record
from toolselect.budget import estimate
from toolselect.cache import AnswerCache, CachedProvider, cache_key
from toolselect.converse import Conversation
from toolselect.golden import Case, Source
from toolselect.outcome import compare_saved
from toolselect.pick import Pick, ToolCall
from toolselect.providers import Provider, Request, WireTool
from toolselect.render.comment import render_comment
from toolselect.scoring import score_sample
from toolselect.settings import default_settings
from toolselect.surface import build_surface
from toolselect.trajectory import DEFAULT_RESULT, Expectation, ExpectedCall, FinalCheck, Mock, Order, Script, Stubs

OBJ = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
SURFACE = build_surface(
    [
        {"name": "get_weather", "description": "Weather now", "inputSchema": OBJ},
        {"name": "get_forecast", "description": "Forecast", "inputSchema": OBJ},
    ],
    "t",
)
REQUEST = Request(
    "Forecast for Paris?", None, tuple(WireTool(t.name, t.description, t.input_schema) for t in SURFACE.tools)
)


def test_stubs_are_consumed_in_order_the_last_repeats_and_when_picks_by_arguments():
    stubs = Stubs(
        {
            "get_forecast": (Mock(error="503"), Mock(result="rain")),
            "get_weather": (Mock(result="sunny", when={"city": "Oslo"}), Mock(result="cloudy", when={"city": "rome"})),
        }
    )
    assert [stubs.answer("get_forecast", {"city": "x"}).error for _ in range(2)] == ["503", None]
    assert stubs.answer("get_forecast", {}).result == "rain"  # the last one repeats
    assert stubs.answer("get_weather", {"city": "Rome"}).result == "cloudy"  # `when` compares loosely
    assert stubs.answer("get_weather", {"city": "Oslo"}).result == "sunny"
    assert stubs.answer("get_weather", {"city": "Lima"}).result == DEFAULT_RESULT  # no mock matches
    assert stubs.answer("get_time", None).result == DEFAULT_RESULT


def script(*calls: str, max_turns: int = 8, **mocks: tuple[Mock, ...]) -> Script:
    return Script(Expectation(tuple(ExpectedCall(c) for c in calls)), mocks, max_turns)


def test_a_conversation_answers_every_call_and_ends_on_text():
    conv = Conversation(SURFACE, REQUEST, script("get_forecast", "get_weather", get_forecast=(Mock(error="down"),)))
    first = conv.next_request()
    assert first is not None and first.history == ()
    conv.record(
        Pick(tool="get_forecast", args={"city": "Paris"}, tool_calls=(ToolCall("get_forecast", {"city": "Paris"}),))
    )
    second = conv.next_request()
    assert second is not None and [s.error for s in second.history[0].stubs] == ["down"]
    # two calls in one turn: an unknown tool and unparseable arguments are answered with errors
    conv.record(
        Pick(
            tool="nope",
            tool_calls=(ToolCall("nope", {}), ToolCall("get_weather", None, "{city:")),
            usage=None,
        )
    )
    third = conv.next_request()
    assert third is not None
    assert [s.error for s in third.history[1].stubs] == [
        "unknown tool 'nope': it is not on this server",
        "the arguments are not valid JSON",
    ]
    conv.record(Pick(text="The forecast service is down."))
    assert conv.next_request() is None
    pick = conv.outcome()
    assert pick.tool == "get_forecast" and pick.calls == 3 and pick.text == "The forecast service is down."
    assert pick.trace is not None and [c.turn for c in pick.trace.calls] == [0, 1, 1] and pick.trace.turns == 3


def test_max_turns_stops_the_loop_and_a_failed_turn_ends_it():
    conv = Conversation(SURFACE, REQUEST, script("get_weather", max_turns=2))
    for _ in range(2):
        conv.record(Pick(tool="get_weather", args={"city": "x"}))
    assert conv.next_request() is None
    trace = conv.outcome().trace
    assert trace is not None and trace.hit_max_turns and trace.final is None and len(trace.calls) == 2
    failed = Conversation(SURFACE, REQUEST, script("get_weather"))
    failed.record(Pick(tool="get_weather", args={"city": "x"}))
    failed.record(Pick(error="500 after 2 retries"))
    assert failed.next_request() is None and failed.outcome().error == "500 after 2 retries"


class Cached(Provider):
    """Answers from an answer cache only (the budget never calls `pick`)."""

    name = "anthropic"
    cacheable = True

    def identity(self) -> dict:
        return {"provider": "anthropic", "model": "m"}

    async def pick(self, request: Request) -> Pick:
        raise AssertionError("the budget must not ask")


def test_the_budget_walks_a_cached_trajectory_and_counts_what_is_missing(tmp_path: Path):
    cache = AnswerCache(tmp_path)
    provider = CachedProvider(Cached("m"), cache, "use")
    case = Case(
        "c", REQUEST.prompt, "get_forecast", {}, Source("g.yaml", 1), script=script("get_forecast", "get_weather")
    )
    turn1 = Pick(tool="get_forecast", args={"city": "Paris"})
    cache.put(cache_key(provider.identity(), REQUEST), "anthropic", "m", REQUEST, turn1)
    settings = default_settings("anthropic", "m")
    from toolselect.ask import Job
    from toolselect.offer import Offer

    tools = Offer(REQUEST.tools, REQUEST.system, {t.name: t.name for t in REQUEST.tools})
    missing = estimate(provider, [Job(case, 0)], tools, settings, set(), SURFACE)
    assert (missing.cached, missing.requests) == (1, 7)  # turn 1 cached; at most max_turns (8) in all
    conv = Conversation(SURFACE, REQUEST, case.script)  # type: ignore[arg-type]
    conv.record(turn1)
    turn2 = conv.next_request()
    assert turn2 is not None
    cache.put(cache_key(provider.identity(), turn2), "anthropic", "m", turn2, Pick(text="Rain."))
    done = estimate(provider, [Job(case, 0)], tools, settings, set(), SURFACE)
    assert (done.cached, done.requests) == (2, 0)  # a fully cached trajectory needs no key


def trajectory_report(final: str, calls: list[tuple[str, str | None]]):
    case = Case(
        "paris <b>",
        "Forecast for Paris?",
        "get_forecast",
        {},
        Source("t.yaml", 3),
        script=Script(
            Expectation(
                (ExpectedCall("get_forecast"), ExpectedCall("get_weather")),
                Order.STRICT,
                final=FinalCheck(contains=("down",)),
            ),
            {"get_forecast": (Mock(error="503 <script>"),)},
        ),
    )
    conv = Conversation(SURFACE, REQUEST, case.script)  # type: ignore[arg-type]
    for tool, _ in calls:
        conv.record(Pick(tool=tool, args={"city": "Paris"}))
    conv.record(Pick(text=final))
    result = score_sample(case, conv.outcome(), SURFACE)
    return build_report([case], [result], SURFACE, run_record("anthropic"), gate(min_accuracy=0))


def test_a_trajectory_report_reads_back_and_its_diff_shows_dimensions_and_traces():
    base = trajectory_report("The forecast is down; it is sunny now.", [("get_forecast", None), ("get_weather", None)])
    head = trajectory_report(
        "Lovely weather!", [("get_forecast", None), ("get_forecast", None), ("get_forecast", None)]
    )
    assert base.cases[0].samples[0].outcome == "PASS"
    assert head.cases[0].samples[0].outcome == "REC-LOOP"
    assert base.dimensions is not None and base.dimensions["recovery"].mean == 3.0
    assert head.failure_codes == {"REC-LOOP": 1}
    # written and read back (an artifact is untrusted input): the same report
    from toolselect.report.schema import Report

    again = Report.model_validate_json(head.model_dump_json())
    assert again == head
    body = render_comment(compare_saved(base, head, {}, base_label="base"), comment_id="x")
    assert "| error recovery (after a stubbed error) | 3.00 | 0.00 | 0.00–1.68 | 0:1 1:0 2:0 3:0 | −3.00 🔻 |" in body
    assert "Failure codes (base → head): REC-LOOP 0 → 1" in body
    assert "**Traces of the flipped trajectory cases**" in body
    assert "<details><summary>paris &lt;b&gt;: PASS → REC-LOOP</summary>" in body
    assert "error: 503 &lt;script&gt;" in body and "<script>" not in body  # escaped, in both traces
    assert "| `get_forecast → get_weather` | `get_forecast✗ → get_weather` | `get_forecast✗ → get_forecast✗" in body


def test_a_single_call_report_has_no_trajectory_keys():
    from tests.builders import weather_report

    text = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": None, "thanks": None}
    )
    dumped = json.loads(text.model_dump_json())
    assert not {"dimensions", "failure_codes"} & set(dumped)
    assert "min_dimension" not in dumped["gate"]
    for case in dumped["cases"]:
        assert not {"expect_calls", "sequence", "max_turns", "final", "acceptable"} & set(case)
        assert not {"trace", "scores"} & set(case["samples"][0])


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (("dimensions", "recovery", "mean"), -1e300, "dimensions.recovery.mean: -1e+300 is not the mean"),
        (("dimensions", "recovery", "ci"), [55, -3], "dimensions.recovery.ci: [55.0, -3.0] is not an interval"),
        (("dimensions", "restraint", "n"), 9, "dimensions.restraint: n 9 and its distribution are not the samples'"),
        (("failure_codes",), {"RES-OVERCALL": 4}, "failure_codes: not the counts of the counted samples' codes"),
        (("cases", 0, "samples", 0, "scores", "codes"), [], "failure_codes: not the counts"),
        (("cases", 0, "expect_calls"), None, "cases[0].samples[0]: a trace or scores on a case without expect_calls"),
        (("cases", 0, "samples", 0, "trace", "tool_calls"), [{"name": "x", "turn": 0, "timestamp_ms": 0}] * 1001,
         "trace: 1,001 calls, more than the 1,000 a trace can have"),
    ],
)  # fmt: skip
def test_a_tampered_trajectory_report_is_refused(tmp_path: Path, path, value, said):
    from tests.builders import write_report
    from toolselect.errors import ConfigError
    from toolselect.report.files import read_report

    head = trajectory_report(
        "Lovely weather!", [("get_forecast", None), ("get_forecast", None), ("get_forecast", None)]
    )
    write_report(head, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    (tmp_path / "r.json").write_text(json.dumps(mutate(data, path, value)))
    with pytest.raises(ConfigError) as refused:
        read_report(tmp_path / "r.json")
    assert said in refused.value.message, refused.value.message


def test_a_long_trace_is_cut_in_the_comment():
    from toolselect.render.common import trace_lines

    many = trajectory_report("x", [("get_forecast", None)] * 30)
    lines = trace_lines(many.cases[0].samples[0])
    assert len(lines) == 14 and lines[-2] == "… 18 more calls" and lines[-1] == "final: x"


def test_min_dimension_gates_on_a_dimension_mean():
    from toolselect.gate import decide_verdict, judged

    head = trajectory_report("Lovely weather!", [("get_forecast", None)] * 3)
    verdict = decide_verdict(judged(head, gate(min_accuracy=0, min_dimension={"recovery": 2.0, "selection": 3})), None)
    assert verdict.reasons == ("recovery scores 0.00 on average (n = 1), below its floor 2 (0–3)",)
    assert decide_verdict(judged(head, gate(min_accuracy=0, min_dimension={"arguments": 1})), None).reasons == (
        "min_dimension names arguments, but no counted trajectory sample is scored on it",
    )
