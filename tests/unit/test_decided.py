"""The Action's run decided without a server, a model or GitHub: the event, the inputs and the config
in, the plan and the settings out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolselect.config import load_config
from toolselect.decided import decide_run
from toolselect.errors import ConfigError
from toolselect.options import read_inputs
from toolselect.policy import Event


def pr(fork: bool = False) -> Event:
    head = "someone/mcp" if fork else "acme/mcp"
    return Event(
        "pull_request",
        {"pull_request": {"number": 7, "base": {"sha": "b" * 40, "repo": {"full_name": "acme/mcp"}},
                          "head": {"sha": "h" * 40, "repo": {"full_name": head}}}},
    )  # fmt: skip


def config(tmp_path: Path, evals: str) -> Path:
    (tmp_path / "tools.json").write_text(json.dumps({"tools": []}))
    path = tmp_path / "toolselect.yaml"
    path.write_text(f"tools_file: tools.json\nevals:\n{evals}")
    return path


def run_of(tmp_path: Path, event: Event, given: dict[str, str], evals: str, env: dict[str, str] | None = None):
    environ = {f"INPUT_{k.upper()}": v for k, v in given.items()} | (env or {})
    return decide_run(event, read_inputs(environ), load_config(config(tmp_path, evals), environ), environ, tmp_path)


def test_a_pull_request_with_its_key_compares_with_its_base(tmp_path):
    run = run_of(tmp_path, pr(), {"anthropic-api-key": "k", "junit": "out/j.xml"},
                 "  provider: anthropic\n  model: claude-haiku-4-5\n", {"ANTHROPIC_API_KEY": "k"})  # fmt: skip
    assert run.plan.base_ref == "b" * 40 and not run.plan.cache_only
    assert run.settings.call.provider == "anthropic" and run.settings.call.model == "claude-haiku-4-5"
    assert run.junit == tmp_path / "out" / "j.xml" and run.settings.shard is None


def test_a_fork_without_a_key_reads_only_the_cache_and_a_shard_runs_its_slice(tmp_path):
    run = run_of(tmp_path, pr(fork=True), {"shard": "2", "shards": "4"},
                 "  provider: anthropic\n  model: claude-haiku-4-5\n")  # fmt: skip
    assert run.plan.cache_only and run.settings.cache_mode == "only" and run.plan.enforced is False
    assert str(run.settings.shard) == "2/4"


def test_a_key_for_an_offline_run_and_a_configured_endpoint_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="the input anthropic-api-key is set, but the run's provider is bm25"):
        run_of(tmp_path, pr(), {"anthropic-api-key": "k"}, "  provider: bm25\n")
    with pytest.raises(ConfigError, match="would receive the API key"):
        run_of(tmp_path, pr(), {}, "  provider: openai\n  model: gpt-4.1\n  base_url: https://evil.example/v1\n")
