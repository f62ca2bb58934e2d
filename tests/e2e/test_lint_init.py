"""`toolselect lint` and `toolselect init` as a user runs them."""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from tests.conftest import DATA, EXAMPLE, toolselect
from tests.fakes.model_api import FakeModelAPI

LINT = DATA / "lint"


def test_lint_fails_on_errors_and_writes_json_markdown_and_annotations(tmp_path):
    run = toolselect(
        "lint",
        "--tools",
        str(LINT / "bad_tools.json"),
        "--json",
        "lint.json",
        "--markdown",
        "lint.md",
        "--annotate",
        cwd=tmp_path,
    )
    assert run.code == 2
    found = json.loads((tmp_path / "lint.json").read_text())["findings"]
    assert {f["code"] for f in found} >= {"name-empty", "description-identical", "confusable", "no-annotations"}
    assert "Lint: 8 errors, 7 warnings" in run.out
    assert (tmp_path / "lint.md").read_text().startswith("### Lint: 8 errors, 7 warnings")
    assert (
        "::error file=" in run.out
        and "title=toolselect lint description-missing::fetch_invoice has no description" in run.out
    )


def test_warnings_fail_only_with_strict(tmp_path):
    run = toolselect("lint", "-c", str(EXAMPLE / "toolselect.yaml"), cwd=tmp_path)
    assert run.code == 0, run.out + run.err
    assert "get_weather and get_forecast are likely confusable" in run.out
    strict = toolselect("lint", "-c", str(EXAMPLE / "toolselect.yaml"), "--strict", cwd=tmp_path)
    assert strict.code == 2


def test_eval_stops_on_golden_errors_before_any_request(tmp_path):
    (tmp_path / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(LINT / 'weather_tools.json'))}\nevals:\n  provider: openai\n  model: m\n  "
        f"golden: {json.dumps(str(LINT / 'weak.jsonl'))}\n"
    )
    with FakeModelAPI({}) as api:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": api.url + "/v1"}
        run = toolselect("eval", cwd=tmp_path, env=env)
        strict = toolselect("eval", "--strict", cwd=tmp_path, env=env)
        assert api.requests == 0
    assert run.code == 2
    lines = run.err.splitlines()
    # a case that expects a tool the surface lacks is no config error (it fails as TOOL-MISSING); with
    # --strict it is one more
    assert len(lines) == 3 and all(line.startswith("error: ") for line in lines)
    assert "weak.jsonl:4: case 'bad-value': expected units='kelvin' is not a valid get_weather argument" in run.err
    assert (
        strict.code == 2 and len(strict.err.splitlines()) == 4 and "which the tool surface does not have" in strict.err
    )


def test_init_writes_files_eval_accepts_and_refuses_to_overwrite(tmp_path):
    run = toolselect("init", "-o", "starter", "--", sys.executable, str(EXAMPLE / "server.py"), cwd=tmp_path)
    assert run.code == 0, run.err
    golden = yaml.safe_load((tmp_path / "starter" / "golden.yaml").read_text())
    assert len(golden) == 3 * 6 + 1 + 5  # three per tool, one boundary, five negatives
    assert all(case["status"] == "needs_review" for case in golden)
    assert sum(case["expect_tool"] is None for case in golden) == 5
    assert any(case["name"] == "boundary-get_weather-get_forecast" for case in golden)
    assert (
        "expect_args: {city: <from the prompt>, days: <a number 1..10>, units: <metric | imperial>}"
        in (tmp_path / "starter" / "golden.yaml").read_text()
    )

    evaluated = toolselect("eval", "--json", "r.json", cwd=tmp_path / "starter")
    assert evaluated.code == 0, evaluated.err
    report = json.loads((tmp_path / "starter" / "r.json").read_text())
    assert report["counts"]["pending_cases"] == 24 and report["metrics"]["accuracy"]["denominator"] == 0
    assert "nothing for the gate to judge yet: 24 cases need review" in evaluated.out

    again = toolselect("init", "-o", "starter", "--", sys.executable, str(EXAMPLE / "server.py"), cwd=tmp_path)
    assert again.code == 2 and "already exists: pass --force" in again.err
    forced = toolselect(
        "init", "-o", "starter", "--force", "--", sys.executable, str(EXAMPLE / "server.py"), cwd=tmp_path
    )
    assert forced.code == 0
    # the answer cache stays out of git (the Action refuses a tracked one), said once however often init runs
    assert (tmp_path / "starter" / ".gitignore").read_text().splitlines().count(".toolselect-cache/") == 1


def test_init_draft_asks_the_model_for_prompts(tmp_path):
    tools = json.loads((LINT / "weather_tools.json").read_text())["tools"][:2]
    (tmp_path / "tools.json").write_text(json.dumps({"tools": tools}))
    script = {
        "key": "sk-draft",
        "contains": {
            "Tool: get_weather": {
                "text": 'Sure: {"direct": "weather in Oslo now?", "paraphrase": "do I need a coat in Oslo today", '
                '"arguments": "Oslo weather in imperial please"}'
            },
            "Tool: get_forecast": {
                "text": '{"direct": "forecast for Rome", "paraphrase": "will the weekend in Rome be nice", '
                '"arguments": "7 days for Rome"}'
            },
            "Tool A: get_weather": {"text": '{"prompt": "will it rain in Lisbon later?", "tool": "get_forecast"}'},
            "five user messages": {
                "text": '{"prompts": ["thanks!", "what is a cold front?", "ok and in celsius?", "book me a flight", '
                '"explain humidity"]}'
            },
        },
    }
    with FakeModelAPI(script) as api:
        run = toolselect(
            "init",
            "--tools",
            "tools.json",
            "--draft",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            api.url + "/v1",
            cwd=tmp_path,
            env={"OPENAI_API_KEY": "sk-draft"},
        )
        asked = api.requests
    assert run.code == 0, run.err
    assert asked == 2 + 1 + 1  # a request per tool, per confusable pair, and one for the negatives
    golden = yaml.safe_load((tmp_path / "golden.yaml").read_text())
    prompts = {case["name"]: case["prompt"] for case in golden}
    assert prompts["get_weather-paraphrase"] == "do I need a coat in Oslo today"
    assert prompts["boundary-get_weather-get_forecast"] == "will it rain in Lisbon later?"
    assert next(c for c in golden if c["name"] == "boundary-get_weather-get_forecast")["expect_tool"] == "get_forecast"
    assert prompts["no-tool-2"] == "what is a cold front?"
    assert all(case["status"] == "needs_review" for case in golden)  # a model's labels still need a person


def test_init_quotes_names_yaml_would_misread(tmp_path):
    tools = [
        {"name": n, "description": f"tool {n}", "inputSchema": {"type": "object"}}
        for n in ("yes", "123", "null", "get weather #now")
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    assert toolselect("init", "--tools", "tools.json", cwd=tmp_path).code == 0
    golden = yaml.safe_load((tmp_path / "golden.yaml").read_text())
    expected = [c["expect_tool"] for c in golden if c["expect_tool"] is not None]
    assert {"yes", "123", "null", "get weather #now"} <= set(expected)
    assert toolselect("eval", cwd=tmp_path).code == 0


INJECTED = "\n- name: planted\n  prompt: p\n  expect_tool: get_weather\n  status: reviewed\n"


@pytest.mark.parametrize("newline", ["\n", "\r", "\x85", "\u2028", "\u2029"])
def test_init_writes_exactly_the_cases_it_made_whatever_the_surface_says(tmp_path, newline):
    """Finding 13 (issue 23): a line break in an enum value (or a tool name, the server's origin) ended
    the comment init wrote it into, and the YAML after it became a case of its own, `status:
    reviewed`. Every text from the surface in a comment is one line now; in a value, quoted."""
    planted = INJECTED.replace("\n", newline)
    tools = [
        {"name": "get_weather", "description": "Weather." + planted,
         "inputSchema": {"type": "object", "properties": {"units": {"type": "string", "enum": ["metric" + planted]}}}},
        {"name": "get_forecast" + planted, "description": "Forecast.", "inputSchema": {"type": "object"}},
    ]  # fmt: skip
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    assert toolselect("init", "--tools", "tools.json", cwd=tmp_path).code == 0
    golden = yaml.safe_load((tmp_path / "golden.yaml").read_text())
    assert not [c for c in golden if c["name"] == "planted" or c["status"] == "reviewed"]
    assert len(golden) == 3 * 2 + 5 + sum(c["name"].startswith("boundary-") for c in golden)
    assert {c["expect_tool"] for c in golden} == {"get_weather", "get_forecast" + planted, None}


def test_init_trajectory_writes_seed_004s_suite_that_runs_as_written(tmp_path):
    server = ["--", sys.executable, str(EXAMPLE / "server.py")]
    run = toolselect("init", "--trajectory", "-o", "starter", *server, cwd=tmp_path)
    assert run.code == 0, run.err
    assert "wrote starter/trajectories.yaml: an 18-case trajectory suite" in run.out
    text = (tmp_path / "starter" / "trajectories.yaml").read_text()
    kinds = ["no-tool", "single", "plausible", "chain", "error", "ambiguous"]
    assert [sum(f'- name: "traj-{k}-' in line for line in text.splitlines()) for k in kinds] == [3] * 6
    assert text.count("\n  status: needs_review") == 18
    assert "golden: [golden.yaml, trajectories.yaml]" in (tmp_path / "starter" / "toolselect.yaml").read_text()
    # it runs as written, offline: every trajectory is asked, scored and traced, none counted yet
    ev = toolselect("eval", "--json", "r.json", cwd=tmp_path / "starter")
    assert ev.code == 0, ev.err + ev.out
    report = json.loads((tmp_path / "starter" / "r.json").read_text())
    trajectories = [c for c in report["cases"] if "expect_calls" in c]
    assert len(trajectories) == 15  # and the three ambiguous requests expect a question, no call
    ambiguous = [c for c in report["cases"] if c["name"].startswith("traj-ambiguous-")]
    assert [(c["expect_tool"], c["expect_reply"]) for c in ambiguous] == [(None, "clarify")] * 3
    assert all("trace" in c["samples"][0] and c["samples"][0]["outcome"] != "ERROR" for c in trajectories)
    errors = [c for c in trajectories if c["name"].startswith("traj-error-")]
    assert all(c["samples"][0]["trace"]["tool_calls"][0]["error"] == "503 Service Unavailable" for c in errors)
    # beside an existing config: the trajectory file alone, and how to use it
    (tmp_path / "starter" / "trajectories.yaml").unlink()
    again = toolselect("init", "--trajectory", "-o", "starter", *server, cwd=tmp_path)
    assert again.code == 0, again.err
    assert "add it to evals.golden" in again.out and (tmp_path / "starter" / "trajectories.yaml").exists()
    refused = toolselect("init", "--trajectory", "-o", "starter", *server, cwd=tmp_path)
    assert refused.code == 2 and "trajectories.yaml already exists" in refused.err


def test_lint_checks_the_surface_as_each_client_presents_it_offline(tmp_path):
    """No key, no model: `lint --client` says what Cursor and Claude Code do to a 90-tool surface —
    the tools Cursor never sends (an error when a golden case expects one), Claude Code's names, sorted
    as the real client was seen to sort them — at each tool's line in tools.json, and writes it to the
    JSON."""
    from toolselect.offer.clients import load_profile

    seen = load_profile("claude-code").observed
    assert seen is not None
    long = "search_the_issue_tracker_for_matching_tickets_by_text"
    tools = [{"name": long if i == 0 else f"tool_{i:02d}", "description": f"Tool number {i}.",
              "inputSchema": {"type": "object"}} for i in range(90)]  # fmt: skip
    (tmp_path / "tools.json").write_text(json.dumps({"tools": tools}, indent=1))
    golden = [{"id": "late", "question": "use tool 70", "expected_tool": "tool_70"},
              {"id": "early", "question": "use tool 5", "expected_tool": "tool_05"}]  # fmt: skip
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    done = toolselect(
        "lint", "--tools", "tools.json", "--golden", "g.jsonl", "--client", "cursor", "--client", "claude-code",
        "--server-name", "jira-cloud", "--json", "lint.json", "--markdown", "lint.md", cwd=tmp_path, env={},
    )  # fmt: skip
    assert done.code == 2, done.out + done.err  # error findings fail lint
    assert "Cursor (facts of 2026-12-03): 40 of 90 tools sent, named like mcp_jira-cloud_" in done.out
    assert f"Claude Code ({seen.version}, observed {seen.date}): 90 of 90 tools sent" in done.out
    report = json.loads((tmp_path / "lint.json").read_text())
    cursor, claude = report["clients"]
    # Cursor filters out the long name (10 + 53 characters, over 60), then sends the next 40
    assert [d["tool"] for d in cursor["dropped"]] == [long] + [f"tool_{i:02d}" for i in range(41, 90)]
    assert claude["sent"][0] == {"tool": long, "name": f"mcp__jira-cloud__{long}"}
    found = {(f["code"], f["tool"]): f for f in report["findings"]}
    late = found[("client-tool-dropped", "tool_70")]
    assert late["severity"] == "error" and "the golden set expects it in late" in late["message"]
    assert late["file"] == "tools.json" and late["line"] > 1
    assert found[("client-tool-dropped", "tool_80")]["severity"] == "warning"
    assert not [f for f in report["findings"] if f["tool"] == long and "Claude Code" in f["message"]]  # it takes 128
    assert [s["tool"] for s in claude["sent"][1:3]] == ["tool_01", "tool_02"]
    markdown = (tmp_path / "lint.md").read_text()
    assert "- client Cursor (facts of 2026-12-03): 40 of 90 tools sent" in markdown
    unknown = toolselect("lint", "--tools", "tools.json", "--client", "claude", cwd=tmp_path, env={})
    assert unknown.code == 2 and "unknown client 'claude' (did you mean 'claude-code'?)" in unknown.err
