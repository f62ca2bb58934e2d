"""Where a driven client's versions are found: the pinned one, else the tested one, else the newest;
a half install (its program missing) is never found; a version is an npm version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolselect.drive.install import KINDS, installed, pinned
from toolselect.errors import ConfigError

KIND = KINDS["claude-code"]


def lay(clients: Path, version: str, program: bool = True) -> Path:
    modules = clients / "claude-code" / version / "node_modules"
    (modules / "@anthropic-ai" / "claude-code").mkdir(parents=True)
    (modules / "@anthropic-ai" / "claude-code" / "package.json").write_text(json.dumps({"version": version}))
    if program:
        (modules / ".bin").mkdir()
        (modules / ".bin" / "claude").write_text("")
    return modules / ".bin" / "claude"


def test_the_tested_version_first_then_the_newest_and_a_pin_exactly(tmp_path):
    assert installed(KIND, tmp_path) is None
    lay(tmp_path, "2.1.9")
    newest = lay(tmp_path, "2.1.10")
    lay(tmp_path, "2.2.0", program=False)  # half installed: never found
    assert installed(KIND, tmp_path) == (newest, "2.1.10")  # 10 > 9, as numbers
    tested = lay(tmp_path, KIND.tested)
    assert installed(KIND, tmp_path) == (tested, KIND.tested)
    assert installed(KIND, tmp_path, "2.1.9") is not None and installed(KIND, tmp_path, "2.2.0") is None
    (tmp_path / "claude-code" / ".2.3.0-partial").mkdir()  # an install under way is no version
    assert installed(KIND, tmp_path) == (tested, KIND.tested)


def test_a_pin_is_an_npm_version():
    assert pinned("claude-code") == ("claude-code", None)
    assert pinned("claude-code@2.1.332") == ("claude-code", "2.1.332")
    assert pinned("claude-code@2.2.0-beta.1") == ("claude-code", "2.2.0-beta.1")
    for bad in ("claude-code@latest", "claude-code@../../x", "claude-code@2.1", "claude-code@"):
        with pytest.raises(ConfigError, match="the version after @ is an npm version"):
            pinned(bad)
