"""Trajectory cases end to end, through the real anthropic and openai SDKs against the fake model
API: the agent loop answers every call from the case's stubs in each API's own format, and the
report scores seed 004's four dimensions with its failure codes. Single-call cases run beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import DATA, toolselect
from tests.e2e.harness import PROVIDERS, base_url, key_env, run_eval

TOOLS = DATA / "outcomes" / "tools.json"

GOLDEN = """
- name: chain
  prompt: What's the weather in Oslo now, and the forecast?
  expect_calls:
    - {tool: get_weather, args: {city: Oslo}}
    - {tool: get_forecast, args: {city: Oslo}}
  mocks:
    get_weather: {result: {sky: sunny, temp_c: 14}}
    get_forecast: {result: rain tomorrow}
  final: {contains: rain}

- name: wrong order, strict
  prompt: Forecast and current weather for Rome, please.
  expect_calls: [{tool: get_weather}, {tool: get_forecast}]

- name: wrong order, unordered
  prompt: Forecast and current weather for Rome, please.
  expect_calls: [{tool: get_weather}, {tool: get_forecast}]
  sequence: unordered

- name: recovers from an error
  prompt: What's the forecast for Paris?
  expect_calls: [{tool: get_forecast, args: {city: Paris}}, {tool: get_weather, args: {city: Paris}}]
  mocks:
    get_forecast: {error: 503 forecast service down}
    get_weather: {result: "sunny, 21°"}
  final: {contains: down}

- name: loops on a failing call
  prompt: What time is it in Tokyo?
  expect_calls: [{tool: get_time, args: {tz: Asia/Tokyo}}]
  mocks:
    get_time: {error: timeout}

- name: hides the error
  prompt: What's the forecast for Berlin?
  expect_calls: [{tool: get_forecast, args: {city: Berlin}}]
  mocks:
    get_forecast: {error: upstream answered 500}
  final: {regex: "(?i)unavailable|error|failed|down"}

- name: one call too many
  prompt: What's the weather in Lima right now?
  expect_calls: [{tool: get_weather, args: {city: Lima}}]

- name: no tool needed
  prompt: Say hello to the team.
  expect_calls: []

- name: never stops
  prompt: Keep an eye on the weather in Madrid.
  expect_calls: [{tool: get_weather, args: {city: Madrid}}]
  sequence: any_of_these
  max_turns: 3

- name: two cities at once
  prompt: Weather in Oslo and Rome?
  expect_calls: [{tool: get_weather, args: {city: Oslo}}, {tool: get_weather, args: {city: Rome}}]
  sequence: unordered
  mocks:
    get_weather:
      - {result: sunny, when: {city: Oslo}}
      - {result: cloudy, when: {city: Rome}}
  final: {contains: [sunny, cloudy]}

- name: invalid arguments in a chain
  prompt: The 9 day forecast for Oslo.
  expect_calls: [{tool: get_forecast, args: {city: Oslo}}]

- name: acceptable but not the best
  prompt: Will I need an umbrella in Nice this week?
  expect_tool: get_forecast
  acceptable: [get_weather]

- name: a single-call case beside them
  prompt: Is it raining in Montreal?
  expect_tool: get_weather
  expect_args: {city: Montreal}
"""


def call(tool: str, **args: object) -> dict:
    return {"tool": tool, "args": args}


SCRIPT = {
    "answers": {
        # the first variant whose conditions hold answers: the most specific first
        "What's the weather in Oslo now, and the forecast?": [
            {"after": {"get_forecast": "rain"}, "text": "Sunny and 14° now; rain tomorrow."},
            {"after": {"get_weather": "sunny"}, **call("get_forecast", city="Oslo")},
            {**call("get_weather", city="Oslo"), "thinking": "The weather first, then the forecast."},
        ],
        "Forecast and current weather for Rome, please.": [
            {"turn": 0, **call("get_forecast", city="Rome")},
            {"turn": 1, **call("get_weather", city="Rome")},
            {"text": "Mild now, mild all week."},
        ],
        "What's the forecast for Paris?": [
            {"after": {"get_weather": "sunny"}, "text": "The forecast service is down; right now it is sunny."},
            {"after": {"get_forecast": "error"}, **call("get_weather", city="Paris")},
            call("get_forecast", city="Paris"),
        ],
        "What time is it in Tokyo?": [{"turn": 3, "text": "Sorry, no luck."}, call("get_time", tz="Asia/Tokyo")],
        "What's the forecast for Berlin?": [
            {"after": {"get_forecast": "error"}, "text": "Berlin will be lovely this week."},
            call("get_forecast", city="Berlin"),
        ],
        "What's the weather in Lima right now?": [
            {"turn": 0, **call("get_weather", city="Lima")},
            {"turn": 1, **call("get_forecast", city="Lima")},
            {"text": "Warm now, warm later."},
        ],
        "Say hello to the team.": [{"turn": 0, **call("get_time", tz="UTC")}, {"text": "Hello, team!"}],
        "Keep an eye on the weather in Madrid.": call("get_weather", city="Madrid"),
        "Weather in Oslo and Rome?": [
            {"turn": 0, "calls": [call("get_weather", city="Oslo"), call("get_weather", city="Rome")]},
            {"text": "Oslo is sunny and Rome is cloudy."},
        ],
        "The 9 day forecast for Oslo.": [
            {"turn": 0, **call("get_forecast", city="Oslo", days=9)},
            {"text": "Here it is."},
        ],
        "Will I need an umbrella in Nice this week?": call("get_weather", city="Nice"),
        "Is it raining in Montreal?": call("get_weather", city="Montreal"),
    }
}


def setup(folder: Path) -> None:
    (folder / "golden.yaml").write_text(GOLDEN)
    (folder / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  model: m\n  golden: golden.yaml\n  min_accuracy: 0\n"
    )


def eval_(folder: Path, provider: str, api, *flags: str):
    return run_eval(folder, provider, api, "--junit", "j.xml", "--markdown", "r.md", *flags)


def by_name(report: dict) -> dict[str, dict]:
    return {c["name"]: c["samples"][0] for c in report["cases"]}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_trajectories_are_scored_on_seed_004s_dimensions(provider, model_api, tmp_path):
    api = model_api(SCRIPT)
    setup(tmp_path)
    first = eval_(tmp_path, provider, api)
    assert first.code == 0, first.err
    report = json.loads((tmp_path / "r.json").read_text())
    s = by_name(report)

    def calls(name: str) -> list[tuple[str, int]]:
        return [(c["name"], c["turn"]) for c in s[name]["trace"]["tool_calls"]]

    # a two-call chain, each call answered with its stub: passes on all four dimensions
    chain = s["chain"]
    assert chain["outcome"] == "PASS", chain
    assert calls("chain") == [("get_weather", 0), ("get_forecast", 1)]
    assert chain["trace"]["tool_calls"][0]["result"] == {"sky": "sunny", "temp_c": 14}
    assert chain["trace"]["final_response"] == "Sunny and 14° now; rain tomorrow."
    assert chain["scores"] == {"selection": 3, "arguments": 3, "recovery": None, "restraint": 3, "codes": []}
    assert chain["trace"]["expected_tools"] == ["get_weather", "get_forecast"]

    # the same calls in another order: strict fails, unordered passes
    assert s["wrong order, strict"]["outcome"] == "SEL-WRONG"
    assert s["wrong order, strict"]["scores"]["restraint"] == 2  # the right calls, a wasteful order
    assert s["wrong order, unordered"]["outcome"] == "PASS"

    # an error, then a sensible alternative, and the failure surfaced: recovery 3
    recovered = s["recovers from an error"]
    assert recovered["outcome"] == "PASS" and recovered["scores"]["recovery"] == 3
    assert recovered["trace"]["tool_calls"][0]["error"] == "503 forecast service down"

    # the same failing call, again and again: REC-LOOP, recovery 0
    loop = s["loops on a failing call"]
    assert loop["outcome"] == "REC-LOOP" and loop["scores"]["recovery"] == 0
    assert calls("loops on a failing call") == [("get_time", 0), ("get_time", 1), ("get_time", 2)]

    # stopped after the error, and the answer doesn't say so: REC-SILENT
    silent = s["hides the error"]
    assert silent["outcome"] == "REC-SILENT" and silent["scores"]["recovery"] == 1

    # an extra call: RES-OVERCALL; a call when none is needed: RES-UNNECESSARY
    assert s["one call too many"]["outcome"] == "RES-OVERCALL"
    assert s["one call too many"]["scores"]["restraint"] == 1
    assert s["no tool needed"]["outcome"] == "RES-UNNECESSARY"
    assert s["no tool needed"]["scores"]["restraint"] == 0

    # max_turns: the loop stops there and says so
    endless = s["never stops"]
    assert endless["outcome"] == "MAX-TURNS" and endless["trace"]["hit_max_turns"]
    assert len(endless["trace"]["tool_calls"]) == 3 and endless["trace"]["final_response"] is None
    assert "no final answer within max_turns" in endless["reasons"]

    # parallel calls in one turn: both recorded, each answered by the mock its arguments match
    both = s["two cities at once"]
    assert both["outcome"] == "PASS", both
    assert [(c["name"], c["turn"], c["result"]) for c in both["trace"]["tool_calls"]] == [
        ("get_weather", 0, "sunny"),
        ("get_weather", 0, "cloudy"),
    ]

    # arguments checked against the schema on every call: ARG-INVALID
    assert s["invalid arguments in a chain"]["outcome"] == "ARG-INVALID"
    assert s["invalid arguments in a chain"]["scores"]["arguments"] == 0

    # `acceptable` on a single-call case; a plain single-call case beside the trajectories
    assert s["acceptable but not the best"]["outcome"] == "SEL-SUBOPTIMAL"
    assert "trace" not in s["a single-call case beside them"] and "scores" not in s["a single-call case beside them"]
    assert s["a single-call case beside them"]["outcome"] == "PASS"

    # the report: dimensions with intervals and distributions, failure-code counts
    dims = report["dimensions"]
    assert dims["recovery"]["n"] == 3 and dims["recovery"]["distribution"] == {"0": 1, "1": 1, "2": 0, "3": 1}
    assert 0 <= dims["selection"]["ci"][0] <= dims["selection"]["mean"] <= dims["selection"]["ci"][1] <= 3
    assert report["failure_codes"]["REC-LOOP"] == 1 and report["failure_codes"]["RES-UNNECESSARY"] == 1
    # the console, Markdown and JUnit say it too
    assert "Trajectories" in first.out and "REC-LOOP 1" in first.out
    markdown = (tmp_path / "r.md").read_text()
    assert "### Trajectories" in markdown and "error recovery (after a stubbed error)" in markdown
    junit = (tmp_path / "j.xml").read_text()
    assert 'type="REC-LOOP"' in junit and "[turn 1] get_time" in junit

    # reasoning goes back as it came (Anthropic's signed thinking, Responses' encrypted reasoning items)
    chained = [e for e in api.log if e["prompt"] == "What's the weather in Oslo now, and the forecast?"]
    replayed = [e["replayed"] for e in chained]
    assert replayed[0] == [] and (
        all(len(r) == 1 for r in replayed[1:]) if provider != "openai" else replayed == [[]] * 3
    )

    # every turn went out in the API's own multi-turn format, and the stubs came back as results
    requests = [e for e in api.log if e["prompt"] == "What's the forecast for Paris?"]
    assert [e["turn"] for e in requests] == [0, 1, 2]
    assert requests[-1]["results"][0]["error"] and requests[-1]["results"][1]["content"] == "sunny, 21°"

    # a re-run: every turn's answer comes from the cache, nothing is asked, the same scores
    sent = len(api.log)
    again = eval_(tmp_path, provider, api)
    assert again.code == 0, again.err
    assert len(api.log) == sent
    rerun = json.loads((tmp_path / "r.json").read_text())
    assert rerun["run"]["api_calls"] == 0 and rerun["run"]["cache_hits"] > len(rerun["cases"])
    assert {n: x.get("scores") for n, x in by_name(rerun).items()} == {n: x.get("scores") for n, x in s.items()}
    # and --cache-only needs no key at all
    only = toolselect(
        "eval", "--provider", provider, "--base-url", base_url(provider, api), "--cache-only", "--json", "c.json",
        cwd=tmp_path, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert only.code == 0, only.err
    assert json.loads((tmp_path / "c.json").read_text())["counts"]["not_evaluated"] == 0


AGENT = """
import json, sys
request = json.load(sys.stdin)
turns = request.get("turns", [])
if not turns:
    print(json.dumps({"calls": [{"tool": "get_forecast", "args": {"city": "Paris"}},
                                {"tool": "get_time", "args": {"tz": "Europe/Paris"}}]}))
elif len(turns) == 2 and "error" in turns[0]:
    print(json.dumps({"tool": "get_weather", "args": {"city": "Paris"}}))
else:
    said = "; ".join(str(t.get("result", t.get("error"))) for t in turns)
    print(json.dumps({"tool": None, "text": "Forecast down. " + said}))
"""


def test_the_command_provider_gets_the_turns_and_finishes_with_text(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "golden.yaml").write_text(
        "- name: paris\n  prompt: Forecast for Paris?\n  sequence: in_order\n"
        "  expect_calls: [{tool: get_forecast}, {tool: get_weather}]\n"
        "  mocks:\n    get_forecast: {error: 503}\n    get_weather: {result: {sky: sunny}}\n"
        "  final: {contains: [down, sunny]}\n"
    )
    (tmp_path / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  provider: command\n  command: [python, agent.py]\n"
        "  golden: golden.yaml\n  min_accuracy: 0\n"
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path)
    assert run.code == 0, run.err
    [sample] = json.loads((tmp_path / "r.json").read_text())["cases"][0]["samples"]
    calls = [(c["name"], c["turn"], c.get("error"), c["result"]) for c in sample["trace"]["tool_calls"]]
    assert calls == [
        ("get_forecast", 0, "503", None),
        ("get_time", 0, None, {"status": "ok"}),  # no mock: the documented default
        ("get_weather", 1, None, {"sky": "sunny"}),
    ]
    assert sample["trace"]["final_response"] == "Forecast down. 503; {'status': 'ok'}; {'sky': 'sunny'}"
    # a successful extra call costs restraint; the error was recovered from
    assert sample["outcome"] == "RES-OVERCALL" and sample["scores"]["recovery"] == 3


JUDGED = """
- name: silent
  prompt: What's the forecast for Berlin?
  expect_calls: [{tool: get_forecast}]
  mocks: {get_forecast: {error: upstream answered 500}}
- name: surfaced
  prompt: Forecast for Rome?
  expect_calls: [{tool: get_forecast}]
  mocks: {get_forecast: {error: timeout}}
"""


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_judge_reads_the_answer_after_an_error_when_no_final_check_does(provider, model_api, tmp_path):
    script = {
        "answers": {
            "What's the forecast for Berlin?": SCRIPT["answers"]["What's the forecast for Berlin?"],
            "Forecast for Rome?": [
                {"after": {"get_forecast": "error"}, "text": "Sorry, the forecast service is unavailable."},
                call("get_forecast", city="Rome"),
            ],
        },
        # the judge's questions quote the final answer
        "contains": {"Berlin will be lovely": {"text": "No."}, "service is unavailable": {"text": "Yes, it says so."}},
    }
    api = model_api(script)
    (tmp_path / "golden.yaml").write_text(JUDGED)
    (tmp_path / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  model: m\n  judge: judge-model\n  golden: golden.yaml\n"
        "  min_accuracy: 0\n"
    )
    first = toolselect(
        "eval", "--provider", provider, "--base-url", base_url(provider, api), "--json", "r.json",
        cwd=tmp_path, env=key_env(tmp_path),
    )  # fmt: skip
    assert first.code == 0, first.err
    report = json.loads((tmp_path / "r.json").read_text())
    s = by_name(report)
    assert s["silent"]["outcome"] == "REC-SILENT" and s["silent"]["scores"]["recovery"] == 1
    assert s["silent"]["judge"] == {"surfaced": False, "said": "No.", "cached": False}
    assert s["surfaced"]["outcome"] == "PASS" and s["surfaced"]["scores"]["recovery"] == 3
    assert report["run"]["judge"] == {"model": "judge-model", "api_calls": 2, "cache_hits": 0}
    judged = [e for e in api.log if e.get("model") == "judge-model"]
    assert len(judged) == 2 and all(not e["tools"] for e in judged)  # asked apart, without tools
    # the judge's answers are cached like every other: a cache-only re-run needs no key and no request
    sent = len(api.log)
    again = toolselect(
        "eval", "--provider", provider, "--base-url", base_url(provider, api), "--cache-only", "--json", "r.json",
        cwd=tmp_path, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert again.code == 0, again.err
    rerun = json.loads((tmp_path / "r.json").read_text())
    assert len(api.log) == sent and rerun["run"]["judge"] == {"model": "judge-model", "api_calls": 0, "cache_hits": 2}
    assert by_name(rerun)["silent"]["judge"]["cached"] is True


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_with_batch_trajectories_are_asked_turn_by_turn_and_single_calls_go_in_the_batch(provider, model_api, tmp_path):
    api = model_api(SCRIPT)
    setup(tmp_path)
    assert eval_(tmp_path, provider, api, "--no-cache").code == 0
    synchronous = by_name(json.loads((tmp_path / "r.json").read_text()))
    asked = len(api.log)
    done = eval_(tmp_path, provider, api, "--no-cache", "--batch")
    assert done.code == 0, done.err
    batched = by_name(json.loads((tmp_path / "r.json").read_text()))
    log = api.log[asked:]
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    conversations = {c["prompt"] for c in cases if c.get("expect_calls") is not None}
    single = {c["prompt"] for c in cases if c.get("expect_calls") is None}
    assert conversations and single and not conversations & single
    assert {n: s["outcome"] for n, s in batched.items()} == {n: s["outcome"] for n, s in synchronous.items()}
    assert {e["prompt"] for e in log if e["batch"]} == single  # every single-call case's request, in the batch
    assert {e["prompt"] for e in log if not e["batch"]} == conversations  # every conversation's, one by one
    assert len(api.batches.created) == 1
