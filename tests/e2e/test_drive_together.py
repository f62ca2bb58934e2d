"""Three real clients in one run (`toolselect eval --client claude-code --client codex --client
gemini-cli`): each is driven on the model of the run whose API it speaks — Claude Code on Anthropic's,
Codex on OpenAI's Responses, Gemini CLI on Gemini's — through one answer cache and one pool, and a
re-run asks the model nothing."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import toolselect
from tests.e2e.harness import CLIENTS, base_url, client_program, key_env, weather_tools
from tests.fakes.model_api import FakeModelAPI

TOOLS = weather_tools()
SCRIPT: dict[str, Any] = {
    "answers": {  # each client's model: its own search first where it defers (Claude Code, Codex on gpt-5.5)
        "Is it raining in Paris?": [
            {"like": "get_weather", "args": {"city": "Paris"}},
            {"like": "ToolSearch", "args": {"query": "select:mcp__weather__get_weather"}},
            {"like": "tool_search", "args": {"query": "current weather city", "limit": 8}},
        ],
        "Say hello": {"text": "Hello!"},
    },
    "default": {"text": "Hello!"},
}
CASES = [
    {"id": "paris", "question": "Is it raining in Paris?", "expected_tool": "get_weather",
     "expected_args": {"city": "Paris"}},
    {"id": "hello", "question": "Say hello", "expected_tool": None},
]  # fmt: skip
MODELS = (("anthropic", "claude-sonnet-4-5"), ("openai-responses", "gpt-5.5"), ("gemini", "gemini-2.5-flash"))


def test_three_clients_each_driven_on_the_model_that_speaks_its_api(tmp_path):
    for name, version, program in (("claude-code", "2.1.332", "claude"), ("codex", "0.171.0", "codex"),
                                   ("gemini-cli", "0.61.0", "gemini")):  # fmt: skip
        client_program(name, version, program)
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    with FakeModelAPI(SCRIPT) as api:
        models = "".join(f"    - {{provider: {p}, model: {m}, base_url: '{base_url(p, api)}'}}\n" for p, m in MODELS)
        (tmp_path / "toolselect.yaml").write_text(
            "tools_file: tools.json\nevals:\n  golden: golden.jsonl\n  min_accuracy: 0\n  server_name: weather\n"
            f"  clients_dir: {CLIENTS}\n  models:\n{models}"
        )
        flags = ("--client", "claude-code", "--client", "codex", "--client", "gemini-cli")
        done = toolselect("eval", "--json", "r.json", *flags, cwd=tmp_path, env=key_env(tmp_path))
        assert done.code == 0, done.out + done.err
        asked = api.requests
        again = toolselect("eval", "--json", "r.json", *flags, cwd=tmp_path, env=key_env(tmp_path))
        assert again.code == 0 and api.requests == asked  # one answer cache for all three: nothing asked again
    report = json.loads((tmp_path / "r.json").read_text())
    runs = {r["run"]["label"]: r for r in report["models"]}
    assert sorted(runs) == ["claude-sonnet-4-5@claude-code", "gemini-2.5-flash@gemini-cli", "gpt-5.5@codex"]
    for label, r in runs.items():  # each the real client, each picking the server's tool through its own names
        assert r["run"]["client"]["driven"], label
        by = {c["name"]: c["samples"][0] for c in r["cases"]}
        assert by["paris"]["outcome"] == "PASS", (label, by["paris"])
        assert by["hello"]["outcome"] == "PASS", (label, by["hello"])
    assert "warning" not in done.err.lower()  # no client emulated for want of its API
