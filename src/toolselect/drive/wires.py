"""The model APIs a driven client speaks, as the endpoint reads and writes them: Anthropic Messages
(Claude Code), OpenAI Responses (Codex) and Gemini's generateContent (Gemini CLI). For each: whether
a request is a side request that decides no pick, what an answer says (its text, stop, usage, tool
calls, the searches the API ran), the searches the client ran itself (their results come back in its
next request), the final answer that ends a sample, its stream and its error body. Pure: dictionaries
in, dictionaries out."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from ..pick import Search, ToolCall, Usage
from ..providers.search import anthropic_searches, responses_searches
from .stream import anthropic_events, responses_events


@dataclass(frozen=True)
class Read:
    """What one answer of the model says."""

    text: str
    stop_reason: str | None
    usage: Usage
    calls: list[ToolCall] = field(default_factory=list)  # in order; a namespaced call as `<namespace>__<name>`
    searched: list[Search] = field(default_factory=list)  # the API's own searches (hosted)


class Anthropic:
    """Anthropic's Messages API (`POST /v1/messages`)."""

    name = "anthropic"
    headers = ("anthropic-beta",)  # the client's headers that reach the model (and the answer cache's key)

    @staticmethod
    def side(body: dict[str, Any]) -> bool:
        return not body.get("tools")  # a title, a summary: no tools, no pick

    @staticmethod
    def read(answer: dict[str, Any]) -> Read:
        blocks = list(answer.get("content") or [])
        found, _ = anthropic_searches(blocks)
        u = answer.get("usage") or {}
        usage = Usage(
            u.get("input_tokens") or 0,
            u.get("output_tokens") or 0,
            u.get("cache_creation_input_tokens") or 0,
            u.get("cache_read_input_tokens") or 0,
        )
        calls = [ToolCall(str(b.get("name")), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        return Read(text, answer.get("stop_reason"), usage, calls, list(found))

    @staticmethod
    def client_searches(body: dict[str, Any], search_tool: str) -> list[tuple[str, Search]]:
        """The client's own searches a request carries back: each call of its search tool (by id) and
        the `tool_reference`s its result holds (the tools the search loaded)."""
        queries: dict[str, str] = {}
        out = []
        for message in body.get("messages") or []:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and block.get("name") == search_tool:
                    queries[str(block.get("id"))] = str((block.get("input") or {}).get("query", ""))
                elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in queries:
                    inner = block.get("content")
                    parts: list[Any] = inner if isinstance(inner, list) else []
                    found = [
                        str(p.get("tool_name"))
                        for p in parts
                        if isinstance(p, dict) and p.get("type") == "tool_reference"
                    ]
                    at = str(block["tool_use_id"])
                    out.append((at, Search(queries[at][:500], tuple(found))))
        return out

    @staticmethod
    def ended(body: dict[str, Any], text: str) -> dict[str, Any]:
        return {
            "id": "msg_toolselect_" + secrets.token_hex(6),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }

    @staticmethod
    def events(answer: dict[str, Any]) -> bytes:
        return anthropic_events(answer)

    @staticmethod
    def error(kind: str, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": kind, "message": message}}


class Responses:
    """OpenAI's Responses API (`POST /v1/responses`)."""

    name = "responses"
    headers: tuple[str, ...] = ()

    @staticmethod
    def side(body: dict[str, Any]) -> bool:
        return not body.get("tools")

    @staticmethod
    def read(answer: dict[str, Any]) -> Read:
        items = list(answer.get("output") or [])
        found, _ = responses_searches(items)
        u = answer.get("usage") or {}
        cached = (u.get("input_tokens_details") or {}).get("cached_tokens") or 0
        usage = Usage((u.get("input_tokens") or 0) - cached, u.get("output_tokens") or 0, 0, cached)
        calls = []
        for item in items:
            kind = item.get("type")
            if kind == "function_call":
                name = str(item.get("name"))
                name = f"{item['namespace']}__{name}" if item.get("namespace") else name
                calls.append(ToolCall(name, _arguments(item.get("arguments"))))
            elif kind == "custom_tool_call":
                calls.append(ToolCall(str(item.get("name")), {"input": item.get("input")}))
            elif kind == "tool_search_call" and item.get("execution") == "client":
                calls.append(ToolCall("tool_search", _arguments(item.get("arguments"))))
        text = "".join(
            str(part.get("text", ""))
            for item in items
            if item.get("type") == "message"
            for part in item.get("content") or []
            if part.get("type") == "output_text"
        )
        stop = (answer.get("incomplete_details") or {}).get("reason") or answer.get("status")
        return Read(text, stop, usage, calls, list(found))

    @staticmethod
    def client_searches(body: dict[str, Any], search_tool: str) -> list[tuple[str, Search]]:
        """The searches the client ran itself (`tool_search_call` with `execution: client`), each with
        the functions its `tool_search_output` loaded, as `<namespace>__<name>`."""
        given = body.get("input")
        items = [i for i in given if isinstance(i, dict)] if isinstance(given, list) else []
        queries = {
            str(i.get("call_id")): str((_arguments(i.get("arguments")) or {}).get("query", ""))
            for i in items
            if i.get("type") == "tool_search_call" and i.get("execution") == "client"
        }
        out = []
        for item in items:
            at = str(item.get("call_id"))
            if item.get("type") != "tool_search_output" or at not in queries:
                continue
            found = []
            for tool in item.get("tools") or []:
                if tool.get("type") == "namespace":
                    found += [f"{tool.get('name')}__{t.get('name')}" for t in tool.get("tools") or []]
                elif tool.get("name"):
                    found.append(str(tool.get("name")))
            out.append((at, Search(queries[at][:500], tuple(found))))
        return out

    @staticmethod
    def ended(body: dict[str, Any], text: str) -> dict[str, Any]:
        message = {
            "type": "message",
            "id": "msg_toolselect_" + secrets.token_hex(6),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}] if text else [],
        }
        return {
            "id": "resp_toolselect_" + secrets.token_hex(6),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model", ""),
            "output": [message],
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": [],
            "usage": {
                "input_tokens": 0,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 0,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 0,
            },
        }

    @staticmethod
    def events(answer: dict[str, Any]) -> bytes:
        return responses_events(answer)

    @staticmethod
    def error(kind: str, message: str) -> dict[str, Any]:
        return {"error": {"type": kind, "message": message, "code": None, "param": None}}


class Gemini:
    """Google's Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`)."""

    name = "gemini"
    headers: tuple[str, ...] = ()

    @staticmethod
    def side(body: dict[str, Any]) -> bool:
        return not any(t.get("functionDeclarations") or t.get("function_declarations") for t in body.get("tools") or [])

    @staticmethod
    def read(answer: dict[str, Any]) -> Read:
        candidate = (answer.get("candidates") or [{}])[0]
        parts = [p for p in (candidate.get("content") or {}).get("parts") or [] if isinstance(p, dict)]
        calls = [
            ToolCall(str(p["functionCall"].get("name")), p["functionCall"].get("args") or {})
            for p in parts
            if isinstance(p.get("functionCall"), dict)
        ]
        text = "".join(str(p.get("text", "")) for p in parts if "text" in p and not p.get("thought"))
        u = answer.get("usageMetadata") or {}
        cached = u.get("cachedContentTokenCount") or 0
        usage = Usage(
            (u.get("promptTokenCount") or 0) - cached,
            (u.get("candidatesTokenCount") or 0) + (u.get("thoughtsTokenCount") or 0),
            0,
            cached,
        )
        stop = candidate.get("finishReason")
        return Read(text, str(stop).lower() if stop else None, usage, calls)

    @staticmethod
    def client_searches(body: dict[str, Any], search_tool: str) -> list[tuple[str, Search]]:
        return []  # Gemini CLI sends every tool: no search of its own

    @staticmethod
    def ended(body: dict[str, Any], text: str) -> dict[str, Any]:
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0},
        }

    @staticmethod
    def events(answer: dict[str, Any]) -> bytes:
        return f"data: {json.dumps(answer)}\r\n\r\n".encode()

    @staticmethod
    def error(kind: str, message: str) -> dict[str, Any]:
        code, status = {"authentication_error": (401, "UNAUTHENTICATED")}.get(kind, (400, "INVALID_ARGUMENT"))
        return {"error": {"code": code, "message": message, "status": status}}


Wire = type[Anthropic] | type[Responses] | type[Gemini]


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments
