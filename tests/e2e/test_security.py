"""Attacks on the Action from a pull request (its config, its server, its cache), each reproduced:
the secret stays out of every output, the key goes nowhere the workflow did not name, and the
run's folders can't be redirected or pre-filled."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import FAKES
from tests.e2e.harness import KEY, SCRIPT, TOKEN, git, make_repo, pull_request_event, run_action
from tests.fakes.model_api import FakeModelAPI

SVC_TOKEN = "svc-7f3a9c2e1b8d4f60a5e2"
SCRIPT_FOR_ANTHROPIC = {k: v for k, v in SCRIPT.items() if k != "key"}
PATH_TOKEN = "sk0123456789abcdef0123"


def on_pr(world, repo, tmp, inputs=None, env=None):
    """The Action on the repository's pull request (7), as GitHub runs it."""
    api, github = world
    return run_action(
        repo.path,
        tmp,
        inputs=inputs or {},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
        env=env,
    )


def everything_shown(run, repo) -> str:
    """Every place a secret could surface: the log (masks aside), annotations, the summary, the
    outputs, the comment and the report folder's files."""
    out_dir = repo.path / "toolselect-report"
    files = "".join(p.read_text(errors="replace") for p in out_dir.glob("*") if p.is_file()) if out_dir.exists() else ""
    log = "\n".join(line for line in (run.stdout + run.stderr).splitlines() if not line.startswith("::add-mask::"))
    return log + run.summary + json.dumps(run.outputs) + files


def server_repo(tmp_path, head_server: str, base_server: str):
    """make_repo's weather PR, its surface served live by the fake MCP server instead of tools.json."""
    repo = make_repo(tmp_path)
    evals = repo.path / "evals"
    for name in ("mcp_server.py", "serve.py"):
        shutil.copy(FAKES / name, evals / name)
    config = evals / "toolselect.yaml"
    text = config.read_text().replace("provider: openai\n  model: fake-model\n", "provider: bm25\n")
    git("checkout", "-q", repo.base, cwd=repo.path)
    config.write_text(text.replace("tools_file: tools.json\n", base_server))
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", "base: a live server", cwd=repo.path)
    base = git("rev-parse", "HEAD", cwd=repo.path)
    git("checkout", "-q", repo.head, "--", "evals/tools.json", cwd=repo.path)
    config.write_text(text.replace("tools_file: tools.json\n", head_server))
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", "head: a live server", cwd=repo.path)
    return type(repo)(repo.path, base, git("rev-parse", "HEAD", cwd=repo.path))


def test_a_secret_from_server_config_appears_nowhere(world, tmp_path):
    """Finding 1: `${SVC_TOKEN}` in the command, and a base whose server crashes saying it."""
    _, github = world
    head = f"server:\n  command: [{sys.executable}, mcp_server.py, tools.json, stdio, '${{SVC_TOKEN}}']\n"
    base = (
        f"server:\n  command: [{sys.executable}, mcp_server.py, tools.json, stdio, '${{SVC_TOKEN}}']\n"
        "  env:\n    CRASH_AT_START: 'auth failed for token ${SVC_TOKEN}'\n"
    )
    repo = server_repo(tmp_path, head, base)
    run = on_pr(world, repo, tmp_path, env={"SVC_TOKEN": SVC_TOKEN})
    assert run.code == 3, run.stderr + run.stdout  # nothing was compared: never a pass
    comment = github.comments_on(7)[0]["body"]
    assert "the comparison was not run: the base could not be evaluated" in comment
    assert "auth failed for token ***" in comment  # what the base said, folded
    assert "auth failed for token ***" in run.stdout  # the server's own words, scrubbed
    shown = everything_shown(run, repo) + comment
    assert SVC_TOKEN not in shown
    assert "stdio: " in shown and "${SVC_TOKEN}" in run.report()["surface"]["origin"]  # as the config wrote it
    masks = [line for line in run.stdout.splitlines() if line.startswith("::add-mask::")]
    assert f"::add-mask::{SVC_TOKEN}" in masks
    assert run.stdout.index(f"::add-mask::{SVC_TOKEN}") < run.stdout.index("::group::")  # before anything


def test_toolselects_own_keys_never_expand_in_a_config(world, tmp_path):
    """Finding 3: a PR's config can't put the API key into its server's environment or URL."""
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN"):
        server = f"server:\n  command: [{sys.executable}, mcp_server.py, tools.json]\n  env:\n    K: ${{{variable}}}\n"
        folder = tmp_path / variable
        folder.mkdir()
        repo = server_repo(folder, server, server)
        run = on_pr(world, repo, folder, env={variable: "secret-value-123", "OPENAI_API_KEY": KEY})
        assert run.code == 2, run.stderr + run.stdout
        assert f"${{{variable}}} can't be used in a config: it is toolselect's own key or token" in run.stdout


def test_the_key_goes_only_to_the_endpoint_the_workflow_names(world, tmp_path):
    """Finding 3: `evals.base_url` in the PR's config no longer receives the key."""
    api, github = world
    with FakeModelAPI({"key": KEY, "answers": {}, "default": {"text": "ok"}}) as attacker:
        repo = make_repo(tmp_path, extra_config=f"  base_url: {attacker.url}/v1\n")
        event = pull_request_event(repo)
        refused = run_action(
            repo.path,
            tmp_path,
            inputs={"openai-base-url": ""},
            event=event,
            event_name="pull_request",
            api=api,
            github=github,
        )
        assert refused.code == 2, refused.stderr + refused.stdout
        assert "evals.base_url (http://127.0.0.1:" in refused.stdout and "would receive the API key" in refused.stdout
        named = run_action(  # the workflow's input wins
            repo.path, tmp_path, inputs={}, event=event, event_name="pull_request", api=api, github=github
        )
        assert named.code in (0, 1), named.stderr + named.stdout
        assert attacker.requests == 0 and api.requests > 0


def test_a_models_entry_cannot_send_the_key_elsewhere(world, tmp_path):
    """Several models: a PR's `evals.models[i].base_url` is refused unless the workflow names it."""
    api, github = world
    with FakeModelAPI({"key": KEY, "answers": {}, "default": {"text": "ok"}}) as attacker:
        models = (
            "  models:\n    - {provider: openai, model: fake-model}\n"
            f"    - {{provider: openai, model: other, base_url: '{attacker.url}/v1'}}\n"
        )
        repo = make_repo(tmp_path, models=models)
        refused = run_action(
            repo.path, tmp_path, inputs={}, event=pull_request_event(repo), event_name="pull_request", api=api,
            github=github,
        )  # fmt: skip
        assert refused.code == 2, refused.stderr + refused.stdout
        assert "toolselect.yaml:5: evals.models[1].base_url (http://127.0.0.1:" in refused.stdout
        assert attacker.requests == 0 and api.requests == 0


def test_the_models_input_does_not_open_the_config_endpoint(world, tmp_path):
    """With the `models` input, a PR's `evals.base_url` is still refused when the workflow names none."""
    api, github = world
    repo = make_repo(tmp_path, extra_config="  base_url: https://evil.example/v1\n")
    refused = run_action(
        repo.path, tmp_path, inputs={"openai-base-url": "", "models": "openai:gpt-4.1-mini\nanthropic:claude-x"},
        event=pull_request_event(repo), event_name="pull_request", api=api, github=github,
    )  # fmt: skip
    assert refused.code == 2, refused.stderr + refused.stdout
    assert "evals.base_url (https://evil.example/v1) would receive the API key" in refused.stdout
    assert api.requests == 0


def test_the_command_provider_gets_no_key(world, tmp_path):
    """Finding 3: the `command` provider is PR code too; its environment has no key or token."""
    api, github = world
    repo = make_repo(tmp_path)
    evals = repo.path / "evals"
    (evals / "pick.py").write_text(
        "import json, os, sys\njson.load(sys.stdin)\n"
        "open('picker-env.txt', 'a').write(json.dumps(dict(os.environ)) + '\\n')\nprint(json.dumps({'tool': None}))\n"
    )
    config = evals / "toolselect.yaml"
    config.write_text(
        config.read_text().replace(
            "provider: openai\n  model: fake-model\n", f"provider: command\n  command: [{sys.executable}, pick.py]\n"
        )
    )
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", "a command picker", cwd=repo.path)  # the base (HEAD) picks with it too
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"base-ref": "HEAD"},
        event=None,
        event_name="push",
        api=api,
        github=github,
        env={"ANTHROPIC_API_KEY": "sk-ant-xyz12345", "GITHUB_TOKEN": TOKEN},
    )
    assert run.code in (0, 1), run.stderr + run.stdout
    seen = (evals / "picker-env.txt").read_text()
    for value in (KEY, "sk-ant-xyz12345", TOKEN):
        assert value not in seen
    assert '"PATH"' in seen


def test_a_committed_cache_is_refused(world, tmp_path):
    """Finding 5: forged answers committed under .toolselect-cache/ never decide the verdict."""
    api, _ = world
    repo = make_repo(tmp_path)
    forged = repo.path / "evals" / ".toolselect-cache" / "ab" / "forged.json"
    forged.parent.mkdir(parents=True)
    forged.write_text("{}")
    git("add", "-f", "-A", cwd=repo.path)
    git("commit", "-qm", "a helpful cache", cwd=repo.path)
    run = on_pr(world, repo, tmp_path)
    assert run.code == 2
    assert "the answer cache evals/.toolselect-cache is tracked by git" in run.stdout
    assert "git rm -r --cached evals/.toolselect-cache" in run.stdout
    assert api.requests == 0


def test_symlinked_folders_are_refused(world, tmp_path):
    """Finding 6: a cache or report folder that links out of the workspace is never written to."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for folder in ("evals/.toolselect-cache", "toolselect-report"):
        root = tmp_path / folder.replace("/", "_")
        root.mkdir()
        repo = make_repo(root)
        (repo.path / folder).symlink_to(outside, target_is_directory=True)
        run = on_pr(world, repo, root)
        assert run.code == 2, run.stderr + run.stdout
        assert f"{folder} is a symlink: toolselect writes only into real folders in the workspace" in run.stdout
        assert list(outside.iterdir()) == []


def test_the_endpoint_is_masked_and_shown_without_its_secrets(world, tmp_path):
    """Finding 8: a path token in openai-base-url (a gateway's tenant key) appears nowhere, even when
    the API echoes the path it was sent."""
    api, github = world
    repo = make_repo(tmp_path)
    url = f"{api.url}/t/{PATH_TOKEN}/v1"
    run = on_pr(world, repo, tmp_path, inputs={"openai-base-url": url})
    assert run.code == 0, run.stderr + run.stdout
    shown = everything_shown(run, repo) + github.comments_on(7)[0]["body"]
    assert PATH_TOKEN not in shown
    assert f"::add-mask::{url}" in run.stdout
    assert run.report()["run"]["endpoint"] == f"{api.url}/t/…/v1"
    assert api.requests > 0  # the requests did go there


def test_an_error_cannot_break_out_of_the_failure_summary(world, tmp_path):
    """Finding 11: the server's stderr, shown in the job summary when the run fails, stays in its block."""
    server = (
        f"server:\n  command: [{sys.executable}, mcp_server.py, tools.json]\n"
        '  env:\n    CRASH_AT_START: "```\\n# owned\\n<img src=x onerror=alert(1)>"\n'
    )
    repo = server_repo(tmp_path, server, server)
    run = on_pr(world, repo, tmp_path, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert run.code == 3
    assert run.summary.startswith("### ❌ toolselect could not run\n\n````\n")
    assert run.summary.rstrip().endswith("````")
    assert not list(repo.path.rglob("__pycache__"))  # the server inherited PYTHONDONTWRITEBYTECODE
    assert os.stat(repo.path).st_uid == os.getuid()


def test_the_server_cannot_read_the_keys_from_toolselects_own_environment(world, tmp_path):
    """Finding 3: /proc/<toolselect>/environ is readable by the PR's code (same user); the keys are
    not in it: toolselect re-executes itself without them and keeps them in memory."""
    server = (
        f"server:\n  command: [{sys.executable}, mcp_server.py, tools.json]\n"
        "  setup: tr '\\0' '\\n' < /proc/$PPID/environ > parent-env.txt\n"
    )
    repo = server_repo(tmp_path, server, server)
    run = on_pr(world, repo, tmp_path, env={"ANTHROPIC_API_KEY": "sk-ant-proc-1234", "SVC_TOKEN": SVC_TOKEN})
    assert run.code in (0, 1), run.stderr + run.stdout
    parent = (repo.path / "evals" / "parent-env.txt").read_text()
    assert "GITHUB_WORKSPACE=" in parent  # it is toolselect's environment
    for value in (KEY, TOKEN, "sk-ant-proc-1234", SVC_TOKEN):
        assert value not in parent
    assert run.outputs["comment-url"]  # the token still reached GitHub: the keys live on in memory


MCP_IN_SH = r"""#!/bin/sh
# a stdio MCP server in plain sh (any user can run it): initialize and tools/list, and who it runs as
id -u > server-uid.txt
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18",%s}}\n' "$id" \
      '"capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}' ;;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}\n' "$id" \
      '{"name":"get_weather","description":"Current weather in a city.","inputSchema":{"type":"object"}}' ;;
  esac
done
"""


def test_as_root_the_prs_code_runs_as_the_checkouts_owner(world, tmp_path):
    """Finding 3 (and 11): in the container toolselect is root; setup and server run as the user who
    owns the workspace (the runner's), on the head and in the base worktree, and leave nothing of root's."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv, as in the Action's container")
    from tests.e2e.harness import commit_repo

    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="toolselect-owner-"))
    try:
        root.chmod(0o755)
        config = (
            "server:\n  command: [sh, mcp.sh]\n  setup: id -u > setup-uid.txt && mkdir -p build\n"
            "evals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"
        )
        golden = json.dumps({"id": "now", "question": "Weather in Oslo now?", "expected_tool": "get_weather"}) + "\n"
        repo = commit_repo(
            root, {"mcp.sh": MCP_IN_SH, "toolselect.yaml": config, "golden.jsonl": golden}, {"README.md": "x\n"}
        )
        for path in (repo.path, *repo.path.rglob("*")):
            os.chown(path, 65534, 65534, follow_symlinks=False)
        run = on_pr(world, repo, tmp_path, inputs={"working-directory": "."})
        assert run.code == 0, run.stderr + run.stdout
        assert (repo.path / "setup-uid.txt").read_text().strip() == "65534"
        assert (repo.path / "server-uid.txt").read_text().strip() == "65534"
        assert (repo.path / "build").stat().st_uid == 65534
        assert run.report("base.json")["surface"]["tools"] == ["get_weather"]  # the base worktree was theirs too
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_header_values_are_masked_and_never_shown(world, tmp_path):
    """Finding 1: a header value (even one written in the config) is masked, and a server that
    fails says nothing of it."""
    server = (
        "server:\n  url: http://127.0.0.1:9/s/sk0123456789abcdef0123/mcp\n  headers:\n    X-Api-Key: hv-5566778899\n"
    )
    repo = server_repo(tmp_path, server, server)
    run = on_pr(world, repo, tmp_path)
    assert run.code == 3, run.stderr + run.stdout
    assert "::add-mask::hv-5566778899" in run.stdout
    shown = everything_shown(run, repo)
    assert "hv-5566778899" not in shown and "sk0123456789abcdef0123" not in shown
    assert "streamable-http: http://127.0.0.1:9/s/…/mcp" in shown


def test_each_providers_key_goes_only_to_its_own_endpoint(world, tmp_path):
    """Finding 10 (issue 23): `evals.models: [{provider: anthropic, base_url: <the workflow's
    openai-base-url>}]` sent the Anthropic key to the endpoint the workflow named for OpenAI; and
    with the openai-base-url input, a run of an Anthropic model went there too. Each key now goes
    only to its provider's default endpoint or to the one the workflow names for that provider."""
    api, github = world
    anthropic_key = "sk-ant-only-for-anthropic"
    with FakeModelAPI({"key": KEY, "answers": {}, "default": {"text": "ok"}}) as openai_side:
        models = (
            "  models:\n    - {provider: openai, model: fake-model}\n"
            f"    - {{provider: anthropic, model: claude-x, base_url: '{openai_side.url}/v1'}}\n"
        )
        repo = make_repo(tmp_path, models=models)
        named = {"openai-base-url": f"{openai_side.url}/v1", "anthropic-api-key": anthropic_key}
        refused = run_action(
            repo.path, tmp_path, inputs=named, event=pull_request_event(repo), event_name="pull_request", api=api,
            github=github,
        )  # fmt: skip
        assert refused.code == 2, refused.stderr + refused.stdout
        assert "toolselect.yaml:5: evals.models[1].base_url (http://127.0.0.1:" in refused.stdout
        assert "would receive the API key (provider anthropic)" in refused.stdout
        assert "set the action's anthropic-base-url input to this URL" in refused.stdout
        assert openai_side.requests == 0
    # one Anthropic model, and the workflow names an endpoint for OpenAI only: the Anthropic key goes to
    # the endpoint named for Anthropic, never to OpenAI's
    with (
        FakeModelAPI({**SCRIPT_FOR_ANTHROPIC, "key": anthropic_key}) as anthropic_side,
        FakeModelAPI({"key": anthropic_key, "answers": {}, "default": {"text": "ok"}}) as openai_side,
    ):
        folder = tmp_path / "one"
        folder.mkdir()
        repo = make_repo(folder, models="  provider: anthropic\n  model: claude-x\n")
        run = run_action(
            repo.path, folder, event=pull_request_event(repo), event_name="pull_request", api=api, github=github,
            inputs={"openai-base-url": f"{openai_side.url}/v1", "anthropic-base-url": anthropic_side.url,
                    "anthropic-api-key": anthropic_key, "openai-api-key": ""},
        )  # fmt: skip
        assert run.code in (0, 1), run.stderr + run.stdout
        assert openai_side.requests == 0 and anthropic_side.requests > 0
        assert run.report()["run"]["endpoint"] == anthropic_side.url


def test_with_several_models_each_goes_to_its_own_providers_endpoint(world, tmp_path):
    """evals.models with an Anthropic model first and an OpenAI one second, and an endpoint named
    for each provider: each model's requests, and its key, go to its own provider's."""
    api, github = world
    anthropic_key = "sk-ant-several-1234"
    with (
        FakeModelAPI({**SCRIPT_FOR_ANTHROPIC, "key": anthropic_key}) as anthropic_side,
        FakeModelAPI({**SCRIPT_FOR_ANTHROPIC, "key": KEY}) as openai_side,
    ):
        models = (
            "  models:\n    - {provider: anthropic, model: claude-x}\n    - {provider: openai, model: fake-model}\n"
        )
        repo = make_repo(tmp_path, models=models)
        inputs = {"openai-base-url": f"{openai_side.url}/v1", "anthropic-base-url": anthropic_side.url}
        run = run_action(
            repo.path, tmp_path, event=pull_request_event(repo), event_name="pull_request", api=api, github=github,
            inputs={**inputs, "anthropic-api-key": anthropic_key},
        )  # fmt: skip
        assert run.code in (0, 1), run.stderr + run.stdout
        assert {e["api"] for e in anthropic_side.log} == {"anthropic"}
        assert {e["api"] for e in openai_side.log} == {"chat"}
