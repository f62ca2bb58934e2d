"""The answer cache's key and files, and the throttle that backs off under rate limits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.builders import Clock
from toolselect.cache import AnswerCache, cache_key
from toolselect.pick import Pick, Usage
from toolselect.providers import Request, WireTool
from toolselect.throttle import Pacer, Throttle, duration, read_limits

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


def test_keys_are_the_ones_earlier_versions_wrote_so_a_kept_cache_still_answers():
    """The tool list's JSON is made once per list now: every key is still the sha256 of the whole
    canonical JSON, as before — the answers a cache holds are found again."""
    import hashlib

    from toolselect.providers import ToolSearch

    def whole(identity: dict[str, Any], request: Request) -> str:
        material = {**identity, "format": 1, "system": request.system, "prompt": request.prompt,
                    "tools": [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                              for t in request.tools], "sample": request.sample}  # fmt: skip
        if request.search is not None:
            s = request.search
            material["tool_search"] = {"mode": s.mode, "eager": sorted(s.eager), "namespace": s.namespace}
        text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    odd = (WireTool("météo", 'Wetter — \u2028 "quoted" \\ \x00', {"type": "object", "z": [1.5, None]}), *TOOLS)
    for request in (
        Request("p", None, TOOLS),
        Request("naïve \U0001f600 \x00toolselect-tools-", "sys", odd, sample=3),
        Request("p", "s", TOOLS, search=ToolSearch("anthropic-bm25", frozenset({"a"}))),
        Request("p", None, ()),
    ):
        assert cache_key(IDENTITY, request) == whole(IDENTITY, request)
        assert cache_key(IDENTITY, request) == whole(IDENTITY, request)  # the second time from the kept JSON


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


def test_the_pace_follows_announced_limits():
    clock = Clock()
    pacer = Pacer(clock=clock)
    assert pacer.rate() is None  # nothing known: as fast as the throttle lets requests out
    pacer.answered(200, {"x-ratelimit-limit-requests": "1200", "x-ratelimit-remaining-requests": "900"})
    assert pacer.rate() == pytest.approx(20 * 0.97)
    pacer.answered(200, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"})
    assert pacer._hold == pytest.approx(clock.now + 90)  # nothing remains: the next waits for the reset
    anthropic = Pacer(clock=clock)
    anthropic.answered(200, {"anthropic-ratelimit-requests-limit": "600", "anthropic-ratelimit-tokens-limit": "6000"})
    anthropic.spent(100)
    assert anthropic.rate() == pytest.approx(1.0 * 0.97)  # 6,000 tokens a minute at 100 tokens an answer
    assert Pacer(max_rpm=120, clock=clock).rate() == 2.0
    capped = Pacer(max_rpm=6000, max_tpm=600, clock=clock)
    capped.spent(50)
    capped.spent(150)
    assert capped.rate() == pytest.approx(0.1)  # tokens bind first: 10 tokens/s at 100 an answer


def test_without_headers_a_429_sets_the_pace_which_then_rises():
    clock = Clock()
    pacer = Pacer(clock=clock)
    for _ in range(41):  # 41 answers in half a second: 82 a second
        pacer.answered(200, {})
        clock.now += 0.0125
    clock.now -= 0.0125
    assert pacer.answered(429, {"retry-after": "1"}) and pacer.slowdowns == 1
    assert pacer.rate() == pytest.approx(0.9 * 82)
    pacer.answered(429, {})  # the same burst: one signal
    assert pacer.slowdowns == 1
    clock.now += 3.0  # three quiet seconds: up by 5% of the pace a second, after the first
    assert pacer.rate() == pytest.approx(0.9 * 82 * (1 + 0.05 * 2.0))


def test_a_wait_only_the_headers_ask_for_never_outlasts_a_request():
    import asyncio

    clock = Clock()
    held = Pacer(clock=clock, max_wait_s=60)
    held.answered(200, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "50s"})
    assert not held._stalls(clock.now) and held.stalled is None  # 50 s: within a request's time, waited
    held.answered(200, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "10h"})
    asyncio.run(held.wait())
    assert held.stalled is not None and "would wait 10.0 h" in held.stalled.message
    slow = Pacer(clock=clock, max_wait_s=60)
    slow.answered(200, {"x-ratelimit-limit-requests": "0.5"})  # one every two minutes
    asyncio.run(slow.wait())  # the first goes at once
    asyncio.run(slow.wait())
    assert slow.stalled is not None and "announces a limit of 0.5 requests a minute" in slow.stalled.message
    mine = Pacer(max_rpm=0.5, clock=clock, max_wait_s=60)  # the same pace, set by hand: waited
    mine._next = clock.now + 120
    mine.answered(200, {"x-ratelimit-limit-requests": "0.5"})
    assert not mine._stalls(clock.now)


def test_read_limits():
    assert duration("6m0s") == 360 and duration("20ms") == 0.02 and duration("1h2m3.5s") == 3723.5
    assert duration("soon") is None
    limits = read_limits({"X-RateLimit-Limit-Requests": "60", "x-ratelimit-reset-requests": "1s"})
    assert (limits.requests_limit, limits.reset_s) == (60, 1.0)
    assert read_limits({"x-ratelimit-limit-requests": "lots"}).requests_limit is None
    assert read_limits({"anthropic-ratelimit-requests-reset": "soon"}).reset_s is None  # not announced, not a crash
    assert read_limits({"anthropic-ratelimit-requests-reset": "2020-01-01T00:00:00Z"}).reset_s == 0


def test_pool_bounds_in_flight():
    async def scenario():
        throttle = Throttle(3)

        async def one():
            async with throttle:
                await asyncio.sleep(0.005)

        await asyncio.gather(*(one() for _ in range(12)))
        return throttle.peak

    assert asyncio.run(scenario()) == 3
