"""A finding of `lint`: its code, severity, where it is, the message and the fix; and the thresholds
the checks share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import where
from ..lexical import similar_pairs
from ..options import INIT_BOUNDARIES
from ..perlist import PerList
from ..surface import Surface

Severity = Literal["error", "warning", "info"]


MAX_DESCRIPTION = 1024  # toolproof's default


CONFUSABLE = 0.30  # TF-IDF cosine at or above which two tools are "likely confusable"


MIN_CASES_PER_TOOL = 3


BOUNDARY_PAIRS = INIT_BOUNDARIES  # the most confusable pairs init drafts a boundary case for, and lint wants covered


MIN_NEGATIVE_SHARE = 0.15


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    fix: str = ""
    scope: Literal["surface", "golden"] = "surface"
    tool: str | None = None
    case: str | None = None
    file: str | None = None
    line: int | None = None

    def text(self) -> str:
        return f"{where(self.file, self.line)}{self.message}"


def declared_keys(schema: object) -> set[str] | None:
    """The argument names a schema declares, or None when it accepts any name."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    if schema.get("patternProperties") or schema.get("additionalProperties") not in (None, False):
        return None
    return set(schema["properties"])


def confusable_pairs(surface: Surface, threshold: float = CONFUSABLE) -> list[tuple[float, str, str]]:
    """The pairs of tools alike enough to be confused, most alike first: once per surface (the golden
    set's lint and the surface's ask for them, every case over the same pairs)."""
    pairs = _pairs.get(
        surface.tools, None, lambda: similar_pairs([(t.name, t.description, t.input_schema) for t in surface.tools])
    )
    return [p for p in pairs if p[0] >= threshold]


_pairs: PerList[list[tuple[float, str, str]]] = PerList(8)


def plural(items: Sequence[str], noun: str) -> str:
    return f"{noun} {items[0]}" if len(items) == 1 else f"{noun}s {', '.join(items)}"


def have(items: Sequence[str], one: str = "has", many: str = "have") -> str:
    return one if len(items) == 1 else many
