"""At the provider's rate limit, not below it and not into it: 600 requests against the fake model
API enforcing a token bucket (429 with retry-after beyond it), with the limit announced in the
answers' headers (OpenAI's and Anthropic's), and without (found by the 429s: additive increase,
multiplicative decrease), and capped by hand (--max-rpm). No sample fails; the run goes at the
limit. (How close to the limit it goes is timed in docs/benchmarks.md, not here.)"""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA, toolselect
from tests.fakes.model_api import FakeModelAPI

TOOLS = DATA / "outcomes" / "tools.json"
RPS = 100


def suite(folder, provider: str, cases: int = 200, concurrency: int = 16) -> None:
    golden = "".join(
        json.dumps({"id": f"c{i}", "question": f"weather in city {i} now", "expected_tool": "get_weather"}) + "\n"
        for i in range(cases)
    )
    (folder / "g.jsonl").write_text(golden)
    (folder / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  provider: {provider}\n  model: fake-model\n"
        f"  golden: g.jsonl\n  min_accuracy: 0\n  repeat: 3\n  concurrency: {concurrency}\n"
    )


@pytest.mark.parametrize(
    ("provider", "headers", "flags", "burst", "concurrency"),
    [("openai", "openai", (), 20, 16), ("anthropic", "anthropic", (), 20, 16), ("openai", None, (), 20, 16),
     ("openai", None, ("--max-rpm", str(RPS * 60 * 0.95)), 20, 16),
     # issue 24's shape: 20 req/s, a burst of 5, a 0.1 s retry-after, 32 in flight — the first seconds used
     # to spend some samples' retries (28 of 180 ERROR): a 429 is the endpoint asking to wait, not a failure
     ("openai", None, (), 5, 32), ("anthropic", "anthropic", (), 5, 32)],
    ids=["openai-headers", "anthropic-headers", "no-headers", "max-rpm", "no-headers-burst-5", "headers-burst-5"],
)  # fmt: skip
def test_a_run_at_the_rate_limit(tmp_path, provider, headers, flags, burst, concurrency):
    small = burst < 20
    rps, cases = (20, 60) if small else (RPS, 200)
    limit = {"rps": rps, "burst": burst, "headers": headers, "retry_after": "0.1" if small else "1"}
    with FakeModelAPI({"default": {"tool": "get_weather", "args": {}}, "latency": 0.02, "rate_limit": limit}) as api:
        suite(tmp_path, provider, cases, concurrency)
        key = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        env = {key: "k", "OPENAI_BASE_URL": api.url + "/v1", "ANTHROPIC_BASE_URL": api.url}
        run = toolselect("eval", *flags, "--json", "r.json", "-q", cwd=tmp_path, env=env, timeout=180)
        stats = api.stats()
    assert run.code in (0, 1), run.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["outcomes"].get("ERROR", 0) == 0 and stats["admitted"] == cases * 3
    # the pace achieved is the benchmark's to measure (bench/run.py --only rate, docs/benchmarks.md): a timed
    # assertion here failed a clean-clone CI at 77 of 100 requests/s on a loaded machine; what is asserted
    # is what a user sees in the report: no sample failed, and the 429s it took to find (or keep) the pace
    if headers or flags:  # announced or capped: past the first requests (sent before any answer said the limit)
        assert stats["rate_limited"] <= max(2, concurrency), stats
    else:  # found: a few 429s set the pace, and the run says how often it slowed down
        assert stats["rate_limited"] > 0 and report["run"]["pool_shrinks"] > 0


STALLS = {
    "openai-far-reset": ("openai", {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "10h"}),
    "openai-tiny-limit": ("openai", {"x-ratelimit-limit-requests": "0.001"}),
    "anthropic-far-date": (
        "anthropic",
        {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z"},
    ),
}


@pytest.mark.parametrize("stall", STALLS, ids=list(STALLS))
def test_no_header_stalls_the_run(tmp_path, stall):
    """Finding 8 (issue 23): one answer's rate-limit headers asked for hours of waiting (nothing left
    until a reset 10 h away, a limit of 0.001 a minute, a reset in 2099) and a required check hung
    until the job's limit. The run stops at once, saying how long the endpoint asked it to wait."""
    provider, headers = STALLS[stall]
    script = {"default": {"tool": "get_weather", "args": {}}, "announce": headers}
    with FakeModelAPI(script) as api:
        suite(tmp_path, provider, cases=40)
        key = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        env = {key: "k", "OPENAI_BASE_URL": api.url + "/v1", "ANTHROPIC_BASE_URL": api.url}
        run = toolselect("eval", "--timeout", "20", "--json", "r.json", cwd=tmp_path, env=env, timeout=120)
        asked = len(api.log)
    assert run.code == 3, run.out + run.err
    said = run.out + run.err
    assert "longer than a request may take (timeout_s=20 s); the run stops instead of waiting" in said, said
    assert ("no request remains until it resets" if stall != "openai-tiny-limit" else "0.001 requests a minute") in said
    assert ("would wait 10.0 h" if stall == "openai-far-reset" else "would wait") in said
    assert asked < 120  # it stopped: 40 cases × 3 samples were never all asked
