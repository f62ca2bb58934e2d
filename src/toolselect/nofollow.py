"""Writing into the checkout, where a program of the pull request may have put a link: never through
one (and reading a file of it to show, never through one either).

In the Action (`toolselect action`, under GITHUB_WORKSPACE) every folder on the way from the workspace
to a file toolselect writes — the answer cache, the report folder, the JUnit file — is opened
without following a link, and the file is written under a temporary name and renamed into place: a
link the PR committed or planted there is replaced by the file, never written through (as root,
through a link, it could reach anything the container sees). Elsewhere (your own machine, a path
outside the workspace) files are written as usual.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from .contain import ACTION
from .errors import InfraError

FOLDER = os.O_RDONLY | os.O_DIRECTORY


def guarded_root(path: Path) -> Path | None:
    """The Action's workspace when `path` lies in it (then no link is followed below it)."""
    workspace = os.environ.get("GITHUB_WORKSPACE") if os.environ.get(ACTION) else None
    if not workspace:
        return None
    root, full = os.path.abspath(workspace), os.path.abspath(path)
    return Path(root) if full == root or full.startswith(root + os.sep) else None


def open_folder(folder: Path, *, create: bool = True) -> int:
    """A descriptor of `folder` (made when missing), reached from the workspace without a link."""
    root = guarded_root(folder)
    if root is None:
        try:
            return os.open(folder, FOLDER)
        except FileNotFoundError:  # made only when missing (the answer cache writes one file per answer)
            if not create:
                raise
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(folder, FOLDER)
    fd = os.open(root, FOLDER)
    try:
        for part in Path(os.path.abspath(folder)).relative_to(root).parts:
            try:
                step = os.open(part, FOLDER | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                step = os.open(part, FOLDER | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise InfraError(
                        f"{folder}: {part} is a link (or not a folder): toolselect writes only into real folders "
                        "of the workspace"
                    ) from None
                raise
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def writing(path: Path) -> Iterator[IO[str]]:
    """A file to write `path` through: a temporary one in the same folder, renamed into place when
    the block ends (over a link that was there, never through it)."""
    folder = open_folder(path.parent)
    temporary = f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                yield f
            os.replace(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def write_text(path: Path, text: str) -> None:
    with writing(path) as f:
        f.write(text)


def fresh_folder(folder: Path) -> None:
    """`folder` empty and real: whatever was there (a link, a file, a folder of anything) removed
    without following a link, then made anew."""
    parent = open_folder(folder.parent)
    try:
        try:
            st = os.stat(folder.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            shutil.rmtree(folder.name, dir_fd=parent)  # descriptor-based: links inside are removed, not followed
        elif st is not None:
            os.unlink(folder.name, dir_fd=parent)
        os.mkdir(folder.name, 0o755, dir_fd=parent)
    finally:
        os.close(parent)


def read_text(path: Path, limit: int = 2 * 1024 * 1024) -> str | None:
    """A regular file's UTF-8 text, reached from the workspace without a link (in the Action); None
    when a link, not a regular file, over `limit` bytes, or unreadable — a file of the pull request's
    is shown to nobody through a link it planted."""
    try:
        folder = open_folder(path.parent, create=False)
    except (OSError, InfraError):
        return None
    try:
        guarded = os.O_NOFOLLOW if guarded_root(path) is not None else 0  # elsewhere: read as usual
        fd = os.open(path.name, os.O_RDONLY | guarded | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:  # a folder, a fifo, a device: nothing to show
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read(limit + 1).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def files_below(folder: Path) -> Iterator[Path]:
    """Every regular file under `folder`, never through a link."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from files_below(Path(entry.path))
        elif entry.is_file(follow_symlinks=False):
            yield Path(entry.path)
