"""The base side of a comparison: the base commit checked out in a git worktree, evaluated with the
head's provider, model and settings, but its own config, server and golden set.

Every git command here runs with hooks and the fsmonitor off whatever the repository's config
says, and the worktree is made before any program of the pull request runs: after one has run,
toolselect's git only removes the worktree again."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .builds import build_hint
from .config import Loaded, Overrides, load_config
from .contain import owner_of_checkout, programs_started
from .containment import give, hold
from .errors import InfraError, ToolselectError, did_you_mean
from .gate import BaseFailure
from .resolve import resolve_settings
from .settings import Settings
from .sweep import sweep


class NoBaseline(ToolselectError):
    """The base has no config: the pull request that adds toolselect. Not a failure: the comment
    says "no baseline: …" and the head's own gate decides. Anything else that keeps the base from
    being evaluated is a failure (`GitFailed`, a setup's or server's InfraError…): see gate.BaseFailure."""


class GitFailed(InfraError):
    """A git command failed (the base ref doesn't resolve, can't be fetched, or no checkout)."""


# What toolselect's own git never takes from a repository the pull request's code could have
# written (its hooks, core.hooksPath, core.fsmonitor): these win over any config file.
HARDENED = ("-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
_GIT: list[str] = []  # git's full path, found once: before any program of the pull request ran


def git(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> str:
    """A git command, hook- and config-safe. Once a program of the pull request has run, the user's
    global config (HOME is theirs to write) is not read either; `env`: more of git's environment (a
    credential for one fetch), never on its command line."""
    if not _GIT:
        _GIT.append(shutil.which("git") or "git")
    extra = dict(env or {}) | {"GIT_TERMINAL_PROMPT": "0"}
    if programs_started():
        extra |= {"GIT_CONFIG_GLOBAL": os.devnull}
    proc = subprocess.run(
        [_GIT[0], *HARDENED, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | extra,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitFailed(f"git {args[0]} failed: {said[-1] if said else f'exit {proc.returncode}'}")
    return proc.stdout.strip()


def repo_root(path: Path) -> Path:
    try:
        return Path(git("rev-parse", "--show-toplevel", cwd=path))
    except (GitFailed, FileNotFoundError) as exc:
        raise GitFailed(f"{path} is not in a git checkout: {exc}", hint="run actions/checkout first") from None


def resolve_commit(root: Path, ref: str, environ: Mapping[str, str] | None = None) -> str:
    """The commit behind `ref`, fetched from origin when a shallow checkout lacks it (with the
    workflow's token, for a private repository, when `environ` has one)."""
    try:
        return git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=root)
    except GitFailed:
        pass
    try:
        git("fetch", "--no-tags", "--depth=1", "origin", ref, cwd=root, env=fetch_credential(environ or {}))
        return git("rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}", cwd=root)
    except GitFailed as exc:
        close = did_you_mean(ref, _refs(root))
        close = close if "(did you mean" in close else ""
        raise GitFailed(
            f"the base ref {ref!r} is not a commit in this checkout{close}, and fetching it from origin failed "
            f"({exc.message})",
            hint="check the base ref (a branch, tag or commit); in a workflow, actions/checkout with fetch-depth: 0 "
            "has every commit",
        ) from None


def _refs(root: Path) -> list[str]:
    """The checkout's branch and tag names (for "did you mean")."""
    try:
        listed = git("for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes", "refs/tags", cwd=root)
    except GitFailed:
        return []
    return [name.removeprefix("origin/") for name in listed.splitlines() if name and not name.endswith("/HEAD")]


def fetch_credential(environ: Mapping[str, str]) -> dict[str, str]:
    """The workflow's github-token as an HTTP header for one fetch from the GitHub server (what
    actions/checkout does when it persists it; toolselect asks for `persist-credentials: false`).
    Handed to git in its environment (GIT_CONFIG_*), which only root or the same user can read, and
    before any program of the pull request runs."""
    token, server = environ.get("INPUT_GITHUB-TOKEN"), environ.get("GITHUB_SERVER_URL")
    if not token or not server or not server.startswith("https://"):
        return {}
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{server.rstrip('/')}/.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
    }


@dataclass
class Checkout:
    """The base commit in a worktree of its own, made before any program of the pull request ran.
    As root it stays root's — readable, not writable — except during the base's own turn, so the
    head's programs can't change what the base is measured on."""

    root: Path
    tree: Path
    commit: str

    @contextmanager
    def turn(self, environ: Mapping[str, str]) -> Iterator[None]:
        """The base's programs run (its setup builds in the tree): the tree is theirs, then, once
        nothing of theirs runs any more, root's again."""
        owner = owner_of_checkout(environ)
        if owner is not None:
            give([self.tree], owner)
        try:
            yield
        finally:
            if owner is not None:
                sweep(environ)
                hold([self.tree])


def add_worktree(root: Path, commit: str) -> Path:
    """The commit checked out in a temporary worktree (removed again if checking out fails)."""
    folder = Path(tempfile.mkdtemp(prefix="toolselect-base-"))
    try:
        git("worktree", "add", "--detach", str(folder), commit, cwd=root)
    except GitFailed:
        remove_worktree(root, folder)
        raise
    folder.chmod(0o755)  # the base's programs read it (a picker, a retriever) once it is held
    return folder


def remove_worktree(root: Path, folder: Path) -> None:
    with suppress(GitFailed):
        git("worktree", "remove", "--force", str(folder), cwd=root)
    shutil.rmtree(folder, ignore_errors=True)
    with suppress(GitFailed):
        git("worktree", "prune", cwd=root)


@contextmanager
def checked_out(cwd: Path, ref: str, environ: Mapping[str, str]) -> Iterator[Checkout | GitFailed]:
    """The base commit checked out (or why it can't be) for a whole run — the eval and the stress
    test share it — and removed at the end."""
    try:
        root = repo_root(cwd)
        checkout = Checkout(root, add_worktree(root, commit := resolve_commit(root, ref, environ)), commit)
    except GitFailed as exc:
        yield exc
        return
    try:
        yield checkout
    finally:
        remove_worktree(checkout.root, checkout.tree)


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
            raise InfraError(
                f"the config {head_loaded.path} is outside the repository, so the base has none to read",
                hint="keep the config in the repository",
            )
        if not config.is_file():
            raise NoBaseline(f"the base commit has no {config.relative_to(tree)}")
    base_cwd = _inside(cwd, root, tree) or tree
    given_golden = over.get("golden") or ()
    golden = tuple(str(p) for g in given_golden if (p := _inside(cwd / g, root, tree)) and p.is_file())
    tools_file = over.get("tools_file")
    tools = _inside(cwd / tools_file, root, tree) if tools_file else None
    if tools_file and (tools is None or not tools.is_file()):
        head_file = cwd / tools_file
        built = head_file.is_file() and _ignored(root, head_file)
        raise InfraError(
            f"the base commit has no {tools_file}" + (" (it is gitignored: built, not committed)" if built else ""),
            hint="commit the tools file, or snapshot it (toolselect snapshot) so each side has its own"
            if not built
            else "list the server itself (server: in the config) with a server.setup that builds it, so each side "
            "builds its own",
        )
    paths = {"config": str(config) if config else None, "tools_file": str(tools) if tools else None}
    base_over = Overrides(
        {k: v for k, v in over.values.items() if k not in ("config", "tools_file", "golden", "head_setup")}
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
    settings = resolve_settings(loaded, base_over, environ, base_cwd)
    if settings.server is not None:  # a fresh worktree: its setup always runs, whatever the head's did
        settings = replace(settings, server=replace(settings.server, setup_skip="never", setup_stamp=None))
    return loaded, settings


def _ignored(root: Path, path: Path) -> bool:
    try:
        git("check-ignore", "-q", "--", str(path), cwd=root)
    except GitFailed:
        return False
    return True


def _models(head: Settings) -> dict[str, Any]:
    """The head's model, or its models with their labels, and its clients: the base asks exactly those."""
    clients = {m.client.name: (m.client, m.client_version) for m in head.models if m.client}
    if clients:
        models = {m.model_label: m for m in head.models}
        listed: dict[str, Any] = {"clients": tuple(clients.values())}
        if len(models) == 1:
            m = next(iter(models.values()))
            return listed | {"provider": m.provider, "model": m.model or None, "base_url": m.call.base_url}
        return listed | {
            "models": tuple(
                {
                    "provider": m.provider,
                    "model": m.model,
                    "base_url": m.call.base_url,
                    "label": label,
                    "params": m.call.params,
                }
                for label, m in models.items()
            )
        }
    if len(head.models) <= 1:
        return {"provider": head.call.provider, "model": head.call.model or None, "base_url": head.call.base_url}
    return {
        "models": tuple(
            {
                "provider": m.provider,
                "model": m.model,
                "base_url": m.call.base_url,
                "label": m.label,
                "params": m.call.params,
            }
            for m in head.models
        )
    }


def failure_of(exc: ToolselectError, base: Settings | None, head: Settings, tree: Path | None) -> BaseFailure:
    """Why the base could not be evaluated, with the likeliest fix: a server command that names a
    file the head has and the base worktree lacks was built, not committed — a setup builds it.
    Paths in the worktree (a temporary folder) are said relative to it."""
    hint = exc.hint
    message = exc.message
    if tree is not None:
        message = message.replace(f"{tree}/", "").replace(str(tree), "the base worktree")
    server, own = (base.server if base else None), head.server
    if server is not None and server.command and own is not None and own.command and base is not None:
        there, here = server.cwd or base.base_dir, own.cwd or head.base_dir
        hint = build_hint(server.command, there, here, bool(server.setup)) or hint
    return BaseFailure.of(message, hint)
