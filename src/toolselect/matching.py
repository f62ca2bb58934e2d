"""Comparing an argument's value with its expected value, under a case's match mode. Pure."""

from __future__ import annotations

import math
import re
from typing import Any


def match_value(actual: Any, expected: Any, mode: Any = "loose") -> bool:
    """Compare one argument value with its expected value under a match mode."""
    if mode == "loose":
        return loose_equal(actual, expected)
    if mode == "contains":
        return isinstance(actual, str) and str(expected).casefold() in actual.casefold()
    if mode == "regex":
        return isinstance(actual, str) and re.search(expected, actual) is not None
    if mode == "exact":
        return exact_equal(actual, expected)
    if mode == "any_of":
        return any(loose_equal(actual, option) for option in expected)
    if isinstance(mode, dict) and "approx" in mode:
        return _is_number(actual) and _is_number(expected) and abs(actual - expected) <= mode["approx"]
    raise ValueError(f"unknown match mode {mode!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def loose_equal(actual: Any, expected: Any) -> bool:
    """toolproof's rule: strings trimmed and case-folded, numbers by value ("5" ≠ 5, true ≠ 1),
    objects key by key with extra keys allowed, lists element by element."""
    if isinstance(expected, str):
        return isinstance(actual, str) and actual.strip().casefold() == expected.strip().casefold()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and float(actual) == float(expected)
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and loose_equal(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(loose_equal(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return actual == expected


def exact_equal(actual: Any, expected: Any) -> bool:
    """Strict JSON equality: same JSON type and value; objects with exactly the same keys.
    Numbers compare by value (JSON has one number type, so 5 equals 5.0)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and actual == expected
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(exact_equal(actual[k], v) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(exact_equal(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return type(actual) is type(expected) and actual == expected
