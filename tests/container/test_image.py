"""The Action's image, built and run as GitHub runs its container step: the bundled example as the
repository ships it."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import pytest

from tests.container.step import (
    BASE,
    BUDGET,
    RUNNER_UID,
    Layer,
    container_step,
    example_checkout,
    give,
    layers_added,
    over_budget,
    root_owned,
)

pytestmark = pytest.mark.xdist_group("container")  # one worker builds and runs the image


@pytest.fixture
def job(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    return tmp_path


@pytest.mark.parametrize("checkout", ["the runner's", "a container job's"])
def test_a_push_on_the_bundled_example_as_shipped(image: str, job: Path, checkout: str):
    """The example exactly as the repository ships it, evaluated offline (bm25) in the image: its
    setup installs the server's MCP SDK (the image's python has none), the run passes, the outputs
    and the summary arrive, and the runner's user still owns every file of its checkout. A container
    job checks out as root into the runner's folder: the setup builds all the same on the first run
    (toolselect hands the checkout over before any program of the PR starts)."""
    workspace = job / "workspace"
    workspace.mkdir()
    sha = example_checkout(workspace)
    (give if checkout == "the runner's" else give_folder_only)(workspace)
    step = container_step(image, job, "push", {"ref": "refs/heads/main", "after": sha}, {"working-directory": "."})
    assert step.code == 0, step.log[-6000:]
    assert "server setup done" in step.log
    assert step.outputs["passed"] == "true" and step.outputs["accuracy"] == "0.7381", step.outputs
    assert "toolselect passed: accuracy 73.8%" in step.summary
    assert root_owned(workspace) == []


def give_folder_only(workspace: Path) -> None:
    """The runner made the folder; a container job's checkout (as root) filled it."""
    os.chown(workspace, RUNNER_UID, RUNNER_UID)
    assert len(root_owned(workspace)) > 5


def test_the_image_stays_within_its_size_budget(image: str):
    """Growth is a decision: each layer the Dockerfile adds stays within 10% (or 1 MB) of the size
    recorded in bench/image-budget.json, and all of them together within 10%."""
    budget = json.loads(BUDGET.read_text())
    if os.environ.get("TOOLSELECT_IMAGE_UNDER_TEST") or budget["base"] != BASE:
        pytest.skip("the budget is recorded for an image built here on the stand-in base")
    if platform.machine() != budget["machine"]:
        pytest.skip(f"the budget is recorded on {budget['machine']}, this machine is {platform.machine()}")
    grown = over_budget(layers_added(image, BASE), budget)
    assert grown == [], "\n".join(grown) + "\nif that is meant, re-record: python bench/image.py --write"


def test_the_budget_notices_a_layer_that_grew_and_a_step_that_changed():
    """The check itself (no Docker): within 10% passes, a layer twice its size or a new step fails."""
    budget = {
        "layers": [{"step": "RUN apt-get install git", "bytes": 200_000_000}, {"step": "COPY /src", "bytes": 1000}]
    }
    assert over_budget([Layer("RUN apt-get install git", 215_000_000), Layer("COPY /src", 900_000)], budget) == []
    grown = over_budget([Layer("RUN apt-get install git", 400_000_000), Layer("COPY /src", 1000)], budget)
    assert grown[0] == "RUN apt-get install git: 200.0 MB → 400.0 MB" and "all the Dockerfile's layers" in grown[1]
    assert "steps changed" in over_budget([Layer("RUN apt-get install git", 200_000_000)], budget)[0]
