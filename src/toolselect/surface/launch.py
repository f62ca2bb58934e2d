"""Build and start a server before its tools are listed: `setup`, `start` and `{port}`, and the
environment they run in. Every process started here runs in its own process group and is stopped
with all of its children when the listing ends — also on an error, Ctrl-C or SIGTERM.

The server is code from the pull request: setup, start and the server run as contain.py says
(as the checkout's owner when toolselect is root, with no new privileges, a small environment plus
the config's `env:`), and whatever they leave running — detached or not — is stopped after each
setup command and once the tools are listed. `setup` and `start` are shell lines: `$VAR` in them is
expanded by the shell from that environment, never by toolselect from its own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from ..contain import IN_IMAGE, NOBODY, Confinement, child_environment, confinement, unstartable
from ..errors import InfraError, MissingProgram
from ..surface.spec import PORT, ServerSpec
from ..sweep import reap_group, sweep
from .mcp import list_tools

Say = Callable[[str], None]

IMAGE_HINT = (
    "  hint: the Action's image has Python, Node.js (node, npm, npx), uv (uv, uvx) and git, nothing else: "
    "run the eval on the job's machine with `runner: host` (after your own setup steps), or commit a "
    "tools.json snapshot (toolselect snapshot -o tools.json) and use tools-file"
)
STOP_GRACE_S = 5.0
OUTPUT_LINES = 40


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def with_port(spec: ServerSpec, port: int) -> ServerSpec:
    """`{port}` replaced in start, url, env and headers."""

    def fill(text: str) -> str:
        return text.replace(PORT, str(port))

    start = spec.start if spec.start is None or isinstance(spec.start, str) else tuple(map(fill, spec.start))
    return replace(
        spec,
        shown_url=fill(spec.shown_url) if spec.shown_url else None,
        start=fill(start) if isinstance(start, str) else start,
        url=fill(spec.url) if spec.url else None,
        env={k: fill(v) for k, v in spec.env.items()},
        headers={k: fill(v) for k, v in spec.headers.items()},
    )


@dataclass(frozen=True)
class Captured:
    tools: list[dict[str, Any]]  # the tools/list result, in server order
    origin: str  # the server as it ran ({port} filled in), for reports


async def capture(spec: ServerSpec, environ: Mapping[str, str], say: Say = lambda _: None) -> Captured:
    """Run setup, start the server when `start` says how, list its tools, and stop everything."""
    if spec.start is not None:
        spec = with_port(spec, free_port())
    spec = replace(spec, env=child_environment(spec.env, environ))
    confined = confinement(environ)
    program = spec.command[0] if spec.command else None
    if spec.command:  # the SDK starts a stdio server: it is started confined too
        spec = replace(
            spec, command=tuple(confined.command(spec.command)), shown_command=spec.shown_command or spec.command
        )
    try:
        await _setup(spec, environ, say, confined)
        if spec.start is None:
            if program is not None:
                check_program(program, spec.env, spec.cwd, spec.place)
            return Captured(await list_tools(spec, say), spec.describe())
        async with started(spec, say, confined) as server:
            return Captured(await _list_when_ready(spec, server), spec.describe())
    except MissingProgram as exc:
        if environ.get(IN_IMAGE):
            raise MissingProgram(f"{exc.message}\n{IMAGE_HINT}") from None
        raise
    finally:
        _swept(environ, say, "the server")


async def _setup(spec: ServerSpec, environ: Mapping[str, str], say: Say, confined: Confinement) -> None:
    """server.setup's commands in order — unless the head's is skipped: --no-setup, or a local run
    whose setup inputs are unchanged since it last succeeded (the base's always runs)."""
    from ..builds import note_success, setup_state, unchanged_since

    if not spec.setup:
        return
    if spec.setup_skip == "always":
        say("server setup skipped (--no-setup)")
        return
    cwd = spec.cwd or Path.cwd()
    stamp = spec.setup_stamp if spec.setup_skip == "unchanged" else None
    argv = spec.shown_command or ()
    if stamp is not None and unchanged_since(stamp, setup_state(spec.setup, cwd, spec.setup_inputs, argv)):
        say("server setup skipped: its inputs are unchanged since it last succeeded (--no-setup skips it always)")
        return
    for command in spec.setup:
        await run_setup(command, spec, say, confined)
        _swept(environ, say, f"server setup `{command}`")
    if stamp is not None:
        note_success(stamp, setup_state(spec.setup, cwd, spec.setup_inputs, argv))


def check_program(program: str, env: Mapping[str, str], cwd: Path | None, place: str = "") -> None:
    """A stdio server's program, found as its start would find it."""
    why = unstartable(program, env, cwd or Path.cwd())
    if why == "not found":
        where = f" in {cwd}" if cwd else ""
        raise MissingProgram(
            f"{place}cannot start the MCP server: {program} not found{where} (check server.command and server.cwd)"
        )
    if why:
        raise InfraError(f"{place}cannot start the MCP server {program}: {why}")


def _swept(environ: Mapping[str, str], say: Say, who: str) -> None:
    if stopped := sweep(environ):
        say(f"{who} left {stopped} process{'es' if stopped > 1 else ''} running in the background: stopped")


def _owned(path: Path) -> str:
    """'owned by uid 0, mode 755'."""
    try:
        st = path.stat()
    except OSError:
        return "owner and mode unknown"
    return f"owned by uid {st.st_uid}, mode {st.st_mode & 0o777:o}"


def _unwritable_hint(confined: Confinement) -> str:
    if not confined.action:
        return "make the folder writable for that user, or build the server yourself and pass --no-setup"
    if confined.owner == NOBODY:
        return (
            "the checkout is root's and the pull request's programs never run as root: run the job (or the "
            "self-hosted runner) as an unprivileged user, or give the checkout to one before toolselect"
        )
    uid = confined.owner[0] if confined.owner else os.getuid()
    return (
        "make the checkout that user's: run actions/checkout as it, or add a step before toolselect: "
        f'`sudo chown -R {uid} "$GITHUB_WORKSPACE"` (toolselect in its image hands a root-owned checkout over itself)'
    )


async def run_setup(command: str, spec: ServerSpec, say: Say, confined: Confinement) -> None:
    """One setup command through /bin/sh in the server's folder; its output is kept apart and shown
    (the last lines) when it fails or runs out of time."""
    folder = spec.cwd or Path.cwd()
    say(f"server setup: {command}")
    clock = time.monotonic()
    with tempfile.TemporaryFile() as output:
        proc = _spawn(["/bin/sh", "-c", command], folder, spec.env, output, spec.place, confined)
        try:
            code = await _wait(proc, spec.setup_timeout_s, lambda s: say(f"server setup running for {s:.0f} s"))
        finally:
            stop_group(proc)  # whatever it left in the background goes with it
        took = time.monotonic() - clock
        if code is None:
            raise InfraError(
                f"{spec.place}server setup `{command}` did not finish within setup_timeout_s="
                f"{spec.setup_timeout_s:g} s and was stopped (in {folder})" + _shown(output)
            )
        if code != 0:
            error = MissingProgram if code == 127 else InfraError  # the shell's "command not found"
            locked = confined.cannot_write(folder)  # the likely why: a checkout its user can't write
            raise error(
                f"{spec.place}server setup `{command}` failed: exit code {code} after {took:.1f} s (in {folder})"
                + (
                    f"; it ran as {confined.user()}, which cannot write {locked} ({_owned(locked)})"
                    if locked is not None
                    else ""
                )
                + _shown(output),
                hint=_unwritable_hint(confined) if locked is not None else None,
            )
    say(f"server setup done in {took:.1f} s: {command}")


@asynccontextmanager
async def started(spec: ServerSpec, say: Say, confined: Confinement) -> AsyncIterator[_Started]:
    """The HTTP server `start` starts, in the background, stopped (its whole group) at the end."""
    assert spec.start is not None
    argv = ["/bin/sh", "-c", spec.start] if isinstance(spec.start, str) else list(spec.start)
    shown = spec.start if isinstance(spec.start, str) else " ".join(spec.start)
    say(f"server start: {shown}")
    with tempfile.TemporaryFile() as output:
        proc = _spawn(argv, spec.cwd or Path.cwd(), spec.env, output, spec.place, confined)
        try:
            yield _Started(proc, output, shown)
        finally:
            stop_group(proc)


class _Started:
    def __init__(self, proc: subprocess.Popen[bytes], output: IO[bytes], command: str) -> None:
        self.proc, self.output, self.command = proc, output, command

    def exited(self, spec: ServerSpec) -> InfraError | None:
        code = self.proc.poll()
        if code is None:
            return None
        error = MissingProgram if code == 127 else InfraError  # the shell's "command not found"
        why = (
            ": `start` must keep running in the foreground (`exec node server.js`, not a command that "
            "daemonizes or `docker run -d`)"
            if code == 0
            else ""
        )
        return error(
            f"{spec.place}the server started by `{self.command}` exited with code {code} before "
            f"{spec.describe()} answered{why}" + _shown(self.output)
        )


async def _list_when_ready(spec: ServerSpec, server: _Started) -> list[dict[str, Any]]:
    """Wait until `url` accepts connections (or the server exits, or ready_timeout_s passes), then list."""
    parts = urlsplit(spec.url or "")
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    deadline = time.monotonic() + spec.ready_timeout_s
    while True:
        if failure := server.exited(spec):
            raise failure
        if await _accepts(host, port):
            break
        if time.monotonic() > deadline:
            raise InfraError(
                f"{spec.place}the server started by `{server.command}` did not answer at {spec.describe()} within "
                f"ready_timeout_s={spec.ready_timeout_s:g} s" + _shown(server.output)
            )
        await asyncio.sleep(0.1)
    while True:  # a port can open before the MCP endpoint is ready
        try:
            return await list_tools(spec)
        except InfraError as exc:
            if failure := server.exited(spec):
                raise failure from None
            if time.monotonic() > deadline:
                raise InfraError(exc.message + _shown(server.output, "its output")) from None
        await asyncio.sleep(0.25)


async def _accepts(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with suppress(OSError):
        await writer.wait_closed()
    return True


def _spawn(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    output: IO[bytes],
    place: str,
    confined: Confinement,
) -> subprocess.Popen[bytes]:
    if not cwd.is_dir():
        raise InfraError(f"{place}the server's folder {cwd} does not exist (check server.cwd)")
    command = confined.command(argv)  # every program of the pull request starts through its confinement
    try:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped with every child it starts
        )
    except FileNotFoundError:
        raise MissingProgram(f"{place}cannot run {argv[0]}: not found (in {cwd})") from None
    except OSError as exc:
        raise InfraError(f"{place}cannot run {argv[0]}: {exc.strerror} (in {cwd})") from None


async def _wait(
    proc: subprocess.Popen[bytes], timeout_s: float, still: Callable[[float], None], every_s: float = 60
) -> int | None:
    """The exit code, or None when `timeout_s` passed first; `still` is told every minute."""
    began = time.monotonic()
    told = began
    while (code := proc.poll()) is None:
        now = time.monotonic()
        if now - began > timeout_s:
            return None
        if now - told >= every_s:
            still(now - began)
            told = now
        await asyncio.sleep(0.05)
    return code


def stop_group(proc: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM to the process's whole group, SIGKILL to what is left after `grace_s`."""
    pgid = proc.pid  # the leader's pid (start_new_session), valid even once the leader is gone
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        proc.poll()
        return
    except PermissionError:
        pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        proc.poll()  # reaps the leader, which would otherwise keep the group alive as a zombie
        _reap(pgid, proc)
        if not _group_alive(pgid):
            return
        time.sleep(0.02)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    _reap(pgid, proc)


def _reap(pgid: int, proc: subprocess.Popen[bytes]) -> None:
    """The group's dead members, once Popen has the leader's exit code."""
    if proc.returncode is not None:
        reap_group(pgid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _shown(output: IO[bytes], what: str = "its output") -> str:
    """The last lines a process printed, indented, for an error message."""
    try:
        output.flush()
        output.seek(0)
        lines = output.read().decode("utf-8", errors="replace").splitlines()[-OUTPUT_LINES:]
    except (OSError, ValueError):
        return ""
    if not any(line.strip() for line in lines):
        return f"\n({what}: nothing)"
    return f"\n{what} (last lines):\n" + "\n".join(f"  {line}" for line in lines)
