"""Checks that need no model: golden cases against the tool surface.

Errors (a case expecting a tool the surface does not have, an expected argument the tool's schema
does not declare) stop the run before any request. Warnings are reported and never fail.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import ConfigErrors, did_you_mean, where
from .golden import Case
from .surface import Surface


def declared_keys(schema: object) -> set[str] | None:
    """The argument names a schema declares, or None when it accepts any name."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    if schema.get("patternProperties") or schema.get("additionalProperties") not in (None, False):
        return None
    return set(schema["properties"])


def check_cases(cases: Sequence[Case], surface: Surface) -> list[str]:
    """Raise ConfigErrors for cases the surface makes impossible; return warnings."""
    errors: list[str] = []
    warnings: list[str] = []
    listed = set(surface.all_names)
    for case in cases:
        at = where(case.source.file, case.source.line)
        for tool in case.expected:
            if tool not in listed:
                errors.append(
                    f"{at}case '{case.name}' expects tool '{tool}', which the tool surface does not have"
                    f"{did_you_mean(tool, listed)}"
                )
                continue
            if surface.is_left_out(tool):
                warnings.append(
                    f"{at}case '{case.name}' expects '{tool}', which was left out (invalid input schema): "
                    "the model can't pick it"
                )
                continue
            declared = declared_keys(surface.get(tool).input_schema)
            if declared is None:
                continue
            for key in case.expect_args:
                if key not in declared:
                    errors.append(
                        f"{at}case '{case.name}': expect_args key '{key}' is not a parameter of {tool}"
                        f"{did_you_mean(key, declared)}"
                    )
    if errors:
        raise ConfigErrors(errors)
    return warnings


def check_tool_names(names: object, surface: Surface, where: str) -> None:
    """Options that name tools (e.g. min_tool_recall) must name tools the surface has."""
    listed = set(surface.all_names)
    unknown = [n for n in names if n not in listed]
    if unknown:
        raise ConfigErrors([f"{where} names '{n}', which the tool surface does not have{did_you_mean(n, listed)}" for n in unknown])
