"""The real Codex (from npm, pinned by tests/install-servers.sh), driven: toolselect serves the frozen
surface as its MCP server, stands in for its model API (OpenAI Responses, streamed), and reads back
its pick — the request is Codex's own (its built-ins, its namespace for the server, its sanitised
names), the pick maps back to the server's tool (a dotted name too), a built-in is a steal, a model of
its own catalog gets every tool behind the search Codex runs itself and that search is recorded,
nothing is ever run, and a re-run asks the model nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import client_program, client_project, drive_all, recaptured, run_eval, weather_tools
from tests.fakes.model_api import FakeModelAPI

TOOLS = weather_tools("get.forecast")
SCRIPT: dict[str, Any] = {
    "answers": {
        # a model of its catalog (gpt-5.5) sees no tool of the server: it searches first (Codex runs it)
        "Is it raining in Paris?": [
            {"like": "get_weather", "args": {"city": "Paris"}},
            {"like": "tool_search", "args": {"query": "current weather city", "limit": 8}},
        ],
        "Forecast for Oslo?": {"like": "get_forecast", "args": {"city": "Oslo"}},
        "List the files here": {"like": "exec_command", "args": {"cmd": "ls"}},
    },
    "default": {"text": "Hello!"},
}


@pytest.fixture(scope="module")
def codex() -> Path:
    return client_program("codex", "0.171.0", "codex")


def ask_all(tmp_path: Path, codex: Path, prompts: list[str], api: FakeModelAPI, model: str) -> list[Any]:
    return drive_all(tmp_path, codex, TOOLS, prompts, api, "openai-responses", model)


def test_codex_picks_through_its_own_request_and_nothing_runs(tmp_path, codex):
    prompts = ["Forecast for Oslo?", "List the files here", "Say hello"]
    with FakeModelAPI(SCRIPT) as api:
        oslo, files, hello = ask_all(tmp_path, codex, prompts, api, "gpt-4.1")  # outside its catalog: inline
        first = next(e for e in api.log if e["prompt"] == prompts[0])["body"]
        asked = api.requests
        again = ask_all(tmp_path, codex, prompts[:1], api, "gpt-4.1")[0]
        assert api.requests == asked and again.tool == "get.forecast"  # every answer from the answer cache
    assert oslo.error is None, oslo.error
    assert (oslo.tool, oslo.args) == ("get.forecast", {"city": "Oslo"})  # get_forecast in Codex, read back
    assert files.tool == "(built-in: exec_command)"  # its own tool took the pick: a steal
    assert hello.tool is None and hello.text == "Hello!"
    # the request was Codex's own: its built-ins, the server as its namespace, its names, streamed
    names = [t.get("name") for t in first["tools"]]
    [space] = [t for t in first["tools"] if t.get("name") == "mcp__weather"]
    assert "exec_command" in names and space["type"] == "namespace"
    assert [f["name"] for f in space["tools"]] == ["get_forecast", "get_weather"]  # sanitised, sorted
    assert first["model"] == "gpt-4.1"
    assert not (tmp_path / "calls.jsonl").exists()  # no tools/call ever reached the server


def test_a_model_of_its_catalog_searches_in_codex_and_the_search_is_recorded(tmp_path, codex):
    with FakeModelAPI(SCRIPT) as api:
        [paris] = ask_all(tmp_path, codex, ["Is it raining in Paris?"], api, "gpt-5.5")
        bodies = [e["body"] for e in api.log]
    assert paris.error is None, paris.error
    assert (paris.tool, paris.args) == ("get_weather", {"city": "Paris"})
    assert [(s.query, s.found) for s in paris.searched] == [("current weather city", ("get_weather", "get.forecast"))]
    # every tool of the server deferred: only Codex's own search in the first request, its finds in the second
    assert any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in bodies[0]["tools"])
    assert "get_weather" not in json.dumps(bodies[0]["tools"])
    assert any(i.get("type") == "tool_search_output" for i in bodies[1]["input"])
    assert not (tmp_path / "calls.jsonl").exists()


GOLDEN = [
    {"id": "oslo", "question": "Forecast for Oslo?", "expected_tool": "get.forecast",
     "expected_args": {"city": "Oslo"}},
    {"id": "files", "question": "List the files here", "expected_tool": None},
]  # fmt: skip


def test_eval_drives_codex_and_says_so(tmp_path, codex):
    client_project(tmp_path, TOOLS, GOLDEN, "openai-responses", "gpt-4.1", "codex")
    with FakeModelAPI(SCRIPT) as api:
        done = run_eval(tmp_path, "openai-responses", api)
        assert done.code == 0, done.out + done.err
        asked = api.requests
        again = run_eval(tmp_path, "openai-responses", api)
        assert again.code == 0 and api.requests == asked  # a re-run drives the client, and asks the model nothing
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["run"]["client"]["driven"] == "0.171.0"
    by = {c["name"]: c["samples"][0] for c in report["cases"]}
    assert by["oslo"]["outcome"] == "PASS"
    assert by["files"]["picked_tool"] == "(built-in: exec_command)"
    assert "Codex 0.171.0, driven: the real client" in done.out


def test_a_fresh_capture_of_the_tested_version_matches_the_bundled_facts(tmp_path, codex):
    """The drift test: the tested Codex captured again says what the bundled facts say — its
    namespace naming, `-` made `_`, the cut and hash past 128, both alike names renamed, sorted names,
    its built-ins and their sizes, every tool deferred behind its own tool_search on gpt-5.5. When it
    fails, a fact of the client changed:
    `toolselect clients capture codex --out src/toolselect/data/clients/codex.observed.yaml`."""
    now = recaptured("codex", tmp_path)
    assert now["names"]["replace"] == "[^A-Za-z0-9_]" and now["collisions"] == "both renamed"
    assert now["deferred"]["as_driven"] and now["deferred"]["search_tool"] == "tool_search"


def test_the_bundled_profile_presents_the_surface_as_codex_was_seen_to():
    from toolselect.offer.clients import client_name, load_profile, present

    profile = load_profile("codex")
    assert profile.observed is not None and profile.observed.version == "0.171.0"
    assert client_name(profile, "weather", "get.forecast-v2") == "mcp__weather__get_forecast_v2"
    shown = present(profile, "weather", ["zeta", "alpha"]).shown
    assert [s.tool for s in shown] == ["alpha", "zeta"]  # sorted by name, as it sends them
    names = [b.name for b in profile.builtins]
    assert names[:2] == ["exec_command", "write_stdin"] and "tool_search" not in names  # inline: no search
