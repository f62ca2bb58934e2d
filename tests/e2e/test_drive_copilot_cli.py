"""The real GitHub Copilot CLI (from npm, pinned by tests/install-servers.sh), driven offline in its
bring-your-own-model mode: toolselect serves the frozen surface as its MCP server and stands in for
its provider — Anthropic's Messages API or OpenAI's Responses API, as the run's provider speaks —
and reads back its pick: the request is Copilot CLI's own (its built-ins, its `<server>-<tool>`
names), the pick maps back to the server's tool (a dotted name too), a built-in is a steal, the
server's tools are listed but never run, and a re-run asks the model nothing (its time and session
folder in the prompt are no part of the key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import client_program, client_project, drive_all, recaptured, run_eval, weather_tools
from tests.fakes.model_api import FakeModelAPI

TOOLS = weather_tools("get.forecast")
SCRIPT: dict[str, Any] = {
    "answers": {
        "Is it raining in Paris?": {"like": "get_weather", "args": {"city": "Paris"}},
        "Forecast for Oslo?": {"like": "get-forecast", "args": {"city": "Oslo"}},
        "List the files here": {"like": "bash", "args": {"command": "ls", "description": "list"}},
    },
    "default": {"text": "Hello!"},
}
GOLDEN = [
    {"id": "paris", "question": "Is it raining in Paris?", "expected_tool": "get_weather",
     "expected_args": {"city": "Paris"}},
    {"id": "files", "question": "List the files here", "expected_tool": None},
]  # fmt: skip
WIRES = {"anthropic": "claude-sonnet-4.6", "openai-responses": "gpt-5.4"}


@pytest.fixture(scope="module")
def copilot() -> Path:
    return client_program("copilot-cli", "1.0.102", "copilot")


def ask_all(tmp_path: Path, copilot: Path, prompts: list[str], api: FakeModelAPI, provider: str) -> list[Any]:
    return drive_all(tmp_path, copilot, TOOLS, prompts, api, provider, WIRES[provider])


@pytest.mark.parametrize("provider", WIRES)
def test_copilot_cli_picks_through_its_own_request_and_nothing_runs(tmp_path, copilot, provider):
    prompts = ["Is it raining in Paris?", "Forecast for Oslo?", "List the files here", "--version"]
    with FakeModelAPI(SCRIPT) as api:
        paris, oslo, files, option = ask_all(tmp_path, copilot, prompts, api, provider)
        first = next(e for e in api.log if e["prompt"] == prompts[0])
        asked = api.requests
        again = ask_all(tmp_path, copilot, prompts[:1], api, provider)[0]
        assert api.requests == asked and again.tool == "get_weather"  # every answer from the answer cache
    assert paris.error is None, paris.error
    assert (paris.tool, paris.args) == ("get_weather", {"city": "Paris"})
    assert (oslo.tool, oslo.args) == ("get.forecast", {"city": "Oslo"})  # weather-get-forecast, read back
    assert files.tool == "(built-in: bash)"  # its own tool took the pick: a steal
    assert option.tool is None and option.text == "Hello!"  # `--version` reached the model as the prompt
    assert first["api"] == ("anthropic" if provider == "anthropic" else "responses")
    assert first["tools"][-2:] == ["weather-get-forecast", "weather-get_weather"]  # sorted, after its own
    assert "bash" in first["tools"] and first["model"] == WIRES[provider]
    assert not (tmp_path / "calls.jsonl").exists()  # no tools/call ever reached the server


def test_eval_drives_copilot_cli_and_says_so(tmp_path, copilot):
    client_project(tmp_path, TOOLS, GOLDEN, "anthropic", "claude-sonnet-4.6", "copilot-cli")
    with FakeModelAPI(SCRIPT) as api:
        done = run_eval(tmp_path, "anthropic", api)
        assert done.code == 0, done.out + done.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["run"]["client"]["driven"] == "1.0.102"
    by = {c["name"]: c["samples"][0] for c in report["cases"]}
    assert by["paris"]["outcome"] == "PASS" and by["files"]["picked_tool"] == "(built-in: bash)"
    assert "Copilot CLI 1.0.102, driven: the real client" in done.out


def test_a_fresh_capture_of_the_tested_version_matches_the_bundled_facts(tmp_path, copilot):
    """The drift test: `<server>-<tool>`, other characters `-`, the cut at 64, one of two alike names
    dropped, sorted names, its 17 built-ins first, deferral behind its own tool_search_tool past 30
    tools. When it fails, a fact of the client changed:
    `toolselect clients capture copilot-cli --out src/toolselect/data/clients/copilot-cli.observed.yaml`."""
    now = recaptured("copilot-cli", tmp_path)
    assert now["names"]["into"] == "-" and now["deferred"]["search_tool"] == "tool_search_tool"
    assert not now["counts"][10]["deferred_by_default"] and now["counts"][90]["deferred_by_default"]
