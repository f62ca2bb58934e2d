"""A frozen tool surface served over stdio as an MCP server (`toolselect serve TOOLS.json`): what a real
client connects to when toolselect drives it. `tools/list` answers the definitions exactly as the file
holds them; `tools/call` is refused with an error result — toolselect never runs a tool — and, with
`log`, each call is written down (a client that tried one is a finding, not an execution)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REFUSED = "toolselect serves this tool's definition only: it is never run"


async def serve(tools: list[dict[str, Any]], name: str = "toolselect", log: Path | None = None) -> None:
    """Serve `tools` on this process's stdin and stdout until the client hangs up."""
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    async def answer(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/list":
            listed: dict[str, Any] = {"tools": tools}
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                listed.update(resultType="complete", ttlMs=0, cacheScope="private")
            return listed
        if ctx.method == "tools/call":
            params = ctx.params or {}
            if log is not None:
                with log.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"tool": params.get("name"), "arguments": params.get("arguments")}) + "\n")
            return {"content": [{"type": "text", "text": REFUSED}], "isError": True}
        return await call_next(ctx)

    async def never(ctx: Any, params: Any) -> Any:
        raise RuntimeError("answered before the handler")

    server = Server(name, version="1.0.0", on_list_tools=never, on_call_tool=never)
    server.middleware.append(answer)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def command(tools_file: Path, name: str, calls: Path | None = None) -> list[str]:
    """How a client starts it as its MCP server: this interpreter, `toolselect serve` on the frozen
    surface under the server's name, each refused tools/call written to `calls`."""
    argv = [sys.executable, "-m", "toolselect", "serve", str(tools_file), "--name", name]
    return argv + (["--calls", str(calls)] if calls is not None else [])
