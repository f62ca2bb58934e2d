"""The APIs' server-side tool search, as the fake model API runs it (docs/tool-search.md has the sources).

Anthropic (tool_search_tool_regex_20251119 / tool_search_tool_bm25_20251119): every tool with
`defer_loading: true` is searchable; a search looks at the tool's name, its description, its argument
names and their descriptions, and returns at most 5 `tool_reference`s. The regex variant runs Python's
`re.search` (case-sensitive unless the pattern says `(?i)`) with a pattern of at most 200 characters;
a longer or malformed pattern is answered with a `tool_search_tool_result_error`, `invalid_tool_input`
(the SDK's codes). The BM25 variant ranks the same text for a natural-language query. Requests the API
refuses: every tool deferred (no tool left loaded), or a deferred tool with `cache_control`.

OpenAI Responses (`tool_search`, hosted): the deferred functions of the request (top level or in a
namespace) are loaded by a `tool_search_call` whose arguments name `paths` (a namespace or a
function) and a `query`; OpenAI documents no ranking, so this fake loads the functions a path names,
and within a namespace the 5 that rank best for the query (BM25, as above). Refused: deferred
functions without `tool_search`, or `tool_search` with nothing deferred. A `tool_search` with
`execution: client` is the client's own (Codex): the model calls it as a `tool_search_call` with its
`arguments`, the client searches and sends the functions it loaded back in a `tool_search_output`,
and the model may call those next (model_api.py).

The model's side: a scripted answer may say `"search": "<pattern or query>"`; else the model writes
one from the prompt (its longer words, as a case-insensitive alternation for the regex variant; the
prompt itself for BM25). It can then call only a tool that is loaded or was found; any other call
becomes a reply that it found no tool for that.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_PATTERN = 200
RESULTS = 5
STOP = {"what", "when", "where", "which", "with", "from", "that", "this", "have", "will", "would", "could",
        "should", "about", "there", "their", "please", "tell", "show", "give", "your", "into", "does"}  # fmt: skip


@dataclass
class Searching:
    """A request's tool search: which kind, the deferred tools (name → definition), the loaded names."""

    kind: str  # regex, bm25, openai
    deferred: dict[str, dict[str, Any]]
    loaded: set[str]
    namespace: str | None = None
    problem: str | None = None  # a request the API refuses (400), in its words
    found: list[str] = field(default_factory=list)


def searching(api: str, body: dict[str, Any]) -> Searching | None:
    """The request's tool search, or None when it has none (and defers nothing)."""
    tools = body.get("tools") or []
    if api == "anthropic":
        kind = next(
            (("regex" if "regex" in t.get("type", "") else "bm25") for t in tools
             if str(t.get("type", "")).startswith(("tool_search_tool_regex", "tool_search_tool_bm25"))),
            None,
        )  # fmt: skip
        deferred = {t["name"]: t for t in tools if t.get("defer_loading")}
        loaded = {t["name"] for t in tools if not t.get("defer_loading") and "name" in t}
        if kind is None:
            return None
        problem = None
        if deferred and not [t for t in tools if not t.get("defer_loading")]:
            problem = "All tools have defer_loading set. At least one tool must be non-deferred."
        cached = next((n for n, t in deferred.items() if t.get("cache_control")), None)
        if cached:
            problem = (
                f"Tool '{cached}' cannot have both defer_loading=true and cache_control set. Tools with "
                "defer_loading cannot use prompt caching."
            )
        return Searching(kind, deferred, loaded, problem=problem)
    if api != "responses":
        return None
    if any(t.get("type") == "tool_search" and t.get("execution") == "client" for t in tools):
        return None  # the client's own search (Codex): it runs it and sends back what it loaded
    has_search = any(t.get("type") == "tool_search" for t in tools)
    deferred, loaded, namespace = {}, set(), None
    for t in tools:
        inner = t.get("tools", []) if t.get("type") == "namespace" else [t]
        if t.get("type") == "namespace":
            namespace = t.get("name")
        for f in inner:
            if f.get("type") != "function":
                continue
            (deferred.__setitem__(f["name"], f) if f.get("defer_loading") else loaded.add(f["name"]))
    if not has_search and not deferred:
        return None
    problem = None
    if deferred and not has_search:
        problem = "Invalid Value: 'tools.defer_loading'. Deferred tools require tools.tool_search."
    elif has_search and not deferred:
        problem = "Invalid Value: 'tools.tool_search'. tools.tool_search requires at least one deferred tool."
    return Searching("openai", deferred, loaded, namespace, problem)


def text_of(tool: dict[str, Any]) -> str:
    """What a search reads of a tool: its name, its description, its arguments' names and descriptions."""
    schema = tool.get("input_schema") or tool.get("parameters") or {}
    parts = [str(tool.get("name", "")), str(tool.get("description") or "")]
    for name, spec in (schema.get("properties") or {}).items():
        parts += [str(name), str((spec or {}).get("description") or "")]
    return "\n".join(parts)


def regex_search(pattern: str, tools: dict[str, dict[str, Any]]) -> list[str] | str:
    """The tools whose text the pattern matches (at most 5, in the request's order), or an error message."""
    if len(pattern) > MAX_PATTERN:
        return f"pattern exceeds {MAX_PATTERN} character limit"
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return f"invalid regex pattern: {exc}"
    return [name for name, tool in tools.items() if compiled.search(text_of(tool))][:RESULTS]


def words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def bm25_search(query: str, tools: dict[str, dict[str, Any]], k1: float = 1.2, b: float = 0.75) -> list[str]:
    """The tools ranked by BM25 for the query (a positive score only), best first, at most 5."""
    docs = {name: words(text_of(tool)) for name, tool in tools.items()}
    if not docs:
        return []
    average = sum(len(d) for d in docs.values()) / len(docs) or 1.0
    having = Counter(w for d in docs.values() for w in set(d))
    scores = {}
    for name, doc in docs.items():
        counts = Counter(doc)
        score = 0.0
        for w in set(words(query)):
            if w not in counts:
                continue
            idf = math.log(1 + (len(docs) - having[w] + 0.5) / (having[w] + 0.5))
            tf = counts[w]
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / average))
        if score > 0:
            scores[name] = score
    return sorted(scores, key=lambda n: (-scores[n], list(docs).index(n)))[:RESULTS]


def model_query(kind: str, prompt: str, answer: dict[str, Any]) -> str:
    """What the model searches for: the script's, else written from the prompt's longer words."""
    if "search" in answer:
        return str(answer["search"])
    if kind == "regex":
        kept = [w for w in dict.fromkeys(words(prompt)) if len(w) >= 4 and w not in STOP]
        return ("(?i)" + "|".join(kept))[:MAX_PATTERN] if kept else "(?i)."
    return prompt


def search(state: Searching, prompt: str, answer: dict[str, Any]) -> tuple[str, list[str] | str]:
    """The model's query and what the search returned (tool names, or an error message)."""
    query = model_query(state.kind, prompt, answer)
    if state.kind == "regex":
        return query, regex_search(query, state.deferred)
    return query, bm25_search(query, state.deferred)


def callable_answer(state: Searching, answer: dict[str, Any], found: list[str]) -> dict[str, Any]:
    """The scripted answer, if the tool it calls is loaded or was found; else a reply without a call."""
    calls = answer.get("calls") or ([answer] if "tool" in answer else [])
    reachable = state.loaded | set(found)
    if calls and any(c.get("tool") not in reachable for c in calls):
        return {"text": "I couldn't find a tool for that."}
    return answer
