"""A fake model API on 127.0.0.1 that the real anthropic and openai SDKs talk to.

It speaks the Anthropic Messages API (`POST /v1/messages`), OpenAI Chat Completions
(`POST /v1/chat/completions`) and the Responses API (`POST /v1/responses`) closely enough for the
SDKs' own parsing, answers with scripted picks by prompt, and injects faults: 429 with
retry-after, 500, 529, slow answers past the timeout, malformed argument JSON, dropped connections.
It counts requests and the most requests it ever saw in flight.

In a test:      with FakeModelAPI(script) as api: ... api.url ... api.stats()
As a process:   python -m tests.fakes.model_api SCRIPT.json      prints PORT=<n>; GET /_stats returns the counters

Script (JSON):
  answers:  {"<prompt>": ANSWER or [ANSWER, ...]}     a list: the first whose "when" holds
  contains: {"<text>": ANSWER}                        for prompts not listed that contain the text
  default:  ANSWER                                    for the rest (default: text only)
  faults:   [{"match": "<prompt>" | "*", "status": 429, "retry_after": 0.1, "delay": 2.0,
              "drop": true, "times": 2}]              applied in order while "times" lasts
  latency:  seconds before every answer (default 0)
  billing:  false: no prompt-cache accounting (every answer's usage says 1 input token), for a speed
            benchmark on a surface where the accounting's encoding is most of the fake's time
  rate_limit: {"rps": 20, "burst": 20, "headers": "openai" | "anthropic" | null, "retry_after": "1"}
            a token bucket: beyond it a request is answered 429 (with retry-after); with "headers", every
            answer announces the limit (per minute), what remains and when it is full again, as that API does
  announce: {"<header>": "<value>"}                    headers every answer carries, as a misconfigured or
                                                      hostile endpoint may send them (rate limits, …)
  key:      the API key to accept (default: any non-empty key)
  fatal_models: ["no-such-model"]                     answered 404 not_found
  reject_formats: ["json_schema", "json_object_schema", "json_object"]
                                                      structured output refused with a 400 naming it, as a
                                                      server without it does (log[i]["format"] says what came);
  reject_status: 500                                  … or with this status (llama.cpp's Python server: 500)
  seed:     for "random" answers
  batch:    {"polls": 1, "process": N, "never_ends": true, "missing": true}
                                                      both batch APIs (batches.py): each request answered as
                                                      its synchronous route answers it, log[i]["batch"] set
  prompt_cache: {"min_tokens": 1024, "ttl_s": 300}    the APIs' prompt caches (prompt_cache.py): always on,
                                                      as on the real APIs; usage says what each request
                                                      read and wrote, stats()["billed"] adds it all up
ANSWER: {"tool": NAME, "args": {...}} | {"tool": NAME, "raw_args": "text"} | {"text": "..."}
        | {"refusal": true} | {"calls": [ANSWER, ...]} | {"legacy": true, ...} (chat: function_call)
        | {"text": "...", "truncated": true} (stopped at the token limit: Anthropic max_tokens, Chat
          Completions length, Responses status incomplete with reason max_output_tokens)
        | {"random": [ANSWER, ...], "weights": [..]} (seeded per prompt and request number)
        | {"first": true, "args"?: {...}} (call whichever tool is listed first: a model that favours position)
        | {"like": NAME, "args": {...}} (call the tool of that name as the request names it: NAME itself, or
          a client's prefixed name ending in _NAME; in a list, a variant whose tool was not sent is passed
          over; alone, an answer in text: a model picks only among the tools it was sent)
        | {"tool": NAME, "args": {...}, "object_args": true} (OpenAI-style APIs: arguments as an object, not text)
        | {"tool": NAME, "raw_input": "json text"} (Anthropic: that text is the tool_use input, verbatim)
        | {"html": "<html>…"} (a 200 answer that is not JSON, as a misconfigured gateway sends)
        | {..., "thinking": "…"} (Anthropic: a thinking block with a signature; Responses: a reasoning
          item, with encrypted_content when the request's include asks for it; log[i]["replayed"]
          lists what came back in a later turn)
        with an optional "when": {"<tool>": "<text its description must contain>"}

Multi-turn conversations (an agent loop sends the calls so far with their results): the prompt is
the first user message; a variant may also say
        "turn": N        the number of earlier model turns that called tools (0 for the first answer)
        "tools_at_least": N   the request offers at least N tools (a model that degrades as the list grows)
        "model": NAME    the request asks for this model (several models in one run answer differently)
        "after": {"<tool>": "error" | "<text>"}   the latest result for that tool was an error
                          (Anthropic `is_error`; for the OpenAI APIs, a result starting "error"),
                          or contains the text
and a list's first variant whose conditions all hold answers. `log[i]["turn"]` and
`log[i]["results"]` record what each request carried.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import re
import sys
import threading
import time
from collections import Counter
from typing import Any

try:  # the same objects as json.loads, parsed several times faster (a 240-tool body: 5 ms → 1 ms)
    import orjson
except ImportError:  # pragma: no cover - a test extra
    orjson = None  # type: ignore[assignment]

from tests.fakes import gemini_wire, tool_search
from tests.fakes.batches import Batches
from tests.fakes.prompt_cache import Billed, PromptCache, TooManyBreakpoints

BATCHED = "x-fake-batch"  # marks a batch's request as it goes through the synchronous route
ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}


class FakeModelAPI:
    def __init__(self, script: dict[str, Any] | None = None, **overrides: Any) -> None:
        self.script: dict[str, Any] = {**(script or {}), **overrides}
        self.faults = [dict(f) for f in self.script.get("faults", [])]
        self.requests = 0
        self.by_path: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._tokens: float | None = None  # the rate limit's bucket
        self._refilled = 0.0
        self.rate_limited = 0  # requests answered 429 by the bucket
        self.admitted: list[float] = []  # when each request the bucket let through arrived
        self.first_start: float | None = None
        self.last_end: float | None = None
        self.log: list[dict[str, Any]] = []
        self.cache = PromptCache(**self.script.get("prompt_cache", {}))
        self.billed: Counter[str] = Counter()  # tokens by kind, and requests that read or wrote the cache
        self._answered: Counter[str] = Counter()
        self._ids = itertools.count(1)
        self.batches = Batches(self.script, lambda: self.url)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task] = set()
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeModelAPI:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=1024)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._shutdown())
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            assert self._thread is not None
            self._thread.join(10)

    def __enter__(self) -> FakeModelAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "by_path": dict(self.by_path),
                "max_in_flight": self.max_in_flight,
                "first_start": self.first_start,
                "last_end": self.last_end,
                "eval_phase_s": (self.last_end - self.first_start) if self.first_start and self.last_end else None,
                "rate_limited": self.rate_limited,
                "admitted": len(self.admitted),
                "admitted_span_s": (self.admitted[-1] - self.admitted[0]) if len(self.admitted) > 1 else None,
                "billed": dict(self.billed),
            }

    # ------------------------------------------------------------------ HTTP

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if method == "GET" and path.startswith("/_stats"):
                    self._write(writer, 200, self.stats())
                    await writer.drain()
                    continue
                if self.batches.handles(path):
                    await self._batch(method, path, headers, body, writer)
                    await writer.drain()
                    continue
                keep = await self._handle(path, headers, body, writer)
                await writer.drain()
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()
            self._tasks.discard(task)

    async def _batch(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> None:
        """The batch APIs (batches.py): the key checked as on every route, each request answered as its
        synchronous endpoint would answer it."""
        with self._lock:
            self.requests += 1
            self.by_path[path.split("?")[0]] += 1
        key = self.script.get("key")
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not given or (key and given != key):
            self._error(writer, "anthropic" if "/messages/" in path else "chat", 401, "invalid x-api-key")
            return
        status, payload, kind = await self.batches.handle(method, path, headers, raw, self._answer_one)
        if isinstance(payload, str):
            data = payload.encode()
            writer.write(
                f"HTTP/1.1 {status} OK\r\ncontent-type: {kind}\r\ncontent-length: {len(data)}\r\n\r\n".encode() + data
            )
        else:
            self._write(writer, status, payload)

    async def _answer_one(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any]:
        """One request of a batch, answered by the synchronous route: (status, JSON payload)."""
        capture = _Captured()
        await self._answer(path, {**headers, BATCHED: "1"}, body, capture)  # type: ignore[arg-type]
        head, _, data = bytes(capture.data).partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head else 500
        try:
            return status, json.loads(data)
        except ValueError:
            return 500, {"type": "error", "error": {"type": "api_error", "message": "not JSON"}}

    def _write(
        self, writer: asyncio.StreamWriter, status: int, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        spliced = payload.pop(RAW_INPUTS, []) if isinstance(payload, dict) else []
        text = json.dumps(payload)
        for raw in spliced:  # JSON text no encoder would write (nested past its recursion limit)
            text = text.replace(json.dumps(RAW_INPUT), raw, 1)
        data = text.encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (
            f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(data)}\r\n{extra}\r\n"
        )
        writer.write(head.encode() + data)  # one write: separate ones cost ~40 ms (Nagle + delayed ACK)

    async def _handle(self, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter) -> bool:
        now = time.perf_counter()
        with self._lock:
            self.requests += 1
            self.by_path[path] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.first_start = self.first_start or now
        try:
            return await self._answer(path, headers, _parsed(raw or b"{}"), writer)
        finally:
            with self._lock:
                self.in_flight -= 1
                self.last_end = time.perf_counter()

    async def _answer(
        self, path: str, headers: dict[str, str], body: dict[str, Any], writer: asyncio.StreamWriter
    ) -> bool:
        routes = {"/v1/messages": "anthropic", "/v1/chat/completions": "chat", "/v1/responses": "responses"}
        # a gateway may put a prefix in front (https://gw.example/t/<tenant>/v1/…)
        api = next((name for route, name in routes.items() if path.split("?")[0].endswith(route)), None)
        original, streams = body, False
        if api is None and (gemini := gemini_wire.route(path)) is not None:  # the model is in the path
            api, (model, streams) = "gemini", gemini
            body = {**body, "model": model}
        if api is None:
            self._write(writer, 404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return True
        prompt = _prompt(api, body)
        results, turn = _history(api, body)
        self.log.append(
            {
                "api": api,
                "prompt": prompt,
                "turn": turn,
                "results": results,
                "model": body.get("model"),
                "temperature": body.get("temperature", (body.get("generationConfig") or {}).get("temperature")),
                "seed": body.get("seed", (body.get("generationConfig") or {}).get("seed")),
                "system": (gemini_wire.system(body) if api == "gemini" else None)
                or _text(body.get("system"))
                or body.get("instructions")
                or _system(body),
                "breakpoints": _breakpoints(body) if api == "anthropic" else [],
                "prompt_cache_key": body.get("prompt_cache_key"),
                "tool_choice": body.get("tool_choice") or gemini_wire.tool_choice(body),
                "store": body.get("store"),
                "tools": _tool_names(api, body),
                "retry": headers.get("x-stainless-retry-count"),
                "max_tokens": body.get("max_tokens"),
                "has_auth": "authorization" in headers or "x-api-key" in headers,
                "extra": _extra(api, body),
                "replayed": _replayed(api, body),
                "batch": BATCHED in headers,
                "body": original,  # the whole request, as it came (a batch's: as its item carried it)
            }
        )
        key = self.script.get("key")
        given = (
            headers.get("x-api-key")
            or headers.get("x-goog-api-key")
            or headers.get("authorization", "").removeprefix("Bearer ").strip()
        )
        if not given or (key and given != key):
            self._error(writer, api, 401, "invalid x-api-key")
            return True
        response_format = body.get("response_format") or {}
        fmt = response_format.get("type") or ((body.get("text") or {}).get("format") or {}).get("type")
        if fmt == "json_object" and "schema" in response_format:
            fmt = "json_object_schema"  # llama-cpp-python's server: a JSON object held to a schema
        self.log[-1]["format"] = fmt
        if fmt and fmt in self.script.get("reject_formats", []):
            status = self.script.get("reject_status", 400)  # llama.cpp's Python server answers 500
            self._error(writer, api, status, f"1 validation error: body.response_format.type: {fmt} is not allowed")
            return True
        if body.get("model") in self.script.get("fatal_models", []):
            self._error(writer, api, 404, f"model: {body.get('model')}")
            return True
        state = tool_search.searching(api, body)
        if state is not None and state.problem:
            self._error(writer, api, 400, state.problem)
            return True
        limited, announced = self._bucket()
        announced |= self.script.get("announce", {})
        if limited:
            self._error(writer, api, 429, "rate limit reached", announced)
            return True
        fault = self._take_fault(prompt)
        if fault:
            if fault.get("delay"):
                await asyncio.sleep(fault["delay"])
            if fault.get("drop"):
                return False  # close the connection without an answer
            if fault.get("status"):
                extra = {"retry-after": str(fault["retry_after"])} if "retry_after" in fault else {}
                self._error(writer, api, fault["status"], fault.get("message", "injected fault"), extra)
                return True
        try:  # looked up as the request arrives; written once its answer is back
            now = time.monotonic()
            cache = self.cache
            if self.script.get("billing", True) is False:
                billed, writes = Billed(input=1, cache_write=0, cache_read=0), list[str]()
            elif api == "anthropic":
                billed, writes = cache.anthropic(body, now)
            else:
                billed, writes = cache.openai(api, body, now)
        except TooManyBreakpoints as exc:
            self._error(writer, api, 400, str(exc))
            return True
        self.log[-1]["billed"] = billed
        if self.script.get("latency"):
            await asyncio.sleep(self.script["latency"])
        answer = self._choose(prompt, body, api)
        if state is not None:  # the API searches the deferred tools first; the model calls what it found
            answer = _searched(state, api, body, prompt, answer, results, turn)
            self.log[-1]["searched"] = answer["_search"]
        self.cache.keep(writes, time.monotonic())
        with self._lock:
            self.billed.update(
                input=billed.input,
                cache_write=billed.cache_write,
                cache_read=billed.cache_read,
                output=OUTPUT_TOKENS,
                reading=bool(billed.cache_read),
                writing=bool(billed.cache_write),
            )
        if "html" in answer:
            data = answer["html"].encode()
            writer.write(
                f"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {len(data)}\r\n\r\n".encode() + data
            )
            return True
        rendered = _render(api, body, answer, next(self._ids), billed)
        if streams:  # Gemini's streamGenerateContent?alt=sse: one chunk, the whole answer
            data = gemini_wire.events(rendered)
            writer.write(
                f"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {len(data)}\r\n\r\n".encode()
                + data
            )
            return True
        self._write(writer, 200, rendered, announced)
        return True

    def _bucket(self) -> tuple[bool, dict[str, str]]:
        """The script's rate limit: (refused, the headers to send)."""
        limit = self.script.get("rate_limit")
        if not limit:
            return False, {}
        rps, burst = float(limit["rps"]), float(limit.get("burst", limit["rps"]))
        with self._lock:
            now = time.monotonic()
            if self._tokens is None:
                self._tokens, self._refilled = burst, now
            self._tokens = min(burst, self._tokens + (now - self._refilled) * rps)
            self._refilled = now
            refused = self._tokens < 1
            if refused:
                self.rate_limited += 1
            else:
                self._tokens -= 1
                self.admitted.append(now)
            left, full_in = int(self._tokens), (burst - self._tokens) / rps
        headers = {"retry-after": str(limit.get("retry_after", "1"))} if refused else {}
        style = limit.get("headers")
        if style == "openai":
            headers |= {
                "x-ratelimit-limit-requests": f"{rps * 60:g}",
                "x-ratelimit-remaining-requests": str(left),
                "x-ratelimit-reset-requests": f"{full_in * 1000:.0f}ms",
            }
        elif style == "anthropic":
            reset = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + full_in)) + "Z"
            headers |= {
                "anthropic-ratelimit-requests-limit": f"{rps * 60:g}",
                "anthropic-ratelimit-requests-remaining": str(left),
                "anthropic-ratelimit-requests-reset": reset,
            }
        return refused, headers

    def _error(
        self, writer: asyncio.StreamWriter, api: str, status: int, message: str, headers: dict[str, str] | None = None
    ) -> None:
        if api == "gemini":
            payload = gemini_wire.error(status, message)
        elif api == "anthropic":
            payload = {
                "type": "error",
                "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": message},
                "request_id": "req_fake",
            }
        else:
            payload = {
                "error": {
                    "message": message,
                    "type": "rate_limit_exceeded" if status == 429 else "error",
                    "param": None,
                    "code": None,
                }
            }
        self._write(writer, status, payload, headers)

    def _take_fault(self, prompt: str) -> dict[str, Any] | None:
        with self._lock:
            for fault in self.faults:
                if fault.get("match", "*") not in ("*", prompt):
                    continue
                times = fault.get("times")
                if times is None:
                    return fault
                if times > 0:
                    fault["times"] = times - 1
                    return fault
        return None

    def _choose(self, prompt: str, body: dict[str, Any], api: str) -> dict[str, Any]:
        options = self.script.get("answers", {}).get(prompt)
        if options is None:
            options = next((a for text, a in self.script.get("contains", {}).items() if text in prompt), None)
        if options is None:
            options = self.script.get("default", {"text": "I can answer that myself."})
        descriptions = _descriptions(api, body) | dict.fromkeys(_referenced(api, body), "")
        results, turn = _history(api, body)
        if isinstance(options, list):
            options = next(
                (
                    o
                    for o in options
                    if _applies(o, descriptions, results, turn)
                    and o.get("model", body.get("model")) == body.get("model")
                ),
                {"text": "no variant applies"},
            )
        with self._lock:
            n = self._answered[prompt]
            self._answered[prompt] += 1
        if "random" in options:
            rng = random.Random(f"{self.script.get('seed', 0)}:{prompt}:{n}")
            options = rng.choices(options["random"], weights=options.get("weights"))[0]
        if options.get("first") and descriptions:
            options = {"tool": next(iter(descriptions)), "args": options.get("args", {})}
        if "like" in options:  # the model calls what it was sent: the tool as the client named it
            sent = _sent_as(options["like"], descriptions)
            rest = {k: v for k, v in options.items() if k != "like"}
            options = rest | {"tool": sent} if sent else {"text": f"I have no tool like {options['like']}."}
        return options


def _searched(
    state: tool_search.Searching,
    api: str,
    body: dict[str, Any],
    prompt: str,
    answer: dict[str, Any],
    results: list[dict[str, Any]],
    turn: int,
) -> dict[str, Any]:
    """The answer behind the API's tool search: on the first turn the model searches (its query, what
    the search returned); later turns reuse what earlier searches loaded. `_search` says it for the
    rendering and the log."""
    earlier = _found_before(api, body)
    if turn > 0 and earlier:
        return tool_search.callable_answer(state, answer, earlier) | {"_search": None}
    query, got = tool_search.search(state, prompt, answer)
    found = got if isinstance(got, list) else []
    said: dict[str, Any] = {
        "kind": state.kind,
        "query": query,
        "found": found,
        "error": None if isinstance(got, list) else got,
    }
    if state.kind == "openai":
        said["namespace"] = state.namespace
        said["loaded"] = [state.deferred[n] for n in found]
    return tool_search.callable_answer(state, answer, found) | {"_search": said}


def _found_before(api: str, body: dict[str, Any]) -> list[str]:
    """The tools earlier searches of this conversation found (their blocks or items came back)."""
    names: list[str] = []
    if api == "anthropic":
        for message in body.get("messages") or []:
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_search_tool_result":
                    names += [r["tool_name"] for r in (block.get("content") or {}).get("tool_references", [])]
    elif isinstance(body.get("input"), list):
        for item in body["input"]:
            if item.get("type") == "tool_search_output":
                for tool in item.get("tools", []):
                    names += (
                        [f["name"] for f in tool.get("tools", [])]
                        if tool.get("type") == "namespace"
                        else [tool.get("name")]
                    )
    return names


def _referenced(api: str, body: dict[str, Any]) -> list[str]:
    """The tools a client's own search loaded: `tool_reference` blocks in its tool results, which the
    API expands into their definitions (Claude Code's ToolSearch)."""
    if api != "anthropic":
        return []
    names = []
    for message in body.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for part in inner if isinstance(inner, list) else []:
                if isinstance(part, dict) and part.get("type") == "tool_reference":
                    names.append(str(part.get("tool_name")))
    return names


def _holds(when: dict[str, str] | None, descriptions: dict[str, str]) -> bool:
    return not when or all(text in descriptions.get(tool, "") for tool, text in when.items())


def _sent_as(name: str, descriptions: dict[str, str]) -> str | None:
    """The tool of the request named `name`, or named like a client prefixes it (`mcp__srv__name`,
    `mcp_srv_name`, Copilot CLI's `srv-name`): a model picks among the tools it was sent, by what it reads."""
    if name in descriptions:
        return name
    return next((sent for sent in descriptions if sent and sent.endswith(("_" + name, "-" + name))), None)


def _applies(option: dict[str, Any], descriptions: dict[str, str], results: list[dict[str, Any]], turn: int) -> bool:
    if not _holds(option.get("when"), descriptions):
        return False
    if "like" in option and _sent_as(option["like"], descriptions) is None:
        return False  # not sent: the next variant answers
    if "turn" in option and option["turn"] != turn:
        return False
    if "tools_at_least" in option and len(descriptions) < option["tools_at_least"]:
        return False
    for tool, wanted in (option.get("after") or {}).items():
        latest = next((r for r in reversed(results) if r["tool"] == tool), None)
        if latest is None:
            return False
        if wanted == "error" and not latest["error"]:
            return False
        if wanted != "error" and wanted not in latest["content"]:
            return False
    return True


NOTES = (  # a client's own notes to the model in the user's turn (Claude Code's, Copilot CLI's, Codex's)
    "<system-reminder>",
    "<system_reminder>",
    "<environment_context>",
    "# AGENTS.md instructions",
    "<user_instructions>",
)
NOW = re.compile(r"^\s*<current_datetime>[^<]*</current_datetime>\s*")  # Copilot CLI's, before the user's words


def _text(content: Any) -> str:
    """A message's text; a client's own notes to the model (`<system-reminder>` blocks, as Claude Code
    puts before the user's words; Codex's `<environment_context>` message) are not the user's prompt."""
    if isinstance(content, list):
        return "".join(
            NOW.sub("", part.get("text", ""))
            for part in content
            if isinstance(part, dict) and not str(part.get("text", "")).lstrip().startswith(NOTES)
        )
    if isinstance(content, str) and content.lstrip().startswith(NOTES):
        return ""
    return content if isinstance(content, str) else ""


def _prompt(api: str, body: dict[str, Any]) -> str:
    """The conversation's first user text (in a multi-turn request, later user turns carry results)."""
    if api == "gemini":
        return gemini_wire.prompt(body)
    if api == "responses":
        given = body.get("input")
        if isinstance(given, str):
            return given
        users = (_text(m.get("content")) for m in given or [] if m.get("role") == "user")
        return next((t for t in users if t), "")
    users = (_text(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user")
    return next((t for t in users if t), "")


def _history(api: str, body: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The tool results a request carries, in order ({tool, content, error}), and how many earlier
    model turns called tools."""
    names: dict[str, str] = {}
    results: list[dict[str, Any]] = []
    turn = 0
    if api == "gemini":
        return gemini_wire.history(body)
    if api == "responses":
        given = body.get("input")
        previous = None
        for item in given if isinstance(given, list) else []:
            kind = item.get("type")
            if kind == "function_call":
                names[item.get("call_id", "")] = item.get("name", "")
                turn += previous != "function_call"
            elif kind == "function_call_output":
                output = item.get("output")
                text = output if isinstance(output, str) else json.dumps(output)
                tool = names.get(item.get("call_id", ""), "")
                results.append({"tool": tool, "content": text, "error": text.lower().startswith("error")})
            previous = kind
        return results, turn
    for m in body.get("messages") or []:
        content = m.get("content")
        if api == "anthropic" and isinstance(content, list):
            uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            for block in uses:
                names[block.get("id", "")] = block.get("name", "")
            turn += bool(uses and m.get("role") == "assistant")
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = _text(block.get("content"))
                    tool = names.get(block.get("tool_use_id", ""), "")
                    results.append({"tool": tool, "content": text, "error": bool(block.get("is_error"))})
        elif api == "chat":
            if m.get("role") == "assistant" and m.get("tool_calls"):
                turn += 1
                for call in m["tool_calls"]:
                    names[call.get("id", "")] = call.get("function", {}).get("name", "")
            if m.get("role") == "tool":
                text = _text(content)
                tool = names.get(m.get("tool_call_id", ""), "")
                results.append({"tool": tool, "content": text, "error": text.lower().startswith("error")})
    return results, turn


def _system(body: dict[str, Any]) -> str | None:
    return next((m.get("content") for m in body.get("messages") or [] if m.get("role") == "system"), None)


def _tool_names(api: str, body: dict[str, Any]) -> list[str]:
    return list(_descriptions(api, body))


def _descriptions(api: str, body: dict[str, Any]) -> dict[str, str]:
    """Each tool the request offers (a namespace's functions too; not an API's own search tool, but a
    client's own: `tool_search` with `execution: client`, and the functions its searches loaded)."""
    if api == "gemini":
        return gemini_wire.descriptions(body)
    out = {}
    for tool in body.get("tools") or []:
        if tool.get("type") == "tool_search" and tool.get("execution") == "client":
            out["tool_search"] = str(tool.get("description") or "")
            continue
        if str(tool.get("type", "")).startswith(("tool_search", "namespace")):
            for spec in tool.get("tools", []) if tool.get("type") == "namespace" else []:
                out[spec.get("name")] = spec.get("description") or ""
            continue
        spec = tool.get("function", tool) if api == "chat" else tool
        if spec.get("name"):  # a hosted tool (web_search) has none
            out[spec.get("name")] = spec.get("description") or ""
    for space in _loaded(body):
        out |= {f.get("name"): f.get("description") or "" for f in space.get("tools", [])}
    return out


def _loaded(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The namespaces (and functions) a client's own search loaded: its `tool_search_output` items."""
    given = body.get("input")
    out: list[dict[str, Any]] = []
    for item in given if isinstance(given, list) else []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output" and item.get("execution") == "client":
            for tool in item.get("tools") or []:
                out.append(tool if tool.get("type") == "namespace" else {"name": None, "tools": [tool]})
    return out


def _replayed(api: str, body: dict[str, Any]) -> list[str]:
    """What earlier turns' reasoning came back: Anthropic thinking signatures (the API refuses a
    tool_result after thinking without them), Responses reasoning items' encrypted content."""
    if api == "anthropic":
        return [
            b.get("signature", "")
            for m in body.get("messages") or []
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "thinking"
        ]
    if api == "responses" and isinstance(body.get("input"), list):
        return [i.get("encrypted_content", "") for i in body["input"] if i.get("type") == "reasoning"]
    if api == "gemini":  # a model turn's thought signatures (Gemini 3 wants them back)
        return gemini_wire.signatures(body)
    return []


def _extra(api: str, body: dict[str, Any]) -> dict[str, Any]:
    known = {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "system",
        "max_tokens",
        "temperature",
        "seed",
        "input",
        "store",
        "instructions",
    }
    return {k: v for k, v in body.items() if k not in known}


def _calls(answer: dict[str, Any]) -> list[dict[str, Any]]:
    if "calls" in answer:
        return answer["calls"]
    return [answer] if answer.get("tool") else []


def _args_of(call: dict[str, Any]) -> Any:
    """A call's arguments as an object (Gemini's `args`), not text."""
    given = _arguments(call)
    try:
        return json.loads(given) if isinstance(given, str) else given
    except ValueError:
        return {}


def _arguments(call: dict[str, Any]) -> Any:
    if call.get("object_args"):
        return call.get("args", {})
    return call["raw_args"] if "raw_args" in call else json.dumps(call.get("args", {}))


def _breakpoints(body: dict[str, Any]) -> list[str]:
    """Where a request's cache_control breakpoints are: "tools[-1]", "system", "messages[i]"."""
    tools = body.get("tools") or []
    out = [f"tools[{i - len(tools)}]" for i, t in enumerate(tools) if "cache_control" in t]
    system = body.get("system")
    out += ["system" for b in (system if isinstance(system, list) else []) if "cache_control" in b]
    for i, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        out += [f"messages[{i}]" for b in (content if isinstance(content, list) else []) if "cache_control" in b]
    return out


OUTPUT_TOKENS = 20
RAW_INPUT, RAW_INPUTS = "\u0000raw input\u0000", "\u0000raw inputs\u0000"


_TOOLS_SEEN: list[tuple[bytes, Any]] = []  # the last tool list parsed: (its JSON as the SDKs write it, the list)
_TOOLS_MARK = b'"\\u0000fake-tools"'


def _parsed(raw: bytes) -> Any:
    """A request body's JSON: the same objects as json.loads. The tool list, most of a large surface's
    body and the same bytes in every request of one tool order, is parsed once and shared (the fake
    never changes a body): a body holding the last list's JSON is parsed without it. orjson where it
    reads the text, else the standard library (lone surrogates, NaN, integers past 64 bits)."""
    for text, tools in _TOOLS_SEEN:
        if len(text) > 4096 and text in raw:
            body = _loads(raw.replace(text, _TOOLS_MARK, 1))
            if isinstance(body, dict) and body.get("tools") == "\x00fake-tools":
                return {**body, "tools": tools}
    body = _loads(raw)
    if isinstance(body, dict) and isinstance(body.get("tools"), list):
        text = json.dumps(body["tools"], ensure_ascii=False, separators=(",", ":")).encode()
        _TOOLS_SEEN[:] = [(text, body["tools"])]
    return body


def _loads(raw: bytes) -> Any:
    if orjson is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            return orjson.loads(raw)
    return json.loads(raw)


def _render(api: str, body: dict[str, Any], answer: dict[str, Any], n: int, billed: Billed) -> dict[str, Any]:
    calls = [] if answer.get("refusal") else _calls(answer)
    text = answer.get("text", "")
    model = body.get("model", "fake")
    if api == "gemini":
        return gemini_wire.render(model, answer, calls, _args_of, n, billed.prompt, OUTPUT_TOKENS)
    if api == "anthropic":
        content: list[dict[str, Any]] = []
        raw_inputs: list[str] = []
        if answer.get("thinking"):  # extended thinking: the API wants the block back, signature and all
            content.append({"type": "thinking", "thinking": answer["thinking"], "signature": f"sig-{n}"})
        searched = answer.get("_search")
        if searched:  # the API's search ran first: the model's query, then what it found (or why not)
            name = f"tool_search_tool_{searched['kind']}"
            key = "pattern" if searched["kind"] == "regex" else "query"
            content.append({"type": "server_tool_use", "id": f"srvtoolu_{n}", "name": name,
                            "input": {key: searched["query"]}})  # fmt: skip
            result: dict[str, Any] = (
                {"type": "tool_search_tool_result_error", "error_code": "invalid_tool_input",
                 "error_message": searched["error"]}
                if searched["error"]
                else {"type": "tool_search_tool_search_result",
                      "tool_references": [{"type": "tool_reference", "tool_name": f} for f in searched["found"]]}
            )  # fmt: skip
            content.append({"type": "tool_search_tool_result", "tool_use_id": f"srvtoolu_{n}", "content": result})
        content += [{"type": "text", "text": text}] if text else []
        for i, call in enumerate(calls):
            args = call.get("args", {}) if "raw_args" not in call else {"_raw": call["raw_args"]}
            if "raw_input" in call:  # JSON text as the input object itself, spliced in by _write
                args = RAW_INPUT
                raw_inputs.append(call["raw_input"])
            content.append({"type": "tool_use", "id": f"toolu_{n}_{i}", "name": call["tool"], "input": args})
        stop = "refusal" if answer.get("refusal") else ("tool_use" if calls else "end_turn")
        stop = "max_tokens" if answer.get("truncated") else stop
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": billed.input,
                "cache_creation_input_tokens": billed.cache_write,
                "cache_read_input_tokens": billed.cache_read,
                "cache_creation": {"ephemeral_5m_input_tokens": billed.cache_write, "ephemeral_1h_input_tokens": 0},
                "output_tokens": OUTPUT_TOKENS,
                "service_tier": "standard",
                **(
                    {"server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0, "tool_search_requests": 1}}
                    if searched
                    else {}
                ),
            },
            **({RAW_INPUTS: raw_inputs} if raw_inputs else {}),
        }
    if api == "chat":
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if answer.get("refusal"):  # the model's refusal comes in its own field, the content null
            message["refusal"] = text or "I can't help with that."
            message["content"] = None
        finish = "length" if answer.get("truncated") else "stop"
        if calls and answer.get("legacy"):
            message["function_call"] = {"name": calls[0]["tool"], "arguments": _arguments(calls[0])}
            finish = "function_call"
        elif calls:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function", "function": {"name": c["tool"], "arguments": _arguments(c)}}
                for i, c in enumerate(calls)
            ]
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {
                "prompt_tokens": billed.prompt,
                "completion_tokens": OUTPUT_TOKENS,
                "total_tokens": billed.prompt + OUTPUT_TOKENS,
                "prompt_tokens_details": {"cached_tokens": billed.cache_read, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
        }
    output: list[dict[str, Any]] = []
    if answer.get("thinking"):  # a reasoning item; with store: false only its encrypted content travels
        item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{n}", "summary": []}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            item["encrypted_content"] = f"enc-{n}"
        output.append(item)
    if answer.get("refusal"):
        said = text or "I can't help with that."
        part: dict[str, Any] = {"type": "refusal", "refusal": said}
        output.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                       "content": [part]})  # fmt: skip
    elif text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "incomplete" if answer.get("truncated") else "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    searched = answer.get("_search")
    if searched:  # the hosted search: its call (the paths and query), then the functions it loaded
        arguments = {"paths": [searched["namespace"]] if searched["namespace"] else [], "query": searched["query"]}
        output.insert(0, {"type": "tool_search_call", "id": f"tsc_{n}", "status": "completed", "arguments": arguments,
                          "call_id": None, "execution": "server"})  # fmt: skip
        loaded = [dict(f) for f in searched["loaded"]]
        tools = [{"type": "namespace", "name": searched["namespace"], "description": "", "tools": loaded}]
        output.insert(1, {"type": "tool_search_output", "id": f"tso_{n}", "status": "completed", "call_id": None,
                          "execution": "server", "tools": tools if searched["namespace"] else loaded})  # fmt: skip
    spaced = _namespaces(body)
    own_search = any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in body.get("tools") or [])
    for i, call in enumerate(calls):
        if own_search and call["tool"] == "tool_search":  # the client's own search: it runs it
            arguments = call.get("args") or {"query": ""}
            output.append({"type": "tool_search_call", "id": f"ts_{n}_{i}", "call_id": f"tsc_{n}_{i}",
                           "execution": "client", "status": "completed", "arguments": arguments})  # fmt: skip
            continue
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": f"call_{n}_{i}",
                "name": call["tool"],
                "arguments": _arguments(call),
                "status": "completed",
                **({"namespace": spaced[call["tool"]]} if call["tool"] in spaced else {}),
            }
        )
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1700000000,
        "model": model,
        "status": "incomplete" if answer.get("truncated") else "completed",
        **({"incomplete_details": {"reason": "max_output_tokens"}} if answer.get("truncated") else {}),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": output,
        "usage": {
            "input_tokens": billed.prompt,
            "input_tokens_details": {"cached_tokens": billed.cache_read, "cache_write_tokens": billed.cache_write},
            "output_tokens": OUTPUT_TOKENS,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": billed.prompt + OUTPUT_TOKENS,
        },
    }


def _namespaces(body: dict[str, Any]) -> dict[str, str]:
    """Each function of a namespace, by name → its namespace (a call of one carries it)."""
    out: dict[str, str] = {}
    for tool in [*(body.get("tools") or []), *_loaded(body)]:
        if tool.get("type") == "namespace":
            out |= {f.get("name"): tool.get("name") for f in tool.get("tools", [])}
    return out


class _Captured:
    """Stands in for a connection's writer: one batch request's whole HTTP answer, kept."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data


def main() -> None:
    script = {}
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            script = json.load(f)
    api = FakeModelAPI(script).start()
    print(f"PORT={api.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        api.stop()


if __name__ == "__main__":
    main()
