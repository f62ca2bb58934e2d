"""Client profiles: how an MCP client presents a server's tools to the model.

A model never sees a server's raw `tools/list`: the client names the tools its own way, sends only
so many, drops or cuts a name over its limit, hides definitions behind a search step and puts its
own built-in tools beside them. A profile keeps these facts as data (`data/clients/<name>.yaml`,
each with its source and the date it was checked; a user's own profile is a YAML file of the same
shape), and `present` is the surface as that client shows it — pure: names in, names out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from ..errors import ConfigError, ConfigErrors, did_you_mean
from ..explain import explain_errors
from ..locate import display_path, load_yaml
from ..strict import Authored


class Names(Authored):
    """How the client names a server's tool, and what happens to a name over its limit."""

    template: str  # e.g. "mcp__{server}__{tool}"
    replace: str = ""  # a regular expression: each match in the name becomes `into`
    into: str = Field("_", pattern=r"^[_-]$")  # what a replaced character becomes (Copilot CLI's: "-")
    server_case: Literal["keep", "lower"] = "keep"
    server_replace: str = ""  # a regular expression: each match in the server's label becomes "_"
    server_max: int | None = Field(None, ge=1)  # the server's label is cut to this many characters
    max_length: int | None = Field(None, ge=1)
    length_of: Literal["name", "server_and_tool"] = "name"  # what the limit counts
    pattern: str | None = None  # a name the client (or its API) accepts must match this whole
    past_limit: Literal["fails", "dropped", "truncated"] = "fails"
    says: str = ""  # what the user meets when a name is over the limit
    sources: list[str] = Field(default_factory=list)


class Count(Authored):
    """How many tools the client sends, and what it does with the rest."""

    max: int | None = Field(None, ge=1)
    past_max: Literal["cut", "group", "refuse"] = "cut"  # the rest are not sent; grouped; every request fails
    says: str = ""
    sources: list[str] = Field(default_factory=list)


class SearchTool(Authored):
    """The client's search tool, as the model sees it: a stub toolselect answers with the ranking."""

    name: str = "ToolSearch"
    description: str
    input_schema: dict[str, Any]
    query: str = "query"  # the argument the query is in
    max_results: str | None = "max_results"  # the argument that asks for more or fewer results


class Deferred(Authored):
    """Whether definitions wait behind a search step (only names in context until the model searches)."""

    mode: Literal["none", "names"] = "none"
    search: Literal["keyword", "bm25", "regex"] | None = None
    tool: SearchTool | None = None
    results: int = Field(default=5, ge=1, le=50)  # how many tools a search loads at most
    searches: int = Field(default=3, ge=1, le=10)  # searches a sample may make before it must pick
    listing: str = "{names}"  # how the deferred tools' names are put in the system prompt
    past: int | None = Field(default=None, ge=0)  # only when a request has more tools than this, its own included
    sources: list[str] = Field(default_factory=list)


class Builtin(Authored):
    """One of the client's own tools, as it documents it: a stub, never executed."""

    name: str
    description: str
    input_schema: dict[str, Any]


class ObservedNames(Authored):
    template: str
    replace: str = ""
    into: str = "_"
    kept: list[str] = Field(default_factory=list)
    replaced: dict[str, str] = Field(default_factory=dict)
    gone: list[str] = Field(default_factory=list)
    max_length: int | None = None
    past_limit: Literal["truncated", "shortened", "dropped"] | None = None
    cut_to: list[int] = Field(default_factory=list)


class ObservedTool(Authored):
    name: str
    chars: int  # its definition's size in the client's request (its text is the client's: not kept)


class ObservedSystem(Authored):
    chars: int
    sha256: str


class ObservedDeferral(Authored):
    as_driven: bool  # every server tool behind the client's search, as toolselect drives it
    search_tool: str | None = None
    listing: str | None = None  # where the deferred names are put ("a system message")
    builtins: list[str] = Field(default_factory=list)  # its own tools sent beside the search


class ObservedCount(Authored):
    sent: int
    deferred_by_default: bool


class Observed(Authored):
    """What `toolselect clients capture` saw the real client do (drive/capture.py): facts and sizes."""

    name: str
    version: str
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    model: str = ""
    names: ObservedNames
    collisions: str
    order: Literal["server", "name", "all", "other"]
    builtins_first: bool
    fields: list[str]
    description_max: int | None = None
    builtins: list[ObservedTool] = Field(default_factory=list)
    system: ObservedSystem
    deferred: ObservedDeferral
    counts: dict[int, ObservedCount] = Field(default_factory=dict)


class Profile(Authored):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    title: str
    checked: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")  # when its facts were last checked
    names: Names
    tools: Count
    deferred: Deferred = Deferred()
    builtins: list[Builtin] = Field(default_factory=list)
    builtins_source: str | None = None
    system: str | None = None  # a short system prompt of the client's intent
    system_source: str | None = None
    # the server's tools in its order, sorted by their names (after its own), or its own and the server's
    # sorted together (opencode)
    order: Literal["server", "name", "all"] = "server"
    description_max: int | None = Field(None, ge=1)  # a longer description is cut to this many characters
    observed: Observed | None = None  # the real client, captured: its facts decide over the written ones


BUILT_IN = ("claude-code", "codex", "gemini-cli", "copilot-cli", "opencode", "cursor", "vscode", "openai-agents", "raw")


def load_profile(name: str, base: Path | None = None) -> Profile:
    """A bundled profile by name (with what its client was observed to do, when it was captured), or
    the user's own from a YAML file (relative to `base`)."""
    if name in BUILT_IN:
        text = resources.files("toolselect").joinpath(f"data/clients/{name}.yaml")
        with resources.as_file(text) as path:
            profile = _read(path, f"the bundled profile {name}")
        captured = resources.files("toolselect").joinpath(f"data/clients/{name}.observed.yaml")
        if captured.is_file():
            with resources.as_file(captured) as path:
                doc = load_yaml(path, f"the bundled capture of {name}", "client capture")
            try:
                profile = profile.model_copy(update={"observed": Observed.model_validate(doc.data)})
            except ValidationError as exc:
                raise ConfigErrors(explain_errors(exc, doc)) from None
        return as_observed(profile)
    path = Path(name) if base is None or Path(name).is_absolute() else base / name
    if not name.endswith((".yaml", ".yml")) or not path.is_file():
        raise ConfigError(
            f"unknown client '{name}'{did_you_mean(name, BUILT_IN)}",
            hint=f"use one of {', '.join(BUILT_IN)}, or a profile file (.yaml) of the same shape (docs/clients.md)",
        )
    return as_observed(_read(path, display_path(path)))


def as_observed(profile: Profile) -> Profile:
    """The profile with what its client was observed to do put over what was written: its naming, its
    cut, its order, the descriptions' cut, and its built-ins as it sends them when driven (a written
    stub kept for each it has one of; a neutral one, with the real definition's size, for the rest)."""
    seen = profile.observed
    if seen is None:
        return profile
    n = seen.names
    names = profile.names.model_copy(
        update={
            "template": n.template,
            "replace": n.replace,
            "into": n.into,
            "max_length": n.max_length,
            "past_limit": {"shortened": "truncated"}.get(n.past_limit or "", n.past_limit) or profile.names.past_limit,
        }
    )
    defers = seen.deferred.as_driven and profile.deferred.mode != "none"  # as the emulation presents it
    listed = [b for b in seen.deferred.builtins if b != seen.deferred.search_tool] if defers else []
    listed = listed or [b.name for b in seen.builtins]
    sizes = {b.name: b.chars for b in seen.builtins}
    written = {b.name: b for b in profile.builtins}
    builtins = [
        written.get(name)
        or Builtin(
            name=name,
            description=f"{profile.title}'s built-in tool {name} (its definition: {sizes.get(name, 0):,} characters).",
            input_schema={"type": "object"},
        )
        for name in listed
        if name != "DeferredToolPlaceholder"
    ]
    deferred = profile.deferred if seen.deferred.as_driven else Deferred()
    return profile.model_copy(
        update={
            "names": names,
            "order": seen.order if seen.order in ("name", "all") else "server",
            "description_max": seen.description_max,
            "builtins": builtins,
            "deferred": deferred,
            "checked": seen.date,
        }
    )


def _read(path: Path, shown: str) -> Profile:
    doc = load_yaml(path, shown, "client profile")
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{shown}: a client profile is a mapping (names:, tools:, …), see docs/clients.md")
    try:
        profile = Profile.model_validate(doc.data)
    except ValidationError as exc:
        raise ConfigErrors(explain_errors(exc, doc)) from None
    expressions = {
        "names.replace": profile.names.replace,
        "names.server_replace": profile.names.server_replace,
        "names.pattern": profile.names.pattern or "",
    }
    if profile.deferred.mode == "names" and (profile.deferred.search is None or profile.deferred.tool is None):
        raise ConfigError(f"{shown}: deferred.mode names needs deferred.search and deferred.tool (the search tool)")
    for where_, text in expressions.items():
        try:
            re.compile(text)
        except re.error as exc:
            raise ConfigError(f"{shown}: {where_} is not a regular expression: {exc}") from None
    return profile


@dataclass(frozen=True)
class Shown:
    """One of the server's tools as the client sends it."""

    tool: str  # the server's name for it
    name: str  # the client's
    position: int  # its place in the server's list (0-based)


@dataclass(frozen=True)
class Presented:
    """The surface as a client shows it, and everything the client did to it."""

    profile: Profile
    server: str  # the label the client knows the server by
    shown: tuple[Shown, ...]  # sent to the model, in order
    over_limit: tuple[tuple[str, str, int], ...]  # (tool, client name, its length) past names.max_length
    invalid: tuple[tuple[str, str], ...]  # (tool, client name) that doesn't match names.pattern
    truncated: tuple[tuple[str, str], ...]  # (tool, the cut name)
    dropped: tuple[tuple[str, int, str], ...]  # (tool, position, why): never sent
    grouped: tuple[str, ...]  # past the count: behind the client's groups, sent only when the model opens them
    refused: bool  # too many tools: the client (or its API) fails every request
    collisions: tuple[tuple[str, str, str], ...]  # (tool, other tool, the name both get)

    @property
    def renamed(self) -> tuple[tuple[str, str], ...]:
        return tuple((s.tool, s.name) for s in self.shown if s.name != s.tool)


def client_name(profile: Profile, server: str, tool: str) -> str:
    """The name `tool` of `server` gets in the client, before any cut."""
    n = profile.names
    label = server.lower() if n.server_case == "lower" else server
    if n.server_replace:
        label = re.sub(n.server_replace, "_", label)
    if n.server_max is not None:
        label = label[: n.server_max]
    name = n.template.replace("{server}", label).replace("{tool}", tool)
    return re.sub(n.replace, n.into, name) if n.replace else name


def present(profile: Profile, server: str, tools: Sequence[str]) -> Presented:
    """`tools` (the server's names, in its order) as `profile`'s client presents them."""
    n = profile.names
    kept: list[Shown] = []
    over: list[tuple[str, str, int]] = []
    invalid: list[tuple[str, str]] = []
    truncated: list[tuple[str, str]] = []
    dropped: list[tuple[str, int, str]] = []
    for position, tool in enumerate(tools):
        name = client_name(profile, server, tool)
        length = len(server) + len(tool) if n.length_of == "server_and_tool" else len(name)
        if n.max_length is not None and length > n.max_length:
            if n.past_limit == "truncated":
                truncated.append((tool, name[: n.max_length]))
                name = name[: n.max_length]
            elif n.past_limit == "dropped":
                dropped.append((tool, position, f"its name is over {profile.title}'s {n.max_length} characters"))
                continue
            else:
                over.append((tool, name, length))
        if n.pattern and not re.fullmatch(n.pattern, name):
            invalid.append((tool, name))
        kept.append(Shown(tool, name, position))
    grouped: list[str] = []
    refused = False
    limit = profile.tools.max
    if limit is not None and len(kept) > limit:
        past = kept[limit:]
        if profile.tools.past_max == "cut":
            dropped += [(s.tool, s.position, f"{profile.title} sends only the first {limit} tools") for s in past]
            kept = kept[:limit]
        elif profile.tools.past_max == "group":
            grouped = [s.tool for s in past]
        else:
            refused = True
    if profile.order in ("name", "all"):  # as the client sorts them (case aside)
        kept.sort(key=lambda s: s.name.lower())
    seen: dict[str, str] = {}
    collisions = []
    for s in kept:
        if s.name in seen:
            collisions.append((s.tool, seen[s.name], s.name))
        seen.setdefault(s.name, s.tool)
    return Presented(
        profile,
        server,
        tuple(kept),
        tuple(over),
        tuple(invalid),
        tuple(truncated),
        tuple(sorted(dropped, key=lambda d: d[1])),
        tuple(grouped),
        refused,
        tuple(collisions),
    )


def search(mode: str, query: str, tools: Sequence[tuple[str, str, Any]], limit: int) -> list[int]:
    """The tools (indices into `tools`: name, description, input schema) a client's search finds for
    `query`, best first, at most `limit`. `select:a,b` names tools exactly (Claude Code's form);
    otherwise `keyword` scores each query word found in a tool's name (2) or its description and
    parameters (1), a `+word` being required; `bm25` ranks by BM25 over the same words; `regex`
    matches the query as a regular expression (case-insensitive) against the name and description."""
    from ..lexical import BM25, tokenize, tool_text

    query = query.strip()
    if query.startswith("select:"):
        wanted = [w.strip() for w in query[len("select:") :].split(",") if w.strip()]
        names = [t[0] for t in tools]
        return [names.index(w) for w in dict.fromkeys(wanted) if w in names][:limit]
    if mode == "regex":
        try:
            pattern = re.compile(query[:200], re.IGNORECASE)
        except re.error:
            return []
        return [i for i, (name, text, _) in enumerate(tools) if pattern.search(f"{name}\n{text}")][:limit]
    if mode == "bm25":
        ranking = BM25.build([tool_text(*t) for t in tools])
        scored = ranking.scores(tokenize(query))
    else:
        words = query.split()
        required = {w for word in words if word.startswith("+") for w in tokenize(word[1:])}
        terms = set(tokenize(query))
        scored = []
        for name, text, schema in tools:
            in_name, in_text = set(tokenize(name)), set(tool_text("", text, schema))
            score = sum(2 if term in in_name else 1 if term in in_text else 0 for term in terms)
            scored.append(score if required <= in_name | in_text else 0.0)
    order = sorted(range(len(tools)), key=lambda i: (-scored[i], i))
    return [i for i in order if scored[i] > 0][:limit]


def client_refusal(presented: Presented) -> str | None:
    """Why the client can't present the surface at all (every request fails), or None."""
    p = presented.profile
    if presented.refused:
        return (
            f"{len(presented.shown)} tools is over {p.title}'s {p.tools.max}: {p.tools.says or 'every request fails'}"
        )
    if presented.over_limit and p.names.past_limit == "fails":
        _, name, length = presented.over_limit[0]
        return (
            f"in {p.title} the name {name} is {length} characters, over its {p.names.max_length}: "
            f"{p.names.says or 'the client fails'}"
        )
    if presented.invalid:
        _, name = presented.invalid[0]
        return f"in {p.title} the name {name} doesn't match {p.names.pattern}: {p.names.says or 'it is refused'}"
    return None


def client_out(presented: Presented) -> dict[str, Any]:
    """What the client did to the surface, for lint's JSON."""
    p = presented.profile
    return {
        "client": p.name,
        "title": p.title,
        "checked": p.checked,
        "server": presented.server,
        "sent": [{"tool": s.tool, "name": s.name} for s in presented.shown],
        "dropped": [{"tool": t, "position": i, "why": why} for t, i, why in presented.dropped],
        "grouped": list(presented.grouped),
        "refused": presented.refused,
        "deferred": p.deferred.mode,
        "builtins": [b.name for b in p.builtins],
    }


def summary(presented: Presented) -> str:
    """One line: `Claude Code (facts of 2026-12-03): 12 of 12 tools sent, as mcp__weather__<tool>; …`."""
    p = presented.profile
    total = len(presented.shown) + len(presented.dropped)
    parts = [f"{len(presented.shown)} of {total} tools sent"]
    if presented.renamed:
        parts[0] += f", named like {presented.renamed[0][1]}"
    if presented.dropped:
        parts.append(f"{len(presented.dropped)} never sent")
    if presented.grouped:
        parts.append(f"{len(presented.grouped)} behind tool groups")
    if p.deferred.mode == "names":
        past = f", past {p.deferred.past} tools in all" if p.deferred.past is not None else ""
        parts.append(f"only names in context until the model searches ({p.deferred.search} search{past})")
    if p.builtins:
        parts.append(f"beside {len(p.builtins)} built-in tools ({', '.join(b.name for b in p.builtins[:4])}, …)")
    seen = f"{p.observed.version}, observed {p.observed.date}" if p.observed else f"facts of {p.checked}"
    return f"{p.title} ({seen}): " + "; ".join(parts)
