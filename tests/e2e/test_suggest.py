"""The Action's `suggest` end to end: a PR rewords get_forecast so the model picks get_weather
instead; rewrites are tried, held to the held-out test, and only the one that passes is suggested —
as a one-click suggestion on the description's line when it is in the PR's diff (applied and
re-parsed here), as a folded patch in the PR comment when it isn't (applied with git here). A
re-run asks nothing new and posts nothing twice. The fake GitHub's REST shapes are checked against
GitHub's OpenAPI description and its GraphQL runs on GitHub's schema."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.harness import (
    TOKEN,
    commit_repo,
    git,
    register_pull,
    run_pull_request,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

BASE = "Weather for a city over the coming days."
CONFUSING = "Weather for a city over time, by day."
GOOD = "Forecast: the coming days in a city."
TUNING_ONLY = "Forecast for tomorrow in a city."
GREEDY = "Coming days in a city, or right now."
CITIES = ("Oslo", "Rome", "Lima", "Pune", "Kyiv", "Baku")

SERVER = """from mcp.server.mcpserver import MCPServer

mcp = MCPServer("weather")


@mcp.tool(description="Weather for a city right now.")
def get_weather(city: str) -> str:
    return city


@mcp.tool(description="{forecast}")
def get_forecast(city: str) -> str:
    return city


if __name__ == "__main__":
    mcp.run()
"""


def golden() -> str:
    cases = [{"id": f"tomorrow-{c}", "question": f"Will it rain tomorrow in {c}?", "expected_tool": "get_forecast"}
             for c in CITIES]  # fmt: skip
    cases += [{"id": f"week-{c}", "question": f"Will it rain later this week in {c}?", "expected_tool": "get_forecast",
               "split": "holdout"} for c in CITIES]  # fmt: skip
    cases += [{"id": f"now-{c}", "question": f"How warm is it right now in {c}?", "expected_tool": "get_weather",
               **({"split": "holdout"} if i % 2 else {})} for i, c in enumerate(CITIES[:4])]  # fmt: skip
    return "".join(json.dumps(c) + "\n" for c in cases)


def script(current: str, candidates: list[str]) -> dict:
    """get_forecast is picked only while its description says "coming days" (or "tomorrow", for the
    tomorrow prompts: the rewrite that helps the tuning cases only); the rewriter answers `candidates`."""
    forecast = lambda phrase: [{"like": "get_forecast", "when": {"get_forecast": phrase}, "args": {"city": "Oslo"}},  # noqa: E731
                               {"like": "get_weather", "args": {"city": "Oslo"}}]  # fmt: skip
    answer = {"candidates": [{"description": d, "why": "clearer"} for d in candidates]}
    return {
        "contains": {
            f"Current description: {current}": {"text": json.dumps(answer)},
            "tomorrow": [*forecast("oming days")[:1], *forecast("tomorrow")],
            "later this week": forecast("oming days"),
            "right now": [{"like": "get_forecast", "when": {"get_forecast": "right now"}, "args": {"city": "Oslo"}},
                          {"like": "get_weather", "args": {"city": "Oslo"}}],
        },
    }  # fmt: skip


def config(surface: str, gate: str) -> str:
    return f"{surface}evals:\n  provider: openai\n  model: gpt-4.1\n  golden: golden.jsonl\n  {gate}\n"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub({TOKEN: "github-actions[bot]"}) as fake:
        yield fake


def test_the_rewrite_that_passes_is_suggested_on_the_python_line_and_applies_cleanly(tmp_path, github):
    server = f"server:\n  command: [{json.dumps(sys.executable)}, server.py]\n"
    head_py = SERVER.format(forecast=CONFUSING)
    repo = commit_repo(
        tmp_path,
        {
            "server.py": SERVER.format(forecast=BASE),
            "golden.jsonl": golden(),
            "toolselect.yaml": config(server, "max_drop: 5"),
        },
        {"server.py": head_py},
        ignore="toolselect-report/\n.toolselect-cache/\n",
    )
    with FakeModelAPI(script(CONFUSING, [GOOD, TUNING_ONLY, GREEDY])) as api:
        register_pull(github, repo)
        run = run_pull_request(repo, tmp_path, api, github)
        assert run.code == 1, run.stdout + run.stderr  # the PR's regression fails the gate; the fix is offered
        finding, comment = github.review_comments_on(7)  # what the change did, then the fix
        asked = len(api.log)
        again = run_pull_request(repo, tmp_path, api, github)
        assert again.code == 1 and len(api.log) == asked  # every answer from the cache
        assert len(github.review_comments_on(7)) == 2  # nothing posted twice
        [sticky] = github.comments_on(7)
    assert "picks `get_forecast` worse" in finding["body"]
    body = comment["body"]
    assert "a rewrite of `get_forecast`'s description that passed the held-out test" in body
    assert "held-out accuracy 2/8 → 8/8 (+6 samples, p = 0.031)" in body and "openai:gpt-4.1" in body
    line = head_py.splitlines().index(f'@mcp.tool(description="{CONFUSING}")') + 1
    assert comment["path"] == "server.py" and comment["line"] == line and comment["start_line"] is None
    [block] = re.findall(r"```suggestion\n(.*?)\n```", body, re.DOTALL)
    assert TUNING_ONLY not in body and GREEDY not in body
    # accepting the suggestion (its lines replace the commented ones) leaves valid Python, with the new text
    lines = head_py.splitlines()
    lines[line - 1 : line] = block.split("\n")
    tree = ast.parse("\n".join(lines))
    described = {
        f.name: d.keywords[0].value.value
        for f in tree.body
        if isinstance(f, ast.FunctionDef)
        for d in f.decorator_list
        if isinstance(d, ast.Call)
    }
    assert described == {"get_weather": "Weather for a city right now.", "get_forecast": GOOD}
    assert "💡 `get_forecast`: held-out accuracy 2/8 → 8/8" in sticky["body"]
    assert "suggested on `server.py` line" in sticky["body"]

    # the maintainer commits the suggestion: the model picks get_forecast again, and the suggestion
    # is withdrawn — resolved, its block gone so it can't be applied twice
    (repo.path / "server.py").write_text("\n".join(lines) + "\n")
    git("commit", "-qam", "Apply suggestion from toolselect", cwd=repo.path)
    repo.head = git("rev-parse", "HEAD", cwd=repo.path)
    with FakeModelAPI(script(CONFUSING, [])) as api:
        register_pull(github, repo)
        fixed = run_pull_request(repo, tmp_path, api, github)
        assert fixed.code == 0, fixed.stdout + fixed.stderr
        finding, comment = github.review_comments_on(7)
        assert all(github.thread_of(c["id"])["resolved"] for c in (finding, comment))
    assert "```suggestion" not in comment["body"] and "passed the held-out test" in comment["body"]
    assert f"at {repo.head[:12]}, this rewrite of get\\_forecast is no longer suggested" in comment["body"]


def test_outside_the_diff_the_comment_carries_the_patch_that_applies_with_git(tmp_path, github):
    """suggest: confusions on a PR that doesn't touch get_forecast, which the model confuses with
    get_weather on both sides: its rewrite goes in the PR comment as a patch of tools.json."""
    tools = [
        {"name": "get_weather", "description": "Weather for a city right now.",
         "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"name": "get_forecast", "description": CONFUSING,
         "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
    ]  # fmt: skip
    head_tools = [dict(tools[0], description="Weather for a city, right now."), tools[1]]
    repo = commit_repo(
        tmp_path,
        {"tools.json": json.dumps({"tools": tools}, indent=2) + "\n", "golden.jsonl": golden(),
         "toolselect.yaml": config("tools_file: tools.json\n", "min_accuracy: 0.1")},
        {"tools.json": json.dumps({"tools": head_tools}, indent=2) + "\n"},
        ignore="toolselect-report/\n.toolselect-cache/\n",
    )  # fmt: skip
    with FakeModelAPI(script(CONFUSING, [GOOD])) as api:
        register_pull(github, repo)
        run = run_pull_request(repo, tmp_path, api, github, suggest="confusions")
        assert run.code == 0, run.stdout + run.stderr
        assert github.review_comments_on(7) == []  # its line is not in the diff: no suggestion
        [sticky] = github.comments_on(7)
    body = sticky["body"]
    assert "💡 `get_forecast`: held-out accuracy 2/8 → 8/8" in body and "outside this PR's diff" in body
    [patch] = re.findall(r"```diff\n(.*?)\n  ```", body, re.DOTALL)
    patch = "\n".join(line.removeprefix("  ") for line in patch.split("\n")) + "\n"
    (tmp_path / "fix.diff").write_text(patch)
    subprocess.run(["git", "apply", str(tmp_path / "fix.diff")], cwd=repo.path, check=True)
    listed = json.loads((repo.path / "tools.json").read_text())["tools"]
    assert [t["description"] for t in listed] == ["Weather for a city, right now.", GOOD]
