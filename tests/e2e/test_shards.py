"""A sharded run, end to end: the same suite (two models, three samples a case, head and base)
evaluated unsharded and as 3 shards + `toolselect merge`, on the fake model API. The merged report
is the unsharded one field for field (timings aside) — metrics, intervals, confusion, flaky cases,
the diff, the p-values, the verdict — and a missing shard, a shard given twice and a part of another
plan are refused by name."""

from __future__ import annotations

import copy
import json
import re
import shutil
from typing import Any

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import KEY, SCRIPT, make_repo, pull_request_event, register_pull, run_action
from tests.fakes.model_api import FakeModelAPI

# one worker runs this module: the unsharded run and its three shards (a module fixture) are made once
pytestmark = pytest.mark.xdist_group("shards")

MODELS = """  models:
    - {provider: openai, model: fake-a, label: a}
    - {provider: openai, model: fake-b, label: b}
  repeat: 3
"""


def shuffled_script() -> dict[str, Any]:
    """The Action tests' script, with two prompts answered by whichever tool is listed first: with
    repeat 3 each sample sees its own shuffled order, so those cases pass some samples (flaky)."""
    script: dict[str, Any] = copy.deepcopy(SCRIPT)
    for prompt in ("7-day outlook for Lisbon", "Search the web for MCP news"):
        script["answers"][prompt] = {"first": True, "args": script["answers"][prompt]["args"]}
    return script


TIMINGS = ("started_at", "finished_at", "duration_s")
WORKTREE = re.compile(r"/[^\s\"']*/toolselect-base-[^/]+/")  # the base's checkout: a folder of its own each run


def without_timings(text: str) -> dict[str, Any]:
    report = json.loads(WORKTREE.sub("<base worktree>/", text))
    for model in report.get("models", [report]):
        for key in TIMINGS:
            model["run"].pop(key)
        for case in model["cases"]:
            for sample in case["samples"]:
                sample.pop("latency_ms")
    return report


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The suite run unsharded, and as three shards each with a cache of its own."""
    tmp = tmp_path_factory.mktemp("shards")
    with FakeModelAPI(shuffled_script()) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1"}
        repo = make_repo(tmp, models=MODELS)
        folder = repo.path / "evals"
        common = ["--base-ref", repo.base, "--max-drop", "5"]
        whole = toolselect(
            "eval", *common, "--json", "whole.json", "--markdown", "whole.md", "--cache-dir", "c-whole", cwd=folder,
            env=env,
        )  # fmt: skip
        assert whole.code == 1, whole.err  # the reworded description costs two cases: a drop beyond 5 points
        for i in (1, 2, 3):
            shard = toolselect(
                "eval", *common, "--shard", f"{i}/3", "--json", f"part-{i}.json", "--cache-dir", f"c-{i}", cwd=folder,
                env=env,
            )  # fmt: skip
            assert shard.code == 0, shard.err  # a shard gives no verdict
            assert f"shard {i}/3:" in shard.out
        requests = api.requests
        url = api.url
    yield folder, repo, whole, requests, url


def merge(sharded: Any, *parts: str, base_parts: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> Any:
    """`toolselect merge` with no key (it asks nothing), at the endpoint the shards asked (the answers'
    cache keys name it)."""
    folder, url = sharded[0], sharded[4]
    base = ("--base-parts", *base_parts) if base_parts else ()
    env = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": url + "/v1"}
    return toolselect("merge", *parts, *base, *extra, cwd=folder, env=env)


def test_three_shards_merge_into_the_unsharded_report(sharded):
    folder, repo, whole, requests, _ = sharded
    # the shards asked exactly what the unsharded run asked: each unit once, in one shard
    parts = [json.loads((folder / f"part-{i}.json").read_text()) for i in (1, 2, 3)]
    counts = [sum(len(c["samples"]) for m in p["models"] for c in m["cases"]) for p in parts]
    assert sum(counts) == 2 * 8 * 3 and max(counts) - min(counts) <= 2  # 48 units, balanced
    assert {m["part"]["fingerprint"] for p in parts for m in p["models"]} == {
        parts[0]["models"][0]["part"]["fingerprint"]
    }
    assert requests % 2 == 0  # the unsharded run and the shards asked the same requests: half each

    merged_cache = toolselect("cache", "merge", "c-1", "c-2", "c-3", "--cache-dir", "c-merged", cwd=folder)
    assert merged_cache.code == 0 and "answers added from 3 caches" in merged_cache.out
    run = merge(
        sharded, "part-1.json", "part-2.json", "part-3.json",
        base_parts=("part-1.base.json", "part-2.base.json", "part-3.base.json"),
        extra=("--base-ref", repo.base, "--max-drop", "5", "--cache-dir", "c-merged", "-o", "merged.json",
               "--markdown", "merged.md"),
    )  # fmt: skip
    assert run.code == whole.code == 1, run.err
    for name in ("", ".base"):
        unsharded = without_timings((folder / f"whole{name}.json").read_text())
        merged = without_timings((folder / f"merged{name}.json").read_text())
        assert merged == unsharded, name
    assert any(m["flaky"] for m in json.loads((folder / "merged.json").read_text())["models"])
    # the comment: the diff, its p-values and the verdict, word for word
    assert (folder / "merged.md").read_text() == (folder / "whole.md").read_text()


def test_parts_that_are_not_one_whole_are_refused(sharded):
    folder = sharded[0]
    missing = merge(sharded, "part-1.json", "part-3.json", extra=("--cache-dir", "c-1"))
    assert missing.code == 3 and "the head lacks shard 2/3: its job failed" in missing.err
    twice = merge(sharded, "part-1.json", "part-1.json", "part-2.json", "part-3.json", extra=("--cache-dir", "c-1"))
    assert twice.code == 2 and "shard 1/3 of the head is given twice: part-1.json and part-1.json" in twice.err
    # a config that asks otherwise (another repeat) is another plan
    other = merge(sharded, "part-1.json", "part-2.json", "part-3.json", extra=("--cache-dir", "c-1", "--repeat", "2"))
    assert other.code == 2 and "part-1.json is a part of another plan" in other.err
    # a part of another run: shard 2 of a run with one sample per case
    env = {"OPENAI_API_KEY": KEY}
    with FakeModelAPI(shuffled_script()) as api:
        env["OPENAI_BASE_URL"] = api.url + "/v1"
        stranger = toolselect(
            "eval", "--shard", "2/3", "--repeat", "1", "--json", "stranger.json", "--cache-dir", "c-x", cwd=folder,
            env=env,
        )  # fmt: skip
        assert stranger.code == 0, stranger.err
    mixed = merge(sharded, "part-1.json", "stranger.json", "part-3.json", extra=("--cache-dir", "c-1"))
    assert mixed.code == 2 and "stranger.json (shard 2/3, plan" in mixed.err and "is not of the same plan" in mixed.err
    # every part, but an answer the merged cache lacks: the shard that should have asked is named
    unmerged = merge(sharded, "part-1.json", "part-2.json", "part-3.json", extra=("--cache-dir", "c-1"))
    assert unmerged.code == 3 and "the head's shard 2/3, 3/3: 20 answered samples are not in the answer cache" in (
        unmerged.err
    )


def test_the_action_as_a_matrix_of_shards_and_a_merge_job(world, tmp_path):
    """Three matrix jobs (inputs shard, shards), each with a fresh checkout and cache, upload their
    toolselect-report/; the merge job downloads them all (input merge) and posts the one comment —
    the comment a single job posts. A missing shard fails the merge with exit 3, naming it."""
    api, github = world
    repo = make_repo(tmp_path)
    event = pull_request_event(repo)
    register_pull(github, repo)
    report, cache = repo.path / "toolselect-report", repo.path / "evals" / ".toolselect-cache"

    GATE = {"max-drop": "5", "suggest": "off"}

    def fresh() -> None:  # a new job: a clean checkout, the cache restored from the default branch (empty)
        shutil.rmtree(report, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)

    # suggest off: the merge is compared with one job's comment, and asks nothing (test_suggest.py tries rewrites)
    single = run_action(repo.path, tmp_path, inputs=GATE, event=event, event_name="pull_request",
                        api=api, github=github)  # fmt: skip
    assert single.code == 1, single.stderr + single.stdout
    [comment] = github.comments_on(7)
    expected = comment["body"]
    github.comments.clear()

    downloads = tmp_path / "downloads"
    for i in (1, 2, 3):
        fresh()
        job = run_action(repo.path, tmp_path, inputs={"max-drop": "5", "shard": str(i), "shards": "3"}, event=event,
                         event_name="pull_request", api=api, github=github)  # fmt: skip
        assert job.code == 0, job.stderr + job.stdout  # a shard gives no verdict
        assert job.outputs["report"] == "toolselect-report/part.json"
        assert (report / "part.json").exists() and (report / "part.base.json").exists()
        assert any((report / "cache").rglob("*.json"))
        shutil.copytree(report, downloads / f"toolselect-part-{i}")
    assert not github.comments  # shards post nothing

    fresh()
    shutil.copytree(downloads, repo.path / "parts")
    requests = api.requests
    merged = run_action(repo.path, tmp_path, inputs={**GATE, "merge": "parts"}, event=event,
                        event_name="pull_request", api=api, github=github)  # fmt: skip
    assert merged.code == 1, merged.stderr + merged.stdout
    assert api.requests == requests  # the merge asks nothing: the shards' answers are in their artifacts
    [posted] = github.comments_on(7)
    assert posted["body"] == expected
    assert merged.outputs["passed"] == "false" and merged.outputs["accuracy-delta"] == single.outputs["accuracy-delta"]

    fresh()
    shutil.rmtree(repo.path / "parts" / "toolselect-part-2")
    broken = run_action(repo.path, tmp_path, inputs={"merge": "parts"}, event=event, event_name="pull_request",
                        api=api, github=github)  # fmt: skip
    assert broken.code == 3 and "the head lacks shard 2/3" in broken.stdout + broken.stderr


def test_provider_errors_in_a_shard_merge_as_they_were(tmp_path):
    """A sample that failed at the provider (within max_error_rate) is never cached: the merge takes
    it from its part, so the merged report is still the unsharded one — not a missing answer."""
    script = dict(shuffled_script(), faults=[{"match": "Thanks, that's all!", "status": 500}])
    with FakeModelAPI(script) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1"}
        repo = make_repo(tmp_path)
        folder = repo.path / "evals"
        flags = ["--max-retries", "0", "--max-error-rate", "0.2", "--min-accuracy", "0"]
        whole = toolselect("eval", *flags, "--json", "whole.json", "--cache-dir", "c-whole", cwd=folder, env=env)
        assert whole.code == 0, whole.err
        for i in (1, 2):
            shard = toolselect(
                "eval", *flags, "--shard", f"{i}/2", "--json", f"part-{i}.json", "--cache-dir", f"c-{i}", cwd=folder,
                env=env,
            )  # fmt: skip
            assert shard.code == 0, shard.err
        merged_cache = toolselect("cache", "merge", "c-1", "c-2", "--cache-dir", "c-m", cwd=folder)
        assert merged_cache.code == 0
        run = toolselect(
            "merge", "part-1.json", "part-2.json", *flags, "--cache-dir", "c-m", "-o", "merged.json", cwd=folder,
            env=env | {"OPENAI_API_KEY": ""},
        )  # fmt: skip
    assert run.code == 0, run.err
    merged = without_timings((folder / "merged.json").read_text())
    assert merged == without_timings((folder / "whole.json").read_text())
    assert merged["counts"]["outcomes"]["ERROR"] == 1
