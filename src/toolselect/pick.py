"""A pick: the first tool call a model made for one sample of a case (never executed); for a
trajectory case, the whole conversation's calls, each answered with a stub, as its trace."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .bounds import MAX_ARGS_DEPTH, nests_deeper

TOO_DEEP = f"(arguments nested deeper than {MAX_ARGS_DEPTH} levels)"
BUILT_IN = "(built-in: "  # a pick of a client's own tool: `(built-in: Grep)`, its own column


def built_in(name: str) -> str:
    """How a pick of the client's built-in tool `name` is recorded: not one of the server's tools."""
    return f"{BUILT_IN}{name})"


def is_built_in(tool: str | None) -> bool:
    return tool is not None and tool.startswith(BUILT_IN) and tool.endswith(")")


ALONGSIDE = "(alongside: "  # a pick of another server's tool (evals.alongside): `(alongside: github/search_code)`


def alongside(server: str, tool: str) -> str:
    return f"{ALONGSIDE}{server}/{tool})"


def is_foreign(tool: str | None) -> bool:
    """A pick of a tool that is not the server's: a client's built-in, or another server's beside it."""
    return is_built_in(tool) or (tool is not None and tool.startswith(ALONGSIDE) and tool.endswith(")"))


def _bounded(holder: Any) -> None:
    """Whatever an endpoint answered stays that sample's: arguments too deep become raw text."""
    if holder.args is not None and nests_deeper(holder.args, MAX_ARGS_DEPTH):
        object.__setattr__(holder, "args", None)
        object.__setattr__(holder, "raw_args", TOO_DEEP)


@dataclass(frozen=True)
class Usage:
    """What an answer cost in tokens, as the API counted them. `input_tokens` is the input neither
    written to nor read from the API's prompt cache (Anthropic's `input_tokens`; OpenAI's prompt
    tokens less their `cached_tokens`)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    prompt_cache_write_tokens: int = 0  # Anthropic's cache_creation_input_tokens (OpenAI writes free)
    prompt_cache_read_tokens: int = 0  # Anthropic's cache_read_input_tokens, OpenAI's cached_tokens

    @property
    def prompt_tokens(self) -> int:
        """The whole input: the request's size, cached or not."""
        return (self.input_tokens or 0) + self.prompt_cache_write_tokens + self.prompt_cache_read_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            (self.input_tokens or 0) + (other.input_tokens or 0),
            (self.output_tokens or 0) + (other.output_tokens or 0),
            self.prompt_cache_write_tokens + other.prompt_cache_write_tokens,
            self.prompt_cache_read_tokens + other.prompt_cache_read_tokens,
        )


@dataclass(frozen=True)
class ToolCall:
    """One tool call in a model's answer: the name as the model wrote it, the parsed arguments (None
    when the text was not JSON, kept in `raw_args`)."""

    tool: str
    args: Any = None
    raw_args: str | None = None

    def __post_init__(self) -> None:
        _bounded(self)


@dataclass(frozen=True)
class TraceCall:
    """A call in a trajectory: which model turn made it (0-based), the MCP name, the arguments, the
    stub's answer (a result, or an error message) and when the answer carrying it arrived."""

    turn: int
    tool: str
    args: Any
    raw_args: str | None
    result: Any = None
    error: str | None = None
    at_ms: float = 0.0  # the model time until the answer carrying it arrived (the turns' latencies: cached, the same)


@dataclass(frozen=True)
class Trace:
    """A whole conversation: every call in order, the final text answer (None when the loop ended
    without one), how many model turns it took, and whether it stopped at max_turns."""

    calls: tuple[TraceCall, ...]
    final: str | None
    turns: int
    hit_max_turns: bool = False


@dataclass(frozen=True)
class Search:
    """One search a client's deferred loading let the model make: its query, and the server's tools
    it found (their MCP names, best first), whose definitions the next request carried."""

    query: str
    found: tuple[str, ...]


@dataclass(frozen=True)
class Pick:
    """What the provider answered for one sample.

    `tool` is the MCP name (mapped back from the safe name sent to the API) or None for no call.
    `args` holds the parsed arguments; when the model wrote argument text that is not valid JSON,
    `args` is None and `raw_args` keeps the text. `error` means the provider failed for this sample;
    `skipped` means the sample was never asked (cache-only miss, or the run stopped first).
    """

    tool: str | None = None
    args: Any = None
    raw_args: str | None = None
    text: str = ""
    calls: int = 0
    latency_ms: float | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    error: str | None = None
    skipped: str | None = None
    unsent: str | None = None  # the client can't present the surface: never sent, and why
    cached: bool = False
    tool_calls: tuple[ToolCall, ...] = ()  # every call in the answer, in order (the first is `tool`)
    # what the API wants back verbatim in the next turn of a conversation: Anthropic's thinking
    # blocks (with their signatures), Responses' reasoning items (with their encrypted content)
    replay: tuple[Any, ...] = ()
    trace: Trace | None = None  # a trajectory case's whole conversation
    searched: tuple[Search, ...] = ()  # a deferred client's searches before the pick (offer/deferred.py)

    def __post_init__(self) -> None:
        _bounded(self)

    @property
    def all_calls(self) -> tuple[ToolCall, ...]:
        """Every call in this answer (an answer cached before calls were kept has only its first)."""
        if self.tool_calls or self.tool is None:
            return self.tool_calls
        return (ToolCall(self.tool, self.args, self.raw_args),)


@dataclass(frozen=True)
class Reading:
    """The judge's reading (evals.judge) of a trajectory's final answer after a tool failed: did it
    tell the user? (Not a gate's verdict.)"""

    surfaced: bool | None  # None: the judge's answer was neither yes nor no
    said: str  # the judge's own words (cut)
    cached: bool = False


def failed(message: str, latency_ms: float | None = None) -> Pick:
    return Pick(error=message, latency_ms=latency_ms)


def skipped(reason: str) -> Pick:
    return Pick(skipped=reason)


def parse_args(text: str) -> tuple[Any, str | None]:
    """Parse argument text: `(value, None)`, or `(None, text)` when it is not exactly one JSON value
    (trailing garbage included)."""
    if not text.strip():
        return {}, None  # some OpenAI-compatible servers send "" for a call without arguments
    try:
        return json.loads(text), None
    except (json.JSONDecodeError, TypeError):
        return None, text
    except RecursionError:  # nested beyond what the parser walks: no tool's arguments
        return None, TOO_DEEP
