"""What a provider is built from: one model call's who, where and how — nothing else of the run.

A run's models, its judge and its rewriter are each one `ModelCall`; the settings (settings.py) build
them, and a provider reads only this, so the providers sit below the settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelCall:
    provider: str  # a name of the registry (registry.PROVIDERS)
    model: str = ""
    base_url: str | None = None  # None: the provider's variable (OPENAI_BASE_URL, …), else its default
    params: Mapping[str, Any] = field(default_factory=dict)  # sent in every request's body as they are
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int = 4096  # the output cap
    timeout_s: float | None = None  # one request's deadline (None: the provider's default)
    max_retries: int = 5  # the SDK's retries of a transient failure
    prompt_cache: bool = True  # requests shaped for the API's prompt cache
    connections: int = 8  # the HTTP pool: the run's concurrency
    command: tuple[str, ...] | None = None  # provider `command`: the picker program
    cwd: Path = field(default_factory=Path.cwd)  # where a picker runs: the config's folder
    params_at: str = ""  # `file:line: ` of evals.params, for messages about them
