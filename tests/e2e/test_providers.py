"""The model-API providers through the real anthropic and openai SDKs, against the fake model API
on 127.0.0.1: picks, retries, rate limits, fatal errors, missing keys, the answer cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import DATA, toolselect
from tests.e2e.harness import PROVIDER_KEY, PROVIDERS, base_url, key_env, run_eval

TOOLS = DATA / "outcomes" / "tools.json"


def write_cases(folder: Path, cases: list[tuple[str, object, dict | None]], extra: str = "") -> None:
    lines = []
    for prompt, tool, args in cases:
        lines.append(json.dumps({"question": prompt, "expected_tool": tool, "expected_args": args or {}}))
    (folder / "golden.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  model: claude-x\n  golden: golden.jsonl\n  min_accuracy: "
        f"0\n{extra}"
    )


def report(folder: Path) -> dict:
    return json.loads((folder / "r.json").read_text())


def outcomes(folder: Path) -> dict[str, str]:
    return {c["prompt"]: c["samples"][0]["outcome"] for c in report(folder)["cases"]}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_picks_through_the_real_sdk(provider, model_api, tmp_path):
    api = model_api(
        {
            "key": PROVIDER_KEY,
            "answers": {
                "weather in Paris": {"tool": "get_weather", "args": {"city": "Paris"}, "text": "Let me check."},
                "forecast for Rome": {"tool": "get_forecast", "raw_args": '{"city": "Rome", "days": 3} }'},
                "two calls": {
                    "calls": [{"tool": "get_time", "args": {}}, {"tool": "get_weather", "args": {"city": "Oslo"}}]
                },
                "refuse this": {"refusal": True, "text": "I won't."},
                "web search": {"tool": "search_web", "args": {"query": "cats"}},
            },
        }
    )
    write_cases(
        tmp_path,
        [
            ("weather in Paris", "get_weather", {"city": "paris"}),
            ("forecast for Rome", "get_forecast", {"city": "Rome"}),
            ("two calls", "get_time", None),
            ("refuse this", None, None),
            ("web search", "search.web", {"query": "cats"}),
            ("no tool please", None, None),
        ],
    )
    result = run_eval(tmp_path, provider, api, "--temperature", "0.3", "--seed", "7")
    assert result.code == 0, result.err
    rep = report(tmp_path)
    samples = {c["prompt"]: c["samples"][0] for c in rep["cases"]}
    assert samples["weather in Paris"]["outcome"] == "PASS"
    assert samples["weather in Paris"]["usage"]["output_tokens"] == 20
    # Gemini's arguments are an object on the wire: no text to be invalid (the fake sends none)
    assert samples["forecast for Rome"]["outcome"] == "ARG-INVALID"
    if provider not in ("anthropic", "gemini"):  # trailing garbage is kept raw, never a crash
        assert samples["forecast for Rome"]["raw_args"] == '{"city": "Rome", "days": 3} }'
    assert samples["two calls"]["outcome"] == "PASS" and samples["two calls"]["calls"] == 2
    # a refusal by the API is no call, and no reply either: never counted as restraint
    assert samples["refuse this"]["outcome"] == "NO-REPLY" and samples["refuse this"]["stop_reason"] == "refusal"
    assert samples["refuse this"]["reasons"] == ["the API refused to answer"]
    assert samples["web search"]["picked_tool"] == "search.web"  # safe name mapped back
    assert rep["run"]["temperature"] == 0.3 and rep["run"]["seed"] == 7 and rep["run"]["api_calls"] == 6
    sent = api.log[0]
    assert sent["tool_choice"] in ({"type": "auto"}, "auto")
    assert "search_web" in sent["tools"] and "search.web" not in sent["tools"]
    assert sent["temperature"] == 0.3
    # seed goes where the API has one (Chat Completions, Gemini), and is only recorded elsewhere
    assert sent["seed"] == (7 if provider in ("openai", "gemini") else None)
    if provider == "openai-responses":
        assert sent["store"] is False
    # every provider caps the answer (only the first call is scored), in its own API's field
    if provider == "gemini":
        assert sent["body"]["generationConfig"]["maxOutputTokens"] == 4096
        return
    field = {"anthropic": "max_tokens", "openai": "max_tokens", "openai-responses": "max_output_tokens"}[provider]
    assert sent["body"][field] == 4096 and "max_completion_tokens" not in sent["body"]  # a compatible server's


@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_a_server_on_this_machine_needs_no_key_and_the_cap_is_a_flag(provider, model_api, tmp_path):
    """llama.cpp, Ollama or vLLM on 127.0.0.1: no OPENAI_API_KEY to invent; --max-tokens caps a model that rambles."""
    api = model_api({"answers": {"weather in Paris": {"tool": "get_weather", "args": {"city": "Paris"}}}})
    write_cases(tmp_path, [("weather in Paris", "get_weather", {"city": "Paris"})])
    result = run_eval(tmp_path, provider, api, "--max-tokens", "256", env={"HOME": str(tmp_path)})
    assert result.code == 0, result.err + result.out
    field = "max_tokens" if provider == "openai" else "max_output_tokens"
    assert api.log[0]["body"][field] == 256
    far = toolselect(
        "eval", "--provider", provider, "--model", "m", "--base-url", "http://models.internal:8080/v1",
        cwd=tmp_path, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert far.code == 3 and "no OpenAI API key: set OPENAI_API_KEY" in far.out + far.err


def test_legacy_function_call_is_a_pick(model_api, tmp_path):
    api = model_api(
        {
            "key": PROVIDER_KEY,
            "answers": {"weather in Paris": {"tool": "get_weather", "args": {"city": "Paris"}, "legacy": True}},
        }
    )
    write_cases(tmp_path, [("weather in Paris", "get_weather", {"city": "Paris"})])
    assert run_eval(tmp_path, "openai", api).code == 0
    assert outcomes(tmp_path) == {"weather in Paris": "PASS"}


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
def test_transient_failures_are_retried(provider, model_api, tmp_path):
    api = model_api(
        {
            "key": PROVIDER_KEY,
            "answers": {p: {"tool": "get_weather", "args": {"city": "Oslo"}} for p in ("a", "b", "c", "d")},
            "faults": [
                {"match": "a", "status": 429, "retry_after": 0.05, "times": 3},
                {"match": "b", "status": 529 if provider == "anthropic" else 500, "retry_after": 0.05, "times": 2},
                {"match": "c", "delay": 3, "times": 1},  # stalls past the timeout: cut off and retried
                {"match": "d", "drop": True, "times": 1},  # the connection drops
            ],
        }
    )
    write_cases(tmp_path, [(p, "get_weather", {"city": "Oslo"}) for p in ("a", "b", "c", "d")])
    result = run_eval(tmp_path, provider, api, "--timeout", "1", "--concurrency", "4")
    assert result.code == 0, result.err
    assert set(outcomes(tmp_path).values()) == {"PASS"}
    assert api.requests == 4 + 3 + 2 + 1 + 1
    assert report(tmp_path)["run"]["pool_shrinks"] >= 1  # the 429s made the run send fewer at once


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses", "gemini"])
def test_a_long_retry_after_is_cut_to_the_request_timeout_and_said(provider, model_api, tmp_path):
    """An API that asks for 300 s: the SDK would sleep that long (Anthropic) or give up (OpenAI);
    toolselect waits at most timeout_s, retries, and says so."""
    api = model_api(
        {
            "key": PROVIDER_KEY,
            "answers": {"a": {"tool": "get_weather", "args": {"city": "Oslo"}}},
            "faults": [{"match": "a", "status": 429, "retry_after": 300, "times": 1}],
        }
    )
    write_cases(tmp_path, [("a", "get_weather", {"city": "Oslo"})])
    result = run_eval(tmp_path, provider, api, "--timeout", "1")  # a 300 s wait would outlast the helper's timeout
    assert result.code == 0, result.err
    assert set(outcomes(tmp_path).values()) == {"PASS"} and api.requests == 2
    said = f"{provider} asked to wait 300 s before retrying (retry-after); toolselect waited at most 1 s"
    assert any(w.startswith(said) for w in report(tmp_path)["warnings"])
    assert said in result.out


def test_persistent_rate_limit_gives_errors_and_exit_3(model_api, tmp_path):
    """A 429 is the endpoint asking to wait: retried for as long as the sample's time budget lasts
    (timeout_s × (max_retries + 1): 1 s × 3 here), not a number of times — then ERROR, and exit 3."""
    api = model_api({"key": PROVIDER_KEY, "faults": [{"match": "*", "status": 429, "retry_after": 0.01}]})
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(2)])
    result = run_eval(tmp_path, "openai", api, "--max-retries", "2", "--concurrency", "2", "--timeout", "1")
    assert result.code == 3
    rep = report(tmp_path)
    assert set(outcomes(tmp_path).values()) == {"ERROR"}
    reason = rep["cases"][0]["samples"][0]["reasons"][0]
    assert reason == (
        "429 rate_limit_exceeded: injected fault: still busy when the sample's 3 s of waiting ran out (timeout_s × "
        "(max_retries + 1))"
    )
    assert "an outage is not a result" in result.out
    assert api.requests > 2 * 3  # more than the SDK's own retries: the budget is time
    assert rep["run"]["pool_shrinks"] >= 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_fatal_401_stops_after_the_first_request(provider, model_api, tmp_path):
    api = model_api(
        {"key": "another-key", "answers": {f"q{i}": {"tool": "get_weather", "args": {}} for i in range(20)}}
    )
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(20)])
    result = run_eval(tmp_path, provider, api, "--concurrency", "1")
    assert result.code == 3
    assert api.requests == 1  # nothing new goes out after the first fatal answer
    rep = report(tmp_path)
    assert rep["passed"] is False
    assert f"{provider} answered 401 for model 'claude-x' at {base_url(provider, api)}" in rep["gate"]["stopped"]
    outcomes_seen = [s["outcome"] for c in rep["cases"] for s in c["samples"]]
    assert (
        outcomes_seen.count("ERROR") == 1 and outcomes_seen.count("NOT-EVALUATED") == 19 and "PASS" not in outcomes_seen
    )
    assert "STOPPED" in result.out


def test_unknown_model_is_fatal_with_concurrency(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "fatal_models": ["no-such-model"], "latency": 0.05})
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(40)])
    result = run_eval(tmp_path, "anthropic", api, "--model", "no-such-model", "--concurrency", "4")
    assert result.code == 3
    assert api.requests <= 4  # only requests already in flight may finish
    assert "is the model name right" in result.out
    assert result.err == ""


# (OpenAI's: only an endpoint off this machine needs a key; test_a_server_on_this_machine_needs_no_key…)
@pytest.mark.parametrize(("provider", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("gemini", "GEMINI_API_KEY")])
def test_missing_key_stops_before_any_request(provider, variable, model_api, tmp_path):
    api = model_api({})
    write_cases(tmp_path, [("q", "get_weather", None)])
    result = run_eval(tmp_path, provider, api, env={"HOME": str(tmp_path)})
    assert result.code == 3
    assert variable in result.err and "run offline with --provider bm25" in result.err
    assert api.requests == 0
    assert not (tmp_path / "r.json").exists()


def test_concurrency_bound_is_honoured_and_reached(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "latency": 0.15, "default": {"tool": "get_weather", "args": {"city": "x"}}})
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(24)])
    assert run_eval(tmp_path, "openai", api, "--concurrency", "6").code == 0
    assert api.max_in_flight == 6


def test_cache_reuses_answers_and_cache_only_reports_not_evaluated(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "default": {"tool": "get_weather", "args": {"city": "x"}}})
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(3)])
    assert run_eval(tmp_path, "anthropic", api).code == 0
    assert api.requests == 3
    assert run_eval(tmp_path, "anthropic", api).code == 0  # warm: nothing asked again
    assert api.requests == 3 and report(tmp_path)["run"]["cache_hits"] == 3
    assert all(s["cached"] for c in report(tmp_path)["cases"] for s in c["samples"])
    # two more cases; --cache-only never calls the API (and needs no key)
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(5)])
    result = run_eval(tmp_path, "anthropic", api, "--cache-only", env={"HOME": str(tmp_path)})
    assert result.code == 0, result.err
    assert api.requests == 3
    rep = report(tmp_path)
    assert rep["counts"]["not_evaluated"] == 2 and rep["metrics"]["accuracy"]["denominator"] == 3
    assert "2 samples NOT-EVALUATED" in result.out
    # --no-cache asks again and refreshes
    assert run_eval(tmp_path, "anthropic", api, "--no-cache").code == 0
    assert api.requests == 8
    # a damaged entry is ignored and asked again
    entry = next((tmp_path / ".toolselect-cache" / "v1").glob("*/*.json"))
    entry.write_text('{"format": 1, "key": "trunc')
    assert run_eval(tmp_path, "anthropic", api).code == 0
    assert api.requests == 9


def test_changing_a_setting_asks_again(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "default": {"tool": "get_weather", "args": {"city": "x"}}})
    write_cases(tmp_path, [("q", "get_weather", None)])
    run_eval(tmp_path, "openai", api)
    run_eval(tmp_path, "openai", api, "--temperature", "0.5")
    run_eval(tmp_path, "openai", api, "--model", "other-model")
    run_eval(tmp_path, "openai-responses", api)
    assert api.requests == 4
    run_eval(tmp_path, "openai", api, "--temperature", "0.5")
    assert api.requests == 4


def test_cache_stats_and_prune(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "default": {"text": "hi"}})
    write_cases(tmp_path, [(f"q{i}", None, None) for i in range(4)])
    run_eval(tmp_path, "openai", api)
    write_cases(tmp_path, [(f"q{i}", None, None) for i in range(2)])
    run_eval(tmp_path, "openai", api)
    stats = toolselect("cache", "stats", cwd=tmp_path)
    assert "4 answers" in stats.out and "2 not used by the last run" in stats.out and "openai claude-x" in stats.out
    pruned = toolselect("cache", "prune", cwd=tmp_path)
    assert pruned.out.startswith("removed 2 answers")
    assert len(list((tmp_path / ".toolselect-cache" / "v1").glob("*/*.json"))) == 2


def _start_eval(folder: Path, api, extra_env: dict | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSELECT_", "ANTHROPIC_", "OPENAI_"))}
    env.update(key_env(folder), PYTHONWARNINGS="error", **(extra_env or {}))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolselect",
            "eval",
            "--provider",
            "openai",
            "--base-url",
            base_url("openai", api),
            "--concurrency",
            "4",
            "--json",
            "r.json",
        ],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_entries(folder: Path, at_least: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(list((folder / ".toolselect-cache" / "v1").glob("*/*.json"))) >= at_least:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("the run wrote no cache entries")


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM"])
def test_a_killed_run_keeps_its_answers(how, model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "latency": 0.1, "default": {"tool": "get_weather", "args": {"city": "x"}}})
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(60)])
    proc = _start_eval(tmp_path, api)
    _wait_for_entries(tmp_path, 8, proc)
    proc.send_signal(signal.SIGKILL if how == "kill -9" else signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    if how == "SIGTERM":
        assert proc.returncode == 130 and "kept in the answer cache" in err and "Traceback" not in err
    entries = list((tmp_path / ".toolselect-cache" / "v1").glob("*/*.json"))
    kept = [e for e in entries if not e.name.startswith(".tmp-")]
    for entry in kept:  # every entry on disk is whole
        assert json.loads(entry.read_text())["format"] == 1
    asked_before = api.requests
    assert 8 <= len(kept) < 60
    result = run_eval(tmp_path, "openai", api, "--concurrency", "4")
    assert result.code == 0, result.err
    rep = report(tmp_path)
    assert rep["run"]["cache_hits"] == len(kept)
    assert rep["run"]["api_calls"] == 60 - len(kept)
    assert api.requests == asked_before + 60 - len(kept)


def test_no_key_appears_anywhere(model_api, tmp_path):
    api = model_api(
        {
            "key": PROVIDER_KEY,
            "answers": {"a": {"tool": "get_weather", "args": {"city": "x"}}},
            "faults": [{"match": "b", "status": 500, "retry_after": 0.01}],
        }
    )
    write_cases(tmp_path, [("a", "get_weather", None), ("b", "get_weather", None)])
    outputs = []
    for provider in PROVIDERS:
        result = run_eval(
            tmp_path,
            provider,
            api,
            "--max-retries",
            "1",
            "--max-error-rate",
            "1",
            "--markdown",
            "r.md",
            "--junit",
            "r.xml",
        )
        outputs += [result.out, result.err]
    wrong = model_api({"key": "other"})
    for provider in PROVIDERS:  # a 401 message echoes the request, not the key
        result = run_eval(tmp_path, provider, wrong)
        outputs += [result.out, result.err]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len([p for p in files if ".toolselect-cache" in str(p)]) >= 3
    for path in files:
        assert PROVIDER_KEY not in path.read_text(errors="replace"), path
    for text in outputs:
        assert PROVIDER_KEY not in text


def test_odd_but_real_answers_never_crash_the_run(model_api, tmp_path):
    api = model_api(
        {
            "key": PROVIDER_KEY,
            "answers": {
                "object args": {"tool": "get_weather", "args": {"city": "Paris"}, "object_args": True},
                "gateway page": {"html": "<html><body>Sign in to the corporate proxy</body></html>"},
            },
        }
    )
    write_cases(tmp_path, [("object args", "get_weather", {"city": "Paris"}), ("gateway page", "get_weather", None)])
    result = run_eval(tmp_path, "openai", api, "--max-error-rate", "1")
    assert result.code == 0, result.err
    samples = {c["prompt"]: c["samples"][0] for c in report(tmp_path)["cases"]}
    assert samples["object args"]["outcome"] == "PASS"  # an object is taken as the arguments
    assert samples["gateway page"]["outcome"] == "ERROR"
    assert samples["gateway page"]["reasons"][0].startswith(f"unexpected answer from {api.url}/v1")


def test_a_key_with_a_line_break_is_refused_and_never_echoed(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY})
    write_cases(tmp_path, [("q", "get_weather", None)])
    result = run_eval(tmp_path, "openai", api, env={"OPENAI_API_KEY": PROVIDER_KEY + "\n", "HOME": str(tmp_path)})
    assert result.code == 3
    assert "OPENAI_API_KEY contains whitespace or a line break" in result.err
    assert PROVIDER_KEY not in result.out + result.err and api.requests == 0


def test_a_fully_cached_run_needs_no_key_and_an_empty_cache_only_run_fails(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "default": {"tool": "get_weather", "args": {"city": "x"}}})
    write_cases(tmp_path, [("a", "get_weather", None), ("b", "get_weather", None)])
    assert run_eval(tmp_path, "openai", api).code == 0
    cached = run_eval(tmp_path, "openai", api, env={"HOME": str(tmp_path)})  # toolproof's "commit the cache" setup
    assert cached.code == 0, cached.err
    assert report(tmp_path)["run"]["cache_hits"] == 2
    empty = run_eval(tmp_path, "openai", api, "--cache-only", "--cache-dir", "empty", env={"HOME": str(tmp_path)})
    assert empty.code == 1
    assert "nothing was evaluated: 2 samples of reviewed cases are NOT-EVALUATED" in empty.out


def test_an_unwritable_cache_is_refused_before_any_request(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY})
    write_cases(tmp_path, [("q", "get_weather", None)])
    (tmp_path / "afile").write_text("")
    result = run_eval(tmp_path, "openai", api, "--cache-dir", "afile")
    assert result.code == 2 and "cannot write there" in result.err and api.requests == 0


def test_interrupted_runs_keep_their_answers_from_prune(model_api, tmp_path):
    api = model_api({"key": PROVIDER_KEY, "latency": 0.1, "default": {"tool": "get_weather", "args": {"city": "x"}}})
    write_cases(tmp_path, [(f"q{i}", "get_weather", None) for i in range(40)])
    proc = _start_eval(tmp_path, api)
    _wait_for_entries(tmp_path, 8, proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    kept = len(list((tmp_path / ".toolselect-cache" / "v1").glob("*/*.json")))
    pruned = toolselect("cache", "prune", "--dry-run", cwd=tmp_path)
    assert pruned.out.startswith("would remove 0 answers"), (kept, pruned.out)
