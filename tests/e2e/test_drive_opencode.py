"""The real opencode (from npm, pinned by tests/install-servers.sh), driven: toolselect serves the
frozen surface as its MCP server and stands in for its model provider (Anthropic's Messages API or
OpenAI's Responses API, through the AI SDK packages opencode bundles, as the run's provider speaks),
the prompt on its standard input, and reads back its pick: its `<server>_<tool>` names map back to
the server's tool (a dotted name too), a built-in is a steal, nothing is ever run (its server's
tools are `ask`, which `run` refuses), and a re-run asks the model nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import client_program, drive_all, recaptured, weather_tools
from tests.fakes.model_api import FakeModelAPI

TOOLS = weather_tools("get.forecast")
SCRIPT: dict[str, Any] = {
    "answers": {
        "Is it raining in Paris?": {"like": "get_weather", "args": {"city": "Paris"}},
        "Forecast for Oslo?": {"like": "get_forecast", "args": {"city": "Oslo"}},
        "List the files here": {"like": "bash", "args": {"command": "ls", "description": "list"}},
    },
    "default": {"text": "Hello!"},
}
WIRES = {"anthropic": "claude-sonnet-4-5", "openai-responses": "gpt-5.4"}


@pytest.fixture(scope="module")
def opencode() -> Path:
    return client_program("opencode", "1.18.33", "opencode")


def ask_all(tmp_path: Path, opencode: Path, prompts: list[str], api: FakeModelAPI, provider: str) -> list[Any]:
    return drive_all(tmp_path, opencode, TOOLS, prompts, api, provider, WIRES[provider], together=True)


def test_opencode_picks_through_its_own_request_and_nothing_runs(tmp_path, opencode):
    prompts = ["Forecast for Oslo?", "List the files here", "two words, and a\nsecond line"]
    with FakeModelAPI(SCRIPT) as api:
        oslo, files, said = ask_all(tmp_path, opencode, prompts, api, "anthropic")
        first = next(e for e in api.log if e["prompt"] == prompts[0])
        asked = api.requests
        again = ask_all(tmp_path, opencode, prompts[:1], api, "anthropic")[0]
        assert api.requests == asked and again.tool == "get.forecast"  # every answer from the answer cache
        prompts_seen = {e["prompt"] for e in api.log}
    assert oslo.error is None, oslo.error
    assert (oslo.tool, oslo.args) == ("get.forecast", {"city": "Oslo"})  # weather_get_forecast, read back
    assert files.tool == "(built-in: bash)"  # its own tool took the pick: a steal
    assert said.tool is None and said.text == "Hello!"
    assert prompts[2] in prompts_seen  # the prompt as it is: spaces and a new line, no quotes added
    assert {"weather_get_forecast", "weather_get_weather", "bash"} <= set(first["tools"])
    assert first["tools"] == sorted(first["tools"], key=str.lower)  # its own and the server's, sorted together
    assert not (tmp_path / "calls.jsonl").exists()  # no tools/call ever reached the server


def test_opencode_on_the_responses_wire(tmp_path, opencode):
    with FakeModelAPI(SCRIPT) as api:
        [paris] = ask_all(tmp_path, opencode, ["Is it raining in Paris?"], api, "openai-responses")
        assert api.log[0]["api"] == "responses" and api.log[0]["model"] == "gpt-5.4"
    assert (paris.tool, paris.args) == ("get_weather", {"city": "Paris"})


def test_a_fresh_capture_of_the_tested_version_matches_the_bundled_facts(tmp_path, opencode):
    """The drift test: `<server>_<tool>`, other characters `_`, no length limit, every tool sorted
    together, nothing deferred. When it fails, a fact of the client changed:
    `toolselect clients capture opencode --out src/toolselect/data/clients/opencode.observed.yaml`."""
    now = recaptured("opencode", tmp_path)
    assert now["names"]["max_length"] is None and not now["builtins_first"] and not now["deferred"]["as_driven"]
