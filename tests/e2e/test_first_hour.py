"""A maintainer's first hour, as they would live it: the README's Action snippet over the config
`init` writes, an endpoint that isn't running, a TypeScript server `tsc` builds into a gitignored
build/, a FastMCP server with a dependency run by uv, and the setup that must not cost every
local run. Real processes, real npm, tsc and uv (offline, from the pinned packages)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

import yaml

from tests.conftest import ROOT, toolselect
from tests.e2e.harness import (
    BASE_FORECAST,
    GOLDEN,
    HEAD_FORECAST,
    SCRIPT,
    TOOLS,
    commit_repo,
    no_process_left,
    run_action,
    toolchain_env,
    tools_ts,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

TS = ROOT / "tests" / "data" / "servers" / "ts"
ANTHROPIC_KEY = "sk-ant-first-hour"
DEAD = "http://127.0.0.1:9/v1"  # nothing listens on port 9 (discard)


def readme_snippet() -> dict[str, str]:
    """The `with:` of the README's first Action snippet."""
    lines = (ROOT / "README.md").read_text().splitlines()
    uses = next(i for i, x in enumerate(lines) if "uses: org/tool-select-action@v1" in x)
    return yaml.safe_load(lines[uses + 1].strip().removeprefix("with: "))


def test_the_readme_snippet_works_with_the_config_init_writes(tmp_path):
    """`init` writes provider: bm25; the README's snippet names provider, model and key: the run asks
    that model. Without `provider:` the same snippet is refused with what to set — never a run
    that is silently bm25, labelled with the model's name."""
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    made = toolselect("init", "--tools", "tools.json", cwd=tmp_path, process=True)  # as a user types it
    assert made.code == 0, made.err
    config = (tmp_path / "toolselect.yaml").read_text()
    assert "  provider: bm25\n" in config
    line = config.splitlines().index("  provider: bm25") + 1
    (tmp_path / "toolselect.yaml").write_text(config.replace("golden: golden.yaml", "golden: golden.jsonl"))
    (tmp_path / "golden.jsonl").write_text(GOLDEN)  # the maintainer's reviewed cases
    (tmp_path / "job").mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=tmp_path, check=True)
    snippet = readme_snippet()
    assert snippet["provider"] == "anthropic" and snippet["anthropic-api-key"].startswith("${{ secrets.")
    with (
        FakeModelAPI({**{k: v for k, v in SCRIPT.items() if k != "key"}, "key": ANTHROPIC_KEY}) as api,
        FakeGitHub() as github,
    ):
        inputs = {**snippet, "anthropic-api-key": ANTHROPIC_KEY, "anthropic-base-url": api.url,
                  "working-directory": ".", "openai-base-url": ""}  # fmt: skip
        inputs.pop("max-drop")  # a push: no base to drop against
        run = run_action(tmp_path, tmp_path / "job", inputs=inputs, event=None, event_name="push", api=api,
                         github=github)  # fmt: skip
        assert run.code in (0, 1), run.stdout + run.stderr
        assert api.requests > 0 and run.report()["run"]["provider"] == "anthropic"
        assert run.report()["run"]["model"] == "claude-haiku-4-5"

        inputs.pop("provider")
        unlabelled = run_action(tmp_path, tmp_path / "job", inputs=inputs, event=None, event_name="push", api=api,
                                github=github)  # fmt: skip
    assert unlabelled.code == 2
    assert (
        f"model 'claude-haiku-4-5' is set (input model), but provider 'bm25' (toolselect.yaml:{line}: "
        "evals.provider) takes no model" in unlabelled.stdout
    )
    assert "set the input provider: anthropic too" in unlabelled.stdout  # claude-…: the name says which
    del inputs["model"]
    key_only = run_action(tmp_path, tmp_path / "job", inputs=inputs, event=None, event_name="push", api=api,
                          github=github)  # fmt: skip
    assert key_only.code == 2
    assert "the input anthropic-api-key is set, but the run's provider is bm25" in key_only.stdout
    assert "set the inputs provider: anthropic and model:" in key_only.stdout


def test_a_refused_connection_stops_the_run_in_seconds_with_one_line(tmp_path):
    """Nothing listens at the endpoint: eval (with -q too) and init --draft stop before their first
    request, exit 3, naming the URL — no retries, no tables of a run that asked nothing."""
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    (tmp_path / "golden.jsonl").write_text(GOLDEN)
    env = {"OPENAI_API_KEY": "sk-x"}
    for quiet in ([], ["-q"]):
        started = time.monotonic()
        run = toolselect("eval", "--tools", "tools.json", "--golden", "golden.jsonl", "--provider", "openai",
                         "--model", "m", "--base-url", DEAD, *quiet, cwd=tmp_path, env=env)  # fmt: skip
        assert time.monotonic() - started < 20  # not 27 prompts × 5 retries
        assert run.code == 3, run.out + run.err
        assert f"error: connection refused at {DEAD}" in run.err and "is the server running" in run.err
        assert "Confusion matrix" not in run.out and "accuracy" not in run.out
    draft = toolselect("init", "--tools", "tools.json", "-o", "drafted", "--draft", "--provider", "openai", "--model",
                       "m", "--base-url", DEAD, cwd=tmp_path, env=env)  # fmt: skip
    assert draft.code == 3 and f"connection refused at {DEAD}" in draft.err
    assert not (tmp_path / "drafted").exists()  # nothing drafted, nothing written


def test_init_knows_a_typescript_server_is_built_and_setup_skips_while_nothing_changed(tmp_path):
    """`tsc` builds into a gitignored build/: `init -- node build/index.js` writes the setup a fresh
    checkout needs. A local eval runs it once; the next run skips it while nothing changed, runs it
    again when a source changes; --no-setup skips it always; the base worktree always runs it."""
    repo = commit_repo(
        tmp_path,
        {
            **{p.relative_to(TS).as_posix(): p.read_text() for p in TS.rglob("*") if p.is_file()},
            "src/tools.ts": tools_ts(BASE_FORECAST),
            "golden.jsonl": GOLDEN,
        },
        {"src/tools.ts": tools_ts(HEAD_FORECAST)},
        ignore="node_modules/\nbuild/\n.toolselect-cache/\n",
    )
    env = toolchain_env(tmp_path)
    npm = shutil.which("npm")
    assert npm
    for step in (["ci", "--no-audit", "--no-fund"], ["run", "build"]):  # the maintainer's own build
        subprocess.run([npm, *step], cwd=repo.path, env={**os.environ, **env}, check=True, capture_output=True)
    made = toolselect("init", "--force", "-o", ".", "--", "node", "build/index.js", cwd=repo.path, env=env)
    assert made.code == 0, made.err
    assert "server.setup: npm ci && npm run build (package.json has a build script)" in made.out
    config = yaml.safe_load((repo.path / "toolselect.yaml").read_text())
    assert config["server"] == {"command": ["node", "build/index.js"], "setup": "npm ci && npm run build"}
    text = (repo.path / "toolselect.yaml").read_text().replace("golden: golden.yaml", "golden: golden.jsonl")
    (repo.path / "toolselect.yaml").write_text(text.replace("min_accuracy: 0.9", "min_accuracy: 0"))

    first = toolselect("eval", cwd=repo.path, env=env, timeout=300)
    assert first.code == 0, first.out + first.err
    assert "server setup done in" in first.out
    again = toolselect("eval", cwd=repo.path, env=env)
    assert again.code == 0, again.err
    assert "server setup skipped: its inputs are unchanged since it last succeeded" in again.out
    assert "server setup done" not in again.out
    source = repo.path / "src" / "tools.ts"
    source.write_text(source.read_text() + "\n")
    changed = toolselect("eval", cwd=repo.path, env=env, timeout=300)
    assert "server setup done in" in changed.out, changed.out + changed.err
    forced = toolselect("eval", "--no-setup", cwd=repo.path, env=env)
    assert "server setup skipped (--no-setup)" in forced.out
    linted = toolselect("lint", "--no-setup", "--json", "lint.json", cwd=repo.path, env=env)
    findings = json.loads((repo.path / "lint.json").read_text())["findings"]
    [undescribed] = [f for f in findings if f["code"] == "param-no-description" and f["tool"] == "get_weather"]
    declared = tools_ts(HEAD_FORECAST).splitlines().index('    name: "get_weather",') + 2  # its description
    assert (undescribed["file"], undescribed["line"]) == ("src/tools.ts", declared), linted.out  # not build/

    subprocess.run(["git", "add", "-A"], cwd=repo.path, check=True)
    for message in ("init", "a change"):  # the base (HEAD~1) has the config too
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", message, "--allow-empty"],
                       cwd=repo.path, check=True)  # fmt: skip
    compared = toolselect("eval", "--no-setup", "--base-ref", "HEAD~1", cwd=repo.path, env=env, timeout=300)
    assert "server setup skipped (--no-setup)" in compared.out
    assert re.search(r"base: server setup done in [\d.]+ s: npm ci && npm run build", compared.out), compared.out
    no_process_left(repo.path)


def test_init_knows_a_uv_server_needs_its_dependencies_and_writes_the_drafting_model(tmp_path):
    """A FastMCP server importing its dependency, run by `uv run` in a uv project: init writes
    `setup: uv sync --frozen`; `--draft --provider --model --base-url` writes that model and endpoint."""
    folder = tmp_path / "weather"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "weather" / "server.py", folder)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "weather"\nversion = "0.1.0"\nrequires-python = "==3.11.*"\ndependencies = ["mcp==2.3.0"]\n'
        "\n[tool.uv]\nenvironments = [\"sys_platform == 'linux'\"]\n"
    )
    env = toolchain_env(tmp_path)
    subprocess.run(["uv", "lock", "--quiet"], cwd=folder, env={**os.environ, **env}, check=True)
    script = {"key": "sk-draft", "default": {"text": '{"direct": "weather in Oslo now?"}'}}
    with FakeModelAPI(script) as api:
        made = toolselect("init", "--draft", "--provider", "openai", "--model", "gpt-4.1-mini", "--base-url",
                          api.url + "/v1", "--", "uv", "run", "--quiet", "server.py", cwd=folder,
                          env={**env, "OPENAI_API_KEY": "sk-draft"}, timeout=180)  # fmt: skip
    assert made.code == 0, made.err
    assert "server.setup: uv sync --frozen" in made.out
    assert f"the config asks openai gpt-4.1-mini at {api.url}/v1" in made.out
    config = yaml.safe_load((folder / "toolselect.yaml").read_text())
    assert config["server"]["setup"] == "uv sync --frozen"
    assert config["evals"] | {"golden": None} == {
        "provider": "openai",
        "model": "gpt-4.1-mini",
        "base_url": f"{api.url}/v1",
        "min_accuracy": 0.9,
        "golden": None,
    }
    no_process_left(folder)


SLIPS = """\
- name: issue-42
  prompt: status of issue #42?
  expect_tool: get_weather
  expect_args: {city: Paris}
- name: copied
  prompt: weather in Paris right now
  expect_tool: get_weather
  expect_args: {city: Oslo}
- name: forecast-todo
  prompt: "TODO: ask directly for what get_forecast does"
  expect_tool: get_forecast
  status: reviewed
- name: search-todo
  prompt: "TODO: a request only search_web can serve"
  expect_tool: search_web
  status: needs_review
- name: fine
  prompt: will it rain in Lisbon this week?
  expect_tool: get_forecast
  expect_args: {city: Lisbon}
"""


def test_lint_catches_the_slips_people_make_and_eval_never_pays_for_a_todo(tmp_path):
    """A prompt YAML cut at `#`, an argument the prompt never says, a TODO marked reviewed — and
    `lint --tools FILE` reads the config's golden set as `eval --tools FILE` does. A TODO prompt
    is never sent to a paid model: NOT-EVALUATED, with why."""
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    (tmp_path / "golden.yaml").write_text(SLIPS)
    (tmp_path / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: bm25\n  golden: golden.yaml\n"
    )
    run = toolselect("lint", "--tools", "tools.json", "--json", "lint.json", cwd=tmp_path)
    assert run.code == 2, run.out + run.err
    assert "5 cases" in run.out  # the config's golden set, with --tools too
    findings = {(f["code"], f["case"]): f for f in json.loads((tmp_path / "lint.json").read_text())["findings"]}
    cut = findings[("prompt-cut-by-comment", "issue-42")]
    assert cut["severity"] == "error" and cut["line"] == 1
    assert "the prompt is 'status of issue', not 'status of issue #42?'" in cut["message"]
    assert cut["fix"] == 'quote the prompt: prompt: "status of issue #42?"'
    assert findings[("arg-not-in-prompt", "copied")]["message"] == (
        "case 'copied': expected city='Oslo' appears nowhere in the prompt"
    )
    assert ("arg-not-in-prompt", "fine") not in findings
    assert findings[("prompt-todo", "forecast-todo")]["severity"] == "error"
    assert findings[("prompt-todo", "search-todo")]["severity"] == "info"
    coverage = next(f for (code, _), f in findings.items() if code == "coverage-no-case")
    assert coverage["message"] == "no reviewed case expects search_web (1 wait for review)"

    fixed = SLIPS.replace("status: reviewed", "status: needs_review")
    (tmp_path / "golden.yaml").write_text(fixed.replace("status of issue #42?", '"status of issue #42?"'))
    env = {"OPENAI_API_KEY": SCRIPT["key"]}
    with FakeModelAPI(SCRIPT) as api:
        evaluated = toolselect("eval", "--provider", "openai", "--model", "m", "--base-url", api.url + "/v1",
                               "--json", "r.json", cwd=tmp_path, env=env)  # fmt: skip
        asked = [entry["prompt"] for entry in api.log]
    assert evaluated.code in (0, 1), evaluated.out + evaluated.err
    assert not any(p.startswith("TODO") for p in asked) and len(asked) == 3
    report = json.loads((tmp_path / "r.json").read_text())
    todo = next(c for c in report["cases"] if c["name"] == "forecast-todo")
    assert todo["samples"][0]["outcome"] == "NOT-EVALUATED"
    assert "the prompt is still a TODO placeholder" in json.dumps(todo)


def test_messages_say_where_and_what_to_do(tmp_path):
    """An invalid schema by its property path with the fix, at the tool's entry in the tools file;
    an enum's fix in its own values; a BOM in JSON and JSONL read as in YAML; a flag's error named
    by the flag; a server that prints on stdout told so in one line; `1 tool`."""
    one = [
        {
            "name": "search_issues",
            "description": "Search the repository's issues by text and state.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words to look for"},
                    "state": {"type": "string", "enum": ["open", "closed", "all"]},
                    "number": {"type": "int"},
                },
                "required": ["query"],
            },
        }
    ]
    (tmp_path / "tools.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"tools": one}, indent=2).encode())
    case = {"id": "q", "question": "find open issues about login", "expected_tool": "search_issues"}
    (tmp_path / "golden.jsonl").write_bytes(b"\xef\xbb\xbf" + (json.dumps(case) + "\n").encode())
    run = toolselect("lint", "--tools", "tools.json", "--golden", "golden.jsonl", "--json", "l.json", cwd=tmp_path)
    assert "tool surface: 0 tools from file: tools.json; 1 case\n" in run.out, run.out + run.err  # left out
    findings = {f["code"]: f for f in json.loads((tmp_path / "l.json").read_text())["findings"]}
    invalid = findings["input-schema-invalid"]
    assert "properties.number.type: 'int' is not a JSON Schema type: use 'integer'" in invalid["message"]
    assert (invalid["file"], invalid["line"]) == ("tools.json", 4)  # where search_issues is named
    assert findings.get("enum-unexplained") is None  # the tool is left out: its parameters aren't judged

    one[0]["inputSchema"]["properties"]["number"]["type"] = "integer"
    (tmp_path / "tools.json").write_text(json.dumps({"tools": one}, indent=2))
    run = toolselect("lint", "--tools", "tools.json", "--golden", "golden.jsonl", "--json", "l.json", cwd=tmp_path)
    assert "tool surface: 1 tool from file: tools.json; 1 case\n" in run.out, run.out + run.err
    findings = {f["code"]: f for f in json.loads((tmp_path / "l.json").read_text())["findings"]}
    assert findings["enum-unexplained"]["fix"] == (
        "say what each value of state means in its description, e.g. 'open: …; closed: …; all: …'"
    )

    flagged = toolselect("eval", "--tools", "tools.json", "--golden", "golden.jsonl", "--provider", "bm25",
                         "--min-tool-recall", "search_isues=0.8", cwd=tmp_path)  # fmt: skip
    assert flagged.code == 2
    assert (
        "error: --min-tool-recall names 'search_isues', which the tool surface does not have (did you mean "
        "'search_issues'?)" in flagged.err
    )

    (tmp_path / "noisy.py").write_text(
        "print('Server starting...', flush=True)\nimport runpy\n"
        f"runpy.run_path({str(ROOT / 'examples' / 'weather' / 'server.py')!r}, run_name='__main__')\n"
    )
    noisy = toolselect("lint", "--golden", "golden.jsonl", "--", "python3", "noisy.py", cwd=tmp_path)
    said = noisy.out + noisy.err
    assert "the server wrote 'Server starting...' to stdout: log to stderr, stdout carries the protocol" in said
    assert "Traceback" not in said and "tool surface: 6 tools" in said
