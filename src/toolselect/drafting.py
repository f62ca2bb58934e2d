"""`toolselect init --draft`: a model drafts the golden set's prompts — per tool a direct ask, a
paraphrase and an argument-extraction ask, a prompt on each likely-confusable boundary, and
no-tool asks — through the run's throttle, retries and answer cache. Its answers are untrusted
text: read as JSON objects where they can be, and never more than a short prompt each."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .lint.finding import BOUNDARY_PAIRS, confusable_pairs
from .surface import Surface

NEGATIVES = (
    ("small talk", "TODO: small talk, e.g. thanks, that's all"),
    ("general knowledge", "TODO: a general-knowledge question the model can answer itself"),
    ("from context", "TODO: a follow-up answered from the conversation, not a tool"),
    ("out of scope", "TODO: a request none of these tools serves"),
    ("explain", "TODO: ask the assistant to explain something in its own words"),
)


@dataclass
class Drafts:
    """Prompts a model wrote: per tool {direct, paraphrase, arguments}, per pair {prompt, tool}, negatives;
    who wrote them, and each prompt it could not draft with why."""

    tools: dict[str, dict[str, str]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    negatives: list[str] = field(default_factory=list)
    by: str = ""  # "openai gpt-4.1-mini": said in a comment on each drafted case
    missing: list[tuple[str, str]] = field(default_factory=list)  # (case name, why it is still TODO)
    total: int = 0  # prompts asked for

    @property
    def drafted(self) -> int:
        return self.total - len(self.missing)

    def summary(self) -> str:
        """ "drafted 9 of 12 prompts; 3 kept as TODO (get_current_time-arguments: the answer was not JSON …)"."""
        said = f"drafted {self.drafted} of {self.total} prompts"
        if not self.missing:
            return said
        shown = "; ".join(f"{name}: {why}" for name, why in self.missing[:3])
        more = f"; and {len(self.missing) - 3} more" if len(self.missing) > 3 else ""
        return f"{said}; {len(self.missing)} kept as TODO ({shown}{more})"


SYSTEM = (
    "You write test prompts for a tool-selection evaluation of an assistant that can call tools. "
    "Write what real users type: short, informal, concrete (names, places, numbers). Never reuse the "
    "tool's description or name; use the user's own words. Answer with one JSON object and nothing else."
)


def tool_request(name: str, description: str, schema: Any) -> str:
    return (
        f"Tool: {name}\nDescription: {description}\nInput schema: {json.dumps(schema)}\n\n"
        'Return {"direct": ..., "paraphrase": ..., "arguments": ...}: three different user requests that '
        "should be answered by calling this tool — a direct ask, a paraphrase in everyday words, and one that "
        "states concrete values for its arguments."
    )


def pair_request(a: tuple[str, str], b: tuple[str, str]) -> str:
    return (
        f"Tool A: {a[0]} — {a[1]}\nTool B: {b[0]} — {b[1]}\n\n"
        'Return {"prompt": ..., "tool": ...}: one user request on the boundary between these two tools, the '
        "kind a model might send to the wrong one, and the name of the tool that is actually right."
    )


def negatives_request(names: list[str]) -> str:
    return (
        f"The assistant's tools: {', '.join(names)}.\n\n"
        'Return {"prompts": [...]}: five user messages for which calling any of these tools would be wrong '
        "(small talk, general knowledge, a follow-up answered from context, something out of scope, a request to "
        "explain)."
    )


def object_schema(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


TEXT = {"type": "string"}


MAX_PROMPT = 500  # characters: a drafted prompt longer than this is a model rambling, not a user asking


TOOL_SCHEMA = object_schema({"direct": TEXT, "paraphrase": TEXT, "arguments": TEXT})


PAIR_SCHEMA = object_schema({"prompt": TEXT, "tool": TEXT})


NEGATIVES_SCHEMA = object_schema({"prompts": {"type": "array", "items": TEXT}})


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n(.*?)```", re.S)


def read_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A model's answer as one JSON object, read leniently — the whole answer, a code fence, the first
    balanced {…} inside prose, single quotes (a Python dict) — or (None, why not)."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    candidates += _braced(text)
    for candidate in candidates:
        value = _loads(candidate)
        if isinstance(value, dict):
            return value, None
    if not text.strip():
        return None, "the answer was empty"
    shown = " ".join(text.split())[:60]
    return None, f"the answer was not JSON ({shown!r}{'…' if len(' '.join(text.split())) > 60 else ''})"


def _keys(value: dict[str, Any]) -> str:
    """What an answer held instead, for the message: " (it had: title, description)"."""
    keys = [str(k) for k in value][:4]
    return f" (it had: {', '.join(keys)})" if keys else " (it was {})"


def _loads(text: str) -> Any:
    import ast

    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)  # {'a': 'b'}: a model that writes Python's quotes
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def _braced(text: str) -> list[str]:
    """Each balanced {…} in the text, outermost first (quotes respected)."""
    out, depth, start, quote, escaped = [], 0, -1, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth:
            quote = ch
        elif ch == "{":
            depth, start = depth + 1, (i if depth == 0 else start)
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append(text[start : i + 1])
    return out


async def draft(provider: Any, surface: Surface, throttle: Any, boundaries: int = BOUNDARY_PAIRS) -> Drafts:
    """Ask the model for prompts — one request per tool, per confusable pair, and one for the
    negatives — through `throttle` (its concurrency and pace, as `eval`), the provider's retries and the
    answer cache. Each answer is read leniently; a prompt that could not be drafted stays TODO, with why."""
    import asyncio

    from .providers import SampleError

    tools = list(surface.tools)
    pairs = [(a, b) for _, a, b in confusable_pairs(surface)[:boundaries]]
    by_name = {t.name: t for t in tools}
    requests = [(tool_request(t.name, t.description, t.input_schema), TOOL_SCHEMA) for t in tools]
    requests += [
        (pair_request((a, by_name[a].description), (b, by_name[b].description)), PAIR_SCHEMA) for a, b in pairs
    ]
    requests.append((negatives_request([t.name for t in tools]), NEGATIVES_SCHEMA))

    async def ask(prompt: str, schema: dict[str, Any]) -> tuple[str, str | None]:
        async with throttle:
            try:
                text, _ = await provider.write_cached(SYSTEM, prompt, schema)
            except SampleError as exc:
                return "", f"the request failed ({exc})"
        return text or "", None

    answers = await asyncio.gather(*(ask(prompt, schema) for prompt, schema in requests))
    drafts = Drafts(by=provider.author, total=3 * len(tools) + len(pairs) + len(NEGATIVES))

    def read(answer: tuple[str, str | None], names: list[str]) -> dict[str, Any] | None:
        text, failed = answer
        value, problem = (None, failed) if failed else read_json_object(text)
        if value is None:
            drafts.missing += [(name, str(problem)) for name in names]
        return value

    def text(value: Any) -> str | None:
        """A prompt, or None: some words (three letters at least), not a page."""
        said = value.strip() if isinstance(value, str) else ""
        return said if len(re.findall(r"[^\W\d_]", said)) >= 3 and len(said) <= MAX_PROMPT else None

    def why(value: dict[str, Any], key: str) -> str:
        if key not in value:
            return f"the answer had no {key!r}" + _keys(value)
        shown = " ".join(str(value[key]).split())
        return f"the answer's {key!r} is not a prompt ({shown[:40]!r}{'…' if len(shown) > 40 else ''})"

    kinds = ("direct", "paraphrase", "arguments")
    for tool, answer in zip(tools, answers[: len(tools)], strict=True):
        value = read(answer, [f"{tool.name}-{k}" for k in kinds])
        if value is None:
            continue
        drafts.tools[tool.name] = {k: t for k in kinds if (t := text(value.get(k)))}
        drafts.missing += [(f"{tool.name}-{k}", why(value, k)) for k in kinds if k not in drafts.tools[tool.name]]
    for (a, b), answer in zip(pairs, answers[len(tools) : len(tools) + len(pairs)], strict=True):
        value = read(answer, [f"boundary-{a}-{b}"])
        if value is None:
            continue
        drafts.pairs[(a, b)] = {k: t for k in ("prompt", "tool") if (t := text(value.get(k)))}
        if "prompt" not in drafts.pairs[(a, b)]:
            drafts.missing.append((f"boundary-{a}-{b}", why(value, "prompt")))
    value = read(answers[-1], [f"no-tool-{i}" for i in range(1, len(NEGATIVES) + 1)])
    if value is not None:
        prompts = value.get("prompts")
        listed = [t for p in prompts if (t := text(p))] if isinstance(prompts, list) else []
        drafts.negatives = listed[: len(NEGATIVES)]
        short = "the answer had fewer prompts" if isinstance(prompts, list) else why(value, "prompts")
        drafts.missing += [(f"no-tool-{i}", short) for i in range(len(drafts.negatives) + 1, len(NEGATIVES) + 1)]
    return drafts
