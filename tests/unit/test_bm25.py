"""The offline provider: BM25 retrieval over the tool surface, deterministic, tools only."""

from __future__ import annotations

import asyncio

from toolselect.lexical import stem, tokenize
from toolselect.providers import Request, WireTool
from toolselect.providers.bm25 import BM25Provider

TOOLS = (
    WireTool(
        "get_weather",
        "Current weather conditions for a city right now.",
        {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}},
    ),
    WireTool(
        "get_forecast",
        "Weather forecast for the coming days.",
        {"type": "object", "properties": {"days": {"type": "integer", "description": "Number of days ahead"}}},
    ),
    WireTool("search_orders", "Find a customer's past orders by date or status.", {"type": "object", "properties": {}}),
)


def pick(prompt: str, tools=TOOLS, threshold: float = 1.0):
    return asyncio.run(BM25Provider(threshold, 1.2, 0.75).pick(Request(prompt, None, tools)))


def test_tokenize_splits_names_and_drops_stopwords():
    assert tokenize("getWeather for search_orders.v2 in NYC") == ["weather", "search", "order", "nyc"]
    assert stem("forecasts") == "forecast" and stem("raining") == "rain" and stem("cities") == "city"


def test_picks_the_best_tool_or_none():
    assert pick("what's the forecast for the next 5 days").tool == "get_forecast"
    assert pick("where are my orders from last week?").tool == "search_orders"
    joke = pick("tell me a joke")
    assert joke.tool is None and joke.args is None


def test_deterministic_and_independent_of_tool_order():
    a = pick("current weather in Paris")
    b = pick("current weather in Paris", tools=tuple(reversed(TOOLS)))
    assert a.tool == b.tool == "get_weather"
    assert a.text == b.text


def test_threshold_controls_restraint():
    assert pick("weather", threshold=100).tool is None


def test_scores_are_okapi_bm25_over_every_document_and_term():
    """The index visits only the documents that hold a term; each score is still BM25's sum over the
    query's terms (idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg))), zero where no term is held, in
    the documents' order."""
    import math

    from toolselect.lexical import BM25, tool_text

    docs = [tool_text(t.name, t.description, t.input_schema) for t in TOOLS]
    index = BM25.build(docs)
    n, avg = len(docs), sum(map(len, docs)) / len(docs)
    for query in (["weather", "city"], ["forecast", "day", "day"], ["order"], ["joke"], []):
        expected = []
        for doc in docs:
            score = 0.0
            for term in set(query):
                tf, df = doc.count(term), sum(term in d for d in docs)
                if tf:
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(doc) / avg))
            expected.append(score)
        assert index.scores(query) == expected, query
    assert index.scores(["joke"]) == [0.0, 0.0, 0.0]
