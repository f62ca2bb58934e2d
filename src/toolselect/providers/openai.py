"""`openai` (Chat Completions) and `openai-responses` (the Responses API) through the official SDK.

Any OpenAI-compatible server works through `base_url` (config) or `OPENAI_BASE_URL`. The first
tool call is the pick (the legacy `function_call` field too); argument text that is not valid JSON,
or carries trailing garbage, is kept raw and scored ARG-INVALID. A trajectory's earlier turns go back
as the assistant message with its `tool_calls` (content `""`, never null: some compatible servers
refuse null) and a `tool` message per call (Chat Completions), or as `function_call` and
`function_call_output` items (Responses, which keeps no history with `store: false`: a conversation
asks for reasoning items' encrypted content and sends them back).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from ..errors import InfraError
from ..pick import Pick, ToolCall, Usage, parse_args
from . import BatchRefused, BatchState, Request, SampleError, arguments_text
from .api import SdkProvider, batch_error, body_message, refused_format, timeout
from .search import responses_searches, responses_tools

if TYPE_CHECKING:
    from ..throttle import Throttle
    from .call import ModelCall

T = TypeVar("T")
NO_KEY = (
    "no OpenAI API key: set OPENAI_API_KEY (for an OpenAI-compatible server on this machine none is needed; "
    "elsewhere, for one that needs none, any value works), or run offline with --provider bm25"
)
LOCAL_KEY = "no-key"  # what the SDK sends to a server on 127.0.0.1 when no key is set: it needs one to send


def on_this_machine(endpoint: str) -> bool:
    """An endpoint on the loopback interface (llama.cpp, Ollama or vLLM on 127.0.0.1): it needs no key."""
    host = urlsplit(endpoint).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


class _OpenAIBase(SdkProvider):
    name = "openai"
    sdk = "openai"
    endpoint_variable = "OPENAI_BASE_URL"
    default_endpoint = "https://api.openai.com/v1"
    _cache_keys: dict[int, tuple[tuple[Any, ...], str | None, str]]

    def __init__(self, call: ModelCall, throttle: Throttle, environ: Mapping[str, str]) -> None:
        super().__init__(call, throttle, environ)
        self._cache_keys = {}

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "tool_choice": "auto", "max_tokens": self.call.max_tokens}

    def cache_key(self, request: Request) -> dict[str, str]:
        """OpenAI's own endpoint routes requests sharing a `prompt_cache_key` to the same cache: one key
        per tool list and system prompt (the prefix they share). Compatible servers get nothing: some
        refuse a field they don't know."""
        if not (self.call.prompt_cache and is_openai(self.endpoint)):
            return {}
        known = self._cache_keys.get(id(request.tools))
        if known is None or known[0] is not request.tools or known[1] != request.system:
            prefix = [request.system, [(t.name, t.description, t.input_schema) for t in request.tools]]
            digest = hashlib.sha256(json.dumps(prefix, sort_keys=True, default=str).encode()).hexdigest()[:16]
            known = self._cache_keys[id(request.tools)] = (request.tools, request.system, f"toolselect-{digest}")
        return {"prompt_cache_key": known[2]}

    def connect(self) -> None:
        import openai

        try:
            self.sdk_client = openai.AsyncOpenAI(
                api_key=self.key("OPENAI_API_KEY") or (LOCAL_KEY if on_this_machine(self.endpoint) else None),
                base_url=self.endpoint,
                max_retries=self.call.max_retries,
                timeout=timeout(self.call),
                http_client=self.http_client(openai.DefaultAsyncHttpxClient),
            )
        except openai.OpenAIError:
            raise InfraError(NO_KEY) from None
        self.reach()

    async def _ask(self, request: Request) -> Any:
        """Send the request (Chat Completions or Responses)."""
        raise NotImplementedError

    def _read(self, answer: Any, latency_ms: float | None) -> Pick:
        """The pick in an answer."""
        raise NotImplementedError

    def body(self, request: Request) -> dict[str, Any]:
        """The request's whole body, as a synchronous request sends it and a batch carries it."""
        raise NotImplementedError

    def answer(self, body: Any) -> Any:
        """A batch's answer body as the SDK's own type, built as the SDK builds a synchronous answer
        (leniently: a field it doesn't know, or one missing, is no error)."""
        raise NotImplementedError

    async def pick(self, request: Request) -> Pick:
        started = time.perf_counter()
        try:
            answer = await self.patiently(lambda: self._ask(request))
        except Exception as exc:  # noqa: BLE001 - sorted into fatal vs this-sample-only
            raise self.sort_error(exc) from None
        picked = self._reading(answer, (time.perf_counter() - started) * 1000)
        if (u := picked.usage) is not None:  # a token limit is paced by what answers take, cached or not
            self.throttle.succeeded(u.prompt_tokens + (u.output_tokens or 0))
        return picked

    def _reading(self, answer: Any, latency_ms: float | None) -> Pick:
        try:
            return self._read(answer, latency_ms)
        except (AttributeError, TypeError, IndexError, KeyError) as exc:  # a gateway's HTML page, a non-standard body
            raise SampleError(
                f"unexpected answer from {self.shown_endpoint}: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    # The Batch API: the requests as a JSONL file (POST /v1/files, purpose batch), a batch over it
    # (POST /v1/batches) for this provider's endpoint, polled until it has ended; then the output
    # file's answers and the error file's failures, by custom_id.

    batchable = True
    batch_url = ""  # the endpoint a batch's requests go to

    async def submit_batch(self, requests: Sequence[tuple[str, Request]]) -> str:
        lines = [
            json.dumps({"custom_id": rid, "method": "POST", "url": self.batch_url, "body": self.body(r)})
            for rid, r in requests
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        upload = await self._batches(
            lambda c: c.files.create(file=("toolselect-batch.jsonl", data), purpose="batch"), submit=True
        )
        batch = await self._batches(
            lambda c: c.batches.create(input_file_id=upload.id, endpoint=self.batch_url, completion_window="24h"),
            submit=True,
        )
        if batch.status == "failed":
            raise BatchRefused(f"the batch was refused: {_batch_errors(batch)}")
        return str(batch.id)

    async def batch_state(self, batch_id: str) -> BatchState:
        batch = await self._batches(lambda c: c.batches.retrieve(batch_id))
        counts = batch.request_counts
        total, done = (counts.total, counts.completed + counts.failed) if counts is not None else (0, 0)
        return BatchState(batch.status in ENDED, done, total)

    async def cancel_batch(self, batch_id: str) -> None:
        await self._batches(lambda c: c.batches.cancel(batch_id))

    async def batch_results(self, batch_id: str) -> dict[str, Pick | str]:
        batch = await self._batches(lambda c: c.batches.retrieve(batch_id))
        if batch.status == "failed":
            raise BatchRefused(f"the batch failed: {_batch_errors(batch)}")
        out: dict[str, Pick | str] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            for line in (await self._file_text(file_id)).splitlines():
                if line.strip():
                    found = self._result(line)
                    if found is not None:
                        out[found[0]] = found[1]
        return out

    async def _file_text(self, file_id: str) -> str:
        content = await self._batches(lambda c: c.files.content(file_id))
        return str(content.text)

    def _result(self, line: str) -> tuple[str, Pick | str] | None:
        """One line of an output or error file: (its id, the pick or why it failed); None for a request
        that never ran (expired, or the batch was cancelled) or a line that names no request."""
        try:
            item = json.loads(line)
            rid = item["custom_id"]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(rid, str):
            return None
        error, response = item.get("error"), item.get("response")
        if isinstance(error, dict):
            if error.get("code") in NOT_RUN:
                return None
            return rid, self.redact(f"{error.get('code') or 'error'}: {error.get('message') or 'no message'}")
        if not isinstance(response, dict):
            return rid, "the batch's answer has no response"
        body = response.get("body")
        if response.get("status_code") != 200:
            return rid, self.redact(f"{response.get('status_code')} {body_message(body) or 'no message'}")
        if not isinstance(body, dict):
            return rid, "the batch's answer has no body"
        try:
            return rid, self._reading(self.answer(body), None)
        except (SampleError, ValueError, TypeError) as exc:
            return rid, f"unexpected answer in the batch from {self.shown_endpoint}: {str(exc)[:200]}"

    async def _batches(self, call: Callable[[Any], Awaitable[T]], submit: bool = False) -> T:
        """A call of the batch or files API, its errors sorted (api.batch_error)."""
        try:
            return await self.patiently(lambda: call(self.sdk_client))
        except Exception as exc:  # noqa: BLE001
            raise batch_error(self, exc, submit) from None


ENDED = {"completed", "failed", "expired", "cancelled"}
NOT_RUN = {"batch_expired", "batch_cancelled"}  # an error file's requests that never ran


def _batch_errors(batch: Any) -> str:
    data = getattr(getattr(batch, "errors", None), "data", None) or []
    said = "; ".join(f"{getattr(e, 'code', None) or 'error'}: {getattr(e, 'message', None) or ''}" for e in data[:3])
    return said or "no reason given"


def is_openai(endpoint: str) -> bool:
    """OpenAI's own API (not a compatible server)."""
    return urlsplit(endpoint).hostname == "api.openai.com"


def _usage(prompt: int | None, output: int | None, details: Any) -> Usage:
    """OpenAI counts cached input inside the prompt's tokens, and says how much in `cached_tokens`."""
    cached = min(getattr(details, "cached_tokens", None) or 0, prompt or 0)
    return Usage(None if prompt is None else prompt - cached, output, 0, cached)


def _call(name: str, arguments: Any) -> ToolCall:
    """Arguments as the API sent them: normally JSON text; some compatible servers send an object."""
    if isinstance(arguments, dict):
        return ToolCall(name, arguments)
    if arguments is None or isinstance(arguments, str):
        args, raw = parse_args(arguments or "")
        return ToolCall(name, args, raw)
    return ToolCall(name, None, json.dumps(arguments))  # not an object: kept raw, scored ARG-INVALID


def _from_calls(calls: list[ToolCall], **fields: Any) -> Pick:
    first = calls[0]
    return Pick(
        tool=first.tool, args=first.args, raw_args=first.raw_args, calls=len(calls), tool_calls=tuple(calls), **fields
    )


class ChatProvider(_OpenAIBase):
    name = "openai"

    # response_format, most structured first: a JSON schema (OpenAI, vLLM, llama.cpp's server), a JSON
    # object held to the schema (llama-cpp-python's server: its grammar), any JSON object, or plain text
    # (read leniently) — the first the endpoint accepts is kept for the rest of the run
    FORMATS = ("json_schema", "json_object_schema", "json_object", "text")

    async def write(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> str:
        """Text from the model (no tools); with `schema`, a JSON object asked through response_format."""
        probe = True
        while True:
            mode = self._format if schema else "text"
            kwargs: dict[str, Any] = {}
            if mode == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "draft", "schema": schema, "strict": True},
                }
            elif mode == "json_object_schema":
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            try:
                completion = await self.probing(mode, probe).chat.completions.create(
                    model=self.model,
                    messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
                    **kwargs,
                )
            except Exception as exc:  # noqa: BLE001
                if mode != "text" and refused_format(exc):  # the next shape (never back: probes run at once)
                    plainer = self.FORMATS[self.FORMATS.index(mode) + 1]
                    self._format = max(self._format, plainer, key=self.FORMATS.index)
                    continue
                if probe and mode != "text":  # a probe's other failure (a 429, a timeout): ask with the retries
                    probe = False
                    continue
                raise self.sort_error(exc) from None
            self._format_known = self._format_known or mode != "text"
            return (completion.choices[0].message.content or "") if completion.choices else ""

    batch_url = "/v1/chat/completions"

    def body(self, request: Request) -> dict[str, Any]:
        s = self.call
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.prompt})
        for n, turn in enumerate(request.history):
            ids = turn.call_ids(n)
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.text,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": c.tool, "arguments": arguments_text(c)}}
                        for i, c in zip(ids, turn.calls, strict=True)
                    ],
                }
            )
            messages += [
                {"role": "tool", "tool_call_id": i, "content": stub.text}
                for i, stub in zip(ids, turn.stubs, strict=True)
            ]
        out: dict[str, Any] = {"model": self.model, "messages": messages}
        # the answer's cap: OpenAI's own field (reasoning models refuse the old one); compatible servers
        # (llama.cpp, vLLM, Ollama) read `max_tokens`
        out["max_completion_tokens" if is_openai(self.endpoint) else "max_tokens"] = s.max_tokens
        if s.temperature is not None:
            out["temperature"] = s.temperature
        if s.seed is not None:
            out["seed"] = s.seed
        tools = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": schema}}
            for t in request.tools
            for schema in (t.input_schema,)
        ]
        return out | {"tools": tools, "tool_choice": "auto", **self.cache_key(request), **s.params}

    async def _ask(self, request: Request) -> Any:
        from openai.types.chat import ChatCompletion

        # the body as bytes (api.py: `sent`): the SDK neither walks nor encodes every tool's schema again
        content = self.sent(self.body(request), request)
        return await self.sdk_client.post("/chat/completions", cast_to=ChatCompletion, content=content)

    def answer(self, body: Any) -> Any:
        from openai.types.chat import ChatCompletion

        return ChatCompletion.construct(**body)

    def _read(self, completion: Any, latency_ms: float | None) -> Pick:
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice else None
        usage = getattr(completion, "usage", None)
        fields: dict[str, Any] = {
            "text": (getattr(message, "content", None) or getattr(message, "refusal", None) or ""),
            "latency_ms": latency_ms,
            "usage": _usage(usage.prompt_tokens, usage.completion_tokens, getattr(usage, "prompt_tokens_details", None))
            if usage
            else None,
            # the model's refusal (structured outputs' `refusal` field) is no reply: said as the stop reason
            "stop_reason": "refusal"
            if message is not None and getattr(message, "refusal", None) and not getattr(message, "content", None)
            else getattr(choice, "finish_reason", None),
        }
        calls = [c.function for c in (getattr(message, "tool_calls", None) or []) if getattr(c, "function", None)]
        legacy = getattr(message, "function_call", None)
        if not calls and legacy is not None:
            calls = [legacy]
        if calls:
            return _from_calls([_call(c.name, c.arguments) for c in calls], **fields)
        return Pick(**fields)


class ResponsesProvider(_OpenAIBase):
    name = "openai-responses"

    FORMATS = ("json_schema", "text")

    async def write(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> str:
        """Text from the model (no tools); with `schema`, a JSON object asked through text.format."""
        probe = True
        while True:
            mode = self._format if schema else "text"
            kwargs: dict[str, Any] = {}
            if mode == "json_schema":
                kwargs["text"] = {"format": {"type": "json_schema", "name": "draft", "schema": schema, "strict": True}}
            try:
                response = await self.probing(mode, probe).responses.create(
                    model=self.model, instructions=system, input=prompt, store=False, **kwargs
                )
            except Exception as exc:  # noqa: BLE001
                if mode != "text" and refused_format(exc):
                    self._format = "text"
                    continue
                if probe and mode != "text":  # a probe's other failure (a 429, a timeout): ask with the retries
                    probe = False
                    continue
                raise self.sort_error(exc) from None
            self._format_known = self._format_known or mode != "text"
            return response.output_text or ""

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "store": False}

    batch_url = "/v1/responses"

    def body(self, request: Request) -> dict[str, Any]:
        s = self.call
        out: dict[str, Any] = {
            "model": self.model,
            "input": responses_input(request),
            "store": False,
            "max_output_tokens": s.max_tokens,
        }
        if request.system:
            out["instructions"] = request.system
        if s.temperature is not None:
            out["temperature"] = s.temperature
        if request.every_call:  # a conversation: reasoning models carry their reasoning across turns
            out["include"] = ["reasoning.encrypted_content"]
        tools = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
                "strict": False,
            }
            for t in request.tools
        ]
        if request.search is not None:  # deferred in the server's namespace, behind the API's tool search
            tools = responses_tools(request.tools, request.search)
        return out | {"tools": tools, "tool_choice": "auto", **self.cache_key(request), **s.params}

    async def _ask(self, request: Request) -> Any:
        from openai.types.responses import Response

        content = self.sent(self.body(request), request)  # as bytes, like Chat Completions' body
        return await self.sdk_client.post("/responses", cast_to=Response, content=content)

    def answer(self, body: Any) -> Any:
        from openai.types.responses import Response

        return Response.construct(**body)

    async def forward(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """A driven client's Responses request as it is (its metadata aside), on the run's model, answered
        whole (the endpoint streams it to the client)."""
        rest = {k: v for k, v in body.items() if k not in ("model", "input", "stream", "client_metadata")}
        try:
            send = self.sdk_client.responses.create
            response = await self.patiently(lambda: send(model=self.model, input=body.get("input"), extra_body=rest))
        except Exception as exc:  # noqa: BLE001 - sorted into fatal vs this-sample-only
            raise self.sort_error(exc) from None
        return dict(response.to_dict())

    def _read(self, response: Any, latency_ms: float | None) -> Pick:
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
            "usage": _usage(usage.input_tokens, usage.output_tokens, getattr(usage, "input_tokens_details", None))
            if usage
            else None,
            "stop_reason": "refusal"
            if not text
            and any(
                getattr(part, "type", None) == "refusal"
                for item in items
                if getattr(item, "type", None) == "message"
                for part in (getattr(item, "content", None) or [])
            )
            else getattr(response, "status", None),
        }
        searched, search_items = responses_searches(items)
        fields["replay"] = (
            tuple(
                i.model_dump(exclude_none=True)
                for i in items
                if getattr(i, "type", None) == "reasoning" and getattr(i, "encrypted_content", None)
            )
            + search_items  # a conversation's next turn sends the searches back too
        )
        fields["searched"] = searched
        if calls:
            return _from_calls([_call(c.name, c.arguments) for c in calls], **fields)
        return Pick(**fields)


def responses_input(request: Request) -> Any:
    """The prompt alone for a first turn; in a conversation, the prompt, then per earlier turn its
    text, its `function_call` items and a `function_call_output` per call."""
    if not request.history:
        return request.prompt
    items: list[dict[str, Any]] = [{"role": "user", "content": request.prompt}]
    for n, turn in enumerate(request.history):
        ids = turn.call_ids(n)
        items += [dict(r) for r in turn.replay]  # reasoning items, with their encrypted content
        if turn.text:
            items.append({"role": "assistant", "content": turn.text})
        spaced = {"namespace": request.search.namespace} if request.search is not None else {}
        items += [
            {"type": "function_call", "call_id": i, "name": c.tool, "arguments": arguments_text(c)} | spaced
            for i, c in zip(ids, turn.calls, strict=True)
        ]
        items += [
            {"type": "function_call_output", "call_id": i, "output": stub.text}
            for i, stub in zip(ids, turn.stubs, strict=True)
        ]
    return items


def make_chat(call: ModelCall, throttle: Throttle, environ: Mapping[str, str]) -> ChatProvider:
    return ChatProvider(call, throttle, environ)


def make_responses(call: ModelCall, throttle: Throttle, environ: Mapping[str, str]) -> ResponsesProvider:
    return ResponsesProvider(call, throttle, environ)
