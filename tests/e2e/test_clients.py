"""The surface as each client presents it, end to end: `eval --client` through the real SDKs against
the fake model API, which picks only among the tools it was actually sent (by the names the client
gave them) and prefers Claude Code's built-in Grep when it is there. What the fake received shows
each profile's names, cut and built-ins; the answers map back to the server's names; a re-run is
free from the answer cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import PROVIDERS, run_eval
from tests.fakes.model_api import FakeModelAPI

TOOLS = [
    {"name": "search_notes", "description": "Full-text search over the user's notes; returns matching lines.",
     "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
    {"name": "get_weather", "description": "Current weather for a city.",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "get_forecast", "description": "The forecast for the next days in a city.",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
]  # fmt: skip
CASES = [
    ("todo", "Find the lines that mention TODO in my notes", "search_notes", {"query": "TODO"}),
    ("paris", "What's the weather in Paris right now?", "get_weather", {"city": "Paris"}),
    ("rain", "Will it rain in Oslo this week?", "get_forecast", {"city": "Oslo"}),
    ("hello", "Say hello", None, None),
]
SCRIPT: dict[str, Any] = {
    "answers": {
        # a model in Claude Code reaches for its own Grep; elsewhere for the server's search tool
        CASES[0][1]: [
            {"like": "Grep", "args": {"pattern": "TODO"}},
            {"like": "search_notes", "args": {"query": "TODO"}},
        ],
        CASES[1][1]: {"like": "get_weather", "args": {"city": "Paris"}},
        CASES[2][1]: {"like": "get_forecast", "args": {"city": "Oslo"}},
    },
    "default": {"text": "Hello!"},
}


def write_repo(folder: Path, provider: str, tools: list[dict[str, Any]], cases: list[tuple], lines: str = "") -> None:
    (folder / "tools.json").write_text(json.dumps({"tools": tools}, indent=1))
    golden = [
        {"id": n, "question": q, "expected_tool": t} | ({"expected_args": a} if a else {}) for n, q, t, a in cases
    ]
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    model = "claude-sonnet-4-5" if provider == "anthropic" else "gpt-4.1"
    (folder / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {model}\n  golden: golden.jsonl\n"
        f"  min_accuracy: 0\n  server_name: weather\n{lines}"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_client_is_asked_as_it_presents_the_surface(tmp_path, provider):
    write_repo(tmp_path, provider, TOOLS, CASES, "  clients: [raw, cursor, claude-code]\n")
    with FakeModelAPI(SCRIPT) as api:
        done = run_eval(tmp_path, provider, api)
        assert done.code == 0, done.out + done.err
        log = list(api.log)
        assert len(log) == 12  # 4 cases × 3 clients, one pool

        # what the fake was sent: each client's names, in the server's order, after its built-ins
        sent = {}
        for entry in log:
            names = tuple(entry["tools"])
            sent.setdefault(names, []).append(entry)
        raw = ("search_notes", "get_weather", "get_forecast")
        cursor = tuple(f"mcp_weather_{t}" for t in raw)
        builtins = ("Agent", "Bash", "Edit", "Glob", "Grep", "Read", "WebFetch", "WebSearch", "Write")
        claude = tuple(f"mcp__weather__{t}" for t in raw)
        [claude_sent] = [names for names in sent if names[-3:] == claude]
        assert set(sent) == {raw, cursor, claude_sent}
        assert sorted(claude_sent[:-3]) == sorted(builtins)
        assert all(len(requests) == 4 for requests in sent.values())
        claude_system = {e["system"] for e in sent[claude_sent]}
        assert len(claude_system) == 1 and "Use the dedicated tools" in claude_system.pop()
        assert {e["system"] for e in sent[raw]} == {None} and {e["system"] for e in sent[cursor]} == {None}

        # the answers, in the server's names: the confusion matrix of each client
        report = json.loads((tmp_path / "r.json").read_text())
        by = {m["run"]["label"]: m for m in report["models"]}
        assert list(by) == ["raw", "cursor", "claude-code"]
        assert by["raw"]["confusion"]["search_notes"] == {"search_notes": 1}
        assert by["cursor"]["confusion"]["get_weather"] == {"get_weather": 1}
        assert by["claude-code"]["confusion"]["search_notes"] == {"(built-in: Grep)": 1}
        assert by["claude-code"]["metrics"]["accuracy"]["numerator"] == 3
        assert by["raw"]["metrics"]["accuracy"]["numerator"] == 4
        [todo] = [c for c in by["claude-code"]["cases"] if c["name"] == "todo"]
        assert todo["samples"][0]["outcome"] == "SEL-WRONG"
        assert "got the client's own tool (built-in: Grep)" in todo["samples"][0]["reasons"][0]
        assert "(built-in: Grep)" in done.out  # the console's matrix has its column

        again = run_eval(tmp_path, provider, api)
        assert again.code == 0, again.out + again.err
        assert len(api.log) == 12  # every answer from the cache: nothing asked


def test_a_client_that_cuts_the_list_is_asked_only_what_it_sends(tmp_path):
    """Cursor sends the first 40 of 90 tools: the fake sees 40, a case that expects tool 70 is asked
    and fails (the model never saw it), the finding names it; and Claude Code, whose name for the
    long tool is 70 characters (over 64), sends nothing: every sample is CLIENT-FAILED. The gate fails
    on both clients' limits unless --no-fail-on-client-limits."""
    long = "search_the_issue_tracker_for_matching_tickets_by_text"
    tools = [{"name": long if i == 0 else f"tool_{i:02d}", "description": f"Tool number {i}.",
              "inputSchema": {"type": "object"}} for i in range(90)]  # fmt: skip
    cases = [("late", "use tool 70", "tool_70", None), ("early", "use tool 5", "tool_05", None)]
    write_repo(tmp_path, "openai", tools, cases, "  clients: [cursor, claude-code]\n")
    script = {"answers": {"use tool 70": {"like": "tool_70"}, "use tool 5": {"like": "tool_05"}}}
    with FakeModelAPI(script) as api:
        done = run_eval(tmp_path, "openai", api, "--server-name", "jira-cloud")
        assert done.code == 1, done.out + done.err
        assert [len(e["tools"]) for e in api.log] == [40, 40]  # Cursor's two requests; none from Claude Code
        assert all(e["tools"][0] == "mcp_jira-cloud_tool_01" for e in api.log)
        relaxed = run_eval(tmp_path, "openai", api, "--server-name", "jira-cloud", "--no-fail-on-client-limits")
        assert relaxed.code == 0, relaxed.out + relaxed.err
        assert len(api.log) == 2  # the same answers, from the cache
    report = json.loads((tmp_path / "r.json").read_text())
    by = {m["run"]["label"]: m for m in report["models"]}
    assert by["cursor"]["gate"]["fail_on_client_limits"] is False
    assert by["cursor"]["confusion"] == {"tool_05": {"tool_05": 1}, "tool_70": {"(none)": 1}}
    dropped = [f for f in by["cursor"]["lint"] if f["code"] == "client-tool-dropped" and f["tool"] == "tool_70"]
    assert dropped and dropped[0]["severity"] == "error"
    claude = by["claude-code"]
    assert [s["outcome"] for c in claude["cases"] for s in c["samples"]] == ["CLIENT-FAILED"] * 2
    reason = claude["cases"][0]["samples"][0]["reasons"][0]
    assert reason.startswith(f"in Claude Code the name mcp__jira-cloud__{long} is 70 characters, over its 64")
    # the first run's verdict: each client's limit is a gate reason
    assert "✗ cursor:" in done.out and "✗ claude-code:" in done.out
    assert "Cursor never sends tool_70 to the model" in done.out and "fail-on-client-limits" in done.out
