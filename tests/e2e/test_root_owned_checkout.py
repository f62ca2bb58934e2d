"""A checkout the runner's user does not own: a container job checks out as root into the runner's
folder, a self-hosted runner runs as root. The pull request's setup builds in its folder on the first
run — toolselect hands the checkout over before any program starts — or is stopped at once with a
message that says who runs it, which folder it can't write and what to do."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import FAKES, ROOT
from tests.e2e.contained import PID1, PYTHON, job
from tests.e2e.harness import TOOLS, commit_repo, pull_request_event, register_pull, run_action
from toolselect.contain import NOBODY, Confinement, set_stretch
from toolselect.errors import InfraError
from toolselect.surface.launch import run_setup
from toolselect.surface.spec import ServerSpec


# a server that is built first: its setup writes into its folder, as `npm run build` or `pip --target` do
# (the server: the standard-library probe, which any user's python3 runs)
def built(out: Path) -> dict[str, str]:
    files = {
        "probe.py": (FAKES / "probe.py").read_text(),
        "secrets.json": "{}",
        "tools.json": json.dumps({"tools": TOOLS}),
        "golden.jsonl": json.dumps(
            {"id": "c0", "question": "Is it raining in Lima now?", "expected_tool": "get_weather"}
        )
        + "\n",
        "toolselect.yaml": (
            f"server:\n  command: [{PYTHON}, build/probe.py, server, secrets.json, {out}, tools.json, stdio]\n"
            "  setup: mkdir -p build && cp probe.py build/probe.py\n"
            "evals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"
        ),
    }
    return {f"mcp/{name}": text for name, text in files.items()}  # the server's own folder in the repository


def root_owned(top: Path) -> list[Path]:
    return [p for p in (top, *top.rglob("*")) if ".git" not in p.parts and p.lstat().st_uid == 0]


@pytest.mark.parametrize("whose", ["a container job's", "a root runner's"])
def test_a_root_owned_checkout_builds_on_the_first_run(world, tmp_path: Path, whose: str):
    with job() as j:
        out = j.out()
        out.chmod(0o777)  # nobody writes its findings there too
        repo = commit_repo(j.root, built(out), {"README.md": "a server\n"})
        register_pull(world[1], repo)
        if whose == "a container job's":
            os.chown(repo.path, j.uid, j.uid)  # the runner made the folder; the checkout (as root) filled it
        assert len(root_owned(repo.path)) > 3
        run = run_action(
            repo.path, j.root, inputs={"working-directory": "mcp"}, event=pull_request_event(repo),
            event_name="pull_request", api=world[0], github=world[1], env={"TOOLSELECT_IMAGE": "1"},
            argv=[sys.executable, str(PID1), sys.executable, str(ROOT / "entrypoint.py")], owner=j.uid,
        )  # fmt: skip
        assert run.code == 0, run.stdout + run.stderr
        assert "server setup done in" in run.stdout and "PermissionError" not in run.stdout + run.stderr
        made = repo.path / "mcp" / "build" / "probe.py"
        if whose == "a container job's":  # the runner's user builds, and keeps its checkout
            assert made.stat().st_uid == j.uid and root_owned(repo.path) == []
        else:  # nobody built (never root); what was root's is root's again
            assert made.stat().st_uid == NOBODY[0] and (repo.path / "mcp" / "probe.py").stat().st_uid == 0


def test_a_setup_that_cannot_write_its_folder_says_who_what_and_how(tmp_path: Path):
    """Where the checkout can't be handed over (toolselect not root), a setup that fails in a folder its
    user can't write says so: who ran it, the folder, its owner and mode, and the chown that fixes it."""
    folder = tmp_path / "server"
    folder.mkdir()
    folder.chmod(0o755)  # root's (the tests run as root), as a root-owned checkout is
    as_runner = Confinement((65534, 65534), shutil.which("setpriv"), action=True)
    set_stretch("within")
    try:
        spec = ServerSpec(command=("python", "server.py"), cwd=folder, place="toolselect.yaml:2: ")
        with pytest.raises(InfraError) as raised:
            asyncio.run(run_setup("mkdir -p build", spec, lambda _: None, as_runner))
    finally:
        set_stretch("before")
    said = raised.value.message + " " + (raised.value.hint or "")
    assert said.startswith("toolselect.yaml:2: server setup `mkdir -p build` failed: exit code 1")
    assert (
        f"it ran as nobody (uid 65534: the checkout is root's, and they never run as root), which cannot write "
        f"{folder} (owned by uid 0, mode 755)" in said
    )
    assert "run the job (or the self-hosted runner) as an unprivileged user" in said
    as_runner_1001 = Confinement((1001, 1001), "/usr/bin/setpriv", action=True)
    assert as_runner_1001.cannot_write(folder / "build" / "dist") == folder  # the first folder that exists
    folder.chmod(0o777)
    assert as_runner_1001.cannot_write(folder) is None
    assert Confinement(None, None).cannot_write(folder) is None  # as itself (root here)
