"""Work done once per tool list, not once per sample: every sample of one tool order sends the same
tuple of tools, so what is made of the list alone — its canonical JSON for the answer's key, its
JSON in a request's body, its tokens in the estimate — is made for the first and reused by the rest.
Pure: a value per (list, variant), found by the list's identity."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class PerList(Generic[T]):
    """`get(tools, variant, make)`: `make()` once per tool list and variant (what else shapes the
    value); the last `size` kept (a shuffled run has a list per sample). The list itself is held
    while its value is, so its identity can't be taken by another."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._seen: dict[tuple[int, Hashable], tuple[object, T]] = {}

    def get(self, tools: object, variant: Hashable, make: Callable[[], T]) -> T:
        at = (id(tools), variant)
        seen = self._seen.get(at)
        if seen is not None and seen[0] is tools:
            return seen[1]
        value = make()
        if len(self._seen) >= self.size:
            self._seen.pop(next(iter(self._seen)))
        self._seen[at] = (tools, value)
        return value


def compact(value: Any) -> str:
    """JSON as the SDKs send it (httpx's separators, UTF-8 as it is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


MARK = "\x00toolselect-" + secrets.token_hex(16)  # a value no prompt or schema holds


def spliced(render: Callable[[Any], str], value: dict[str, Any], field: str, text: bytes) -> bytes:
    """`render(value)` with `value[field]`'s own rendering replaced by `text` (made once elsewhere):
    the same bytes as rendering the whole, with the field's part not made again."""
    before, after = render({**value, field: MARK}).split(render(MARK), 1)
    return before.encode("utf-8") + text + after.encode("utf-8")
