"""The providers toolselect knows, by name: where each one's factory lives and which environment
variables hold its key. The one list of provider names (options, config, the Action and the docs
read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderInfo:
    factory: str  # "module:function"; the function takes a ModelCall, the Throttle and the environment
    keys: tuple[str, ...] = ()  # environment variables that hold its API key (none: answered locally)
    max_tools: int | None = None  # the most tools one request may offer (OpenAI's APIs refuse more than 128)
    takes_model: bool = True  # the model's name reaches it (bm25 has none; a `command` picker is told it)

    @property
    def api(self) -> bool:
        """A model API: needs a model name and a key, and its answers are cached."""
        return bool(self.keys)


PROVIDERS: dict[str, ProviderInfo] = {
    "bm25": ProviderInfo("toolselect.providers.bm25:make", takes_model=False),
    "command": ProviderInfo("toolselect.providers.command:make"),
    "anthropic": ProviderInfo("toolselect.providers.anthropic:make", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")),
    "openai": ProviderInfo("toolselect.providers.openai:make_chat", ("OPENAI_API_KEY",), max_tools=128),
    "openai-responses": ProviderInfo("toolselect.providers.openai:make_responses", ("OPENAI_API_KEY",), max_tools=128),
    "gemini": ProviderInfo("toolselect.providers.gemini:make", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
}
API_PROVIDERS = tuple(name for name, info in PROVIDERS.items() if info.api)
