"""`runner: host`: once a program of the pull request has started, toolselect's own process runs no
code that program could have changed.

On the job's machine the PR's programs run as the job's user, who owns toolselect's files too — the
action's checkout, its virtualenv, the runner's Python. So before the first of them starts,
`freeze()`:

1. imports every module of toolselect: its code is in memory, and a file changed later is never read;
2. notes the moment by the kernel's own clock for file changes (a file's ctime, which no program
   can set back) and which folders the import path holds;
3. from then on, a module not yet loaded (a library's lazy import, the standard library's) loads only
   from a file unchanged since that moment, in a folder that was there then, reached without a link
   from where the import path pointed — compiled from that file's bytes, or its unchanged bytecode;
   a compiled module is mapped through the descriptor that was checked. Anything else is refused
   with ImportError: never run.

`read_bytes` is the same check for the data toolselect reads later (the stress test's bundled pool).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import pkgutil
import stat
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from types import ModuleType
from typing import Any

# The libraries toolselect imports only when it posts (the comment, the review): loaded now with
# their compiled parts, cheaply; the rest (an SDK) load later through the checks below.
LIBRARIES = ("github", "requests")
REFUSED = "toolselect: not loading {what}: {why} since the pull request's programs started (runner: host)"


class _State:
    """What `freeze` noted: the moment, the folders there were, the import path's folders held open."""

    def __init__(self, moment: int, folders: dict[str, tuple[int, int]], roots: list[tuple[str, int]]) -> None:
        self.moment = moment
        self.folders = folders  # each folder under the import path, by its path then: (device, inode)
        self.roots = roots  # (folder as sys.path names it, its descriptor), longest first


_state: _State | None = None


def frozen() -> bool:
    return _state is not None


def freeze() -> None:
    """Load all of toolselect, note the moment and the import path, and check every later import."""
    global _state
    if _state is not None:
        return
    import toolselect

    for info in pkgutil.walk_packages(toolselect.__path__, "toolselect."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    for name in LIBRARIES:  # what toolselect imports late, with their compiled parts
        with suppress(ImportError):
            importlib.import_module(name)
    moment = _kernel_now()
    time.sleep(0.03)  # the kernel stamps changes by a coarse clock: anything later is stamped later
    folders: dict[str, tuple[int, int]] = {}
    roots = []
    for entry in dict.fromkeys(os.path.abspath(p) for p in sys.path if p):
        if not os.path.isdir(entry):
            continue
        for folder, _, _ in os.walk(entry):  # never follows a link
            st = os.lstat(folder)
            folders[folder] = (st.st_dev, st.st_ino)
        roots.append((entry, os.open(entry, os.O_RDONLY | os.O_DIRECTORY)))
    _state = _State(moment, folders, sorted(roots, key=lambda r: -len(r[0])))
    finder = _Checked()
    at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(at, finder)


def _kernel_now() -> int:
    """The kernel's clock for file changes, now: the ctime of a file just written."""
    with tempfile.TemporaryFile() as f:
        f.write(b".")
        f.flush()
        return os.fstat(f.fileno()).st_ctime_ns


def read_bytes(path: Path) -> bytes:
    """A file's bytes; once frozen, only if it has not changed since (else OSError)."""
    if _state is None:
        return path.read_bytes()
    return _checked(str(path), OSError)


def _checked(path: str, error: type[Exception]) -> bytes:
    """The bytes of `path`, reached from an import path folder held open since the freeze, through
    folders that were there then and no link, in a file unchanged since (its ctime)."""
    fd = _opened(path, error)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _opened(path: str, error: type[Exception]) -> int:
    """`path` opened as `_checked` describes it (the caller closes it)."""
    assert _state is not None
    full = os.path.abspath(path)
    root = next(((entry, fd) for entry, fd in _state.roots if full.startswith(entry + os.sep)), None)
    if root is None:
        raise error(REFUSED.format(what=path, why="it is outside the import path as it was"))
    parts = full[len(root[0]) + 1 :].split(os.sep)
    fds: list[int] = []
    try:
        at, where = root[1], root[0]
        for part in parts[:-1]:
            at = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=at)
            fds.append(at)
            where = os.path.join(where, part)
            st = os.fstat(at)
            if _state.folders.get(where) != (st.st_dev, st.st_ino):  # not the folder that was there
                raise error(REFUSED.format(what=path, why=f"its folder {part} was put there"))
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=at)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_ctime_ns > _state.moment:  # written, moved or linked since
            os.close(fd)
            raise error(REFUSED.format(what=path, why="it changed"))
        return fd
    except OSError as exc:
        if isinstance(exc, error):
            raise
        raise error(REFUSED.format(what=path, why=f"it can't be read safely ({exc.strerror})")) from None
    finally:
        for folder in fds:
            os.close(folder)


class _CheckedSource(importlib.machinery.SourceFileLoader):
    """A module's source or bytecode, read only through `_checked`; no bytecode is written."""

    def get_data(self, path: str) -> bytes:
        # a bytecode file that fails the check is an OSError: the source is compiled instead
        return _checked(path, OSError if path.endswith(".pyc") else ImportError)

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        pass


class _Checked(importlib.abc.MetaPathFinder):
    """Every import not yet loaded, once frozen: found as usual, loaded only as `_checked` allows."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.origin is None or not spec.has_location:
            return spec  # not found, or a namespace package (a folder, no code)
        loader: Any = spec.loader
        if isinstance(loader, importlib.machinery.SourceFileLoader):
            spec.loader = _CheckedSource(fullname, spec.origin)
            return spec
        if isinstance(loader, importlib.machinery.ExtensionFileLoader):
            fd = _opened(spec.origin, ImportError)
            if not os.path.isdir("/proc/self/fd"):  # macOS: mapped by its name, a moment after the check
                os.close(fd)
                return spec
            # mapped through the very descriptor that was checked: no moment for another file to take its place
            # (kept open: the loader maps it by that name)
            verified = f"/proc/self/fd/{fd}"
            spec.loader = importlib.machinery.ExtensionFileLoader(fullname, verified)
            spec.origin = verified
            return spec
        raise ImportError(REFUSED.format(what=fullname, why="it has no source to check"))
