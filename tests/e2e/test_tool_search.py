"""Selection behind the APIs' own tool search (--tool-search), end to end through the real SDKs and the
fake model API, which runs the search the way each API documents it (tests/fakes/tool_search.py): the
request defers every tool but the eager ones, the model searches, the API answers with what it found,
the model calls a tool it found. The report says, per tool, whether search found it, and what to keep
loaded; a description that loses the words its prompts use fails the gate when asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import key_env, run_eval
from tests.fakes import tool_search
from tests.fakes.model_api import FakeModelAPI
from toolselect.outcome import compare_saved
from toolselect.render.comment import render_comment
from toolselect.report.files import read_report

CITY = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}}
TOOLS = [
    {"name": "get_weather", "description": "Current weather conditions (temperature, rain, wind) for a city.",
     "inputSchema": CITY},
    {"name": "get_forecast", "description": "The weather forecast for the next days in a city.", "inputSchema": CITY},
    {"name": "get_air_quality", "description": "Pollution index and pollutants for a city.", "inputSchema": CITY},
    {"name": "convert_units", "description": "Converts between metric and imperial measures.",
     "inputSchema": {"type": "object", "properties": {"value": {"type": "number"}}}},
    # its prompts ask for "sunrise" and "sunset": its description says none of their words
    {"name": "get_daylight", "description": "Astronomical data: solar elevation events.", "inputSchema": CITY},
]  # fmt: skip
CASES = [
    ("paris", "What are the current weather conditions in Paris?", "get_weather"),
    ("rome", "How hot is it in Rome at the moment? Current temperature please", "get_weather"),
    ("oslo", "Forecast for Oslo over the next days", "get_forecast"),
    ("lima", "What is the forecast in Lima this weekend?", "get_forecast"),
    ("smog", "How bad is the pollution in Delhi today?", "get_air_quality"),
    ("sunrise", "When is sunrise in Madrid tomorrow?", "get_daylight"),
    ("sunset", "What time is sunset in Quito?", "get_daylight"),
]
SCRIPT: dict[str, Any] = {"answers": {prompt: {"like": tool, "args": {"city": "X"}} for _, prompt, tool in CASES}}
MODELS = {"anthropic": "claude-haiku-4-5", "openai-responses": "gpt-5.4"}


def write_repo(folder: Path, provider: str, mode: str, tools: list[dict[str, Any]] = TOOLS, lines: str = "") -> None:
    (folder / "tools.json").write_text(json.dumps({"tools": tools}, indent=1))
    golden = [{"id": n, "question": q, "expected_tool": t, "expected_args": {"city": "X"}} for n, q, t in CASES]
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    (folder / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {MODELS[provider]}\n  golden: golden.jsonl\n"
        f"  min_accuracy: 0\n  server_name: weather\n  tool_search: {mode}\n{lines}"
    )


def report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "r.json").read_text())


@pytest.mark.parametrize(
    ("provider", "mode"),
    [("anthropic", "anthropic-bm25"), ("anthropic", "anthropic-regex"), ("openai-responses", "openai")],
)
def test_search_then_pick_per_tool_and_what_to_keep_loaded(tmp_path, provider, mode):
    write_repo(tmp_path, provider, mode)
    with FakeModelAPI(SCRIPT) as api:
        done = run_eval(tmp_path, provider, api)
        assert done.code == 0, done.out + done.err
        first = api.log[0]["body"]
        asked = api.requests
        again = run_eval(tmp_path, provider, api)  # every answer from the answer cache
        assert again.code == 0 and api.requests == asked
    if provider == "anthropic":  # the search tool loaded, every tool of the server deferred
        assert first["tools"][0]["type"] == f"tool_search_tool_{mode.split('-')[1]}_20251119"
        assert all(t.get("defer_loading") is True for t in first["tools"][1:]) and len(first["tools"]) == 6
        assert not any("cache_control" in t for t in first["tools"][1:])  # the API refuses it on a deferred tool
    else:  # OpenAI's tool search and the server's namespace of deferred functions
        assert first["tools"][0] == {"type": "tool_search"}
        spaced = first["tools"][1]
        assert spaced["type"] == "namespace" and spaced["name"] == "weather"
        assert all(f["defer_loading"] is True for f in spaced["tools"]) and len(spaced["tools"]) == 5
    made = report(tmp_path)
    search, run = made["search"], made["run"]["tool_search"]
    assert run["mode"] == mode and run["k"] == 5 and run["tokens_deferred"] < run["tokens_loaded"]
    # the daylight tool's prompts share no word with its description: never found, so never picked
    assert search["per_tool"]["get_daylight"]["numerator"] == 0 and search["never_found"] >= 2
    assert search["per_tool"]["get_weather"]["value"] == 1.0 and search["per_tool"]["get_forecast"]["value"] == 1.0
    assert search["keep_loaded"][0] == "get_daylight"
    missed = {m["case"]: m for m in search["missed"]}
    assert missed["sunrise"]["tool"] == "get_daylight" and missed["sunrise"]["queries"]  # the model's own query
    sample = next(c for c in made["cases"] if c["name"] == "paris")["samples"][0]
    assert sample["outcome"] == "PASS" and "get_weather" in sample["searched"][0]["found"]
    # what a user reads: recall, tokens, and the snippet to keep the never-found tool loaded
    assert f"{mode} tool search: the expected tool found in" in done.out
    assert "keep loaded: eager: [get_daylight]" in done.out and "anthropic/alwaysLoad" in done.out
    assert done.out.count("tokens deferred vs") == 1


def test_eager_tools_stay_loaded_and_are_not_counted_as_searched(tmp_path):
    write_repo(tmp_path, "anthropic", "anthropic-bm25", lines="  eager: [get_daylight]\n")
    with FakeModelAPI(SCRIPT) as api:
        done = run_eval(tmp_path, "anthropic", api)
        assert done.code == 0, done.out + done.err
        tools = {t.get("name"): t for t in api.log[0]["body"]["tools"]}
    assert "defer_loading" not in tools["get_daylight"] and tools["get_weather"]["defer_loading"] is True
    assert tools["get_daylight"].get("cache_control") == {"type": "ephemeral"}  # the last loaded tool holds the mark
    made = report(tmp_path)
    assert made["run"]["tool_search"]["eager"] == ["get_daylight"]
    assert "get_daylight" not in made["search"]["per_tool"] and not made["search"].get("keep_loaded")
    assert all(s["outcome"] == "PASS" for c in made["cases"] for s in c["samples"])  # loaded: picked at once


def test_a_description_that_loses_its_words_fails_the_search_gate(tmp_path):
    """A PR rewords get_air_quality without "pollution": the search no longer finds it for its cases
    (found → never found), and --max-search-recall-drop fails the comparison."""
    more = [(f"a{i}", f"{city}: how bad is the pollution?", "get_air_quality")
            for i, city in enumerate(["Bern", "Kyiv", "Riga", "Oslo", "Baku", "Lviv"])]  # fmt: skip
    cases = CASES + more
    script = {"answers": {prompt: {"like": tool, "args": {"city": "X"}} for _, prompt, tool in cases}}
    reworded = [dict(t) for t in TOOLS]
    reworded[2]["description"] = "Particulate matter and ozone readings."
    for side, tools in (("base", TOOLS), ("head", reworded)):
        (tmp_path / side).mkdir()
        write_repo(tmp_path / side, "anthropic", "anthropic-bm25", tools)
        golden = [{"id": n, "question": q, "expected_tool": t, "expected_args": {"city": "X"}} for n, q, t in cases]
        (tmp_path / side / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    with FakeModelAPI(script) as api:
        for side in ("base", "head"):
            assert run_eval(tmp_path / side, "anthropic", api).code == 0
    base, head = tmp_path / "base" / "r.json", tmp_path / "head" / "r.json"
    quiet = toolselect("diff", str(base), str(head), cwd=tmp_path, env=key_env(tmp_path))
    assert quiet.code == 0, quiet.out + quiet.err  # off by default: the drop is shown, nothing fails
    assert "found → never found: 'smog', 'a0', 'a1'" in quiet.out and "search recall" in quiet.out
    gated = toolselect("diff", str(base), str(head), "--max-search-recall-drop", "10", cwd=tmp_path,
                       env=key_env(tmp_path))  # fmt: skip
    assert gated.code == 1
    assert "search recall dropped" in gated.out and "more than max-search-recall-drop 10 pt" in gated.out
    # the PR comment says it in its own section, and the gate's reason beside the verdict
    outcome = compare_saved(read_report(base), read_report(head), {"max_search_recall_drop": 10}, base_label="main")
    comment = render_comment(outcome)
    assert "Behind the API's tool search" in comment and "found → never found: 'smog', 'a0', 'a1'" in comment
    assert "search recall dropped" in comment and not outcome.verdict.passed


def test_lint_runs_the_search_offline_with_the_prompts(tmp_path):
    write_repo(tmp_path, "anthropic", "anthropic-bm25")
    done = toolselect("lint", cwd=tmp_path)
    assert done.code == 0, done.out + done.err
    assert "'sunrise' wants get_daylight: its prompt, searched as anthropic-bm25 searches, finds it" in done.out
    assert "search-miss" in done.out and "'paris' wants" not in done.out


def test_tool_search_needs_the_apis_provider(tmp_path):
    write_repo(tmp_path, "anthropic", "openai")
    wrong = toolselect("eval", cwd=tmp_path, env=key_env(tmp_path))
    assert wrong.code == 2 and "tool_search openai is openai-responses's tool search" in wrong.err
    offline = toolselect("eval", "--provider", "bm25", "--model", "", cwd=tmp_path, env=key_env(tmp_path))
    assert offline.code == 2 and "toolselect lint --tool-search openai runs the search offline" in offline.err


# ----------------------------------------------------------------------------- the fake's search, as documented


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("weather", ["get_weather", "get_forecast"]),  # a name and a description both count
        ("Weather", []),  # case-sensitive by default
        ("(?i)WEATHER", ["get_weather", "get_forecast"]),
        ("get_.*_quality", ["get_air_quality"]),
        ("imperial|metric", ["convert_units"]),
        ("City name", ["get_weather", "get_forecast", "get_air_quality", "get_daylight"]),  # argument descriptions
        ("value", ["convert_units"]),  # argument names
        ("x" * 201, "pattern exceeds 200 character limit"),
        ("(unclosed", "invalid regex pattern"),
    ],
)
def test_the_fakes_regex_search_is_pythons_re_search_over_the_documented_fields(pattern, found):
    tools = {t["name"]: {"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
             for t in TOOLS}  # fmt: skip
    got = tool_search.regex_search(pattern, tools)
    if isinstance(found, str):
        assert isinstance(got, str) and got.startswith(found)
    else:
        assert got == found


def test_the_fakes_bm25_ranks_by_the_query_and_returns_at_most_five():
    tools = {f"t{i}": {"name": f"t{i}", "description": f"weather tool number {i}"} for i in range(8)}
    tools["best"] = {"name": "best", "description": "weather weather forecast"}
    ranked = tool_search.bm25_search("weather forecast", tools)
    assert ranked[0] == "best" and len(ranked) == 5
    assert tool_search.bm25_search("sunrise", tools) == []


def test_a_malformed_pattern_comes_back_as_the_apis_error_block_through_the_sdk(tmp_path):
    """The model's pattern is refused by the search (invalid_tool_input): the SDK reads the error block;
    toolselect records the search, with nothing found."""
    write_repo(tmp_path, "anthropic", "anthropic-regex")
    script = {
        "answers": {prompt: {"like": tool, "args": {"city": "X"}, "search": "(unclosed"} for _, prompt, tool in CASES}
    }
    with FakeModelAPI(script) as api:
        done = run_eval(tmp_path, "anthropic", api)
        assert done.code == 0, done.out + done.err
    made = report(tmp_path)
    assert made["search"]["found"] == 0 and made["search"]["never_found"] == len(CASES)
    assert made["search"]["missed"][0]["queries"] == ["(unclosed"]


def test_a_pull_request_run_compares_with_its_base_and_the_comment_says_what_search_lost(tmp_path):
    """`eval --base-ref` as the Action runs a pull request: the base commit asked behind the same
    search, the comment's section with found → never found, and the gate failing when asked."""
    from tests.e2e.harness import commit_repo

    more = [(f"a{i}", f"{city}: how bad is the pollution?", "get_air_quality")
            for i, city in enumerate(["Bern", "Kyiv", "Riga", "Oslo", "Baku", "Lviv"])]  # fmt: skip
    cases = CASES + more
    write_repo(tmp_path, "anthropic", "anthropic-bm25", lines="  max_search_recall_drop: 10\n")
    golden = [{"id": n, "question": q, "expected_tool": t, "expected_args": {"city": "X"}} for n, q, t in cases]
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    base = {name: (tmp_path / name).read_text() for name in ("tools.json", "golden.jsonl", "toolselect.yaml")}
    reworded = [dict(t) for t in TOOLS]
    reworded[2]["description"] = "Particulate matter and ozone readings."
    repo = commit_repo(tmp_path, base, {"tools.json": json.dumps({"tools": reworded}, indent=1)})
    script = {"answers": {prompt: {"like": tool, "args": {"city": "X"}} for _, prompt, tool in cases}}
    with FakeModelAPI(script) as api:
        done = run_eval(repo.path, "anthropic", api, "--base-ref", "HEAD~1", "--markdown", "comment.md")
    assert done.code == 1, done.out + done.err
    comment = (repo.path / "comment.md").read_text()
    assert "Behind the API's tool search" in comment
    assert "found → never found: 'smog', 'a0', 'a1'" in comment and "search recall dropped" in comment
    assert "keep loaded: eager: \\[get\\_air\\_quality, get\\_daylight\\]" in comment  # escaped Markdown
