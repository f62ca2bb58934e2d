"""The endpoint a driven client talks to: the real anthropic SDK stands in for the client (streaming, as
Claude Code asks), the fake model API for the run's provider. The client's own request reaches the
provider whole, on the run's model; the first call of a server tool ends the sample with a final text
(nothing is run) and is recorded; the client's own search passes through; a re-run asks nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.fakes.model_api import FakeModelAPI
from toolselect.drive.endpoint import ENDED, Endpoint
from toolselect.providers.call import ModelCall
from toolselect.providing import make_provider
from toolselect.throttle import Throttle

TOOLS: list[Any] = [
    {"name": "ToolSearch", "description": "Search the deferred tools.",
     "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}},
    {"name": "Bash", "description": "Run a shell command.",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
    {"name": "mcp__weather__get_weather", "description": "Current weather for a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
]  # fmt: skip
SCRIPT = {
    "answers": {
        "Weather in Paris?": {"like": "get_weather", "args": {"city": "Paris"}},
        "List my files": {"like": "Bash", "args": {"command": "ls"}},
        "Find a tool for tides": [
            {"like": "get_weather", "args": {"city": "Brest"}, "turn": 1},
            {"like": "ToolSearch", "args": {"query": "tides"}},
        ],
    },
    "default": {"text": "Hello."},
}


async def ask(endpoint: Endpoint, prompt: str, tools: list | None = None) -> tuple[str, object]:
    session = endpoint.open()
    client = anthropic.AsyncAnthropic(api_key=session.key, base_url=endpoint.url, max_retries=0)
    messages: list = [{"role": "user", "content": prompt}]
    for _ in range(3):  # the client's own loop: it runs its search, and asks again
        async with client.messages.stream(
            model="claude-opus-4-8", max_tokens=512, messages=messages, tools=TOOLS if tools is None else tools
        ) as stream:
            final = await stream.get_final_message()
        uses = [b for b in final.content if b.type == "tool_use"]
        if not uses:
            break
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "found it"}]},
        ]
    await client.close()
    said = "".join(b.text for b in final.content if b.type == "text")
    return said, session


def test_a_clients_requests_go_whole_to_the_provider_and_end_at_the_pick(tmp_path: Path):
    async def run() -> None:
        with FakeModelAPI(SCRIPT) as api:
            call = ModelCall("anthropic", "claude-haiku-4-5", base_url=api.url)
            provider = make_provider(call, Throttle(4), {"ANTHROPIC_API_KEY": "k"}, tmp_path / "cache", "use")
            provider.connect()
            endpoint = Endpoint(provider, ends=lambda name: name != "ToolSearch")
            await endpoint.start()
            try:
                said, picked = await ask(endpoint, "Weather in Paris?")
                assert said == ENDED and picked.call.tool == "mcp__weather__get_weather"  # type: ignore[attr-defined]
                assert picked.call.args == {"city": "Paris"}  # type: ignore[attr-defined]
                sent = api.log[-1]["body"]  # the client's request, whole, on the run's model
                assert sent["model"] == "claude-haiku-4-5" and [t["name"] for t in sent["tools"]] == [
                    t["name"] for t in TOOLS
                ]
                _, stolen = await ask(endpoint, "List my files")
                assert stolen.call.tool == "Bash"  # type: ignore[attr-defined]
                said, searched = await ask(endpoint, "Find a tool for tides")  # its search passes through
                assert searched.call.tool == "mcp__weather__get_weather" and searched.turns == 2  # type: ignore[attr-defined]
                said, _ = await ask(endpoint, "Say hi", tools=[])  # a side request: answered here
                asked = api.requests
                again, _ = await ask(endpoint, "Weather in Paris?")  # from the answer cache
                assert again == ENDED and api.requests == asked
            finally:
                await endpoint.stop()
                await provider.aclose()

    asyncio.run(run())


def test_an_unknown_key_is_refused(tmp_path: Path):
    async def run() -> None:
        with FakeModelAPI(SCRIPT) as api:
            call = ModelCall("anthropic", "claude-haiku-4-5", base_url=api.url)
            provider = make_provider(call, Throttle(4), {"ANTHROPIC_API_KEY": "k"}, tmp_path / "cache", "use")
            endpoint = Endpoint(provider, ends=lambda name: True)
            await endpoint.start()
            try:
                client = anthropic.AsyncAnthropic(api_key="someone-else", base_url=endpoint.url, max_retries=0)
                with pytest.raises(anthropic.AuthenticationError):
                    await client.messages.create(
                        model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}], tools=TOOLS
                    )
                await client.close()
                assert api.requests == 0
            finally:
                await endpoint.stop()

    asyncio.run(run())
