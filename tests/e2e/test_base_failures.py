"""A base that can't be evaluated is not a pass: the comparison did not run, so the run exits 3 and
says why (one line, what the base said folded, the likely fix) — on the command line and in the PR
comment. Only a base without a config (the PR that adds toolselect) is "no baseline". Real git,
real npm and tsc for the TypeScript server whose build/ is not committed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests.conftest import ROOT, toolselect
from tests.e2e.harness import (
    BASE_FORECAST,
    GOLDEN,
    HEAD_FORECAST,
    commit_repo,
    fake_model_config,
    git,
    make_repo,
    no_process_left,
    pull_request_event,
    register_pull,
    run_action,
    toolchain_env,
    tools_ts,
    tools_with,
)

TS = ROOT / "tests" / "data" / "servers" / "ts"
OFFLINE = "tools_file: tools.json\nevals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"


def test_a_misspelt_base_ref_exits_3_and_says_which_ref_was_meant(tmp_path):
    repo = commit_repo(
        tmp_path,
        {
            "tools.json": json.dumps({"tools": tools_with(BASE_FORECAST)}),
            "golden.jsonl": GOLDEN,
            "toolselect.yaml": OFFLINE,
        },
        {"tools.json": json.dumps({"tools": tools_with(HEAD_FORECAST)})},
    )
    git("checkout", "-qb", "feature", cwd=repo.path)
    run = toolselect("eval", "--base-ref", "mian", "--max-drop", "0", "--markdown", "c.md", cwd=repo.path)
    assert run.code == 3, run.out + run.err
    assert "PASSED" not in run.out
    assert (
        "no comparison: the base could not be evaluated: the base ref 'mian' is not a commit in this checkout "
        "(did you mean 'main'?)" in run.out
    )
    assert "FAILED  accuracy" in run.out and run.out.count("FAILED") == 1
    preview = (repo.path / "c.md").read_text()
    headline = preview.splitlines()[0]
    assert headline.startswith("### ❌ toolselect failed: no comparison: the base could not be evaluated")
    assert "- 💡 check the base ref (a branch, tag or commit)" in preview
    dry = toolselect("eval", "--base-ref", "mian", "--dry-run", cwd=repo.path)
    assert dry.code == 3 and "base: the comparison was not run" in dry.out


def test_a_base_without_a_config_is_still_no_baseline_and_passes_on_the_head(tmp_path):
    """The pull request that adds toolselect: nothing to compare with, by design."""
    repo = commit_repo(
        tmp_path,
        {"tools.json": json.dumps({"tools": tools_with(BASE_FORECAST)})},
        {"golden.jsonl": GOLDEN, "toolselect.yaml": OFFLINE},
    )
    run = toolselect("eval", "--base-ref", "HEAD~1", "--max-drop", "0", cwd=repo.path)
    assert run.code == 0, run.out + run.err
    assert "no baseline: the base commit has no toolselect.yaml" in run.out
    assert "PASSED  accuracy" in run.out and "no comparison ran" in run.out


def test_a_typescript_base_whose_build_is_not_committed_names_the_setup_to_add(tmp_path):
    """The maintainer built build/ on their machine (npm ci, tsc) and runs against main: the head
    lists its tools, the base worktree has no build/ — exit 3 with the setup that fixes it."""
    project = {p.relative_to(TS).as_posix(): p.read_text() for p in TS.rglob("*") if p.is_file()}
    config = fake_model_config("server:\n  command: [node, build/index.js]\n").replace(
        "provider: openai\n  model: fake-model\n", "provider: bm25\n"
    )
    repo = commit_repo(
        tmp_path,
        {**project, "src/tools.ts": tools_ts(BASE_FORECAST), "golden.jsonl": GOLDEN, "toolselect.yaml": config},
        {"src/tools.ts": tools_ts(HEAD_FORECAST)},
        ignore="node_modules/\nbuild/\n",
    )
    env = toolchain_env(tmp_path)
    npm = shutil.which("npm")
    assert npm
    for step in (["ci", "--no-audit", "--no-fund"], ["run", "build"]):
        subprocess.run([npm, *step], cwd=repo.path, env={**env, "PATH": "/usr/bin:/bin:/usr/local/bin"}, check=True,
                       capture_output=True)  # fmt: skip
    run = toolselect("eval", "--base-ref", "HEAD~1", "--markdown", "c.md", cwd=repo.path)
    assert run.code == 3, run.out + run.err
    assert "no comparison: the base could not be evaluated: could not list tools from the MCP server" in run.out
    assert (
        "hint: the base worktree has no build/ (build/index.js is built, not committed): add `server.setup: npm ci "
        "&& npm run build` to the config so each side builds it" in run.out
    )
    preview = (repo.path / "c.md").read_text()
    assert "<details><summary>What the base said</summary>" in preview and "Cannot find module" in preview
    assert len(preview.splitlines()[0]) <= 150
    no_process_left(repo.path)


def test_the_action_fails_the_check_when_the_base_setup_fails_unless_told_to_pass(world, tmp_path):
    """In a pull request: the base's setup fails (its build script is broken on main). The sticky
    comment says the comparison was not run, with the setup's output folded; the check fails with
    exit 3 — and `base-failure: pass` lets the head's own gate decide instead."""
    api, github = world
    server = f"server:\n  command: [{sys.executable}, mcp_server.py, tools.json, stdio]\n  setup: python3 build.py\n"
    fakes = ROOT / "tests" / "fakes" / "mcp_server.py"
    repo = commit_repo(
        tmp_path,
        {
            "mcp_server.py": fakes.read_text(),
            "build.py": "import sys\nprint('compiling…')\nsys.exit('error TS2307: Cannot find module ./tools')\n",
            "tools.json": json.dumps({"tools": tools_with(BASE_FORECAST)}),
            "golden.jsonl": GOLDEN,
            "toolselect.yaml": fake_model_config(server),
        },
        {"build.py": "print('compiled')\n", "tools.json": json.dumps({"tools": tools_with(HEAD_FORECAST)})},
        ignore="toolselect-report/\n.toolselect-cache/\n",
    )
    register_pull(github, repo)
    inputs = {"working-directory": ".", "max-drop": "5", "runner": "host"}
    run = run_action(
        repo.path, tmp_path, inputs=inputs, event=pull_request_event(repo), event_name="pull_request", api=api,
        github=github, env=toolchain_env(tmp_path),
    )  # fmt: skip
    assert run.code == 3, run.stdout + run.stderr
    [comment] = github.comments_on(7)
    body = comment["body"]
    headline = body.splitlines()[1]
    assert headline.startswith("### ❌ toolselect failed: no comparison: the base could not be evaluated")
    assert len(headline) <= 150 and "TS2307" not in headline
    assert "- ❌ the comparison was not run: the base could not be evaluated: " in body
    assert (
        "the base could not be evaluated: toolselect.yaml:1: server setup \\`python3 build.py\\` failed: exit code 1"
        in body
    )
    assert "(in the base worktree)" in body and "toolselect-base-" not in body
    assert "<details><summary>What the base said</summary>" in body and "error TS2307" in body
    assert "::error title=toolselect%3A no comparison::the comparison was not run" in run.stdout
    assert run.outputs["passed"] == "false"

    accepted = run_action(
        repo.path, tmp_path, inputs={**inputs, "base-failure": "pass"}, event=pull_request_event(repo),
        event_name="pull_request", api=api, github=github, env=toolchain_env(tmp_path),
    )  # fmt: skip
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    [comment] = github.comments_on(7)  # the same comment, edited
    assert comment["body"].splitlines()[1].startswith("### ✅ toolselect passed: no comparison")
    assert "(base-failure: pass: the head's own gate decides)" in comment["body"]
    no_process_left(repo.path)


def test_a_shard_whose_base_fails_fails_its_job(world, tmp_path):
    """A matrix job can't hand the merge a base part it could not make: the merge would then judge
    the head alone, so the shard's own job fails (exit 3) and says why."""
    api, github = world
    repo = make_repo(tmp_path)
    register_pull(github, repo)
    job = run_action(
        repo.path, tmp_path, inputs={"shard": "1", "shards": "2", "base-ref": "mian"},
        event=pull_request_event(repo), event_name="pull_request", api=api, github=github,
    )  # fmt: skip
    assert job.code == 3, job.stdout + job.stderr
    assert "::error title=toolselect%3A no comparison::shard 1/2: the comparison was not run" in job.stdout
    assert not (repo.path / "toolselect-report" / "part.base.json").exists()
