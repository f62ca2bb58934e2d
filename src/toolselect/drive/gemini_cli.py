"""Gemini CLI, driven (`gemini --prompt=…`): how it is started for one sample, and how its names read back.

Started as a user of Google's own API would start it: non-interactive, on the run's model (`--model`:
no routing request), API-key auth (its `security.auth.selectedType`) with the sample's own key and
toolselect's endpoint (`GOOGLE_GEMINI_BASE_URL`); a fresh HOME whose settings hold only the served
surface as its one MCP server, no usage statistics, telemetry or update check, no `.env` from the
folder; its own folder trusted (`--skip-trust`: the folder is toolselect's, empty); its answer as a
stream of JSON events. In `-p` mode Gemini CLI leaves every MCP tool out of the request unless a
policy allows it: the policy given lists the server's tools (allow) with an argument pattern that
never matches, so a call is refused at run time and no tool is run (the endpoint ends the sample at
the pick before that anyway). Observed with 0.61.0 (docs/clients.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..surface.serve import command as serve_command
from .wires import Gemini

NAME = "gemini-cli"
WIRE = Gemini
SEARCH_TOOL = ""  # no search of its own: every tool is sent
PROMPT_FLAG = "--prompt="  # the prompt in one element: never read as an option of its own
LONGEST = 63  # a longer name becomes its first 30 characters, `...` and its last 30
POLICY = """# the server's tools listed for the model, every call of one refused (its arguments never match)
[[rule]]
toolName = "*"
mcpName = "*"
argsPattern = "(?!)"
decision = "allow"
priority = 900
"""
CAPTURE: dict[str, dict[str, Any]] = {"off": {}, "driven": {}, "default": {}}  # nothing defers
CAPTURE_MODEL = "gemini-2.5-pro"


def sanitised(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.:-]", "_", name)


def server_prefix(server: str) -> str:
    return f"mcp_{sanitised(server)}_"


def tool_name(tool: str) -> str:
    return sanitised(tool)


def full_name(server: str, tool: str) -> str:
    """The name it gives a server's tool: `mcp_<server>_<tool>`, cut to 63 as first 30 + `...` + last 30."""
    name = server_prefix(server) + tool_name(tool)
    return name if len(name) <= LONGEST else name[:30] + "..." + name[-30:]


def setup(root: Path, driven: Any, tools_file: Path, url: str, key: str) -> tuple[list[str], dict[str, str]]:
    server, calls, model, path = driven.server, driven.calls, driven.model, driven.path
    home = root / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    serve = serve_command(tools_file, server, calls)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "maxAttempts": 1},
        "advanced": {"ignoreLocalEnv": True},
        "mcpServers": {server: {"command": serve[0], "args": serve[1:], "timeout": 60000}},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    policy = root / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    args = ["--model", model, "--skip-trust", "--policy", str(policy), "--output-format", "stream-json"]
    return args, environment(home, root / "tmp", url, key, {"PATH": path})


def environment(home: Path, tmp: Path, url: str, key: str, environ: Mapping[str, str]) -> dict[str, str]:
    return {
        "PATH": environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp),  # its error reports go there, not to /tmp
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": key,
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GIT_CEILING_DIRECTORIES": str(home.parent),
    }
