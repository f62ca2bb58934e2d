"""How the tools are offered to the model: the raw tool list, or as a client presents it (clients.py:
its profile, its names and cut, its built-in tools and system prompt), with other servers' tools
beside (evals.alongside), or deferred behind the client's tool search (deferred.py) — and every name
as sent mapped back to what it is scored as. ask.py sends what this stage offers."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..pick import ALONGSIDE, Pick, Search, alongside, built_in
from ..providers import ToolSearch, WireTool
from ..providers.registry import PROVIDERS
from ..report.schema import ClientOut, DroppedOut
from ..surface import SAFE_NAME, Neighbour, Surface, safe_name
from .deferred import Deferral

if TYPE_CHECKING:  # a run that drives no client loads none of drive/; one with no client, no profiles
    from ..drive.sample import Driven
    from .clients import Presented, Profile


def wire_tools(surface: Surface) -> tuple[WireTool, ...]:
    return tuple(WireTool(t.wire_name, t.description, t.input_schema) for t in surface.tools)


@dataclass(frozen=True)
class Offer:
    """What every request of a run offers the model: the tools as sent (their wire names, in order)
    and the system prompt, with what each wire name is scored as — the server's name for the tool,
    a client's built-in (`(built-in: Grep)`) or another server's (`(alongside: github/search_code)`).
    `refused`: the client can't present the surface at all (a name over its limit that fails the
    session, too many tools for its API): nothing is sent, and every sample is CLIENT-FAILED with
    that reason."""

    tools: tuple[WireTool, ...]
    system: str | None
    back: Mapping[str, str]  # wire name → the tool it is scored as
    refused: str | None = None
    deferred: Deferral | None = None  # the client loads definitions only once a search finds them
    presented: Presented | None = None  # how the client presented the surface (None: the raw list)
    search: ToolSearch | None = None  # the tools deferred behind the API's own tool search (--tool-search)
    driven: Driven | None = None  # the real client asked for each sample (its own presentation, not the profile's)

    def from_wire(self, wire_name: str) -> str:
        """The tool behind a name the model answered with (unknown names pass through)."""
        return self.back.get(wire_name, wire_name)

    def named_back(self, pick: Pick) -> Pick:
        """An answer in the tools' own names: the pick, and what the API's searches found."""
        tool = self.from_wire(pick.tool) if pick.tool is not None else None
        if tool == pick.tool and not pick.searched:  # nothing to name back (the raw list's names are the tools')
            return pick
        searched = tuple(Search(s.query, tuple(self.from_wire(n) for n in s.found)) for s in pick.searched)
        return replace(pick, tool=tool, searched=searched)


def offer(
    surface: Surface,
    system: str | None,
    presented: Presented | None = None,
    beside: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> Offer:
    """The surface as offered: the raw tool list, or as a client presents it (its names, its cut, its
    built-in tools first and its system prompt before the run's). `beside`: other servers' tools
    (server label, MCP definition), after yours, named as the client names them; past the client's
    count, they are the ones cut."""
    if presented is None:
        return Offer(wire_tools(surface), system, {t.wire_name: t.name for t in surface.tools})
    from .clients import client_name, client_refusal

    profile = presented.profile
    builtins = tuple(WireTool(b.name, b.description, b.input_schema) for b in profile.builtins)
    taken = {b.name for b in builtins}
    back = {b.name: built_in(b.name) for b in builtins}
    server: list[WireTool] = []
    for shown in presented.shown:
        if shown.tool in presented.grouped:
            continue  # behind the client's tool groups: not offered directly
        tool = surface.get(shown.tool)
        assert tool is not None
        name = (
            shown.name if SAFE_NAME.fullmatch(shown.name) and shown.name not in taken else safe_name(shown.name, taken)
        )
        taken.add(name)
        cut = profile.description_max
        text = tool.description if cut is None or len(tool.description) <= cut else tool.description[:cut] + "…"
        server.append(WireTool(name, text, tool.input_schema))
        back[name] = tool.name
    room = None if profile.tools.max is None else max(0, profile.tools.max - len(server))
    for label, definition in list(beside)[:room]:
        tool_name = str(definition.get("name"))
        wire = client_name(profile, label, tool_name)
        wire = wire if SAFE_NAME.fullmatch(wire) and wire not in taken else safe_name(wire, taken)
        taken.add(wire)
        schema = definition.get("inputSchema")
        described = definition.get("description")
        server.append(
            WireTool(wire, described if isinstance(described, str) else "", schema if isinstance(schema, dict) else {})
        )
        back[wire] = alongside(label, tool_name)
    d = profile.deferred
    over = d.past is None or len(builtins) + len(server) > d.past
    if d.mode == "names" and d.tool is not None and d.search is not None and over:  # names listed, a search tool
        finder = WireTool(d.tool.name, d.tool.description, d.tool.input_schema)
        deferral = Deferral(finder, tuple(server), d.search, d.results, d.searches, d.tool.query, d.tool.max_results)
        listing = d.listing.replace("{names}", "\n".join(t.name for t in server))
        back[finder.name] = built_in(finder.name)
        deferred = "\n\n".join(p for p in (profile.system, listing, system) if p)
        return Offer((*builtins, finder), deferred, back, client_refusal(presented), deferral, presented)
    prompt = "\n\n".join(p for p in (profile.system, system) if p) or None
    tools = (*builtins, *server)
    if profile.order == "all":  # its own tools and the server's sorted together (opencode)
        tools = tuple(sorted(tools, key=lambda t: t.name.lower()))
    return Offer(tools, prompt, back, client_refusal(presented), presented=presented)


def offer_to(
    surface: Surface,
    system: str | None,
    profile: Profile | None,
    server: str,
    beside: Sequence[Neighbour] = (),
    tool_search: str = "off",
    eager: Sequence[str] = (),
) -> Offer:
    """The surface as `profile` presents it (`server`: the server's name in the client's tool names),
    with the servers `beside` it; the raw tool list when there is no client — deferred behind the
    API's own tool search (`tool_search`) but the `eager` tools."""
    if profile is None:
        raw = offer(surface, system)
        if tool_search == "off":
            return raw
        kept = frozenset(t.wire_name for t in surface.tools if t.name in set(eager))
        return replace(raw, search=ToolSearch(tool_search, kept, namespace_of(server)))
    from .clients import present

    presented = present(profile, server, surface.names)
    return offer(surface, system, presented, [(n.server, n.definition) for n in beside])


def namespace_of(server: str) -> str:
    """The server's name as an API's namespace takes it (letters, digits, `_` and `-`, at most 64)."""
    return (re.sub(r"[^A-Za-z0-9_-]+", "_", server).strip("_") or "server")[:64]


def client_without_a_model(models: Sequence[tuple[Profile | None, str]]) -> str | None:
    """Why a model of the run can't be asked as its client presents the surface: a client that hides
    tools behind a search or brings tools of its own needs a model that searches and weighs them; bm25
    and a `command` picker answer one request with one pick. Measured anyway, recall would read 0% and
    the client's tools would "steal" picks by shared words — blaming the descriptions for nothing."""
    for profile, provider in models:  # each model's client and provider
        if profile is None or PROVIDERS[provider].api:
            continue
        hides = profile.deferred.mode != "none"
        if hides or profile.builtins:
            what = (
                "hides your tools behind its tool search"
                if hides
                else f"brings {len(profile.builtins)} tools of its own"
            )
            return (
                f"the client {profile.name} {what}: measuring it takes a model that searches and chooses "
                f"(anthropic, openai, openai-responses, gemini), and {provider} answers one request with one pick "
                f"(recall would read 0% and the client's tools would take picks by shared words)"
            )
    return None


def client_record(offered: Offer) -> ClientOut | None:
    """What the client did to the surface, for the report (None: no client)."""
    presented = offered.presented
    if presented is None:
        return None
    p = presented.profile
    others = [b for b in offered.back.values() if b.startswith(ALONGSIDE)]  # other servers' tools offered
    return ClientOut(
        name=p.name,
        title=p.title,
        checked=p.checked,
        server=presented.server,
        renamed=dict(presented.renamed),
        dropped=[DroppedOut(tool=t, position=i, why=why) for t, i, why in presented.dropped],
        grouped=list(presented.grouped),
        builtins=[b.name for b in p.builtins],
        deferred=offered.deferred.results if offered.deferred else None,
        alongside=dict(Counter(b.removeprefix(ALONGSIDE).split("/")[0] for b in others)),
        refused=offered.refused,
        driven=offered.driven.version if offered.driven is not None else None,
        driven_as=offered.driven.taken_as if offered.driven is not None else None,
        gateway=offered.driven is not None and offered.driven.gateway,
        network=offered.driven.network if offered.driven is not None else None,
        observed=p.observed.version if p.observed is not None else None,
    )
