"""The local model endpoint a driven client talks to, in its own API's wire format (Anthropic Messages
or OpenAI Responses, streamed when asked: wires.py): each of its requests goes to the run's provider
through the answer cache; its side requests that decide no pick (a title, a token count) are answered
here; and the conversation ends at the first call of a tool that is not the client's search — the
server's tool is the pick, a built-in is a steal — answered with a final text instead, so no tool is
ever run.

One endpoint serves every client process of a run; each process gets a key of its own (its session),
which is how a request finds its sample. The real API keys never reach a client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..pick import Search, ToolCall, Usage
from .wires import Anthropic, Gemini, Responses, Wire

ENDED = "(toolselect recorded the tool this answer calls; nothing was run.)"
MAX_TURNS = 12  # requests one sample may make before the endpoint ends it


@dataclass
class Session:
    """One sample's conversation as the endpoint saw it."""

    key: str
    sample: int = 0  # which sample of its case: each is asked anew (and cached apart)
    turns: int = 0
    call: ToolCall | None = None  # the first call that ended it (a server tool, or a built-in)
    text: str = ""  # the last answer's text
    searched: list[Search] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: Usage(0, 0))
    cached: bool = True  # every answer came from the answer cache
    error: str | None = None
    stop_reason: str | None = None
    started: float = field(default_factory=time.perf_counter)
    requests: list[dict[str, Any]] = field(default_factory=list)  # the client's own request bodies (the last few)
    seen: set[str] = field(default_factory=set)  # the client's own searches counted already (by call id)
    volatile: tuple[str, ...] = ()  # what differs on every run of the client (its folder's name): not in the key
    expect: str = ""  # what its first request must name (the server's prefix): else the server never came up


class Forwards(Protocol):
    """Who answers a client's requests: the run's provider (through its answer cache), or a recorder."""

    async def forward_cached(
        self, body: dict[str, Any], headers: dict[str, str], keyed: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any] | None, bool]: ...


class Endpoint:
    """Anthropic's Messages API on 127.0.0.1 for driven clients. `ends(name)`: whether a call of the
    tool named so ends the conversation (every tool but the client's own search)."""

    def __init__(
        self, provider: Forwards, ends: Callable[[str], bool], search_tool: str | None = None, keep_requests: int = 2
    ) -> None:
        self.provider, self.ends, self.keep_requests = provider, ends, keep_requests
        self.search_tool = search_tool  # the client's own search: what it found comes back in a tool result
        self.sessions: dict[str, Session] = {}
        self.url = ""
        self.socket = ""  # the same, on a Unix socket: what a client in a network of its own reaches (netns.py)
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._folder = ""

    def open(self, sample: int = 0) -> Session:
        session = Session("toolselect-" + secrets.token_hex(12), sample)
        self.sessions[session.key] = session
        return session

    def close(self, session: Session) -> None:
        self.sessions.pop(session.key, None)

    async def start(self) -> str:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(
            routes=[
                Route("/", self._alive, methods=["GET", "HEAD"]),
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count, methods=["POST"]),
                Route("/v1/responses", self._responses, methods=["POST"]),
                Route("/v1beta/models/{call:path}", self._gemini, methods=["POST"]),
            ]
        )
        config = uvicorn.Config(app, log_level="error", lifespan="off", access_log=False)
        # toolselect's alone (0700), and short: a Unix socket's path holds at most 107 bytes (a long TMPDIR)
        self._folder = tempfile.mkdtemp(prefix="ts-", dir="/tmp" if os.path.isdir("/tmp") else None)
        self.socket = os.path.join(self._folder, "api")
        on_port = socket.create_server(("127.0.0.1", 0))
        on_file = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        on_file.bind(self.socket)
        on_file.listen(64)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[on_port, on_file]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # it failed to start: say why
            await asyncio.sleep(0.01)
        self.url = f"http://127.0.0.1:{on_port.getsockname()[1]}"
        return self.url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)

    # ------------------------------------------------------------------ the routes

    async def _alive(self, request: Any) -> Any:
        from starlette.responses import Response

        return Response(status_code=200)

    async def _count(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        body = await request.body()
        return JSONResponse({"input_tokens": max(1, len(body) // 4)})

    async def _messages(self, request: Any) -> Any:
        return await self._route(request, Anthropic)

    async def _responses(self, request: Any) -> Any:
        return await self._route(request, Responses)

    async def _gemini(self, request: Any) -> Any:
        return await self._route(request, Gemini, stream=":streamGenerateContent" in request.url.path)

    async def _route(self, request: Any, wire: Wire, stream: bool | None = None) -> Any:
        from starlette.responses import JSONResponse, Response

        key = (
            request.headers.get("x-api-key")
            or request.headers.get("x-goog-api-key")
            or request.headers.get("authorization", "").removeprefix("Bearer ")
        )
        session = self.sessions.get(key.strip())
        if session is None:
            return JSONResponse(wire.error("authentication_error", "unknown key"), status_code=401)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse(wire.error("invalid_request_error", "the body is not JSON"), status_code=400)
        headers = {k: v for k, v in request.headers.items() if k in wire.headers}
        answer = await self._answer(session, body, headers, wire)
        if body.get("stream") if stream is None else stream:
            return Response(wire.events(answer), media_type="text/event-stream")
        return JSONResponse(answer)

    async def _answer(
        self, session: Session, body: dict[str, Any], headers: dict[str, str], wire: Wire
    ) -> dict[str, Any]:
        if wire.side(body):  # a side request (a title, a summary): it decides no pick
            return wire.ended(body, "")
        if session.call is not None or session.turns >= MAX_TURNS or session.error is not None:
            return wire.ended(body, ENDED)  # the sample is decided: whatever the client asks next
        session.turns += 1
        if session.turns == 1 and session.expect and session.expect not in json.dumps(body, ensure_ascii=False):
            session.error = (
                f"its request names none of the server's tools ({session.expect}…): the server never came up"
            )
            return wire.ended(body, ENDED)
        if self.search_tool is not None:  # the searches it ran itself since its last request
            for at, search in wire.client_searches(body, self.search_tool):
                if at not in session.seen:
                    session.seen.add(at)
                    session.searched.append(search)
        session.requests = [*session.requests[-(self.keep_requests - 1) :], body] if self.keep_requests else []
        try:
            answer, cached = await self.provider.forward_cached(
                body, headers, keyed(body, session.volatile) | {"sample": session.sample}
            )
        except Exception as exc:  # noqa: BLE001 - the sample fails; the client is told to stop
            session.error = str(exc) or type(exc).__name__
            return wire.ended(body, ENDED)
        if answer is None:  # --cache-only and not cached
            session.error = "not in the answer cache"
            return wire.ended(body, ENDED)
        session.cached = session.cached and cached
        read = wire.read(answer)
        session.searched += read.searched
        session.text, session.stop_reason = read.text, read.stop_reason
        session.usage = session.usage + read.usage
        if read.calls and self.ends(read.calls[0].tool):
            session.call = read.calls[0]
            return wire.ended(body, ENDED)
        return answer  # text (the end), or the client's own search: it runs it and asks again


OWN = ("metadata", "prompt_cache_key", "client_metadata")
NOW = re.compile(r"(<current_datetime>)[^<]*(</current_datetime>)")
SESSION = re.compile(
    r"(session-state/)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)  # ids a client makes up on every run
SKILLS = re.compile(r"(<available_skills>)((?:\\n\s*<skill>.*?</skill>)+)", re.S)  # in the body's JSON text
SKILL = re.compile(r"\\n\s*<skill>.*?</skill>", re.S)


def keyed(body: dict[str, Any], volatile: tuple[str, ...]) -> dict[str, Any]:
    """The body as the answer cache's key reads it: without the ids the client makes up on every run
    (Claude Code's `metadata`; Codex's `prompt_cache_key`, `client_metadata`, its items' ids), with each volatile
    text (the run's folder, today's date) put as `…`, and what a client lists in no fixed order (Gemini CLI's
    skills) sorted."""
    kept = {k: v for k, v in body.items() if k not in OWN}
    if isinstance(kept.get("input"), list):  # the id Codex gives each item it sends: new on every run
        kept["input"] = [{k: v for k, v in i.items() if k != "id"} if isinstance(i, dict) else i for i in kept["input"]]
    text = json.dumps(kept, ensure_ascii=False)
    for part in volatile:
        text = text.replace(part, "…")
    text = NOW.sub(r"\1…\2", text)  # the time a client puts in its prompt (Copilot CLI's), its session's folder
    text = SESSION.sub(r"\1…", text)
    # the skills Gemini CLI lists in its prompt come in the order its loader finished them: sorted here
    text = SKILLS.sub(lambda m: m.group(1) + "".join(sorted(SKILL.findall(m.group(2)))), text)
    out: dict[str, Any] = json.loads(text)
    return out
