"""Where distractors come from: the bundled pool of public MCP server surfaces (data/pool, with
their provenance and licences in data/pool/README.md) and the user's own neighbours — tools.json
files, or MCP servers listed with tools/list only (never called)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError, did_you_mean
from ..frozen import read_bytes
from . import Neighbour
from .file import read_tools_file
from .launch import Say, capture
from .spec import DistractorServer, ServerSpec


@dataclass(frozen=True)
class PoolSource:
    """One distractor source, for the report: its label, where it came from, how many tools."""

    server: str
    origin: str  # e.g. "@modelcontextprotocol/server-github@2025.4.8 (npm, MIT)" or a file path
    tools: int


def bundled() -> tuple[list[Neighbour], list[PoolSource]]:
    """The bundled pool: every tool of every bundled server, in a fixed order."""
    root = resources.files("toolselect").joinpath("data", "pool")
    neighbours: list[Neighbour] = []
    sources = []
    for entry in sorted((e for e in root.iterdir() if e.name.endswith(".json")), key=lambda e: e.name):
        data = json.loads(read_bytes(Path(str(entry))).decode("utf-8"))
        server = str(data["server"])
        neighbours += [Neighbour(server, tool) for tool in data["tools"]]
        origin = f"{data['package']}@{data['version']} ({data['registry']}, {data['license']})"
        sources.append(PoolSource(server, origin, len(data["tools"])))
    return neighbours, sources


def _label(source: DistractorServer) -> str:
    if source.name:
        return source.name
    if source.command:
        runner = source.command[0] in ("node", "python", "python3", "npx", "uvx")
        return Path(source.command[-1] if runner else source.command[0]).stem
    return urlsplit(source.url or "").hostname or "server"


async def _listed(
    given: Path | DistractorServer, base_dir: Path, where_: str, environ: Mapping[str, str], say: Say, key: str
) -> tuple[list[dict[str, Any]], str, str]:
    """One other surface's named tools, its label and where it came from: a tools.json file, or an
    MCP server listed with tools/list only (never called)."""
    tools: list[dict[str, Any]]
    if isinstance(given, Path):
        tools, label, origin = read_tools_file(given), given.stem, str(given)
    else:
        if not (given.command or given.url) or (given.command and given.url):
            raise ConfigError(f"{where_}{key}: give a server command or url")
        spec = ServerSpec(command=tuple(given.command) if given.command else None, url=given.url, cwd=base_dir)
        captured = await capture(spec, environ, say)
        tools, label, origin = captured.tools, _label(given), captured.origin
    return [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"]], label, origin


async def alongside(
    others: Sequence[str | Path | DistractorServer], base_dir: Path, where_: str, environ: Mapping[str, str], say: Say
) -> list[Neighbour]:
    """The servers a user runs beside theirs (evals.alongside, written at `where_`), in order: a bundled
    pool server by its name, a tools.json file, or an MCP server (tools/list only, run in `base_dir`)."""
    out: list[Neighbour] = []
    pool: list[Neighbour] | None = None
    for given in others:
        if isinstance(given, str):
            pool = pool if pool is not None else bundled()[0]
            servers = list(dict.fromkeys(n.server for n in pool))
            if given not in servers:
                raise ConfigError(
                    f"{where_}alongside: no bundled server '{given}'{did_you_mean(given, servers)}",
                    hint=f"the bundled pool has {', '.join(servers)}; or give a tools.json file or {{command: [...]}}",
                )
            out += [n for n in pool if n.server == given]
            continue
        named, label, _ = await _listed(given, base_dir, where_, environ, say, "evals.alongside")
        out += [Neighbour(label, t) for t in named]
    return out


async def gather(
    distractors: Sequence[Path | DistractorServer],
    bundled_pool: bool,
    base_dir: Path,
    where_: str,
    environ: Mapping[str, str],
    say: Say,
) -> tuple[list[Neighbour], list[PoolSource]]:
    """Every distractor the run may draw from (stress.distractors, written at `where_`): the user's
    neighbours first, then the bundled pool."""
    neighbours: list[Neighbour] = []
    sources: list[PoolSource] = []
    for given in distractors:
        named, label, origin = await _listed(given, base_dir, where_, environ, say, "stress.distractors")
        neighbours += [Neighbour(label, t) for t in named]
        sources.append(PoolSource(label, origin, len(named)))
    if bundled_pool:
        pool, listed = bundled()
        neighbours += pool
        sources += listed
    return neighbours, sources
