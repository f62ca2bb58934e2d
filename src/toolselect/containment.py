"""The one stretch of the Action in which programs of the pull request run, and what they may not
write while it lasts: every phase that can start one (the eval, the stress test, suggest, …) runs
inside `containment()`, and `Confinement.command` (contain.py) refuses to start one before or after
it. It ends by stopping every process of theirs at once and checking that none is left (sweep.py);
only then is anything given back.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from .contain import PR_HOME, Owner, owner_of_checkout, set_stretch
from .sweep import Survived, sweep, unguaranteed


@dataclass
class Held:
    """Paths taken from the PR's programs while they run (as root): each entry's owner and mode as
    they were, given back by `release()`."""

    entries: list[tuple[str, int, int, int]]  # path, uid, gid, mode

    def release(self) -> None:
        for path, uid, gid, mode in reversed(self.entries):
            with suppress(OSError):
                os.chown(path, uid, gid, follow_symlinks=False)
                if not stat.S_ISLNK(mode):
                    os.chmod(path, stat.S_IMODE(mode))
        self.entries = []


def hold(paths: Sequence[Path]) -> Held:
    """As root: `paths` and everything under them (never through a link) become root's, writable by
    root alone, until `release()`. The PR's programs can still read them. Not root: nothing to do."""
    held = Held([])
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return held
    for top in paths:
        for path in _tree(top):
            try:
                st = os.lstat(path)
                os.chown(path, 0, 0, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)
            except OSError:
                continue
            held.entries.append((path, st.st_uid, st.st_gid, st.st_mode))
    return held


def lend(workspace: Path, owner: Owner, held: Held) -> Held:
    """As root: what of the checkout is root's (a container job's checkout, a runner running as root)
    to `owner`, the user the PR's programs run as, before any starts — its setup builds in its folder,
    as it would in the runner user's own checkout. Not its git data, nothing `held` holds, never
    through a link. `release()` gives each entry back to root."""
    kept = {path for path, *_ in held.entries}
    lent = Held([])
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not workspace.is_dir() or workspace.is_symlink():
        return lent

    def one(path: str) -> None:
        with suppress(OSError):
            st = os.lstat(path)
            if st.st_uid == 0 and path not in kept:
                os.chown(path, owner[0], owner[1], follow_symlinks=False)
                lent.entries.append((path, st.st_uid, st.st_gid, st.st_mode))

    one(str(workspace))
    for folder, dirs, files in os.walk(workspace):  # never follows a link
        dirs[:] = [
            d for d in dirs if os.path.join(folder, d) not in kept and (d != ".git" or Path(folder) != workspace)
        ]
        for name in (*dirs, *files):
            one(os.path.join(folder, name))
    return lent


def give(paths: Sequence[Path], owner: Owner) -> None:
    """As root: `paths` and everything under them (never through a link) to `owner`."""
    for top in paths:
        for path in _tree(top):
            with suppress(OSError):
                os.chown(path, owner[0], owner[1], follow_symlinks=False)


FILE_COMMANDS = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
_survived = False  # a process of theirs outlived the last sweep: nothing may be given back


@contextmanager
def containment(env: dict[str, str], workspace: Path, say: Callable[[str], None]) -> Iterator[None]:
    """The one stretch of the Action in which programs of the pull request run: every phase that can
    start one (the eval, the stress test, suggest, …) runs inside it, and `Confinement.command`
    refuses to start one before or after it.

    As root (the image), while it lasts, the repository's git data (its hooks and config), the
    runner's file commands (GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE, the summary: their
    folder and files) and the job's HOME are root's, so nothing the programs write there reaches
    toolselect's git or a later step of the job; they get a HOME of their own. However it ends, every
    process of theirs is then stopped at once and checked gone (`sweep`), and only then is anything
    given back as it was. If one still runs, nothing is (`Survived`: the run fails)."""
    global _survived
    owner = owner_of_checkout(env)
    held, lent, theirs, keeps = Held([]), Held([]), None, True
    if owner is not None:
        files = {Path(env[name]).parent for name in FILE_COMMANDS if env.get(name)}
        home = Path(env["HOME"]) if env.get("HOME") else None
        homes = [home] if home and home.is_dir() and home.stat().st_uid == owner[0] else []
        theirs = Path(tempfile.mkdtemp(prefix="toolselect-home-"))
        os.chown(theirs, *owner)
        env[PR_HOME] = str(theirs)
        held = hold([workspace / ".git", *sorted(files), *homes])
        keeps = _owner_of(workspace) == owner[0]  # the checkout's owner keeps what it is lent; nobody does not
        lent = lend(workspace, owner, held)  # what of the checkout is root's: theirs to build in while they run
    if why := unguaranteed(env):
        say(
            f"toolselect: {why}; a process of the pull request that keeps forking could outrun the sweep "
            "that stops its programs (SECURITY.md: runner: host)"
        )
    set_stretch("within")
    try:
        yield
    finally:
        set_stretch("after")
        try:
            sweep(env)
        except Survived:
            _survived = True
            raise
        held.release()
        if not keeps:
            lent.release()  # lent to nobody (the checkout is root's): root's again
        if theirs is not None:
            shutil.rmtree(theirs, ignore_errors=True)


def _owner_of(path: Path) -> int | None:
    try:
        return path.stat().st_uid
    except OSError:
        return None


def all_stopped() -> bool:
    """False once a process of the pull request outlived the sweep at the end of the containment:
    then nothing is given back to the checkout's owner."""
    return not _survived


def _tree(top: Path) -> list[str]:
    if not os.path.lexists(top):
        return []
    found = [str(top)]
    if os.path.isdir(top) and not os.path.islink(top):
        for folder, dirs, files in os.walk(top):  # never follows a link
            found += [os.path.join(folder, name) for name in (*dirs, *files)]
    return found
