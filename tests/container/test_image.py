"""The Action's image, built and run as GitHub runs its container step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.xdist_group("container")  # one worker builds and runs the image

RUNNER_UID = 1001  # GitHub's runner user: it owns the checkout, HOME and the file commands
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


@dataclass
class Step:
    code: int
    log: str
    outputs: dict[str, str]
    summary: str


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def parse_outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: `name<<delimiter` … `delimiter`, or `name=value`."""
    out, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            collected = []
            for more in lines:
                if more == delimiter:
                    break
                collected.append(more)
            out[name] = "\n".join(collected)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def give(top: Path) -> None:
    for path in (top, *top.rglob("*")):
        os.chown(path, RUNNER_UID, RUNNER_UID, follow_symlinks=False)


def container_step(image: str, job: Path, event_name: str, event: dict, inputs: dict[str, str]) -> Step:
    """`docker run` as the runner runs a `uses: docker://…` step: root in the container, the job's
    folders mounted where GitHub mounts them, every input present (INPUT_ with its dashes)."""
    mounts = {"workspace": "/github/workspace", "home": "/github/home", "workflow": "/github/workflow",
              "files": "/github/file_commands"}  # fmt: skip
    for name in mounts:
        (job / name).mkdir(exist_ok=True)
    (job / "workflow" / "event.json").write_text(json.dumps(event))
    for name in ("output", "summary", "env", "path", "state"):
        (job / "files" / name).touch()
    for name in ("home", "workflow", "files"):
        give(job / name)
    values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    values = {k: "" if "${{" in v else v for k, v in values.items()} | inputs
    env = {f"INPUT_{name.upper()}": value for name, value in values.items()} | {
        "HOME": "/github/home", "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_OUTPUT": "/github/file_commands/output", "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
        "GITHUB_ENV": "/github/file_commands/env", "GITHUB_PATH": "/github/file_commands/path",
        "GITHUB_STATE": "/github/file_commands/state", "GITHUB_REPOSITORY": "acme/weather-mcp",
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "4242", "RUNNER_OS": "Linux",
    }  # fmt: skip
    name = f"toolselect-test-{uuid.uuid4().hex[:12]}"
    argv = ["docker", "run", "--rm", "--name", name, "--network", "host", "--workdir", "/github/workspace"]
    for folder, target in mounts.items():
        argv += ["-v", f"{job / folder}:{target}"]
    for key in env:
        argv += ["-e", key]
    done = subprocess.run([*argv, image], env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    left = subprocess.run(["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the step's container is left behind"
    return Step(
        done.returncode,
        done.stdout + done.stderr,
        parse_outputs((job / "files" / "output").read_text()),
        (job / "files" / "summary").read_text(),
    )


def root_owned(top: Path) -> list[Path]:
    return [p for p in (top, *top.rglob("*")) if p.lstat().st_uid == 0]


@pytest.fixture
def job(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


def test_a_push_on_the_bundled_example_as_shipped(image: str, job: Path):
    """The example exactly as the repository ships it, evaluated offline (bm25) in the image: its
    setup installs the server's MCP SDK (the image's python has none), the run passes, the outputs
    and the summary arrive, and the runner's user still owns every file of its checkout."""
    workspace = job / "workspace"
    shipped = git("ls-files", "examples/weather", cwd=ROOT).splitlines()  # what the repository ships
    for name in shipped:
        (workspace / Path(name).relative_to("examples/weather")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, workspace / Path(name).relative_to("examples/weather"))
    git("init", "-q", "-b", "main", cwd=workspace)
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".", cwd=workspace)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the example", cwd=workspace)
    sha = git("rev-parse", "HEAD", cwd=workspace)
    give(workspace)
    step = container_step(image, job, "push", {"ref": "refs/heads/main", "after": sha}, {"working-directory": "."})
    assert step.code == 0, step.log[-6000:]
    assert "server setup done" in step.log
    assert step.outputs["passed"] == "true" and step.outputs["accuracy"] == "0.7381", step.outputs
    assert "toolselect passed: accuracy 73.8%" in step.summary
    assert root_owned(workspace) == []
