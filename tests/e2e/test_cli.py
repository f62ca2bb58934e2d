"""The command line as a user meets it: where the surface comes from, what a failing server or
provider looks like, and the files a run writes."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import DATA, EXAMPLE, FAKES, toolselect

PY = json.dumps(sys.executable)
TOOLS = DATA / "outcomes" / "tools.json"


def config(folder: Path, text: str) -> Path:
    path = folder / "toolselect.yaml"
    path.write_text(text)
    return path


def picker_block(script: dict | None = None, folder: Path | None = None, extra: str = "") -> str:
    argv = [sys.executable, str(FAKES / "picker.py")]
    if script is not None:
        assert folder is not None
        (folder / "script.json").write_text(json.dumps(script))
        argv.append(str(folder / "script.json"))
    return f"evals:\n  provider: command\n  command: {json.dumps(argv)}\n{extra}"


CASES = """  cases:
    - prompt: weather in Paris
      expect_tool: get_weather
      expect_args: {city: Paris}
"""


def test_example_writes_json_markdown_and_junit(tmp_path):
    run = toolselect(
        "eval",
        "--json",
        str(tmp_path / "r" / "report.json"),
        "--markdown",
        str(tmp_path / "r" / "report.md"),
        "--junit",
        str(tmp_path / "r" / "junit.xml"),
        cwd=EXAMPLE,
        process=True,  # the command as a user types it: a process of its own
    )
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["schema_version"] == 1 and report["passed"] is True
    assert report["run"]["provider"] == "bm25" and report["run"]["args_measured"] is False
    # bm25 picks tools only: argument metrics are "not measured" (null), never 0%
    assert report["metrics"]["arg_accuracy"]["value"] is None
    assert "not measured" in run.out
    assert len(report["cases"]) >= 28
    assert sum(c["expect_tool"] is None for c in report["cases"]) >= 5
    assert "Confusion matrix" in run.out and "PASSED" in run.out
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert markdown.startswith("## ✅ toolselect passed")
    # holdout prompts and names stay out of the Markdown
    assert "Boston" not in markdown and "holdout-boston" not in markdown
    assert ET.parse(tmp_path / "r" / "junit.xml").getroot().tag == "testsuites"


def test_env_provider_beats_yaml_and_flag_beats_env(tmp_path):
    config(tmp_path, f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  provider: openai\n{CASES}")
    run = toolselect("eval", "--json", "a.json", cwd=tmp_path, env={"TOOLPROOF_EVAL_PROVIDER": "bm25"})
    assert run.code in (0, 1), run.err
    assert json.loads((tmp_path / "a.json").read_text())["run"]["provider"] == "bm25"
    run = toolselect("eval", cwd=tmp_path, env={"TOOLSELECT_PROVIDER": "openai", "TOOLPROOF_EVAL_PROVIDER": "bm25"})
    assert run.code == 2 and "no model for provider 'openai'" in run.err  # TOOLSELECT_ wins over TOOLPROOF_
    run = toolselect(
        "eval", "--provider", "bm25", "--json", "b.json", cwd=tmp_path, env={"TOOLSELECT_PROVIDER": "openai"}
    )
    assert json.loads((tmp_path / "b.json").read_text())["run"]["provider"] == "bm25"


def test_url_and_server_command_override_the_config(tmp_path, serve):
    # the config points at a server that does not exist; the flags replace it
    config(tmp_path, f"server:\n  command: [does-not-exist]\nevals:\n  provider: bm25\n  min_accuracy: 0\n{CASES}")
    run = toolselect(
        "eval", "--json", "a.json", "--", sys.executable, str(FAKES / "mcp_server.py"), str(TOOLS), cwd=tmp_path
    )
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "a.json").read_text())["surface"]["origin"].startswith("stdio: ")
    server = serve([str(FAKES / "mcp_server.py"), str(TOOLS), "http"])
    run = toolselect("eval", "--url", server.url, "--json", "b.json", cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "b.json").read_text())
    assert report["surface"]["origin"] == f"streamable-http: {server.url}"
    assert report["surface"]["tools"] == ["get_weather", "get_forecast", "search.web", "get_time"]


def test_snapshot_then_frozen_surface_has_the_same_hash(tmp_path):
    run = toolselect(
        "snapshot", "-o", str(tmp_path / "tools.json"), "--", sys.executable, str(EXAMPLE / "server.py"), cwd=tmp_path
    )
    assert run.code == 0, run.err
    live_hash = run.out.split("surface hash ")[1].split()[0]
    frozen = json.loads((tmp_path / "tools.json").read_text())
    assert [t["name"] for t in frozen["tools"]][:2] == ["get_weather", "get_forecast"]
    run = toolselect(
        "eval",
        "--tools",
        str(tmp_path / "tools.json"),
        "--golden",
        str(EXAMPLE / "golden.jsonl"),
        "--provider",
        "bm25",
        "--min-accuracy",
        "0",
        "--json",
        "r.json",
        "-q",
        cwd=tmp_path,
    )
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "r.json").read_text())["surface"]["hash"] == live_hash


def test_server_that_crashes_shows_its_stderr(tmp_path):
    config(
        tmp_path,
        f"server:\n  command: [{PY}, {json.dumps(str(FAKES / 'mcp_server.py'))}, {json.dumps(str(TOOLS))}]\n"
        f"  env: {{CRASH_AT_START: 'fatal: WEATHER_API_KEY is not set'}}\nevals:\n  provider: bm25\n{CASES}",
    )
    run = toolselect("eval", cwd=tmp_path)
    assert run.code == 3
    assert "could not list tools from the MCP server (stdio: " in run.err
    assert "closed the connection" in run.err
    assert "server stderr (last lines):\n  starting weather server…\n  fatal: WEATHER_API_KEY is not set" in run.err


def test_server_that_hangs_times_out(tmp_path):
    config(
        tmp_path,
        f"server:\n  command: [{PY}, {json.dumps(str(FAKES / 'mcp_server.py'))}, {json.dumps(str(TOOLS))}]\n"
        f"  env: {{HANG_AT_START: '1'}}\n  startup_timeout_s: 1\nevals:\n  provider: bm25\n{CASES}",
    )
    run = toolselect("eval", cwd=tmp_path)
    assert run.code == 3
    assert "no answer within startup_timeout_s=1 s" in run.err


def test_missing_server_program(tmp_path):
    config(tmp_path, f"server:\n  command: [no-such-mcp-server, --stdio]\nevals:\n  provider: bm25\n{CASES}")
    run = toolselect("eval", cwd=tmp_path)
    assert run.code == 3
    assert "cannot start the MCP server: no-such-mcp-server not found" in run.err


def test_http_headers_expand_env_vars(tmp_path, serve):
    server = serve([str(FAKES / "mcp_server.py"), str(TOOLS), "http"], env={"REQUIRE_BEARER": "s3cret"})
    headers = "{Authorization: 'Bearer ${MCP_TOKEN}'}"
    text = f"server:\n  url: {server.url}\n  headers: {headers}\nevals:\n  provider: bm25\n  min_accuracy: 0\n{CASES}"
    config(tmp_path, text)
    run = toolselect("eval", "-q", cwd=tmp_path, env={"MCP_TOKEN": "s3cret"})
    assert run.code == 0, run.err
    run = toolselect("eval", "-q", cwd=tmp_path, env={"MCP_TOKEN": "wrong"})
    assert run.code == 3
    assert "the server answered HTTP 401 (check server.headers" in run.err


def test_command_that_cannot_start_stops_the_run_without_a_pass_row(tmp_path):
    config(
        tmp_path,
        f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  provider: command\n  command: [no-such-picker]\n"
        f"  min_accuracy: 0\n{CASES}    - prompt: Tell me a joke\n      expect_tool: null\n",
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path)
    assert run.code == 3
    assert "cannot start the command provider 'no-such-picker'" in run.out + run.err
    report = json.loads((tmp_path / "r.json").read_text())
    outcomes = [s["outcome"] for c in report["cases"] for s in c["samples"]]
    assert "PASS" not in outcomes and "ERROR" in outcomes
    assert report["passed"] is False and report["gate"]["stopped"]
    assert "PASS " not in run.out and "STOPPED" in run.out


def test_command_timeout_and_bad_output_are_errors_in_their_own_words(tmp_path):
    script = {
        "slow": {"sleep": 5},
        "garbage": {"print": "I think you want get_weather"},
        "bad types": {"tool": 7},
        "weather in Paris": {"tool": "get_weather", "args": {"city": "Paris"}},
    }
    cases = "".join(f"    - prompt: {p}\n      expect_tool: get_weather\n" for p in ("slow", "garbage", "bad types"))
    config(
        tmp_path,
        f"tools_file: {json.dumps(str(TOOLS))}\n"
        + picker_block(script, tmp_path, "  timeout_s: 1\n  max_error_rate: 1\n  min_accuracy: 0\n")
        + CASES
        + cases,
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path)
    assert run.code == 0, run.err
    reasons = {
        c["prompt"]: c["samples"][0]["reasons"][0]
        for c in json.loads((tmp_path / "r.json").read_text())["cases"]
        if c["samples"][0]["reasons"]
    }
    assert reasons == {
        "slow": "command timed out after 1 s",
        "garbage": "command printed invalid JSON: 'I think you want get_weather'",
        "bad types": "'tool' must be a string or null (got 7)",
    }


def test_too_many_provider_errors_exit_3(tmp_path):
    script = {"weather in Paris": {"exit": 1, "stderr": "upstream 503"}}
    config(
        tmp_path,
        f"tools_file: {json.dumps(str(TOOLS))}\n" + picker_block(script, tmp_path, "  min_accuracy: 0\n") + CASES,
    )
    run = toolselect("eval", cwd=tmp_path)
    assert run.code == 3
    assert "an outage is not a result" in run.out


def test_draft07_tuple_schema_is_offered_not_dropped(tmp_path):
    tools = [
        {
            "name": "set_point",
            "description": "Set a point",
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"xy": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}},
            },
        }
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    script = {"point at 1,2": {"tool": "set_point", "args": {"xy": [1, 2]}}}
    config(
        tmp_path,
        "tools_file: tools.json\n"
        + picker_block(script, tmp_path)
        + "  cases:\n    - prompt: point at 1,2\n      expect_tool: set_point\n      expect_args: {xy: [1, 2]}\n",
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["surface"]["left_out"] == [] and report["passed"] is True


def test_url_secrets_stay_out_of_the_report(tmp_path, serve):
    server = serve([str(FAKES / "mcp_server.py"), str(TOOLS), "http"])
    config(
        tmp_path,
        f"server:\n  url: '{server.url}?api_key=${{MCP_KEY}}'\nevals:\n  provider: bm25\n  min_accuracy: 0\n{CASES}",
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path, env={"MCP_KEY": "mcpSECRET999"})
    assert run.code == 0, run.err
    assert "mcpSECRET999" not in (tmp_path / "r.json").read_text() + run.out
    assert json.loads((tmp_path / "r.json").read_text())["surface"]["origin"].endswith("/mcp?…")


def test_a_command_without_a_shebang_is_a_clear_error(tmp_path):
    picker = tmp_path / "pick.txt"
    picker.write_text("echo hi\n")
    picker.chmod(0o755)
    config(
        tmp_path, f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  provider: command\n  command: [./pick.txt]\n{CASES}"
    )
    run = toolselect("eval", cwd=tmp_path)
    assert run.code == 3
    assert "cannot start the command provider './pick.txt'" in run.out + run.err


@pytest.mark.parametrize("ci", [{"GITHUB_ACTIONS": "true"}, {"CI": "true"}], ids=["GITHUB_ACTIONS", "CI"])
def test_ci_logs_get_a_wide_console(tmp_path, ci):
    """No terminal and CI set: sentences and table cells are not wrapped at 80 columns."""
    line = "get_weather and get_forecast are likely confusable (similarity"
    lint = toolselect("lint", cwd=EXAMPLE, env={"COLUMNS": "", **ci})
    declared = next(
        i
        for i, x in enumerate((EXAMPLE / "server.py").read_text().splitlines(), 1)
        if "Current weather conditions" in x
    )
    assert any(line in row and f"server.py:{declared}" in row for row in lint.out.splitlines())  # its description
    narrow = toolselect("lint", cwd=EXAMPLE, env={"COLUMNS": ""})
    assert not any(line in row for row in narrow.out.splitlines())  # 80 columns: wrapped
    assert max(map(len, narrow.out.splitlines())) <= 80
