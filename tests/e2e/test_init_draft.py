"""`init --draft` with models as they really answer: clean JSON, JSON in a code fence with prose,
garbage, and a server that refuses structured output — through the same pool (concurrency, the
pace), retries and answer cache as `eval`, saying what it could not draft."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import DATA, toolselect
from tests.fakes.model_api import FakeModelAPI
from toolselect.drafting import read_json_object

WEATHER = json.loads((DATA / "lint" / "weather_tools.json").read_text())["tools"]
CLEAN = (
    '{"direct": "weather in Oslo now?", "paraphrase": "do I need a coat in Oslo today", "arguments": "Oslo, metric"}'
)
FENCED = (
    "Sure! Here are three prompts:\n\n```json\n"
    '{"direct": "forecast for Rome", "paraphrase": "will the weekend in Rome be nice", "arguments": "7 days, Rome"}'
    "\n```\n\nLet me know if you need more."
)
PAIR = '{"prompt": "will it rain in Lisbon later?", "tool": "get_forecast"}'
NEGATIVES = '{"prompts": ["thanks!", "what is a cold front?", "ok and in celsius?", "book me a flight", "explain fog"]}'


def script(**extra):
    return {
        "key": "sk-draft",
        "contains": {
            "Tool: get_weather\n": {"text": CLEAN},
            "Tool: get_forecast\n": {"text": FENCED},
            "Tool: get_weather_alerts\n": {"text": "I'm sorry, but I can't help with writing test prompts."},
            "Tool A:": {"text": PAIR},
            "five user messages": {"text": NEGATIVES},
        },
        **extra,
    }


def init(folder, api, *flags):
    (folder / "tools.json").write_text(json.dumps({"tools": WEATHER[:3]}))
    return toolselect(
        "init", "--tools", "tools.json", "--draft", "--provider", "openai", "--model", "m", "--base-url",
        api.url + "/v1", "--force", *flags, cwd=folder, env={"OPENAI_API_KEY": "sk-draft"},
    )  # fmt: skip


def test_drafts_from_clean_fenced_and_garbage_answers(tmp_path):
    with FakeModelAPI(script()) as api:
        run = init(tmp_path, api)
        formats = {entry["format"] for entry in api.log}
    assert run.code == 0, run.err
    assert formats == {"json_schema"}  # structured output where the API has it
    golden = yaml.safe_load((tmp_path / "golden.yaml").read_text())
    prompts = {case["name"]: case["prompt"] for case in golden}
    assert prompts["get_weather-paraphrase"] == "do I need a coat in Oslo today"  # (a) clean JSON
    assert prompts["get_forecast-arguments"] == "7 days, Rome"  # (b) a code fence inside prose
    assert prompts["get_weather_alerts-direct"].startswith("TODO")  # (c) garbage: kept as TODO, and said
    assert prompts["no-tool-2"] == "what is a cold front?"
    assert (
        "drafted 12 of 15 prompts; 3 kept as TODO (get_weather_alerts-direct: the answer was not JSON "
        "(\"I'm sorry, but I can't help with writing test prompts.\")" in run.out
    )
    text = (tmp_path / "golden.yaml").read_text()
    assert '- name: "get_weather-direct"  # drafted by openai m' in text
    assert '- name: "get_weather_alerts-direct"\n' in text  # not drafted: no author
    with FakeModelAPI(script()) as api:
        strict = init(tmp_path, api, "--strict", "--no-cache")
    assert strict.code == 1 and "--strict: every prompt must be drafted" in strict.err


@pytest.mark.parametrize("status", [400, 500])
def test_a_server_without_structured_output_is_asked_plainly_once_it_said_so(tmp_path, status):
    """(d) A server that refuses `json_schema` and a schema in `json_object` — with a 400, or a 500 as
    llama.cpp's Python server does — is asked once each (not retried), then with `json_object` for the
    rest of the run."""
    refused = ["json_schema", "json_object_schema"]
    with FakeModelAPI(script(reject_formats=refused, reject_status=status)) as api:
        run = init(tmp_path, api, "--concurrency", "1")
        formats = [entry["format"] for entry in api.log]
    assert run.code == 0, run.err
    assert formats[:2] == refused and formats[2:] == ["json_object"] * (len(formats) - 2)  # remembered
    prompts = {c["name"]: c["prompt"] for c in yaml.safe_load((tmp_path / "golden.yaml").read_text())}
    assert prompts["get_weather-direct"] == "weather in Oslo now?"  # (d) the drafts are used
    assert "drafted 12 of 15 prompts" in run.out


def test_a_big_surface_drafts_within_the_concurrency_backs_off_and_is_cached(tmp_path):
    tools = [
        {"name": f"tool_{i}", "description": f"Does thing number {i} for a user.", "inputSchema": {"type": "object"}}
        for i in range(60)
    ]
    (tmp_path / "tools.json").write_text(json.dumps({"tools": tools}))
    answer = json.dumps({
        "direct": "do the thing", "paraphrase": "help me with that", "arguments": "do it for Oslo", "prompt":
        "which one fits", "tool": "tool_0", "prompts": ["thanks", "what is fog", "and then?", "book it", "why so"],
    })  # fmt: skip
    faults = [{"match": "*", "status": 429, "retry_after": 0.05, "times": 6}]
    flags = ["init", "--tools", "tools.json", "--draft", "--provider", "openai", "--model", "m", "--concurrency", "3"]
    with FakeModelAPI({"default": {"text": answer}, "latency": 0.05, "faults": faults}) as api:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": api.url + "/v1"}
        first = toolselect(*flags, cwd=tmp_path, env=env)
        stats = api.stats()
        again = toolselect(*flags, "--force", cwd=tmp_path, env=env)
        second = api.stats()["requests"] - stats["requests"]
    assert first.code == 0, first.err
    assert stats["max_in_flight"] <= 3  # never more than --concurrency in flight
    # per tool, per drafted boundary (the 10 most confusable of 45 pairs), the negatives; and the 429s, retried
    assert stats["requests"] > 60 + 10 + 1
    assert "drafted 195 of 195 prompts" in first.out  # 60 × 3, 10 boundaries, 5 negatives
    assert again.code == 0 and second == 0  # the second run finds every answer in the cache


def test_anthropic_drafts_through_a_forced_tool(tmp_path):
    """Anthropic's structured output: a tool whose input schema is the draft's shape, forced."""
    answers = {
        key: {"tool": "answer", "args": read_json_object(value["text"])[0]}
        for key, value in script()["contains"].items()
        if key != "Tool: get_weather_alerts\n"
    }
    with FakeModelAPI({"key": "sk-a", "contains": answers}) as api:
        (tmp_path / "tools.json").write_text(json.dumps({"tools": WEATHER[:2]}))
        run = toolselect(
            "init", "--tools", "tools.json", "--draft", "--provider", "anthropic", "--model", "claude-x",
            cwd=tmp_path, env={"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": api.url},
        )  # fmt: skip
        forced = {json.dumps(entry["tool_choice"]) for entry in api.log}
    assert run.code == 0, run.err
    assert forced == {json.dumps({"type": "tool", "name": "answer"})}
    prompts = {c["name"]: c["prompt"] for c in yaml.safe_load((tmp_path / "golden.yaml").read_text())}
    assert prompts["get_forecast-paraphrase"] == "will the weekend in Rome be nice"
    assert "drafted 12 of 12 prompts — by anthropic claude-x" in run.out
