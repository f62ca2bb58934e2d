"""The tool surface: the tools a model is offered, exactly as it would see them.

Built from a `tools/list` result (a live MCP server or a frozen tools.json). Tools whose input
schema is invalid are left out of what the model sees and named in the report; names a provider
would reject are mapped to safe names for the request and mapped back in every result.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import Draft202012Validator, validator_for

from ..bounds import MAX_FILE_DEPTH, nests_deeper
from ..severity import Effect, effect_of, hints_of

SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Tool:
    """One tool as listed by the server, plus the name it is sent under."""

    name: str
    description: str
    input_schema: dict[str, Any]
    wire_name: str  # the name a provider accepts; equal to `name` unless that one is unsafe
    output_schema: dict[str, Any] | None = None
    validator: Validator | None = field(default=None, compare=False, repr=False)
    effect: Effect | None = None  # what it does to its environment, by its annotations (severity.py)

    def definition(self) -> dict[str, Any]:
        """The MCP-side definition that the surface hash covers."""
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


@dataclass(frozen=True)
class LeftOut:
    name: str
    reason: str


@dataclass(frozen=True)
class Surface:
    """The offered tools (valid schemas, server order), the left-out ones, and the hash of all."""

    tools: tuple[Tool, ...]
    left_out: tuple[LeftOut, ...]
    hash: str
    origin: str
    definitions: tuple[dict[str, Any], ...] = ()  # every listed tool (name, description, inputSchema, …)
    raw: tuple[Any, ...] = field(default=(), compare=False, repr=False)  # tools/list exactly as served (for lint)

    def get(self, name: str) -> Tool | None:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> dict[str, Tool]:
        """Each tool by its name, made once (scoring and lint look a tool up for every case)."""
        return {t.name: t for t in reversed(self.tools)}  # a name listed twice: the first

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    @cached_property
    def effects(self) -> dict[str, Effect | None]:
        """Each listed tool's effect (offered or left out: a model may still call it by name)."""
        return {str(d["name"]): effect_of(d.get("annotations")) for d in self.definitions}

    @cached_property
    def all_names(self) -> tuple[str, ...]:
        """Every listed name, offered or left out."""
        return tuple(d["name"] for d in self.definitions)

    @cached_property
    def listed(self) -> frozenset[str]:
        """Every listed name, as a set (made once: each sample asks whether its tools are there)."""
        return frozenset(self.all_names)

    def is_left_out(self, name: str) -> bool:
        return any(lo.name == name for lo in self.left_out)

    @property
    def nameless(self) -> tuple[str, ...]:
        """The tools listed without a name (`tools[2]`), left out of what the model sees."""
        return tuple(lo.name for lo in self.left_out if lo.reason.startswith(NO_NAME))

    @property
    def listed_in(self) -> str:
        """Where its nameless tools are to be found: the tools file, or the server's tools/list."""
        return self.origin.removeprefix("file: ") if self.origin.startswith("file: ") else f"{self.origin}'s tools/list"

    def from_wire(self, wire_name: str) -> str:
        """The MCP name behind a name a provider answered with (unknown names pass through)."""
        for tool in self.tools:
            if tool.wire_name == wire_name:
                return tool.name
        return wire_name


@dataclass(frozen=True)
class Neighbour:
    """A tool of another server, offered beside the user's: a distractor (the stress test), or a server
    a client loads alongside (evals.alongside)."""

    server: str  # a bundled server's short name, or the label of a user's source
    definition: Mapping[str, Any]  # the MCP tool definition, as listed


NO_NAME = "has no name"


def nameless(index: int) -> str:
    """How a tool without a name is called: its place in the tools/list result."""
    return f"tools[{index}]"


def described(raw: Any) -> str:
    """' (its description begins "…")': what tells a nameless tool apart."""
    description = raw.get("description") if isinstance(raw, dict) else None
    if not isinstance(description, str) or not description.strip():
        return ""
    words = " ".join(description.split())
    return f' (its description begins "{words[:40]}{"…" if len(words) > 40 else ""}")'


def surface_hash(definitions: list[dict[str, Any]]) -> str:
    """sha256 of the canonical JSON of every tool's name, description and input schema."""
    canonical = sorted(
        (
            {"name": d.get("name"), "description": d.get("description") or "", "inputSchema": d.get("inputSchema")}
            for d in definitions
        ),
        key=lambda d: str(d["name"]),
    )  # json.dumps(default=str) below: a malformed tool still hashes instead of crashing
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_CHECKED: dict[str, tuple[Validator | None, str | None]] = {}  # schema text → its validator (or why not)


def schema_validator(schema: Any) -> tuple[Validator | None, str | None]:
    """A validator for the draft the schema's `$schema` names (default 2020-12), or why not. Checking
    a schema is slow (a stress test builds the same distractors into many surfaces): each schema is
    checked once per process."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _schema_validator(schema)
    if key not in _CHECKED:
        if len(_CHECKED) > 10_000:
            _CHECKED.clear()
        _CHECKED[key] = _schema_validator(schema)
    return _CHECKED[key]


JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
# what a type is often called in the language the server is written in → JSON Schema's name for it
TYPE_NAMES = {"int": "integer", "str": "string", "float": "number", "double": "number", "bool": "boolean",
              "dict": "object", "list": "array", "long": "integer", "text": "string", "map": "object"}  # fmt: skip


def schema_problem_text(exc: SchemaError) -> str:
    """Where in the schema the problem is (`properties.number.type`), what it is, and for a type
    misnamed the likely fix (`'int'` → `integer`)."""
    path = ".".join(str(p) for p in exc.path)
    at = f"{path}: " if path else ""
    value = exc.instance
    if exc.path and exc.path[-1] == "type" and isinstance(value, str):
        fix = TYPE_NAMES.get(value.lower()) or next(iter(difflib.get_close_matches(value.lower(), JSON_TYPES, 1)), None)
        known = ", ".join(JSON_TYPES)
        return f"{at}{value!r} is not a JSON Schema type" + (f": use {fix!r}" if fix else f" (one of {known})")
    return f"{at}{exc.message}"


def _schema_validator(schema: Any) -> tuple[Validator | None, str | None]:
    if not isinstance(schema, dict):
        return None, "input schema is not a JSON object"
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        return None, "input schema's $schema is not a URI string"
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        draft = cls.__name__.removesuffix("Validator")
        return None, f"input schema is not valid JSON Schema ({draft}): {schema_problem_text(exc)}"
    if schema.get("type") != "object":
        return None, "input schema's root is not `type: object`, which model APIs require"
    return cls(schema), None


def build_surface(raw_tools: list[dict[str, Any]], origin: str) -> Surface:
    """Validate and name-map a `tools/list` result (already flattened across pages)."""
    definitions: list[dict[str, Any]] = []
    valid: list[tuple[dict[str, Any], Validator]] = []
    left_out: list[LeftOut] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_tools):
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name.strip():
            left_out.append(LeftOut(nameless(index), NO_NAME + described(raw)))
            continue
        description = raw.get("description") or ""
        definition = {"name": name, "description": description, "inputSchema": raw.get("inputSchema")}
        annotations = raw.get("annotations")
        title = raw.get("title") or (annotations.get("title") if isinstance(annotations, dict) else None)
        if isinstance(title, str) and title:
            definition["title"] = title  # in the report (a review points at a changed title), not in the hash
        if hints := hints_of(annotations):
            definition["annotations"] = hints  # its effect (severity.py), in the report; not in the hash
        definitions.append(definition)
        if name in seen:
            left_out.append(LeftOut(name, "duplicate name: another tool is already listed under it"))
            continue
        seen.add(name)
        if not isinstance(description, str):
            left_out.append(LeftOut(name, f"description is not text (got {type(description).__name__})"))
            continue
        if nests_deeper(raw.get("inputSchema"), MAX_FILE_DEPTH):  # the server's words: never walked deeper
            left_out.append(LeftOut(name, f"input schema nests deeper than {MAX_FILE_DEPTH} levels"))
            continue
        validator, problem = schema_validator(raw.get("inputSchema"))
        if problem or validator is None:
            left_out.append(LeftOut(name, problem or "input schema can't be checked"))
            continue
        valid.append((raw, validator))
    # Names that are already safe keep themselves; unsafe ones get a free safe name.
    taken = {raw["name"] for raw, _ in valid if SAFE_NAME.match(raw["name"])}
    tools = []
    for raw, validator in valid:
        name = raw["name"]
        output = raw.get("outputSchema")
        tools.append(
            Tool(
                name=name,
                description=raw.get("description") or "",
                input_schema=raw["inputSchema"],
                wire_name=name if SAFE_NAME.match(name) else safe_name(name, taken),
                output_schema=output if isinstance(output, dict) else None,
                validator=validator,
                effect=effect_of(raw.get("annotations")),
            )
        )
    return Surface(
        tools=tuple(tools),
        left_out=tuple(left_out),
        hash=surface_hash(definitions),
        origin=origin,
        definitions=tuple(definitions),
        raw=tuple(raw_tools),
    )


def safe_name(name: str, taken: set[str]) -> str:
    """A name a provider accepts ([A-Za-z0-9_-], at most 64), unique within the surface."""
    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool"
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate = base[: 64 - len(suffix)] + suffix
        n += 1
    taken.add(candidate)
    return candidate
