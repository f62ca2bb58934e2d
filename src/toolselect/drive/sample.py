"""One sample asked through a real client: its own folder and HOME, the client started on the prompt, its
requests answered by the endpoint, and the pick read back in the server's names — the server's tool,
a built-in (a steal), or no call with the client's last text."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contain import Confinement
from ..errors import ConfigError, InfraError
from ..pick import Pick, Search, built_in, failed
from ..sweep import stop_group
from . import claude_code
from .endpoint import Endpoint

TIMEOUT_S = 180.0


@dataclass(frozen=True)
class Driven:
    """A real client toolselect runs: which, where its program is, the name it gives the server."""

    name: str
    program: Path
    server: str  # the server's name in the client's MCP configuration (and its tool names)
    model: str  # the run's model, as the client is told it
    definitions: tuple[dict[str, Any], ...]  # the frozen surface toolselect serves to it
    version: str = "?"
    path: str = "/usr/bin:/bin"  # its PATH
    confined: Confinement | None = None  # as whom it runs: the pull request's programs' user (never root)
    calls: Path | None = None  # where the server writes each tools/call it refused (none should come)

    def tool_of(self, name: str) -> str:
        """The tool a name the client's model called is scored as: the server's, or a built-in."""
        prefix = claude_code.server_prefix(self.server)
        return name[len(prefix) :] if name.startswith(prefix) else built_in(name)

    @property
    def search_tool(self) -> str:
        return claude_code.SEARCH_TOOL

    def ends(self, name: str) -> bool:
        """A call of this tool ends the sample (anything but the client's own search)."""
        return name != claude_code.SEARCH_TOOL


async def drive(driven: Driven, endpoint: Endpoint, prompt: str, sample: int = 0) -> Pick:
    """Ask `prompt` through the client; never a tool run."""
    session = endpoint.open(sample)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="toolselect-client-") as folder:
            root = Path(folder)
            # in its prompt (its folder; its memory's path, where `_` reads `-`): not in the key
            session.volatile = (root.name, root.name.replace("_", "-"))
            (root / "home").mkdir()
            (root / "work").mkdir()
            tools, config = root / "tools.json", root / "mcp.json"
            tools.write_text(json.dumps({"tools": list(driven.definitions)}), encoding="utf-8")
            config.write_text(claude_code.mcp_config(driven.server, tools, driven.calls), encoding="utf-8")
            argv = claude_code.command(driven.program, prompt, config, driven.model)
            if driven.confined is not None:  # it reads the pull request's words: it runs as their programs do
                argv = driven.confined.command(argv)
                if driven.confined.owner is not None:
                    for path in (root, *root.rglob("*")):
                        os.chown(path, *driven.confined.owner, follow_symlinks=False)
            env = claude_code.environment(root / "home", endpoint.url, session.key, {"PATH": driven.path})
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=root / "work",
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            err = b""
            try:
                _, err = await asyncio.wait_for(proc.communicate(), TIMEOUT_S)
            except TimeoutError:
                if session.call is None:
                    return failed(f"{driven.name} did not finish within {TIMEOUT_S:g} s")
            finally:
                await stop_group(proc)  # the client, and what it started (its MCP server), all gone
        latency = (time.perf_counter() - started) * 1000
        if session.error is not None:
            return failed(f"{driven.name}: {session.error}", latency)
        if session.call is None and session.turns == 0:
            said = err.decode("utf-8", "replace").strip().splitlines()[-3:]
            return failed(f"{driven.name} asked no model request (exit {proc.returncode}): {' | '.join(said)}"[:500])
        call = session.call
        return Pick(
            tool=driven.tool_of(call.tool) if call is not None else None,
            args=call.args if call is not None else None,
            text=session.text if call is None else "",
            calls=1 if call is not None else 0,
            latency_ms=latency,
            usage=session.usage,
            stop_reason=session.stop_reason,
            cached=session.cached,
            searched=tuple(Search(s.query, tuple(driven.tool_of(n) for n in s.found)) for s in session.searched),
        )
    finally:
        endpoint.close(session)


DRIVABLE = {claude_code.NAME: ("anthropic", claude_code.installed, claude_code.PACKAGE, claude_code.TESTED)}
DEFAULT_DIR = Path("~/.cache/toolselect/clients")


def driven_for(
    client: str,
    mode: str,
    clients_dir: str | None,
    provider: str,
    server: str,
    model: str,
    definitions: tuple[dict[str, Any], ...],
    path: str,
    confined: Confinement | None = None,
) -> Driven | None:
    """The real client to drive for `client` (--client-mode real, or auto when it is installed), or None
    to present the surface as its profile says. Real and not installed, or on another API: refused."""
    if mode == "emulated" or client not in DRIVABLE:
        if mode == "real":
            raise ConfigError(f"--client-mode real: toolselect drives {', '.join(DRIVABLE)} only (not {client})")
        return None
    api, find, _, _ = DRIVABLE[client]
    folder = Path(clients_dir).expanduser() if clients_dir else DEFAULT_DIR.expanduser()
    found = find(folder)
    if found is None:
        if mode == "real":
            raise InfraError(
                f"{client} is not installed in {folder}",
                hint=f"toolselect clients install {client}" + (f" --clients-dir {folder}" if clients_dir else ""),
            )
        return None
    if provider != api:
        raise ConfigError(
            f"{client} speaks the {api} API: driving it takes provider {api} (the run's is {provider})",
            hint="--client-mode emulated presents the surface as its profile says, on any provider",
        )
    program, version = found
    return Driven(client, program, server, model, definitions, version, path, confined)


def emulated_because(client: str, mode: str, clients_dir: str | None) -> str | None:
    """Why a client toolselect could drive is asked as its profile says instead (auto, not installed): a
    note for the run's warnings, never a silent fallback."""
    if mode != "auto" or client not in DRIVABLE:
        return None
    folder = Path(clients_dir).expanduser() if clients_dir else DEFAULT_DIR.expanduser()
    if DRIVABLE[client][1](folder) is not None:
        return None
    more = f" --clients-dir {folder}" if clients_dir else ""
    return (
        f"{client} is not installed in {folder}: asked as its profile says (emulated); `toolselect clients install "
        f"{client}{more}` drives the real client"
    )
