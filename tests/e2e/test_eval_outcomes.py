"""Every outcome code, end to end: the `toolselect` command against a real MCP server over stdio,
streamable HTTP and SSE, with a scripted `command` provider."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import DATA, FAKES, toolselect

OUT = DATA / "outcomes"
EXPECTED = {
    "pass-loose-strings": "PASS",
    "sel-wrong": "SEL-WRONG",
    "sel-unknown-hallucinated": "SEL-UNKNOWN",
    "sel-unknown-left-out": "SEL-UNKNOWN",
    "sel-missed": "SEL-MISSED",
    "res-unnecessary": "RES-UNNECESSARY",
    "arg-invalid": "ARG-INVALID",
    "arg-semantic": "ARG-SEMANTIC",
    "error": "ERROR",
    "pass-safe-name-mapped-back": "PASS",
}


PICKER = json.dumps(str(FAKES / "picker.py"))


def write_config(folder: Path, server: str) -> Path:
    config = folder / "toolselect.yaml"
    config.write_text(
        f"""
server:
{server}
evals:
  provider: command
  command: [{json.dumps(sys.executable)}, {PICKER}, {json.dumps(str(OUT / "script.json"))}]
  min_accuracy: 0.5
  golden: {json.dumps(str(OUT / "cases.yaml"))}
""",
        encoding="utf-8",
    )
    return config


@pytest.fixture(params=["stdio", "http", "sse"])
def server_block(request, serve, tmp_path):
    log = tmp_path / "methods.log"
    env = {"MCP_METHOD_LOG": str(log), "PAGE_SIZE": "2"}
    argv = [str(FAKES / "mcp_server.py"), str(OUT / "tools.json")]
    if request.param == "stdio":
        env_yaml = "\n".join(f"    {k}: {json.dumps(v)}" for k, v in env.items())
        block = (
            f"  command: [{json.dumps(sys.executable)}, {', '.join(json.dumps(a) for a in argv)}]\n  env:\n{env_yaml}"
        )
    else:
        path = "/mcp" if request.param == "http" else "/sse"
        server = serve([*argv, request.param], path, env)
        block = f"  url: {server.url}"
    return request.param, block, log


def test_each_outcome_code(server_block, tmp_path):
    _, block, log = server_block
    write_config(tmp_path, block)
    run = toolselect(
        "eval", "--json", "out/report.json", "--junit", "out/junit.xml", "--markdown", "out/report.md", cwd=tmp_path
    )

    assert run.code == 1, run.err  # 2/10 correct is below min_accuracy 0.5: the gate fails
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    got = {c["name"]: c["samples"][0]["outcome"] for c in report["cases"]}
    assert got == EXPECTED

    # the left-out tool is named, and a pick of it is unknown (toolproof crashes here)
    assert report["surface"]["left_out"][0]["name"] == "broken"
    assert "strng" in report["surface"]["left_out"][0]["reason"]
    # tools/list pagination was followed: five tools over three pages of two
    assert [d["name"] for d in report["surface"]["definitions"]] == [
        "get_weather",
        "get_forecast",
        "search.web",
        "broken",
        "get_time",
    ]
    # the model saw search_web and its answer was mapped back to the MCP name
    by_name = {c["name"]: c for c in report["cases"]}
    assert by_name["pass-safe-name-mapped-back"]["samples"][0]["picked_tool"] == "search.web"
    assert by_name["error"]["samples"][0]["reasons"] == ["command exited 3: model backend crashed: out of memory"]
    accuracy = report["metrics"]["accuracy"]
    assert (accuracy["value"], accuracy["numerator"], accuracy["denominator"]) == (0.2, 2, 10)
    assert accuracy["ci_method"] == "wilson" and [round(x, 3) for x in accuracy["ci"]] == [0.057, 0.51]
    assert report["metrics"]["error_rate"]["numerator"] == 1
    assert report["confusion"]["(none)"] == {"get_weather": 1}
    assert report["confusion"]["get_forecast"] == {"get_forecast": 2, "get_weather": 1}
    assert report["confusion"]["get_weather"] == {"(error)": 1, "(none)": 1, "get_weather": 1}
    assert report["confusion"]["get_time"] == {"(unknown)": 1}
    assert report["confusion"]["search.web"] == {"(unknown)": 1, "search.web": 1}

    # the console shows every outcome code and the failed gate
    for outcome in set(EXPECTED.values()):
        assert outcome in run.out
    assert "FAILED" in run.out and "accuracy 20.0% (2/10)" in run.out

    # JUnit: every missed case is a failing testcase, the provider error is an error
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite")
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert cases["sel-wrong"].find("failure").get("type") == "SEL-WRONG"
    assert cases["error"].find("error") is not None
    assert cases["pass-loose-strings"].find("failure") is None
    assert cases["gate"].find("failure") is not None
    assert suite.get("failures") == "8" and suite.get("errors") == "1"
    assert cases["arg-invalid"].get("line") == "20" and cases["arg-invalid"].get("file").endswith("cases.yaml")

    markdown = (tmp_path / "out" / "report.md").read_text()
    assert markdown.startswith("## ❌ toolselect failed: accuracy 20.0% (2/10)")

    # toolselect never calls a tool: the server saw the handshake and tools/list only
    methods = log.read_text().split()
    assert "tools/call" not in methods
    assert methods.count("tools/list") == 3
    assert set(methods) <= {"initialize", "notifications/initialized", "tools/list", "notifications/cancelled"}


DEEP = 1200  # past the JSON parser's recursion limit
NESTED = "[" * DEEP + "]" * DEEP


@pytest.mark.parametrize("provider", ["openai", "anthropic", "command"])
def test_an_answer_nested_without_end_is_that_samples_outcome(provider, model_api, tmp_path):
    """Finding 15 (issue 23): one answer whose arguments nested ~1,200 deep crashed the whole run (a
    RecursionError: no report, no comment). Now it is that sample's outcome: arguments nested deeper
    than 64 levels are no tool's (ARG-INVALID), and what can't even be read is ERROR."""
    from tests.e2e.harness import base_url, key_env

    tools = [{"name": "get_weather", "description": "Weather.", "inputSchema": {"type": "object"}}]
    (tmp_path / "tools.json").write_text(json.dumps({"tools": tools}))
    cases = [("deep", "weather, deep"), ("deeper", "weather, deeper"), ("fine", "weather in Oslo")]
    (tmp_path / "g.jsonl").write_text(
        "".join(json.dumps({"id": n, "question": q, "expected_tool": "get_weather"}) + "\n" for n, q in cases)
    )
    hundred = {"city": json.loads("[" * 100 + "]" * 100)}  # parses, but no tool's arguments
    unreadable = '{"city": ' + NESTED + "}"
    if provider == "command":
        script = tmp_path / "script.json"
        answers = {
            "weather, deep": {"tool": "get_weather", "args": hundred},
            "weather, deeper": {"print": unreadable},
            "weather in Oslo": {"tool": "get_weather", "args": {"city": "Oslo"}},
        }
        script.write_text(json.dumps(answers))
        evals = f"  provider: command\n  command: [{json.dumps(sys.executable)}, {PICKER}, {json.dumps(str(script))}]\n"
        env = {}
    else:
        deeper = {"raw_input": unreadable} if provider == "anthropic" else {"raw_args": unreadable}
        api = model_api(
            {"answers": {"weather, deep": {"tool": "get_weather", "args": hundred},
                         "weather, deeper": {"tool": "get_weather", **deeper},
                         "weather in Oslo": {"tool": "get_weather", "args": {"city": "Oslo"}}}}
        )  # fmt: skip
        evals = f"  provider: {provider}\n  model: m\n  base_url: {base_url(provider, api)}\n"
        env = key_env(tmp_path)
    (tmp_path / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n{evals}  golden: g.jsonl\n  min_accuracy: 0\n  max_error_rate: 1\n"
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path, env=env)
    assert run.code == 0, run.out + run.err
    outcomes = {c["name"]: c["samples"][0]["outcome"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert outcomes["deep"] == "ARG-INVALID" and outcomes["fine"] == "PASS"
    assert outcomes["deeper"] in ("ARG-INVALID", "ERROR")
    assert "nested deeper than 64 levels" in run.out
