"""The answer cache's key and files, and the pool that backs off under rate limits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from toolselect.cache import AnswerCache, cache_key
from toolselect.pick import Pick, Usage
from toolselect.pool import Pool
from toolselect.providers import Request, WireTool

TOOLS = (WireTool("a", "A tool", {"type": "object"}), WireTool("b", "B tool", {"type": "object"}))
IDENTITY: dict[str, Any] = {
    "provider": "openai",
    "model": "m",
    "endpoint": "http://x/v1",
    "tool_choice": "auto",
    "params": {},
    "temperature": None,
    "seed": None,
}


def key(**changes) -> str:
    request = Request(
        prompt=changes.pop("prompt", "p"),
        system=changes.pop("system", None),
        tools=changes.pop("tools", TOOLS),
        sample=changes.pop("sample", 0),
    )
    return cache_key({**IDENTITY, **changes}, request)


def test_everything_that_can_change_an_answer_changes_the_key():
    base = key()
    variants = [
        key(prompt="q"),
        key(system="be brief"),
        key(sample=1),
        key(model="m2"),
        key(endpoint="http://y/v1"),
        key(temperature=0.5),
        key(seed=3),
        key(params={"top_p": 0.9}),
        key(provider="openai-responses"),
        key(tools=tuple(reversed(TOOLS))),  # the order sent matters
        key(tools=(WireTool("a", "A tool, changed", {"type": "object"}), TOOLS[1])),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert key() == base  # and nothing else does


def test_entries_round_trip_and_damaged_ones_are_misses(tmp_path):
    cache = AnswerCache(tmp_path)
    request = Request("p", None, TOOLS, 0)
    pick = Pick(tool="a", args={"x": 1}, text="hi", calls=1, usage=Usage(10, 2), stop_reason="tool_use", latency_ms=5.0)
    cache.put("ab" * 32, "openai", "m", request, pick)
    path = cache.path("ab" * 32)
    assert path.parent.name == "ab"  # sharded folders
    assert json.loads(path.read_text())["prompt"] == "p"
    got = cache.get("ab" * 32)
    assert got.tool == "a" and got.args == {"x": 1} and got.usage == Usage(10, 2) and got.cached
    path.write_text(path.read_text()[:30])
    assert cache.get("ab" * 32) is None
    assert cache.get("cd" * 32) is None
    assert not list(tmp_path.rglob(".tmp-*"))


def test_pool_halves_on_rate_limits_and_recovers():
    async def scenario():
        pool = Pool(8)
        pool.rate_limited()
        pool.rate_limited()
        assert pool.limit == 2 and pool.shrinks == 2
        entered = 0

        async def one():
            nonlocal entered
            async with pool:
                entered += 1
                await asyncio.sleep(0.01)
                pool.succeeded()

        await asyncio.gather(*(one() for _ in range(20)))
        assert entered == 20 and pool.peak <= 8
        return pool

    pool = asyncio.run(scenario())
    assert pool.limit > 2  # successes won slots back
    assert pool.limit <= 8


def test_pool_bounds_in_flight():
    async def scenario():
        pool = Pool(3)

        async def one():
            async with pool:
                await asyncio.sleep(0.005)

        await asyncio.gather(*(one() for _ in range(12)))
        return pool.peak

    assert asyncio.run(scenario()) == 3
