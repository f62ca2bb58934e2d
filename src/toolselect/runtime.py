"""The event loop a command runs on: Ctrl-C and SIGTERM cancel the run cleanly. And the Action's
keys and tokens kept out of its own environment, where a program of the same user could read them.

Answers already received stay in the answer cache (each is written as it arrives), so an
interrupted run is resumed by running it again.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from contextlib import suppress
from typing import Any, TypeVar

from .contain import secret

T = TypeVar("T")

KEPT = "interrupted: the answers received so far are kept in the answer cache; run again to continue"


def run_async(
    coro: Coroutine[Any, Any, T], on_interrupt: Callable[[], None] | None = None, message: str = KEPT
) -> T | None:
    """Run `coro` on an event loop of our own; on Ctrl-C or SIGTERM cancel it, call `on_interrupt`
    (e.g. to stop a progress bar), say `message` (what was kept), and return None.

    (asyncio.run would do, but its Runner briefly needs ~40 MB more at the end of a large run.)"""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    main_task = loop.create_task(coro)
    for sig in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError, RuntimeError, ValueError):  # not on every platform
            loop.add_signal_handler(sig, main_task.cancel)
    try:
        return loop.run_until_complete(main_task)
    except (KeyboardInterrupt, asyncio.CancelledError):
        if on_interrupt is not None:
            on_interrupt()
        print(message, file=sys.stderr)
        return None
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        asyncio.set_event_loop(None)
        loop.close()


SECRETS_FD = "TOOLSELECT_SECRETS_FD"


def held_apart(name: str, value: str) -> bool:
    """What leaves the Action's environment before any code from the pull request runs: every input
    (an endpoint may carry a token: openai-base-url), every key or token, every URL with a secret."""
    return bool(value) and (name.startswith("INPUT_") or secret(name, value))


def secrets_apart(environ: dict[str, str], argv: list[str]) -> dict[str, str]:
    """This process's environment with the inputs, keys and tokens out of it.

    A process's starting environment stays readable in /proc/<pid>/environ to every process of the
    same user — the pull request's programs included. So when there is something to hide, this
    re-executes the process (same pid) with an environment without it, handing it over in an
    anonymous file, and returns it here, in memory only: the caller passes the mapping on and never
    puts it back into os.environ. The interpreter runs with -P: the working directory (the pull
    request's checkout) is not searched for modules. Returns when there is nothing to hide; never
    on the re-executing side."""
    if SECRETS_FD in environ:  # the re-executed side: take them from the file
        fd = int(environ[SECRETS_FD])
        with os.fdopen(fd, "rb") as handed:
            secrets = json.loads(handed.read() or b"{}")
        os.environ.pop(SECRETS_FD, None)
        return {k: v for k, v in environ.items() if k != SECRETS_FD} | secrets
    secrets = {k: v for k, v in environ.items() if held_apart(k, v)}
    if not secrets or os.name != "posix":
        return environ
    fd = _anonymous_file(json.dumps(secrets).encode())
    clean = {k: v for k, v in environ.items() if k not in secrets} | {SECRETS_FD: str(fd)}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-P", *argv], clean)
    raise AssertionError("unreachable")  # pragma: no cover


def _anonymous_file(data: bytes) -> int:
    """An inheritable descriptor of a file with `data` and no name (memfd; elsewhere an unlinked
    temporary file), read from the start."""
    import tempfile

    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("toolselect-secrets", 0)  # inheritable: no MFD_CLOEXEC
    else:  # pragma: no cover - macOS
        fd, path = tempfile.mkstemp()
        os.unlink(path)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd
