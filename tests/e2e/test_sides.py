"""Both sides of a run, prepared in process: the base commit checked out in a worktree that is
removed again, and each side's golden set read once however many models the run has."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import toolselect.golden
from tests.conftest import ROOT
from toolselect.config import Overrides, load_config
from toolselect.pipeline.eval import plan_eval
from toolselect.pipeline.sides import Against
from toolselect.resolve import resolve_settings

MODELS = """
  models:
    - {provider: bm25, label: one}
    - {provider: bm25, label: two}
    - {provider: bm25, label: three}
"""


def weather_repo(root: Path) -> Path:
    """The bundled example, with three models, committed twice (the base, then the head)."""
    for name in ("server.py", "golden.jsonl", "trajectories.yaml", "toolselect.yaml"):
        shutil.copy(ROOT / "examples" / "weather" / name, root / name)
    config = (root / "toolselect.yaml").read_text().replace("  provider: bm25\n", MODELS.lstrip("\n"), 1)
    (root / "toolselect.yaml").write_text(config)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    git = lambda *a: subprocess.run(["git", *a], cwd=root, env=env, check=True, capture_output=True)  # noqa: E731
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    (root / "golden.jsonl").write_text((root / "golden.jsonl").read_text() + "\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "head")
    return root


@pytest.mark.parametrize("shard", [None, "1/2"])
def test_each_side_reads_its_golden_set_once_for_all_its_models(tmp_path, monkeypatch, shard):
    repo = weather_repo(tmp_path)
    read: list[str] = []
    real = toolselect.golden.load_golden

    def counted(path, *args, **kwargs):
        read.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(toolselect.golden, "load_golden", counted)
    monkeypatch.chdir(repo)
    values = {"base_ref": "HEAD~1"} | ({"shard": shard} if shard else {})
    over = Overrides(values)
    loaded = load_config(repo / "toolselect.yaml", os.environ)
    settings = resolve_settings(loaded, over, os.environ, repo)
    assert len(settings.each_model()) == 3
    plans = asyncio.run(plan_eval(loaded, settings, os.environ, against=Against("HEAD~1", over, repo)))
    assert plans.base is not None and plans.base_failure is None
    assert sorted(read) == sorted(["golden.jsonl", "trajectories.yaml"] * 2)  # head and base: once each
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    assert len(worktrees.splitlines()) == 1  # the base's worktree is gone again
