"""A `uses: docker://…` step as GitHub's runner runs it, for the container suite: `docker run` as
root with the job's folders mounted where GitHub mounts them (the checkout at /github/workspace,
HOME, the event, the file commands), every input of action.yml present as INPUT_<NAME> (dashes
kept), the workflow's `env:` passed through, and the host's network (the fakes listen on 127.0.0.1).
The runner's user (uid 1001) owns the checkout and every mounted folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.e2e.harness import git, parse_outputs

BASE = "toolselect-stand-in-base:bookworm"  # built by stand-in-base.sh where Docker Hub can't be reached
IMAGE = "toolselect-under-test:latest"
RUNNER_UID = 1001  # GitHub's runner user
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
# where the image keeps the CA bundle (the stand-in base carries this machine's extra CAs): a
# workflow behind such a proxy passes these in its `env:`, as the test does
CA_ENV = {
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "NODE_EXTRA_CA_CERTS": "/etc/ssl/certs/ca-certificates.crt",
}
MOUNTS = {"workspace": "/github/workspace", "home": "/github/home", "workflow": "/github/workflow",
          "files": "/github/file_commands", "runner_temp": "/github/runner_temp"}  # fmt: skip
DOCKER_SOCKET = "/var/run/docker.sock"  # the runner mounts it into every container step


@dataclass
class Step:
    code: int
    log: str
    outputs: dict[str, str]
    summary: str

    @property
    def shown(self) -> str:
        """The log as the runner shows it: each `::add-mask::` line consumed and its value masked
        from there on (not inside a `::stop-commands::` stretch, where the runner acts on no command)."""
        masks: list[str] = []
        stopped, lines = None, []
        for line in self.log.splitlines():
            if stopped is None and line.startswith("::stop-commands::"):
                stopped = line.removeprefix("::stop-commands::")
            elif stopped is None and line.startswith("::add-mask::"):
                masks = sorted({*masks, line.removeprefix("::add-mask::")} - {""}, key=len, reverse=True)
            elif stopped is not None and line == f"::{stopped}::":
                stopped = None
            else:
                for value in masks:
                    line = line.replace(value, "***")
                lines.append(line)
        return "\n".join(lines)


def give(top: Path) -> None:
    """Hand a folder to the runner's user, as actions/checkout leaves the checkout."""
    for path in (top, *top.rglob("*")):
        os.chown(path, RUNNER_UID, RUNNER_UID, follow_symlinks=False)


def root_owned(top: Path) -> list[Path]:
    """What the runner's user could not delete afterwards."""
    return [p for p in (top, *top.rglob("*")) if p.lstat().st_uid == 0]


def example_checkout(workspace: Path) -> str:
    """A checkout of the bundled example exactly as the repository ships it; its commit's sha."""
    for name in git("ls-files", "examples/weather", cwd=ROOT).splitlines():
        target = workspace / Path(name).relative_to("examples/weather")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, target)
    git("init", "-q", "-b", "main", cwd=workspace)
    git("add", ".", cwd=workspace)
    git("commit", "-qm", "the example", cwd=workspace)
    return git("rev-parse", "HEAD", cwd=workspace)


class Running:
    """A container step under way: `wait()` for its end, `interrupt()` it as a cancelled job is."""

    def __init__(self, image: str, job: Path, event_name: str, event: dict, inputs: dict[str, str],
                 env: dict[str, str], mounts: dict[Path, str] | None = None) -> None:  # fmt: skip
        self.job, self.name = job, f"toolselect-test-{uuid.uuid4().hex[:12]}"
        for folder in MOUNTS:
            (job / folder).mkdir(exist_ok=True)
        (job / "workflow" / "event.json").write_text(json.dumps(event))
        for name in ("output", "summary", "env", "path", "state"):
            (job / "files" / name).touch()
        for folder in ("home", "workflow", "files", "runner_temp"):
            give(job / folder)
        values = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
        values = {k: "" if "${{" in v else v for k, v in values.items()} | inputs
        variables = {f"INPUT_{name.upper()}": value for name, value in values.items()} | {
            "HOME": "/github/home", "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": "/github/workspace",
            "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_OUTPUT": "/github/file_commands/output", "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
            "GITHUB_ENV": "/github/file_commands/env", "GITHUB_PATH": "/github/file_commands/path",
            "GITHUB_STATE": "/github/file_commands/state", "GITHUB_REPOSITORY": "acme/weather-mcp",
            "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
            "RUNNER_OS": "Linux", "RUNNER_TEMP": "/github/runner_temp",
            "ACTIONS_RUNTIME_TOKEN": "rt-job-runtime-token",
        } | env  # fmt: skip
        argv = ["docker", "run", "--rm", "--name", self.name, "--network", "host", "--workdir", "/github/workspace"]
        for folder, target in MOUNTS.items():
            argv += ["-v", f"{job / folder}:{target}"]
        argv += ["-v", f"{DOCKER_SOCKET}:{DOCKER_SOCKET}"]
        for source, target in (mounts or {}).items():  # what an earlier step brought (actions/cache), read-only
            argv += ["-v", f"{source}:{target}:ro"]
        for key in variables:
            argv += ["-e", key]
        self.log = job / "step.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [*argv, image], env={**os.environ, **variables}, stdout=log, stderr=subprocess.STDOUT
            )

    def seen(self, text: str, timeout: float = 300) -> None:
        """Wait until the step's log shows `text`."""
        deadline = time.monotonic() + timeout
        while text not in self.log.read_text(errors="replace"):
            assert self.proc.poll() is None, f"the step ended before {text!r}:\n{self.log.read_text()[-4000:]}"
            assert time.monotonic() < deadline, f"no {text!r} in {timeout} s:\n{self.log.read_text()[-4000:]}"
            time.sleep(0.2)

    def interrupt(self) -> None:
        """What the runner does to a cancelled job's container step: SIGINT to its PID 1 (tini)."""
        subprocess.run(["docker", "kill", "--signal", "INT", self.name], check=True, capture_output=True)

    def wait(self, timeout: float = 600) -> Step:
        code = self.proc.wait(timeout=timeout)
        left = subprocess.run(["docker", "ps", "-aq", "--filter", f"name={self.name}"], capture_output=True, text=True)
        assert left.stdout.strip() == "", "the step's container is left behind"
        files = self.job / "files"
        return Step(
            code,
            self.log.read_text(errors="replace"),
            parse_outputs((files / "output").read_text()),
            (files / "summary").read_text(),
        )


def container_step(image: str, job: Path, event_name: str, event: dict, inputs: dict[str, str],
                   env: dict[str, str] | None = None, mounts: dict[Path, str] | None = None) -> Step:  # fmt: skip
    """Run the step to its end."""
    return Running(image, job, event_name, event, inputs, env or {}, mounts).wait()


# ----------------------------------------------------------------------------- what the image costs

BUDGET = ROOT / "bench" / "image-budget.json"  # recorded by `python bench/image.py --write`


@dataclass
class Layer:
    step: str  # the Dockerfile step that made it, as `docker history` tells it, content hashes left out
    bytes: int


def step_of(created_by: str) -> str:
    """`/bin/sh -c #(nop) COPY file:<hash> in /opt/x` → `COPY /opt/x`; `|2 A=1 /bin/sh -c cmd …` → `RUN cmd …`."""
    text = " ".join(created_by.split())
    if "#(nop) " in text:
        text = text.split("#(nop) ", 1)[1]
        if text.startswith(("COPY ", "ADD ")) and " in " in text:
            return f"{text.split()[0]} {text.rsplit(' in ', 1)[1]}"
        return text
    return "RUN " + text.split("/bin/sh -c ", 1)[-1][:70]


def layers_added(image: str, base: str) -> list[Layer]:
    """The layers the Dockerfile adds on its base, bottom first (steps that add no files left out)."""

    def history(name: str) -> list[tuple[int, str]]:
        command = ["docker", "history", "--no-trunc", "--human=false", "--format", "{{.Size}}\t{{.CreatedBy}}", name]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        rows = [line.split("\t", 1) for line in done.stdout.splitlines()]
        return [(int(size), created) for size, created in reversed(rows)]

    ours = history(image)[len(history(base)) :]
    return [Layer(step_of(created), size) for size, created in ours if size > 0]


def over_budget(layers: list[Layer], budget: dict) -> list[str]:
    """What grew or shrank past the budget: each layer within 10% or 1 MB (the larger), the total within 10%."""
    recorded = [Layer(x["step"], x["bytes"]) for x in budget["layers"]]
    if [x.step for x in layers] != [x.step for x in recorded]:
        return [f"the image's steps changed: {[x.step for x in recorded]} → {[x.step for x in layers]}"]
    found = []
    for now, then in zip(layers, recorded, strict=True):
        if abs(now.bytes - then.bytes) > max(0.10 * then.bytes, 1_000_000):
            found.append(f"{now.step}: {then.bytes / 1e6:.1f} MB → {now.bytes / 1e6:.1f} MB")
    total, was = sum(x.bytes for x in layers), sum(x.bytes for x in recorded)
    if abs(total - was) > 0.10 * was:
        found.append(f"all the Dockerfile's layers: {was / 1e6:.1f} MB → {total / 1e6:.1f} MB")
    return found
