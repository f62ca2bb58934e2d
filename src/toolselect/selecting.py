"""Which cases a run asks, as pytest and promptfoo users pick them: `-k EXPRESSION` (words matched
against a case's name, tags and prompt, joined with `and`, `or`, `not` and parentheses, as pytest's
`-k`) and `--last-failed` (the cases the last run on this cache failed). Pure, but for reading and
writing the last run's failures."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .errors import ConfigError
from .golden import Case

LAST_FAILED = "lastfailed.json"  # in the answer cache's folder: the names of the cases the last run failed
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def matcher(expression: str) -> Callable[[Case], bool]:
    """`-k`: a case matches a word when the word is in its name, one of its tags or its prompt
    (case-insensitive); `and`, `or`, `not` and parentheses combine words."""
    tokens = [t for t in _TOKEN.findall(expression) if t]
    if not tokens:
        raise ConfigError("-k: the expression is empty", hint="e.g. -k forecast, -k 'weather and not alerts'")
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def joined(word: str, part: Callable[[], Callable[[Case], bool]]) -> list[Callable[[Case], bool]]:
        parts = [part()]
        while peek() == word:
            take()
            parts.append(part())
        return parts

    def either() -> Callable[[Case], bool]:
        parts = joined("or", both)
        return lambda c: any(p(c) for p in parts)

    def both() -> Callable[[Case], bool]:
        parts = joined("and", one)
        return lambda c: all(p(c) for p in parts)

    def one() -> Callable[[Case], bool]:
        word = peek()
        if word is None or word in ("and", "or", ")"):
            raise ConfigError(
                f"-k {expression!r}: a word is missing" + (f" before {word!r}" if word else " at the end")
            )
        take()
        if word == "not":
            inner = one()
            return lambda c: not inner(c)
        if word == "(":
            inner = either()
            if peek() != ")":
                raise ConfigError(f"-k {expression!r}: a ')' is missing")
            take()
            return inner
        needle = word.casefold()
        return lambda c: any(needle in text.casefold() for text in (c.name, c.prompt, *c.tags))

    found = either()
    if peek() is not None:
        raise ConfigError(f"-k {expression!r}: unexpected {peek()!r}", hint="join words with and, or, not")
    return found


def select(cases: Sequence[Case], expression: str | None, failed: Iterable[str] | None) -> list[Case]:
    """The cases a run asks: those `expression` matches, and of those the ones in `failed` (the last
    run's failures; None: every case)."""
    chosen = list(cases)
    if expression:
        keep = matcher(expression)
        chosen = [c for c in chosen if keep(c)]
    if failed is not None:
        names = set(failed)
        chosen = [c for c in chosen if c.name in names]
    return chosen


def read_last_failed(cache_dir: Path) -> list[str] | None:
    """The names of the cases the last run on this cache failed; None when no run recorded them."""
    try:
        data = json.loads((cache_dir / LAST_FAILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    names = data.get("failed") if isinstance(data, dict) else None
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else None


def write_last_failed(cache_dir: Path, failed: Sequence[str]) -> None:
    """Remember a run's failing cases for `--last-failed` (never through a link someone planted)."""
    from .nofollow import write_text

    cache_dir.mkdir(parents=True, exist_ok=True)
    if os.path.islink(cache_dir):
        return
    write_text(cache_dir / LAST_FAILED, json.dumps({"failed": list(failed)}, indent=1) + "\n")
