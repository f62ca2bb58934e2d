"""The real Gemini CLI (from npm, pinned by tests/install-servers.sh), driven: toolselect serves the
frozen surface as its MCP server, stands in for Gemini's API (`streamGenerateContent`, streamed) with
provider gemini behind it (google-genai), and reads back its pick — the request is Gemini CLI's own
(its built-ins, its `mcp_<server>_<tool>` names), the pick maps back to the server's tool (a name with
a space too), a built-in is a steal, a prompt that reads like an option is the prompt, nothing is
ever run, and a re-run asks the model nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import client_program, client_project, drive_all, recaptured, run_eval, weather_tools
from tests.fakes.model_api import FakeModelAPI

MODEL = "gemini-2.5-flash"
TOOLS = weather_tools("get forecast")
SCRIPT: dict[str, Any] = {
    "answers": {
        "Is it raining in Paris?": {"like": "get_weather", "args": {"city": "Paris"}},
        "Forecast for Oslo?": {"like": "get_forecast", "args": {"city": "Oslo"}},
        "List the files here": {"like": "list_directory", "args": {"dir_path": "."}},
    },
    "default": {"text": "Hello!"},
}


@pytest.fixture(scope="module")
def gemini() -> Path:
    return client_program("gemini-cli", "0.61.0", "gemini")


def ask_all(tmp_path: Path, gemini: Path, prompts: list[str], api: FakeModelAPI) -> list[Any]:
    return drive_all(tmp_path, gemini, TOOLS, prompts, api, "gemini", MODEL)


def test_gemini_cli_picks_through_its_own_request_and_nothing_runs(tmp_path, gemini):
    prompts = ["Is it raining in Paris?", "Forecast for Oslo?", "List the files here", "--version"]
    with FakeModelAPI(SCRIPT) as api:
        paris, oslo, files, option = ask_all(tmp_path, gemini, prompts, api)
        first = next(e for e in api.log if e["prompt"] == prompts[0])
        asked, logged = api.requests, len(api.log)
        again = ask_all(tmp_path, gemini, prompts[:1], api)[0]
        extra = [(e["prompt"], e["turn"], e["model"], len(str(e["system"]))) for e in api.log[logged:]]
        assert api.requests == asked, f"asked again: {extra}"  # every answer from the answer cache
        assert again.tool == "get_weather"
    assert paris.error is None, paris.error
    assert (paris.tool, paris.args) == ("get_weather", {"city": "Paris"})
    assert (oslo.tool, oslo.args) == ("get forecast", {"city": "Oslo"})  # mcp_weather_get_forecast, read back
    assert files.tool == "(built-in: list_directory)"  # its own tool took the pick: a steal
    assert option.tool is None and option.text == "Hello!"  # `--version` reached the model as the prompt
    # the request was Gemini CLI's own: its built-ins first, then the server's tools as it names them
    assert first["tools"][-2:] == ["mcp_weather_get_weather", "mcp_weather_get_forecast"]
    assert "list_directory" in first["tools"] and len(first["system"]) > 10_000
    assert first["model"] == MODEL
    assert not (tmp_path / "calls.jsonl").exists()  # no tools/call ever reached the server


GOLDEN = [
    {"id": "paris", "question": "Is it raining in Paris?", "expected_tool": "get_weather",
     "expected_args": {"city": "Paris"}},
    {"id": "files", "question": "List the files here", "expected_tool": None},
]  # fmt: skip


def test_eval_drives_gemini_cli_and_says_so(tmp_path, gemini):
    client_project(tmp_path, TOOLS, GOLDEN, "gemini", MODEL, "gemini-cli")
    with FakeModelAPI(SCRIPT) as api:
        done = run_eval(tmp_path, "gemini", api)
        assert done.code == 0, done.out + done.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["run"]["client"]["driven"] == "0.61.0"
    by = {c["name"]: c["samples"][0] for c in report["cases"]}
    assert by["paris"]["outcome"] == "PASS"
    assert by["files"]["picked_tool"] == "(built-in: list_directory)"
    assert "Gemini CLI 0.61.0, driven: the real client" in done.out


def test_a_fresh_capture_of_the_tested_version_matches_the_bundled_facts(tmp_path, gemini):
    """The drift test: the tested Gemini CLI captured again says what the bundled facts say —
    `mcp_<server>_<tool>`, `.`, `:` and `-` kept, names past 63 shortened, the server's order, its eight
    built-ins first, nothing deferred. When it fails, a fact of the client changed:
    `toolselect clients capture gemini-cli --out src/toolselect/data/clients/gemini-cli.observed.yaml`."""
    now = recaptured("gemini-cli", tmp_path)
    assert now["names"]["max_length"] == 63 and now["order"] == "server" and not now["deferred"]["as_driven"]


def test_a_client_that_starts_without_the_server_fails_the_sample_and_says_why(tmp_path, gemini):
    """Every client drops an MCP server that fails or is slow to start without a word: asked anyway, the
    model would see the client's own tools alone and the run would measure that. The sample fails
    instead, saying the server never came up."""
    broken = [{"description": "a tool with no name: the served surface refuses it"}]
    with FakeModelAPI(SCRIPT) as api:
        [pick] = drive_all(tmp_path, gemini, broken, ["Is it raining in Paris?"], api, "gemini", MODEL)
        assert api.requests == 0  # the model was never asked
    assert pick.error is not None and "names none of the server's tools (mcp_weather…)" in pick.error
