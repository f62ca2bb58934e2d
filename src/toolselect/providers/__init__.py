"""Providers: given a prompt, a system prompt and the tool surface, return a pick.

One async method per provider. Factories import their SDK lazily, so `toolselect --version` and the
offline providers never pay for the model SDKs. A provider answers in *wire* names (the safe names
it was sent); the ask stage maps them back to MCP names.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from ..config import Settings
from ..pick import Pick
from ..pool import Pool


@dataclass(frozen=True)
class WireTool:
    """A tool as sent to a model: the safe name, the description and the input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Request:
    prompt: str
    system: str | None
    tools: tuple[WireTool, ...]
    sample: int = 0


class SampleError(Exception):
    """This sample failed (timeout, bad output, a transient API error after retries): scored ERROR."""


class Provider(Protocol):
    name: str
    model: str
    produces_args: bool  # False: tools only (bm25); argument metrics are reported as not measured
    cacheable: bool  # answers worth keeping in the answer cache (never for local programs)

    def identity(self) -> dict[str, Any]:
        """Everything besides the request that can change an answer (the cache key covers it)."""
        ...

    def connect(self) -> None:
        """Check credentials and build the client: fails fast, before the first case."""
        ...

    async def pick(self, request: Request) -> Pick: ...

    async def aclose(self) -> None: ...


# name → "module:factory"; each factory takes the run's Settings and Pool and returns a Provider.
PROVIDERS: dict[str, str] = {
    "bm25": "toolselect.providers.bm25:make",
    "command": "toolselect.providers.command:make",
    "anthropic": "toolselect.providers.anthropic:make",
    "openai": "toolselect.providers.openai:make_chat",
    "openai-responses": "toolselect.providers.openai:make_responses",
}


def make_provider(settings: Settings, pool: Pool) -> Provider:
    module_name, _, factory = PROVIDERS[settings.provider].partition(":")
    return getattr(importlib.import_module(module_name), factory)(settings, pool)
