"""The APIs' own tool search on the wire (--tool-search): how a request defers its tools behind it,
and how an answer says what the search was asked and what it found.

Anthropic Messages (GA; `anthropic.types`: ToolSearchToolRegex20251119Param, ToolSearchToolBm25_20251119Param,
ServerToolUseBlock, ToolSearchToolResultBlock, ToolSearchToolSearchResultBlock, ToolReferenceBlock,
ToolSearchToolResultErrorObject): the search tool in `tools`, every other tool `defer_loading: true`;
the answer holds a `server_tool_use` block (`input.pattern` or `input.query`), then a
`tool_search_tool_result` block whose content lists `tool_reference`s (or a `tool_search_tool_result_error`),
then the model's own `tool_use` of a tool it found. Both blocks go back verbatim in a conversation's next turn.

OpenAI Responses (`openai.types.responses`: ToolSearchTool, NamespaceTool, ResponseToolSearchCall,
ResponseToolSearchOutputItem): a `tool_search` tool, the tools as `function`s `defer_loading: true` in a
`namespace`; the output holds a `tool_search_call` (its `arguments`), a `tool_search_output` (the
tools it loaded, as a namespace of functions) and the model's `function_call` (with `namespace`).
docs/tool-search.md has the sources and dates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..pick import Search
from . import ToolSearch, WireTool

ANTHROPIC_TOOLS = {
    "anthropic-regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
    "anthropic-bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
}
PROVIDER_OF = {"anthropic-regex": "anthropic", "anthropic-bm25": "anthropic", "openai": "openai-responses"}
MAX_QUERY = 500  # characters of a query kept in a report
RESULTS = {"anthropic-regex": 5, "anthropic-bm25": 5, "openai": 5}  # tools one search returns at most (k)


def anthropic_tools(tools: Sequence[dict[str, Any]], search: ToolSearch) -> list[dict[str, Any]]:
    """The request's `tools`: the search tool, the eager tools (loaded), then every other tool deferred.
    The loaded ones come first: a prompt-cache breakpoint goes on the last of them (the API refuses
    one on a deferred tool)."""
    loaded = [t for t in tools if t["name"] in search.eager]
    deferred = [{**t, "defer_loading": True} for t in tools if t["name"] not in search.eager]
    return [dict(ANTHROPIC_TOOLS[search.mode]), *loaded, *deferred]


def anthropic_searches(blocks: Sequence[Any]) -> tuple[tuple[Search, ...], tuple[dict[str, Any], ...]]:
    """The searches an answer's content made (the query, the tools found, in order), and the blocks
    that say so, to send back in a conversation's next turn."""
    asked: dict[str, str] = {}
    found: list[Search] = []
    kept: list[dict[str, Any]] = []
    for block in blocks:
        kind = _get(block, "type")
        if kind == "server_tool_use" and str(_get(block, "name", "")).startswith("tool_search_tool_"):
            given = _get(block, "input") or {}
            query = _get(given, "pattern") or _get(given, "query") or ""
            asked[str(_get(block, "id"))] = query if isinstance(query, str) else json.dumps(query)
            kept.append(_dumped(block))
        elif kind == "tool_search_tool_result":
            content = _get(block, "content")
            names = [str(_get(r, "tool_name")) for r in (_get(content, "tool_references") or [])]
            query = asked.get(str(_get(block, "tool_use_id")), "")
            found.append(Search(query[:MAX_QUERY], tuple(names)))
            kept.append(_dumped(block))
    return tuple(found), tuple(kept)


def responses_tools(tools: Sequence[WireTool], search: ToolSearch) -> list[dict[str, Any]]:
    """The request's `tools`: OpenAI's tool search, and the tools as functions of one namespace (the
    server's), each deferred but the eager ones."""
    functions = [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}
        | ({} if t.name in search.eager else {"defer_loading": True})
        for t in tools
    ]
    namespace = {
        "type": "namespace",
        "name": search.namespace,
        "description": f"The tools of the {search.namespace} MCP server.",
        "tools": functions,
    }
    return [{"type": "tool_search"}, namespace]


def responses_searches(items: Sequence[Any]) -> tuple[tuple[Search, ...], tuple[dict[str, Any], ...]]:
    """The searches a Responses answer's output made, and the items to send back next turn."""
    found: list[Search] = []
    kept: list[dict[str, Any]] = []
    query = ""
    for item in items:
        kind = _get(item, "type")
        if kind == "tool_search_call":
            arguments = _get(item, "arguments")
            said = _get(arguments, "query") if isinstance(arguments, dict) else arguments
            query = said if isinstance(said, str) else json.dumps(said, ensure_ascii=False, default=str)
            kept.append(_dumped(item))
        elif kind == "tool_search_output":
            names: list[str] = []
            for tool in _get(item, "tools") or []:
                if _get(tool, "type") == "namespace":
                    names += [str(_get(f, "name")) for f in _get(tool, "tools") or []]
                else:
                    names.append(str(_get(tool, "name")))
            found.append(Search(query[:MAX_QUERY], tuple(names)))
            kept.append(_dumped(item))
            query = ""
    return tuple(found), tuple(kept)


def _get(value: Any, key: str, default: Any = None) -> Any:
    """A field of an SDK object or of a plain dict (a batch's answer, a gateway's)."""
    if isinstance(value, dict):
        return value.get(key, default)
    return getattr(value, key, default)


def _dumped(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else value.model_dump(exclude_none=True)
