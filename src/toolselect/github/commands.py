"""Workflow commands: outputs, the job summary, annotations, masks and log groups.

Written with plain stdout (never through rich, whose markup and wrapping would mangle `::`
commands) and the runner's files (`$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`). Escaping follows
@actions/core: data `%`, CR, LF; properties also `:` and `,`.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TextIO

from ..errors import InfraError

SUMMARY_BYTES = 1024 * 1024  # GitHub rejects a step summary over 1 MiB
MAX_PER_LEVEL = 10  # annotations GitHub shows per level (error, warning, notice) per step; it drops the rest silently
LEVEL_NOUNS = {"error": "errors", "warning": "warnings", "notice": "notices"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class Workflow:
    """The runner's channels for one step; `environ` is the step's environment."""

    def __init__(self, environ: Mapping[str, str], out: TextIO | None = None) -> None:
        self.environ = environ
        self.out = out or sys.stdout
        self.token: str | None = None  # while set, the runner executes only toolselect's own commands
        self.shown: Counter[str] = Counter()  # annotations written, per level
        self.held: list[tuple[int, int, str, str, dict[str, object]]] | None = None  # see `annotations`
        remember(environ)  # the files toolselect appends to, as the step began: before any program of the PR ran

    def stop_commands(self) -> None:
        """From here on the runner executes no workflow command it reads in the log — whatever the
        pull request's config, server or the model wrote, on a line of its own or after a line break
        — but toolselect's own, each sent inside `::<token>::` … `::stop-commands::<token>` in one
        write. The token is random and never printed anywhere else."""
        self.token = secrets.token_hex(16)
        self._write(f"::stop-commands::{self.token}\n")

    def resume_commands(self) -> None:
        if self.token is not None:
            self._write(f"::{self.token}::\n")
            self.token = None

    def _command(self, name: str, message: str = "", **props: object) -> None:
        given = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v not in (None, ""))
        line = f"::{name}{' ' + given if given else ''}::{escape_data(message)}\n"
        self._write(line if self.token is None else f"::{self.token}::\n{line}::stop-commands::{self.token}\n")

    def _write(self, text: str) -> None:
        sys.stderr.flush()
        self.out.flush()
        self.out.write(text)
        self.out.flush()

    def annotate(
        self,
        level: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        end_line: int | None = None,
        title: str | None = None,
        rank: int = 0,
    ) -> None:
        """`error`, `warning` or `notice`, at a file and line (to `end_line`) when given. `rank`: while
        `annotations` holds them, the lower the more important (0: about the run itself)."""
        end = end_line if end_line is not None and line is not None and end_line > line else None
        props: dict[str, object] = {"file": file, "line": line, "endLine": end, "title": title}
        if self.held is not None:
            self.held.append((rank, len(self.held), level, message, props))
        elif self.shown[level] < MAX_PER_LEVEL:  # past it GitHub drops them: said by `annotations`, never lost there
            self.shown[level] += 1
            self._command(level, message, **props)

    @contextmanager
    def annotations(self, rest: str = "the job summary") -> Iterator[None]:
        """Hold the annotations made meanwhile, then write them within GitHub's limit — at most 10 per
        level per step, the most important (lowest rank) first — and, when there are more, one line
        at that level saying how many more there are in `rest`."""
        self.held = []
        try:
            yield
        finally:
            held, self.held = self.held, None
            for level in LEVEL_NOUNS:
                mine = sorted(h for h in held if h[2] == level)
                room = MAX_PER_LEVEL - self.shown[level]
                if len(mine) > room:
                    room -= 1
                for _, _, _, message, props in mine[: max(room, 0)]:
                    self.shown[level] += 1
                    self._command(level, message, **props)
                if len(mine) > max(room, 0):
                    more = len(mine) - max(room, 0)
                    self.shown[level] += 1
                    self._command(level, f"{more} more {LEVEL_NOUNS[level]}: see {rest}", title="toolselect")

    def mask(self, secret: str) -> None:
        if secret:
            self._command("add-mask", secret)

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        self._command("group", title)
        try:
            yield
        finally:
            self._command("endgroup")

    def set_outputs(self, values: Mapping[str, str]) -> None:
        """Multi-line-safe outputs via `$GITHUB_OUTPUT` (a heredoc with a random delimiter)."""
        path = self.environ.get("GITHUB_OUTPUT")
        if not path:
            return
        text = ""
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            text += f"{name}<<{delimiter}{os.linesep}{value}{os.linesep}{delimiter}{os.linesep}"
        append(Path(path), text.encode("utf-8"))

    def write_summary(self, markdown: str) -> bool:
        """Append to the job summary; False when there is no summary file, or it is not the one the
        step began with (said in the log)."""
        path = self.environ.get("GITHUB_STEP_SUMMARY")
        try:
            return bool(path) and append_summary(Path(str(path)), markdown)
        except InfraError as exc:
            self.annotate("error", exc.message, title="toolselect: job summary not written")
            return False


def run_url(environ: Mapping[str, str]) -> str | None:
    server, repo, run = environ.get("GITHUB_SERVER_URL"), environ.get("GITHUB_REPOSITORY"), environ.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def append_summary(path: Path, markdown: str) -> bool:
    """Append Markdown to a job summary file, cut to GitHub's 1 MiB."""
    data = markdown.encode("utf-8")
    if len(data) > SUMMARY_BYTES:
        note = b"\n\n(cut to GitHub's 1 MiB job-summary limit; the JSON report has everything)\n"
        data = data[: SUMMARY_BYTES - len(note) - 4].decode("utf-8", errors="ignore").encode() + note
    append(path, data)
    return True


# The runner's files toolselect appends to (outputs, the job summary): each as the step began —
# its device, inode and owner — before any program of the pull request ran.
APPENDED = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
_began: dict[str, tuple[int, int, int]] = {}


def remember(environ: Mapping[str, str]) -> None:
    for name in APPENDED:
        if path := environ.get(name):
            with suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    _began.setdefault(os.path.abspath(path), (st.st_dev, st.st_ino, st.st_uid))


def append(path: Path, data: bytes) -> None:
    """Append `data` to a file of the runner's, never through a link, and only to the very file the
    step began with (as root, a file put there since — or one whose owner changed — is refused)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        why = "is a link" if exc.errno == errno.ELOOP else f"can't be opened ({exc.strerror})"
        raise InfraError(f"{path} {why}: toolselect writes nothing through it") from None
    try:
        st = os.fstat(fd)
        began = _began.get(os.path.abspath(path))
        changed = began is not None and (
            (st.st_dev, st.st_ino) != began[:2] or st.st_uid not in (began[2], 0)  # 0: held by toolselect
        )
        if not stat.S_ISREG(st.st_mode) or changed:
            raise InfraError(
                f"{path} is not the file the step began with (replaced, or its owner changed): toolselect writes "
                "nothing to it"
            )
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def chown_like(paths: list[Path], reference: Path) -> None:
    """Give what the container (root) wrote back to the workspace's owner, so later steps (the
    runner user) can change or delete it: each path, everything under it, and the folders between
    it and the workspace. Only root-owned entries inside the workspace are touched: nothing outside
    it changes hands, whatever a config named (a `server.cwd` of /usr/local)."""
    try:
        st = reference.stat()
    except OSError:
        return
    if not hasattr(os, "chown") or os.geteuid() != 0 or st.st_uid == 0:
        return
    inside = reference.resolve()
    paths = [p for p in paths if p.resolve() == inside or inside in p.resolve().parents]

    def give(path: Path) -> None:
        try:
            if path.lstat().st_uid == 0:
                os.chown(path, st.st_uid, st.st_gid, follow_symlinks=False)
        except OSError:
            pass

    for top in paths:
        if top.is_symlink() or not top.exists():  # never follow a link out of the workspace
            continue
        for parent in top.parents:
            if parent == reference or reference not in parent.parents:
                break
            give(parent)
        if top.is_dir():
            for folder, dirs, files in os.walk(top):
                give(Path(folder))
                for name in files + dirs:
                    give(Path(folder) / name)
        else:
            give(top)
