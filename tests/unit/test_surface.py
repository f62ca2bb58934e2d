"""The tool surface: schema validation by draft, left-out tools, safe names, the hash."""

from __future__ import annotations

import hashlib
import json

from toolselect.surface import build_surface, surface_hash

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_hash_is_the_documented_canonical_json():
    tools = [
        {"name": "b", "description": "B", "inputSchema": OBJ, "title": "ignored"},
        {"name": "a", "inputSchema": OBJ},
    ]
    canonical = json.dumps(
        [{"name": "a", "description": "", "inputSchema": OBJ}, {"name": "b", "description": "B", "inputSchema": OBJ}],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert surface_hash(tools) == hashlib.sha256(canonical.encode()).hexdigest()
    assert build_surface(tools, "x").hash == build_surface(list(reversed(tools)), "y").hash


def test_hash_changes_with_a_description():
    a = [{"name": "a", "description": "one", "inputSchema": OBJ}]
    b = [{"name": "a", "description": "two", "inputSchema": OBJ}]
    assert surface_hash(a) != surface_hash(b)


def test_invalid_schemas_are_left_out_with_a_reason():
    surface = build_surface(
        [
            {"name": "ok", "inputSchema": OBJ},
            {"name": "typo", "inputSchema": {"type": "strng"}},
            {"name": "not_object", "inputSchema": {"type": "array"}},
            {"name": "none"},
            {"name": "ok", "inputSchema": OBJ},
        ],
        "test",
    )
    assert surface.names == ("ok",)
    reasons = {lo.name: lo.reason for lo in surface.left_out[:3]}
    assert reasons["typo"] == (
        "input schema is not valid JSON Schema (Draft202012): type: 'strng' is not a JSON Schema type: use 'string'"
    )
    assert reasons["not_object"] == "input schema's root is not `type: object`, which model APIs require"
    assert reasons["none"] == "input schema is not a JSON object"
    assert surface.left_out[3].reason.startswith("duplicate name")


def test_schema_draft_follows_dollar_schema():
    draft7_tuple = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"xy": {"type": "array", "items": [{"type": "number"}]}},
    }
    surface = build_surface([{"name": "t", "inputSchema": draft7_tuple}], "x")
    assert surface.names == ("t",)  # valid draft-07, even though 2020-12 rejects array-form items
    assert surface.tools[0].validator.__class__.__name__ == "Draft7Validator"


def test_unsafe_names_get_safe_wire_names_that_map_back():
    long = "x" * 70
    surface = build_surface(
        [
            {"name": "search_web", "inputSchema": OBJ},
            {"name": "search.web", "inputSchema": OBJ},
            {"name": "search web", "inputSchema": OBJ},
            {"name": long, "inputSchema": OBJ},
        ],
        "x",
    )
    wire = {t.name: t.wire_name for t in surface.tools}
    assert wire["search_web"] == "search_web"  # safe names are never renamed
    assert wire["search.web"] == "search_web_2" and wire["search web"] == "search_web_3"
    assert wire[long] == "x" * 64
    for tool in surface.tools:
        assert surface.from_wire(tool.wire_name) == tool.name
    assert surface.from_wire("made_up") == "made_up"


def test_malformed_tools_are_left_out_not_a_crash():
    surface = build_surface(
        [
            {"name": "a", "description": 5, "inputSchema": OBJ},
            {"name": "b", "description": "ok", "inputSchema": {"$schema": 5, "type": "object"}},
            {"name": "c", "description": "fine", "inputSchema": OBJ},
        ],
        "x",
    )
    assert surface.names == ("c",)
    assert [lo.reason for lo in surface.left_out] == [
        "description is not text (got int)",
        "input schema's $schema is not a URI string",
    ]
