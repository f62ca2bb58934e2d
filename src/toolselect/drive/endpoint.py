"""The local model endpoint a driven client talks to, in its own API's wire format (Anthropic Messages,
streamed when asked): each of its requests goes to the run's provider through the answer cache; its
side requests that decide no pick (a title, a token count) are answered here; and the conversation
ends at the first call of a tool that is not the client's search — the server's tool is the pick, a
built-in is a steal — answered with a final text instead, so no tool is ever run.

One endpoint serves every client process of a run; each process gets a key of its own (its session),
which is how a request finds its sample. The real API keys never reach a client."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..pick import Search, ToolCall, Usage
from ..providers.search import anthropic_searches
from .stream import anthropic_events

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
    volatile: tuple[str, ...] = ()  # what differs on every run of the client (its folder's name): not in the key


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
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

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
            ]
        )
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # it failed to start: say why
            await asyncio.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task

    # ------------------------------------------------------------------ the routes

    async def _alive(self, request: Any) -> Any:
        from starlette.responses import Response

        return Response(status_code=200)

    async def _count(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        body = await request.body()
        return JSONResponse({"input_tokens": max(1, len(body) // 4)})

    async def _messages(self, request: Any) -> Any:
        from starlette.responses import JSONResponse, Response

        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        session = self.sessions.get(key.strip())
        if session is None:
            return JSONResponse(_error("authentication_error", "unknown key"), status_code=401)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse(_error("invalid_request_error", "the body is not JSON"), status_code=400)
        answer = await self._answer(session, body, {k: v for k, v in request.headers.items() if k == "anthropic-beta"})
        if body.get("stream"):
            return Response(anthropic_events(answer), media_type="text/event-stream")
        return JSONResponse(answer)

    async def _answer(self, session: Session, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        if not body.get("tools"):  # a side request (a title, a summary): it decides no pick
            return _message(body, "", "end_turn")
        if session.call is not None or session.turns >= MAX_TURNS or session.error is not None:
            return _message(body, ENDED, "end_turn")  # the sample is decided: whatever the client asks next
        session.turns += 1
        if self.search_tool is not None:
            session.searched += client_searches(body, self.search_tool)
        session.requests = [*session.requests[-(self.keep_requests - 1) :], body] if self.keep_requests else []
        try:
            answer, cached = await self.provider.forward_cached(
                body, headers, keyed(body, session.volatile) | {"sample": session.sample}
            )
        except Exception as exc:  # noqa: BLE001 - the sample fails; the client is told to stop
            session.error = str(exc) or type(exc).__name__
            return _message(body, ENDED, "end_turn")
        if answer is None:  # --cache-only and not cached
            session.error = "not in the answer cache"
            return _message(body, ENDED, "end_turn")
        session.cached = session.cached and cached
        blocks = list(answer.get("content") or [])
        found, _ = anthropic_searches(blocks)
        session.searched += found
        session.text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        session.stop_reason = answer.get("stop_reason")
        u = answer.get("usage") or {}
        session.usage = session.usage + Usage(
            u.get("input_tokens") or 0,
            u.get("output_tokens") or 0,
            u.get("cache_creation_input_tokens") or 0,
            u.get("cache_read_input_tokens") or 0,
        )
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        if uses and self.ends(str(uses[0].get("name"))):
            first = uses[0]
            session.call = ToolCall(str(first.get("name")), first.get("input"))
            return _message(body, ENDED, "end_turn")
        return answer  # text (the end), or the client's own search: it runs it and asks again


def keyed(body: dict[str, Any], volatile: tuple[str, ...]) -> dict[str, Any]:
    """The body as the answer cache's key reads it: without its `metadata` (a device and session id the
    client makes up on every run) and with each volatile text (the run's folder) put as `…`."""
    text = json.dumps({k: v for k, v in body.items() if k != "metadata"}, ensure_ascii=False)
    for part in volatile:
        text = text.replace(part, "…")
    kept: dict[str, Any] = json.loads(text)
    return kept


def client_searches(body: dict[str, Any], search_tool: str) -> list[Search]:
    """The client's own searches this request answers: its last assistant turn's calls of the search
    tool, and the `tool_reference`s its tool results carry back (the tools the search loaded)."""
    messages = body.get("messages") or []
    if len(messages) < 2 or not isinstance(messages[-1].get("content"), list):
        return []
    asked = messages[-2].get("content") if isinstance(messages[-2].get("content"), list) else []
    queries = {
        str(b.get("id")): str((b.get("input") or {}).get("query", ""))
        for b in asked
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == search_tool
    }
    out = []
    for block in messages[-1]["content"]:
        if not isinstance(block, dict) or block.get("type") != "tool_result" or block.get("tool_use_id") not in queries:
            continue
        inner = block.get("content")
        parts: list[Any] = inner if isinstance(inner, list) else []
        found = [str(p.get("tool_name")) for p in parts if isinstance(p, dict) and p.get("type") == "tool_reference"]
        out.append(Search(queries[str(block["tool_use_id"])][:500], tuple(found)))
    return out


def _message(body: dict[str, Any], text: str, stop: str) -> dict[str, Any]:
    return {
        "id": "msg_toolselect_" + secrets.token_hex(6),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
