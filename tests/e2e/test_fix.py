"""`toolselect fix` end to end against the fake model API: a confusable pair where one phrase in
get_forecast's description fixes the confusion. Of three candidates (one that fixes it, one that
fixes it on the tuning cases only, one that takes another tool's picks) exactly the first is
accepted and written as a patch that leaves tools.json valid; with no good candidate nothing is
suggested and the note says what was tried; a re-run is free from the cache."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import TESTS, toolselect
from tests.e2e.harness import key_env, toolchain_env, tools_ts
from tests.fakes.model_api import FakeModelAPI

WEATHER = "Weather for a city."
FORECAST = "Weather for a city over time, by day."
GOOD = "Forecast: the coming days in a city."
TUNING_ONLY = "Forecast for tomorrow in a city."
GREEDY = "Coming days in a city, or right now."
TOOLS = [
    {"name": "get_weather", "description": WEATHER,
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "get_forecast", "description": FORECAST,
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
]  # fmt: skip
CITIES = ("Oslo", "Rome", "Lima", "Pune", "Kyiv", "Baku")
CITY = {"city": "Oslo"}  # the cases expect no arguments: any valid ones pass


def golden() -> list[dict]:
    cases = [{"id": f"tomorrow-{c}", "question": f"Will it rain tomorrow in {c}?", "expected_tool": "get_forecast"}
             for c in CITIES]  # fmt: skip
    cases += [{"id": f"week-{c}", "question": f"Will it rain later this week in {c}?", "expected_tool": "get_forecast",
               "split": "holdout"} for c in CITIES]  # fmt: skip
    cases += [{"id": f"now-{c}", "question": f"How warm is it right now in {c}?", "expected_tool": "get_weather",
               **({"split": "holdout"} if i % 2 else {})} for i, c in enumerate(CITIES[:4])]  # fmt: skip
    return cases


def script(candidates: list[str]) -> dict:
    forecast = lambda phrase: [{"like": "get_forecast", "when": {"get_forecast": phrase}, "args": CITY},  # noqa: E731
                               {"like": "get_weather", "args": CITY}]  # fmt: skip
    answer = {"candidates": [{"description": d, "why": "clearer"} for d in candidates]}
    return {
        "contains": {
            f"Current description: {FORECAST}": {"text": json.dumps(answer)},
            "tomorrow": [*forecast("oming days")[:1], *forecast("tomorrow")],
            "later this week": forecast("oming days"),
            "right now": [{"like": "get_forecast", "when": {"get_forecast": "right now"}, "args": CITY},
                          {"like": "get_weather", "args": CITY}],
        },
    }  # fmt: skip


def repo(folder: Path) -> None:
    (folder / "tools.json").write_text(json.dumps({"tools": TOOLS}, indent=2) + "\n")
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden()))
    (folder / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: openai\n  model: gpt-4.1\n  golden: golden.jsonl\n"
    )


def fix(folder: Path, api: FakeModelAPI, *flags: str):
    return toolselect("fix", "--base-url", api.url + "/v1", *flags, cwd=folder, env=key_env(folder))


def test_only_the_rewrite_that_passes_the_held_out_test_is_suggested(tmp_path):
    repo(tmp_path)
    with FakeModelAPI(script([GOOD, TUNING_ONLY, GREEDY])) as api:
        done = fix(tmp_path, api, "--patch", "fix.diff")
        assert done.code == 0, done.out + done.err
        asked = len(api.log)
        first = done.out.splitlines()[0]  # the count, said before anything is asked: a ceiling on what was
        assert first.startswith("fix: at most ") and int(first.split()[3]) >= asked
        again = fix(tmp_path, api)
        assert again.code == 0 and len(api.log) == asked  # every answer from the cache
    assert "✓ get_forecast: accepted: held-out accuracy 2/8 → 8/8, p = 0.031" in done.out
    assert "1 of 1 rewrites accepted" in done.out
    patch = (tmp_path / "fix.diff").read_text()
    assert f'-      "description": "{FORECAST}",' in patch and f'+      "description": "{GOOD}",' in patch
    assert TUNING_ONLY not in patch and GREEDY not in patch
    # applying it leaves tools.json valid, with the new text
    subprocess.run(["git", "apply", "-p1", str(tmp_path / "fix.diff")], cwd=tmp_path, check=True)
    listed = json.loads((tmp_path / "tools.json").read_text())["tools"]
    assert [t["description"] for t in listed] == [WEATHER, GOOD]


def test_with_no_good_candidate_nothing_is_suggested_and_the_note_says_what_was_tried(tmp_path):
    repo(tmp_path)
    with FakeModelAPI(script([TUNING_ONLY, GREEDY])) as api:
        done = fix(tmp_path, api, "--apply")
    assert done.code == 1, done.out + done.err
    assert "✗ 2 rewrites tried for get_forecast; none passed the held-out test (best: +0 of 8" in done.out
    assert json.loads((tmp_path / "tools.json").read_text())["tools"][1]["description"] == FORECAST  # untouched


def test_a_run_with_no_model_that_writes_is_refused_before_anything_is_asked(tmp_path):
    repo(tmp_path)
    done = toolselect("fix", "--provider", "bm25", cwd=tmp_path, env=key_env(tmp_path))
    assert done.code == 2 and "fix needs a model that writes, and bm25 doesn't" in done.err
    assert "at most" not in done.out


def test_dry_run_says_the_ceiling_and_asks_nothing_and_max_cost_holds_it(tmp_path):
    repo(tmp_path)
    with FakeModelAPI(script([GOOD])) as api:
        done = toolselect("fix", "--dry-run", "--base-url", api.url + "/v1", cwd=tmp_path, env={"HOME": str(tmp_path)})
        assert done.code == 0, done.out + done.err
        assert api.log == []
    assert done.out.startswith("fix: at most 115 requests, ≈ $0.0")
    # the rewriter's own request is priced as its model's (gpt-4.1), apart from the model's 32
    assert (
        "(16 for the current descriptions, then per tool rewritten: 1 to the rewriter openai:gpt-4.1 (≈ $0.00"
        in done.out.splitlines()[0]
        and "and 32 to test its 3 candidates on 8 tuning and 8 held-out cases)" in done.out.splitlines()[0]
    )
    assert "dry run: nothing was asked (the rewriter: openai:gpt-4.1)" in done.out
    assert "warning" not in done.out  # both tools have cases enough on each side of the split
    # a tool with one case: nothing to learn a rewrite from, or to test it on
    few = [c for c in golden() if c["expected_tool"] != "get_weather"]
    few.append({"id": "now-lima", "question": "Is it raining in Lima right now?", "expected_tool": "get_weather"})
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in few))
    with FakeModelAPI(script([GOOD])) as api:
        thin = toolselect("fix", "--dry-run", "--base-url", api.url + "/v1", cwd=tmp_path, env={"HOME": str(tmp_path)})
    assert "fix: warning: get_weather has " in thin.out and "too few to learn a rewrite from and test it" in thin.out
    repo(tmp_path)
    with FakeModelAPI(script([GOOD])) as api:  # a ceiling over --max-cost: refused before anything is asked
        over = fix(tmp_path, api, "--max-cost", "0.0001")
        assert over.code == 2 and api.log == []
    assert "fix could cost up to ≈ $0.0" in over.err and "over --max-cost $0.0001" in over.err


def test_a_typescript_template_literal_is_rewritten_in_the_servers_source_and_still_compiles(tmp_path):
    """The server is the official TypeScript SDK's, built by setup; its descriptions are template
    literals in src/tools.ts. The model answers through the Anthropic API, the rewriter through
    OpenAI's Responses API (its own endpoint: a key never goes to the other provider's)."""
    ts = TESTS / "data" / "servers" / "ts"
    for path in ts.rglob("*"):
        if path.is_file():
            (tmp_path / path.relative_to(ts)).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path.relative_to(ts)).write_text(path.read_text())
    (tmp_path / "src" / "tools.ts").write_text(tools_ts(FORECAST))
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden()))
    (tmp_path / "toolselect.yaml").write_text(
        "server:\n  command: [node, build/index.js]\n  setup: npm ci --no-audit --no-fund && npm run build\n"
        "  setup_timeout_s: 300\nevals:\n  provider: anthropic\n  model: claude-sonnet-4-5\n  golden: golden.jsonl\n"
    )
    with FakeModelAPI(script([GOOD, TUNING_ONLY, GREEDY])) as api:
        env = {**key_env(tmp_path), **toolchain_env(tmp_path), "OPENAI_BASE_URL": api.url + "/v1"}
        done = toolselect("fix", "--base-url", api.url, "--rewriter", "openai-responses:gpt-4.1", "--patch", "fix.diff",
                          cwd=tmp_path, env=env, timeout=300)  # fmt: skip
        assert done.code == 0, done.out + done.err
        assert {e["api"] for e in api.log} == {"anthropic", "responses"}
    assert "✓ get_forecast: accepted: held-out accuracy 2/8 → 8/8" in done.out
    subprocess.run(["git", "apply", "-p1", str(tmp_path / "fix.diff")], cwd=tmp_path, check=True)
    assert f"description: `{GOOD}`," in (tmp_path / "src" / "tools.ts").read_text()  # still a template literal
    subprocess.run(["npm", "run", "build"], cwd=tmp_path, check=True, capture_output=True)
    listed = subprocess.run(
        ["node", "-e", "import('./build/tools.js').then(m => console.log(JSON.stringify(m.TOOLS)))"],
        cwd=tmp_path, check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert [t["description"] for t in json.loads(listed.stdout)][1] == GOOD
