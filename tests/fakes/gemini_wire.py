"""Google's Gemini API as the fake model API speaks it: `POST /v1beta/models/<model>:generateContent`
(and `:streamGenerateContent?alt=sse`, each chunk a whole `GenerateContentResponse` as `data:`), the
key in `x-goog-api-key`, tools as `functionDeclarations` (`parametersJsonSchema`, as google-genai
and Gemini CLI send it; `parameters` too), a conversation as `contents` of `user` and `model` parts
(`functionCall`, `functionResponse`), and errors as `{"error": {"code", "message", "status"}}`. Shapes
as google-genai 3.6.1 parses them and as Gemini CLI 0.61.0 was seen to send and accept them."""

from __future__ import annotations

import json
import re
from typing import Any

ROUTE = re.compile(r"/v1(?:beta)?/models/([^/:?]+):(generateContent|streamGenerateContent)")
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip
NOTES = ("<session_context>",)  # Gemini CLI's own note before the user's words


def route(path: str) -> tuple[str, bool] | None:
    """(the model, whether it streams) of a Gemini path, or None."""
    found = ROUTE.search(path.split("?")[0])
    return (found.group(1), found.group(2) == "streamGenerateContent") if found else None


def _texts(parts: Any) -> str:
    return "".join(
        str(p.get("text", ""))
        for p in parts or []
        if isinstance(p, dict) and "text" in p and not p.get("thought") and not str(p["text"]).startswith(NOTES)
    )


def prompt(body: dict[str, Any]) -> str:
    """The first user text (Gemini CLI's own session note aside)."""
    users = (_texts(c.get("parts")) for c in body.get("contents") or [] if c.get("role", "user") == "user")
    return next((t for t in users if t), "")


def system(body: dict[str, Any]) -> str | None:
    given = body.get("systemInstruction") or body.get("system_instruction")
    return _texts(given.get("parts")) if isinstance(given, dict) else None


def descriptions(body: dict[str, Any]) -> dict[str, str]:
    out = {}
    for tool in body.get("tools") or []:
        for spec in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            out[spec.get("name")] = spec.get("description") or ""
    return out


def history(body: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The function responses a request carries ({tool, content, error}) and the model turns that called."""
    results, turn = [], 0
    for content in body.get("contents") or []:
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model" and any("functionCall" in p for p in parts):
            turn += 1
        for p in parts:
            answered = p.get("functionResponse")
            if isinstance(answered, dict):
                said = answered.get("response") or {}
                error = "error" in said
                text = said.get("error") if error else said.get("output", said)
                content = text if isinstance(text, str) else json.dumps(text)
                results.append({"tool": answered.get("name", ""), "content": content, "error": error})
    return results, turn


def signatures(body: dict[str, Any]) -> list[str]:
    return [
        str(p.get("thoughtSignature") or p.get("thought_signature"))
        for c in body.get("contents") or []
        if c.get("role") == "model"
        for p in c.get("parts") or []
        if isinstance(p, dict) and (p.get("thoughtSignature") or p.get("thought_signature"))
    ]


def tool_choice(body: dict[str, Any]) -> str | None:
    """Its function calling mode, as the other APIs name it (AUTO: "auto")."""
    mode = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode")
    return str(mode).lower() if mode else None


def render(model: str, answer: dict[str, Any], calls: list[dict[str, Any]], arguments: Any, n: int, prompt_tokens: int,
           output_tokens: int) -> dict[str, Any]:  # fmt: skip
    parts: list[dict[str, Any]] = []
    if answer.get("thinking"):
        parts.append({"text": answer["thinking"], "thought": True, "thoughtSignature": f"c2lnLXtu{n:04d}"})
    if answer.get("text"):
        parts.append({"text": answer["text"]})
    parts += [{"functionCall": {"name": c["tool"], "args": arguments(c)}} for c in calls]
    finish = "MAX_TOKENS" if answer.get("truncated") else "STOP"
    if answer.get("refusal"):  # blocked: no content, a safety stop
        parts, finish = [], "SAFETY"
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": prompt_tokens + output_tokens,
        },
        "modelVersion": model,
        "responseId": f"resp-{n}",
    }


def error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}}


def events(payload: dict[str, Any]) -> bytes:
    """One streamed chunk holding the whole answer, as `data:` and a blank line."""
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()
