"""Render the README's example PR comment from the bundled example, for real.

A temporary git repository holds examples/weather twice: the base commit as it is, and a head
commit that rewords get_forecast's description. `toolselect eval --base-ref` compares the two
with the offline bm25 provider and writes the PR comment Markdown. The README embeds the result
between `<!-- example-comment:start -->` and `<!-- example-comment:end -->`.

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


def render() -> str:
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
            "-q",
            cwd=repo,
        )
        if not out.exists():
            raise SystemExit(f"toolselect failed ({proc.returncode}): {proc.stderr}")
        return out.read_text()


def embedded(readme: str) -> str:
    return readme.split(START, 1)[1].split(END, 1)[0].strip("\n")


def main() -> int:
    comment = render()
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text()
    block = f"{START}\n{comment.strip()}\n{END}"
    if "--write" in sys.argv:
        before, rest = readme.split(START, 1)
        readme_path.write_text(before + block + rest.split(END, 1)[1])
        return 0
    if "--check" in sys.argv:
        if embedded(readme) != comment.strip():
            print("README.md's example comment is out of date: run python scripts/example_comment.py --write")
            return 1
        return 0
    print(comment)
    return 0


if __name__ == "__main__":
    sys.exit(main())
