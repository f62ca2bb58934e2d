"""Render the example PR comment and inline review comment from the bundled example, for real.

A temporary git repository holds examples/weather twice: the base commit as it is, and a head
commit that rewords get_forecast's description. `toolselect eval --base-ref` compares the two
with the offline bm25 provider and writes the PR comment Markdown and both JSON reports. The inline
review comment is what the Action posts on the reworded lines: the same reports, the head commit's
`git diff` as the PR's file list, and the Action's own locating and rendering.

Each result lives between `<!-- NAME:start -->` and `<!-- NAME:end -->` markers (BLOCKS):
README.md gets the comment's first screen (up to and including its first table), docs/action.md
the whole comment and the review comment, docs/trajectories.md the comment's trajectory sections.

    python scripts/example_comment.py            # print it
    python scripts/example_comment.py --write    # update the files
    python scripts/example_comment.py --check    # exit 1 when a file is out of date (a test runs this)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD = '''    """Weather forecast for a city for the coming days: expected temperatures and chance of rain or
    snow, day by day."""'''
NEW = '''    """Daily outlook for a city."""'''


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "x",
        "GIT_AUTHOR_EMAIL": "x@x",
        "GIT_COMMITTER_NAME": "x",
        "GIT_COMMITTER_EMAIL": "x@x",
        "COLUMNS": "120",
    }
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)


def render() -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "weather"
        shutil.copytree(
            ROOT / "examples" / "weather", repo, ignore=shutil.ignore_patterns(".toolselect-cache", "__pycache__")
        )
        run("git", "init", "-q", "-b", "main", cwd=repo)
        run("git", "add", "-A", cwd=repo)
        run("git", "commit", "-qm", "base", cwd=repo)
        server = repo / "server.py"
        text = server.read_text()
        assert OLD in text, "examples/weather/server.py changed: update OLD in scripts/example_comment.py"
        server.write_text(text.replace(OLD, NEW))
        run("git", "commit", "-qam", "Reword get_forecast", cwd=repo)
        out = repo / "comment.md"
        proc = run(
            sys.executable,
            "-m",
            "toolselect",
            "eval",
            "--base-ref",
            "HEAD~1",
            "--max-drop",
            "2",
            "--markdown",
            str(out),
            "--json",
            str(repo / "report.json"),
            "-q",
            cwd=repo,
        )
        if not out.exists():
            raise SystemExit(f"toolselect failed ({proc.returncode}): {proc.stderr}")
        patch = run("git", "diff", "--no-color", "HEAD~1", "HEAD", "--", "server.py", cwd=repo).stdout
        return out.read_text(), inline_comment(repo / "report.base.json", repo / "report.json", patch)


def inline_comment(base_json: Path, head_json: Path, patch: str) -> str:
    """The review comment the Action posts on server.py for the reworded tool."""
    from toolselect.diff import diff_reports
    from toolselect.impact import tool_impacts
    from toolselect.render.review import Mark, finding_key, inline_body
    from toolselect.report.files import read_report
    from toolselect.sourcelines import FilePatch, lines_changed

    base, head = read_report(base_json), read_report(head_json)
    [impact] = tool_impacts(diff_reports(base, head), base, head)
    patches = [FilePatch("server.py", patch[patch.index("@@") :])]
    where = lines_changed({impact.tool: impact.changes}, patches)[impact.tool]
    body = inline_body(impact, where, Mark("default", impact.tool, finding_key(impact, where)), "#the-comment")
    lines = f"line {where.line}" if where.start_line == where.line else f"lines {where.start_line}–{where.line}"
    return f"On `{where.path}`, {lines}:\n\n{body}"


def trajectory_sections(comment: str) -> str:
    """The comment's parts about trajectory cases: the dimensions base → head, and the traces."""
    parts = [p for p in comment.split("\n\n**") if p.startswith(("Trajectories**", "Traces of the flipped"))]
    if len(parts) != 2:
        raise SystemExit("the example comment has no trajectory sections: did examples/weather lose its trajectories?")
    # the traces run up to the next folded section
    parts[1] = parts[1].split("\n\n<details><summary>Tool surface")[0]
    return "\n\n".join("**" + p.strip() for p in parts)


def first_screen(comment: str) -> str:
    """The comment's top: the headline and everything down to the end of its first table."""
    lines = comment.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise SystemExit("the example comment has no table: update first_screen in scripts/example_comment.py")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[:end])


def blocks(comment: str, review: str) -> dict[str, list[tuple[str, str]]]:
    """Per file (relative to the repository), each marker's name and the text that goes between."""
    return {
        "README.md": [("example-comment-top", first_screen(comment))],
        "docs/action.md": [("example-comment", comment), ("example-review", review)],
        "docs/trajectories.md": [("example-trajectory", trajectory_sections(comment))],
    }


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def embedded(text: str, name: str, path: str) -> str:
    start, end = _markers(name)
    if start not in text or end not in text:
        raise SystemExit(f"{path}: markers {start} … {end} not found")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def filled(text: str, name: str, new: str, path: str) -> str:
    embedded(text, name, path)  # the markers are there
    start, end = _markers(name)
    before, rest = text.split(start, 1)
    return before + f"{start}\n{new.strip()}\n{end}" + rest.split(end, 1)[1]


def main() -> int:
    comment, review = render()
    if "--write" not in sys.argv and "--check" not in sys.argv:
        print(comment + "\n---\n" + review)
        return 0
    stale = []
    for name, parts in blocks(comment, review).items():
        path = ROOT / name
        old = path.read_text(encoding="utf-8")
        new = old
        for marker, text in parts:
            new = filled(new, marker, text, name)
        if new != old:
            stale.append(name)
            if "--write" in sys.argv:
                path.write_text(new, encoding="utf-8")
    if "--check" in sys.argv and stale:
        print(f"out of date: {', '.join(stale)} (run `python scripts/example_comment.py --write`)")
        return 1
    print("updated: " + ", ".join(stale) if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
