"""What the README and the docs show is what the project produces, and the README stays a
newcomer's five minutes."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

README_LINES = 250
OFFLINE_EVAL = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && "
    "toolselect eval -c examples/weather/toolselect.yaml"
)
TEST_COMMAND = "python -m pip install -e '.[test]' && bash tests/install-servers.sh && python -m pytest"


def between(text: str, name: str) -> str:
    return text.split(f"<!-- {name}:start -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0].strip("\n")


def test_the_example_comments_are_generated_not_handwritten():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "example_comment.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    action = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    top, whole = between(readme, "example-comment-top"), between(action, "example-comment")
    assert top.startswith("### ❌ toolselect failed: accuracy")  # the blocks are filled in
    assert whole.startswith(top + "\n")  # the README shows the comment's own first screen, table included
    assert top.splitlines()[-1].startswith("|") and "Confusion cells" not in top
    assert "#### 🔻 toolselect: the model picks `get_forecast` worse since this change" in between(
        action, "example-review"
    )
    trajectories = (ROOT / "docs" / "trajectories.md").read_text(encoding="utf-8")
    assert between(trajectories, "example-trajectory").startswith("**Trajectories**")


def test_the_cli_reference_is_generated_from_the_real_help():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    made_with = re.search(r"\(Python (\d+\.\d+),", text)
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if made_with and made_with.group(1) != running:
        pytest.skip(f"docs/cli.md is made with Python {made_with.group(1)}'s argparse; this is {running}")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_docs.py"), "--check"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for command in ("eval", "stress", "diff", "merge", "lint", "init", "snapshot", "cache", "action"):
        assert f"## `toolselect {command}`" in text, command


def test_the_readme_is_short_and_its_commands_are_the_real_ones():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_LINES, "the README is for a newcomer: move reference text to docs/"
    first_yaml = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "uses: org/tool-select-action@v1" in first_yaml  # the Action snippet comes first
    assert OFFLINE_EVAL in readme.splitlines() and TEST_COMMAND in readme.splitlines()
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text().splitlines()  # CI runs what the README says
