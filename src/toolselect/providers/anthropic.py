"""`anthropic`: the Messages API through the official SDK (one async client per run).

Tools go as `name`/`description`/`input_schema` with `tool_choice: auto`. The first `tool_use`
block is the pick (all of them are kept, for trajectories); a `refusal` stop is no tool. A
trajectory's earlier turns go back as the assistant's `tool_use` blocks and one user message of
`tool_result` blocks (`is_error` for a stubbed error); thinking blocks go back first, as they came
(extended thinking refuses a tool result without them). `temperature` and `params` are sent in the body
(this SDK has no temperature argument); `seed` is not an Anthropic parameter, so it is only recorded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import InfraError
from ..pick import Pick, ToolCall, Usage
from . import BatchState, Request, SampleError
from .api import SdkProvider, batch_error, timeout
from .search import anthropic_searches, anthropic_tools

if TYPE_CHECKING:
    from ..throttle import Throttle
    from .call import ModelCall

KEY_VARS = "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"
OFFLINE = "or run offline with --provider bm25"
# A prompt-cache breakpoint: the request up to here (tools → system → messages) is cached for five
# minutes, each read refreshing it. At most four per request; toolselect sets up to three.
BREAKPOINT = {"cache_control": {"type": "ephemeral"}}
T = TypeVar("T")


class AnthropicProvider(SdkProvider):
    name = "anthropic"
    sdk = "anthropic"
    endpoint_variable = "ANTHROPIC_BASE_URL"
    default_endpoint = "https://api.anthropic.com"

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "tool_choice": {"type": "auto"}, "max_tokens": self.call.max_tokens}

    def connect(self) -> None:
        import anthropic

        try:
            client = anthropic.AsyncAnthropic(
                api_key=self.key("ANTHROPIC_API_KEY"),
                auth_token=self.key("ANTHROPIC_AUTH_TOKEN"),
                base_url=self.endpoint,
                max_retries=self.call.max_retries,
                timeout=timeout(self.call),
                http_client=self.http_client(anthropic.DefaultAsyncHttpxClient),
            )
        except anthropic.AnthropicError as exc:  # e.g. a configured profile that can't be read
            raise InfraError(f"anthropic: {exc}", hint=f"set {KEY_VARS}, {OFFLINE}") from None
        if client.api_key is None and client.auth_token is None and client.credentials is None:
            raise InfraError(f"no Anthropic API key: set {KEY_VARS}, {OFFLINE}")
        self.reach()
        self.sdk_client = client

    def params(self, request: Request) -> dict[str, Any]:
        """The request's whole body, as a synchronous request sends it and a batch carries it."""
        s = self.call
        cached = s.prompt_cache
        tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools]
        if request.search is not None:  # deferred behind the API's tool search, but the eager ones
            tools = anthropic_tools(tools, request.search)
        loaded = [t for t in tools if not t.get("defer_loading")]
        if cached and loaded:  # the tool list is the prefix every request of this order shares
            loaded[-1] |= BREAKPOINT
        body: dict[str, Any] = {"model": self.model, "max_tokens": s.max_tokens, "messages": messages(request, cached)}
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, **BREAKPOINT}] if cached else request.system
        body |= {"tools": tools, "tool_choice": {"type": "auto"}, **s.params}
        if s.temperature is not None:
            body["temperature"] = s.temperature
        return body

    async def pick(self, request: Request) -> Pick:
        from anthropic.types import Message

        # the body as bytes (api.py: `sent`): the SDK neither walks nor encodes every tool's schema again
        content = self.sent(self.params(request), request)
        started = time.perf_counter()
        try:
            message = await self.patiently(
                lambda: self.sdk_client.post("/v1/messages", cast_to=Message, content=content)
            )
        except Exception as exc:  # noqa: BLE001 - sorted into fatal vs this-sample-only
            raise self.sort_error(exc) from None
        latency_ms = (time.perf_counter() - started) * 1000
        picked = self._reading(message, latency_ms)
        if (u := picked.usage) is not None:  # a token limit is paced by what answers take (reads don't count)
            self.throttle.succeeded((u.input_tokens or 0) + u.prompt_cache_write_tokens + (u.output_tokens or 0))
        return picked

    async def forward(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """A driven client's Messages request as it is, on the run's model, answered whole (the endpoint
        streams it to the client): its system prompt, tools, messages and settings are the client's."""
        rest = {k: v for k, v in body.items() if k not in ("model", "max_tokens", "messages", "stream")}
        try:
            message = await self.patiently(lambda: self.sdk_client.messages.create(
                model=self.model,
                max_tokens=int(body.get("max_tokens") or self.call.max_tokens),
                messages=body.get("messages") or [],
                extra_body=rest,
                extra_headers=headers,
            ))  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - sorted into fatal vs this-sample-only
            raise self.sort_error(exc) from None
        answer: dict[str, Any] = message.to_dict()
        return answer

    def _reading(self, message: Any, latency_ms: float | None) -> Pick:
        try:
            return self._read(message, latency_ms)
        except (AttributeError, TypeError, IndexError, KeyError) as exc:  # a gateway's HTML page, a non-standard body
            raise SampleError(
                f"unexpected answer from {self.shown_endpoint}: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    # Message Batches: POST /v1/messages/batches with `{custom_id, params}` per request, polled until
    # `processing_status` is `ended`, then the results (JSONL, in no fixed order) by custom_id.

    batchable = True

    async def submit_batch(self, requests: Sequence[tuple[str, Request]]) -> str:
        items = [{"custom_id": rid, "params": self.params(r)} for rid, r in requests]
        # the items as extra_body, like a single request's tools: sent as they are, not walked
        batch = await self._batches(lambda b: b.create(requests=[], extra_body={"requests": items}), submit=True)
        return str(batch.id)

    async def batch_state(self, batch_id: str) -> BatchState:
        batch = await self._batches(lambda b: b.retrieve(batch_id))
        counts = batch.request_counts
        total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
        return BatchState(batch.processing_status == "ended", total - counts.processing, total)

    async def cancel_batch(self, batch_id: str) -> None:
        await self._batches(lambda b: b.cancel(batch_id))

    async def batch_results(self, batch_id: str) -> dict[str, Pick | str]:
        out: dict[str, Pick | str] = {}
        decoder = await self._batches(lambda b: b.results(batch_id))
        async for item in decoder:
            result = item.result
            if result.type == "succeeded":
                try:
                    out[item.custom_id] = self._reading(result.message, None)
                except SampleError as exc:
                    out[item.custom_id] = str(exc)
            elif result.type == "errored":
                error = getattr(result.error, "error", None)
                out[item.custom_id] = self.redact(
                    f"{getattr(error, 'type', 'error')}: {getattr(error, 'message', '') or 'no message'}"
                )
        return out

    async def _batches(self, call: Callable[[Any], Awaitable[T]], submit: bool = False) -> T:
        """A call of the batch API, its errors sorted: no batch API at this endpoint (404, 405, 501 on
        the first call) is BatchRefused; a bad key stops the run; anything else fails this batch."""
        try:
            return await self.patiently(lambda: call(self.sdk_client.messages.batches))
        except Exception as exc:  # noqa: BLE001
            raise batch_error(self, exc, submit) from None

    def _read(self, message: Any, latency_ms: float | None) -> Pick:
        blocks = list(message.content or [])
        uses = [b for b in blocks if getattr(b, "type", None) == "tool_use"]
        text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text")
        usage = getattr(message, "usage", None)
        refused = message.stop_reason == "refusal"
        first = uses[0] if uses and not refused else None
        searched, search_blocks = anthropic_searches(blocks)
        return Pick(
            tool=first.name if first else None,
            args=first.input if first else None,
            text=text,
            calls=0 if refused else len(uses),
            tool_calls=() if refused else tuple(ToolCall(u.name, u.input) for u in uses),
            replay=tuple(
                b.model_dump(exclude_none=True)
                for b in blocks
                if getattr(b, "type", None) in ("thinking", "redacted_thinking")
            )
            + search_blocks,  # a conversation's next turn sends the searches back too
            searched=searched,
            latency_ms=latency_ms,
            usage=Usage(
                usage.input_tokens,
                usage.output_tokens,
                getattr(usage, "cache_creation_input_tokens", None) or 0,
                getattr(usage, "cache_read_input_tokens", None) or 0,
            )
            if usage
            else None,
            stop_reason=message.stop_reason,
        )

    async def write(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> str:
        """Text from the model (no tools); with `schema`, a JSON object: the input of a forced tool
        whose input schema is that shape (Anthropic's structured output)."""
        probe = True
        while True:
            forced = schema is not None and self._format == "json_schema"
            kwargs: dict[str, Any] = {}
            if forced:
                kwargs["tools"] = [{"name": "answer", "description": "Give the answer.", "input_schema": schema}]
                kwargs["tool_choice"] = {"type": "tool", "name": "answer"}
            try:
                message = await self.probing("json_schema" if forced else "text", probe).messages.create(
                    model=self.model,
                    max_tokens=self.call.max_tokens,
                    system=system,
                    messages=[{"role": "user", "content": prompt}],
                    **kwargs,
                )
            except Exception as exc:  # noqa: BLE001
                if forced and getattr(exc, "status_code", None) in (400, 422):
                    self._format = "text"  # an Anthropic-compatible endpoint without forced tools
                    continue
                if probe and forced:  # a probe's other failure (a 429, a timeout): ask with the retries
                    probe = False
                    continue
                raise self.sort_error(exc) from None
            self._format_known = self._format_known or forced
            blocks = list(message.content or [])
            used = next((b for b in blocks if getattr(b, "type", None) == "tool_use"), None)
            if forced and used is not None:
                return json.dumps(getattr(used, "input", {}) or {})
            return "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text")


def messages(request: Request, cached: bool = False) -> list[dict[str, Any]]:
    """The prompt, then each earlier turn: the assistant's text and `tool_use` blocks, and a user
    message with a `tool_result` block per call, in the same order. `cached`: in a conversation, a
    breakpoint on the last result too, so the next turn reads all of this from the prompt cache."""
    out: list[dict[str, Any]] = [{"role": "user", "content": request.prompt}]
    for n, turn in enumerate(request.history):
        ids = turn.call_ids(n)
        said: list[dict[str, Any]] = [dict(b) for b in turn.replay]  # thinking first, as it came
        said += [{"type": "text", "text": turn.text}] if turn.text.strip() else []
        said += [
            {"type": "tool_use", "id": i, "name": c.tool, "input": c.args if isinstance(c.args, dict) else {}}
            for i, c in zip(ids, turn.calls, strict=True)
        ]
        out.append({"role": "assistant", "content": said})
        out.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": stub.error or stub.text}
                    | ({"is_error": True} if stub.error is not None else {})
                    for i, stub in zip(ids, turn.stubs, strict=True)
                ],
            }
        )
    if cached and request.history:
        out[-1]["content"][-1] |= BREAKPOINT
    return out


def make(call: ModelCall, throttle: Throttle, environ: Mapping[str, str]) -> AnthropicProvider:
    return AnthropicProvider(call, throttle, environ)
