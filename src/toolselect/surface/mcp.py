"""A live tool surface over MCP: `initialize`, then `tools/list` (all pages). Never `tools/call`.

Every call into the `mcp` SDK (v2) lives here. `tools/list` is sent raw through the session's
JSON-RPC dispatcher so one tool with an invalid schema can't make the SDK reject the whole page:
toolselect judges schemas itself and leaves the invalid tools out, by name.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

from .. import __version__
from ..errors import InfraError, MissingProgram
from ..surface.spec import ServerSpec

MAX_PAGES = 1000


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The SDK's task groups wrap every failure in (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from leaves(sub)
    else:
        yield exc


class _StrayLines(logging.Filter):
    """The SDK logs a traceback for every line a stdio server prints on stdout that is not JSON-RPC:
    kept instead, to be said once, in one line, with the fix."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Failed to parse JSONRPC message"):
            return True
        error: Any = record.exc_info[1] if record.exc_info else None
        listed = error.errors() if error is not None and hasattr(error, "errors") else []
        found = listed[0].get("input") if listed else None
        self.lines.append(str(found) if found is not None else "?")
        return False

    def said(self) -> str | None:
        if not self.lines:
            return None
        first = self.lines[0] if len(self.lines[0]) <= 80 else self.lines[0][:79] + "…"
        more = (
            f" (and {len(self.lines) - 1} more line{'s' if len(self.lines) > 2 else ''})" if len(self.lines) > 1 else ""
        )
        return f"the server wrote {first!r} to stdout{more}: log to stderr, stdout carries the protocol"


async def list_tools(spec: ServerSpec, say: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Raw tool definitions from a live server, in server order, across every page. Lines a stdio
    server prints on stdout that aren't the protocol are said once (`say`, else stderr)."""
    stray = _StrayLines()
    sdk_log = logging.getLogger("mcp.client.stdio")
    sdk_log.addFilter(stray)
    try:
        return await _list_tools(spec)
    except InfraError as exc:
        if (said := stray.said()) is not None:
            raise type(exc)(f"{said}\n{exc.message}", hint=exc.hint) from None
        raise
    finally:
        sdk_log.removeFilter(stray)
        if (said := stray.said()) is not None:
            (say or (lambda text: print(f"warning: {text}", file=sys.stderr)))(said)


async def _list_tools(spec: ServerSpec) -> list[dict[str, Any]]:
    import anyio

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        statuses: list[int] = []
        try:
            with anyio.fail_after(spec.startup_timeout_s):
                async with _transport(spec, errlog, statuses) as (read, write):
                    return await _initialize_and_list(read, write, spec.startup_timeout_s)
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)) or _cancelling():
                raise  # Ctrl-C, SIGTERM: the run stops, it did not fail
            problems = list(leaves(exc))
            if any(isinstance(p, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)) for p in problems):
                raise
            missing = spec.command and any(isinstance(p, FileNotFoundError) for p in problems)
            error = MissingProgram if missing else InfraError
            raise error(_explain(spec, problems, statuses, _tail(errlog))) from None


def _cancelling() -> bool:
    """Whether this task was asked to stop (the SDK may have turned that into another error)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


@asynccontextmanager
async def _transport(spec: ServerSpec, errlog: Any, statuses: list[int]) -> AsyncIterator[tuple[Any, Any]]:
    if spec.command:
        from mcp import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=spec.command[0],
            args=list(spec.command[1:]),
            env=dict(spec.env) or None,
            cwd=str(spec.cwd) if spec.cwd else None,
        )
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
        return
    import httpx2

    async def remember(response: Any) -> None:
        if response.status_code >= 400:
            statuses.append(response.status_code)

    assert spec.url
    if _is_sse(spec):
        from mcp.client.sse import sse_client

        async with sse_client(
            spec.url,
            headers=dict(spec.headers) or None,
            timeout=spec.startup_timeout_s,
            sse_read_timeout=spec.startup_timeout_s,
        ) as streams:
            yield streams
        return
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(spec.startup_timeout_s)
    async with (
        httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout, event_hooks={"response": [remember]}) as http,
        streamable_http_client(spec.url, http_client=http) as streams,
    ):
        yield streams


def _is_sse(spec: ServerSpec) -> bool:
    if spec.transport:
        return spec.transport == "sse"
    return (spec.url or "").split("?")[0].rstrip("/").endswith("/sse")


async def _initialize_and_list(read: Any, write: Any, timeout: float) -> list[dict[str, Any]]:
    from mcp import ClientSession
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp.types import Implementation

    dispatcher = JSONRPCDispatcher(read, write)
    async with ClientSession(
        dispatcher=dispatcher,
        read_timeout_seconds=timeout,
        client_info=Implementation(name="toolselect", version=__version__),
    ) as session:
        init = await session.initialize()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page = await dispatcher.send_raw_request(
                "tools/list",
                {"cursor": cursor} if cursor is not None else None,
                {"timeout": timeout, "headers": {"mcp-protocol-version": init.protocol_version}},
            )
            tools.extend(page.get("tools") or [])
            cursor = page.get("nextCursor")
            if not cursor:
                return tools
            if cursor in seen:
                raise InfraError(f"the server's tools/list pagination repeats cursor {cursor!r}")
            seen.add(cursor)
        raise InfraError(f"the server's tools/list did not end after {MAX_PAGES} pages")


def _tail(errlog: Any, lines: int = 20) -> list[str]:
    try:
        errlog.flush()
        errlog.seek(0)
        return errlog.read().splitlines()[-lines:]
    except (OSError, ValueError):
        return []


def _explain(spec: ServerSpec, problems: list[BaseException], statuses: list[int], stderr: list[str]) -> str:
    """One message that says what failed, with the server's own last words."""
    from mcp import MCPError

    where = spec.describe()
    text = f"could not list tools from the MCP server ({where})"
    for p in problems:
        if isinstance(p, InfraError):
            text = f"{text}: {p.message}"
            break
        if isinstance(p, FileNotFoundError) and spec.command:
            missing = p.filename or spec.command[0]
            folder = f" in {spec.cwd}" if spec.cwd else ""
            text = f"cannot start the MCP server: {missing} not found{folder} (check server.command and server.cwd)"
            break
        if isinstance(p, PermissionError) and spec.command:
            text = f"cannot start the MCP server: permission denied running {spec.command[0]}"
            break
        if isinstance(p, TimeoutError):
            text = f"{text}: no answer within startup_timeout_s={spec.startup_timeout_s:g} s"
            break
        if isinstance(p, MCPError):
            if statuses:
                text = f"{text}: the server answered HTTP {statuses[-1]}" + (
                    " (check server.headers, e.g. an Authorization token)" if statuses[-1] in (401, 403) else ""
                )
            elif p.code == -32000:
                text = f"{text}: the server closed the connection (it exited or crashed during startup)"
            elif p.code == -32001:
                text = f"{text}: no answer within startup_timeout_s={spec.startup_timeout_s:g} s"
            else:
                text = f"{text}: {p.message} (MCP error {p.code})"
            break
        name = type(p).__name__
        if name in ("ConnectError", "ConnectTimeout"):
            text = f"{text}: cannot connect ({name})"
            break
        if name == "HTTPStatusError":
            status = getattr(getattr(p, "response", None), "status_code", "?")
            text = f"{text}: the server answered HTTP {status}"
            break
    else:
        if problems:
            text = f"{text}: {type(problems[0]).__name__}: {problems[0]}"
    if stderr:
        text += "\nserver stderr (last lines):\n" + "\n".join(f"  {line}" for line in stderr)
    return text
