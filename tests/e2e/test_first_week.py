"""A new user's first week on a real server: excel-mcp-server (46 tools, from PyPI), a golden set
drafted by `init`, and the views that must lead with what matters at that scale."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, TESTS, toolselect

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
    assert out.count("warning confusable") == 3 and out.count("param-no-description tools.json:") == 3
    assert "… 43 more param-no-description" in flat(out)
    assert "every finding: toolselect lint --all" in out
    assert len(out.splitlines()) < 60
    # --all: every finding
    every = toolselect("lint", "--all", cwd=excel_project).out
    assert every.count("param-no-description tools.json:") == 46 and "more param-no-description" not in every


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
