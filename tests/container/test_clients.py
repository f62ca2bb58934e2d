"""A real client driven in the Action's image: Claude Code (as tests/install-servers.sh installed it),
brought into the job's HOME as actions/cache brings it, run for each sample by the eval as the
runner's user — never root — in a folder of root's own, against the fake model API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.container.step import container_step, give, root_owned
from tests.e2e.harness import CLAUDE_CODE_SCRIPT, KEY, client_program, commit_repo, weather_tools
from tests.fakes.model_api import FakeModelAPI

pytestmark = pytest.mark.xdist_group("container")

TOOLS = weather_tools()
SCRIPT = CLAUDE_CODE_SCRIPT
CASES = [
    {"id": "paris", "question": "Is it raining in Paris?", "expected_tool": "get_weather",
     "expected_args": {"city": "Paris"}},
    {"id": "files", "question": "List the files here", "expected_tool": None},
]  # fmt: skip
CONFIG = (
    "tools_file: tools.json\nevals:\n  provider: anthropic\n  model: claude-sonnet-4-5\n  golden: golden.jsonl\n"
    "  min_accuracy: 0\n  server_name: weather\n  clients: [claude-code]\n  client_mode: real\n"
)
HELD = "/github/home/.cache/toolselect/clients/claude-code/2.1.332"  # where action.yml's cache step restores it


def test_the_image_drives_claude_code_as_the_runners_user(image: str, tmp_path: Path):
    tmp_path.chmod(0o755)
    program = client_program("claude-code", "2.1.332", "claude")
    files = {"tools.json": json.dumps({"tools": TOOLS}), "golden.jsonl": "".join(json.dumps(c) + "\n" for c in CASES),
             "toolselect.yaml": CONFIG}  # fmt: skip
    ignore = ".toolselect-cache/\ntoolselect-report/\n"
    repo = commit_repo(tmp_path, files, {"README.md": "the weather server\n"}, ignore)
    give(repo.path)
    inputs = {"working-directory": ".", "anthropic-api-key": KEY, "openai-base-url": ""}
    with FakeModelAPI(SCRIPT) as api:
        step = container_step(
            image, tmp_path, "push", {"ref": "refs/heads/main", "after": repo.head},
            inputs | {"anthropic-base-url": api.url}, mounts={program.parents[2]: HELD},
        )  # fmt: skip
        said = [json.dumps(e["body"]) for e in api.log]
    assert step.code == 0, step.log[-6000:]
    assert f"claude-code 2.1.332 restored from the cache: {HELD}" in step.log
    report = json.loads((repo.path / "toolselect-report" / "report.json").read_text())
    client = report["run"]["client"]
    assert client["driven"] == "2.1.332"  # the real client, never its profile
    by = {c["name"]: c["samples"][0] for c in report["cases"]}
    assert by["paris"]["outcome"] == "PASS", by["paris"]
    assert by["files"]["picked_tool"] == "(built-in: Bash)"
    # the client is kept in the job's HOME, where an earlier step could plant files: each sample ran in root's folder
    assert said and all("/var/lib/toolselect/runs/toolselect-client-" in body for body in said)
    # a container step has no capability to make a network namespace: the report says what the client could reach
    assert client["network"].startswith("the machine's (no network namespace could be made")
    assert root_owned(repo.path) == []
