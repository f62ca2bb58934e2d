"""A real MCP server (low-level `mcp` SDK) that serves a tools list from a JSON file, verbatim.

    python mcp_server.py TOOLS.json [stdio | http | sse]     (http/sse print PORT=<n> first)

Serves schemas the SDK itself would refuse (e.g. {"type": "strng"}), pages tools/list, and logs every
method it receives so tests can prove toolselect never sends tools/call.
Environment: MCP_METHOD_LOG (file to append methods to), PAGE_SIZE (default 2),
REQUIRE_BEARER (token; HTTP only), CRASH_AT_START (message: print to stderr and exit 1),
HANG_AT_START (sleep forever before serving).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

if os.environ.get("CRASH_AT_START"):
    print("starting weather server…", file=sys.stderr)
    print(os.environ["CRASH_AT_START"], file=sys.stderr, flush=True)
    sys.exit(1)
if os.environ.get("HANG_AT_START"):
    time.sleep(3600)

import anyio
from mcp.server.lowlevel import Server
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

TOOLS: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
if isinstance(TOOLS, dict):
    TOOLS = TOOLS["tools"]
PAGE_SIZE = int(os.environ.get("PAGE_SIZE", "2"))
LOG = os.environ.get("MCP_METHOD_LOG")


def log(method: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(method + "\n")


def page(cursor: str | None, version: str) -> dict[str, Any]:
    start = int(cursor) if cursor else 0
    result: dict[str, Any] = {"tools": TOOLS[start : start + PAGE_SIZE]}
    if version in MODERN_PROTOCOL_VERSIONS:
        result.update(resultType="complete", ttlMs=0, cacheScope="private")
    if start + PAGE_SIZE < len(TOOLS):
        result["nextCursor"] = str(start + PAGE_SIZE)
    return result


async def middleware(ctx, call_next):
    log(ctx.method)
    if ctx.method == "tools/list":
        return page((ctx.params or {}).get("cursor"), ctx.protocol_version)
    return await call_next(ctx)


async def _unused(ctx, params):
    raise AssertionError("the middleware answers tools/list")


async def _call(ctx, params):
    raise AssertionError("toolselect must never call a tool")


server = Server("raw-tools", version="0.0.1", on_list_tools=_unused, on_call_tool=_call)
server.middleware.append(middleware)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    mode = sys.argv[2] if len(sys.argv) > 2 else "stdio"
    if mode == "stdio":
        anyio.run(serve_stdio)
    else:
        from serve import require_bearer, serve_app, sse_app  # type: ignore[import-not-found]

        app = server.streamable_http_app(host="127.0.0.1") if mode == "http" else sse_app(server)
        if token := os.environ.get("REQUIRE_BEARER"):
            app = require_bearer(app, token)
        serve_app(app)
