"""The base side of a comparison: the base commit checked out in a git worktree, evaluated with the
head's provider, model and settings, but its own config, server and golden set."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from .config import Loaded, Overrides, Settings, load_config, resolve_settings
from .errors import InfraError


class NoBaseline(InfraError):
    """The base can't be evaluated; the message says why, for the comment ("no baseline: …")."""


def git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(
        ["git", "-c", "safe.directory=*", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        raise NoBaseline(f"git {args[0]} failed: {said[-1] if said else f'exit {proc.returncode}'}")
    return proc.stdout.strip()


def repo_root(path: Path) -> Path:
    try:
        return Path(git("rev-parse", "--show-toplevel", cwd=path))
    except (NoBaseline, FileNotFoundError) as exc:
        raise NoBaseline(f"{path} is not in a git checkout (run actions/checkout first): {exc}") from None


def resolve_commit(root: Path, ref: str) -> str:
    """The commit behind `ref`, fetched from origin when a shallow checkout lacks it."""
    try:
        return git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=root)
    except NoBaseline:
        pass
    try:
        git("fetch", "--no-tags", "--depth=1", "origin", ref, cwd=root)
        return git("rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}", cwd=root)
    except NoBaseline as exc:
        raise NoBaseline(
            f"the base commit {ref} is not in this checkout and could not be fetched ({exc}); "
            "use actions/checkout with fetch-depth: 2 (or 0)"
        ) from None


def add_worktree(root: Path, commit: str) -> Path:
    """The commit checked out in a temporary worktree (removed again if checking out fails)."""
    folder = Path(tempfile.mkdtemp(prefix="toolselect-base-"))
    try:
        git("worktree", "add", "--detach", str(folder), commit, cwd=root)
    except NoBaseline:
        remove_worktree(root, folder)
        raise
    _give_to_the_checkouts_owner(folder, root)
    return folder


def _give_to_the_checkouts_owner(folder: Path, root: Path) -> None:
    """As root (the Action's container), the base worktree goes to whoever owns the checkout: the
    PR's server and its setup run as that user, and must be able to build in it."""
    owner = root.stat()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or owner.st_uid == 0:
        return
    for path in (folder, *folder.rglob("*")):
        with suppress(OSError):
            os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)


def remove_worktree(root: Path, folder: Path) -> None:
    with suppress(NoBaseline):
        git("worktree", "remove", "--force", str(folder), cwd=root)
    shutil.rmtree(folder, ignore_errors=True)
    with suppress(NoBaseline):
        git("worktree", "prune", cwd=root)


def _inside(path: Path, root: Path, other: Path) -> Path | None:
    """`path` (under `root`) at the same place under `other`, or None when it is outside."""
    try:
        return other / path.resolve().relative_to(root.resolve())
    except ValueError:
        return None


def base_settings(
    head_loaded: Loaded,
    head: Settings,
    over: Overrides,
    root: Path,
    tree: Path,
    cwd: Path,
    environ: Mapping[str, str],
) -> tuple[Loaded, Settings]:
    """The base's own config and golden set, with the head's provider, model and settings."""
    config = None
    if head_loaded.path:
        config = _inside(head_loaded.path, root, tree)
        if config is None:
            raise NoBaseline(f"the config {head_loaded.path} is outside the repository")
        if not config.is_file():
            raise NoBaseline(f"the base commit has no {config.relative_to(tree)}")
    base_cwd = _inside(cwd, root, tree) or tree
    given_golden = over.get("golden") or ()
    golden = tuple(str(p) for g in given_golden if (p := _inside(cwd / g, root, tree)) and p.is_file())
    tools_file = over.get("tools_file")
    tools = _inside(cwd / tools_file, root, tree) if tools_file else None
    if tools_file and (tools is None or not tools.is_file()):
        raise NoBaseline(f"the base commit has no {tools_file}")
    paths = {"config": str(config) if config else None, "tools_file": str(tools) if tools else None}
    base_over = Overrides(
        {k: v for k, v in over.values.items() if k not in ("config", "tools_file", "golden")}
        | {k: v for k, v in paths.items() if v}
        | ({"golden": golden} if given_golden else {})
        | _models(head)
        | {  # the head's: a fair comparison asks the same model the same way
            "repeat": head.repeat,
            "concurrency": head.concurrency,
            "temperature": head.temperature,
            "seed": head.seed,
            "timeout_s": head.timeout_s,
            "max_retries": head.max_retries,
            "cache_dir": str(head.cache_dir.resolve()),  # one cache for both sides: the base is free when main asked
        },
        over.source,
        over.url,
        over.server_command,
        over.cache_mode,
    )
    loaded = load_config(config, environ)
    return loaded, resolve_settings(loaded, base_over, environ, base_cwd)


def _models(head: Settings) -> dict[str, Any]:
    """The head's model, or its models with their labels: the base asks exactly those."""
    if len(head.models) <= 1:
        return {"provider": head.provider, "model": head.model or None, "base_url": head.base_url}
    return {
        "models": tuple(
            {"provider": m.provider, "model": m.model, "base_url": m.base_url, "label": m.label, "params": m.params}
            for m in head.models
        )
    }
