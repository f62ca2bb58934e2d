"""The prompt cache, through the real SDKs against the fake model API, which bills like the real
APIs (tests/fakes/prompt_cache.py): a 60-tool surface, 30 cases × 3 shuffled samples. Requests
share their tool list as a prefix (sample k of every case sees order π_k), the first request of each
order goes alone and the rest fan out after it, and the report's tokens and cost are what the API
billed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import CATALOGUE_MODELS, PROVIDER_KEY, base_url, catalogue, key_env
from tests.fakes.model_api import FakeModelAPI

CASES, REPEAT = 30, 3
SYSTEM = "You are the catalogue assistant. Call a tool when one fits."
MODELS = CATALOGUE_MODELS


def suite(folder: Path, provider: str, concurrency: int = 8) -> None:
    system = f"system: {json.dumps(SYSTEM)}"
    lines = (f"repeat: {REPEAT}", "shuffle: true", "seed: 7", f"concurrency: {concurrency}", system)
    catalogue(folder, provider, tools=60, cases=CASES, lines=lines)


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


def test_the_pull_request_comment_says_what_both_sides_cost(tmp_path):
    suite(tmp_path, "anthropic")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=tmp_path, check=True)
    changed = json.loads((tmp_path / "tools.json").read_text())["tools"]
    changed[0]["description"] = "Looks up kind-0 records only."
    (tmp_path / "tools.json").write_text(json.dumps({"tools": changed}))
    subprocess.run([*git, "commit", "-qam", "head"], cwd=tmp_path, check=True)
    with FakeModelAPI({"key": PROVIDER_KEY, "default": {"tool": "tool_00", "args": {"id": "r"}}}) as api:
        env = {**key_env(tmp_path), "ANTHROPIC_BASE_URL": api.url}
        done = toolselect(
            "eval", "--base-ref", "HEAD~1", "--markdown", "c.md", "--json", "r.json", cwd=tmp_path, env=env
        )
        billed = api.stats()["billed"]
    assert done.code in (0, 1), done.out + done.err
    head = json.loads((tmp_path / "r.json").read_text())["run"]
    base = json.loads((tmp_path / "r.base.json").read_text())["run"]
    share = billed["cache_read"] / (billed["input"] + billed["cache_write"] + billed["cache_read"])
    line = (
        f"cost ${head['cost_usd'] + base['cost_usd']:.2f}: head ${head['cost_usd']:.2f}, base ${base['cost_usd']:.2f}; "
        f"{share:.0%} of input tokens from the prompt cache"
    )
    assert f"<sub>{line}</sub>" in (tmp_path / "c.md").read_text()
    assert line in done.out  # the console says the same, with where the prices come from
    assert "list prices of " in done.out.split(line)[1].splitlines()[0]


def test_max_cost_refuses_a_run_whose_cache_aware_estimate_is_over_it(tmp_path):
    suite(tmp_path, "anthropic")
    report, _, _ = run(tmp_path, "anthropic")  # what the run really costs
    with FakeModelAPI({"key": PROVIDER_KEY}) as api:
        env = {**key_env(tmp_path), "ANTHROPIC_BASE_URL": api.url}
        dry = toolselect("eval", "--dry-run", "--no-cache", cwd=tmp_path, env=env)
        over = toolselect("eval", "--no-cache", "--max-cost", f"{report['cost_usd'] / 2:.4f}", cwd=tmp_path, env=env)
        unpriced = toolselect("eval", "--no-cache", "--max-cost", "5", "--model", "my-own-model", cwd=tmp_path, env=env)
        asked = api.requests
    assert dry.code == 0, dry.err
    estimate = float(dry.out.split("total: 90 requests, ≈ $")[1].split()[0])
    assert 0.8 * report["cost_usd"] <= estimate <= 1.25 * report["cost_usd"], (estimate, report["cost_usd"])
    assert "read from the prompt cache" in dry.out
    assert over.code == 2 and "more than max_cost $" in over.err and "hint: raise max_cost" in over.err
    assert unpriced.code == 2 and "no price is known for my-own-model" in unpriced.err and "evals.price" in unpriced.err
    assert asked == 0  # refused before any request
