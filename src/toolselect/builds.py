"""How a server's project is built: the setup its files call for (a package.json `build` script, a
uv project), and the built file a server's command names that a checkout lacks. Reads a few small
files; never runs anything."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_MANIFEST = 1 << 20  # a package.json larger than this is not read


@dataclass(frozen=True)
class Setup:
    command: str  # what server.setup should say, e.g. "npm ci && npm run build"
    why: str  # what it was found from, e.g. "package.json has a build script"


def setup_for(folder: Path) -> Setup | None:
    """The setup a project in `folder` needs before its server starts, or None."""
    manifest = _package_json(folder / "package.json")
    if manifest is not None:
        install, run = _node_tools(folder)
        scripts = manifest.get("scripts")
        if isinstance(scripts, dict) and isinstance(scripts.get("build"), str):
            return Setup(f"{install} && {run} build", "package.json has a build script")
        if manifest.get("dependencies"):
            return Setup(install, "package.json has dependencies, and a fresh checkout has no node_modules")
        return None
    if (folder / "uv.lock").is_file():
        return Setup("uv sync --frozen", "uv.lock: the server's dependencies, installed before it starts")
    return None


def _package_json(path: Path) -> dict[str, object] | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_MANIFEST:
            return None
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _node_tools(folder: Path) -> tuple[str, str]:
    """(the clean install, the script runner) of the package manager the lock file is from."""
    if (folder / "pnpm-lock.yaml").is_file():
        return "pnpm install --frozen-lockfile", "pnpm run"
    if (folder / "yarn.lock").is_file():
        return "yarn install --frozen-lockfile", "yarn run"
    if (folder / "package-lock.json").is_file() or (folder / "npm-shrinkwrap.json").is_file():
        return "npm ci", "npm run"
    return "npm install", "npm run"


def missing_built(argv: Sequence[str], cwd: Path, other_cwd: Path) -> Path | None:
    """The first relative path among a server command's arguments that is missing under `cwd` (a
    fresh worktree) but there under `other_cwd` (the checkout that was built): a build's output, not
    committed."""
    for arg in argv:
        if arg.startswith("-") or "://" in arg or not ("/" in arg or "." in arg):
            continue
        path = Path(arg)
        if path.is_absolute() or ".." in path.parts:
            continue
        if not (cwd / path).exists() and (other_cwd / path).exists():
            return path
    return None


def build_hint(argv: Sequence[str], cwd: Path, other_cwd: Path, has_setup: bool) -> str | None:
    """A fix for a base worktree that lacks what the server's command needs: a setup that builds it."""
    missing = missing_built(argv, cwd, other_cwd)
    if missing is None:
        return None
    top = missing.parts[0] + ("/" if len(missing.parts) > 1 else "")
    if has_setup:
        return f"the base worktree has no {top} after server.setup ran: check that the setup builds {missing}"
    setup = setup_for(other_cwd)
    command = setup.command if setup else "<the command that builds it>"
    return (
        f"the base worktree has no {top} ({missing} is built, not committed): add `server.setup: {command}` "
        "to the config so each side builds it"
    )


# --------------------------------------------------------------------------- a local setup, skipped when unchanged

SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".toolselect-cache", "toolselect-report"}
MARKERS = ("node_modules/.package-lock.json", ".venv/pyvenv.cfg", "venv/pyvenv.cfg")  # installs, stat'ed alone
MAX_FILES = 20_000  # a folder with more is not walked: its setup simply runs


def setup_state(commands: Sequence[str], cwd: Path, inputs: Sequence[str], argv: Sequence[str]) -> str | None:
    """A fingerprint of what a setup depends on and makes: its commands, and each file's size and
    modification time — the files `inputs` globs match, or every file in the server's folder (not
    .git, dependencies or toolselect's own folders, whose install markers count instead). None when
    it can't be known (too many files), or when a file the server's command names is missing."""
    import hashlib

    for arg in argv:
        path = Path(arg)
        named = not arg.startswith("-") and "/" in arg and not path.is_absolute() and ".." not in path.parts
        if named and not (cwd / path).exists():
            return None  # the build's output is gone: it must run
    files = _globbed(cwd, inputs) if inputs else _walked(cwd)
    if files is None:
        return None
    digest = hashlib.sha256(json.dumps(list(commands)).encode())
    for path in sorted({*files, *(cwd / m for m in MARKERS if (cwd / m).exists())}):
        try:
            info = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(cwd).as_posix()}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _globbed(cwd: Path, inputs: Sequence[str]) -> list[Path] | None:
    found: list[Path] = []
    for pattern in inputs:
        found += [p for p in cwd.glob(pattern) if p.is_file()]
        if len(found) > MAX_FILES:
            return None
    return found


def _walked(cwd: Path) -> list[Path] | None:
    import os

    found: list[Path] = []
    for folder, dirs, names in os.walk(cwd):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        found += [Path(folder) / n for n in names]
        if len(found) > MAX_FILES:
            return None
    return found


def unchanged_since(stamp: Path, state: str | None) -> bool:
    """The setup last succeeded on exactly this state."""
    if state is None:
        return False
    try:
        return json.loads(stamp.read_text(encoding="utf-8")).get("state") == state
    except (OSError, ValueError, AttributeError):
        return False


def note_success(stamp: Path, state: str | None) -> None:
    if state is None:
        return
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps({"state": state}) + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only cache folder: the setup runs next time too
