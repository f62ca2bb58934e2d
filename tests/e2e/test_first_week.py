"""A new user's first week on a real server: excel-mcp-server (46 tools, from PyPI), a golden set
drafted by `init`, and the views that must lead with what matters at that scale."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA, EXAMPLE, TESTS, toolselect
from tests.e2e.harness import GOLDEN, TOOLS, commit_repo, pull_request_event, register_pull, run_action

EXCEL = TESTS / ".excel" / "bin" / "excel-mcp-server"


@pytest.fixture(scope="module")
def excel_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real server's tool surface, captured once (tests/install-servers.sh installs it)."""
    assert EXCEL.exists(), "run tests/install-servers.sh: it installs excel-mcp-server into tests/.excel"
    out = tmp_path_factory.mktemp("excel") / "tools.json"
    run = toolselect("snapshot", "-o", str(out), "--", str(EXCEL), "stdio", cwd=out.parent)
    assert run.code == 0, run.err
    return out


@pytest.fixture
def excel_project(tmp_path: Path, excel_tools: Path) -> Path:
    """A project as `init` drafts it for the 46 tools: every prompt still a TODO."""
    shutil.copy(excel_tools, tmp_path / "tools.json")
    run = toolselect("init", "--tools", "tools.json", cwd=tmp_path)
    assert run.code == 0, run.err
    return tmp_path


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_lint_at_46_tools_leads_with_the_golden_set_and_counts_the_rest(excel_project: Path):
    run = toolselect("lint", cwd=excel_project)
    assert run.code == 0, run.err
    out = run.out
    # the golden set's findings come first, then the surface's, then one line per code
    assert out.index("Golden set (") < out.index("Tool surface (") < out.index("By code: ")
    by_code = next(line for line in out.splitlines() if line.startswith("By code: "))
    assert "46 param-no-description" in by_code and "confusable" in by_code and "prompt-todo" in by_code
    # three of each code in full, the rest counted: no wall
    assert out.count("warning confusable tools.json:") == 3 and out.count("param-no-description tools.json:") == 3
    assert out.count("warning confusable-destructive tools.json:") == 3  # a reader and a destroyer look alike
    assert "… 43 more param-no-description" in flat(out)
    assert "every finding: toolselect lint --all" in out
    assert len(out.splitlines()) < 60
    # --all: every finding
    every = toolselect("lint", "--all", cwd=excel_project).out
    assert every.count("param-no-description tools.json:") == 46 and "more param-no-description" not in every
    # as annotations: within GitHub's ten per level, and where the rest are
    said = annotations_of(toolselect("lint", "--annotate", cwd=excel_project).out)
    warnings = [m for level, m in said if level == "warning"]
    assert len(warnings) == 10 and re.fullmatch(r"\d+ more warnings: see `toolselect lint`", warnings[-1])


def test_lint_says_what_eval_would_about_replies_it_cannot_read(tmp_path: Path):
    """A case that expects a kind of reply, on bm25 (which writes none): lint warns as eval does."""
    for name in ("server.py", "golden.jsonl", "requirements.txt", "toolselect.yaml", "trajectories.yaml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    with (tmp_path / "golden.jsonl").open("a") as f:
        f.write('{"question": "What is the weather?", "expected_tool": null, "expect_reply": "clarify"}\n')
    lint = toolselect("lint", cwd=tmp_path)
    assert "reply-not-read" in lint.out and "bm25 writes no reply" in flat(lint.out)
    ran = toolselect("eval", "--json", "r.json", cwd=tmp_path)
    assert "reply-not-read" in {f["code"] for f in ran.json(tmp_path / "r.json")["lint"]}


@pytest.fixture
def excel_eval(tmp_path: Path, excel_tools: Path) -> Path:
    shutil.copy(excel_tools, tmp_path / "tools.json")
    shutil.copy(DATA / "excel-golden.yaml", tmp_path / "golden.yaml")
    (tmp_path / "toolselect.yaml").write_text("evals:\n  provider: bm25\n  golden: golden.yaml\n")
    return tmp_path


def test_at_46_tools_the_confusions_are_what_is_shown(excel_eval: Path):
    run = toolselect("eval", "--tools", "tools.json", "--json", "head.json", "--markdown", "r.md", cwd=excel_eval)
    assert run.code == 1, run.err
    # the console lists ten confusions, biggest first, and says how many more there are
    listed = run.out[run.out.index("Confusions (wanted → got):") :].split("\n\n")[0].splitlines()
    assert len([x for x in listed[1:] if "wanted " in x]) == 10
    hot = {(e, p) for e, row in run.json(excel_eval / "head.json")["confusion"].items() for p in row if e != p}
    assert f"… {len(hot) - 10} more" in run.out
    # a no-call case that wants a question, on bm25 (which writes none): a pass, and no confusion anywhere
    report = run.json(excel_eval / "head.json")
    assert next(c for c in report["cases"] if c["name"] == "ambiguous")["passed"] == 1
    assert not [x for x in listed if "(none" in x] and "(none: clarify)" not in report["confusion"]
    # the Markdown matrix: only rows and columns that hold a confusion, and how many were left out
    md = (excel_eval / "r.md").read_text()
    matrix = md[md.index("### Confusion matrix") :].split("\n\n")[2].splitlines()
    rows = {line.split("|")[1].strip(" `") for line in matrix[2:]}
    assert rows == {e for e, _ in hot}
    assert len(matrix[0].split("|")) - 3 < len(report["surface"]["tools"]) / 2
    assert re.search(r"_\d+ rows? and \d+ columns? with only right answers \(and nothing changed\) left out\._", md)


def test_the_comment_matrix_at_46_tools_shows_what_moved(excel_eval: Path):
    """A PR that rewrites one description: the matrix keeps the rows and columns that moved."""
    first = toolselect("eval", "--tools", "tools.json", "--json", "base.json", cwd=excel_eval)
    assert first.code == 1, first.err
    tools = json.loads((excel_eval / "tools.json").read_text())
    listed = tools["tools"] if isinstance(tools, dict) else tools
    vba = next(t for t in listed if t["name"] == "read_vba")
    vba["description"] = "Macros: what the macros in a workbook do, module by module."
    (excel_eval / "tools.json").write_text(json.dumps(tools))
    second = toolselect("eval", "--tools", "tools.json", "--json", "head.json", cwd=excel_eval)
    diff = toolselect("diff", "base.json", "head.json", "--markdown", "d.md", cwd=excel_eval)
    assert diff.code in (0, 1), diff.err + second.err
    md = (excel_eval / "d.md").read_text()
    assert "Confusion matrix (head; Δ vs base in brackets)" in md
    section = md[md.index("Confusion matrix (head") :].split("</details>")[0]
    assert "with only right answers (and nothing changed) left out" in section
    moved = next(line for line in section.splitlines() if line.startswith("| `read_range` |"))
    assert "**1** (+1)" in moved and "· (−1)" in moved  # read_range's one right answer went elsewhere


def test_a_provider_that_writes_no_reply_measures_no_kind_of_reply(excel_eval: Path):
    """bm25 never writes: 'asked the user' would be every silence. The rate is not measured, as
    argument accuracy is not, and min_clarify says why it can't be judged."""
    run = toolselect("eval", "--tools", "tools.json", "--json", "r.json", "--markdown", "r.md", cwd=excel_eval)
    out = flat(run.out)
    assert "clarification rate (cases that expect a question) │ not measured" in out
    assert "argument accuracy │ not measured" in out
    assert "replies without a call: not measured (bm25 writes no reply)" in out
    report = run.json(excel_eval / "r.json")
    assert report["metrics"]["clarify_rate"]["value"] is None and report["run"]["replies_read"] is False
    md = (excel_eval / "r.md").read_text()
    assert "| clarification rate (cases that expect a question) | not measured |" in md
    gated = toolselect("eval", "--tools", "tools.json", "--min-clarify", "0.5", "--min-accuracy", "0", cwd=excel_eval)
    assert gated.code == 1 and "the clarification rate is not measured: the provider writes no reply" in flat(gated.out)


def test_findings_point_at_the_tools_own_lines_in_a_layered_server(tmp_path: Path):
    """excel-mcp-server declares `create_sheet` in server/sheet_tools.py (decorated, with its docstring)
    over a same-named helper in operations/sheets.py: a finding points at the description, never at
    the helper; lint, --annotate and lint --client say the same place."""
    package = next((TESTS / ".excel" / "lib").glob("python3*/site-packages/excel_mcp"))
    shutil.copytree(package, tmp_path / "excel_mcp", ignore=shutil.ignore_patterns("__pycache__"))
    python = TESTS / ".excel" / "bin" / "python"
    (tmp_path / "toolselect.yaml").write_text(f'server:\n  command: ["{python}", "-m", "excel_mcp", "stdio"]\n')
    run = toolselect("lint", "--json", "lint.json", "--annotate", cwd=tmp_path)
    findings = [f for f in run.json(tmp_path / "lint.json")["findings"] if f["tool"]]
    assert len({f["tool"] for f in findings}) > 40
    for f in findings:
        assert f["file"].startswith("excel_mcp/server/"), f
        line = (tmp_path / f["file"]).read_text().split("\n")[f["line"] - 1]
        assert '"""' in line or f'"{f["tool"]}"' in line or f"def {f['tool']}(" in line, (f, line)
    sheet = next(f for f in findings if f["tool"] == "create_sheet")
    said = (tmp_path / sheet["file"]).read_text().split("\n")[sheet["line"] - 1].strip()
    assert said == '"""Add an empty worksheet."""'
    # the annotations (the first ten) say the same places
    annotated = re.findall(r"^::warning file=([^,]+),line=(\d+),title=toolselect lint ([a-z-]+)::(.*)$", run.out, re.M)
    assert len(annotated) == 9
    for file, line, code, message in annotated:
        same = [f for f in findings if f["code"] == code and message.startswith(f["message"])]
        assert same and all((f["file"], f["line"]) == (file, int(line)) for f in same), (file, line, message)
    # and so does lint as a client presents the surface
    client = toolselect("lint", "--client", "claude-code", "--json", "c.json", cwd=tmp_path)
    places = {(f["code"], f["tool"]): (f["file"], f["line"]) for f in client.json(tmp_path / "c.json")["findings"]}
    assert places[(sheet["code"], "create_sheet")] == (sheet["file"], sheet["line"])


def test_init_drafts_boundary_cases_for_the_most_confusable_pairs_only(tmp_path: Path, excel_tools: Path):
    shutil.copy(excel_tools, tmp_path / "tools.json")
    run = toolselect("init", "--tools", "tools.json", cwd=tmp_path)
    golden = (tmp_path / "golden.yaml").read_text()
    assert golden.count('- name: "boundary-') == 10
    assert "43 likely-confusable pairs: boundary cases for the 10 most confusable (--boundaries N for more" in run.out
    # the ten drafted are the ten lint wants covered: once they are written, no coverage-boundary is left
    lint = toolselect("lint", "--json", "l.json", cwd=tmp_path)
    wanted = [f for f in lint.json(tmp_path / "l.json")["findings"] if f["code"] == "coverage-boundary"]
    assert len(wanted) == 10 and all(f"boundary-{f['tool']}-" in golden for f in wanted)
    again = toolselect("init", "--tools", "tools.json", "--force", "--boundaries", "3", cwd=tmp_path)
    assert again.code == 0 and (tmp_path / "golden.yaml").read_text().count('- name: "boundary-') == 3
    bad = toolselect("init", "--tools", "tools.json", "--force", "--boundaries", "-1", cwd=tmp_path)
    assert bad.code == 2 and "--boundaries: must be 0 or more, not -1" in bad.err


def test_a_share_below_its_target_is_printed_as_measured(tmp_path: Path, excel_tools: Path):
    """5 no-tool cases of 34 is 14.7%: below the 15% aimed at, and never printed as '15%'."""
    shutil.copy(excel_tools, tmp_path / "tools.json")
    lines = [
        json.dumps({"question": f"Show me the cells of block {i} on the Data sheet", "expected_tool": "read_range"})
        for i in range(29)
    ] + [json.dumps({"question": f"Tell me joke number {i}", "expected_tool": None}) for i in range(5)]
    (tmp_path / "golden.jsonl").write_text("\n".join(lines) + "\n")
    run = toolselect("lint", "--tools", "tools.json", "--golden", "golden.jsonl", cwd=tmp_path)
    assert "5 of 34 cases (14.7%) expect no tool; aim for at least 15%" in flat(run.out)


def test_lint_counts_every_call_a_trajectory_expects(tmp_path: Path):
    """get_forecast is only ever the second call: it is covered all the same."""
    for name in ("server.py", "requirements.txt"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    config = (EXAMPLE / "toolselect.yaml").read_text().split("evals:")[0]
    chains = "".join(
        f"""
- name: chain-{city}
  prompt: Any storm warnings for {city}? If not, the 3 day forecast there.
  expect_calls:
    - {{tool: get_weather_alerts, args: {{region: {city}}}}}
    - {{tool: get_forecast, args: {{city: {city}, days: 3}}}}
  mocks:
    get_weather_alerts: {{result: "No active alerts"}}
"""
        for city in ("Bergen", "Oslo", "Lima")
    )
    (tmp_path / "chains.yaml").write_text(chains)
    (tmp_path / "toolselect.yaml").write_text(config + "evals:\n  provider: bm25\n  golden: chains.yaml\n")
    run = toolselect("lint", "--json", "l.json", cwd=tmp_path)
    findings = run.json(tmp_path / "l.json")["findings"]
    coverage = {f["code"]: f["message"] for f in findings if f["code"] in ("coverage-no-case", "coverage-few-cases")}
    assert coverage == {
        "coverage-no-case": "no case expects get_weather, get_air_quality, convert_temperature, search_web"
    }


def test_a_log_shows_progress_and_a_dry_run_the_setup_a_real_run_does(tmp_path: Path):
    """Piped (as in CI): no bar is drawn, so plain lines say how far the run is, a tenth at a time."""
    for side in ("dry", "real"):
        for name in ("server.py", "golden.jsonl", "requirements.txt", "toolselect.yaml", "trajectories.yaml"):
            (tmp_path / side).mkdir(exist_ok=True)
            shutil.copy(EXAMPLE / name, tmp_path / side / name)
    dry = toolselect("eval", "--dry-run", cwd=tmp_path / "dry")
    real = toolselect("eval", "--repeat", "5", cwd=tmp_path / "real")
    progress = re.findall(r"^asked (\d+)/210 · \d+ s$", real.out, re.M)
    assert [int(n) for n in progress] == [21 * i for i in range(1, 11)]
    # the setup's progress, as the real run says it (both checkouts are fresh: the setup runs)
    assert "server setup: python -c 'import mcp'" in flat(dry.out) and "server setup done in" in flat(dry.out)
    assert "server setup: python -c 'import mcp'" in flat(real.out) and "server setup done in" in flat(real.out)
    assert flat(dry.out).index("server setup done in") < flat(dry.out).index("total: ")


def annotations_of(stdout: str) -> list[tuple[str, str]]:
    """The annotations as the runner reads them: (level, message), in order."""
    return re.findall(r"^::(error|warning|notice)[^:]*::(.*)$", stdout, re.M)


@pytest.mark.parametrize("floor", ["0", "0.9"])
def test_annotations_keep_githubs_ten_per_level_and_the_passing_gate_has_no_error(
    world, tmp_path: Path, excel_tools: Path, floor: str
):
    """20 failing cases and ~140 lint warnings on 46 tools: at most 10 of each level (GitHub drops the
    rest without a word), failing cases before lint, a line that says how many more the summary has;
    a gate that passes says its misses as warnings, never errors."""
    api, github = world
    config = f"tools_file: tools.json\nevals:\n  provider: bm25\n  min_accuracy: {floor}\n  golden: golden.yaml\n"
    config += "  max_critical: 1000\n"  # bm25 deletes for read questions too: here only accuracy decides
    files = {
        "evals/tools.json": excel_tools.read_text(),
        "evals/golden.yaml": (DATA / "excel-golden.yaml").read_text(),
        "evals/toolselect.yaml": config,
    }
    repo = commit_repo(tmp_path, files, {"evals/README.md": "the golden set\n"})
    event = {"ref": "refs/heads/main", "after": repo.head}
    run = run_action(repo.path, tmp_path, inputs={}, event=event, event_name="push", api=api, github=github)
    said = annotations_of(run.stdout)
    errors = [m for level, m in said if level == "error"]
    warnings = [m for level, m in said if level == "warning"]
    if floor == "0":  # the gate passed
        assert run.code == 0 and errors == []
        assert len(warnings) == 10 and warnings[0].startswith("case '")  # a miss, not a lint finding, first
    else:
        assert run.code == 1 and len(errors) == 10 and errors[0].startswith("case '")
        assert re.fullmatch(r"\d+ more errors: see the job summary", errors[-1])
        assert len(warnings) == 10  # lint's
    assert re.fullmatch(r"\d+ more warnings: see the job summary", warnings[-1])
    assert "All cases" in run.summary and "`param-no-description`" in run.summary


def test_a_client_that_hides_tools_behind_search_needs_a_model(excel_eval: Path):
    """bm25 can't call Claude Code's tool search: instead of 0% recall and built-ins 'stealing' picks by
    shared words, eval refuses and says why; lint --client still checks the presentation offline."""
    run = toolselect("eval", "--tools", "tools.json", "--client", "claude-code", "--json", "r.json", cwd=excel_eval)
    assert run.code == 2 and not (excel_eval / "r.json").exists()
    said = flat(run.err)
    assert "the client claude-code hides your tools behind its tool search" in said
    assert "bm25 answers one request with one pick" in said and "toolselect lint --client NAME" in said
    (excel_eval / "toolselect.yaml").write_text(
        "evals:\n  provider: command\n  command: [python3, pick.py]\n  golden: golden.yaml\n  clients: [claude-code]\n"
    )
    configured = toolselect("eval", "--tools", "tools.json", cwd=excel_eval)
    assert configured.code == 2 and "and command answers one request with one pick" in flat(configured.err)
    assert toolselect(
        "eval", "--tools", "tools.json", "--provider", "bm25", "--client", "raw", cwd=excel_eval
    ).code in (0, 1)
    assert toolselect("lint", "--tools", "tools.json", "--client", "claude-code", cwd=excel_eval).code == 0


def test_a_pull_request_that_renames_a_tool_names_the_cases_it_left_behind(world, tmp_path: Path):
    """The PR renames get_forecast: its three cases fail as TOOL-MISSING (never asked), the others run,
    the comment says which cases expect a tool that is gone, and the gate fails (exit 1). --strict keeps
    the old refusal (exit 2, before any request)."""
    api, github = world
    base_tools = json.dumps({"tools": TOOLS}, indent=1)
    renamed = [dict(t, name="get_forecast_v2") if t["name"] == "get_forecast" else t for t in TOOLS]
    config = "tools_file: tools.json\nevals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n"
    files = {"evals/tools.json": base_tools, "evals/golden.jsonl": GOLDEN, "evals/toolselect.yaml": config}
    repo = commit_repo(tmp_path, files, {"evals/tools.json": json.dumps({"tools": renamed}, indent=1)})
    register_pull(github, repo)
    run = run_action(
        repo.path, tmp_path, inputs={"working-directory": "evals", "min-accuracy": "0"},
        event=pull_request_event(repo), event_name="pull_request", api=api, github=github,
    )  # fmt: skip
    assert run.code == 1, run.stdout + run.stderr
    head = run.report()
    outcomes = {c["name"]: c["samples"][0]["outcome"] for c in head["cases"]}
    assert {n for n, o in outcomes.items() if o == "TOOL-MISSING"} == {"fc-dublin", "fc-seattle", "fc-lisbon"}
    assert outcomes["now-paris"] == "PASS"  # the others ran
    asked = {entry["body"]["messages"][-1]["content"] for entry in api.log}
    assert "Will it rain tomorrow in Dublin?" in asked  # by the base, where get_forecast still is
    [comment] = [c["body"] for c in github.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
    assert (
        "3 cases expect get\\_forecast (fc-dublin, fc-seattle, fc-lisbon), which the tool surface does not have "
        "(removed or renamed?): TOOL-MISSING" in comment
    )
    # --strict: today's refusal, before any request
    before = api.requests
    strict = toolselect(
        "eval", "--strict", cwd=repo.path / "evals", env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": api.url + "/v1"}
    )
    assert strict.code == 2 and "expects tool 'get_forecast', which the tool surface does not have" in flat(strict.err)
    assert "get_forecast_v2" in strict.err and api.requests == before  # did you mean


SUITE = {
    "version": "1.0",
    "testCases": [
        {"id": "rain-paris", "category": "weather", "query": "Is it raining in Paris right now?",
         "expectedTools": ["get_weather"], "reference": "get_weather with city Paris"},
        {"id": "week-rome", "category": "forecast", "query": "What's the 5 day forecast for Rome?",
         "expectedTools": ["get_forecast", "get_weather"]},
        {"id": "uv-oslo", "category": "uv", "query": "How strong is the UV in Oslo today?",
         "expectedTools": ["get_uv_index"]},  # a tool this server never had
        {"id": "hello", "category": "chat", "query": "Thanks, that's all!", "expectedTools": [],
         "context": [{"role": "user", "content": "What's the weather in Paris?"}]},
    ],
}  # fmt: skip


def test_a_published_suite_imports_and_runs_with_its_missing_tool_named(tmp_path: Path):
    for name in ("server.py", "requirements.txt"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "test_cases.json").write_text(json.dumps(SUITE))
    run = toolselect("import", "test_cases.json", cwd=tmp_path)
    assert run.code == 0, run.err
    assert "wrote golden.imported.yaml: 4 cases from test_cases.json ({query, expectedTools[]} items)" in run.out
    golden = (tmp_path / "golden.imported.yaml").read_text()
    assert (
        "# from test_cases.json: id rain-paris (category weather)\n# reference: get_weather with city Paris\n" in golden
    )
    assert 'expect_tool: ["get_forecast", "get_weather"]  # any of them' in golden
    assert "# context (not asked: a case is one turn)" in golden
    config = (EXAMPLE / "toolselect.yaml").read_text().split("evals:")[0]
    (tmp_path / "toolselect.yaml").write_text(config + "evals:\n  provider: bm25\n  golden: golden.imported.yaml\n")
    ran = toolselect("eval", "--min-accuracy", "0", "--json", "r.json", cwd=tmp_path)
    assert ran.code == 1, ran.err  # the missing tool fails the gate, and only its case fails for it
    outcomes = {c["name"]: c["samples"][0]["outcome"] for c in ran.json(tmp_path / "r.json")["cases"]}
    assert outcomes["uv-oslo"] == "TOOL-MISSING" and outcomes["rain-paris"] == "PASS" and outcomes["hello"] == "PASS"
    assert "1 case expects get_uv_index (uv-oslo), which the tool surface does not have" in flat(ran.out)
    # its cost is counted without the case that can't be asked
    priced = toolselect("eval", "--dry-run", "--provider", "openai", "--model", "gpt-4.1", cwd=tmp_path,
                        env={"OPENAI_API_KEY": "k"})  # fmt: skip
    assert "total: 3 requests" in priced.out, priced.out + priced.err


def test_the_golden_set_jsonl_and_promptfoo_tests_import_and_an_unknown_shape_says_what_it_saw(tmp_path: Path):
    (tmp_path / "g.jsonl").write_text(
        '{"id": "G01", "question": "Weather in Lima?", "expected_tool": "get_weather", '
        '"expected_args": {"city": "Lima"}}\n'
        '{"id": "N01", "question": "What is fog?", "expected_tool": null, "expected_args": {}}\n'
    )
    assert toolselect("import", "g.jsonl", "-o", "g.yaml", cwd=tmp_path).code == 0
    jsonl = (tmp_path / "g.yaml").read_text()
    assert '# from g.jsonl:1 (id G01)\n- name: "G01"' in jsonl and 'expect_args: {"city": "Lima"}' in jsonl
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{question}}']\ntests:\n"
        "  - description: both\n    vars: {question: Weather now and the week ahead in Oslo}\n"
        "    assert: [{type: tool-call-f1, value: [get_weather, get_forecast]}]\n"
        "  - description: in order\n    vars: {question: Alerts for Bergen, then the forecast}\n"
        "    assert: [{type: 'trajectory:tool-sequence', value: [get_weather_alerts, get_forecast]}]\n"
        "  - description: one\n    vars: {question: 'Rain in Paris?'}\n"
        "    assert: [{type: javascript, value: \"output[0].function.name === 'get_weather'\"}]\n"
        "  - description: prose\n    vars: {question: hi}\n    assert: [{type: contains, value: hello}]\n"
    )
    pf = toolselect("import", "promptfooconfig.yaml", "-o", "pf.yaml", cwd=tmp_path)
    assert pf.code == 0 and "not imported: promptfooconfig.yaml test 4 (prose)" in pf.out
    text = (tmp_path / "pf.yaml").read_text()
    assert "sequence: unordered" in text and "sequence: in_order" in text and 'expect_tool: "get_weather"' in text
    lint = toolselect("lint", "--tools", str(TESTS / "data" / "lint" / "weather_tools.json"), "--golden", "pf.yaml",
                      cwd=tmp_path)  # fmt: skip
    assert "Traceback" not in lint.err and lint.code in (0, 2)  # the imported file reads as a golden file
    (tmp_path / "other.json").write_text(json.dumps([{"input": "x", "expected_output": "y"}]))
    bad = toolselect("import", "other.json", cwd=tmp_path)
    assert (
        bad.code == 2
        and "other.json: no suite shape toolselect can import: its items have the fields expected_output, input"
        in flat(bad.err)
    )
    again = toolselect("import", "g.jsonl", "-o", "g.yaml", cwd=tmp_path)
    assert again.code == 2 and "g.yaml already exists: pass --force" in again.err


def weather_copy(tmp_path: Path) -> Path:
    for name in ("server.py", "golden.jsonl", "requirements.txt", "toolselect.yaml", "trajectories.yaml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    return tmp_path


def test_cases_are_picked_as_pytest_users_pick_them(tmp_path: Path):
    """-k EXPRESSION (name, tag or prompt), --last-failed, --max-fail N."""
    folder = weather_copy(tmp_path)
    picked = toolselect("eval", "-k", "forecast and not holdout", "--json", "k.json", cwd=folder)
    names = [c["name"] for c in picked.json(folder / "k.json")["cases"]]
    assert names and all("forecast" in (n + " ".join(c["tags"]) + c["prompt"]).lower()
                         for n, c in zip(names, picked.json(folder / "k.json")["cases"], strict=True))  # fmt: skip
    assert len(names) < 42
    none = toolselect("eval", "-k", "no-such-word", cwd=folder)
    assert none.code == 2 and "-k 'no-such-word' matches none of the 42 cases" in none.err
    broken = toolselect("eval", "-k", "forecast and", cwd=folder)
    assert broken.code == 2 and "a word is missing at the end" in broken.err
    # the whole run, then only what it failed
    whole = toolselect("eval", "--json", "all.json", cwd=folder)
    failed = {
        c["name"] for c in whole.json(folder / "all.json")["cases"] if c["evaluated"] and c["passed"] < c["evaluated"]
    }
    again = toolselect("eval", "--last-failed", "--json", "lf.json", cwd=folder)
    assert f"--last-failed: the {len(failed)} case(s) the last run failed" in flat(again.out)
    assert {c["name"] for c in again.json(folder / "lf.json")["cases"]} == failed
    # --max-fail: the asking stops, the rest is NOT-EVALUATED, and the run fails saying so
    stopped = toolselect("eval", "--max-fail", "2", "--concurrency", "1", "--json", "mf.json", cwd=folder)
    report = stopped.json(folder / "mf.json")
    outcomes = [c["samples"][0]["outcome"] for c in report["cases"]]
    assert stopped.code == 1 and outcomes.count("NOT-EVALUATED") > 20
    assert "--max-fail stopped the run:" in flat(stopped.out)


def test_the_surface_as_the_model_gets_it(excel_eval: Path):
    run = toolselect("surface", "--tools", "tools.json", "--json", "s.json", cwd=excel_eval)
    assert run.code == 0, run.err
    data = run.json(excel_eval / "s.json")
    tokens = [t["tokens"] for t in data["tools"]]
    assert len(tokens) == 46 and tokens == sorted(tokens, reverse=True) and sum(tokens) <= data["tokens"]
    heaviest = data["tools"][0]["tool"]
    rows = [line for line in run.out.splitlines() if line.strip().split("  ")[0].replace(",", "").strip().isdigit()]
    assert heaviest in rows[0] and f"≈ {data['tokens']:,} tokens in every request" in flat(run.out)
    client = toolselect(
        "surface", "--tools", "tools.json", "--client", "claude-code", "--json", "c.json", cwd=excel_eval
    )
    shown = client.json(excel_eval / "c.json")["tools"]
    assert "as claude-code presents it" in flat(client.out) and any(t["tool"].startswith("(built-in: ") for t in shown)


def test_a_golden_set_of_todos_in_the_action_says_nothing_was_measured(world, tmp_path: Path, excel_project: Path):
    api, github = world
    files = {f"evals/{p.name}": p.read_text() for p in excel_project.iterdir() if p.suffix in (".json", ".yaml")}
    (tmp_path / "job").mkdir()
    repo = commit_repo(tmp_path / "job", files, {"evals/README.md": "drafted by init\n"})
    event = {"ref": "refs/heads/main", "after": repo.head}
    run = run_action(
        repo.path, tmp_path / "job", inputs={"working-directory": "evals"}, event=event, event_name="push",
        api=api, github=github,
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    said = annotations_of(run.stdout)
    nothing = (
        "nothing was measured: nothing for the gate to judge yet: 153 cases need review (write the TODO prompts, "
        "then set status: reviewed: docs/golden-set.md)"
    )
    assert ("notice", nothing) in said
    assert api.requests == 0
