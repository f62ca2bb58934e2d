"""Code from a pull request stays contained (issue 23): each attack reproduced the way it was found —
the Action's container step as GitHub runs it (root under tini, over a checkout of the runner's
user), or the `runner: host` step as the runner runs a `shell: bash` step — with a control that
shows the probe works and the secret was in reach of the arrangement the fix removed."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from tests.e2e.contained import (
    PROBE,
    PYTHON,
    commit,
    holding,
    host_step,
    job,
    probe_as,
    probes,
    run_in_container,
)
from tests.e2e.test_action import CASES, SCRIPT, Repo, pull_request_event, run_action
from tests.e2e.test_action import TOOLS as ACTION_TOOLS
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

TOOLS = [
    {"name": "get_weather", "description": "Current weather in a city.", "inputSchema": {"type": "object"}},
    {"name": "get_forecast", "description": "Forecast for a city.", "inputSchema": {"type": "object"}},
]
NEIGHBOURS = [
    {"name": f"crm_{i}", "description": f"CRM action {i}.", "inputSchema": {"type": "object"}} for i in range(3)
]
GOLDEN = "".join(
    json.dumps({"id": f"c{i}", "question": q, "expected_tool": t}) + "\n"
    for i, (q, t) in enumerate((("Weather in Oslo now?", "get_weather"), ("Forecast for Rome?", "get_forecast")))
)


def unique_secrets() -> dict[str, str]:
    """Keys only this test's processes hold (other tests' processes hold the shared constants)."""
    return {
        "openai-api-key": "sk-" + secrets.token_hex(12),
        "anthropic-api-key": "sk-ant-" + secrets.token_hex(12),
        "ACTIONS_RUNTIME_TOKEN": "rt-" + secrets.token_hex(12),
    }


def probe_repo(root, secrets_file, out, *, retriever: str):
    """A PR whose every program is the probe: the head's stdio server and its setup, the `command`
    picker, a neighbour server and the retriever of the stress test; the base's server is an HTTP
    one that `start` starts."""
    py = PYTHON
    probe = f"[{py}, probe.py, ROLE, {secrets_file}, {out}]"

    def argv(role: str, *more: str) -> str:
        return probe.replace("ROLE", role)[:-1] + "".join(f", {m}" for m in more) + "]"

    stress = (
        "stress:\n  sizes: [0, 2]\n  seeds: 1\n  bundled_pool: false\n"
        f"  distractors: [{{command: {argv('server', 'neighbours.json', 'stdio')}}}]\n"
        f"  retriever: {retriever}\n"
        f"  retriever_command: {argv({'command': 'retriever'}.get(retriever, 'embeddings'))}\n"
    )
    evals = f"evals:\n  provider: command\n  command: {argv('picker')}\n  golden: golden.jsonl\n  min_accuracy: 0\n"
    head = (
        f"server:\n  command: {argv('server', 'tools.json', 'stdio')}\n"
        f"  setup: {py} probe.py setup {secrets_file} {out}\n{evals}{stress}"
    )
    base = (
        f"server:\n  url: http://127.0.0.1:{{port}}/mcp\n  start: {py} probe.py server {secrets_file} {out} tools.json "
        f"http\n  env:\n    PORT: '{{port}}'\n{evals}{stress}"
    )
    files = {
        "probe.py": PROBE.read_text(),
        "tools.json": json.dumps({"tools": TOOLS}),
        "neighbours.json": json.dumps({"tools": NEIGHBOURS}),
        "golden.jsonl": GOLDEN,
    }
    return commit(root, {**files, "toolselect.yaml": base}, {"toolselect.yaml": head})


def test_no_program_of_the_pr_runs_as_root_or_reads_a_key(world):
    """Finding 1: the picker, the retriever and embeddings commands, a neighbour server, setup, start
    and the server all run as the checkout's owner, and none reads a key or the token from any
    process's environment — PID 1's included."""
    for retriever in ("command", "embeddings-command"):
        with job() as j:
            keys = unique_secrets()
            wanted = {"openai": keys["openai-api-key"], "anthropic": keys["anthropic-api-key"]}
            wanted["runtime-token"] = keys["ACTIONS_RUNTIME_TOKEN"]
            secrets_file, out = j.secrets(wanted), j.out()
            with holding({"INPUT_OPENAI-API-KEY": wanted["openai"]}):  # the control: PID 1 as it was
                assert probe_as(None, secrets_file, out)["found"], "a program run as root reads PID 1's keys"
                assert not probe_as(j.uid, secrets_file, out)["found"], "the checkout's owner reads none"
            repo = probe_repo(j.root, secrets_file, out, retriever=retriever)
            run = run_in_container(
                world,
                j,
                repo,
                inputs={k: v for k, v in keys.items() if k != "ACTIONS_RUNTIME_TOKEN"},
                env={"ACTIONS_RUNTIME_TOKEN": keys["ACTIONS_RUNTIME_TOKEN"]},
            )
            assert run.code == 0, run.stdout + run.stderr
            seen = probes(out)
            roles = {p["role"] for p in seen}
            part = "retriever" if retriever == "command" else "embeddings"
            assert roles == {"setup", "server", "picker", part}, roles
            servers = [p for p in seen if p["role"] == "server"]
            assert len(servers) >= 5  # head stdio, base over HTTP, neighbour servers (stress: head and base)
            for p in seen:
                assert (p["uid"], p["euid"]) == (j.uid, j.uid), p
                assert p["found"] == [], p
            assert any(p["read"] for p in seen)  # the probe did read environments: its own user's
            assert run.report("stress.json")["retrieval"]["retriever"] == retriever


def host_repo(root: Path, secrets_file: Path, out: Path, setup: str = "") -> Repo:
    """A PR evaluated on the job's machine: its server and its setup are the probe."""
    py = PYTHON
    server = (
        f"server:\n  command: [{py}, probe.py, server, {secrets_file}, {out}, tools.json, stdio]\n"
        f"  setup:\n    - {py} probe.py setup {secrets_file} {out}\n" + (f"    - {setup}\n" if setup else "")
    )
    config = f"{server}evals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n  min_accuracy: 0\n"
    golden = "".join(json.dumps({"id": n, "question": q, "expected_tool": t}) + "\n" for n, q, t, _ in CASES)
    files = {"probe.py": PROBE.read_text(), "tools.json": json.dumps({"tools": ACTION_TOOLS}), "golden.jsonl": golden}
    return commit(root, {**files, "toolselect.yaml": config}, {"README.md": "head\n"})


@contextmanager
def host_world(key: str, token: str) -> Iterator[tuple[FakeModelAPI, FakeGitHub]]:
    """The fake APIs with this test's own key and token (other tests' processes hold the shared ones)."""
    with (
        FakeModelAPI({**SCRIPT, "key": key}) as api,
        FakeGitHub({token: "github-actions[bot]"}, installation_tokens={token}) as github,
    ):
        yield api, github


def test_with_runner_host_no_process_the_pr_can_read_holds_an_input(tmp_path):
    """Finding 2: with `runner: host` the step's bash no longer stays alive as toolselect's parent with
    every INPUT_* in its environment, and no input — openai-base-url with a token in its path
    included — stays in toolselect's own."""
    key, token, path_token = "sk-" + secrets.token_hex(12), "ghs_" + secrets.token_hex(12), secrets.token_hex(12)
    with host_world(key, token) as (api, github):
        out = tmp_path / "probes"
        out.mkdir()
        secrets_file = tmp_path / "secrets.json"
        secrets_file.write_text(json.dumps({"key": key, "token": token, "base-url-token": path_token}))
        repo = host_repo(tmp_path, secrets_file, out)
        inputs = {
            "working-directory": ".",
            "runner": "host",
            "openai-api-key": key,
            "github-token": token,
            "openai-base-url": f"{api.url}/t/{path_token}/v1",
        }

        def step(run: str | None = None) -> tuple[int, list[dict]]:
            for old in out.glob("*.json"):
                old.unlink()
            argv, env = host_step(inputs, Path(sys.prefix), tmp_path, run)
            done = run_action(
                repo.path, tmp_path, inputs=inputs, event=pull_request_event(repo), event_name="pull_request",
                api=api, github=github, argv=argv, env=env,
            )  # fmt: skip
            assert done.code in (0, 1), done.stdout + done.stderr
            return done.code, probes(out)

        # the control: the step as it was, bash alive above toolselect with the inputs in its environment
        _, before = step('"$TOOLSELECT_HOST_ENV/bin/python" -P -m toolselect action\n')
        assert {name for p in before for _, name in p["found"]} == {"key", "token", "base-url-token"}, before
        _, after = step()
        assert {p["role"] for p in after} == {"setup", "server"}
        for p in after:
            assert p["found"] == [] and p["read"] > 1, p
        assert api.requests > 0 and github.comments_on(7)  # the keys and the token still did their work


def test_a_package_the_pr_commits_is_never_imported_by_toolselect(world, tmp_path):
    """A PR that commits `toolselect/__init__.py` (or `yaml.py`, …) at the working directory: `python
    -m` puts the current directory first on sys.path, so the re-executed Action imported it — with the
    descriptor of the keys open. -P keeps the checkout off toolselect's path."""
    from tests.e2e.test_action import make_repo

    repo = make_repo(tmp_path)
    marker = tmp_path / "imported"
    for folder in (repo.path, repo.path / "evals"):  # the workspace and the working directory
        (folder / "toolselect").mkdir()
        (folder / "toolselect" / "__init__.py").write_text(
            f"import os, pathlib\npathlib.Path({str(marker)!r}).write_text(str(os.listdir('/proc/self/fd')))\n"
        )
        (folder / "yaml.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('yaml')\n")
    # the control: -m without -P imports the committed package from the current directory
    subprocess.run([sys.executable, "-m", "toolselect", "--version"], cwd=repo.path / "evals", capture_output=True)
    assert marker.exists()
    marker.unlink()
    api, github = world
    run = run_action(
        repo.path, tmp_path, inputs={}, event=pull_request_event(repo), event_name="pull_request", api=api,
        github=github,
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    assert not marker.exists()
    assert github.comments_on(7)


def test_urls_with_a_secret_stay_out_of_the_prs_programs(tmp_path):
    """Finding 16: a token in a URL's path or query (a private index, a proxy with user info) never
    reaches the PR's programs — nor stays in toolselect's own environment on `runner: host` — unless
    the config passes it on purpose."""
    t = secrets.token_hex(12)
    job_env = {
        "PIP_INDEX_URL": f"https://idx.corp/t/{t}a/simple",
        "UV_INDEX_URL": f"https://idx.corp/simple?private_token={t}b",
        "GOPROXY": f"https://proxy.corp,https://u:{t}c@mirror.corp,direct",
        "NPM_CONFIG_REGISTRY": f"https://npm.corp/_t/{t}d/",
        "PIP_EXTRA_INDEX_URL": f"https://idx.corp/t/{t}e/simple",  # passed on purpose below
    }
    key, token = "sk-" + secrets.token_hex(12), "ghs_" + secrets.token_hex(12)
    with host_world(key, token) as (api, github):
        out = tmp_path / "probes"
        out.mkdir()
        secrets_file = tmp_path / "secrets.json"
        secrets_file.write_text(json.dumps(job_env))
        with holding(job_env):  # the control: the probe finds each of them where they are
            found = {name for _, name in probe_as(None, secrets_file, out)["found"]}
            assert found == set(job_env)
        repo = host_repo(tmp_path, secrets_file, out)
        config = repo.path / "toolselect.yaml"
        config.write_text(
            config.read_text().replace("evals:", "  env:\n    PIP_EXTRA_INDEX_URL: ${PIP_EXTRA_INDEX_URL}\nevals:")
        )
        inputs = {"working-directory": ".", "runner": "host", "openai-api-key": key, "github-token": token}
        inputs["openai-base-url"] = f"{api.url}/v1"
        argv, env = host_step(inputs, Path(sys.prefix), tmp_path)
        run = run_action(
            repo.path, tmp_path, inputs=inputs, event=None, event_name="push", api=api, github=github, argv=argv,
            env={**env, **job_env},
        )  # fmt: skip
        assert run.code in (0, 1), run.stdout + run.stderr
        seen = probes(out)
        assert {p["role"] for p in seen} == {"setup", "server"}
        for p in seen:
            assert {name for _, name in p["found"]} == {"PIP_EXTRA_INDEX_URL"}, p


@pytest.mark.parametrize("runner", ["container", "host"])
def test_nothing_the_pr_detaches_outlives_the_listing(world, runner, tmp_path):
    """Finding 6: a setsid, double-forked daemon from the setup and from the server — the one found kept
    rewriting toolselect-report/report.html after toolselect exited — is stopped once its command
    ends (setup) or the tools are listed (server), and nothing of it runs after the step."""
    from tests.e2e.contained import Job

    with job() if runner == "container" else nullcontext(Job(tmp_path, os.getuid())) as j:
        out = j.out()
        secrets_file = j.secrets({"nothing": secrets.token_hex(16)})
        repo = host_repo(j.root, secrets_file, out)
        config = repo.path / "toolselect.yaml"
        config.write_text(
            config.read_text().replace("evals:", "  env:\n    PROBE_DAEMON: toolselect-report/report.html\nevals:")
        )
        if runner == "container":
            run = run_in_container(world, j, repo, inputs={"provider": "bm25"})
        else:
            api, github = world
            inputs = {"working-directory": ".", "runner": "host", "provider": "bm25"}
            argv, env = host_step(inputs, Path(sys.prefix), j.root)
            run = run_action(
                repo.path, j.root, inputs=inputs, event=pull_request_event(repo), event_name="pull_request", api=api,
                github=github, argv=argv, env=env,
            )  # fmt: skip
        ended = time.time()
        assert run.code in (0, 1), run.stdout + run.stderr
        time.sleep(0.5)  # a daemon still alive would beat again, and write the page again
        beats = {p.name.split("-")[1]: p.read_text().split() for p in out.glob("daemon-*.beats")}
        assert set(beats) == {"setup", "server"}, beats  # the control: both daemons did start
        for role, times in beats.items():
            assert float(times[-1]) < ended, role
        assert "pwned" not in (repo.path / "toolselect-report" / "report.html").read_text()
        assert "left 1 process running in the background: stopped" in run.stdout
        assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _runs_probe(pid, out)]


def _runs_probe(pid: str, out: Path) -> bool:
    try:
        return str(out).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
