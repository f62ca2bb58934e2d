"""Render the README's example PR comment and inline review comment from the bundled example, for real.

A temporary git repository holds examples/weather twice: the base commit as it is, and a head
commit that rewords get_forecast's description. `toolselect eval --base-ref` compares the two
with the offline bm25 provider and writes the PR comment Markdown and both JSON reports. The inline
review comment is what the Action posts on the reworded lines: the same reports, the head commit's
`git diff` as the PR's file list, and the Action's own locating and rendering. The README embeds the
results between `<!-- example-comment:start -->` and `<!-- example-comment:end -->`, and between
`<!-- example-review:start -->` and `<!-- example-review:end -->`; the comment's trajectory sections
again between `<!-- example-trajectory:start -->` and `<!-- example-trajectory:end -->`.

    python scripts/example_comment.py            # print it
    python scripts/example_comment.py --write    # update README.md
    python scripts/example_comment.py --check    # exit 1 when README.md is out of date
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- example-comment:start -->", "<!-- example-comment:end -->"
REVIEW_START, REVIEW_END = "<!-- example-review:start -->", "<!-- example-review:end -->"
TRAJECTORY_START, TRAJECTORY_END = "<!-- example-trajectory:start -->", "<!-- example-trajectory:end -->"
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
    from toolselect.sourcelines import FilePatch, locate

    base, head = read_report(base_json), read_report(head_json)
    [impact] = tool_impacts(diff_reports(base, head), base, head)
    where = locate({impact.tool: impact.changes}, [FilePatch("server.py", patch[patch.index("@@") :])])[impact.tool]
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


def embedded(readme: str, start: str = START, end: str = END) -> str:
    return readme.split(start, 1)[1].split(end, 1)[0].strip("\n")


def main() -> int:
    comment, review = render()
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text()
    blocks = [
        (START, END, comment),
        (REVIEW_START, REVIEW_END, review),
        (TRAJECTORY_START, TRAJECTORY_END, trajectory_sections(comment)),
    ]
    if "--write" in sys.argv:
        for start, end, text in blocks:
            before, rest = readme.split(start, 1)
            readme = before + f"{start}\n{text.strip()}\n{end}" + rest.split(end, 1)[1]
        readme_path.write_text(readme)
        return 0
    if "--check" in sys.argv:
        if any(embedded(readme, start, end) != text.strip() for start, end, text in blocks):
            print("README.md's example comments are out of date: run python scripts/example_comment.py --write")
            return 1
        return 0
    print(comment + "\n---\n" + review)
    return 0


if __name__ == "__main__":
    sys.exit(main())
