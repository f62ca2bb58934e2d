"""Servers as users run them, in the image: from a registry (npx, uvx, `uv run --with`), one that
needs a program the image lacks, and a setup that goes looking for the job's secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FAKES, ROOT
from tests.container.step import CA_ENV, DOCKER_SOCKET, container_step, give, root_owned
from tests.e2e.harness import SCRIPT, git
from tests.fakes.model_api import FakeModelAPI

pytestmark = pytest.mark.xdist_group("container")

OFFLINE = "evals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def push(job: Path, files: dict[str, str]) -> dict:
    """A checkout of `files` (one commit), the runner's user's; the push event for it."""
    workspace = job / "workspace"
    workspace.mkdir()
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    git("init", "-q", "-b", "main", cwd=workspace)
    git("add", ".", cwd=workspace)
    git("commit", "-qm", "the server", cwd=workspace)
    sha = git("rev-parse", "HEAD", cwd=workspace)
    give(workspace)
    return {"ref": "refs/heads/main", "after": sha}


def golden(*cases: tuple[str, str]) -> str:
    return "".join(
        json.dumps({"id": f"c{i}", "question": q, "expected_tool": t}) + "\n" for i, (q, t) in enumerate(cases)
    )


REGISTRY = {
    "npx": (
        "server:\n  command: [npx, -y, '@modelcontextprotocol/server-filesystem@2026.8.31', docs]\n",
        {"docs/notes.txt": "hello\n"},
        golden(
            ("Read the complete contents of the file docs/notes.txt", "read_text_file"),
            ("List the files and directories in docs", "list_directory"),
        ),
        "tools from stdio: npx -y @modelcontextprotocol/server-filesystem@2026.8.31 docs",
    ),
    "uvx": (
        "server:\n  command: [uvx, mcp-server-time==2026.10.19, --local-timezone, UTC]\n",
        {},
        golden(("What time is it in Tokyo?", "get_current_time")),
        "2 tools from stdio: uvx mcp-server-time==2026.10.19",
    ),
    "uv run --with": (
        "server:\n  command: [uv, run, --quiet, --no-project, --with, 'mcp==2.3.0', server.py]\n",
        {"server.py": (ROOT / "examples" / "weather" / "server.py").read_text()},
        golden(("Is it raining in Lima right now?", "get_weather")),
        "6 tools from stdio: uv run --quiet --no-project --with mcp==2.3.0 server.py",
    ),
}


@pytest.mark.parametrize("runner", list(REGISTRY))
def test_a_registry_server_runs_in_the_image(image: str, job: Path, runner: str):
    """The image brings Node with npx, and uv with uvx: a server from npm or PyPI starts with the
    command its README gives, fetched by the PR's own user."""
    server, files, cases, listed = REGISTRY[runner]
    event = push(job, {"toolselect.yaml": server + OFFLINE, "golden.jsonl": cases, **files})
    step = container_step(image, job, "push", event, {"working-directory": "."}, CA_ENV)
    assert step.code == 0, step.log[-6000:]
    assert listed in step.log, step.log[-3000:]
    assert root_owned(job / "workspace") == []


def test_a_server_that_needs_docker_says_to_run_on_the_host(image: str, job: Path):
    """The image has no docker: the error names the program and the two ways out."""
    config = "server:\n  command: [docker, run, -i, --rm, 'ghcr.io/acme/weather-mcp:1.4']\n" + OFFLINE
    event = push(job, {"toolselect.yaml": config, "golden.jsonl": golden(("Weather in Oslo?", "get_weather"))})
    step = container_step(image, job, "push", event, {"working-directory": "."})
    assert step.code == 3, step.log[-4000:]
    assert "docker not found" in step.log and "setpriv" not in step.log, step.log[-3000:]
    assert "runner: host" in step.log and "toolselect snapshot -o tools.json" in step.log
    assert root_owned(job / "workspace") == []


SECRETS = {
    "openai-api-key": "sk-probe-openai-4321",
    "github-token": "ghs_probe_token_1357",
    "ACTIONS_RUNTIME_TOKEN": "rt-probe-runtime-2468",
}


def test_the_prs_programs_find_no_secret_and_no_docker_socket(image: str, job: Path):
    """The PR's setup and server read every /proc/*/environ they can (toolselect's, tini's, their
    own) for the keys and tokens the step was given, and try the Docker socket the runner mounts
    (root on the runner's machine): they find nothing and reach nothing."""
    secrets = dict(SECRETS)
    files = {
        "probe.py": (FAKES / "probe.py").read_text(),
        "secrets.json": json.dumps(secrets),
        "tools.json": json.dumps(
            {"tools": [{"name": "get_weather", "description": "Weather.", "inputSchema": {"type": "object"}}]}
        ),
        "dockersock.py": (
            "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
            f"    s.connect({DOCKER_SOCKET!r})\n    open(sys.argv[1], 'w').write('reached')\n"
            "except OSError as e:\n    open(sys.argv[1], 'w').write(type(e).__name__)\n"
        ),
        "golden.jsonl": golden(("Weather in Oslo?", "get_weather")),
    }
    judged = "evals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n  min_accuracy: 0\n"
    config = (
        "server:\n  command: [python3, probe.py, server, secrets.json, /github/workspace/probes, tools.json, stdio]\n"
        "  setup: python3 probe.py setup secrets.json /github/workspace/probes && python3 dockersock.py probes/socket\n"
        + judged
    )
    event = push(job, {"toolselect.yaml": config, **files})
    out = job / "workspace" / "probes"
    out.mkdir()
    give(out)
    inputs = {"working-directory": ".", **{k: v for k, v in secrets.items() if k.islower()}}
    env = {"ACTIONS_RUNTIME_TOKEN": secrets["ACTIONS_RUNTIME_TOKEN"]}
    with FakeModelAPI({**SCRIPT, "key": secrets["openai-api-key"]}) as api:
        step = container_step(image, job, "push", event, inputs | {"openai-base-url": api.url + "/v1"}, env)
        assert api.stats()["requests"] == 1, step.log[-3000:]  # the key reached the model API, and only there
    assert step.code == 0, step.log[-4000:]
    reports = [json.loads(p.read_text()) for p in out.glob("*.json")]
    assert {r["role"] for r in reports} == {"setup", "server"}, reports
    for report in reports:
        assert report["uid"] == 1001 and report["euid"] == 1001, report  # never root
        assert report["read"] >= 1 and report["found"] == [], report  # it looked, and found nothing
    assert (out / "socket").read_text() == "PermissionError"
    assert not any(value in step.shown for value in secrets.values())  # what the runner shows


def test_a_process_that_keeps_forking_writes_no_file_command(image: str, job: Path):
    """The setup leaves a process that keeps forking, each child in a new session, aimed at the
    runner's file commands: in the image every process of the checkout's owner is killed at once as
    the setup ends, checked gone, and only then are the file commands handed back — untouched."""
    files = {
        "hopper.py": (FAKES / "hopper.py").read_text(),
        "probe.py": (FAKES / "probe.py").read_text(),
        "secrets.json": "{}",
        "tools.json": json.dumps(
            {"tools": [{"name": "get_weather", "description": "Weather.", "inputSchema": {"type": "object"}}]}
        ),
        "golden.jsonl": golden(("Weather in Oslo?", "get_weather")),
    }
    aimed = "/github/file_commands/env /github/file_commands/path"
    config = (
        "server:\n  command: [python3, probe.py, server, secrets.json, /github/workspace/probes, tools.json, stdio]\n"
        f"  setup: python3 hopper.py /github/workspace/probes 60 {aimed}\n" + OFFLINE
    )
    event = push(job, {"toolselect.yaml": config, **files})
    out = job / "workspace" / "probes"
    out.mkdir()
    give(out)
    step = container_step(image, job, "push", event, {"working-directory": "."})  # its end ends the hopper too
    assert step.code == 0, step.log[-4000:]
    assert (out / "hopper.beats").exists(), "the control: the hopper did start"
    assert not (out / "hopper.wrote").exists(), (out / "hopper.wrote").read_text()
    assert (job / "files" / "env").read_text() == "" and (job / "files" / "path").read_text() == ""
    assert "running in the background: stopped" in " ".join(step.log.split())
    assert root_owned(job / "workspace") == [] and root_owned(job / "files") == []
