"""Real MCP servers in CI, the way users have them: built by `setup` in each side's checkout (the
head, and the base commit's worktree), started by `start` on a `{port}` of their own, or run from
a registry package (npx, uvx) — through `toolselect action` with the host runner's contract (the
same INPUT_*/GITHUB_* environment as the container) and through the CLI.

Third-party servers and toolchains come from tests/install-servers.sh (run by the README's test
command): @modelcontextprotocol/sdk, @modelcontextprotocol/server-filesystem and typescript from npm,
mcp-server-time from PyPI (installed by the servers' own setup with uv, offline, from tests/.wheels).
After every test, no process the run started is left: none has its folder in the workspace."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import FAKES, ROOT, TESTS, toolselect
from tests.e2e.harness import (
    BASE_FORECAST,
    GOLDEN,
    HEAD_FORECAST,
    KEY,
    TOOLS,
    WHEELS,
    Repo,
    commit_repo,
    fake_model_config,
    git,
    left_running,
    no_process_left,
    pull_request_event,
    register_pull,
    run_action,
    toolchain_env,
    tools_ts,
    tools_with,
)

NODE = TESTS / "node"
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-secret-1",
    "OPENAI_API_KEY": "sk-openai-secret-2",
    "GITHUB_TOKEN": "ghs_secret_3",
    "ACTIONS_RUNTIME_TOKEN": "runtime-secret-4",
    "INPUT_GITHUB-TOKEN": "ghs_secret_5",
}


@pytest.fixture(autouse=True, scope="module")
def _installed():
    missing = [p for p in (NODE / "node_modules", WHEELS) if not p.exists()]
    if missing:
        pytest.fail(f"run tests/install-servers.sh first (the README's test command does): missing {missing}")


def assert_description_flip(run, repo: Repo, base_text: str = BASE_FORECAST, head_text: str = HEAD_FORECAST) -> None:
    """Both sides were evaluated from their own server, and the comment shows the reworded tool."""
    assert run.code == 1, run.stderr + run.stdout  # two cases flipped: −25 pt, more than max-drop 5
    head, base = run.report(), run.report("base.json")
    assert base["metrics"]["accuracy"]["numerator"] == 8 and head["metrics"]["accuracy"]["numerator"] == 6
    body = run.summary
    assert "→ 75.0%" in body.splitlines()[0] and "100.0%" in body.splitlines()[0]
    assert f"-{base_text}" in body and f"+{head_text}" in body
    assert "no baseline" not in body
    no_process_left(repo.path)


# ----------------------------------------------------------------------------- the Action, per side


def test_typescript_server_built_by_setup_on_head_and_base(world, tmp_path):
    """(a) A TypeScript server on the official SDK, built by `npm ci && npm run build` in each
    side's checkout (node_modules and build/ are not committed); the head rewords a description, a
    template string over two lines — and the PR review comments on exactly those lines."""
    api, github = world
    ts = TESTS / "data" / "servers" / "ts"
    project = {p.relative_to(ts).as_posix(): p.read_text() for p in ts.rglob("*") if p.is_file()}
    server = (
        "server:\n  command: [node, build/index.js]\n"
        "  setup: npm ci --no-audit --no-fund && npm run build\n  setup_timeout_s: 300\n"
    )
    head_ts = tools_ts("Daily outlook\n      for a city.")
    repo = commit_repo(
        tmp_path,
        {
            **project,
            "src/tools.ts": tools_ts(BASE_FORECAST),
            "golden.jsonl": GOLDEN,
            "toolselect.yaml": fake_model_config(server),
        },
        {"src/tools.ts": head_ts},
        ignore="node_modules/\nbuild/\ntoolselect-report/\n.toolselect-cache/\n",
    )
    assert not any(p.startswith(("build/", "node_modules/")) for p in git("ls-files", cwd=repo.path).split())
    register_pull(github, repo)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"working-directory": ".", "max-drop": "5", "runner": "host"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
        env=toolchain_env(tmp_path),
    )
    assert_description_flip(run, repo, head_text="Daily outlook")
    assert "server setup: npm ci --no-audit --no-fund && npm run build" in run.stdout
    assert "base: server setup done in" in run.stdout  # the base worktree was built too
    assert run.report()["surface"]["origin"] == "stdio: node build/index.js"

    # one review (COMMENT), one comment spanning the template string's two changed lines
    [review] = github.reviews
    assert review["state"] == "COMMENTED" and review["commit_id"] == repo.head
    assert review["body"].startswith("<!-- toolselect-review:default -->")
    [comment] = github.review_comments_on(7)
    lines = head_ts.splitlines()
    start = next(i for i, x in enumerate(lines, start=1) if "Daily outlook" in x)
    assert (comment["path"], comment["start_line"], comment["line"]) == ("src/tools.ts", start, start + 1)
    body = comment["body"]
    assert body.startswith("<!-- toolselect-review:default ") and "the model picks `get_forecast` worse" in body
    assert "| recall | 100.0% (3/3) | 33.3% (1/3) | −66.7 pt" in body
    assert "wanted `get_forecast`, got `get_weather`: 0 → 2" in body
    assert "| fc-dublin | `get_forecast` | `get_forecast` | `get_weather` |" in body
    sticky = github.comments_on(7)[0]["html_url"]
    assert f"[the full report]({sticky})" in body and f"[the full report]({sticky})" in review["body"]
    assert run.outputs["review-url"] == review["html_url"]


def test_python_server_with_its_own_dependencies(world, tmp_path):
    """(b) A Python server importing a package toolselect does not have (mcp-server-time), installed
    by setup into the server's own virtualenv with uv."""
    api, github = world
    server = (
        "server:\n  command: [.venv/bin/python, server.py]\n"
        "  setup: uv venv --quiet && uv pip install --quiet -r requirements.txt\n"
    )
    cases = [
        {
            "id": "tokyo",
            "question": "Get the current time in the Asia/Tokyo timezone",
            "expected_tool": "get_current_time",
        },
        {"id": "convert", "question": "Convert 3pm New York time to London time", "expected_tool": "convert_time"},
        {"id": "thanks", "question": "Thanks, that's all!", "expected_tool": None},
    ]
    files = {
        "server.py": "from mcp_server_time.server import serve\nimport asyncio\n\nasyncio.run(serve('UTC'))\n",
        "requirements.txt": "mcp-server-time==2026.10.19\n",
        "golden.jsonl": "".join(json.dumps(c) + "\n" for c in cases),
        "toolselect.yaml": f"{server}evals:\n  provider: bm25\n  golden: golden.jsonl\n",
    }
    with pytest.raises(ImportError):
        __import__("mcp_server_time")
    repo = commit_repo(tmp_path, files, {"README.md": "a time server\n"}, ignore=".venv/\n")
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"working-directory": ".", "runner": "host"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
        env=toolchain_env(tmp_path),
    )
    assert run.code == 0, run.stderr + run.stdout
    head, base = run.report(), run.report("base.json")
    assert set(head["surface"]["tools"]) >= {"get_current_time", "convert_time"}
    assert base["surface"]["hash"] == head["surface"]["hash"]
    assert (repo.path / ".venv").is_dir()  # the server's own environment, not toolselect's
    no_process_left(repo.path)


def test_http_server_started_per_side_on_its_own_port(world, tmp_path):
    """(c) An HTTP server started by `start` on a free `{port}`, once for the head and once for the
    base (each from its own checkout), stopped with its whole process group."""
    api, github = world
    log = tmp_path / "methods.log"
    server = (
        "server:\n  url: http://127.0.0.1:{port}/mcp\n  start: python mcp_server.py tools.json http\n"
        f"  env:\n    PORT: '{{port}}'\n    MCP_METHOD_LOG: {log}\n"
    )
    files = {
        "mcp_server.py": (FAKES / "mcp_server.py").read_text(),
        "serve.py": (FAKES / "serve.py").read_text(),
        "tools.json": json.dumps({"tools": tools_with(BASE_FORECAST)}),
        "golden.jsonl": GOLDEN,
        "toolselect.yaml": fake_model_config(server),
    }
    repo = commit_repo(tmp_path, files, {"tools.json": json.dumps({"tools": tools_with(HEAD_FORECAST)})})
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"working-directory": ".", "max-drop": "5", "runner": "host"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert_description_flip(run, repo)
    origins = [run.report(name)["surface"]["origin"] for name in ("report.json", "base.json")]
    assert all(o.startswith("streamable-http: http://127.0.0.1:") and "{port}" not in o for o in origins), origins
    assert "tools/call" not in log.read_text() and log.read_text().count("tools/list") >= 2


def test_setup_and_server_never_see_the_keys_or_the_token(world, tmp_path):
    """The server is code from the pull request: setup and server get a small environment, plus
    only what the config passes explicitly."""
    api, github = world
    server = (
        "server:\n  command: [sh, -c, 'env > server-env.txt; exec python server.py']\n"
        "  setup: env > setup-env.txt\n  env:\n    WEATHER_API_TOKEN: ${WEATHER_API_TOKEN}\n"
    )
    files = {
        "server.py": (ROOT / "examples" / "weather" / "server.py").read_text(),
        "golden.jsonl": (ROOT / "examples" / "weather" / "golden.jsonl").read_text(),
        "toolselect.yaml": f"{server}evals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n",
    }
    repo = commit_repo(tmp_path, files, {"README.md": "x\n"})  # the key input is the provider's: it is used
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"working-directory": ".", "runner": "host", "openai-api-key": KEY},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
        env={**SECRETS, "WEATHER_API_TOKEN": "passed-on-purpose"},
    )
    assert run.code in (0, 1), run.stderr + run.stdout
    for name in ("setup-env.txt", "server-env.txt"):
        seen = (repo.path / name).read_text()
        for variable, value in [*SECRETS.items(), ("INPUT_OPENAI-API-KEY", KEY)]:
            assert value not in seen and f"{variable}=" not in seen, (name, variable)
        assert "WEATHER_API_TOKEN=passed-on-purpose" in seen  # the config passed it: it arrives
        assert "PATH=" in seen and "HOME=" in seen


def test_the_host_runner_installs_toolselect_apart_and_runs_the_same_action(world, tmp_path):
    """runner: host, step by step as action.yml runs it: the environment's key, a cold install from
    requirements.lock (hashes checked) into a virtualenv of its own, a warm one that finds it ready,
    then the eval step's own command with its INPUT_* environment: the same comment and exit code
    as the container's entrypoint."""
    import yaml

    from tests.e2e.harness import make_repo

    steps = {s.get("id"): s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]}
    script = ROOT / "scripts" / "host-env.sh"
    outputs = tmp_path / "host-output"
    outputs.write_text("")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "TOOLSELECT_"))}
    runner_temp = TESTS / ".host-env"  # kept between local runs; a clean clone installs cold
    env = {**base_env, "GITHUB_OUTPUT": str(outputs), "RUNNER_TEMP": str(runner_temp)}
    subprocess.run(["bash", str(script), "key"], env=env, check=True)
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["key"].startswith("toolselect-host-") and written["dir"].startswith(str(runner_temp))
    env["TOOLSELECT_HOST_ENV"] = written["dir"]
    for stale in (runner_temp / "toolselect-host").glob("*"):  # environments of earlier lock files
        if str(stale) != written["dir"]:
            shutil.rmtree(stale)
    first = subprocess.run(["bash", str(script), "install"], env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    warm = subprocess.run(["bash", str(script), "install"], env=env, capture_output=True, text=True, timeout=60)
    assert warm.returncode == 0 and "toolselect's environment is ready" in warm.stdout
    host_python = Path(written["dir"]) / "bin" / "python"
    assert shutil.which("python3", path=env["PATH"]) != str(host_python)  # the job's Python is untouched

    api, github = world
    repo = make_repo(tmp_path)
    event = pull_request_event(repo)
    runs = {}
    for runner, argv in (
        ("host", ["bash", "-c", steps["eval-host"]["run"]]),
        ("container", None),  # the image's entrypoint, as the other Action tests run it
    ):
        shutil.rmtree(repo.path / "evals" / ".toolselect-cache", ignore_errors=True)  # both runs ask the model
        runs[runner] = run_action(
            repo.path,
            tmp_path,
            inputs={"max-drop": "5", "runner": runner},
            event=event,
            event_name="pull_request",
            api=api,
            github=github,
            argv=argv,
            env={"TOOLSELECT_HOST_ENV": written["dir"]},
        )
    host, container = runs["host"], runs["container"]
    assert host.code == container.code == 1, host.stderr + host.stdout
    assert host.summary == container.summary and host.outputs == container.outputs
    assert len(github.comments_on(7)) == 1  # the second run edited the first one's comment


# ----------------------------------------------------------------------------- failures stop everything


BM25 = "{server}evals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"  # bm25 is no judge of a server


def cli_project(tmp_path: Path, server: str) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "weather" / "server.py", folder)
    shutil.copy(ROOT / "examples" / "weather" / "golden.jsonl", folder)
    (folder / "toolselect.yaml").write_text(BM25.format(server=server))
    return folder


def test_a_failed_setup_shows_the_command_its_exit_code_and_output(tmp_path):
    folder = cli_project(
        tmp_path,
        "server:\n  command: [node, build/index.js]\n"
        "  setup:\n    - echo compiling\n    - sleep 301 & echo 'npm ERR! missing script: build' >&2; exit 7\n",
    )
    unquoted = toolselect("eval", cwd=folder)  # `script: build` made YAML read a mapping
    assert unquoted.code == 2
    assert "toolselect.yaml:4: server.setup: entry 2 is a mapping, not a command" in unquoted.err, unquoted.err
    assert "put the command in quotes" in unquoted.err
    config = folder / "toolselect.yaml"
    config.write_text(
        config.read_text().replace(
            "- sleep 301 & echo 'npm ERR! missing script: build' >&2; exit 7",
            "- \"sleep 301 & echo 'npm ERR! missing script: build' >&2; exit 7\"",
        )
    )
    run = toolselect("eval", cwd=folder)
    assert run.code == 3
    assert (
        "error: toolselect.yaml:1: server setup `sleep 301 & echo 'npm ERR! missing script: build' >&2; exit 7` "
        "failed: exit code 7 after" in run.err
    )
    assert "  npm ERR! missing script: build" in run.err
    assert "server setup done in" in run.out and "echo compiling" in run.out  # the first one ran
    no_process_left(folder)  # the background `sleep 301` went with its group


def test_a_setup_that_runs_too_long_is_stopped(tmp_path):
    folder = cli_project(
        tmp_path, "server:\n  command: [python, server.py]\n  setup: echo fetching; sleep 302\n  setup_timeout_s: 1\n"
    )
    run = toolselect("eval", cwd=folder)
    assert run.code == 3
    assert "server setup `echo fetching; sleep 302` did not finish within setup_timeout_s=1 s" in run.err
    assert "  fetching" in run.err
    no_process_left(folder)


def test_a_started_server_that_crashes_says_so_with_its_output(tmp_path):
    folder = cli_project(
        tmp_path,
        "server:\n  url: http://127.0.0.1:{port}/mcp\n"
        "  start: \"sleep 303 & echo 'Error: Cannot find module express' >&2; exit 1\"\n  env: {PORT: '{port}'}\n",
    )
    run = toolselect("eval", cwd=folder)
    assert run.code == 3
    assert (
        "the server started by `sleep 303 & echo 'Error: Cannot find module express' >&2; exit 1` exited with "
        "code 1 before streamable-http: http://127.0.0.1:" in run.err
    )
    assert "  Error: Cannot find module express" in run.err
    no_process_left(folder)


def test_a_started_server_that_never_answers_runs_out_of_time(tmp_path):
    folder = cli_project(
        tmp_path, "server:\n  url: http://127.0.0.1:{port}/mcp\n  start: sleep 304 {port}\n  ready_timeout_s: 1\n"
    )
    run = toolselect("eval", cwd=folder)
    assert run.code == 3
    assert "did not answer at streamable-http: http://127.0.0.1:" in run.err and "ready_timeout_s=1 s" in run.err
    no_process_left(folder)


def test_a_start_that_returns_at_once_is_told_to_stay_in_the_foreground(tmp_path):
    folder = cli_project(tmp_path, "server:\n  url: http://127.0.0.1:{port}/mcp\n  start: echo started on {port}\n")
    run = toolselect("eval", cwd=folder)
    assert run.code == 3
    assert "exited with code 0 before" in run.err and "`start` must keep running in the foreground" in run.err
    assert "  started on " in run.err


# a server that accepts connections and never answers: the run is stopped while it lists tools
SILENT = (
    "import os, socket, time; s = socket.socket(); s.bind(('127.0.0.1', int(os.environ['PORT']))); s.listen(); "
    "c = s.accept(); time.sleep(306)"
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("stage", ["setup", "start", "listing"])
def test_an_interrupted_run_leaves_no_server(tmp_path, sig, stage):
    server = {
        "setup": "server:\n  command: [python, server.py]\n  setup: sleep 305 & sleep 306\n",
        "start": "server:\n  url: http://127.0.0.1:{port}/mcp\n  start: sleep 305 & sleep 306 {port}\n",
        "listing": f'server:\n  url: http://127.0.0.1:{{port}}/mcp\n  start: sleep 305 & exec python -c "{SILENT}"\n'
        "  env: {PORT: '{port}'}\n",
    }[stage]
    folder = cli_project(tmp_path, server)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSELECT_", "OPENAI_", "ANTHROPIC_"))}
    env["PYTHONUNBUFFERED"] = "1"
    with subprocess.Popen(
        [sys.executable, "-m", "toolselect", "eval"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        assert line.startswith(f"server {'setup' if stage == 'setup' else 'start'}:"), line
        deadline = time.monotonic() + 10
        want = 3 if stage == "listing" else 4  # toolselect, sh (or the exec'd server) and the sleeps
        while len(left_running(folder)) < want and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(left_running(folder)) >= want, left_running(folder)
        if stage == "listing":
            time.sleep(1.5)  # connected, waiting for an answer that never comes
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, out + err
        assert "Traceback" not in err and "interrupted" in err
    no_process_left(folder)


# ----------------------------------------------------------------------------- registry packages


def test_npx_package_server(tmp_path):
    """@modelcontextprotocol/server-filesystem from npm, run by npx (pinned), head and base."""
    folder = tmp_path / "repo"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "notes.txt").write_text("hello\n")
    cases = [
        {
            "id": "read",
            "question": "Read the complete contents of the file docs/notes.txt",
            "expected_tool": "read_text_file",
        },
        {"id": "list", "question": "List the files and directories in docs", "expected_tool": "list_directory"},
    ]
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (folder / "toolselect.yaml").write_text(
        BM25.format(server="server:\n  command: [npx, -y, '@modelcontextprotocol/server-filesystem@2026.8.31', .]\n")
    )
    run = toolselect("eval", "--json", "out.json", cwd=folder, env=toolchain_env(tmp_path), timeout=180)
    assert run.code == 0, run.err
    report = json.loads((folder / "out.json").read_text())
    assert {"read_text_file", "list_directory", "write_file"} <= set(report["surface"]["tools"])
    assert report["metrics"]["accuracy"]["denominator"] == 2
    no_process_left(folder)


def test_uvx_package_server(tmp_path):
    """mcp-server-time from PyPI, run by uvx (pinned) in an environment of its own."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "golden.jsonl").write_text(
        json.dumps({"id": "tokyo", "question": "What time is it in Tokyo?", "expected_tool": "get_current_time"}) + "\n"
    )
    (folder / "toolselect.yaml").write_text(
        BM25.format(server="server:\n  command: [uvx, mcp-server-time==2026.10.19, --local-timezone, UTC]\n")
    )
    run = toolselect("eval", cwd=folder, env=toolchain_env(tmp_path), timeout=180)
    assert run.code == 0, run.err
    assert "tool surface: 2 tools from stdio: uvx mcp-server-time==2026.10.19" in run.out
    no_process_left(folder)


def test_python_sdk_only_server_through_uv(tmp_path):
    """The image's `python` has no MCP SDK (toolselect's own lives apart): `uv run --with mcp`."""
    folder = cli_project(
        tmp_path, "server:\n  command: [uv, run, --quiet, --no-project, --with, 'mcp==2.3.0', server.py]\n"
    )
    run = toolselect("eval", cwd=folder, env=toolchain_env(tmp_path), timeout=180)
    assert run.code == 0, run.err
    assert "tool surface: 6 tools from stdio: uv run --quiet --no-project --with mcp==2.3.0 server.py" in run.out
    no_process_left(folder)


def test_docker_image_server(tmp_path):
    """`docker run -i --rm IMAGE` as the server command. There is no Docker daemon on this machine,
    so a `docker` earlier on PATH plays `run -i`: it starts the image's entrypoint with the `-e`
    variables it was given — what toolselect relies on (the command, stdio, the env passed)."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "docker").write_text(
        "#!/bin/sh\n# docker run -i --rm [-e NAME]... IMAGE: the image is examples/weather/server.py\n"
        '[ "$1" = run ] || exit 125\nshift\nkeep=\'\'\nwhile [ $# -gt 1 ]; do\n  case "$1" in\n'
        '    -e) shift; keep="$keep $1=$(printenv "$1")" ;;\n  esac\n  shift\ndone\n'
        f'exec env -i PATH="$PATH" $keep {sys.executable} {ROOT / "examples" / "weather" / "server.py"}\n'
    )
    (shim / "docker").chmod(0o755)
    folder = cli_project(
        tmp_path,
        "server:\n  command: [docker, run, -i, --rm, -e, WEATHER_API_TOKEN, 'ghcr.io/acme/weather-mcp:1.4']\n"
        "  env:\n    WEATHER_API_TOKEN: ${WEATHER_API_TOKEN}\n",
    )
    env = {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "WEATHER_API_TOKEN": "t0k"}
    run = toolselect("eval", cwd=folder, env=env)
    assert run.code == 0, run.err
    assert "tool surface: 6 tools from stdio: docker run -i --rm -e WEATHER_API_TOKEN" in run.out


def test_a_missing_program_in_the_image_says_the_two_fixes(tmp_path):
    folder = cli_project(tmp_path, "server:\n  command: [deno, run, server.ts]\n")
    run = toolselect("eval", cwd=folder, env={"TOOLSELECT_IMAGE": "1"})
    assert run.code == 3
    assert "deno not found" in run.err
    assert "runner: host" in run.err and "toolselect snapshot -o tools.json" in run.err
    outside = toolselect("eval", cwd=folder)  # on the job's machine the fixes would not help
    assert "deno not found" in outside.err and "runner: host" not in outside.err


# ----------------------------------------------------------------------------- the committed snapshot


def snapshot(folder: Path, tools: list[dict] | None, *args: str):
    """`toolselect snapshot ARGS` of a server that lists `tools` (None: the folder's served.json as is)."""
    if tools is not None:
        (folder / "served.json").write_text(json.dumps({"tools": tools}))
    argv = ("snapshot", *args, "--", sys.executable, str(FAKES / "mcp_server.py"), "served.json")
    return toolselect(*argv, cwd=folder, process=True)  # several at once, in threads: each a process of its own


def test_snapshot_is_byte_stable_and_check_names_every_change(tmp_path):
    tools = [dict(t, annotations={"readOnlyHint": True, "title": t["name"]}) for t in TOOLS]
    (tmp_path / "served.json").write_text(json.dumps({"tools": tools}))
    with ThreadPoolExecutor(max_workers=2) as pool:  # two runs, two server processes
        runs = list(pool.map(lambda out: snapshot(tmp_path, None, "-o", out), ["tools.json", "again.json"]))
    assert all(run.code == 0 for run in runs), runs
    committed = (tmp_path / "tools.json").read_bytes()
    assert (tmp_path / "again.json").read_bytes() == committed  # byte-identical
    text = committed.decode()
    assert text.endswith("}\n") and '\n  "tools": [\n    {\n      "annotations": {' in text  # 2 spaces, sorted keys
    assert [t["name"] for t in json.loads(text)["tools"]] == [t["name"] for t in TOOLS]  # the server's order

    added = [*tools, {"name": "get_alerts", "description": "Weather alerts.", "inputSchema": {"type": "object"}}]
    reworded = [dict(t) for t in tools]
    reworded[1]["description"] = HEAD_FORECAST
    reschema = json.loads(json.dumps(tools))
    reschema[0]["inputSchema"]["properties"]["units"] = {"type": "string", "enum": ["metric", "imperial"]}
    served = {"current": tools, "added": added, "removed": tools[:2], "reworded": reworded, "reschema": reschema}

    def check(name: str):  # each in a folder of its own, beside its own copy of the committed file
        (tmp_path / name).mkdir()
        (tmp_path / name / "tools.json").write_bytes(committed)
        return snapshot(tmp_path / name, served[name], "--check", "tools.json")

    with ThreadPoolExecutor(max_workers=len(served)) as pool:
        checks = dict(zip(served, pool.map(check, served), strict=True))
    assert checks["current"].code == 0 and "tools.json is current: 3 tools" in checks["current"].out
    for name, expected in [
        ("added", "  added: get_alerts"),
        ("removed", "  removed: search_web"),
        ("reworded", "  description: get_forecast"),
        ("reschema", "  schema: get_weather"),
    ]:
        stale = checks[name]
        assert stale.code == 1, stale.err
        assert "tools.json is stale" in stale.out and expected in stale.out, stale.out
        assert "update it with: toolselect snapshot -o tools.json" in stale.out
        assert (tmp_path / name / "tools.json").read_bytes() == committed  # --check never writes
    assert f"    -{BASE_FORECAST}" in checks["reworded"].out
    assert '    +    "units": {' in checks["reschema"].out

    missing = snapshot(tmp_path, tools, "--check", "nope.json")
    assert missing.code == 2 and "nope.json: no such tools file to check" in missing.err


def test_setup_is_the_shells_and_sees_only_what_the_config_passes(tmp_path):
    """`$VAR` / `${VAR}` in setup is expanded by the shell, from the server's small environment:
    a secret of toolselect's environment named there stays empty, one passed in `env:` arrives."""
    folder = cli_project(
        tmp_path,
        "server:\n  command: [python, server.py]\n"
        '  setup: echo "key=[${OPENAI_API_KEY}] token=[$BUILD_TOKEN] home=[${HOME:+set}]" > seen.txt\n'
        "  env:\n    BUILD_TOKEN: ${BUILD_TOKEN}\n",
    )
    run = toolselect("eval", cwd=folder, env={"OPENAI_API_KEY": "sk-leak", "BUILD_TOKEN": "b-ok"})
    assert run.code == 0, run.err
    assert (folder / "seen.txt").read_text() == "key=[] token=[b-ok] home=[set]\n"
