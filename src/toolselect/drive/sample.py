"""One sample asked through a real client: its own folder and HOME, the client started on the prompt, its
requests answered by the endpoint, and the pick read back in the server's names — the server's tool,
a built-in (a steal), or no call with the client's last text."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..contain import Confinement
from ..errors import ConfigError, InfraError
from ..pick import Pick, Search, built_in, failed
from ..sweep import stop_group
from . import claude_code, codex, copilot_cli, gemini_cli, netns, opencode
from .endpoint import Endpoint
from .install import KINDS, folder_of, installed

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
    runs: Path | None = None  # where each sample's folder is made (None: the system's temporary folder)
    env: tuple[tuple[str, str], ...] = ()  # over its environment (a capture turns its tool search off)
    provider: str = ""  # the run's provider (a client that speaks several APIs is pointed at that one's)
    own_network: bool = True  # in a network of its own that reaches the endpoint alone, where the machine allows
    gateway: bool = False  # taking the endpoint as a gateway at a custom base URL, not as its vendor's API

    @property
    def driver(self) -> Any:
        """The module that knows how to start this client and read its names (claude_code, codex)."""
        return DRIVERS[self.name]

    def tool_of(self, name: str) -> str:
        """The tool a name the client's model called is scored as: the server's (its name read back
        through the client's sanitising), or a built-in."""
        back: dict[str, str] = {}
        for definition in self.definitions:
            back.setdefault(
                self.driver.full_name(self.server, str(definition.get("name"))), str(definition.get("name"))
            )
        if name in back:
            return back[name]
        prefix = self.driver.server_prefix(self.server)
        return name[len(prefix) :] if name.startswith(prefix) else built_in(name)

    @property
    def taken_as(self) -> str:
        """How it takes the endpoint, in words for the report: as its vendor's API, or as a gateway."""
        if self.gateway:
            return str(getattr(self.driver, "AS_GATEWAY", "as a gateway at a custom base URL (no setting of its own "
                               "is known to change there)"))  # fmt: skip
        return str(getattr(self.driver, "AS_VENDOR", "as its vendor's API"))

    @property
    def network(self) -> str:
        """What it could reach, in words for the report."""
        if self.own_network and (why := netns.unavailable()) is None:
            return "toolselect's endpoint alone (a network namespace of its own)"
        why = why if self.own_network else "not asked"
        return f"the machine's ({why}); its own update checks and telemetry off"

    @property
    def search_tool(self) -> str:
        return str(self.driver.SEARCH_TOOL)

    def ends(self, name: str) -> bool:
        """A call of this tool ends the sample (anything but the client's own search)."""
        return name != self.driver.SEARCH_TOOL


async def drive(driven: Driven, endpoint: Endpoint, prompt: str, sample: int = 0) -> Pick:
    """Ask `prompt` through the client; never a tool run."""
    session = endpoint.open(sample)
    started = time.perf_counter()
    try:
        if driven.runs is not None:
            driven.runs.mkdir(mode=0o711, parents=True, exist_ok=True)  # its samples' folders: no one lists them
        with tempfile.TemporaryDirectory(prefix="toolselect-client-", dir=driven.runs) as folder:
            root = Path(folder)
            installed_at = Path(driven.program).parents[2]  # <clients>/<client>/<version>: in its prompt (its files)
            session.volatile = (str(installed_at), str(installed_at.resolve()), *volatile(root))
            session.expect = driven.driver.server_prefix(driven.server).rstrip("_")
            (root / "home").mkdir()
            (root / "work").mkdir()
            await fresh_repository(root / "work")
            tools = root / "tools.json"
            tools.write_text(json.dumps({"tools": list(driven.definitions)}), encoding="utf-8")
            args, env = driven.driver.setup(root, driven, tools, endpoint.url, session.key)
            for name, value in driven.env:  # an empty value unsets it (a capture's "the client's own default")
                env.pop(name, None) if value == "" else env.__setitem__(name, value)
            # the prompt (the golden set's, maybe a pull request's) is never read as an option of the client's
            driver = driven.driver
            on_stdin = bool(getattr(driver, "PROMPT_ON_STDIN", False))  # opencode's: it would quote an argument
            flag = getattr(driver, "PROMPT_FLAG", None)  # `--prompt=…` as one element; else after `--`
            said = [] if on_stdin else [f"{flag}{prompt}"] if flag else ["--", prompt]
            argv = [str(driven.program), *args, *said]
            if driven.confined is not None:  # it reads the pull request's words: it runs as their programs do
                argv = driven.confined.command(argv)
                if driven.confined.owner is not None:
                    for path in (root, *root.rglob("*")):
                        os.chown(path, *driven.confined.owner, follow_symlinks=False)
            if driven.own_network and endpoint.socket and netns.unavailable() is None:
                argv = netns.relayed(argv, endpoint.socket, endpoint.port)  # the endpoint, and nothing else
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=root / "work",
                env=env,
                stdin=asyncio.subprocess.PIPE if on_stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            err = b""
            try:
                _, err = await asyncio.wait_for(proc.communicate(prompt.encode() if on_stdin else None), TIMEOUT_S)
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


def writable_by(path: Path, owner: tuple[int, int]) -> bool:
    """Whether a user (uid, gid) may create entries in `path`: anyone may, or it is theirs or their group's."""
    try:
        st = path.stat()
    except OSError:
        return False
    uid, gid = owner
    return bool(
        st.st_mode & 0o002 or (st.st_uid == uid and st.st_mode & 0o200) or (st.st_gid == gid and st.st_mode & 0o020)
    )


OWN_RUNS = Path("/var/lib/toolselect/runs")  # root's: where samples run when the PR's programs run as another user


def runs_folder(clients: Path, theirs: tuple[int, int] | None, client: str) -> Path:
    """Where each sample's folder is made. Clients read files from folders above their own (memory
    files, settings, `.env`): when the pull request's programs run as another user (`theirs`), in a
    folder of root's own with nothing of theirs above it — never in the clients folder, even one
    they can't write now (in the Action the job's HOME, which holds it, is taken from them only while
    they run: an earlier step of the job could have planted a file there). Run as toolselect itself,
    in the clients folder. Root's folder writable by them: refused."""
    if theirs is None:
        return clients.resolve() / RUNS
    if any(writable_by(p, theirs) for p in (OWN_RUNS, *OWN_RUNS.parents)):
        raise ConfigError(
            f"{OWN_RUNS} is inside a folder the pull request's programs may write: a memory file or settings planted "
            f"there would reach {client}, which reads folders above its own",
            hint=f"make {OWN_RUNS.parent} and every folder above it root's, writable by root alone",
        )
    return OWN_RUNS


def volatile(root: Path) -> tuple[str, ...]:
    """What the client's prompt says that changes from run to run and decides no pick, kept out of the
    answer cache's key: its folder (as a path, and in its memory's path where every other character
    reads `-`) and today's date (else every answer would be asked again each day)."""
    now = datetime.now(UTC)
    days = {
        d.strftime("%Y-%m-%d") for d in (now, now.astimezone(), now - timedelta(hours=14), now + timedelta(hours=14))
    }
    return (str(root), re.sub(r"[^A-Za-z0-9]", "-", str(root)), *sorted(days))


async def fresh_repository(folder: Path) -> None:
    """The client's folder made a git repository of its own, empty, as a user's project is one: what it
    says of the folder (a repository, its branch, its status) is the same wherever toolselect runs,
    and it never takes a repository above the folder for its project."""
    git = shutil.which("git")
    if git is None:
        return
    proc = await asyncio.create_subprocess_exec(
        git,
        "-c",
        "init.defaultBranch=main",
        "init",
        "-q",
        str(folder),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)},
    )
    await proc.wait()


DRIVERS: dict[str, Any] = {
    claude_code.NAME: claude_code,
    codex.NAME: codex,
    gemini_cli.NAME: gemini_cli,
    copilot_cli.NAME: copilot_cli,
    opencode.NAME: opencode,
}
RUNS = ".runs"  # in the clients folder: each sample's folder, where nothing above it is anyone else's to write


def driven_for(
    client: str,
    version: str | None,
    mode: str,
    clients_dir: str | None,
    provider: str,
    server: str,
    model: str,
    definitions: tuple[dict[str, Any], ...],
    path: str,
    confined: Confinement | None = None,
    gateway: bool = False,
) -> Driven | None:
    """The real client to drive for `client` (at `version` when pinned): --client-mode real, or auto
    when it is installed; None to present the surface as its profile says. Real (or pinned) and not
    installed, or on another API: refused."""
    if mode == "emulated" or client not in KINDS:
        if mode == "real" or version is not None:
            raise ConfigError(f"toolselect drives {', '.join(KINDS)} only (not {client}): --client-mode emulated")
        return None
    kind = KINDS[client]
    folder = folder_of(clients_dir)
    found = installed(kind, folder, version)
    if found is None:
        if mode == "real" or version is not None:
            raise InfraError(
                f"{client}{'@' + version if version else ''} is not installed in {folder}",
                hint=f"toolselect clients install {client}{'@' + version if version else ''}"
                + (f" --clients-dir {folder}" if clients_dir else ""),
            )
        return None
    if provider not in kind.apis:
        if mode == "auto" and version is None:
            return None  # emulated, and the run says why (emulated_because)
        raise ConfigError(
            f"{client} speaks the {' or '.join(kind.apis)} API: driving it takes that provider (the run's is "
            f"{provider})",
            hint="--client-mode emulated presents the surface as its profile says, on any provider",
        )
    program, found_version = found
    refuses = getattr(DRIVERS[client], "refuses", None)  # a server name the client would skip (Codex's)
    if refuses is not None and (refusal := refuses(server)) is not None:
        raise ConfigError(refusal)
    runs = runs_folder(folder, confined.owner if confined is not None else None, client)
    env = tuple(getattr(DRIVERS[client], "GATEWAY", {}).items()) if gateway else ()
    return Driven(
        client, program, server, model, definitions, found_version, path, confined,
        runs=runs, env=env, provider=provider, gateway=gateway,
    )  # fmt: skip


def emulated_because(client: str, mode: str, clients_dir: str | None, provider: str) -> str | None:
    """Why a client toolselect could drive is asked as its profile says instead (auto: not installed, or
    the run's provider speaks another API): a note for the run's warnings, never a silent fallback."""
    if mode != "auto" or client not in KINDS:
        return None
    kind = KINDS[client]
    if provider not in kind.apis:
        return (
            f"{client} speaks the {' or '.join(kind.apis)} API and the run's provider is {provider}: asked as its "
            f"profile says (emulated); provider {kind.api} drives the real client"
        )
    folder = folder_of(clients_dir)
    if installed(kind, folder) is not None:
        return None
    more = f" --clients-dir {folder}" if clients_dir else ""
    return (
        f"{client} is not installed in {folder}: asked as its profile says (emulated); `toolselect clients install "
        f"{client}{more}` drives the real client"
    )
