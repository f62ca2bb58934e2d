"""The surface as each client presents it, end to end: `eval --client` through the real SDKs against
the fake model API, which picks only among the tools it was actually sent (by the names the client
gave them) and prefers Claude Code's built-in Grep when it is there. What the fake received shows
each profile's names, cut and built-ins; the answers map back to the server's names; a re-run is
free from the answer cache."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import PROVIDERS, key_env, run_eval
from tests.fakes.model_api import FakeModelAPI
from toolselect.offer.clients import load_profile

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


def searching(tool: str, args: dict[str, Any], query: str) -> list[dict[str, Any]]:
    """A model that calls `tool` when it was sent, else searches for it (a deferred client)."""
    return [{"like": tool, "args": args}, {"like": "ToolSearch", "args": {"query": query}}]


SCRIPT: dict[str, Any] = {
    "answers": {
        # a model in Claude Code reaches for its own Bash (it has no Grep); elsewhere for the server's search tool
        CASES[0][1]: [
            {"like": "Bash", "args": {"command": "grep -rn TODO ."}},
            {"like": "search_notes", "args": {"query": "TODO"}},
        ],
        CASES[1][1]: searching("get_weather", {"city": "Paris"}, "current conditions"),
        CASES[2][1]: searching("get_forecast", {"city": "Oslo"}, "forecast"),
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
        # the console calls a client a client: in the run's header and the table of its rows
        assert "client raw · provider" in done.out and "and client cursor · provider" in done.out
        assert re.search(r"┃ client\s+┃ accuracy", done.out)
        log = list(api.log)
        # 4 cases × raw and cursor; Claude Code: Bash at once, a search before each weather pick, a text answer
        assert len(log) == 14

        # what the fake was sent: each client's names, in the server's order, after its built-ins
        sent: dict[tuple[str, ...], list[dict]] = {}
        for entry in log:
            sent.setdefault(tuple(entry["tools"]), []).append(entry)
        raw = ("search_notes", "get_weather", "get_forecast")
        cursor = tuple(f"mcp_weather_{t}" for t in raw)
        assert len(sent[raw]) == 4 and len(sent[cursor]) == 4
        assert {e["system"] for e in sent[raw] + sent[cursor]} == {None}
        builtins = {b.name for b in load_profile("claude-code").builtins}  # as captured from the real client
        assert {"Bash", "Read", "Edit", "Write"} <= builtins and not {"Grep", "Glob"} & builtins
        claude = [e for e in log if "ToolSearch" in e["tools"]]
        assert len(claude) == 6
        first = [e for e in claude if e["turn"] == 0]
        # only names in context: the built-ins and the search tool are sent, the server's tools are listed by name
        assert len(first) == 4 and all(set(e["tools"]) == builtins | {"ToolSearch"} for e in first)
        [system] = {e["system"] for e in claude}
        assert "Use the dedicated tools" in system
        listing = "\n".join(f"mcp__weather__{t}" for t in sorted(raw))  # sorted by name, as it was seen to
        assert f"<available-deferred-tools>\n{listing}\n</available-deferred-tools>" in system
        # after the search, its finds are sent in full
        loaded = sorted(tuple(e["tools"][len(builtins) + 1 :]) for e in claude if e["turn"] == 1)
        assert loaded == [("mcp__weather__get_forecast",), ("mcp__weather__get_weather",)]

        # the answers, in the server's names: the confusion matrix of each client
        report = json.loads((tmp_path / "r.json").read_text())
        by = {m["run"]["label"]: m for m in report["models"]}
        assert list(by) == ["raw", "cursor", "claude-code"]
        assert by["raw"]["confusion"]["search_notes"] == {"search_notes": 1}
        assert by["cursor"]["confusion"]["get_weather"] == {"get_weather": 1}
        assert by["claude-code"]["confusion"]["search_notes"] == {"(built-in: Bash)": 1}
        assert by["claude-code"]["metrics"]["accuracy"]["numerator"] == 3
        assert by["raw"]["metrics"]["accuracy"]["numerator"] == 4
        [todo] = [c for c in by["claude-code"]["cases"] if c["name"] == "todo"]
        assert todo["samples"][0]["outcome"] == "SEL-WRONG"
        assert "got the client's own tool (built-in: Bash)" in todo["samples"][0]["reasons"][0]
        assert "(built-in: Bash)" in done.out  # the console's matrix has its column

        [paris] = [c for c in by["claude-code"]["cases"] if c["name"] == "paris"]
        assert paris["samples"][0]["searched"] == [{"query": "current conditions", "found": ["get_weather"]}]
        assert by["claude-code"]["search"]["recall"]["numerator"] == 2  # found both it searched for
        assert by["claude-code"]["run"]["client"]["builtins"][:2] == ["Agent", "Bash"]
        assert by["cursor"]["run"]["client"]["renamed"]["get_weather"] == "mcp_weather_get_weather"

        again = run_eval(tmp_path, provider, api)
        assert again.code == 0, again.out + again.err
        assert len(api.log) == 14  # every answer from the cache, the searches' turns too: nothing asked


def test_a_client_that_cuts_the_list_is_asked_only_what_it_sends(tmp_path):
    """Cursor sends the first 40 of 90 tools: the fake sees 40, a case that expects tool 70 is asked
    and fails (the model never saw it), the finding names it; and the OpenAI Agents SDK, whose name for
    the long tool is 70 characters (over the OpenAI API's 64), sends nothing: every sample is
    CLIENT-FAILED. The gate fails on both clients' limits unless --no-fail-on-client-limits."""
    long = "search_the_issue_tracker_for_matching_tickets_by_text_and_label_names"
    tools = [{"name": long if i == 0 else f"tool_{i:02d}", "description": f"Tool number {i}.",
              "inputSchema": {"type": "object"}} for i in range(90)]  # fmt: skip
    cases = [("late", "use tool 70", "tool_70", None), ("early", "use tool 5", "tool_05", None)]
    write_repo(tmp_path, "openai", tools, cases, "  clients: [cursor, openai-agents]\n")
    script = {"answers": {"use tool 70": {"like": "tool_70"}, "use tool 5": {"like": "tool_05"}}}
    with FakeModelAPI(script) as api:
        done = run_eval(tmp_path, "openai", api, "--server-name", "jira-cloud")
        assert done.code == 1, done.out + done.err
        assert [len(e["tools"]) for e in api.log] == [40, 40]  # Cursor's two requests; none from the SDK
        assert all(e["tools"][0] == "mcp_jira-cloud_tool_01" for e in api.log)
        relaxed = run_eval(tmp_path, "openai", api, "--server-name", "jira-cloud", "--no-fail-on-client-limits")
        assert relaxed.code == 0, relaxed.out + relaxed.err
        assert len(api.log) == 2  # the same answers, from the cache
    report = json.loads((tmp_path / "r.json").read_text())
    by = {m["run"]["label"]: m for m in report["models"]}
    assert by["cursor"]["gate"]["fail_on_client_limits"] is False
    # the model was never sent tool_70: it says it has no such tool
    assert by["cursor"]["confusion"] == {"tool_05": {"tool_05": 1}, "tool_70": {"(none: unable)": 1}}
    dropped = [f for f in by["cursor"]["lint"] if f["code"] == "client-tool-dropped" and f["tool"] == "tool_70"]
    assert dropped and dropped[0]["severity"] == "error"
    agents = by["openai-agents"]
    assert [s["outcome"] for c in agents["cases"] for s in c["samples"]] == ["CLIENT-FAILED"] * 2
    reason = agents["cases"][0]["samples"][0]["reasons"][0]
    assert reason.startswith(f"in OpenAI Agents SDK the name {long} is {len(long)} characters, over its 64")
    # the first run's verdict: each client's limit is a gate reason
    assert "✗ cursor:" in done.out and "✗ openai-agents:" in done.out
    assert "Cursor never sends tool_70 to the model" in done.out and "fail-on-client-limits" in done.out


def test_deferred_loading_finds_by_description_and_the_comment_has_the_client_table(tmp_path):
    """Claude Code defers every definition: the model searches, toolselect answers with the keyword
    ranking over names and descriptions, and the next request carries what it found. One tool is
    found by its description alone and picked; one is found but another picked; one is never found.
    The PR comment (eval --base-ref) has the per-client table and the search's recall, and so do
    the console and the HTML report."""
    from tests.e2e.harness import commit_repo

    tools = [
        {"name": "get_alerts", "description": "Severe weather warnings issued for a region.",
         "inputSchema": {"type": "object", "properties": {"region": {"type": "string"}}}},
        *TOOLS,
    ]  # fmt: skip
    cases = [
        ("warn", "Are there storm warnings for Kent?", "get_alerts", {"region": "Kent"}),
        ("rain", "Will it rain in Oslo this week?", "get_forecast", {"city": "Oslo"}),
        ("umbrella", "Do I need an umbrella?", "get_forecast", None),
    ]
    files = {}
    write_repo(tmp_path, "openai", tools, cases, "  clients: [raw, claude-code]\n")
    for name in ("tools.json", "golden.jsonl", "toolselect.yaml"):
        files[name] = (tmp_path / name).read_text()
    repo = commit_repo(tmp_path, files, {"README.md": "head\n"})
    script = {
        "answers": {
            # "severe" is only in get_alerts' description: found by it, then picked
            cases[0][1]: searching("get_alerts", {"region": "Kent"}, "severe storms"),
            # "city" finds get_weather and get_forecast; the model then picks the wrong one
            cases[1][1]: [{"like": "get_weather", "args": {"city": "Oslo"}},
                          {"like": "ToolSearch", "args": {"query": "city"}}],
            # "umbrella" matches nothing: never found, and the model answers in text
            cases[2][1]: [{"like": "get_forecast", "args": {}},
                          {"like": "ToolSearch", "args": {"query": "umbrella"}, "turn": 0}, {"text": "Maybe."}],
        },
    }  # fmt: skip
    with FakeModelAPI(script) as api:
        done = run_eval(
            repo.path, "openai", api, "--base-ref", "HEAD~1", "--markdown", "comment.md", "--html", "report.html"
        )
        assert done.code == 0, done.out + done.err
    report = json.loads((repo.path / "r.json").read_text())
    by = {m["run"]["label"]: m for m in report["models"]}
    search = by["claude-code"]["search"]
    assert (search["k"], search["samples"], search["found"]) == (5, 3, 2)
    assert (search["found_not_picked"], search["never_found"]) == (1, 1)
    assert search["per_tool"]["get_alerts"]["value"] == 1.0 and search["per_tool"]["get_forecast"]["numerator"] == 1
    [warn] = [c for c in by["claude-code"]["cases"] if c["name"] == "warn"]
    assert warn["samples"][0]["searched"] == [{"query": "severe storms", "found": ["get_alerts"]}]
    assert warn["samples"][0]["outcome"] == "PASS"
    line = "found in 2 of 3 samples (recall@5 66.7%); found but not picked 1; never found 1"
    assert line in done.out.replace("\n", " ")
    comment = (repo.path / "comment.md").read_text()
    assert "| | client | accuracy | steal rate | never sent (expected) | search found | gate |" in comment
    # emulated here (no real client in this run's clients folder): said, with the version its facts are of
    row = "| claude-code | Claude Code (emulated: 2.1.332 as captured) | 33.3% | 0.0% (0/3) | — | 2/3 (@5) |"
    assert row in comment
    assert "| raw | the raw tool list |" in comment
    assert line.replace("@", "@\u200b") in comment  # an @ never mentions anyone
    assert "not found by its search: get\\_forecast 1/2" in comment
    html = (repo.path / "report.html").read_text()
    assert "As the client presents it" in html and line in html
    assert "<h3>Clients</h3>" in html
    assert "<th>claude-code</th><td>Claude Code (emulated: 2.1.332 as captured)</td>" in html
    assert "<code>get_alerts</code> → <code>mcp__weather__get_alerts</code>" in html  # what it renamed


MY_IDE = """name: my-ide
title: My IDE
checked: "2026-12-01"
names: {template: "{tool}", max_length: 64}
tools: {max: 50}
builtins:
  - name: Grep
    description: "Searches file contents."
    input_schema: {type: object, properties: {pattern: {type: string}}}
"""


def test_the_steal_rate_and_its_gate_on_head_and_base(tmp_path):
    """A profile of one's own with a built-in Grep: on the base, search_notes' description names
    TODO markers and the model picks it; the head drops those words and Grep takes every pick. The
    steal rate goes 0% → 100% over 6 cases (sign test p = 0.031): with max-steal-rise the gate fails
    and says so; without it the run passes; a re-run is free."""
    from tests.e2e.harness import commit_repo

    prompts = [f"Find the TODO markers in my notes about project {i}" for i in range(6)]
    cases = [(f"todo{i}", p, "search_notes", None) for i, p in enumerate(prompts)]
    base_tools = [dict(TOOLS[0], description="Search the user's notes, e.g. for TODO markers."), *TOOLS[1:]]
    write_repo(tmp_path, "openai", base_tools, cases, "  clients: [my-ide.yaml]\n")
    (tmp_path / "my-ide.yaml").write_text(MY_IDE)
    files = {n: (tmp_path / n).read_text() for n in ("tools.json", "golden.jsonl", "toolselect.yaml", "my-ide.yaml")}
    head_tools = json.dumps({"tools": [dict(TOOLS[0], description="Search the user's notes."), *TOOLS[1:]]})
    repo = commit_repo(tmp_path, files, {"tools.json": head_tools})
    answer = [{"like": "search_notes", "args": {"query": "TODO"}, "when": {"search_notes": "TODO"}},
              {"like": "Grep", "args": {"pattern": "TODO"}}]  # fmt: skip
    with FakeModelAPI({"answers": dict.fromkeys(prompts, answer)}) as api:
        gated = run_eval(repo.path, "openai", api, "--base-ref", "HEAD~1", "--max-steal-rise", "10",
                         "--markdown", "comment.md")  # fmt: skip
        assert gated.code == 1, gated.out + gated.err
        assert len(api.log) == 12  # 6 cases × head and base
        relaxed = run_eval(repo.path, "openai", api, "--base-ref", "HEAD~1")
        assert relaxed.code == 0, relaxed.out + relaxed.err
        assert len(api.log) == 12  # from the cache
    assert "the steal rate rose 100.0 pt vs the base (0% → 100%), more than max-steal-rise 10 pt (p = 0.031)" in (
        gated.out.replace("\n", " ")
    )
    head = json.loads((repo.path / "r.json").read_text())
    assert head["run"]["client"]["name"] == "my-ide"
    assert head["steal"]["rate"]["numerator"] == 6 and head["steal"]["by"] == {"(built-in: Grep)": 6}
    assert head["confusion"] == {"search_notes": {"(built-in: Grep)": 6}}
    comment = (repo.path / "comment.md").read_text()
    assert "steal rate 0.0% → 100.0% (+100.0 pt; rose in 6 cases, fell in 0; sign test p = 0.031)" in comment
    assert "steal rate 100.0% (6/6), 95% CI" in comment


def test_a_server_alongside_is_offered_as_the_client_names_it_and_its_steals_counted(tmp_path):
    """`alongside: [github]`: the bundled GitHub server's 26 tools go after yours, named as Cursor
    names them; the model reaches for its search_code, and the pick is counted as stolen by it."""
    prompt = "Search for TODO comments"
    write_repo(tmp_path, "openai", TOOLS, [("todo", prompt, "search_notes", None)],
               "  clients: [cursor]\n  alongside: [github]\n")  # fmt: skip
    script = {"answers": {prompt: [{"like": "search_code", "args": {"q": "TODO"}}, {"like": "search_notes"}]}}
    with FakeModelAPI(script) as api:
        done = run_eval(tmp_path, "openai", api)
        assert done.code == 0, done.out + done.err
        [request] = api.log
    assert len(request["tools"]) == 3 + 26
    assert request["tools"][:4] == ["mcp_weather_search_notes", "mcp_weather_get_weather", "mcp_weather_get_forecast",
                                    "mcp_github_create_or_update_file"]  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["confusion"] == {"search_notes": {"(alongside: github/search_code)": 1}}
    assert report["steal"]["by"] == {"(alongside: github/search_code)": 1}
    assert report["run"]["client"]["alongside"] == {"github": 26}
    assert "beside other servers, named as Cursor names them: github (26 tools)" in done.out
    typo = run_eval(tmp_path, "openai", api, "--alongside", "githb")
    assert typo.code == 2 and "alongside: no bundled server 'githb' (did you mean 'github'?)" in typo.err
    (tmp_path / "toolselect.yaml").write_text(
        (tmp_path / "toolselect.yaml").read_text().replace("  clients: [cursor]\n", "")
    )
    alone = run_eval(tmp_path, "openai", api)
    assert alone.code == 2 and "name the clients too" in alone.err


def test_the_action_checks_the_clients_without_a_key(tmp_path):
    """No API key in the workflow: the Action still lists the surface and finds what the OpenAI
    Agents SDK does to it: a name over the OpenAI API's 64 characters. Nothing is sent to a model;
    every sample is CLIENT-FAILED, the check fails on the client limit and the comment says why."""
    from dataclasses import replace

    from tests.e2e.harness import git, make_repo, pull_request_event, register_pull, run_action
    from tests.fakes.github_api import FakeGitHub

    repo = make_repo(tmp_path, extra_config="  clients: [openai-agents]\n")
    name = "get_the_weather_forecasts_for_every_city_on_earth_for_the_coming_days"  # the pull request adds it
    listed = repo.path / "evals" / "tools.json"
    surface = json.loads(listed.read_text())
    surface["tools"].append({"name": name, "description": "Forecasts.", "inputSchema": {"type": "object"}})
    listed.write_text(json.dumps(surface, indent=1))
    git("commit", "-qam", "a long name", cwd=repo.path)
    repo = replace(repo, head=git("rev-parse", "HEAD", cwd=repo.path))
    with FakeModelAPI({}) as api, FakeGitHub({"ghs_action_token": "github-actions[bot]"}) as github:
        register_pull(github, repo)
        run = run_action(repo.path, tmp_path, inputs={"openai-api-key": ""}, event=pull_request_event(repo),
                         event_name="pull_request", api=api, github=github)  # fmt: skip
        assert api.log == []  # no key, no request
        [comment] = [c for c in github.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
    assert run.code == 1, run.stdout + run.stderr
    assert f"in OpenAI Agents SDK the name {name} is {len(name)} characters, over its 64" in comment["body"].replace(
        "\\_", "_"
    )
    outcomes = {s["outcome"] for c in run.report()["cases"] for s in c["samples"]}
    assert outcomes == {"CLIENT-FAILED"}


def test_two_models_through_two_clients_run_as_one_pool(tmp_path):
    """Two models × two clients: four reports, labelled model@client, asked through one endpoint's
    pool and one answer cache (the fake answers each model as it is named)."""
    models = "  models:\n    - {provider: openai, model: fake-a}\n    - {provider: openai, model: fake-b}\n"
    write_repo(tmp_path, "openai", TOOLS, CASES[1:3], "  clients: [raw, cursor]\n")
    config = (tmp_path / "toolselect.yaml").read_text().replace("  provider: openai\n  model: gpt-4.1\n", models)
    (tmp_path / "toolselect.yaml").write_text(config)
    script = {"answers": {q: [{"like": t, "args": a, "model": m} for m in ("fake-a", "fake-b")]
                          for _, q, t, a in CASES[1:3]}}  # fmt: skip
    with FakeModelAPI(script) as api:
        done = toolselect(
            "eval", "--base-url", api.url + "/v1", "--json", "r.json", cwd=tmp_path, env=key_env(tmp_path)
        )
        assert done.code == 0, done.out + done.err
        assert sorted((e["model"], e["tools"][0]) for e in api.log) == sorted(
            (m, t) for m in ("fake-a", "fake-b") for t in ("search_notes", "search_notes", "mcp_weather_search_notes",
                                                           "mcp_weather_search_notes")
        )  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    assert [m["run"]["label"] for m in report["models"]] == [
        "fake-a@raw",
        "fake-a@cursor",
        "fake-b@raw",
        "fake-b@cursor",
    ]
    assert all(m["metrics"]["accuracy"]["value"] == 1.0 for m in report["models"])
    assert done.out.count("fake-b@cursor") >= 2  # its section and its row in the Models table
