"""Repeats, shuffling, intervals and the paired comparison, end to end: `toolselect eval
--base-ref` in a git repository against the fake model API with seeded random picks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.conftest import toolselect
from tests.fakes.model_api import FakeModelAPI

KEY = "sk-stats"
TOOLS = [
    {"name": n, "description": d, "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    for n, d in [
        ("get_weather", "Current weather right now."),
        ("get_forecast", "Forecast for the coming days."),
        ("get_alerts", "Storm warnings."),
        ("get_air_quality", "Air quality index."),
        ("convert_temperature", "Convert between C and F."),
        ("search_web", "Search the web."),
    ]
]
CASES = {
    "weather": ("Is it raining in Paris?", "get_weather"),
    "forecast": ("Rain tomorrow in Rome?", "get_forecast"),
    "alerts": ("Storm warnings for Texas?", "get_alerts"),
    "air": ("Is the air clean in Delhi?", "get_air_quality"),
    "convert": ("21 C in F?", "convert_temperature"),
    "web": ("Search for MCP news", "search_web"),
    "boundary": ("Will it be sunny on Saturday in Nice?", "get_forecast"),
    "first-a": ("Which tool first? a", "get_weather"),
    "first-b": ("Which tool first? b", "get_forecast"),
    "first-c": ("Which tool first? c", "search_web"),
}
# position-seeking cases, two per tool: whatever the shared seeded orders (sample k of every case sees
# order π_k), each sample index has two of them right (the tool listed first) and ten wrong further down
POSITIONAL = {f"first-{t['name']}-{j}": (f"Which tool first? {t['name']} {j}", t["name"]) for t in TOOLS for j in "ab"}


def script() -> dict:
    answers: dict[str, Any] = {}
    for name, (prompt, tool) in {**CASES, **POSITIONAL}.items():
        if name.startswith("first"):
            answers[prompt] = {"first": True}  # favours whatever is listed first
        elif name == "boundary":  # right while get_forecast says "coming days", then always wrong
            answers[prompt] = [
                {"when": {"get_forecast": "coming days"}, "tool": "get_forecast", "args": {}},
                {"tool": "get_weather", "args": {}},
            ]
        elif name in ("weather", "air"):  # right most of the time: flaky
            answers[prompt] = {
                "random": [{"tool": tool, "args": {}}, {"tool": "search_web", "args": {}}],
                "weights": [3, 2],
            }
        else:
            answers[prompt] = {"tool": tool, "args": {}}
    return {"key": KEY, "seed": 5, "answers": answers}


def git(*args, cwd):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_repo(root, head_change, extra: str = "", cases=CASES):
    repo = root / "repo"
    repo.mkdir()
    (repo / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    (repo / "golden.jsonl").write_text(
        "".join(
            json.dumps({"id": name, "question": prompt, "expected_tool": tool}) + "\n"
            for name, (prompt, tool) in cases.items()
        )
    )
    (repo / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n  "
        "min_accuracy: 0\n" + extra
    )
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    head_change(repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "head", cwd=repo)
    return repo


def test_repeats_flaky_cases_intervals_positions_and_a_certain_flip(tmp_path):
    def reword_forecast(repo):
        tools = [dict(t) for t in TOOLS]
        tools[1]["description"] = "Daily outlook."
        (repo / "tools.json").write_text(json.dumps({"tools": tools}))

    cases = {**CASES, **POSITIONAL}
    extra = "  repeat: 5\n  temperature: 0.7\n  seed: 1\n  fail_on_certain_flips: true\n"
    repo = make_repo(tmp_path, reword_forecast, extra, cases)

    with FakeModelAPI(script()) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1", "HOME": str(tmp_path)}
        run = toolselect(
            "eval", "--base-ref", "HEAD~1", "--markdown", "comment.md", "--json", "r.json", cwd=repo, env=env
        )
        requests = api.requests
        dry = toolselect("eval", "--base-ref", "HEAD~1", "--dry-run", cwd=repo, env=env)

    assert run.code == 1, run.err  # the certain flip fails the gate (fail_on_certain_flips)
    head = json.loads((repo / "r.json").read_text())
    base = json.loads((repo / "r.base.json").read_text())
    assert (
        requests == 2 * len(cases) * 5
    )  # every sample of both sides: one description differs, so every tool list does
    # repeats: 5 samples per case, each its own answer; temperature and seed recorded
    assert head["run"]["repeat"] == 5 and head["counts"]["samples"] == len(cases) * 5
    assert head["run"]["temperature"] == 0.7 and head["run"]["seed"] == 1 and head["run"]["shuffle"] is True
    assert "weather" in head["flaky"] and "air" in head["flaky"]
    # intervals: every rate has one; accuracy's resamples cases because samples of a case are correlated
    assert head["metrics"]["accuracy"]["ci_method"] == "cluster bootstrap over cases"
    assert head["metrics"]["no_call_recall"]["ci"] is None and head["metrics"]["tool_accuracy"]["ci"] is not None
    low, high = head["metrics"]["accuracy"]["ci"]
    assert low < head["metrics"]["accuracy"]["value"] < high
    # shuffled orders are recorded, and the position table shows the position-seeking cases
    sample = head["cases"][0]["samples"][0]
    assert len(sample["tool_order"]) == 6 and sample["position"] == sample["tool_order"].index("get_weather")
    assert set(head["position"]) == {"first", "middle", "last"}
    assert any("position moves accuracy" in w for w in head["warnings"])
    # the certain flip: 5/5 → 0/5
    boundary = next(c for c in head["cases"] if c["name"] == "boundary")
    assert boundary["passed"] == 0 and next(c for c in base["cases"] if c["name"] == "boundary")["passed"] == 5

    comment = (repo / "comment.md").read_text()
    first = comment.splitlines()[0]
    assert first.startswith("### ❌ toolselect failed: accuracy ") and len(first) <= 150
    assert first.endswith(" — 1 case(s) certainly flipped to failing (Fisher's exact test): boundary")
    # a description-only PR: its measured effect leads, the paired comparison first
    assert comment.splitlines()[2] == "**Only tool descriptions changed** (`get_forecast`). What they did to selection:"
    assert ": paired over the whole suite: " in comment.splitlines()[4] and ", 95% CI " in comment
    assert "1 case(s) certainly flipped to failing (Fisher's exact test): boundary" in comment
    assert "Flipped to failing (1, 1 certain)" in comment
    assert "| boundary **certain** (p = 0.0079) | `get_forecast` | `get_forecast` 5/5 | `get_weather` 0/5 |" in comment
    assert "Flaky cases (" in comment and "- weather: " in comment
    assert "Accuracy by the expected tool's position" in comment and "| first third |" in comment
    assert "† samples of one case are correlated" in comment
    assert "exact sign test over cases" in comment
    # the console says the same
    assert "flaky" in run.out and "Accuracy by the expected tool's position" in run.out
    assert "flipped to failing (certain): boundary" in run.out

    # --dry-run afterwards: everything is cached, nothing would be asked
    assert dry.code == 0, dry.err
    n = len(cases) * 5
    assert f"head: {n} samples, {n} already cached, 0 requests" in dry.out
    assert f"base: {n} samples, {n} already cached, 0 requests" in dry.out


def test_dry_run_and_max_requests_before_anything_is_asked(tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    (tmp_path / "golden.jsonl").write_text(
        "".join(
            json.dumps({"id": name, "question": prompt, "expected_tool": tool}) + "\n"
            for name, (prompt, tool) in CASES.items()
        )
    )
    (tmp_path / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: anthropic\n  model: claude-sonnet-4-x\n  golden: golden.jsonl\n "
        " repeat: 3\n"
    )
    with FakeModelAPI(script()) as api:
        env = {"ANTHROPIC_BASE_URL": api.url, "HOME": str(tmp_path)}  # no key: a dry run needs none
        dry = toolselect("eval", "--dry-run", cwd=tmp_path, env=env)
        over = toolselect("eval", "--max-requests", "10", cwd=tmp_path, env={**env, "ANTHROPIC_API_KEY": KEY})
        asked = api.requests
    assert dry.code == 0, dry.err
    assert "run: 30 samples, 0 already cached, 30 requests to anthropic claude-sonnet-4-x" in dry.out
    assert "≈ $" in dry.out  # a price is known for claude-sonnet-4*
    assert over.code == 2
    assert "this run would send 30 uncached model requests (30), more than max_requests 10" in over.err
    assert asked == 0


def test_identical_sides_are_budgeted_once(tmp_path):
    repo = make_repo(tmp_path, lambda r: (r / "README.md").write_text("docs only\n"))
    with FakeModelAPI(script()) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1", "HOME": str(tmp_path)}
        dry = toolselect("eval", "--base-ref", "HEAD~1", "--dry-run", cwd=repo, env=env)
        run = toolselect("eval", "--base-ref", "HEAD~1", "--max-requests", str(len(CASES)), cwd=repo, env=env)
        asked = api.requests
    assert "total: 10 requests" in dry.out, dry.out  # the base finds the head's answers cached
    assert run.code == 0, run.err
    assert asked == len(CASES)


def test_a_broken_checkout_of_the_base_is_no_comparison_and_exits_3(tmp_path):
    # a repository that needs Git LFS, on a machine without git-lfs: its required filter fails
    repo = make_repo(tmp_path, lambda r: (r / "README.md").write_text("docs only\n"))
    git("config", "filter.lfs.process", "git-lfs filter-process", cwd=repo)
    git("config", "filter.lfs.required", "true", cwd=repo)
    (repo / ".git" / "info" / "attributes").write_text("*.json filter=lfs\n")
    with FakeModelAPI(script()) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1", "HOME": str(tmp_path)}
        run = toolselect("eval", "--base-ref", "HEAD~1", "--markdown", "c.md", cwd=repo, env=env)
    assert run.code == 3, run.err
    assert "no comparison: the base could not be evaluated: git worktree failed" in run.out
    assert "PASSED" not in run.out
    listed = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    assert len(listed.strip().splitlines()) == 1  # nothing left behind


def test_a_base_run_that_failed_is_no_comparison_and_exits_3(tmp_path):
    # the base's own picker fails every sample (an outage); the head's works
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    (repo / "golden.jsonl").write_text(json.dumps({"id": "n", "question": "hi", "expected_tool": None}) + "\n")
    (repo / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: command\n  command: [{json.dumps(sys.executable)}, pick.py]\n  "
        "golden: golden.jsonl\n"
    )
    (repo / "pick.py").write_text("import sys; sys.exit('backend down')\n")
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    (repo / "pick.py").write_text("import json, sys; json.load(sys.stdin); print(json.dumps({'tool': None}))\n")
    git("commit", "-qam", "head", cwd=repo)
    run = toolselect("eval", "--base-ref", "HEAD~1", "--max-drop", "0", cwd=repo)
    assert run.code == 3, run.err
    assert "no comparison: the base could not be evaluated: the base run failed (1/1 samples failed at" in run.out
    accepted = toolselect("eval", "--base-ref", "HEAD~1", "--max-drop", "0", "--base-failure", "pass", cwd=repo)
    assert accepted.code == 0, accepted.err
    assert "PASSED  accuracy 100.0% (1/1), min 100% · no comparison ran" in accepted.out
