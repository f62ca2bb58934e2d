"""The rewriter: a model proposes K candidate descriptions for one tool (`toolselect fix`), given
the tool's definition, its confusable rivals' descriptions and the prompts it failed on — of the
tuning cases only: a held-out prompt never reaches the rewriter, so the held-out test stays honest.
Asked through the run's throttle, retries and answer cache, with structured output. Its answer is
untrusted text: read as a JSON object where it can be, each candidate a description of bounded
length, never one equal to the current text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .drafting import TEXT, object_schema, read_json_object
from .providers import SampleError

MAX_DESCRIPTION = 2000  # characters: Claude Code caps a tool's description at 2 KB
MAX_PROMPTS = 12  # failing prompts shown to the rewriter
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # bidi too

SYSTEM = (
    "You improve the descriptions of an MCP server's tools so that a model picks the right tool. Say what "
    "the tool does, when to use it and when to use its neighbour instead, in plain words. Keep it short: no "
    "longer than the current description by more than a fifth. Never name prompts or users. Answer with "
    "one JSON object and nothing else."
)


def schema() -> dict[str, Any]:
    """The answer's shape (no minItems/maxItems: strict structured output refuses them on some APIs;
    the prompt asks for K and the reader keeps at most K)."""
    candidate = object_schema({"description": TEXT, "why": TEXT})
    return object_schema({"candidates": {"type": "array", "items": candidate}})


@dataclass(frozen=True)
class Rival:
    """A tool the model picks in the target's place: the rewrite must tell the two apart."""

    name: str
    description: str


@dataclass(frozen=True)
class Candidate:
    description: str
    why: str


def request(
    tool: str, description: str, input_schema: Any, rivals: Sequence[Rival], failing: Sequence[str], k: int
) -> str:
    """The rewriter's prompt: the tool, its rivals, the tuning prompts it missed (the caller
    passes tuning prompts only)."""
    near = "\n".join(f"- {n.name}: {n.description}" for n in rivals) or "- (none)"
    missed = "\n".join(f"- {' '.join(p.split())[:300]}" for p in failing[:MAX_PROMPTS]) or "- (none)"
    return (
        f"Tool: {tool}\nCurrent description: {description}\nInput schema: {json.dumps(input_schema)[:2000]}\n\n"
        f"Tools it is confused with:\n{near}\n\nRequests that should have called {tool} but did not:\n{missed}\n\n"
        f'Return {{"candidates": [{{"description": ..., "why": ...}}, ...]}}: {k} different rewrites of the '
        "description, each with one line on what it changes."
    )


def read_candidates(text: str, current: str, k: int) -> tuple[list[Candidate], str | None]:
    """The candidates in a rewriter's answer (at most `k`, distinct, none equal to `current`, each a
    description of some words and at most MAX_DESCRIPTION characters), or why there are none."""
    value, problem = read_json_object(text)
    if value is None:
        return [], problem
    listed = value.get("candidates")
    if not isinstance(listed, list):
        return [], "the answer had no list of candidates"
    out: list[Candidate] = []
    seen = {" ".join(current.split())}
    for item in listed:
        said = item.get("description") if isinstance(item, dict) else None
        if not isinstance(said, str):
            continue
        flat = " ".join(said.split())
        if len(flat) < 10 or len(said) > MAX_DESCRIPTION or flat in seen or _CONTROL.search(said):
            continue  # too short, too long, a repeat, or control characters (never written into a source)
        seen.add(flat)
        why = item.get("why") if isinstance(item.get("why"), str) else ""
        out.append(Candidate(said.strip(), " ".join(str(why).split())[:200]))
        if len(out) == k:
            break
    return out, None if out else "no usable candidate in the answer"


async def propose(
    provider: Any,
    throttle: Any,
    tool: str,
    description: str,
    input_schema: Any,
    rivals: Sequence[Rival],
    failing: Sequence[str],
    k: int,
) -> tuple[list[Candidate], str | None]:
    """Ask the rewriter (through the answer cache): K candidates for `tool`, or why there are none."""
    prompt = request(tool, description, input_schema, rivals, failing, k)
    async with throttle:
        try:
            text, _ = await provider.write_cached(SYSTEM, prompt, schema())
        except SampleError as exc:
            return [], f"the rewriter's request failed ({exc})"
    if text is None:
        return [], "not in the answer cache (--cache-only)"
    return read_candidates(text, description, k)
