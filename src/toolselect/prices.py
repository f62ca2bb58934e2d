"""Estimated cost: list prices in USD per million tokens (input, output).

A rough guide for budgeting, matched by model-name prefix (dated ids included). Prices change:
set `evals.price: {input: X, output: Y}` (USD per million tokens) to use your own. A model with no
entry gets no estimate, never a made-up one.
"""

from __future__ import annotations

from collections.abc import Mapping

# Published list prices (USD per 1M tokens) as last checked; longest matching prefix wins.
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-5": (1.25, 10.0),
}


def price_for(model: str, override: Mapping[str, float] | None = None) -> tuple[float, float] | None:
    if override:
        return float(override["input"]), float(override["output"])
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def cost_usd(
    model: str, input_tokens: int, output_tokens: int, override: Mapping[str, float] | None = None
) -> float | None:
    price = price_for(model, override)
    if price is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 6)
