"""Findings about the tool surface: names, descriptions, schemas, and the tools a model is likely to
confuse. Pure."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft202012Validator, validator_for

from ..surface import SAFE_NAME, Surface, described, nameless, schema_problem_text
from .finding import MAX_DESCRIPTION, Finding, Severity, confusable_pairs, have, plural


def lint_surface(
    surface: Surface,
    file: str | None = None,
    line: int | None = None,
    places: Mapping[str, tuple[str, int]] | None = None,
) -> list[Finding]:
    """Findings about the surface, each at `file`:`line` — or at its tool's own place (`places`, by
    name: its entry in a tools file, its declaration in the server's source)."""
    out: list[Finding] = []
    places = places or {}

    def at(tool: str | None) -> tuple[str | None, int | None]:
        return places.get(tool or "", (file, line))

    def add(code: str, severity: Severity, message: str, fix: str, tool: str | None = None) -> None:
        out.append(Finding(code, severity, message, fix, "surface", tool, None, *at(tool)))

    names: Counter[str] = Counter()
    for index, raw in enumerate(surface.raw):
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name.strip():
            add(
                "name-empty",
                "error",
                f"{nameless(index)} in {surface.listed_in} has no name{described(raw)}: it is left out of what the "
                "model sees",
                "give every tool a name: cases refer to tools by name",
            )
            continue
        names[name] += 1
        if names[name] == 2:
            add(
                "name-duplicate",
                "error",
                f"two tools are named {name}: the second is left out",
                "rename one of them",
                name,
            )
        if names[name] > 1:
            continue
        description = raw.get("description") or ""
        if not isinstance(description, str):
            description = ""  # reported below: the tool is left out
        elif not description.strip():
            add(
                "description-missing",
                "error",
                f"{name} has no description: the model has only its name to go on",
                "say what it does, when to use it, and which tool to use instead when it's the wrong one",
                name,
            )
        elif len(description) > MAX_DESCRIPTION:
            add(
                "description-long",
                "warning",
                f"{name}'s description is {len(description)} characters (over {MAX_DESCRIPTION})",
                "tighten it: it is sent with every request, and a long one buries the trigger",
                name,
            )
        if not SAFE_NAME.match(name):
            tool = surface.get(name)
            sent = f"; it is sent as {tool.wire_name}" if tool else ""
            add(
                "name-unsafe",
                "warning",
                f"{name}: model APIs reject tool names outside [A-Za-z0-9_-] or over 64 characters{sent}",
                "rename it to match ^[A-Za-z0-9_-]{1,64}$ so every client sees the same name",
                name,
            )
        schema = raw.get("inputSchema")
        left_out = next(
            (lo.reason for lo in surface.left_out if lo.name == name and not lo.reason.startswith("duplicate name")),
            None,
        )
        if left_out:
            if left_out.startswith("description"):
                code, fix = "description-invalid", "make the description a string"
            else:
                code = "input-schema-not-object" if "root is not" in left_out else "input-schema-invalid"
                fix = "fix the input schema (valid JSON Schema, root `type: object`)"
            add(code, "error", f"{name}: {left_out}; it is left out of what the model sees", fix, name)
        if isinstance(schema, dict):
            out += [
                Finding(f.code, f.severity, f.message, f.fix, "surface", name, None, *at(name))
                for f in _schema_findings(name, schema, left_out is None)
            ]
        output = raw.get("outputSchema")
        if output is not None:
            problem = _schema_problem(output)
            if problem:
                add(
                    "output-schema-invalid",
                    "error",
                    f"{name}: output schema is not valid JSON Schema: {problem}",
                    "fix the output schema (clients validate results against it)",
                    name,
                )
    by_description: dict[str, list[str]] = {}
    for tool in surface.tools:
        if tool.description.strip():
            by_description.setdefault(tool.description, []).append(tool.name)
    for group in by_description.values():
        if len(group) > 1:
            add(
                "description-identical",
                "error",
                f"{', '.join(group)} have byte-identical descriptions: a model can't tell them apart",
                "say what each one is for, and when to use the other",
                group[0],
            )
    effects = surface.effects
    for score, a, b in confusable_pairs(surface):
        if {effects.get(a), effects.get(b)} == {"read", "destructive"}:  # a misroute between them destroys
            reader, destroyer = (a, b) if effects.get(a) == "read" else (b, a)
            add(
                "confusable-destructive",
                "warning",
                f"{reader} (read-only) and {destroyer} (destructive) are likely confusable (similarity {score:.2f}): "
                f"a read question routed to {destroyer} is a critical misroute",
                f"tell them apart in the descriptions ('reads only' / 'deletes …'), and add cases that ask to read "
                f"with must_not_call: [{destroyer}]",
                destroyer,
            )
            continue
        add(
            "confusable",
            "warning",
            f"{a} and {b} are likely confusable (similarity {score:.2f})",
            f"add boundary cases to the golden set, and a 'use {b} instead when…' line to {a} (and the reverse)",
            a,
        )
    if surface.tools and not any(effects.values()):
        add(
            "no-annotations",
            "warning",
            f"none of the {len(surface.tools)} tools declares what it does (MCP annotations: readOnlyHint, "
            "destructiveHint): a destructive misroute can't be told from a harmless one",
            "set annotations on each tool (readOnlyHint: true for reads; destructiveHint for deletes and "
            "overwrites), or name the tools no case may call with must_not_call",
        )
    return out


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return "not a JSON object"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        return schema_problem_text(exc)
    return None


def _schema_findings(name: str, schema: dict[str, Any], valid: bool) -> Iterable[Finding]:
    properties: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    missing = [r for r in required if r not in properties]
    if missing and not schema.get("additionalProperties"):
        yield Finding(
            "required-not-in-properties",
            "error",
            f"{name}: required field(s) {', '.join(map(str, missing))} are not in properties",
            "declare them under properties, or drop them from required",
        )
    if properties and "required" not in schema:
        yield Finding(
            "no-required",
            "warning",
            f"{name}: the input schema has properties but marks none as required",
            "list the arguments the tool can't work without under required",
        )
    if not valid:
        return
    # One finding per code for a tool, listing its parameters: one fix, said once.
    undescribed: list[str] = []
    unexplained: list[str] = []
    for param, spec in properties.items():
        if not isinstance(spec, dict):
            continue
        described = isinstance(spec.get("description"), str) and spec["description"].strip()
        if not described and "$ref" not in spec:
            undescribed.append(param)
        enum = spec.get("enum")
        if isinstance(enum, list) and len(enum) > 1:
            words = set(re.findall(r"[\w.+-]+", (spec.get("description") or "").lower()))
            if not described or not all(str(v).lower() in words for v in enum):
                values = ", ".join(map(str, enum[:6])) + ("…" if len(enum) > 6 else "")
                unexplained.append(f"{param} ({values})")
    if undescribed:
        yield Finding(
            "param-no-description",
            "warning",
            f"{name}: {plural(undescribed, 'parameter')} {have(undescribed)} no description",
            "say what each value is, its unit or format, and where it comes from",
        )
    if unexplained:
        yield Finding(
            "enum-unexplained",
            "warning",
            f"{name}: {plural(unexplained, 'enum')} {have(unexplained, 'does not', 'do not')} explain "
            f"{'its' if len(unexplained) == 1 else 'their'} values",
            _enum_fix(properties, unexplained),
        )


def _enum_fix(properties: dict[str, Any], unexplained: list[str]) -> str:
    """The fix, in this enum's own values: "say what each value means, e.g. 'fast: …; exact: …'"."""
    param = unexplained[0].split(" (", 1)[0]
    values = [str(v) for v in properties[param]["enum"][:3]]
    return (
        f"say what each value of {param} means in its description, e.g. '" + "; ".join(f"{v}: …" for v in values) + "'"
    )
