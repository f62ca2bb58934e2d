"""Pull requests in the image: a TypeScript server that `setup` builds in the head's checkout and in
the base's worktree, judged by the fake model API, posted to the fake GitHub; a shallow checkout
whose base toolselect fetches (and one whose fetch fails); a job cancelled mid-run. After each, the
runner's user owns every file of its checkout and no container is left."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TESTS
from tests.container.step import CA_ENV, Running, container_step, give, root_owned
from tests.e2e.harness import (
    BASE_FORECAST,
    GOLDEN,
    KEY,
    SCRIPT,
    TOKEN,
    TOOLS,
    Repo,
    commit_repo,
    fake_model_config,
    git,
    pull_request_event,
    register_pull,
    tools_ts,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

pytestmark = pytest.mark.xdist_group("container")


@pytest.fixture
def world() -> Iterator[tuple[FakeModelAPI, FakeGitHub]]:
    with FakeModelAPI(SCRIPT) as api, FakeGitHub({TOKEN: "github-actions[bot]"}) as github:
        yield api, github


@pytest.fixture
def job(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def pr_inputs(api: FakeModelAPI, **more: str) -> dict[str, str]:
    """What a workflow's `with:` gives: the key its provider takes, the job's token."""
    return {
        "working-directory": ".",
        "openai-api-key": KEY,
        "openai-base-url": api.url + "/v1",
        "github-token": TOKEN,
        **more,
    }


def typescript_pull(job: Path) -> tuple[Repo, str]:
    """A TypeScript server on the official SDK (node_modules and build/ not committed), built by
    `npm ci && npm run build`; the head rewords get_forecast in a template string over two lines."""
    ts = TESTS / "data" / "servers" / "ts"
    project = {p.relative_to(ts).as_posix(): p.read_text() for p in ts.rglob("*") if p.is_file()}
    server = (
        "server:\n  command: [node, build/index.js]\n"
        "  setup: npm ci --no-audit --no-fund && npm run build\n  setup_timeout_s: 300\n"
    )
    head_ts = tools_ts("Daily outlook\n      for a city.")
    base = {
        **project,
        "src/tools.ts": tools_ts(BASE_FORECAST),
        "golden.jsonl": GOLDEN,
        "toolselect.yaml": fake_model_config(server),
    }
    return commit_repo(job, base, {"src/tools.ts": head_ts}, ignore="node_modules/\nbuild/\n"), head_ts


def test_a_pull_request_on_a_typescript_server_comments_and_reviews(image: str, job: Path, world):
    """The base's worktree is built by the same setup, both sides are judged, the gate fails on the
    two flipped cases, and the PR gets one sticky comment and one review on the reworded lines."""
    api, github = world
    repo, head_ts = typescript_pull(job)
    register_pull(github, repo)
    give(repo.path)
    env = {"GITHUB_API_URL": github.url, "npm_config_update_notifier": "false", **CA_ENV}
    step = container_step(
        image, job, "pull_request", pull_request_event(repo), pr_inputs(api, **{"max-drop": "5"}), env
    )
    assert step.code == 1, step.log[-6000:]  # two cases flipped: −25 pt, more than max-drop 5
    assert "base: server setup done in" in step.log  # the base's worktree was built too
    assert step.outputs["passed"] == "false" and step.outputs["accuracy"] == "0.7500", step.outputs
    [comment] = github.comments_on(7)
    assert comment["user"]["login"] == "github-actions[bot]"
    first = comment["body"].splitlines()
    assert any("100.0%" in line and "→ 75.0%" in line for line in first[:3]), first[:3]
    assert f"-{BASE_FORECAST}" in comment["body"] and "+Daily outlook" in comment["body"]
    assert step.outputs["comment-url"] == comment["html_url"]
    [review] = github.reviews
    assert review["commit_id"] == repo.head and step.outputs["review-url"] == review["html_url"]
    [inline] = github.review_comments_on(7)
    start = next(i for i, x in enumerate(head_ts.splitlines(), start=1) if "Daily outlook" in x)
    assert (inline["path"], inline["start_line"], inline["line"]) == ("src/tools.ts", start, start + 1)
    assert root_owned(repo.path) == []


def shallow(repo: Repo, job: Path, origin_url: str) -> None:
    """actions/checkout with fetch-depth: 1: only the head is here, origin holds the rest."""
    bare = job / "origin.git"
    git("clone", "-q", "--bare", str(repo.path), str(bare), cwd=job)
    subprocess.run(["rm", "-rf", str(repo.path)], check=True)
    git("clone", "-q", "--depth", "1", f"file://{bare}", str(repo.path), cwd=job)
    git("remote", "set-url", "origin", origin_url, cwd=repo.path)
    give(repo.path)


@pytest.fixture
def git_daemon(job: Path) -> Iterator[str]:
    """origin on the network, as github.com is to a checkout: `git daemon` over job/, on a free port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            f"--base-path={job}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(job),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"git://127.0.0.1:{port}/origin.git"
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def frozen_pull(job: Path) -> Repo:
    """A PR that rewords a description in a committed tools.json, judged offline (bm25)."""
    tools = [
        {"name": n, "description": d, "inputSchema": {"type": "object"}}
        for n, d in (("get_weather", "Current weather in a city."), ("get_forecast", "Forecast for a city."))
    ]
    config = "tools_file: tools.json\nevals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"
    head = [dict(tools[0]), dict(tools[1], description="Days ahead.")]
    cases = "".join(
        json.dumps({"id": f"c{i}", "question": q, "expected_tool": t}) + "\n"
        for i, (q, t) in enumerate((("Weather in Oslo now?", "get_weather"), ("Forecast for Rome?", "get_forecast")))
    )
    return commit_repo(
        job,
        {"tools.json": json.dumps({"tools": tools}), "golden.jsonl": cases, "toolselect.yaml": config},
        {"tools.json": json.dumps({"tools": head})},
    )


def test_a_shallow_checkout_fetches_its_base_and_hands_git_back(image: str, job: Path, git_daemon: str):
    """fetch-depth: 1 — toolselect fetches the base commit from origin as root; the runner's user
    still owns all of .git afterwards (it deletes the checkout at the job's end)."""
    repo = frozen_pull(job)
    shallow(repo, job, git_daemon)
    step = container_step(image, job, "pull_request", pull_request_event(repo), {"working-directory": "."})
    assert step.code in (0, 1), step.log[-6000:]
    assert step.outputs["base-accuracy"] == "1.0000", step.log[-3000:]  # the base was fetched and evaluated
    assert "no baseline" not in step.summary
    assert root_owned(repo.path) == []


def test_a_failed_base_fetch_is_an_infrastructure_failure_and_leaves_nothing_root_owned(image: str, job: Path):
    """origin can't be reached: exit 3 (never a pass for a comparison that did not run), and the
    half-done fetch in .git is the runner's user's."""
    repo = frozen_pull(job)
    shallow(repo, job, "git://127.0.0.1:9/origin.git")  # the discard port: nothing listens
    step = container_step(image, job, "pull_request", pull_request_event(repo), {"working-directory": "."})
    assert step.code == 3, step.log[-6000:]
    assert step.outputs.get("passed") != "true"
    assert root_owned(repo.path) == []


def test_a_cancelled_job_exits_130_keeps_its_answers_and_leaves_nothing_root_owned(image: str, job: Path):
    """GitHub cancels a job by signalling its container step: toolselect stops the server, keeps the
    answers it already has in the cache for the next run, and hands every file back."""
    with FakeModelAPI({**SCRIPT, "latency": 1.0}) as api, FakeGitHub({TOKEN: "github-actions[bot]"}) as github:
        files = {
            "tools.json": json.dumps({"tools": TOOLS}),
            "golden.jsonl": GOLDEN,
            "toolselect.yaml": fake_model_config("tools_file: tools.json\n"),
        }
        repo = commit_repo(job, files, {"README.md": "the weather server\n"})
        event = {"ref": "refs/heads/main", "after": repo.head}
        give(repo.path)
        running = Running(image, job, "push", event, pr_inputs(api, concurrency="1"), {"GITHUB_API_URL": github.url})
        while api.stats()["requests"] < 3:  # of 8 cases, one at a time, a second each
            assert running.proc.poll() is None, running.log.read_text()[-4000:]
            time.sleep(0.2)
        running.interrupt()
        step = running.wait(timeout=60)
    assert step.code == 130, step.log[-4000:]
    assert "Traceback" not in step.log
    cache = repo.path / ".toolselect-cache"
    assert cache.is_dir() and any(p.is_file() for p in cache.rglob("*")), "the answers already paid for are gone"
    assert root_owned(repo.path) == []
