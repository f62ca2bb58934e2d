"""The prompt cache, through the real SDKs against the fake model API, which bills like the real
APIs (tests/fakes/prompt_cache.py): a 60-tool surface, 30 cases × 3 shuffled samples. Requests
share their tool list as a prefix (sample k of every case sees order π_k), the first request of each
order goes alone and the rest fan out after it, and the report's tokens and cost are what the API
billed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import PROVIDER_KEY, base_url, key_env
from tests.fakes.model_api import FakeModelAPI

TOOLS = [
    {
        "name": f"tool_{i:02d}",
        "description": f"Looks up record kind {i} in the catalogue: {'field ' * 12}and returns it as JSON.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "description": f"the kind-{i} record's identifier"}},
            "required": ["id"],
        },
    }
    for i in range(60)
]
CASES, REPEAT = 30, 3
SYSTEM = "You are the catalogue assistant. Call a tool when one fits."
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1", "openai-responses": "gpt-4.1"}


def suite(folder: Path, provider: str, concurrency: int = 8) -> None:
    (folder / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    cases = [
        {"id": f"c{i}", "question": f"find kind-{i} record r{i}", "expected_tool": f"tool_{i:02d}"}
        for i in range(CASES)
    ]
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {MODELS[provider]}\n  golden: golden.jsonl\n"
        f"  min_accuracy: 0\n  repeat: {REPEAT}\n  shuffle: true\n  seed: 7\n  concurrency: {concurrency}\n"
        f"  system: {json.dumps(SYSTEM)}\n"
    )


def run(folder: Path, provider: str, *flags: str) -> tuple[dict, dict, list[dict]]:
    answer = {"tool": "tool_00", "args": {"id": "r"}}
    with FakeModelAPI({"key": PROVIDER_KEY, "default": answer, "latency": 0.05}) as api:
        env = {**key_env(folder), "ANTHROPIC_BASE_URL": api.url, "OPENAI_BASE_URL": base_url("openai", api)}
        done = toolselect("eval", *flags, "--json", "r.json", "--no-cache", cwd=folder, env=env)
        stats, log = api.stats(), api.log
    assert done.code == 0, done.out + done.err
    return json.loads((folder / "r.json").read_text())["run"], stats["billed"], log


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses"])
def test_requests_share_a_cached_prefix_and_the_report_bills_what_the_api_billed(tmp_path, provider):
    suite(tmp_path, provider)
    report, billed, log = run(tmp_path, provider)
    requests = CASES * REPEAT
    assert len(log) == requests
    # the report's tokens are the API's own accounting, kind by kind
    assert report["input_tokens"] == billed["input"] and report["output_tokens"] == billed["output"]
    assert report["prompt_cache_read_tokens"] == billed["cache_read"] > 0
    assert report["prompt_cache_write_tokens"] == billed.get("cache_write", 0)
    # warm, then fan out: one request per tool order misses the cache; every other reads it
    assert billed["reading"] == requests - REPEAT, billed
    if provider == "anthropic":  # a write per order, and breakpoints after the tools and the system prompt
        assert billed["writing"] == REPEAT
        assert all(entry["breakpoints"] == ["tools[-1]", "system"] for entry in log)
    total_input = billed["input"] + billed.get("cache_write", 0) + billed["cache_read"]
    assert billed["cache_read"] / total_input >= 0.7  # the target, on a 60-tool surface
    assert report["cost_usd"] > 0 and report["priced_by"].startswith("list prices of ")
    assert all(entry["prompt_cache_key"] is None for entry in log)  # only OpenAI's own endpoint gets one


def test_without_the_prompt_cache_every_request_pays_in_full(tmp_path):
    suite(tmp_path, "anthropic")
    cached, _, _ = run(tmp_path, "anthropic")
    report, billed, log = run(tmp_path, "anthropic", "--no-prompt-cache")
    assert all(entry["breakpoints"] == [] for entry in log)
    assert billed.get("cache_read", 0) == 0 and report["prompt_cache_read_tokens"] == 0
    assert report["input_tokens"] == billed["input"]
    assert cached["cost_usd"] <= 0.3 * report["cost_usd"]  # input dominates here: cached costs under 30%


def test_one_tool_order_is_written_once_with_eight_in_flight(tmp_path):
    """The fake's cache is written only when an answer is back, so 8 first requests sent together
    would be 8 writes: the warm-up sends one, and the rest read it."""
    suite(tmp_path, "anthropic")
    text = (tmp_path / "toolselect.yaml").read_text().replace("shuffle: true", "shuffle: false")
    (tmp_path / "toolselect.yaml").write_text(text)
    _, billed, _ = run(tmp_path, "anthropic")
    assert billed["writing"] == 1 and billed["reading"] == CASES * REPEAT - 1
