"""The event loop a command runs on: Ctrl-C and SIGTERM cancel the run cleanly. And the small
environment every process started from the pull request's code gets.

Answers already received stay in the answer cache (each is written as it arrives), so an
interrupted run is resumed by running it again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Coroutine, Mapping
from contextlib import suppress
from typing import Any, TypeVar

T = TypeVar("T")

# What setup and the server inherit from toolselect's environment: the machine, the locale, the
# network, and the toolchains a server is built or started with (setup-node, setup-python, uv, …).
# fmt: off
INHERITED = frozenset((
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "CI",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TOOL_CACHE", "AGENT_TOOLSDIRECTORY",
    "JAVA_HOME", "RUSTFLAGS", "DOCKER_HOST", "DOCKER_CONFIG", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
    "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GOPRIVATE", "GONOSUMDB", "GOTOOLCHAIN",
    "NVM_DIR", "VOLTA_HOME", "PYENV_ROOT", "pythonLocation",
))
INHERITED_PREFIXES = (
    "LC_", "XDG_", "NODE_", "NPM_CONFIG_", "npm_config_", "YARN_", "PNPM_", "BUN_", "DENO_", "COREPACK_",
    "UV_", "PIP_", "PYTHON", "Python", "CARGO_", "RUSTUP_", "DOTNET_", "GRADLE_", "MAVEN_",
)
# fmt: on
# Never inherited, whatever the name or prefix above says: the keys and tokens of the run, and any
# value with credentials in a URL (a proxy or an index as https://user:password@host).
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|KEY|PRIVATE|CREDENTIAL|AUTH|SESSION|COOKIE", re.IGNORECASE)
DENIED_PREFIXES = ("GITHUB_", "ACTIONS_", "INPUT_", "ANTHROPIC_", "OPENAI_", "TOOLSELECT_", "TOOLPROOF_")
URL_CREDENTIALS = re.compile(r"://[^/@\s]+@")


def child_environment(extra: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a process that runs code from the pull request (a server's setup, start and
    the server itself, the command provider): the inherited few, then what the config passes (`extra`).
    It keeps secrets out of their environment; it is not a sandbox (they run as the same user)."""
    env = {
        name: value
        for name, value in environ.items()
        if (name in INHERITED or name.startswith(INHERITED_PREFIXES))
        and not name.startswith(DENIED_PREFIXES)
        and not SECRET_NAME.search(name)
        and not URL_CREDENTIALS.search(value)
    }
    return env | dict(extra)


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


def secrets_apart(environ: dict[str, str], argv: list[str]) -> dict[str, str]:
    """This process's environment with the secrets (keys, tokens, passwords: by name) out of it.

    A process's starting environment stays readable in /proc/<pid>/environ to every process of the
    same user — the server from the pull request included. So when secrets are present, this
    re-executes the process (same pid) with an environment without them, handing them over a pipe,
    and returns them here, in memory only: the caller passes the mapping on and never puts them
    back into os.environ. Returns when there is nothing to hide; never on the re-executing side."""
    if SECRETS_FD in environ:  # the re-executed side: take them from the pipe
        fd = int(environ[SECRETS_FD])
        with os.fdopen(fd, "rb") as pipe:
            secrets = json.loads(pipe.read() or b"{}")
        os.environ.pop(SECRETS_FD, None)
        return {k: v for k, v in environ.items() if k != SECRETS_FD} | secrets
    secrets = {k: v for k, v in environ.items() if v and SECRET_NAME.search(k)}
    data = json.dumps(secrets).encode()
    if not secrets or os.name != "posix" or len(data) > 60_000:  # a pipe holds 64 KiB without a reader
        return environ
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    os.set_inheritable(read, True)
    clean = {k: v for k, v in environ.items() if k not in secrets} | {SECRETS_FD: str(read)}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *argv], clean)
    raise AssertionError("unreachable")  # pragma: no cover
