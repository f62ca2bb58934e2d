"""--batch, through the real SDKs against the fake model API's batch APIs (tests/fakes/batches.py):
a run's uncached requests go as one batch per model, its answers are kept in the answer cache and
scored as synchronous answers are, billed at half the price; a request the batch failed is that
sample's ERROR with the batch's reason; a batch past batch_timeout_s is cancelled and the rest asked
one by one; an endpoint without a batch API gets every request one by one, and says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import CATALOGUE_MODELS, PROVIDER_KEY, base_url, catalogue, key_env
from tests.fakes.model_api import OUTPUT_TOKENS, FakeModelAPI
from toolselect.pick import Usage
from toolselect.prices import cost_of, price_for

CASES, REPEAT = 12, 2
MODELS = CATALOGUE_MODELS
ANSWERS = {f"find kind-{i} record r{i}": {"tool": f"tool_{i:02d}", "args": {"id": f"r{i}"}} for i in range(CASES)}


def suite(folder: Path, provider: str, *extra: str) -> None:
    lines = (f"repeat: {REPEAT}", "seed: 3", "cache_dir: answers", *extra)
    catalogue(folder, provider, tools=30, cases=CASES, lines=lines)


def run(folder: Path, api: FakeModelAPI, *flags: str) -> tuple[Any, dict]:
    env = {**key_env(folder), "ANTHROPIC_BASE_URL": api.url, "OPENAI_BASE_URL": base_url("openai", api)}
    done = toolselect("eval", *flags, "--json", "r.json", cwd=folder, env=env)
    report = json.loads((folder / "r.json").read_text()) if (folder / "r.json").exists() else {}
    return done, report


def cost(price: Any, entry: dict) -> float:
    """What the API bills for one logged request at its synchronous price (the fake's own accounting)."""
    billed = entry["billed"]
    return cost_of(price, Usage(billed.input, OUTPUT_TOKENS, billed.cache_write, billed.cache_read))


def script(faulty: bool = True, **batch: Any) -> dict:
    faults = [{"match": "find kind-3 record r3", "status": 500, "message": "injected fault"}] if faulty else []
    return {"key": PROVIDER_KEY, "answers": ANSWERS, "faults": faults, "batch": batch}


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses"])
def test_a_batch_run_scores_as_a_synchronous_one_at_half_the_price_and_fills_the_cache(tmp_path, provider):
    suite(tmp_path, provider)
    with FakeModelAPI(script(polls=2)) as api:
        done, report = run(tmp_path, api, "--batch")
        log, billed, created = list(api.log), api.stats()["billed"], list(api.batches.created)
        # the answers are in the answer cache: a second run (no --batch) asks only what failed
        again, second = run(tmp_path, api)
        asked_again, batched_again = api.log[len(log) :], api.batches.created[len(created) :]
    assert done.code == 0, done.out + done.err
    requests, batched = CASES * REPEAT, CASES * REPEAT - REPEAT
    # warm, then batch: the first request of each tool order goes alone and synchronously; the rest go as
    # one batch, and every one of them reads the prompt cache the warm-ups wrote
    assert [e["batch"] for e in log[:REPEAT]] == [False] * REPEAT and {e["prompt"] for e in log[:REPEAT]} == {
        "find kind-0 record r0"
    }
    assert len(created) == 1 and len(log) == requests and all(e["batch"] for e in log[REPEAT:])
    assert all(e["billed"].cache_read > 0 for e in log[REPEAT:] if "billed" in e)
    run_ = report["run"]
    assert run_["batch"]["batches"] == created
    assert (run_["batch"]["requests"], run_["batch"]["answered"], run_["batch"]["failed"]) == (batched, 20, 2)
    assert run_["batch"]["late"] == 0 and run_["api_calls"] == REPEAT + 20
    # every answer scored as a synchronous one would be; the failed request is its sample's ERROR
    outcomes = {c["name"]: {s["outcome"] for s in c["samples"]} for c in report["cases"]}
    assert outcomes.pop("c3") == {"ERROR"} and all(v == {"PASS"} for v in outcomes.values()), outcomes
    reason = next(s["reasons"][0] for c in report["cases"] if c["name"] == "c3" for s in c["samples"])
    assert reason.startswith("batch: ") and "injected fault" in reason
    # the bill: the API's own tokens, the batch's at half the list price
    assert run_["input_tokens"] == billed["input"] and run_["output_tokens"] == billed["output"]
    price = price_for(MODELS[provider])
    assert price is not None
    answered = [e for e in log if e.get("billed") is not None]  # a request that failed is not billed
    assert len(answered) == REPEAT + 20
    expected = sum(cost(price[0], e) * (0.5 if e["batch"] else 1.0) for e in answered)
    assert run_["cost_usd"] == pytest.approx(expected, rel=1e-4)
    assert "20 requests batched at half price" in done.out
    assert again.code == 0 and not batched_again
    assert {e["prompt"] for e in asked_again} == {"find kind-3 record r3"}  # the failed samples, with retries
    assert second["run"]["cache_hits"] == 22 and "batch" not in second["run"]

    def picked(r: dict) -> list:
        return [(c["name"], s["outcome"], s["picked_tool"], s["picked_args"]) for c in r["cases"] for s in c["samples"]]

    assert [p for p in picked(second) if p[0] != "c3"] == [p for p in picked(report) if p[0] != "c3"]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses"])
def test_the_requests_in_a_batch_are_the_synchronous_requests(tmp_path, provider):
    """Anthropic's batch carries each request's params as `messages.create` sends them (the prompt
    cache's breakpoints too); OpenAI's file, the body of /v1/chat/completions or /v1/responses."""
    suite(tmp_path, provider, "system: Be brief.", "temperature: 0")
    with FakeModelAPI(script(False)) as api:
        run(tmp_path, api, "--no-cache")
        synchronous = sorted(json.dumps(e["body"], sort_keys=True) for e in api.log)
        run(tmp_path, api, "--no-cache", "--batch")
        asked = api.log[len(synchronous) :]
        marks = ["tools[-1]", "system"] if provider == "anthropic" else []
        assert sum(e["batch"] for e in asked) == CASES * REPEAT - REPEAT  # all but each tool order's warm-up
        assert all(e["breakpoints"] == marks for e in asked)
    assert sorted(json.dumps(e["body"], sort_keys=True) for e in asked) == synchronous


def test_a_batch_past_its_timeout_is_cancelled_and_the_rest_asked_one_by_one(tmp_path):
    suite(tmp_path, "openai")
    with FakeModelAPI(script(False, never_ends=True, process=5)) as api:
        done, report = run(tmp_path, api, "--batch", "--batch-timeout", "0.5")
        log = list(api.log)
    assert done.code == 0, done.out + done.err
    batch = report["run"]["batch"]
    late = CASES * REPEAT - REPEAT - 5  # all but the warm-ups and the five the batch answered
    assert (batch["requests"], batch["answered"], batch["late"]) == (CASES * REPEAT - REPEAT, 5, late)
    assert sum(1 for e in log if e["batch"]) == 5 and sum(1 for e in log if not e["batch"]) == REPEAT + late
    warning = next(w for w in report["warnings"] if "batch_timeout_s" in w)
    assert "cancelled" in warning and f"{late} unanswered requests were asked one by one" in warning
    assert "asked one by one: see the warnings" in done.out


def test_an_endpoint_without_a_batch_api_gets_every_request_one_by_one(tmp_path):
    suite(tmp_path, "anthropic")
    with FakeModelAPI(script(False, missing=True)) as api:
        done, report = run(tmp_path, api, "--batch")
        log = list(api.log)
    assert done.code == 0, done.out + done.err
    assert len(log) == CASES * REPEAT and not any(e["batch"] for e in log)
    assert any("has no batch API (it answered 404)" in w for w in report["warnings"]), report["warnings"]
    assert report["run"]["batch"]["late"] == CASES * REPEAT - REPEAT  # the warm-ups were never batched


def test_a_dry_run_prices_the_batched_requests_at_half(tmp_path):
    suite(tmp_path, "openai")
    plain = toolselect("eval", "--dry-run", cwd=tmp_path, env=key_env(tmp_path))
    batched = toolselect("eval", "--dry-run", "--batch", cwd=tmp_path, env=key_env(tmp_path))
    assert plain.code == batched.code == 0, plain.out + plain.err

    def cost(text: str) -> float:
        return float(text.split("≈ $")[1].split()[0].rstrip(","))

    assert cost(batched.out) == pytest.approx(cost(plain.out) / 2, rel=0.01)


def test_head_and_base_share_one_batch_and_an_unchanged_request_goes_once(tmp_path):
    """A PR that changes no tool text: the base's requests are the head's, so one batch carries them
    once and the base reads their answers from the answer cache."""
    suite(tmp_path, "anthropic")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("answers/\nr.json\n")
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=tmp_path, check=True)
    (tmp_path / "README.md").write_text("a change that is not the tools'\n")
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "head"], cwd=tmp_path, check=True)
    with FakeModelAPI(script(False)) as api:
        done, report = run(tmp_path, api, "--batch", "--base-ref", "HEAD~1")
        log, created = list(api.log), list(api.batches.created)
    assert done.code == 0, done.out + done.err
    assert len(created) == 1 and len(log) == CASES * REPEAT and sum(e["batch"] for e in log) == CASES * REPEAT - REPEAT
    assert report["run"]["batch"]["answered"] == CASES * REPEAT - REPEAT
    assert "head $" in done.out and "base $0" in done.out and "22 requests batched at half price" in done.out


def test_an_interrupted_run_cancels_its_batch(tmp_path):
    """Ctrl-C while the batch runs: the batch is cancelled (nothing goes on billing), exit 130."""
    suite(tmp_path, "anthropic")
    with FakeModelAPI(script(False, never_ends=True)) as api:
        env = {**os.environ, **key_env(tmp_path), "ANTHROPIC_BASE_URL": api.url, "PYTHONUNBUFFERED": "1"}
        with subprocess.Popen(
            [sys.executable, "-m", "toolselect", "eval", "--batch"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            deadline = time.monotonic() + 60
            while not api.batches.created and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert api.batches.created, proc.communicate()
            time.sleep(0.5)  # polling it
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        batch = api.batches.batches[api.batches.created[0]]
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and batch.cancelling


def test_requests_a_batch_let_expire_are_asked_one_by_one_and_said(tmp_path):
    suite(tmp_path, "anthropic")
    with FakeModelAPI(script(False, process=10)) as api:  # the batch ends with the rest expired
        done, report = run(tmp_path, api, "--batch")
        log = list(api.log)
    assert done.code == 0, done.out + done.err
    expired = CASES * REPEAT - REPEAT - 10
    assert report["run"]["batch"]["late"] == expired and sum(not e["batch"] for e in log) == REPEAT + expired
    assert any(f"without running {expired} of its requests (they expired)" in w for w in report["warnings"])
    assert all(s["outcome"] == "PASS" for c in report["cases"] for s in c["samples"])
