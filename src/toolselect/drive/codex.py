"""Codex, driven (`codex exec`): how it is started for one sample, and how its names read back.

Started as a user of OpenAI's own API would start it, on the run's model (its own catalog decides the
rest: a model it knows may get every MCP tool deferred behind its `tool_search`, which it runs itself;
one it doesn't know gets them inline): non-interactive (`exec --json`, nothing kept: `--ephemeral`), a
fresh HOME and CODEX_HOME with a config.toml toolselect writes — its model provider toolselect's
endpoint (the Responses API, the sample's own key in TOOLSELECT_SESSION_KEY, no retries of its own),
the one MCP server toolselect serves (waited for: `required`, since Codex drops a server slower than
about a second without a word; never run: `default_tools_approval_mode = "prompt"`), no analytics, no
plugin traffic, no AGENTS.md. Observed with 0.171.0 (docs/clients.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..surface.serve import command as serve_command
from .wires import Responses

NAME = "codex"
WIRE = Responses
SEARCH_TOOL = "tool_search"  # its own BM25 over the deferred tools: runs in the client, then it asks again
SERVER_NAME = re.compile(r"^[a-zA-Z0-9_:@/.-]+$")  # another is skipped without a word (0.171.0)


# how `toolselect clients capture` runs it: a model outside its catalog (every tool inline), and one of
# its catalog that defers (as a user of gpt-5.5 has it; the deferral is the catalog's, not a setting)
CAPTURE: dict[str, dict[str, Any]] = {"off": {"model": "gpt-4.1"}, "driven": {}, "default": {}}
CAPTURE_MODEL = "gpt-5.5"


def sanitised(name: str) -> str:
    """Every character but ASCII letters, digits and `_` made `_` (one per character)."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)


def server_prefix(server: str) -> str:
    """How a server's tool reads back: its namespace `mcp__<server>` and the tool, as `mcp__<server>__<tool>`."""
    return f"mcp__{sanitised(server)}__"


def tool_name(tool: str) -> str:
    return sanitised(tool)


def full_name(server: str, tool: str) -> str:
    return server_prefix(server) + tool_name(tool)


def refuses(server: str) -> str | None:
    if SERVER_NAME.match(server):
        return None
    return (
        f"Codex skips an MCP server named {server!r} without a word (a name is letters, digits and _ : @ / . -): "
        "set server_name to one it takes"
    )


def toml(value: object) -> str:
    """A TOML value: strings as basic strings (JSON's escapes are TOML's), lists, booleans, numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value), ensure_ascii=True)


def config(server: str, tools_file: Path, calls: Path | None, url: str, model: str) -> str:
    serve = serve_command(tools_file, server, calls)
    sections: dict[str, dict[str, object]] = {
        "": {
            "model": model,
            "model_provider": "toolselect",
            "project_doc_max_bytes": 0,
            "check_for_update_on_startup": False,
        },
        "analytics": {"enabled": False},
        "features": {"plugins": False},
        "model_providers.toolselect": {
            "name": "toolselect",
            "base_url": url + "/v1",
            "wire_api": "responses",
            "env_key": "TOOLSELECT_SESSION_KEY",
            "request_max_retries": 0,
            "stream_max_retries": 0,
        },
        f"mcp_servers.{toml(server)}": {
            "command": serve[0],
            "args": serve[1:],
            "required": True,
            "startup_timeout_sec": 60,
            "default_tools_approval_mode": "prompt",
        },
    }
    lines = []
    for section, values in sections.items():
        lines += [f"[{section}]"] if section else []
        lines += [f"{k} = {toml(v)}" for k, v in values.items()]
        lines.append("")
    return "\n".join(lines)


def setup(root: Path, driven: Any, tools_file: Path, url: str, key: str) -> tuple[list[str], dict[str, str]]:
    """Its files in `root` (CODEX_HOME's config.toml), its arguments and its whole environment."""
    server, calls, model, path = driven.server, driven.calls, driven.model, driven.path
    home = root / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(config(server, tools_file, calls, url, model), encoding="utf-8")
    return ["exec", "--ephemeral", "--skip-git-repo-check", "--json"], environment(home, key, {"PATH": path})


def environment(home: Path, key: str, environ: Mapping[str, str]) -> dict[str, str]:
    return {
        "PATH": environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "LANG": "C.UTF-8",
        "TOOLSELECT_SESSION_KEY": key,
        "GIT_CEILING_DIRECTORIES": str(home.parent),
    }
