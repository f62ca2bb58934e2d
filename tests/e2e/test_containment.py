"""Code from a pull request stays contained (issue 23): each attack reproduced the way it was found —
the Action's container step as GitHub runs it (root under tini, over a checkout of the runner's
user), or the `runner: host` step as the runner runs a `shell: bash` step — with a control that
shows the probe works and the secret was in reach of the arrangement the fix removed."""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.e2e.contained import (
    PROBE,
    PYTHON,
    holding,
    host_step,
    job,
    probe_as,
    probes,
    run_in_container,
    run_on_host,
)
from tests.e2e.harness import CASES, KEY, SCRIPT, Repo, git, pull_request_event, run_action
from tests.e2e.harness import TOOLS as ACTION_TOOLS
from tests.e2e.harness import commit_repo as commit
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
            pr = retriever == "command"  # the other runs on a push: the head alone, its stress test too
            run = run_in_container(
                world,
                j,
                repo,
                inputs={k: v for k, v in keys.items() if k != "ACTIONS_RUNTIME_TOKEN"} | {"stress-test": "always"},
                env={"ACTIONS_RUNTIME_TOKEN": keys["ACTIONS_RUNTIME_TOKEN"]},
                event_name="pull_request" if pr else "push",
            )
            assert run.code == 0, run.stdout + run.stderr
            seen = probes(out)
            roles = {p["role"] for p in seen}
            part = "retriever" if retriever == "command" else "embeddings"
            assert roles == {"setup", "server", "picker", part}, roles
            servers = [p for p in seen if p["role"] == "server"]
            # the head's stdio server, the base's started over HTTP, the neighbour servers (head and base)
            assert len(servers) >= (5 if pr else 2)
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
        FakeGitHub({token: "github-actions[bot]"}) as github,
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

        # the control: the probe finds them in an environment that holds them, as the step's bash did
        # (on a machine that allows a PID namespace, the PR's programs no longer even see that bash)
        inputs_env = {"INPUT_OPENAI-API-KEY": key, "INPUT_GITHUB-TOKEN": token, "INPUT_OPENAI-BASE-URL": inputs[
            "openai-base-url"]}  # fmt: skip
        with holding(inputs_env):
            found = {name for _, name in probe_as(None, secrets_file, out)["found"]}
        assert found == {"key", "token", "base-url-token"}, found
        for old in out.glob("*.json"):
            old.unlink()
        argv, env = host_step(inputs, Path(sys.prefix), tmp_path)
        done = run_action(
            repo.path, tmp_path, inputs=inputs, event=pull_request_event(repo), event_name="pull_request",
            api=api, github=github, argv=argv, env=env,
        )  # fmt: skip
        assert done.code in (0, 1), done.stdout + done.stderr
        after = probes(out)
        assert {p["role"] for p in after} == {"setup", "server"}
        for p in after:
            assert p["found"] == [] and p["read"] > 1, p
        assert api.requests > 0 and github.comments_on(7)  # the keys and the token still did their work


def test_a_package_the_pr_commits_is_never_imported_by_toolselect(world, tmp_path):
    """A PR that commits `toolselect/__init__.py` (or `yaml.py`, …) at the working directory: `python
    -m` puts the current directory first on sys.path, so the re-executed Action imported it — with the
    descriptor of the keys open. -P keeps the checkout off toolselect's path."""
    from tests.e2e.harness import make_repo

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
            run = run_on_host(world, j, repo, {"provider": "bm25"})
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


PLANT = r"""#!/bin/sh
# What a PR's setup plants for a later git command of toolselect's (or of a later step): a hook,
# hooksPath, fsmonitor, a smudge filter, HOME's git config; and what it writes into the runner's file
# commands. Each attempt that worked is recorded in $1/planted.
out="$1"; home="$2"; shift 2
common="$(git rev-parse --git-common-dir)"
mkdir -p "$out/evil-hooks"
hook="#!/bin/sh
echo \"\$0 \$(id -u)\" >> $out/ran"
try() { if sh -c "$2" 2>/dev/null; then echo "$1" >> "$out/planted"; fi; }
try hook "printf '%s\n' '$hook' > '$common/hooks/post-checkout' && chmod +x '$common/hooks/post-checkout'"
printf '%s\n' "$hook" > "$out/evil-hooks/post-checkout"; chmod +x "$out/evil-hooks/post-checkout"
try hooksPath "git config core.hooksPath '$out/evil-hooks'"
try fsmonitor "git config core.fsmonitor '$out/evil-hooks/post-checkout'"
evil="$out/evil-hooks/post-checkout"
try filter "echo '* filter=evil' >> '$common/info/attributes' && git config filter.evil.smudge '$evil'"
try home "printf '[core]\n\tfsmonitor = $out/evil-hooks/post-checkout\n' >> '$home/.gitconfig'"
for f in "$@"; do
  try "file:$(basename "$f")" "echo BASH_ENV=$out/evil-hooks/post-checkout >> '$f'"
done
[ $# -gt 0 ] && try "new-file" "touch '$(dirname "$1")/set_env_planted'"
exit 0
"""


def planting_repo(root: Path, out: Path, targets: list[Path]) -> Repo:
    """`targets`: the job's HOME, then the file commands."""
    """A PR whose setup (head and base) runs PLANT, and a stress section, so that the base is used by
    the stress test too (its worktree used to be made after the head's code had run)."""
    args = " ".join(str(t) for t in targets)
    config = (
        f"server:\n  command: [{PYTHON}, probe.py, server, {out}/../secrets.json, {out}, tools.json, stdio]\n"
        f"  setup: sh plant.sh {out} {args}\n"
        "evals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"
        "stress:\n  sizes: [0, 1]\n  seeds: 1\n  bundled_pool: false\n  distractors: [neighbours.json]\n"
    )
    files = {
        "probe.py": PROBE.read_text(),
        "plant.sh": PLANT,
        "tools.json": json.dumps({"tools": TOOLS}),
        "neighbours.json": json.dumps({"tools": NEIGHBOURS}),
        "golden.jsonl": GOLDEN,
        "toolselect.yaml": config,
    }
    return commit(root, files, {"README.md": "head\n"})


def test_the_prs_programs_plant_nothing_for_toolselects_git_or_a_later_step(world):
    """Findings 3 and 7 (container): the PR's setup could plant .git/hooks/post-checkout (it owned .git)
    and the stress test's base `git worktree add`, made later as root, ran it; and it could append to
    GITHUB_ENV (BASH_ENV=…) for every later step. Now the repository's git data, the file commands and
    HOME are root's while the PR's programs run, the base is checked out before they start, and
    everything is given back afterwards."""
    with job() as j:
        out = j.out("plant")
        j.secrets({})
        runner = j.root / "runner"
        files = [runner / name for name in ("env", "path", "output", "summary")]
        runner.mkdir()
        for target in files:
            target.write_text("")
        targets = [j.root / "github-home", *files]
        repo = planting_repo(j.root, out, targets)
        j.give(repo.path, runner)
        (j.root / "github-home").mkdir(exist_ok=True)
        j.give(j.root / "github-home")
        # the control: as the checkout's owner, with nothing held, every plant works, and root's git
        # runs the hook it finds
        plant = ["setpriv", f"--reuid={j.uid}", f"--regid={j.uid}", "--clear-groups", "sh", "plant.sh", str(out)]
        home = {"HOME": str(j.root / "github-home"), "PATH": "/usr/bin:/bin"}
        subprocess.run([*plant, *map(str, targets)], cwd=repo.path, env=home, check=True)
        planted = set((out / "planted").read_text().split())
        assert planted >= {"hook", "hooksPath", "fsmonitor", "filter", "home", "file:env", "new-file"}, planted
        tree = j.root / "control-tree"
        git("-c", "safe.directory=*", "worktree", "add", "--detach", str(tree), repo.base, cwd=repo.path)
        assert (out / "ran").exists()
        for path in (out / "ran", out / "planted", runner / "set_env_planted", j.root / "github-home" / ".gitconfig"):
            path.unlink(missing_ok=True)
        repo = _recommit(j, repo, out, targets)  # a fresh checkout: the planted hook and config gone

        run = run_in_container(world, j, repo, inputs={"provider": "bm25"})
        assert run.code in (0, 1), run.stdout + run.stderr
        assert run.report("stress.base.json")  # the stress test's base ran, in the worktree made first
        assert not (out / "planted").exists(), (out / "planted").read_text()  # setup ran (head and base)...
        assert len(probes(out, "server")) >= 2  # ... and so did the servers
        assert not (out / "ran").exists()
        assert "BASH_ENV" not in (runner / "env").read_text() and not (runner / "set_env_planted").exists()
        for path in (repo.path / ".git", repo.path / ".git" / "config", runner, runner / "env", j.root / "github-home"):
            assert path.stat().st_uid == j.uid, path  # given back: the runner's later steps use them
        assert run.outputs["passed"]  # toolselect's own file commands still arrived


def _recommit(j, repo: Repo, out: Path, targets: list[Path]) -> Repo:
    shutil.rmtree(repo.path)
    return planting_repo(j.root, out, targets)


def test_no_program_of_the_pr_starts_while_the_job_token_is_persisted(world):
    """Finding 5: actions/checkout's persist-credentials leaves the token where a setup reads it with
    `git config --list` (v4/v5: an extraheader in .git/config; v6: a file under RUNNER_TEMP that an
    includeIf brings in). Then no program of the PR starts: the run stops, naming the fix. A run that
    starts none (a tools.json and bm25) goes on."""
    token = "ghs_" + secrets.token_hex(12)
    header = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()
    for style in ("v5", "v6"):
        with job() as j:
            out = j.out()
            secrets_file = j.secrets({"token": header.split()[-1]})
            repo = host_repo(j.root, secrets_file, out)
            if style == "v5":
                git("config", "http.https://github.com/.extraheader", header, cwd=repo.path)
            else:
                stored = j.root / "runner-temp" / f"git-credentials-{secrets.token_hex(4)}.config"
                stored.parent.mkdir()
                stored.write_text(f'[http "https://github.com/"]\n\textraheader = {header}\n')
                git("config", f"includeIf.gitdir:{repo.path}/.git.path", str(stored), cwd=repo.path)
                git("config", f"includeIf.gitdir:{repo.path}/.git/worktrees/*.path", str(stored), cwd=repo.path)
                j.give(stored.parent)
            j.give(repo.path)
            # the control: the checkout's owner reads the token with git config --list
            listed = subprocess.run(
                ["setpriv", f"--reuid={j.uid}", f"--regid={j.uid}", "--clear-groups", "git", "-c",
                 "safe.directory=*", "config", "--list"],
                cwd=repo.path, capture_output=True, text=True, check=True,
            )  # fmt: skip
            assert header in listed.stdout, style
            run = run_in_container(world, j, repo, inputs={"provider": "bm25"})
            assert run.code == 2, run.stdout + run.stderr
            assert "the checkout's git config holds the job's token (http.https://github.com/.extraheader" in run.stdout
            assert "set `persist-credentials: false` on actions/checkout" in run.stdout
            assert header.split()[-1] not in run.stdout + run.summary
            assert probes(out) == []  # not one program of the PR started
            # a run that starts none of them goes on
            config = repo.path / "toolselect.yaml"
            config.write_text(
                "tools_file: tools.json\n" + config.read_text().split("evals:", 1)[1].join(["evals:", ""])
            )
            j.give(config)
            quiet = run_in_container(world, j, repo, inputs={"provider": "bm25"}, event_name="push")
            assert quiet.code == 0, quiet.stdout + quiet.stderr


def test_on_the_host_toolselects_git_runs_nothing_the_pr_planted(world, tmp_path):
    """Finding 3 (runner: host): the PR's programs, the job's own user, can plant a hook, hooksPath,
    fsmonitor and a filter (the control: they did); toolselect's git made the base's worktree before
    they ran, and after they ran it only removes it, with hooks and the fsmonitor off."""
    out = tmp_path / "plant"
    out.mkdir()
    (tmp_path / "secrets.json").write_text("{}")
    home = tmp_path / "home"
    home.mkdir()
    repo = planting_repo(tmp_path, out, [home])
    api, github = world
    inputs = {"working-directory": ".", "runner": "host", "provider": "bm25"}
    argv, env = host_step(inputs, Path(sys.prefix), tmp_path)
    run = run_action(
        repo.path, tmp_path, inputs=inputs, event=pull_request_event(repo), event_name="pull_request", api=api,
        github=github, argv=argv, env={**env, "HOME": str(home)},
    )  # fmt: skip
    assert run.code in (0, 1), run.stdout + run.stderr
    assert {"hook", "hooksPath", "fsmonitor", "filter", "home"} <= set((out / "planted").read_text().split())
    assert run.report("stress.base.json")
    assert not (out / "ran").exists()


def private_action(tmp: Path) -> Path:
    """This action's own files as `runner: host` has them — a checkout of the action and a virtualenv
    pointing at its src/, both the job's user's — here a copy, so the PR may rewrite it."""
    import shutil as sh
    import sysconfig

    action = tmp / "action"
    sh.copytree(ROOT / "src", action / "src", ignore=sh.ignore_patterns("__pycache__"))
    venv = tmp / "host-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    # the action's src first, then the libraries of this test run's environment
    (site / "toolselect-action.pth").write_text(f"{action / 'src'}\n{sysconfig.get_paths()['purelib']}\n")
    return venv


STEAL = """import pathlib, sys
pathlib.Path({marker!r}).write_text("ran " + repr(sys.argv))
def make_client(url, token):
    pathlib.Path({marker!r}).write_text("token " + token)
    raise SystemExit(0)
"""


def test_on_the_host_code_the_pr_rewrites_never_runs_in_toolselect(world, tmp_path):
    """Finding 4 (runner: host): the PR's setup, the job's user, rewrites toolselect's own source (the
    action's checkout); the module that posts the comment, imported only after the setup ran, would
    have received the token. toolselect loaded all of itself before the setup started, and loads
    nothing changed since."""
    venv = private_action(tmp_path)
    target = tmp_path / "action" / "src" / "toolselect" / "github" / "comment.py"
    marker = tmp_path / "stolen"
    (tmp_path / "steal.py").write_text(STEAL.format(marker=str(marker)))
    out = tmp_path / "probes"
    out.mkdir()
    (tmp_path / "secrets.json").write_text("{}")
    repo = host_repo(tmp_path, tmp_path / "secrets.json", out, setup=f"cp {tmp_path / 'steal.py'} {target}")
    api, github = world
    inputs = {"working-directory": ".", "runner": "host", "openai-api-key": KEY, "openai-base-url": f"{api.url}/v1"}
    argv, env = host_step(inputs, venv, tmp_path)
    run = run_action(
        repo.path, tmp_path, inputs=inputs, event=pull_request_event(repo), event_name="pull_request", api=api,
        github=github, argv=argv, env=env,
    )  # fmt: skip
    assert run.code in (0, 1), run.stdout + run.stderr
    assert "STEAL" not in target.read_text() and "make_client" in target.read_text()  # the setup did rewrite it
    assert not marker.exists()
    assert github.comments_on(7) and run.outputs["comment-url"], run.stdout + run.stderr
    # the control: the rewritten module does run when it is imported
    subprocess.run([str(venv / "bin" / "python"), "-c", "import toolselect.github.comment"], check=False)
    assert marker.read_text().startswith("ran")


LATE = r"""
import os, sys, pathlib, importlib
root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root))
from toolselect import frozen
frozen.freeze()
# what a program of the pull request does next, as the same user
(root / "changed.py").write_text("X = 'changed'\n")
(root / "added.py").write_text("X = 'added'\n")
os.rename(root / "pkg", root / "pkg-old")
(root / "elsewhere" / "pkg").rename(root / "pkg")  # an old folder put in place
os.symlink(root / "elsewhere" / "linked", root / "linked")
results = {}
for name in ("fine", "changed", "added", "pkg.mod", "linked.mod", "json.tool", "_codecs_jp"):
    try:
        module = importlib.import_module(name)
        results[name] = getattr(module, "X", "compiled " + module.__file__ if name == "_codecs_jp" else "stdlib")
    except ImportError as exc:
        results[name] = "refused: " + str(exc)
print(repr(results))
"""


def test_after_the_freeze_only_unchanged_code_loads(tmp_path):
    """The loader's rules, in a process of its own: an unchanged module loads; a changed or added file,
    a folder put in place, a link, are refused (never run); the standard library loads as usual."""
    root = tmp_path / "path"
    for name, text in {
        "fine.py": "X = 'fine'\n",
        "changed.py": "X = 'original'\n",
        "pkg/__init__.py": "",
        "pkg/mod.py": "X = 'pkg'\n",
        "elsewhere/pkg/__init__.py": "",
        "elsewhere/pkg/mod.py": "X = 'planted folder'\n",
        "elsewhere/linked/__init__.py": "",
        "elsewhere/linked/mod.py": "X = 'linked'\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    time.sleep(0.05)
    done = subprocess.run(
        [sys.executable, "-P", "-B", "-c", LATE, str(root)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    results = eval(done.stdout)  # our own repr
    assert results["fine"] == "fine" and results["json.tool"] == "stdlib"
    assert results["_codecs_jp"].startswith("compiled /proc/self/fd/")  # mapped through the descriptor it checked
    for name, why in (("changed", "it changed"), ("added", "it changed"), ("pkg.mod", "its folder pkg was put there"),
                      ("linked.mod", "can't be read safely")):  # fmt: skip
        assert results[name].startswith("refused: ") and why in results[name], (name, results[name])


def test_the_report_folder_holds_only_what_this_run_wrote(world):
    """Finding 9: toolselect-report/ kept the links the PR committed (report.json to a file outside:
    written through, as root) or its setup made after the folder was checked (to the runner's files):
    actions/upload-artifact follows them into a public artifact. Now the folder is made anew once
    the PR's programs are stopped, holds regular files only, and no write goes through a link."""
    with job() as j:
        out = j.out()
        secrets_file = j.secrets({})
        outside = j.root / "outside.txt"
        outside.write_text("the runner's file\n")
        repo = host_repo(j.root, secrets_file, out, setup="ln -s ../../runner toolselect-report/runner-files")
        report = repo.path / "toolselect-report"
        report.mkdir()
        (report / "report.json").symlink_to(outside)
        (report / "comment.md").symlink_to(j.root / "runner")
        git("add", "-A", cwd=repo.path)
        git("commit", "-qm", "a report folder of links", cwd=repo.path)
        assert os.readlink(report / "report.json") == str(outside)  # the control: the links are there
        run = run_in_container(world, j, repo, inputs={"provider": "bm25"}, event_name="push")
        assert run.code in (0, 1), run.stdout + run.stderr
        assert outside.read_text() == "the runner's file\n"  # never written through
        left = sorted(p.name for p in report.iterdir())
        assert left == ["comment.md", "meta.json", "report.html", "report.json"], left
        assert all(p.is_file() and not p.is_symlink() for p in report.iterdir())
        assert json.loads((report / "report.json").read_text())["surface"]["tools"]


def test_as_root_toolselect_changes_nothing_outside_the_workspace(world):
    """Finding 11: `server.cwd: /anywhere` with a setup made root hand that whole tree to the
    checkout's owner (/usr/local, a host path mounted in). Now nothing outside the workspace (and the
    worktrees toolselect made) changes hands."""
    with job() as j:
        out = j.out()
        secrets_file = j.secrets({})
        elsewhere = j.root / "usr-local"
        (elsewhere / "bin").mkdir(parents=True)
        (elsewhere / "bin" / "tool").write_text("#!/bin/sh\n")
        shutil.copy(PROBE, elsewhere / "probe.py")
        (elsewhere / "tools.json").write_text(json.dumps({"tools": ACTION_TOOLS}))
        repo = host_repo(j.root, secrets_file, out)
        config = repo.path / "toolselect.yaml"
        config.write_text(config.read_text().replace("  setup:", f"  cwd: {elsewhere}\n  setup:"))
        run = run_in_container(world, j, repo, inputs={"provider": "bm25", "openai-api-key": ""}, event_name="push")
        assert run.code in (0, 1), run.stdout + run.stderr
        assert probes(out, "setup")  # the setup ran there, as the checkout's owner
        assert {p.stat().st_uid for p in (elsewhere, *elsewhere.rglob("*"))} == {0}


def test_a_link_planted_in_the_answer_cache_is_never_written_through(world):
    """The answer cache is written as root while the PR's programs could have put a link in it (a
    folder of answers pointing anywhere the container sees): no answer goes through one. Caching
    stops, saying why, and the run goes on."""
    with job() as j:
        out = j.out()
        secrets_file = j.secrets({})
        elsewhere = j.root / "elsewhere"
        elsewhere.mkdir()
        j.give(elsewhere)
        # the setup links every folder the answers can go to (v1/00 … v1/ff) to a folder of its choosing
        plant = (
            "mkdir -p .toolselect-cache/v1 && for i in $(seq 0 255); do "
            f"ln -s {elsewhere} .toolselect-cache/v1/$(printf %02x $i); done"
        )
        repo = host_repo(j.root, secrets_file, out, setup=plant)
        (repo.path / ".gitignore").write_text(".toolselect-cache/\n")
        git("add", "-A", cwd=repo.path)
        git("commit", "-qm", "ignore the cache", cwd=repo.path)
        run = run_in_container(world, j, repo, event_name="push")
        assert run.code in (0, 1), run.stdout + run.stderr
        assert list(elsewhere.iterdir()) == []
        assert "answers are no longer cached" in run.stdout and "is a link" in run.stdout


def test_no_text_of_the_pr_becomes_a_workflow_command(world, tmp_path):
    """Finding 12: the `server setup: …` line, tool names and texts, lint messages and the model's
    words reach the job log; a line break (or wrapping) put the PR's `::error file=…`, `::add-mask::`
    or `::stop-commands::` at a line start, where the runner executed it. Now everything is printed
    inside a `::stop-commands::<random token>` stretch, resumed only for toolselect's own commands."""
    from tests.e2e.contained import commands_run

    tools = [dict(t) for t in ACTION_TOOLS]
    tools[0]["description"] += "\n::error file=README.md,line=1,title=pwned::pwned by a description"
    tools.append({"name": "x\n::warning title=pwned::pwned by a name", "description": "d", "inputSchema": {}})
    out = tmp_path / "probes"
    out.mkdir()
    (tmp_path / "secrets.json").write_text("{}")
    setup = json.dumps("true '\n::error title=pwned::pwned by a setup'")  # a YAML string with a line break
    repo = host_repo(tmp_path, tmp_path / "secrets.json", out, setup=setup)
    (repo.path / "tools.json").write_text(json.dumps({"tools": tools}))
    api, github = world
    api.script["default"] = {"text": "sure\n::error title=pwned::pwned by the model\n::stop-commands::mine"}
    run = run_action(
        repo.path, tmp_path, inputs={"working-directory": ".", "openai-base-url": f"{api.url}/v1"},
        event=pull_request_event(repo), event_name="pull_request", api=api, github=github,
    )  # fmt: skip
    assert run.code in (0, 1), run.stdout + run.stderr
    log = run.stdout + run.stderr

    def injected(commands: list[str]) -> list[str]:  # a command of the PR's own: its properties say so
        return [c for c in commands if "pwned" in c[2:].split("::", 1)[0]]

    executed = commands_run(log)
    assert executed and not injected(executed), injected(executed)
    assert any(c.startswith("::add-mask::") for c in executed)  # toolselect's own still run
    # the control: the same log without toolselect's stop and resume runs the PR's commands
    ours = re.compile(r"::(stop-commands::[0-9a-f]{32}|[0-9a-f]{32}::)")
    bare = "\n".join(line for line in log.splitlines() if not ours.fullmatch(line))
    pwned = injected(commands_run(bare))
    assert any("pwned by a setup" in c for c in pwned) and any("pwned by a name" in c for c in pwned), pwned


def test_the_bases_programs_work_in_their_own_checkout(world):
    """The base's checkout is root's while the head's programs run, and the base's own — its setup,
    its server, its picker — during its turn: a picker that writes beside itself works on both sides."""
    picker = (
        "import json, sys\njson.load(sys.stdin)\nopen('picks.log', 'a').write('x\\n')\n"
        "print(json.dumps({'tool': 'get_weather', 'args': {}}))\n"
    )
    config = (
        f"tools_file: tools.json\nevals:\n  provider: command\n  command: [{PYTHON}, pick.py]\n"
        "  golden: golden.jsonl\n  min_accuracy: 0\n"
    )
    with job() as j:
        files = {"pick.py": picker, "tools.json": json.dumps({"tools": TOOLS}), "golden.jsonl": GOLDEN}
        repo = commit(j.root, {**files, "toolselect.yaml": config}, {"README.md": "head\n"})
        run = run_in_container(world, j, repo)
        assert run.code in (0, 1), run.stdout + run.stderr
        base = run.report("base.json")
        assert {s["outcome"] for c in base["cases"] for s in c["samples"]} <= {"PASS", "SEL-WRONG"}, base["cases"]
        assert (repo.path / "picks.log").read_text().count("x") == 2  # the head's two picks


@pytest.mark.parametrize("checkout", ["full", "shallow"])
def test_nothing_is_left_root_owned_when_the_run_fails(world, checkout):
    """The runner's user must be able to delete its checkout after any exit: what toolselect wrote
    as root (the base's worktree bookkeeping, and with fetch-depth: 1 the base's fetch, in .git) is
    given back on an exit 3 — a head whose server can't start — too, not only at a normal end."""
    config = "server:\n  command: [no-such-mcp-server]\nevals:\n  golden: golden.jsonl\n"
    with job() as j:
        repo = commit(j.root, {"toolselect.yaml": config, "golden.jsonl": GOLDEN}, {"README.md": "head\n"})
        if checkout == "shallow":  # actions/checkout's fetch-depth: 1: the base is fetched from origin
            origin = j.root / "origin.git"
            git("clone", "-q", "--bare", str(repo.path), str(origin), cwd=j.root)
            shutil.rmtree(repo.path)
            git("clone", "-q", "--depth", "1", f"file://{origin}", str(repo.path), cwd=j.root)
            j.give(origin)
        run = run_in_container(world, j, repo, inputs={"provider": "bm25"})
        assert run.code == 3, run.stdout + run.stderr
        assert "no-such-mcp-server not found" in run.stdout
        left = [p for p in (repo.path, *repo.path.rglob("*")) if p.lstat().st_uid == 0]
        assert left == [], left[:10]
