"""Every relative link in the README, CONTRIBUTING.md and docs/ points at a file that exists and,
for `file.md#anchor` or `#anchor`, at a heading that exists (GitHub's slugs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def prose(text: str) -> str:
    """The text without code blocks, where `](…)` is code, not a link."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lower-cased, punctuation dropped, spaces as dashes."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(prose(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        name, n = base, 0
        while name in found:  # GitHub numbers repeated headings: -1, -2, …
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def links(path: Path) -> list[str]:
    text = CODE_SPAN.sub("", prose(path.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.IGNORECASE)]


def broken(path: Path) -> list[str]:
    problems = []
    for target in links(path):
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{target}: no heading #{anchor} in {linked.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken(page) == []


def test_the_docs_are_there_to_link():
    names = {p.name for p in PAGES}
    assert {"README.md", "CONTRIBUTING.md", "action.md", "gate.md", "golden-set.md", "cli.md"} <= names


def test_slugs_follow_github(tmp_path):
    assert slug("Several models (`schema_version: 2`)") == "several-models-schema_version-2"
    assert slug("Checking a golden set: `lint`") == "checking-a-golden-set-lint"
    assert slug("`toolselect stress`: your tools in company") == "toolselect-stress-your-tools-in-company"
    assert slug("Requests, retries and errors") == "requests-retries-and-errors"
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## Same\n\n## Same\n\n```\n# not a heading\n```\n\n"
        "[ok](#same-1) [bad](#not-a-heading) [gone](missing.md) `[code](nowhere.md)` [web](https://x.y/z)\n"
    )
    assert anchors(page) == {"title", "same", "same-1"}
    assert broken(page) == ["#not-a-heading: no heading #not-a-heading in page.md", "missing.md: no such file"]
