"""Claude Code, driven (`claude -p`): how it is started for one sample, and how its names read back.

Started as a user of Anthropic's own API would start it: non-interactive (`-p`), the run's model
(`--model`), only the MCP server toolselect serves (`--mcp-config`, `--strict-mcp-config`), its
answer as JSON; a fresh HOME and an empty working folder (no settings, memory files, hooks or plugins
of the pull request's); its model endpoint toolselect's (ANTHROPIC_BASE_URL) with a key of the
sample's own — never a real one; no update check, telemetry or other traffic; and its tool search on
(`ENABLE_TOOL_SEARCH=true`), as it is on Anthropic's endpoint (behind a custom base URL some versions
load every tool up front: `--client-endpoint gateway` measures that). In `-p` mode a tool it has no
permission for is never run; the endpoint ends the sample at the pick before that anyway. Observed with 2.1.197 and
2.1.332."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..surface.serve import command as serve_command
from .wires import Anthropic

NAME = "claude-code"
WIRE = Anthropic
SEARCH_TOOL = "ToolSearch"  # its own search over the deferred tools: runs in the client, then it asks again
MAX_TURNS = 6

QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "ENABLE_TOOL_SEARCH": "true",  # as on Anthropic's own endpoint (GATEWAY undoes it)
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",  # no memory file from any folder above its own
}


# how it is driven as on Anthropic's API (the default), and as behind a gateway (--client-endpoint gateway):
# there it decides its tool search itself (2.1.197 loaded every tool behind a custom base URL; 2.1.332 defers)
AS_VENDOR = "as Anthropic's API: its tool search on (ENABLE_TOOL_SEARCH=true)"
AS_GATEWAY = "as a gateway at a custom base URL: its tool search as it decides there (ENABLE_TOOL_SEARCH unset)"
GATEWAY = {"ENABLE_TOOL_SEARCH": ""}

# how `toolselect clients capture` runs it: its tool search off, as driven, and on its own default
CAPTURE: dict[str, dict[str, Any]] = {
    "off": {"env": {"ENABLE_TOOL_SEARCH": "false"}},
    "driven": {},
    "default": {"env": {"ENABLE_TOOL_SEARCH": ""}},
}
CAPTURE_MODEL = "claude-sonnet-4-5"


def server_prefix(server: str) -> str:
    """How Claude Code names a server's tools: `mcp__<server>__<tool>`."""
    return f"mcp__{server}__"


def tool_name(tool: str) -> str:
    """The name it gives a tool after the prefix: every character but letters, digits, `_`, `-` made `_`."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in tool)


def full_name(server: str, tool: str) -> str:
    return server_prefix(tool_name(server)) + tool_name(tool)


def setup(root: Path, driven: Any, tools_file: Path, url: str, key: str) -> tuple[list[str], dict[str, str]]:
    """Its files in `root` (the MCP configuration), and how it is started: its arguments (after its
    program, before `--` and the prompt) and its whole environment (HOME is `root/home`)."""
    server, calls, model, path = driven.server, driven.calls, driven.model, driven.path
    config = root / "mcp.json"
    config.write_text(mcp_config(server, tools_file, calls), encoding="utf-8")
    return arguments(config, model), environment(root / "home", url, key, {"PATH": path})


def mcp_config(server: str, tools_file: Path, calls: Path | None = None) -> str:
    """Its MCP configuration: the one server, toolselect serving the frozen surface over stdio (each
    refused tools/call written to `calls`)."""
    command = serve_command(tools_file, server, calls)
    return json.dumps({"mcpServers": {server: {"type": "stdio", "command": command[0], "args": command[1:]}}})


def arguments(config: Path, model: str) -> list[str]:
    return [
        "-p",
        "--model",
        model,
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--output-format",
        "json",
        "--max-turns",
        str(MAX_TURNS),
        "--no-session-persistence",
    ]


def environment(home: Path, url: str, key: str, environ: Mapping[str, str]) -> dict[str, str]:
    """Its whole environment: nothing of toolselect's (no real key), a PATH to run, its own HOME."""
    return {
        "PATH": environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": key,
        "GIT_CEILING_DIRECTORIES": str(home.parent),  # its folder is no git repository's, whatever holds it
        **QUIET,
    }
