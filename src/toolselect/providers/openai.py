"""`openai` (Chat Completions) and `openai-responses` (the Responses API) through the official SDK.

Any OpenAI-compatible server works through `base_url` (config) or `OPENAI_BASE_URL`. The first
tool call is the pick (the legacy `function_call` field too); argument text that is not valid JSON,
or carries trailing garbage, is kept raw and scored ARG-INVALID.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InfraError
from ..pick import Pick, Usage
from ..scoring import parse_args
from . import Request, SampleError
from .api import SdkProvider, timeout

if TYPE_CHECKING:
    from ..config import Settings
    from ..pool import Pool

NO_KEY = (
    "no OpenAI API key: set OPENAI_API_KEY (for a local OpenAI-compatible server that needs none, any "
    "value works), or run offline with --provider bm25"
)


class _OpenAIBase(SdkProvider):
    name = "openai"
    sdk = "openai"
    endpoint_variable = "OPENAI_BASE_URL"
    default_endpoint = "https://api.openai.com/v1"

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "tool_choice": "auto"}

    def connect(self) -> None:
        import openai

        try:
            self.client = openai.AsyncOpenAI(
                api_key=self.key("OPENAI_API_KEY"),
                base_url=self.endpoint,
                max_retries=self.settings.max_retries,
                timeout=timeout(self.settings),
                http_client=self.http_client(openai.DefaultAsyncHttpxClient),
            )
        except openai.OpenAIError:
            raise InfraError(NO_KEY) from None

    async def _ask(self, request: Request) -> Any:
        """Send the request (Chat Completions or Responses)."""
        raise NotImplementedError

    def _read(self, answer: Any, latency_ms: float) -> Pick:
        """The pick in an answer."""
        raise NotImplementedError

    async def pick(self, request: Request) -> Pick:
        started = time.perf_counter()
        try:
            answer = await self._ask(request)
        except Exception as exc:  # noqa: BLE001 - sorted into fatal vs this-sample-only
            raise self.sort_error(exc) from None
        self.pool.succeeded()
        try:
            return self._read(answer, (time.perf_counter() - started) * 1000)
        except (AttributeError, TypeError, IndexError, KeyError) as exc:  # a gateway's HTML page, a non-standard body
            raise SampleError(
                f"unexpected answer from {self.shown_endpoint}: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None


def _from_text(name: str | None, arguments: Any, **fields: Any) -> Pick:
    """Arguments as the API sent them: normally JSON text; some compatible servers send an object."""
    if isinstance(arguments, dict):
        args, raw = arguments, None
    elif arguments is None or isinstance(arguments, str):
        args, raw = parse_args(arguments or "")
    else:
        args, raw = None, json.dumps(arguments)  # not an object: kept raw, scored ARG-INVALID
    return Pick(tool=name, args=args if name else None, raw_args=raw if name else None, **fields)


class ChatProvider(_OpenAIBase):
    name = "openai"

    async def write(self, system: str, prompt: str) -> str:
        """Plain text from the model (no tools): `toolselect init --draft` uses it to write prompts."""
        try:
            completion = await self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            )
        except Exception as exc:  # noqa: BLE001
            raise self.sort_error(exc) from None
        return (completion.choices[0].message.content or "") if completion.choices else ""

    async def _ask(self, request: Request) -> Any:
        s = self.settings
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.prompt})
        kwargs: dict[str, Any] = {}
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.seed is not None:
            kwargs["seed"] = s.seed
        return await self.client.chat.completions.create(
            model=self.model,
            messages=messages,
            tools=[
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in request.tools
            ],
            tool_choice="auto",
            extra_body=dict(s.params) or None,
            **kwargs,
        )

    def _read(self, completion: Any, latency_ms: float) -> Pick:
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice else None
        usage = getattr(completion, "usage", None)
        fields: dict[str, Any] = {
            "text": (getattr(message, "content", None) or getattr(message, "refusal", None) or ""),
            "latency_ms": latency_ms,
            "usage": Usage(usage.prompt_tokens, usage.completion_tokens) if usage else None,
            "stop_reason": getattr(choice, "finish_reason", None),
        }
        calls = [c for c in (getattr(message, "tool_calls", None) or []) if getattr(c, "function", None)]
        if calls:
            first = calls[0].function
            return _from_text(first.name, first.arguments, calls=len(calls), **fields)
        legacy = getattr(message, "function_call", None)
        if legacy is not None:
            return _from_text(legacy.name, legacy.arguments, calls=1, **fields)
        return Pick(**fields)


class ResponsesProvider(_OpenAIBase):
    name = "openai-responses"

    async def write(self, system: str, prompt: str) -> str:
        """Plain text from the model (no tools): `toolselect init --draft` uses it to write prompts."""
        try:
            response = await self.client.responses.create(
                model=self.model, instructions=system, input=prompt, store=False
            )
        except Exception as exc:  # noqa: BLE001
            raise self.sort_error(exc) from None
        return response.output_text or ""

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "store": False}

    async def _ask(self, request: Request) -> Any:
        s = self.settings
        kwargs: dict[str, Any] = {}
        if request.system:
            kwargs["instructions"] = request.system
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        return await self.client.responses.create(
            model=self.model,
            input=request.prompt,
            tools=[
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in request.tools
            ],
            tool_choice="auto",
            store=False,
            extra_body=dict(s.params) or None,
            **kwargs,
        )

    def _read(self, response: Any, latency_ms: float) -> Pick:
        items = list(getattr(response, "output", None) or [])
        calls = [i for i in items if getattr(i, "type", None) == "function_call"]
        usage = getattr(response, "usage", None)
        text = "".join(
            getattr(part, "text", "")
            for item in items
            if getattr(item, "type", None) == "message"
            for part in (getattr(item, "content", None) or [])
            if getattr(part, "type", None) == "output_text"
        )
        fields: dict[str, Any] = {
            "text": text,
            "latency_ms": latency_ms,
            "usage": Usage(usage.input_tokens, usage.output_tokens) if usage else None,
            "stop_reason": getattr(response, "status", None),
        }
        if calls:
            return _from_text(calls[0].name, calls[0].arguments, calls=len(calls), **fields)
        return Pick(**fields)


def make_chat(settings: Settings, pool: Pool, environ: Mapping[str, str]) -> ChatProvider:
    return ChatProvider(settings, pool, environ)


def make_responses(settings: Settings, pool: Pool, environ: Mapping[str, str]) -> ResponsesProvider:
    return ResponsesProvider(settings, pool, environ)
