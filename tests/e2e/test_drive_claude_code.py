"""The real Claude Code (from npm, pinned by tests/install-servers.sh), driven: toolselect serves the
frozen surface as its MCP server, stands in for its model API, and reads back its pick — the model's
request is Claude Code's own (its system prompt, its built-ins, its names), the pick maps back to the
server's tool, a built-in is a steal, nothing is ever run, and a re-run asks the model nothing."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TESTS
from tests.fakes.model_api import FakeModelAPI
from toolselect.drive.endpoint import Endpoint
from toolselect.drive.sample import Driven, drive
from toolselect.providers.call import ModelCall
from toolselect.providing import make_provider
from toolselect.throttle import Throttle

CLAUDE = TESTS / ".clients" / "node_modules" / ".bin" / "claude"
CITY = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}
TOOLS = [
    {"name": "get_weather", "description": "Current weather conditions for a city.", "inputSchema": CITY},
    {"name": "get_forecast", "description": "The weather forecast for the next days in a city.", "inputSchema": CITY},
]
SCRIPT: dict[str, Any] = {
    "answers": {
        # its MCP tools are deferred behind its own ToolSearch: the model searches, then calls what it loaded
        "Is it raining in Paris?": [
            {"like": "get_weather", "args": {"city": "Paris"}},
            {"like": "ToolSearch", "args": {"query": "select:mcp__weather__get_weather"}},
        ],
        "List the files here": {"like": "Bash", "args": {"command": "ls", "description": "list"}},
    },
    "default": {"text": "Hello!"},
}


@pytest.fixture(scope="module")
def claude() -> Path:
    if not CLAUDE.exists():
        pytest.fail(f"{CLAUDE} is missing: run tests/install-servers.sh (it installs Claude Code from npm)")
    return CLAUDE


def ask_all(tmp_path: Path, claude: Path, prompts: list[str], api: FakeModelAPI) -> list[Any]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": TOOLS}))

    async def run() -> list[Any]:
        call = ModelCall("anthropic", "claude-sonnet-4-5", base_url=api.url)
        provider = make_provider(call, Throttle(4), {"ANTHROPIC_API_KEY": "k"}, tmp_path / "cache", "use")
        provider.connect()
        driven = Driven("claude-code", claude, "weather", "claude-sonnet-4-5", tools, tmp_path / "calls.jsonl")
        endpoint = Endpoint(provider, ends=driven.ends, search_tool=driven.search_tool)
        await endpoint.start()
        try:
            return [await drive(driven, endpoint, p, os.environ) for p in prompts]
        finally:
            await endpoint.stop()
            await provider.aclose()

    return asyncio.run(run())


def test_claude_code_picks_through_its_own_request_and_nothing_runs(tmp_path, claude):
    prompts = ["Is it raining in Paris?", "List the files here", "Say hello"]
    with FakeModelAPI(SCRIPT) as api:
        weather, files, hello = ask_all(tmp_path, claude, prompts, api)
        first = next(e for e in api.log if e["prompt"] == prompts[0])["body"]
        asked = api.requests
        again = ask_all(tmp_path, claude, prompts[:1], api)[0]
        assert api.requests == asked and again.tool == "get_weather"  # every answer from the answer cache
    assert weather.error is None, weather.error
    assert (weather.tool, weather.args) == ("get_weather", {"city": "Paris"})
    # its own search ran in the client, and what it loaded is recorded in the server's names
    assert [(s.query, s.found) for s in weather.searched] == [("select:mcp__weather__get_weather", ("get_weather",))]
    assert files.tool == "(built-in: Bash)"  # its own tool took the pick: a steal
    assert hello.tool is None and hello.text == "Hello!"
    # the request was Claude Code's own: its long system prompt, its built-ins, its names for the server's tools
    names = [t.get("name") for t in first["tools"]]
    assert "Bash" in names and "mcp__weather__get_weather" in json.dumps(first)
    assert len(json.dumps(first.get("system"))) > 2000 and first["model"] == "claude-sonnet-4-5"
    assert not (tmp_path / "calls.jsonl").exists()  # no tools/call ever reached the server
