"""A file of the pull request's, read to show it (a suggestion's source lines): in the Action, never
through a link it planted — a link to a secret would put the secret in a PR comment."""

from __future__ import annotations

import os

from toolselect.contain import ACTION
from toolselect.nofollow import read_text


def test_in_the_action_a_link_is_never_read_through(tmp_path, monkeypatch):
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("ghs_the_runner_token\n")
    (workspace / "src" / "server.py").write_text('TOOL = "get_weather"\n')
    os.symlink(secret, workspace / "src" / "tools.py")  # a file that is a link
    os.symlink(tmp_path, workspace / "linked")  # a folder that is a link
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    monkeypatch.setenv(ACTION, "1")
    assert read_text(workspace / "src" / "server.py") == 'TOOL = "get_weather"\n'
    assert read_text(workspace / "src" / "tools.py") is None
    assert read_text(workspace / "linked" / "secret.txt") is None
    assert read_text(workspace / "src") is None  # not a file
    (workspace / "big.json").write_text("x" * 100)
    assert read_text(workspace / "big.json", limit=10) is None
    monkeypatch.delenv(ACTION)  # on your own machine: files are read as usual
    assert read_text(workspace / "src" / "tools.py") == "ghs_the_runner_token\n"
