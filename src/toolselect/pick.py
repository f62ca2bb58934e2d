"""A pick: the first tool call a model made for one sample of a case (never executed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


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
    cached: bool = False


def failed(message: str, latency_ms: float | None = None) -> Pick:
    return Pick(error=message, latency_ms=latency_ms)


def skipped(reason: str) -> Pick:
    return Pick(skipped=reason)
