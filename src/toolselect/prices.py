"""What a run costs: list prices in USD per million tokens — input, output, and input read from or
written to the API's prompt cache — and the batch discount.

Matched by model-name prefix (dated ids included; the longest matching prefix wins). Prices change:
`evals.price: {input: X, output: Y, cache_read: Z, cache_write: W}` (USD per million tokens) uses
your own; without `cache_read`/`cache_write` there, cached input is priced as uncached input (what it
costs at most). A model with no entry and no `evals.price` gets tokens only, never a made-up cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

CHECKED = "2026-12-01"  # when the table below was last checked against the providers' price pages
BATCH_DISCOUNT = 0.5  # both batch APIs bill half the synchronous price, every kind of token
# the shortest prefix either API caches (Anthropic's Sonnet and Opus, OpenAI; Anthropic's Haiku: 2048)
CACHE_MIN_TOKENS = 1024


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


def _anthropic(input: float, output: float) -> Price:
    """Anthropic: a cache read costs 0.1× the input price, a write (5-minute TTL) 1.25×."""
    return Price(input, output, round(input * 0.1, 6), round(input * 1.25, 6))


def _openai(input: float, output: float, cached: float) -> Price:
    """OpenAI: cached input at the model's own cached price; writing the cache costs nothing extra."""
    return Price(input, output, cached, input)


PRICES: dict[str, Price] = {
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
    "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-5": _openai(1.25, 10.0, 0.125),
}


class Tokens(Protocol):
    """Token counts as the API reported them (a Usage, a run's Spend)."""

    @property
    def input_tokens(self) -> int | None: ...
    @property
    def output_tokens(self) -> int | None: ...
    @property
    def prompt_cache_write_tokens(self) -> int: ...
    @property
    def prompt_cache_read_tokens(self) -> int: ...


def price_for(model: str, override: Mapping[str, float | None] | None = None) -> tuple[Price, str] | None:
    """The model's price and where it comes from ("evals.price", "list prices of <date>"), or None."""
    if override:
        given = float(override["input"] or 0.0)
        read, write = override.get("cache_read"), override.get("cache_write")
        read_usd = given if read is None else float(read)
        write_usd = given if write is None else float(write)
        price = Price(given, float(override["output"] or 0.0), read_usd, write_usd)
        return price, "evals.price"
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return (PRICES[max(matches, key=len)], f"list prices of {CHECKED}") if matches else None


def cost_of(price: Price, tokens: Tokens, batched: bool = False) -> float:
    usd = (
        (tokens.input_tokens or 0) * price.input
        + (tokens.output_tokens or 0) * price.output
        + tokens.prompt_cache_read_tokens * price.cache_read
        + tokens.prompt_cache_write_tokens * price.cache_write
    ) / 1_000_000
    return usd * BATCH_DISCOUNT if batched else usd


def cost_usd(
    model: str, tokens: Tokens, override: Mapping[str, float | None] | None = None, batched: Tokens | None = None
) -> float | None:
    """What `tokens` (and `batched`, billed at the batch discount) cost, or None with no price known."""
    found = price_for(model, override)
    if found is None:
        return None
    price = found[0]
    return round(cost_of(price, tokens) + (cost_of(price, batched, batched=True) if batched else 0.0), 6)


def cached_share(tokens: Tokens) -> float | None:
    """The share of input tokens read from the API's prompt cache (None: no input counted)."""
    total = (tokens.input_tokens or 0) + tokens.prompt_cache_write_tokens + tokens.prompt_cache_read_tokens
    return tokens.prompt_cache_read_tokens / total if total else None
