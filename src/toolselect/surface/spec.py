"""The server a surface is captured from: the config's `server:` section as written (`ServerModel`),
and as resolved (`ServerSpec`): how to reach a live MCP server, and how to build and start it first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..strict import Authored
from ..urls import public_url


class ServerModel(Authored):
    """toolproof's `server:` section, plus `transport` for SSE servers and the keys that build and
    start a server in CI: `setup`, `start`, `setup_timeout_s`, `ready_timeout_s`."""

    command: list[str] | None = None
    url: str | None = None
    transport: Literal["streamable-http", "sse"] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    startup_timeout_s: float = Field(30.0, gt=0)
    setup: str | list[str] | None = None
    setup_inputs: list[str] | None = None  # globs (in the server's folder): a local run re-runs setup when they change
    setup_timeout_s: float = Field(900.0, gt=0)
    start: str | list[str] | None = None
    ready_timeout_s: float = Field(60.0, gt=0)

    @field_validator("setup", "start", mode="before")
    @classmethod
    def _shell_lines(cls, value: Any) -> Any:
        for index, line in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(line, dict):
                raise ValueError(
                    f"entry {index + 1} is a mapping, not a command: YAML reads `word: text` as a key and a value; "
                    "put the command in quotes"
                )
        return value

    @model_validator(mode="after")
    def _one_way_in(self) -> ServerModel:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of 'command' (a stdio server) or 'url' (an HTTP server)")
        if self.command is not None and not self.command:
            raise ValueError("'command' is empty; give the program and its arguments, e.g. [python, server.py]")
        if self.headers and self.url is None:
            raise ValueError("'headers' only apply to a 'url' server")
        if self.transport and self.url is None:
            raise ValueError("'transport' only applies to a 'url' server")
        if self.start is not None and self.url is None:
            raise ValueError("'start' starts an HTTP server: give its 'url' too (e.g. http://127.0.0.1:{port}/mcp)")
        if not self.start and self.start is not None:
            raise ValueError("'start' is empty; give the command that starts the HTTP server")
        start = " ".join([self.start] if isinstance(self.start, str) else self.start or [])
        elsewhere = [*self.env.values(), *self.headers.values()]
        if self.start is None and (PORT in (self.url or "") or any(PORT in v for v in elsewhere)):
            raise ValueError("'{port}' is a port toolselect picks for 'start': add 'start', or write the port")
        if self.start is not None and PORT in (self.url or "") and PORT not in start + " ".join(self.env.values()):
            raise ValueError(
                "the server started by 'start' is never told '{port}': put it in 'start' (--port {port}) or in "
                "'env' (PORT: '{port}')"
            )
        setup = [self.setup] if isinstance(self.setup, str) else self.setup or []
        if any(not command.strip() for command in setup):
            raise ValueError("'setup' has an empty command")
        return self


PORT = "{port}"  # in server.start, url, env and headers: a free port picked for each side


@dataclass(frozen=True)
class ServerSpec:
    """How to reach a live MCP server, and how to build and start it first."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    transport: str | None = None  # None: streamable HTTP, or SSE when the URL path ends in /sse
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: Path | None = None
    startup_timeout_s: float = 30.0
    setup: tuple[str, ...] = ()  # shell commands, run in `cwd` before the server starts
    setup_inputs: tuple[str, ...] = ()  # globs whose files decide whether a local setup runs again
    setup_skip: Literal["never", "always", "unchanged"] = "never"  # the head: --no-setup, or a local run
    setup_stamp: Path | None = None  # where a local run notes the inputs its setup last succeeded on
    setup_timeout_s: float = 900.0
    start: str | tuple[str, ...] | None = None  # starts the HTTP server at `url` (a shell line, or argv)
    ready_timeout_s: float = 60.0
    place: str = ""  # `file:line: ` of the config's server: section, for messages
    # the command and URL as the config wrote them (`${VAR}` unexpanded), for messages and reports
    shown_command: tuple[str, ...] | None = None
    shown_url: str | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)  # `${VAR}` values and header values

    def describe(self) -> str:
        """For reports and messages: the command or URL as written in the config (never what `${VAR}`
        expanded to), the URL without its query, user info or secret-looking path segments."""
        if self.command:
            return describe_server(self.shown_command or self.command, None, None)
        return describe_server(None, self.shown_url or self.url, self.transport)

    def scrub(self, text: str) -> str:
        """`text` (e.g. an error with the server's last words) without any of the secrets."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text


def describe_server(command: Any, url: str | None, transport: str | None) -> str:
    if command:
        return "stdio: " + " ".join(str(part) for part in command)
    url = url or ""
    kind = transport or ("sse" if url.split("?")[0].rstrip("/").endswith("/sse") else "streamable-http")
    return f"{kind}: {public_url(url)}"


class DistractorServer(Authored):
    """A distractor source that is an MCP server: listed with tools/list only, never called."""

    command: list[str] | None = None
    url: str | None = None
    name: str | None = None  # the server's label in prefixes and reports (default: from the command or URL)


GENERIC = {"server", "main", "index", "app", "run", "__main__", "cli", "mcp"}  # names no user keeps


def default_server_name(command: Sequence[str] | None, url: str | None, folder: str | None) -> str:
    """The name a user most likely gives the server in their client: the program (or the script a
    runner starts) unless it is a generic one (server.py, index.js), the URL's host, else the
    project's folder."""
    from urllib.parse import urlsplit

    if command:
        runner = Path(command[0]).name in ("node", "python", "python3", "npx", "uvx", "uv", "bunx", "deno")
        words = [w for w in command[1:] if not w.startswith("-") and w not in ("run", "tool", "x")]
        first = (words[0] if words else "") if runner else command[0]
        stem = Path(first.rstrip("/").rsplit("/", 1)[-1].split("@")[0]).stem
        if stem and stem not in GENERIC:
            return stem
    if url:
        host = urlsplit(url).hostname or ""
        labels = [w for w in host.split(".")[:-1] if w not in GENERIC and w not in ("api", "www")]
        if labels and not host.replace(".", "").isdigit():
            return labels[0]
    return folder or "server"
