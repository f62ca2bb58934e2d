"""The Action's container step as GitHub runs it, for the attacks of a pull request: toolselect as
root under a PID 1 that holds the whole container environment (the image's tini), over a checkout,
file commands, HOME and RUNNER_TEMP owned by the runner's unprivileged user — here a uid of the
test's own, so that killing "every process of that uid" touches nothing else on the machine."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import FAKES, ROOT
from tests.e2e.harness import TOKEN, ActionRun, Repo, pull_request_event, run_action

_next = itertools.count()
PID1 = FAKES / "pid1.py"
PROBE = FAKES / "probe.py"
# the probe's interpreter: one every user can run (the tests' own may live under a private home)
PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "python3"


def runner_uid() -> int:
    """A uid no other test (nor the machine) uses at the same time: one per call, per worker."""
    return 200_000 + (os.getpid() % 50_000) * 64 + next(_next) % 64


def needs_root() -> None:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv, as in the Action's container")


@dataclass
class Job:
    """One job's folders on the runner: `root` holds the checkout (`workspace`), the file commands
    (`runner/`), HOME (`github-home/`) and RUNNER_TEMP; `uid` owns them all."""

    root: Path
    uid: int

    def out(self, name: str = "probes") -> Path:
        """A folder the PR's programs can write their findings to."""
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        os.chown(folder, self.uid, self.uid)
        return folder

    def give(self, *paths: Path) -> None:
        """Everything under `paths` to the runner's user, as actions/checkout leaves it."""
        for top in paths:
            for path in (top, *top.rglob("*")):
                os.chown(path, self.uid, self.uid, follow_symlinks=False)

    def secrets(self, values: dict[str, str]) -> Path:
        """The secrets a probe looks for, in a file it can read."""
        path = self.root / "secrets.json"
        path.write_text(json.dumps(values))
        path.chmod(0o644)
        return path


@contextmanager
def job() -> Iterator[Job]:
    needs_root()
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="toolselect-job-"))
    root.chmod(0o755)
    try:
        yield Job(root, runner_uid())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_in_container(
    world, job: Job, repo: Repo, *, inputs=None, env=None, event_name="pull_request", timeout: float = 240
) -> ActionRun:
    """The Action on PR 7 as its container step: root, the checkout's owner the runner's user, tini."""
    api, github = world
    job.give(repo.path)
    return run_action(
        repo.path,
        job.root,
        inputs={"working-directory": ".", **(inputs or {})},
        event=pull_request_event(repo) if event_name == "pull_request" else None,
        event_name=event_name,
        api=api,
        github=github,
        env={"TOOLSELECT_IMAGE": "1", **(env or {})},
        argv=[sys.executable, str(PID1), sys.executable, str(ROOT / "entrypoint.py")],
        owner=job.uid,
        timeout=timeout,
    )


def probes(folder: Path, role: str | None = None) -> list[dict]:
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return [p for p in found if role is None or p["role"] == role]


@contextmanager
def holding(env: dict[str, str]) -> Iterator[int]:
    """A process (as root) whose environment holds `env`, as PID 1 holds the container's: a probe's
    control, to show that the secrets are in reach of whoever can read root's environments."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ, **env}, stdin=subprocess.DEVNULL
    )
    try:
        time.sleep(0.2)
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def probe_as(uid: int | None, secrets: Path, out: Path) -> dict:
    """Run the probe once by hand (as `uid`, or as root): what it could find."""
    user = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if uid is not None else []
    proc = subprocess.run(
        [*user, PYTHON, str(PROBE), "control", str(secrets), str(out)], capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    [found] = probes(out, "control")
    for path in out.glob("control-*.json"):
        path.unlink()
    return found


# ----------------------------------------------------------------------------- runner: host

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = {s.get("id"): s for s in ACTION["runs"]["steps"]}
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def host_step(inputs: dict[str, str], host_env: Path, tmp: Path) -> tuple[list[str], dict]:
    """The `runner: host` eval step as the runner runs a `shell: bash` step: its `run:` written to a
    file, `bash --noprofile --norc -e -o pipefail FILE`, with action.yml's `env:` block evaluated
    (`${{ inputs.x }}`: the input or its default; the host environment's folder)."""
    step = STEPS["eval-host"]
    token = {"${{ github.token }}": TOKEN}  # what GitHub evaluates a default to
    defaults = {
        name: token.get(str(spec.get("default", "")), str(spec.get("default", "")))
        for name, spec in ACTION["inputs"].items()
    }

    def value(expression: str) -> str:
        if expression.startswith("inputs."):
            name = expression.removeprefix("inputs.")
            return inputs.get(name, defaults[name])
        if expression == "runner.temp":  # as run_action gives the job its RUNNER_TEMP
            return str(tmp / "runner-temp")
        assert expression == "steps.host-env.outputs.dir", expression
        return str(host_env)

    env = {name: EXPRESSION.sub(lambda m: value(m.group(1)), str(text)) for name, text in step["env"].items()}
    script = tmp / "step.sh"
    script.write_text(step["run"])
    return ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", str(script)], env


def run_on_host(world, job: Job, repo: Repo, inputs: dict[str, str]) -> ActionRun:
    """The Action on PR 7 as its `runner: host` step (the job's user: this test's), `inputs` on top of
    the working directory and the runner."""
    api, github = world
    inputs = {"working-directory": ".", "runner": "host", **inputs}
    argv, env = host_step(inputs, Path(sys.prefix), job.root)
    return run_action(
        repo.path, job.root, inputs=inputs, event=pull_request_event(repo), event_name="pull_request", api=api,
        github=github, argv=argv, env=env,
    )  # fmt: skip


def commands_run(log: str) -> list[str]:
    """The workflow commands the runner executes in a step's log, as it reads them: a line that
    starts with `::`, unless a `::stop-commands::<token>` came before it and no `::<token>::` since."""
    run, stopped = [], None
    for line in log.splitlines():
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        if line.startswith("::stop-commands::"):
            stopped = line.removeprefix("::stop-commands::")
        elif line.startswith("::"):
            run.append(line)
    return run
