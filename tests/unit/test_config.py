"""Config loading and precedence: toolproof's keys, our extensions, CLI > environment > YAML."""

from __future__ import annotations

import re

import pytest

from tests.builders import BASE_CONFIG, settings, write_config
from toolselect.config import Overrides, load_config
from toolselect.errors import ConfigError
from toolselect.options import option
from toolselect.resolve import load_cases, resolve_settings


def test_yaml_values_and_env_expansion(tmp_path):
    _, s = settings(tmp_path)
    assert (s.call.provider, s.call.model, s.gate.min_accuracy) == ("anthropic", "yaml-model", 0.8)
    assert s.server.env == {"TOKEN": "t0k"}
    assert s.server.cwd == tmp_path  # stdio servers run in the config's folder
    assert s.cache_dir == tmp_path / ".toolselect-cache"


def test_environment_beats_yaml_and_flags_beat_environment(tmp_path):
    _, s = settings(tmp_path, env={"TOOLPROOF_EVAL_MODEL": "env-model"})
    assert s.call.model == "env-model"
    _, s = settings(tmp_path, env={"TOOLPROOF_EVAL_MODEL": "tp", "TOOLSELECT_MODEL": "ts"})
    assert s.call.model == "ts"
    _, s = settings(tmp_path, Overrides({"model": "flag-model", "min_accuracy": 0.5}), env={"TOOLSELECT_MODEL": "ts"})
    assert (s.call.model, s.gate.min_accuracy) == ("flag-model", 0.5)


def test_tools_flag_overrides_the_server(tmp_path):
    _, s = settings(tmp_path, Overrides({"tools_file": "frozen.json"}))
    assert s.server is None and s.tools_file == tmp_path / "frozen.json"


def test_toolproof_sections_are_ignored_with_one_note(tmp_path):
    text = BASE_CONFIG + "checks: {strict: true}\ntests: []\nfuzz: {max_examples: 5}\ntimeout_ms: 5000\n"
    _, s = settings(tmp_path, text=text)
    assert s.notes == ("ignoring toolproof section(s) checks, tests, fuzz, timeout_ms: toolselect runs the evals only",)


def test_relative_golden_paths_resolve_from_the_config_folder(tmp_path):
    sub = tmp_path / "evals"
    sub.mkdir()
    (sub / "g.jsonl").write_text('{"id": "a", "question": "q", "expected_tool": null}\n')
    text = BASE_CONFIG.replace("  min_accuracy: 0.8\n", "  min_accuracy: 0.8\n  golden: g.jsonl\n")
    path = write_config(sub, text)
    loaded = load_config(path, {"MY_TOKEN": "x"})
    s = resolve_settings(loaded, Overrides(), {"MY_TOKEN": "x"}, tmp_path)
    cases = load_cases(loaded, s)
    assert [c.name for c in cases] == ["hi", "a"]
    assert cases[1].source.line == 1


def test_case_sources_point_at_the_list_item(tmp_path):
    loaded, s = settings(tmp_path)
    [case] = load_cases(loaded, s)
    assert case.source.line == 10 and case.source.file.endswith("toolselect.yaml")


def test_default_case_name_is_toolproofs(tmp_path):
    text = BASE_CONFIG.replace(
        "prompt: hi", "prompt: '  What   is the 5 day forecast for Calgary, and also for Edmonton and Red Deer?'"
    )
    loaded, s = settings(tmp_path, text=text)
    [case] = load_cases(loaded, s)
    assert case.name == "What is the 5 day forecast for Calgary, and also for Edmonto"
    assert len(case.name) == 60


def test_expect_tool_list_and_extensions(tmp_path):
    text = BASE_CONFIG.replace(
        "      expect_tool: null\n",
        "      expect_tool: [get_weather, get_forecast]\n      tags: [ambiguous]\n      split: holdout\n"
        "      status: needs_review\n      forbid_extra_args: true\n",
    )
    loaded, s = settings(tmp_path, text=text)
    [case] = load_cases(loaded, s)
    assert case.expected == ("get_weather", "get_forecast")
    assert case.tags == ("ambiguous",) and case.holdout and case.status == "needs_review" and case.forbid_extra_args


def test_a_flag_or_input_is_range_checked_as_the_yaml_is():
    flag = option("min_accuracy")
    with pytest.raises(ConfigError, match=r"^--min-accuracy must be between 0 and 1 \(got -1\); it is a share"):
        flag.parse("-1", flag.label("flag"))
    with pytest.raises(ConfigError, match=r"^input min-accuracy must be between 0 and 1 \(got 90\)"):
        flag.parse("90", flag.label("input"))
    assert flag.parse(" 0.9 ", "x") == 0.9
    with pytest.raises(ConfigError, match=r"^input max-drop must be a number \(got 'nan'\)"):
        option("max_drop").parse("nan", "input max-drop")
    with pytest.raises(ConfigError, match=r"^--significance must be between 0 and 1 \(got 1\); e.g. 0.05"):
        option("significance").parse("1", "--significance")
    with pytest.raises(ConfigError, match=r"^input comment must be always, on-change or off \(got 'never'\)"):
        option("comment").parse("never", "input comment")


def test_yaml_ranges_come_from_the_same_declarations(tmp_path):
    with pytest.raises(
        ConfigError, match=r"toolselect.yaml:\d+: evals.min_tool_recall.get_weather must be between 0 and 1"
    ):
        settings(tmp_path, text=BASE_CONFIG + "  min_tool_recall: {get_weather: 1.5}\n")
    with pytest.raises(
        ConfigError, match=r"toolselect.yaml:\d+: evals.max_drop must be 0 or more \(got -1\); it is in points"
    ):
        settings(tmp_path, text=BASE_CONFIG + "  max_drop: -1\n")


def test_an_empty_config_says_so(tmp_path):
    with pytest.raises(ConfigError, match=r"toolselect.yaml is empty"):
        load_config(write_config(tmp_path, "# nothing yet\n"), {})


def test_a_url_is_shown_without_its_secrets():
    from toolselect.urls import public_url, secret_parts

    url = "https://bot:pw@hooks.example:8443/s/sk0123456789abcdef0123/mcp?api-key=q-998877"
    assert public_url(url) == "https://hooks.example:8443/s/…/mcp?…"
    assert set(secret_parts(url)) == {"bot:pw", "sk0123456789abcdef0123", "api-key=q-998877"}
    assert public_url("http://127.0.0.1:8000/v1/chat/completions") == "http://127.0.0.1:8000/v1/chat/completions"
    assert public_url("https://api.example.com/api/weather-forecasts/mcp") == (
        "https://api.example.com/api/weather-forecasts/mcp"
    )  # words are not keys


def test_expanded_values_are_remembered_and_the_server_is_shown_as_written(tmp_path):
    text = BASE_CONFIG.replace("command: [python, server.py]", 'command: [python, server.py, "--token=${MY_TOKEN}"]')
    loaded, s = settings(tmp_path, text=text, env={"MY_TOKEN": "t0k-9f8e"})
    assert s.server.command == ("python", "server.py", "--token=t0k-9f8e")  # what runs
    assert s.server.describe() == "stdio: python server.py --token=${MY_TOKEN}"  # what is shown
    assert loaded.secrets == ("t0k-9f8e",)
    assert s.server.scrub("the server said: bad token t0k-9f8e") == "the server said: bad token ***"


def test_the_rewriter_keeps_the_runs_endpoint_only_when_it_takes_the_same_key(tmp_path):
    """evals.rewriter on another provider goes to that provider's own endpoint (never the run's
    base_url, which would receive the other provider's key); openai and openai-responses share one."""
    config = BASE_CONFIG.replace("  model: yaml-model\n", "  model: yaml-model\n  base_url: http://127.0.0.1:9/\n")
    _, anthropic_run = settings(tmp_path, text=config + "  rewriter: openai:gpt-4.1\n  candidates: 5\n")
    writer = anthropic_run.rewriter
    assert (writer.provider, writer.model, writer.base_url, anthropic_run.candidates) == ("openai", "gpt-4.1", None, 5)
    openai_run = config.replace("provider: anthropic", "provider: openai")
    _, same_key = settings(tmp_path, text=openai_run + "  rewriter: openai-responses:gpt-5\n")
    assert (same_key.rewriter.provider, same_key.rewriter.base_url) == ("openai-responses", "http://127.0.0.1:9/")
    for bad, said in (("bm25:x", "evals.rewriter is bm25, which doesn't write"),
                      ("openai:a, openai:b", "evals.rewriter is one model"),
                      ("gpt-4.1", "expected [label=]provider:model")):  # fmt: skip
        with pytest.raises(ConfigError, match=re.escape(said)):
            settings(tmp_path, text=config + f"  rewriter: {bad}\n")
