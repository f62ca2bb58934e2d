"""Providers: given a prompt, a system prompt and the tool surface, return a pick.

`Provider` is the whole contract the pipeline relies on: a provider overrides `pick` and
`identity` (and `connect`, `preload`, `write` when it talks to a model API); the base class gives
everything else a default, so the pipeline never probes with `getattr` or `isinstance`. The answer
cache is one more provider that wraps another (`factory.make_provider` puts it on every API provider).

Factories import their SDK lazily, so `toolselect --version` and the offline providers never pay
for the model SDKs. A provider answers in *wire* names (the safe names it was sent); the ask stage
maps them back to MCP names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..pick import Pick, ToolCall, Usage


@dataclass(frozen=True)
class WireTool:
    """A tool as sent to a model: the safe name, the description and the input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Stub:
    """What a stubbed tool answered a call: a result (any JSON value) or an error message."""

    result: Any = None
    error: str | None = None

    @property
    def text(self) -> str:
        """The answer as a tool result's text: a string as it is, other JSON as JSON text, an error
        as `Error: <message>` (Anthropic also marks it `is_error`)."""
        import json

        if self.error is not None:
            return f"Error: {self.error}"
        return self.result if isinstance(self.result, str) else json.dumps(self.result, ensure_ascii=False)


@dataclass(frozen=True)
class Turn:
    """An earlier model turn of a conversation: its text, its tool calls (wire names) and the stub's
    answer to each call, in order. Each API gets it in its own format (`call_<turn>_<i>` ids, ours,
    so a conversation's requests are the same on every run and its answers can be cached)."""

    text: str
    calls: tuple[ToolCall, ...]
    stubs: tuple[Stub, ...]
    replay: tuple[Any, ...] = ()  # the answer's reasoning the API wants back (Pick.replay)

    def call_ids(self, turn: int) -> list[str]:
        """Nine letters and digits each (`call00001`: turn 0, call 1): the strictest chat templates
        (Mistral's, on llama.cpp, vLLM and LM Studio) refuse any other shape."""
        return [f"call{turn:02d}{i:03d}" for i in range(len(self.calls))]


@dataclass(frozen=True)
class ToolSearch:
    """The API's own tool search (--tool-search): every tool of the request deferred behind it but the
    `eager` ones (wire names); the API searches, loads what it found and the model picks among those.
    `namespace`: the server's name, where an API groups deferred tools under one (OpenAI's)."""

    mode: str  # anthropic-regex, anthropic-bm25, openai (options.TOOL_SEARCH_MODES)
    eager: frozenset[str] = frozenset()
    namespace: str = "server"


@dataclass(frozen=True)
class Request:
    prompt: str
    system: str | None
    tools: tuple[WireTool, ...]
    sample: int = 0
    history: tuple[Turn, ...] = ()  # a trajectory's earlier turns; empty for the first (or only) one
    every_call: bool = False  # a conversation answers every call: an answer that kept only its first won't do
    search: ToolSearch | None = None  # the tools deferred behind the API's own tool search


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as JSON text, as the OpenAI APIs carry them back. Arguments that were not a
    JSON object go back as `{}` (their stub answered with an error): servers such as vLLM parse this
    text and refuse anything else."""
    import json

    return json.dumps(call.args if isinstance(call.args, dict) else {}, ensure_ascii=False)


class SampleError(Exception):
    """This sample failed (timeout, bad output, a transient API error after retries): scored ERROR."""


class BatchRefused(Exception):
    """The endpoint takes no batch (no batch API there, or it refused this one): the requests go
    synchronously, and the message says why."""


@dataclass(frozen=True)
class BatchState:
    """A batch as its API reports it: whether it has ended, and how many of its requests are done."""

    ended: bool
    done: int
    total: int


@dataclass
class Spend:
    """What the run cost: answers reused, requests made, tokens (all of them; `batched`: the share
    of them answered in a batch, at the batch price)."""

    cache_hits: int = 0
    api_calls: int = 0
    cache_writes: int = 0
    input_tokens: int = 0  # neither written to nor read from the API's prompt cache
    output_tokens: int = 0
    prompt_cache_write_tokens: int = 0
    prompt_cache_read_tokens: int = 0
    batched: Usage = field(default_factory=lambda: Usage(0, 0))

    def add(self, usage: Usage, batched: bool = False) -> None:
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.prompt_cache_write_tokens += usage.prompt_cache_write_tokens
        self.prompt_cache_read_tokens += usage.prompt_cache_read_tokens
        if batched:
            self.batched = self.batched + usage

    def synchronous(self) -> Usage:
        """The tokens of the requests asked one by one (at the full price)."""
        b = self.batched
        return Usage(
            self.input_tokens - (b.input_tokens or 0),
            self.output_tokens - (b.output_tokens or 0),
            self.prompt_cache_write_tokens - b.prompt_cache_write_tokens,
            self.prompt_cache_read_tokens - b.prompt_cache_read_tokens,
        )


class Provider(ABC):
    """Everything the pipeline calls on a provider."""

    name: str = ""
    produces_args = True  # False: tools only (bm25); argument metrics are reported as not measured
    produces_replies = False  # a model that writes: a reply without a call is read for its kind (replies.py)
    cacheable = False  # answers worth keeping in the answer cache (never a local program's)
    batchable = False  # the model API has a batch API: the `*_batch` methods below work

    def __init__(self, model: str) -> None:
        self.model = model
        self.spend = Spend()
        self.problems: list[str] = []  # said in the report's warnings (e.g. a capped retry-after)

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """Everything besides the request that can change an answer (the cache key covers it)."""

    @abstractmethod
    async def pick(self, request: Request) -> Pick:
        """The first tool call the model makes for this request (never executed)."""

    def preload(self) -> None:
        """Import what the provider needs (an SDK takes about a second) while the MCP server starts."""
        return None

    def connect(self) -> None:
        """Check credentials and build the client: fails fast, before the first case."""
        return None

    def ensure_connected(self) -> None:
        """Connect now if `connect` was skipped because every answer seemed to be cached."""
        return None

    async def write(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> str:
        """Text from the model (no tools): `toolselect init --draft` writes prompts with it, the judge
        reads answers. With `schema`, a JSON object of that shape, asked the API's structured way
        where it has one (falling back, and remembering, when the endpoint refuses it)."""
        raise ConfigError(
            f"provider {self.name} cannot write prompts: use anthropic, openai, openai-responses or gemini"
        )

    async def write_cached(
        self, system: str, prompt: str, schema: dict[str, Any] | None = None
    ) -> tuple[str | None, bool]:
        """`write` through the answer cache when the provider has one: (the text, or None when it is
        not cached and may not be asked (--cache-only); whether it came from the cache)."""
        return await self.write(system, prompt, schema), False

    async def forward(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """A driven client's own request (its whole body, in this provider's wire format), sent as it is
        but for the model (the run's); the API's whole answer. `headers`: the client's beta flags."""
        raise ConfigError(f"provider {self.name} can't answer a client's own requests: use the client's API")

    async def forward_cached(
        self, body: dict[str, Any], headers: dict[str, str], keyed: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any] | None, bool]:
        """`forward` through the answer cache when the provider has one: (the answer, or None when it is
        not cached and may not be asked; whether it came from the cache). `keyed`: the body as its key
        reads it (without what changes on every run of the client: its folder, its session)."""
        return await self.forward(body, headers), False

    @property
    def author(self) -> str:
        """Who writes: "openai gpt-4.1-mini"."""
        return f"{self.name} {self.model}".strip()

    async def aclose(self) -> None:
        """Close the client, if there is one."""
        return None

    # The answer cache's side; a provider that is not cached has nothing to say.

    def answer_key(self, request: Request) -> str | None:
        """The cache key this request's answer may be found under, or None when it is always asked."""
        return None

    def has_answer(self, key: str) -> bool:
        return False

    def cached_answer(self, key: str) -> Pick | None:
        """The answer kept under `key`, without counting it as used (a budget walks a trajectory's
        cached turns with it)."""
        return None

    def check_writable(self) -> None:
        """Before any request: fail when the answers paid for could not be kept."""
        return None

    def finish(self, session: set[str] | None = None, interrupted: bool = False) -> None:
        """After the run: record which cached answers it used (for `toolselect cache prune`)."""
        return None

    # The batch API's side (batching.py), for a provider that is `batchable`. Requests go with ids of
    # our own (letters, digits, `_` and `-`, at most 64: both APIs take them); answers are in wire names.

    async def submit_batch(self, requests: Sequence[tuple[str, Request]]) -> str:
        """Send the requests as one batch: its id. BatchRefused when the endpoint takes no batch."""
        raise BatchRefused(f"provider {self.name} has no batch API")

    async def batch_state(self, batch_id: str) -> BatchState:
        raise BatchRefused(f"provider {self.name} has no batch API")

    async def cancel_batch(self, batch_id: str) -> None:
        return None

    async def batch_results(self, batch_id: str) -> dict[str, Pick | str]:
        """An ended batch's answers by request id: the pick, or why that request failed (a string).
        A request that never ran (expired, or canceled) is not in it."""
        return {}

    def keep_batched(self, request: Request, pick: Pick) -> None:
        """A batch's answer to `request`, counted as a request made at the batch price (and kept in
        the answer cache, when there is one)."""
        self.spend.api_calls += 1
        if pick.usage is not None:
            self.spend.add(pick.usage, batched=True)
