"""Findings about what a client does to the surface (offer/clients.py): a name over its limit, a tool it
never sends, tools it hides behind groups, too many tools for it, two tools it names alike. They need
no model. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..golden import Case
from ..offer.clients import Presented
from .finding import Finding, Severity


def lint_client(
    presented: Presented,
    cases: Sequence[Case],
    file: str | None = None,
    line: int | None = None,
    places: Mapping[str, tuple[str, int]] | None = None,
) -> list[Finding]:
    """Each finding at its tool's place (`places`), else at `file`:`line`."""
    profile, title = presented.profile, presented.profile.title
    limit = profile.names.max_length
    total = len(presented.shown) + len(presented.dropped)
    expecting: dict[str, list[str]] = {}
    for case in cases:
        for tool in case.expected:
            expecting.setdefault(tool, []).append(case.name)
    out: list[Finding] = []
    places = places or {}

    def add(code: str, severity: Severity, message: str, fix: str, tool: str | None = None) -> None:
        out.append(Finding(code, severity, message, fix, "surface", tool, None, *places.get(tool or "", (file, line))))

    def wanted(tool: str) -> str:
        names = expecting.get(tool, [])
        if not names:
            return ""
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return f"; the golden set expects it in {shown}"

    counted = "the server's and the tool's names together" if profile.names.length_of == "server_and_tool" else ""
    for tool, name, length in presented.over_limit:
        add(
            "client-name-too-long",
            "error",
            f"in {title} the name {name} is {length} characters{f' ({counted})' if counted else ''}, over its "
            f"{limit}: {profile.names.says or 'the client fails'}",
            f"shorten the tool's name (or the server's label, {presented.server!r}) to fit {limit} characters as "
            f"{profile.names.template}",
            tool,
        )
    for tool, name in presented.invalid:
        add(
            "client-name-invalid",
            "error",
            f"in {title} the name {name} doesn't match {profile.names.pattern}: "
            f"{profile.names.says or 'it is refused'}",
            "use letters, digits, '_' and '-' only",
            tool,
        )
    for tool, cut in presented.truncated:
        add(
            "client-name-truncated",
            "warning",
            f"in {title} the name is cut to {limit} characters: {cut}",
            f"shorten the tool's name so {profile.names.template} fits {limit} characters",
            tool,
        )
    for tool, position, why in presented.dropped:
        severity: Severity = "error" if expecting.get(tool) else "warning"
        add(
            "client-tool-dropped",
            severity,
            f"{title} never sends {tool} to the model: {why} (it is tool {position + 1} of {total}){wanted(tool)}",
            "put the tools your users need first, split the server, or shorten the name"
            if profile.names.past_limit == "dropped"
            else "put the tools your users need first, or split the server",
            tool,
        )
    if presented.grouped:
        first = ", ".join(presented.grouped[:3]) + (" …" if len(presented.grouped) > 3 else "")
        add(
            "client-tools-grouped",
            "warning",
            f"{title} sends at most {profile.tools.max} tools at once: {len(presented.grouped)} of yours ({first}) are "
            "behind its tool groups, which the model must open before it can call them",
            "fewer tools, or split the server",
        )
    if presented.refused:
        add(
            "client-too-many-tools",
            "error",
            f"{len(presented.shown)} tools is over {title}'s {profile.tools.max}: "
            f"{profile.tools.says or 'every request fails'}",
            "fewer tools, or split the server",
        )
    for tool, other, name in presented.collisions:
        add(
            "client-name-collision",
            "error",
            f"in {title} {tool} and {other} are both named {name}: the model can't tell them apart",
            "rename one of them",
            tool,
        )
    return out
