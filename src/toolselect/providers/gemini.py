"""`gemini`: Google's Gemini API (`models/<model>:generateContent`, v1beta) through the official SDK,
google-genai (one async client per run, on the run's HTTP client).

Tools go as one `functionDeclarations` list (`name`, `description`, `parametersJsonSchema`: the MCP
input schema as it is) with function calling `AUTO`; the SDK's automatic function calling is off (a
tool is never run). The first `functionCall` part is the pick (all are kept, for trajectories); a
trajectory's earlier turns go back as the model's own parts (its thought signatures with them, which
Gemini 3 wants back) and one user content of `functionResponse` parts. `temperature`, `seed` and the
output cap go in `generationConfig`, `params` over the request's fields. Errors come back as
`{"error": {"code", "message", "status"}}`; google-genai raises them as ClientError/ServerError, read
here like the other SDKs' (the status, retry-after, the API's words).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InfraError
from ..pick import Pick, ToolCall, Usage
from . import Request, SampleError
from .api import SdkProvider, deadline

if TYPE_CHECKING:
    from ..throttle import Throttle
    from .call import ModelCall

KEY_VARS = "GEMINI_API_KEY (or GOOGLE_API_KEY)"
AUTO = {"functionCallingConfig": {"mode": "AUTO"}}
RETRIED = [408, 500, 502, 503, 504]
REFUSED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
}  # the SDK retries these; a 429 waits as every provider's does (patiently)


class ApiStatus(Exception):
    """A google-genai APIError as the shared error handling reads every SDK's: its status, its
    response (headers: retry-after), its body and its words."""

    def __init__(self, error: Any) -> None:
        super().__init__(getattr(error, "message", None) or str(error))
        self.status_code = getattr(error, "code", None)
        self.response = getattr(error, "response", None)
        self.body = getattr(error, "details", None)
        self.message = str(getattr(error, "message", "") or error)


class GeminiProvider(SdkProvider):
    name = "gemini"
    sdk = "google.genai"
    endpoint_variable = "GOOGLE_GEMINI_BASE_URL"
    default_endpoint = "https://generativelanguage.googleapis.com"

    _http: Any = None

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "tool_config": AUTO, "max_tokens": self.call.max_tokens}

    def connect(self) -> None:
        import httpx2
        from google import genai
        from google.genai import types

        key = self.key("GEMINI_API_KEY") or self.key("GOOGLE_API_KEY")
        if key is None:
            raise InfraError(f"no Gemini API key: set {KEY_VARS}, or run offline with --provider bm25")
        retries = self.call.max_retries
        self._http = self.http_client(httpx2.AsyncClient)  # the SDK leaves a client it was given open: closed here
        options = types.HttpOptions(
            base_url=self.endpoint,
            api_version="v1beta",
            timeout=int(deadline(self.call) * 1000),
            retry_options=types.HttpRetryOptions(attempts=retries + 1, http_status_codes=RETRIED) if retries else None,
            httpx_async_client=self._http,
        )
        self.sdk_client = genai.Client(api_key=key, vertexai=False, http_options=options)
        self.reach()

    async def aclose(self) -> None:
        if self.sdk_client is not None:
            await self.sdk_client.aio.aclose()
            await self._http.aclose()

    def body(self, request: Request) -> dict[str, Any]:
        """The request as Gemini's JSON (camelCase, as on the wire)."""
        s = self.call
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.input_schema}
            for t in request.tools
        ]
        generation: dict[str, Any] = {"maxOutputTokens": s.max_tokens}
        if s.temperature is not None:
            generation["temperature"] = s.temperature
        if s.seed is not None:
            generation["seed"] = s.seed
        body: dict[str, Any] = {
            "contents": contents(request),
            "tools": [{"functionDeclarations": declarations}],
            "toolConfig": AUTO,
            "generationConfig": generation,
        }
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        return body | dict(s.params)

    async def pick(self, request: Request) -> Pick:
        body = self.body(request)
        started = time.perf_counter()
        response = await self._send(self.model, body)
        picked = self._reading(response, (time.perf_counter() - started) * 1000)
        if (u := picked.usage) is not None:
            self.throttle.succeeded(u.prompt_tokens + (u.output_tokens or 0))
        return picked

    async def write(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> str:
        """A text (or, with `schema`, JSON held to it) for the judge and the rewriter."""
        generation: dict[str, Any] = {"maxOutputTokens": self.call.max_tokens}
        if schema is not None:
            generation |= {"responseMimeType": "application/json", "responseJsonSchema": schema}
        body = {
            "contents": [{"role": "user", "parts": [{"text": prompt}]}],
            "systemInstruction": {"parts": [{"text": system}]},
            "generationConfig": generation,
        }
        response = await self._send(self.model, body)
        return "".join(p.text or "" for p in _parts(response) if not p.thought)

    async def forward(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """A driven client's request (Gemini CLI's `streamGenerateContent` body) on the run's model,
        answered whole as Gemini's JSON (the endpoint streams it to the client)."""
        response = await self._send(self.model, body)
        answer: dict[str, Any] = response.model_dump(mode="json", by_alias=True, exclude_none=True)
        return answer

    async def _send(self, model: str, body: dict[str, Any]) -> Any:
        """`body` (Gemini's JSON) through the SDK: its contents and config as the SDK's own types."""
        import httpx2
        from google.genai import errors, types

        config = {k: v for k, v in body.items() if k not in ("contents", "generationConfig")}
        config |= dict(body.get("generationConfig") or {})
        config["automaticFunctionCalling"] = {"disable": True}
        try:
            said = [types.Content.model_validate(c) for c in body.get("contents") or []]
            settings = types.GenerateContentConfig.model_validate(config)
        except ValueError as exc:
            raise SampleError(f"the request doesn't read as Gemini's: {str(exc)[:300]}") from None
        send = self.sdk_client.aio.models.generate_content

        async def once() -> Any:
            for attempt in range(self.call.max_retries + 1):  # its retries cover statuses; a dropped connection too
                try:
                    return await send(model=model, contents=said, config=settings)
                except errors.APIError as exc:
                    raise ApiStatus(exc) from exc
                except httpx2.TransportError:
                    if attempt == self.call.max_retries:
                        raise
                    await asyncio.sleep(min(8.0, 0.5 * 2**attempt) * (0.5 + random.random()))
            raise AssertionError("unreachable")

        try:
            return await self.patiently(once)
        except Exception as exc:  # noqa: BLE001 - sorted into fatal vs this-sample-only
            raise self.sort_error(exc) from None

    def _reading(self, response: Any, latency_ms: float | None) -> Pick:
        try:
            return self._read(response, latency_ms)
        except (AttributeError, TypeError, IndexError, KeyError) as exc:
            raise SampleError(
                f"unexpected answer from {self.shown_endpoint}: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    def _read(self, response: Any, latency_ms: float | None) -> Pick:
        parts = _parts(response)
        calls = [
            ToolCall(str(p.function_call.name), dict(p.function_call.args or {})) for p in parts if p.function_call
        ]
        text = "".join(p.text or "" for p in parts if p.text and not p.thought)
        u = response.usage_metadata
        cached = (u.cached_content_token_count or 0) if u else 0
        usage = Usage(
            ((u.prompt_token_count or 0) - cached) if u else 0,
            ((u.candidates_token_count or 0) + (u.thoughts_token_count or 0)) if u else 0,
            0,
            cached,
        )
        candidate = (response.candidates or [None])[0]
        reason = getattr(getattr(candidate, "finish_reason", None), "name", None)
        blocked = getattr(getattr(response, "prompt_feedback", None), "block_reason", None)
        if reason in REFUSED or blocked is not None:  # the API would not answer: a refusal, as the others say
            reason = "refusal"
        reason = reason.lower() if reason else None  # STOP, MAX_TOKENS: stop, max_tokens, as Anthropic says
        replay = tuple(p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in parts)
        first = calls[0] if calls else None
        return Pick(
            tool=first.tool if first else None,
            args=first.args if first else None,
            text=text,
            calls=len(calls),
            latency_ms=latency_ms,
            usage=usage,
            stop_reason=reason,
            tool_calls=tuple(calls),
            replay=replay,
        )


def _parts(response: Any) -> list[Any]:
    candidate = (response.candidates or [None])[0]
    content = getattr(candidate, "content", None)
    return list(getattr(content, "parts", None) or [])


def contents(request: Request) -> list[dict[str, Any]]:
    """The prompt, then each earlier turn: the model's own parts (as it sent them, thought signatures
    and all; else its text and calls), and one user content of a `functionResponse` per call."""
    out: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": request.prompt}]}]
    for n, turn in enumerate(request.history):
        ids = turn.call_ids(n)
        parts = [dict(p) for p in turn.replay] if turn.replay else []
        if not parts:
            parts += [{"text": turn.text}] if turn.text.strip() else []
            parts += [
                {"functionCall": {"id": i, "name": c.tool, "args": c.args if isinstance(c.args, dict) else {}}}
                for i, c in zip(ids, turn.calls, strict=True)
            ]
        out.append({"role": "model", "parts": parts})
        answered = []
        for i, call, stub in zip(ids, turn.calls, turn.stubs, strict=True):
            said = {"error": stub.error} if stub.error is not None else {"output": stub.result}
            answered.append({"functionResponse": {"id": i, "name": call.tool, "response": said}})
        out.append({"role": "user", "parts": answered})
    return out


def make(call: ModelCall, throttle: Throttle, environ: Mapping[str, str]) -> GeminiProvider:
    return GeminiProvider(call, throttle, environ)
