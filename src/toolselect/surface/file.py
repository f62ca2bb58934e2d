"""A frozen tool surface: a `tools/list` result saved as JSON or YAML (`{"tools": [...]}` or a bare
list; `.yaml`/`.yml` files are read as YAML)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..bounds import MAX_FILE_DEPTH, nests_deeper
from ..errors import ConfigError, where
from ..locate import display_path, read_text


def read_tools_file(path: Path) -> list[dict[str, Any]]:
    """The raw tool definitions in a tools.json file."""
    shown = display_path(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        from ..locate import load_yaml

        data = load_yaml(path, shown, "tools file").data
    else:
        text = read_text(path, shown, "tools file")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where(shown, exc.lineno)}invalid JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise ConfigError(f"{shown}: refused: it nests deeper than {MAX_FILE_DEPTH} levels") from None
    if nests_deeper(data, MAX_FILE_DEPTH):
        raise ConfigError(f"{shown}: refused: it nests deeper than {MAX_FILE_DEPTH} levels")
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise ConfigError(
            f'{shown}: expected a tools/list result {{"tools": [...]}} or a list of tools',
            hint="capture one from a live server with `toolselect snapshot -o tools.json`",
        )
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise ConfigError(f"{shown}: tools[{index}] must be an object with name, description, inputSchema")
    return tools


def tools_file_text(tools: list[dict[str, Any]]) -> str:
    """A `tools/list` result as stable, diff-friendly JSON: the tools in server order, every object's
    keys sorted, two-space indent, a trailing newline (byte-identical for the same surface)."""
    return json.dumps({"tools": tools}, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_tools_file(path: Path, tools: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tools_file_text(tools), encoding="utf-8")


JSON_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
YAML_NAME = re.compile(r"^\s*-?\s*name:\s*[\"']?([^\"'#\n]*?)[\"']?\s*(?:#.*)?$", re.MULTILINE)


def tool_lines(path: Path) -> dict[str, int]:
    """Each tool's line in a tools file (where its `name` is), for findings to point at; tools are
    matched in order, so a property that is also called `name` further in does not count."""
    try:
        tools = read_tools_file(path)
        text = path.read_text(encoding="utf-8-sig")
    except (ConfigError, OSError, ValueError):
        return {}
    pattern = YAML_NAME if path.suffix.lower() in (".yaml", ".yml") else JSON_NAME
    found = [(m.start(), m.group(1)) for m in pattern.finditer(text)]
    out: dict[str, int] = {}
    at = 0
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        shown = json.dumps(name)[1:-1] if pattern is JSON_NAME else name
        for i in range(at, len(found)):
            if found[i][1] == shown:
                out.setdefault(name, text.count("\n", 0, found[i][0]) + 1)
                at = i + 1
                break
    return out
