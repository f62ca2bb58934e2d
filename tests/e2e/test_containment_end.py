"""Containment ends after the last program of the pull request (issue 42), each attack reproduced the
way it was found: the Action's container step as GitHub runs it (root under a PID 1 of its own, over
a checkout of the runner's user), or the `runner: host` step as the runner runs a `shell: bash` step.

- a process that keeps forking, each child in a new session, started by a setup line: it outran the
  sweep that reads pids and then kills them, waited for the file commands to be handed back, and
  wrote GITHUB_ENV and GITHUB_PATH;
- suggest asked the run's `command` picker — the pull request's own program — again after the
  file commands, `.git` and HOME had been handed back: it wrote them all.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import FAKES
from tests.e2e.contained import PROBE, PYTHON, Job, host_step, job, run_in_container, run_on_host, runner_uid
from tests.e2e.harness import KEY, Repo, commit_repo, register_pull, run_action
from tests.fakes.model_api import FakeModelAPI

HOPPER = FAKES / "hopper.py"
TOOLS = [
    {"name": "get_weather", "description": "Current weather in a city.", "inputSchema": {"type": "object"}},
    {"name": "get_forecast", "description": "Forecast for a city.", "inputSchema": {"type": "object"}},
]
GOLDEN = "".join(
    json.dumps({"id": f"c{i}", "question": q, "expected_tool": t}) + "\n"
    for i, (q, t) in enumerate((("Weather in Oslo now?", "get_weather"), ("Forecast for Rome?", "get_forecast")))
)


def hopping_repo(root: Path, out: Path, targets: list[Path]) -> Repo:
    """A PR whose setup starts the hopper (it returns at once) aimed at `targets`; its server the
    probe (an MCP server listing tools.json), and the offline bm25 picker."""
    aimed = " ".join(str(t) for t in targets)
    (out / "secrets.json").write_text("{}")
    config = (
        f"server:\n  command: [{PYTHON}, probe.py, server, {out}/secrets.json, {out}, tools.json, stdio]\n"
        f"  setup: {PYTHON} hopper.py {out} 60 {aimed}\n"
        "evals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"
    )
    files = {"hopper.py": HOPPER.read_text(), "probe.py": PROBE.read_text(), "tools.json": json.dumps({"tools": TOOLS}),
             "golden.jsonl": GOLDEN}  # fmt: skip
    return commit_repo(root, {**files, "toolselect.yaml": config}, {"README.md": "head\n"})


@contextmanager
def hopper_stopped_afterwards(out: Path, uid: int | None) -> Iterator[None]:
    """However the test ends, no hopper is left on the machine: it stops when OUT/stop exists (and
    after 60 s by itself); as another uid, everything of that uid is killed too."""
    try:
        yield
    finally:
        (out / "stop").touch()
        if uid is not None and uid != os.getuid():
            user = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
            subprocess.run(["setpriv", *user, "--", "/bin/sh", "-c", "kill -s KILL -- -1"], check=False)
        time.sleep(0.3)


def said(log: str) -> str:
    """The log's words, however the console wrapped its lines."""
    return " ".join(log.split())


def beats(out: Path) -> list[float]:
    path = out / "hopper.beats"
    return [float(t) for t in path.read_text().split()] if path.exists() else []


def test_in_the_container_a_process_that_keeps_forking_is_stopped_before_anything_is_handed_back(world):
    """Root over a checkout of the runner's user: the setup's hopper is stopped at once — every
    process of the owner's uid in one kill that no fork can slip past — and checked gone; the file
    commands, held meanwhile, are handed back untouched."""
    with job() as j:
        out = j.out()
        runner = j.root / "runner"
        aimed = [runner / "env", runner / "path"]
        repo = hopping_repo(j.root, out, aimed)
        with hopper_stopped_afterwards(out, j.uid):
            run = run_in_container(world, j, repo, inputs={"provider": "bm25"})
            ended = time.time()
            time.sleep(1.0)  # a hopper still alive beats again, and writes the handed-back files
            assert run.code in (0, 1), run.stdout + run.stderr
            assert beats(out), "the control: the hopper did start"
            assert max(beats(out)) < ended
            assert not (out / "hopper.wrote").exists(), (out / "hopper.wrote").read_text()
            assert (runner / "env").read_text() == "" and (runner / "path").read_text() == ""
            assert "running in the background: stopped" in said(run.stdout)
            assert (runner / "env").stat().st_uid == j.uid  # handed back, for the runner's later steps
            assert run.outputs["passed"]


def test_on_the_host_a_process_that_keeps_forking_does_not_outlive_the_step(world, tmp_path):
    """`runner: host`: the pull request's programs run as toolselect's own user, so no uid tells them
    apart; toolselect is the init of a PID namespace of its own, and the kernel stops every process
    in it at once. The hopper is stopped when the setup ends, and nothing of it runs after the step."""
    j = Job(tmp_path, os.getuid())
    out = j.out()
    repo = hopping_repo(j.root, out, [j.root / "runner" / "nothing"])
    with hopper_stopped_afterwards(out, None):
        run = run_on_host(world, j, repo, {"provider": "bm25"})
        ended = time.time()
        time.sleep(1.0)
        assert run.code in (0, 1), run.stdout + run.stderr
        assert beats(out), "the control: the hopper did start"
        assert max(beats(out)) < ended
        assert "running in the background: stopped" in said(run.stdout)
        assert "could outrun" not in said(run.stdout)  # this machine allows the namespace: the guarantee holds


UNPRIVILEGED = """import json, os, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from toolselect import sweep
hopper, out = sys.argv[2], sys.argv[3]
why = sweep.own_namespace()
if why:
    print(json.dumps({"why": why}))
    sys.exit(0)
subprocess.run([sys.executable, hopper, out, "30"], check=True)  # returns at once, leaving the hopper
time.sleep(0.5)
swept = time.time()
stopped = sweep.sweep({})
print(json.dumps({"pid": os.getpid(), "uid": os.getuid(), "stopped": stopped, "swept": swept,
                  "unguaranteed": sweep.unguaranteed({})}))
"""


def test_an_unprivileged_user_gets_the_namespace_too(tmp_path):
    """The job's user on a runner (not root) makes the PID namespace with a user namespace that maps
    only itself: it stays itself inside, and its sweep stops a hopper it can't see the pid of."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="toolselect-userns-"))
    try:
        root.chmod(0o755)
        j = Job(root, runner_uid())
        out = j.out()
        shutil.copy(HOPPER, root / "hopper.py")
        (root / "script.py").write_text(UNPRIVILEGED)
        src = str(Path(__file__).resolve().parents[2] / "src")
        user = [f"--reuid={j.uid}", f"--regid={j.uid}", "--clear-groups"]
        with hopper_stopped_afterwards(out, j.uid):
            done = subprocess.run(
                ["setpriv", *user, "--", PYTHON, "-I", str(root / "script.py"), src, str(root / "hopper.py"), str(out)],
                capture_output=True, text=True, timeout=60, cwd=root,
            )  # fmt: skip
            if "Permission denied" in done.stderr and "toolselect" in done.stderr:
                pytest.skip("the source folder can't be read by another user here")
            assert done.returncode == 0, done.stderr
            said = json.loads(done.stdout.splitlines()[-1])
            if "why" in said:
                pytest.skip(f"this kernel refuses an unprivileged PID namespace: {said['why']}")
            time.sleep(0.5)
            assert said["pid"] == 1 and said["uid"] == j.uid and said["unguaranteed"] is None
            assert beats(out), "the control: the hopper did start"
            assert max(beats(out)) < said["swept"] + 0.1
    finally:
        shutil.rmtree(root, ignore_errors=True)


SUGGEST_TOOLS = {
    "base": "Weather for a city over the coming days.",
    "head": "Weather for a city over time, by day.",
    "good": "Forecast: the coming days in a city.",
}
PLANTING_PICKER = """import json, os, sys
# the PR's own picker: each time it is asked, it tries to write the runner's file commands and a git
# hook for every later step of the job, and records what worked
out, targets = sys.argv[1], sys.argv[2:]
for path in targets + [".git/hooks/post-checkout"]:
    try:
        with open(path, "a") as f:
            f.write("BASH_ENV=/tmp/evil.sh\\n" if "hooks" not in path else "#!/bin/sh\\ntouch /tmp/pwned\\n")
        with open(os.path.join(out, "planted"), "a") as log:
            log.write(path + "\\n")
    except OSError:
        pass
request = json.load(sys.stdin)
forecast = next(t["description"] for t in request["tools"] if t["name"] == "get_forecast")
asks_forecast = "tomorrow" in request["prompt"] or "this week" in request["prompt"]
tool = "get_forecast" if asks_forecast and "coming days" in forecast else "get_weather"
print(json.dumps({"tool": tool, "args": {"city": "Oslo"}}))
"""


def suggest_golden() -> str:
    cities = ("Oslo", "Rome", "Lima", "Pune", "Kyiv", "Baku")
    cases = [{"id": f"t-{c}", "question": f"Will it rain tomorrow in {c}?", "expected_tool": "get_forecast"}
             for c in cities]  # fmt: skip
    cases += [{"id": f"w-{c}", "question": f"Will it rain later this week in {c}?", "expected_tool": "get_forecast",
               "split": "holdout"} for c in cities]  # fmt: skip
    cases += [{"id": f"n-{c}", "question": f"How warm is it right now in {c}?", "expected_tool": "get_weather"}
              for c in cities[:2]]  # fmt: skip
    return "".join(json.dumps(c) + "\n" for c in cases)


def test_suggest_asks_the_prs_picker_only_while_everything_is_held(world):
    """suggest (on by default) tries rewrites for the tool whose recall fell, asking the run's first
    model again: with `provider: command` that is the PR's own program. It runs inside the same
    stretch as the eval, so the picker finds the file commands and `.git` root's, and writes nothing
    a later step would run."""
    _, github = world
    with job() as j:
        out = j.out()
        runner = j.root / "runner"
        aimed = [runner / "env", runner / "path"]
        picker = f"[{PYTHON}, pick.py, {out}, " + ", ".join(str(t) for t in aimed) + "]"
        config = (
            "tools_file: tools.json\n"
            f"evals:\n  provider: command\n  command: {picker}\n  rewriter: openai:gpt-4.1\n"
            "  golden: golden.jsonl\n  max_drop: 5\n"
        )

        def tools(description: str) -> str:
            listed = [dict(t) for t in TOOLS]
            listed[1]["description"] = description
            return json.dumps({"tools": listed})

        files = {"pick.py": PLANTING_PICKER, "golden.jsonl": suggest_golden(), "toolselect.yaml": config}
        repo = commit_repo(
            j.root,
            {**files, "tools.json": tools(SUGGEST_TOOLS["base"])},
            {"tools.json": tools(SUGGEST_TOOLS["head"])},
            ignore="toolselect-report/\n.toolselect-cache/\n",
        )
        answer = {"candidates": [{"description": SUGGEST_TOOLS["good"], "why": "clearer"}]}
        rewriter = {"contains": {f"Current description: {SUGGEST_TOOLS['head']}": {"text": json.dumps(answer)}}}
        with FakeModelAPI({**rewriter, "key": KEY}) as api:
            register_pull(github, repo)
            run = run_in_container(
                (api, github), j, repo, inputs={"openai-api-key": KEY, "openai-base-url": f"{api.url}/v1"}
            )
            rewrites_asked = len(api.log)
        assert run.code == 1, run.stdout + run.stderr  # the PR's regression fails the gate
        assert rewrites_asked >= 1, "the control: suggest ran, and asked the rewriter"
        # the rewrite passed its held-out test: the picker was asked again, in suggest
        assert "💡 `get_forecast`: held-out accuracy 1/7 → 7/7" in (run.report_dir / "comment.md").read_text()
        assert not (out / "planted").exists(), (out / "planted").read_text()
        assert "BASH_ENV" not in (runner / "env").read_text() + (runner / "path").read_text()
        assert not (repo.path / ".git" / "hooks" / "post-checkout").exists()
        assert (runner / "env").stat().st_uid == j.uid and (repo.path / ".git").stat().st_uid == j.uid


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_cancelled_host_job_stops_cleanly_through_the_namespace(tmp_path, number):
    """On `runner: host` the runner signals the step's process — now the parent outside toolselect's
    PID namespace — when a job is cancelled: the signal reaches toolselect inside, which stops the
    run, keeps the answers it has, and exits 130; nothing of the step is left running."""
    from tests.e2e.harness import SCRIPT, TOKEN, make_repo
    from tests.fakes.github_api import FakeGitHub

    with FakeModelAPI({**SCRIPT, "latency": 1.0}) as api, FakeGitHub({TOKEN: "github-actions[bot]"}) as github:
        repo = make_repo(tmp_path)
        inputs = {
            "working-directory": "evals",
            "runner": "host",
            "concurrency": "1",
            "openai-api-key": KEY,
            "openai-base-url": f"{api.url}/v1",
        }
        argv, env = host_step(inputs, Path(sys.prefix), tmp_path)

        def cancel(step: subprocess.Popen) -> None:
            while api.stats()["requests"] < 2 and step.poll() is None:
                time.sleep(0.1)
            step.send_signal(number)  # what the runner sends: SIGINT, then SIGTERM

        run = run_action(
            repo.path, tmp_path, inputs=inputs, event=None, event_name="push", api=api, github=github, argv=argv,
            env=env, meanwhile=cancel,
        )  # fmt: skip
    assert run.code == 130, run.stdout + run.stderr
    assert "interrupted: the answers received so far are kept in the answer cache" in said(run.stdout + run.stderr)
    assert any(p.is_file() for p in (repo.path / "evals" / ".toolselect-cache").rglob("*"))
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _in(pid, str(repo.path))]


def _in(pid: str, folder: str) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/cwd").startswith(folder)
    except OSError:
        return False
