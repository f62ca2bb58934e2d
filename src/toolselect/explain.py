"""Turn pydantic validation errors into one `file:line: message` line each."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from .errors import did_you_mean, where
from .locate import Loc, Located

# Friendly words for pydantic's type errors.
_TYPE_WORDS = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "text",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
    "list_type": "a list",
    "tuple_type": "a list",
}


def show(value: Any, limit: int = 40) -> str:
    """A short, quoted rendering of a user's value for an error message."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dotted(loc: Loc) -> str:
    """`("evals", "cases", 2, "expect_tool")` → `evals.cases[2].expect_tool`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def explain_errors(
    exc: ValidationError,
    doc: Located,
    *,
    prefix: Loc = (),
    model_at: Callable[[Loc], type[BaseModel] | None] | None = None,
    hints: dict[str, str] | None = None,
    label: str = "",
    ranges: Callable[[Loc], tuple[str, str] | None] | None = None,
) -> list[str]:
    """One message per failing location (the first error at each), with file:line.

    `prefix` is prepended to pydantic's locations (e.g. a golden file's case index); `label` names
    the root in messages (e.g. "case" for a JSONL line); `model_at(loc)` names the model at a
    location so unknown keys can get a did-you-mean. A missing key is not reported when an unknown
    key next to it is a typo of it: the did-you-mean says it all.
    """
    errors = []
    seen: set[Loc] = set()
    for error in exc.errors(include_url=False):
        loc = prefix + tuple(p for p in error["loc"] if not _is_union_tag(p))
        if loc in seen or any(loc[: len(s)] == s for s in seen if s):
            continue
        seen.add(loc)
        errors.append((error, loc))
    typos = {
        (loc[:-1], close)
        for error, loc in errors
        if error["type"] == "extra_forbidden" and model_at and (close := _close_key(loc, model_at))
    }
    return [
        _one(error, loc, doc, model_at, hints or {}, label, ranges)
        for error, loc in errors
        if not (error["type"] == "missing" and (loc[:-1], str(loc[-1])) in typos)
    ]


def _known_keys(model_at: Callable[[Loc], Any] | None, parent: Loc) -> list[str]:
    model = model_at(parent) if model_at else None
    return [f.alias or n for n, f in model.model_fields.items()] if model is not None else []


def _close_key(loc: Loc, model_at: Callable[[Loc], Any] | None) -> str | None:
    import difflib

    close = difflib.get_close_matches(str(loc[-1]), _known_keys(model_at, loc[:-1]), n=1, cutoff=0.6)
    return close[0] if close else None


def _join(label: str, path: str) -> str:
    """'case' + 'question' → 'case.question'; 'cases' + '[0].prompt' → 'cases[0].prompt'."""
    if label and path and not path.startswith("["):
        return f"{label}.{path}"
    return label + path


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the union member's name to the location ("str", "list[str]", "function-after[...]")
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "bool", "dict", "list", "none"})


def _one(
    error: Any,
    loc: Loc,
    doc: Located,
    model_at: Callable[[Loc], Any] | None,
    hints: dict[str, str],
    label: str,
    ranges: Callable[[Loc], tuple[str, str] | None] | None,
) -> str:
    kind = error["type"]
    name = _join(label, dotted(loc))
    field = str(loc[-1]) if loc else ""
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        parent = loc[:-1]
        section = _join(label, dotted(parent)) or "the top level"
        text = f"unknown key '{field}' in {section}{did_you_mean(field, _known_keys(model_at, parent))}"
        return where(doc.file, doc.line(loc, key=True)) + text
    if kind == "missing":
        parent = loc[:-1]
        hint = hints.get(field, "")
        text = f"{_join(label, dotted(parent)) or 'the file'}: missing required key '{field}'" + (
            f" ({hint})" if hint else ""
        )
        return where(doc.file, doc.line(parent)) + text
    line = doc.line(loc)
    if kind in _TYPE_WORDS:
        return where(doc.file, line) + f"{name} must be {_TYPE_WORDS[kind]} (got {show(value)})"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        known = ranges(loc) if ranges else None
        if known:
            bounds, unit = known
            return (
                where(doc.file, line) + f"{name} must be {bounds} (got {show(value)})" + (f"; {unit}" if unit else "")
            )
        op = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "more than",
            "less_than": "less than",
        }[kind]
        limit = next(iter(ctx.values()), "")
        return where(doc.file, line) + f"{name} must be {op} {limit} (got {show(value)})"
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        return where(doc.file, line) + f"{name} must be one of {expected} (got {show(value)})"
    if kind == "string_too_short":
        return where(doc.file, line) + f"{name} must not be empty"
    if kind == "value_error":
        text = str(ctx.get("error", error["msg"]))
        return where(doc.file, line) + (f"{name}: {text}" if name else text)
    return where(doc.file, line) + f"{name}: {error['msg']} (got {show(value)})"
