"""opencode, driven (`opencode run --format json`, the prompt on its standard input): how it is started
for one sample, and how its names read back.

Started as a user of a model provider's own API would start it: its provider toolselect's endpoint
through the AI SDK package opencode bundles for that API (`@ai-sdk/anthropic` for provider anthropic,
`@ai-sdk/openai`'s Responses for openai-responses), the sample's own key, the run's model; a fresh
HOME whose config holds only the served surface as its one MCP server, no title request, no update
or share; no models catalogue fetched, no plugin installed from npm (its config folder pre-seeded as
opencode checks), no project config, AGENTS.md, CLAUDE.md or skills from the folder. opencode runs an
MCP tool without asking unless a permission rule says `ask`: the server's tools are `ask` (in `run`,
refused), so the model sees them as a user's does and none is run. Observed with 1.18.33
(docs/clients.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..surface.serve import command as serve_command
from .wires import Anthropic

NAME = "opencode"
WIRE = Anthropic  # and Responses, for provider openai-responses (the endpoint serves both)
SEARCH_TOOL = ""  # no search of its own: every tool is sent
PROMPT_ON_STDIN = True  # an argument with a space would reach the model quoted
PLUGIN = "@opencode-ai/plugin"
CAPTURE: dict[str, dict[str, Any]] = {"off": {}, "driven": {}, "default": {}}  # nothing defers
CAPTURE_MODEL = "claude-sonnet-4-5"


def sanitised(name: str) -> str:
    """Every character but letters, digits, `_` and `-` made `_` (one per UTF-16 unit)."""
    return "".join(
        c if c.isascii() and (c.isalnum() or c in "_-") else "_" * (2 if ord(c) > 0xFFFF else 1) for c in name
    )


def server_prefix(server: str) -> str:
    return f"{sanitised(server)}_"


def tool_name(tool: str) -> str:
    return sanitised(tool)


def full_name(server: str, tool: str) -> str:
    return server_prefix(server) + tool_name(tool)


def setup(root: Path, driven: Any, tools_file: Path, url: str, key: str) -> tuple[list[str], dict[str, str]]:
    server, calls, model, path = driven.server, driven.calls, driven.model, driven.path
    home = root / "home"
    config_dir = home / ".config" / "opencode"
    (config_dir / "node_modules").mkdir(parents=True, exist_ok=True)
    version = re.sub(r"^.*?(\d+\.\d+\.\d+).*$", r"\1", str(driven.version)) or "latest"
    wanted = {"dependencies": {PLUGIN: version}}
    (config_dir / "package.json").write_text(json.dumps(wanted), encoding="utf-8")  # what opencode would install
    lock = {"lockfileVersion": 3, "packages": {"": wanted}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    serve = serve_command(tools_file, server, calls)
    responses = driven.provider == "openai-responses"
    config = {
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "toolselect": {
                "npm": "@ai-sdk/openai" if responses else "@ai-sdk/anthropic",
                "name": "toolselect",
                "options": {"baseURL": url + "/v1", "apiKey": key},
                "models": {model: {"name": model, "tool_call": True}},
            }
        },
        "model": f"toolselect/{model}",
        "mcp": {server: {"type": "local", "command": serve, "enabled": True, "timeout": 60000}},
        "agent": {"title": {"disable": True}},
        "permission": {f"{sanitised(server)}_*": "ask"},
    }
    (config_dir / "opencode.json").write_text(json.dumps(config), encoding="utf-8")
    return ["run", "--format", "json"], environment(home, {"PATH": path})


def environment(home: Path, environ: Mapping[str, str]) -> dict[str, str]:
    return {
        "PATH": environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "GIT_CEILING_DIRECTORIES": str(home.parent),
    }
