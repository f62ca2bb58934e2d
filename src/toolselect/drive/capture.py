"""`toolselect clients capture NAME[@VERSION]`: what a real client does to a server's tools, observed.

The client is run against a recording endpoint (no model: every request is answered with a short text)
with synthetic surfaces served by toolselect — tools listed out of name order, names with odd
characters, two that collide once sanitised, names past every known length limit, a long
description, 10, 90 and 300 tools — each with its tool search off (every definition inline), as it is
driven, and on its own default. `facts` reads the recorded requests into the client's observed
facts (pure): naming, sanitising, order, collisions, the length cut, the count, built-ins (names and
sizes), deferral and its listing, the search tool, the system prompt's size and hash. The facts hold
sizes and hashes, never the client's own text."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from .endpoint import Endpoint
from .sample import Driven, drive
from .wires import Wire

SERVER = "probe"
ORDERED = ("zulu_status", "alpha_lookup", "mike_report", "bravo_list", "kilo_check")  # the server's order
ODD = {  # a tool name → the character it tries
    "dot.name": ".",
    "space name": " ",
    "colon:name": ":",
    "slash/name": "/",
    "at@name": "@",
    "plus+name": "+",
    "dash-name": "-",
    "under_name": "_",
    "caf\u00e9_name": "\u00e9",
}
CLASH = ("clash.one", "clash_one")  # alike once `.` becomes `_`
LENGTHS = (40, 50, 52, 53, 60, 116, 117, 120, 188)  # tool names this long: client names past 64 and 128
WORDY = "wordy_tool"
WORDY_CHARS = 5000
COUNTS = (10, 90, 300)
PROMPT = "Reply with the word ok."
SEARCH_OFF, AS_DRIVEN, DEFAULT = "off", "driven", "default"


def long_name(length: int) -> str:
    return f"long_{length:03d}_" + "x" * (length - 9)


def tool(name: str, description: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "title": f"Title of {name}",
        "description": description or f"Probe tool {name}: returns its own name.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "anything"}}},
        "outputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }


def naming_surface() -> list[dict[str, Any]]:
    names = [*ORDERED, *ODD, *CLASH, *(long_name(n) for n in LENGTHS)]
    return [*(tool(n) for n in names), tool(WORDY, ("A long description. " * 400)[:WORDY_CHARS])]


def count_surface(count: int) -> list[dict[str, Any]]:
    return [tool(f"bulk_{i:03d}") for i in range(1, count + 1)]


class Recorder:
    """Stands in for the model: records each request the client makes and answers it with a text, in
    the client's own wire format."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.bodies: list[dict[str, Any]] = []

    async def forward_cached(
        self, body: dict[str, Any], headers: dict[str, str], keyed: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any] | None, bool]:
        self.bodies.append(body)
        return self.wire.ended(body, "ok"), False


async def record(driven: Driven) -> dict[str, dict[str, Any]]:
    """Each surface × setting (the driver's CAPTURE: its tool search off, as driven, its own default),
    run once through the client: the first request it made with tools."""
    recorder = Recorder(driven.driver.WIRE)
    endpoint = Endpoint(recorder, ends=lambda name: True)
    await endpoint.start()
    runs: dict[str, dict[str, Any]] = {}
    try:
        plan: list[tuple[str, list[dict[str, Any]], tuple[str, ...]]] = [
            ("naming", naming_surface(), (SEARCH_OFF, AS_DRIVEN))
        ]
        plan += [(f"count-{n}", count_surface(n), (SEARCH_OFF, AS_DRIVEN, DEFAULT)) for n in COUNTS]
        done: dict[tuple[str, str], dict[str, Any]] = {}  # a setting that changes nothing is run once
        for label, surface, settings in plan:
            for setting in settings:
                given = driven.driver.CAPTURE[setting]
                same = (label, json.dumps(given, sort_keys=True))
                if same in done:
                    runs[f"{label}/{setting}"] = done[same]
                    continue
                env = tuple({**dict(driven.env), **given.get("env", {})}.items())
                model = given.get("model", driven.model)
                one = replace(driven, server=SERVER, definitions=tuple(surface), env=env, model=model)
                recorder.bodies.clear()
                pick = await drive(one, endpoint, PROMPT)
                if not recorder.bodies:
                    raise RuntimeError(f"{driven.name} made no model request ({label}, {setting}): {pick.error}")
                runs[f"{label}/{setting}"] = done[same] = next(
                    (b for b in recorder.bodies if b.get("tools")), recorder.bodies[0]
                )
    finally:
        await endpoint.stop()
    return runs


def capture(driven: Driven) -> dict[str, Any]:
    """The client's observed facts (runs it: a few seconds a setting)."""
    out = facts(asyncio.run(record(driven)), driven.name, driven.version, date.today().isoformat())
    out["model"] = out["model"] or driven.model  # Gemini's is in the request's path, not its body
    return out


# ---------------------------------------------------------------------------- reading the requests (pure)


@dataclass(frozen=True)
class Naming:
    template: str  # `mcp__{server}__{tool}`

    def of(self, name: str) -> str:
        return self.template.replace("{server}", SERVER).replace("{tool}", name)


def tools_of(body: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A request's tools as the model reads them: each function of a server's namespace (Responses:
    `mcp__<server>` holding `<tool>`) as `<namespace>__<tool>`; a tool the API runs itself (no name)
    by its type."""
    out = []
    for tool in (body or {}).get("tools") or []:
        declared = tool.get("functionDeclarations") or tool.get("function_declarations")
        if isinstance(declared, list):  # Gemini: one list of declarations
            out += [{**f, "name": str(f.get("name")), SIZE: _size(f)} for f in declared]
            continue
        name = str(tool.get("name") or tool.get("type"))
        if tool.get("type") == "namespace" and name.startswith("mcp__"):
            out += [{**f, "name": f"{name}__{f.get('name')}", SIZE: _size(f)} for f in tool.get("tools") or []]
        else:
            out.append({**tool, "name": name, SIZE: _size(tool)})
    return out


SIZE = "\x00size"  # a tool's own definition's size, as the client sent it


def _size(tool: dict[str, Any]) -> int:
    return len(json.dumps(tool, ensure_ascii=False))


def facts(runs: Mapping[str, dict[str, Any]], name: str, version: str, day: str) -> dict[str, Any]:
    """The facts the recorded requests show (see the module's docstring)."""
    inline = runs["naming/off"]
    names = [str(t.get("name")) for t in tools_of(inline)]
    naming = _template(names)
    mcp = [n for n in names if _is_server_tool(n, naming)]
    builtins = [t for t in tools_of(inline) if not _is_server_tool(str(t.get("name")), naming)]
    driven = runs["naming/driven"]
    driven_names = [str(t.get("name")) for t in tools_of(driven)]
    deferred = not _server_names(driven, naming, loaded=True)  # none sent, or each `defer_loading`
    out: dict[str, Any] = {
        "name": name,
        "version": version,
        "date": day,
        "model": str(runs["naming/driven"].get("model", "")),
        "names": {"template": naming.template, **_sanitising(mcp, naming), **_lengths(mcp, naming)},
        "collisions": _collisions(mcp, naming),
        "order": _order(names, mcp, naming),
        "builtins_first": bool(mcp) and names.index(mcp[0]) >= len(builtins),
        "fields": sorted(k for k in _server_tool(inline, naming, ORDERED[1]) or {} if k != SIZE),
        "description_max": _description_max(inline, naming),
        "builtins": [{"name": str(t.get("name")), "chars": t[SIZE]} for t in builtins],
        "system": _system(inline),
        "deferred": {
            "as_driven": deferred,
            "search_tool": _search_tool(driven_names, [str(t.get("name")) for t in builtins], naming),
            "listing": _listing(driven, naming) if deferred else None,
            "builtins": [n for n in driven_names if not _is_server_tool(n, naming)],
        },
        "counts": {},
    }
    for count in COUNTS:
        sent = _server_names(runs.get(f"count-{count}/off"), naming)
        by_default = _server_names(runs.get(f"count-{count}/default"), naming, loaded=True)
        out["counts"][count] = {"sent": len(sent), "deferred_by_default": not by_default}
    return out


def _template(names: Sequence[str]) -> Naming:
    probe = ORDERED[1]
    found = [n for n in names if probe in n]
    if len(found) != 1:
        raise ValueError(f"the client's request has {len(found)} tools named like {probe}: {found[:3]}")
    name = found[0]
    head, _, tail = name.partition(probe)
    return Naming(head.replace(SERVER, "{server}") + "{tool}" + tail.replace(SERVER, "{server}"))


def _is_server_tool(name: str, naming: Naming) -> bool:
    head = naming.template.split("{tool}")[0].replace("{server}", SERVER)
    return bool(head) and name.startswith(head)


def _server_names(body: dict[str, Any] | None, naming: Naming, loaded: bool = False) -> list[str]:
    """The server's tools a request sends (`loaded`: only those whose definitions the model has now,
    not those marked `defer_loading` behind a search)."""
    return [
        str(t.get("name"))
        for t in tools_of(body)
        if _is_server_tool(str(t.get("name")), naming) and not (loaded and t.get("defer_loading"))
    ]


def _server_tool(body: dict[str, Any], naming: Naming, name: str) -> dict[str, Any] | None:
    return next((t for t in tools_of(body) if t.get("name") == naming.of(name)), None)


def _sanitising(mcp: Sequence[str], naming: Naming) -> dict[str, Any]:
    """Which characters of a tool's name the client replaces (and with what), which it keeps."""
    kept, replaced, dropped = [], {}, []
    for original, char in ODD.items():
        for becomes in (char, "_", "-", ""):
            if naming.of(original.replace(char, becomes)) in mcp:
                if becomes == char:
                    kept.append(char)
                else:
                    replaced[char] = becomes
                break
        else:
            dropped.append(char)
    into = set(replaced.values())
    if replaced and len(into) == 1 and set(replaced) | set(kept) | set(dropped) == set(ODD.values()):
        signs = sorted(c for c in kept if not c.isalnum() and c != "-")  # each kept sign; `-` last
        pattern = "[^A-Za-z0-9" + "".join(signs) + ("-" if "-" in kept else "") + "]"
    elif replaced:
        pattern = "[" + "".join(re.escape(c) for c in sorted(replaced)) + "]"
    else:
        pattern = ""
    return {
        "replace": pattern,
        "into": next(iter(into)) if len(into) == 1 else "_",  # what each such character becomes
        "kept": sorted(kept),
        "replaced": dict(sorted(replaced.items())),
        "gone": dropped,
    }


def _lengths(mcp: Sequence[str], naming: Naming) -> dict[str, Any]:
    """What the client does to long names: the longest it sends whole, and what it does past it — cut
    (a name that begins the whole one), shortened otherwise (a hash, an ellipsis), or never sent."""
    whole, cut, shortened, gone = [], [], [], []
    for length in LENGTHS:
        full, stem = naming.of(long_name(length)), naming.of(f"long_{length:03d}_")
        if full in mcp:
            whole.append(len(full))
        elif found := [n for n in mcp if n != full and full.startswith(n) and len(n) >= len(stem)]:
            cut.append(len(found[0]))
        elif found := [n for n in mcp if n.startswith(stem[: max(len(stem) - 1, 1)]) and n != full]:
            shortened.append(len(found[0]))
        else:
            gone.append(len(full))
    past = "truncated" if cut else "shortened" if shortened else "dropped" if gone else None
    return {
        # the limit: the length it cuts to, when every cut is to one length; else the longest sent whole
        "max_length": (cut[0] if cut and len(set(cut)) == 1 else max(whole, default=None)) if past else None,
        "past_limit": past,
        "cut_to": sorted(set(cut + shortened)),
    }


def _collisions(mcp: Sequence[str], naming: Naming) -> str:
    together = naming.of(CLASH[1])
    seen = mcp.count(together)
    if seen >= 2:
        return "both sent under one name"
    renamed = [n for n in mcp if n.startswith(together) and n != together]
    if seen == 1 and naming.of(CLASH[0]) not in mcp:
        return "one renamed" if renamed else "one dropped"
    if seen == 0 and len(renamed) >= 2:
        return "both renamed"
    return "none"


def _order(names: Sequence[str], mcp: Sequence[str], naming: Naming) -> str:
    """`all`: its own tools and the server's sorted together; `name`: the server's sorted; `server`:
    in the server's order."""
    if len(names) > len(mcp) and list(names) == sorted(names, key=str.lower):
        return "all"
    ours = [n for n in mcp if any(n == naming.of(o) for o in ORDERED)]
    if ours == [naming.of(o) for o in ORDERED]:
        return "server"
    if ours == sorted(ours, key=str.lower):
        return "name"
    return "other"


def _description_max(body: dict[str, Any], naming: Naming) -> int | None:
    wordy = _server_tool(body, naming, WORDY)
    if wordy is None:
        return None
    length = len(str(wordy.get("description", "")))
    return None if length >= WORDY_CHARS else length


def _system(body: dict[str, Any]) -> dict[str, Any]:
    """The system prompt's size and hash (its text is the client's, not kept)."""
    system = body.get("system") or body.get("instructions") or body.get("systemInstruction")
    if system is None:  # Responses: the client's base prompt as the first developer (or system) message
        given = body.get("input")
        items = given if isinstance(given, list) else []
        first = next((i for i in items if isinstance(i, dict) and i.get("role") in ("developer", "system")), {})
        system = first.get("content")
    if isinstance(system, dict):  # Gemini: {role, parts: [{text}]}
        system = system.get("parts")
    if isinstance(system, list):
        text = "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    else:
        text = str(system or "")
    text = re.sub(r"cc_version=[0-9.]+", "cc_version=…", text)  # a build number in its billing line
    text = re.sub(r"[^\s`'\"]*toolselect-client-[^\s`'\"]*", "…", text)  # the run's folder (its memory's path)
    text = re.sub(r"\b\d{4}-\d{2}-\d{2}\b", "…", text)  # today's date
    text = re.sub(r"[^\s`'\"<>]*/node_modules/[^\s`'\"<>]*", "…", text)  # where the client is installed
    return {"chars": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()[:16]}


def _search_tool(driven: Sequence[str], inline_builtins: Sequence[str], naming: Naming) -> str | None:
    new = [n for n in driven if n not in inline_builtins and not _is_server_tool(n, naming)]
    return next((n for n in new if "search" in n.lower()), None)


def _listing(body: dict[str, Any], naming: Naming) -> str | None:
    """Where the deferred tools' names are put: in which message (by role) or the system prompt."""
    probe = naming.of("").rstrip("_")  # the server's prefix (Codex lists only its namespace)
    if probe in json.dumps(body.get("system") or body.get("instructions") or "", ensure_ascii=False):
        return "the system prompt"
    given = body.get("messages") or body.get("input") or []
    for message in given if isinstance(given, list) else []:
        if isinstance(message, dict) and probe in json.dumps(message.get("content"), ensure_ascii=False):
            return f"a {message.get('role')} message"
    return None


def write(facts_: Mapping[str, Any], path: Path | None) -> str:
    import yaml

    head = (
        f"# What {facts_.get('name', 'the client')} {facts_['version']} was seen to do to a server's tools on "
        f"{facts_['date']} (model {facts_.get('model') or '?'}),\n# written by `toolselect clients capture`: "
        "facts and sizes, never the client's own text. Regenerate, don't edit.\n"
    )
    text = head + yaml.safe_dump(dict(facts_), sort_keys=False, allow_unicode=True, width=120)
    if path is not None:
        path.write_text(text, encoding="utf-8")
    return text
