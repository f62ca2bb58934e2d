"""GitHub Copilot CLI, driven (`copilot --prompt=…`): how it is started for one sample, and how its names
read back.

Started as a user of its bring-your-own-model mode would start it: offline (`COPILOT_OFFLINE`: no
GitHub sign-in, telemetry, web tools or updates), its provider toolselect's endpoint speaking the
run's API (Anthropic Messages for provider anthropic, OpenAI Responses for openai-responses), the
sample's own key, the run's model (`COPILOT_MODEL`: it decides Copilot's built-ins, its thinking and
whether it defers); a fresh HOME whose MCP configuration holds only the served surface; the server's
tools listed but every call of them denied (`--deny-tool=<server>`: the model sees them as a user's
does, none is run); its answer as JSON events. Past 30 tools in all it defers every MCP tool behind
its own `tool_search_tool` (a regex it runs itself; its finds come back as `tool_reference`s), as it
does for a user. What it unpacks on its first start is unpacked once, at install. Observed with
1.0.102 (docs/clients.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..surface.serve import command as serve_command
from .install import unpacked
from .wires import Anthropic

NAME = "copilot-cli"
WIRE = Anthropic  # and Responses, for provider openai-responses (the endpoint serves both)
SEARCH_TOOL = "tool_search_tool"  # its own regex over the deferred tools: runs in the client
LONGEST = 64
PROMPT_FLAG = "--prompt="  # the prompt in one element: never read as an option of its own
CAPTURE: dict[str, dict[str, Any]] = {
    "off": {"env": {"COPILOT_EXP_COPILOT_CLI_TOOL_SEARCH_ANTHROPIC": "false"}},
    "driven": {},
    "default": {},
}
CAPTURE_MODEL = "claude-sonnet-4.6"


def sanitised(name: str) -> str:
    """Non-ASCII as punycode (`xn--…`), then every character but letters, digits, `_` and `-` made `-`."""
    if not name.isascii():
        name = "xn--" + name.encode("punycode").decode("ascii")
    return re.sub(r"[^A-Za-z0-9_-]", "-", name)


def server_prefix(server: str) -> str:
    return f"{sanitised(server)}-"


def tool_name(tool: str) -> str:
    return sanitised(tool)


def full_name(server: str, tool: str) -> str:
    """`<server>-<tool>`, cut at 64 (a counter on the last character when two cut names clash)."""
    return (server_prefix(server) + tool_name(tool))[:LONGEST]


def setup(root: Path, driven: Any, tools_file: Path, url: str, key: str) -> tuple[list[str], dict[str, str]]:
    server, calls, model, path = driven.server, driven.calls, driven.model, driven.path
    home = root / "home"
    (home / ".copilot").mkdir(parents=True, exist_ok=True)
    serve = serve_command(tools_file, server, calls)
    config = {"mcpServers": {server: {"type": "local", "command": serve[0], "args": serve[1:], "tools": ["*"]}}}
    (home / ".copilot" / "mcp-config.json").write_text(json.dumps(config), encoding="utf-8")
    args = ["--output-format", "json", f"--deny-tool={server}"]
    package = Path(driven.program).parents[2]  # <clients>/copilot-cli/<version>/node_modules/.bin/copilot
    return args, environment(home, url, key, model, driven.provider, unpacked(package), {"PATH": path})


def environment(
    home: Path, url: str, key: str, model: str, provider: str, unpacked_at: Path, environ: Mapping[str, str]
) -> dict[str, str]:
    responses = provider == "openai-responses"
    return {
        "PATH": environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_TYPE": "openai" if responses else "anthropic",
        "COPILOT_PROVIDER_BASE_URL": url + "/v1" if responses else url,  # Anthropic's: no /v1 (it adds it)
        **({"COPILOT_PROVIDER_WIRE_API": "responses"} if responses else {}),
        "COPILOT_PROVIDER_API_KEY": key,
        "COPILOT_MODEL": model,
        "COPILOT_PKG_CACHE_HOME": str(unpacked_at),
        "GIT_CEILING_DIRECTORIES": str(home.parent),
    }
