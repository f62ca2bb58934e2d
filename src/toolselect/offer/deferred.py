"""Deferred loading, emulated for every provider: names first, a search, then the pick.

A client such as Claude Code puts only the names of a server's tools in context and offers a search
tool; a definition is loaded (sent with the next request) only once a search finds it. `Searching`
is one sample's loop, with no I/O of its own, in the shape of converse.Conversation:
`next_request()` gives the request to send, `record(pick)` takes the answer. A call to the search
tool is answered with the profile's ranking over the deferred tools (clients.search) and loads
what it found; the first call to any other tool is the sample's pick; so is an answer in text. A
model still searching after `searches` searches has picked the search tool itself. Every turn is a
request like any other, so the answer cache keeps each one, and a cached sample is free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..pick import Pick, Search, ToolCall, Usage
from ..providers import Request, Stub, Turn, WireTool


@dataclass(frozen=True)
class Deferral:
    """How a client defers the definitions: its search tool (a stub), the deferred tools as it names
    them, how it ranks them, how many one search loads, how many searches a sample may make."""

    tool: WireTool
    tools: tuple[WireTool, ...]
    mode: str  # keyword, bm25 or regex (clients.search)
    results: int
    searches: int
    query_arg: str = "query"
    max_arg: str | None = "max_results"


class Searching:
    def __init__(self, request: Request, deferral: Deferral, from_wire: Callable[[str], str]) -> None:
        self.request, self.deferral, self.from_wire = request, deferral, from_wire
        self.listing = [(t.name, t.description, t.input_schema) for t in deferral.tools]
        self.loaded: list[int] = []  # indices into deferral.tools, in the order they were found
        self.history: list[Turn] = []
        self.searches: list[Search] = []
        self.picks: list[Pick] = []
        self.chosen: tuple[Pick, ToolCall | None] | None = None
        self.ended: Pick | None = None  # a turn that failed or was not asked

    @property
    def done(self) -> bool:
        return self.ended is not None or self.chosen is not None

    @property
    def max_turns(self) -> int:
        """The most requests a sample takes: each search it may make, and the pick."""
        return self.deferral.searches + 1

    def next_request(self) -> Request | None:
        if self.done:
            return None
        tools = self.request.tools + tuple(self.deferral.tools[i] for i in self.loaded)
        return replace(self.request, tools=tools, history=tuple(self.history), every_call=True)

    def record(self, pick: Pick) -> None:
        if pick.error is not None or pick.skipped is not None:
            self.ended = pick
            return
        self.picks.append(pick)
        calls = pick.all_calls
        other = next((c for c in calls if c.tool != self.deferral.tool.name), None)
        if not calls or other is not None:
            self.chosen = (pick, other)
            return
        if len(self.searches) >= self.deferral.searches:  # still searching: its pick is the search tool
            self.chosen = (pick, calls[0])
            return
        stubs = tuple(self._search(call.args) for call in calls)
        self.history.append(Turn(pick.text, calls, stubs, pick.replay))

    def _search(self, args: Any) -> Stub:
        d = self.deferral
        query = args.get(d.query_arg) if isinstance(args, dict) else None
        if not isinstance(query, str) or not query.strip():
            return Stub(error=f"{d.tool.name} needs a {d.query_arg}")
        asked = args.get(d.max_arg) if d.max_arg else None
        limit = (
            min(asked, d.results) if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0 else d.results
        )
        from .clients import search  # a run with no client loads no client profiles

        found = search(d.mode, query, self.listing, limit)
        self.loaded += [i for i in found if i not in self.loaded]
        names = [d.tools[i].name for i in found]
        self.searches.append(Search(query[:500], tuple(self.from_wire(n) for n in names)))
        if not names:
            return Stub(result="No matching deferred tools found.")
        return Stub(result=f"Loaded {len(names)} tool definitions: {', '.join(names)}. They can be called now.")

    def outcome(self) -> Pick:
        """The sample's pick: the call it chose (in the server's names), the searches it made first."""
        searched = tuple(self.searches)
        if self.ended is not None:
            return replace(self.ended, searched=searched)
        assert self.chosen is not None
        pick, call = self.chosen
        usages = [p.usage for p in self.picks if p.usage]
        spent = replace(
            pick,
            latency_ms=sum(p.latency_ms or 0.0 for p in self.picks),
            usage=sum(usages, Usage(0, 0)) if usages else None,
            cached=bool(self.picks) and all(p.cached for p in self.picks),
            searched=searched,
        )
        if call is None:
            return spent
        return replace(spent, tool=self.from_wire(call.tool), args=call.args, raw_args=call.raw_args)
