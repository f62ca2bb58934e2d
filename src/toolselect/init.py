"""`toolselect init`: a starter toolselect.yaml and golden set for a tool surface (seed 001's recipe).

For each tool three placeholder cases (a direct ask, a paraphrase, an argument-extraction ask), a
case on each likely-confusable boundary, and five no-tool cases — all `status: needs_review`, so
they are scored and shown but not counted by the gate until someone who knows the domain confirms
them. With `--draft` a model writes the prompts (paraphrases in users' own words, not the
description's); they still need review.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .builds import Setup
from .lint.finding import confusable_pairs
from .surface import Surface

NEGATIVES = (
    ("small talk", "TODO: small talk, e.g. thanks, that's all"),
    ("general knowledge", "TODO: a general-knowledge question the model can answer itself"),
    ("from context", "TODO: a follow-up answered from the conversation, not a tool"),
    ("out of scope", "TODO: a request none of these tools serves"),
    ("explain", "TODO: ask the assistant to explain something in its own words"),
)

RECIPE = """\
# Golden set written by `toolselect init` from {origin}.
#
# Every case is `status: needs_review`: toolselect scores and shows it, but the gate ignores it
# until someone who knows the domain confirms the label and sets `status: reviewed`.
#
# The recipe (seed 001, "Write golden cases"):
# - per tool, 3-5 asks: a direct ask, paraphrases in users' own words (not the description's), and
#   an argument-extraction ask (ids, enums, numbers) with its expect_args filled in;
# - the confusable pairs: prompts on the boundary between two tools, labelled with the right one
#   (or `expect_tool: [a, b]` when both are fine);
# - at least 15% negatives, where no tool should be called;
# - multi-step asks: expect the first call;
# - a held-out slice (`split: holdout`) you never tune descriptions against.
# Replace every TODO with a real request — best of all, one a user actually sent.
"""

CONFIG = """\
# toolselect config written by `toolselect init` (a toolproof config works here too).
{source}

evals:
{model}  min_accuracy: 0.9
  golden: {golden}
"""
OFFLINE_MODEL = """\
  # bm25 is the offline baseline (no API key). For the model your users' clients use:
  #   provider: anthropic   (or openai, openai-responses)
  #   model: <model name>
  provider: bm25
"""


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


def _q(text: str) -> str:
    """A JSON string is a valid YAML scalar; YAML's own line breaks (NEL, LS, PS) escaped too, or a
    reader would fold them."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _one_line(text: str, limit: int = 90) -> str:
    text = _c(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _c(text: object) -> str:
    """Text from the surface (a name, an enum value, the server's origin) as it may stand in a YAML
    comment: one line, printable. A line break in it would end the comment and start YAML of its own
    (an extra case, `status: reviewed`)."""
    return "".join(ch for ch in " ".join(str(text).split()) if ch.isprintable())


def _args_hint(schema: Any) -> str | None:
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or not props:
        return None
    parts = []
    for name, spec in props.items():
        spec = spec if isinstance(spec, dict) else {}
        if isinstance(spec.get("enum"), list):
            hint = " | ".join(map(str, spec["enum"]))
        elif spec.get("type") in ("integer", "number"):
            low, high = spec.get("minimum"), spec.get("maximum")
            hint = f"a number{f' {low}..{high}' if low is not None and high is not None else ''}"
        else:
            hint = "from the prompt"
        parts.append(f"{name}: <{hint}>")
    return "{" + ", ".join(parts) + "}"


def render_golden(surface: Surface, drafts: Drafts | None = None) -> str:
    drafts = drafts or Drafts()
    out = [RECIPE.format(origin=_c(surface.origin))]
    for tool in surface.tools:
        written = drafts.tools.get(tool.name, {})
        out.append(f"# --- {_one_line(tool.name)}: {_one_line(tool.description) or '(no description)'}")
        hint = _args_hint(tool.input_schema)
        for kind, placeholder in (
            ("direct", f"TODO: ask directly for what {tool.name} does"),
            ("paraphrase", f"TODO: what {tool.name} is for, in a user's own words (not the description's)"),
            ("arguments", f"TODO: a request that spells out the arguments {tool.name} needs"),
        ):
            out.append(f"- name: {_q(f'{tool.name}-{kind}')}" + _by(drafts, written.get(kind)))
            out.append(f"  prompt: {_q(written.get(kind) or placeholder)}")
            out.append(f"  expect_tool: {_q(tool.name)}")
            out.append("  status: needs_review")
            if kind == "arguments" and hint:
                out.append(f"  # expect_args: {_c(hint)}")
        out.append("")
    for score, a, b in confusable_pairs(surface):
        written = drafts.pairs.get((a, b), {})
        right = written["tool"] if written.get("tool") in (a, b) else a
        out.append(f"# --- the boundary between {_c(a)} and {_c(b)} (likely confusable, similarity {score:.2f})")
        out.append(f"- name: {_q(f'boundary-{a}-{b}')}" + _by(drafts, written.get("prompt")))
        out.append(
            f"  prompt: {_q(written.get('prompt') or f'TODO: a request that could go either way between {a} and {b}')}"
        )
        out.append(f"  expect_tool: {_q(right)}  # TODO: the right one, or [{_q(a)}, {_q(b)}] when both are fine")
        out.append("  status: needs_review")
        out.append("  tags: [confusable]")
        out.append("")
    out.append("# --- negatives: no tool should be called")
    for i, (kind, placeholder) in enumerate(NEGATIVES, 1):
        prompt = drafts.negatives[i - 1] if i <= len(drafts.negatives) else placeholder
        drafted = i <= len(drafts.negatives)
        by = f"; drafted by {_c(drafts.by)}" if drafted and drafts.by else ""
        out.append(f"- name: no-tool-{i}  # {kind}{by}")
        out.append(f"  prompt: {_q(prompt)}")
        out.append("  expect_tool: null")
        out.append("  status: needs_review")
    return "\n".join(out) + "\n"


def _by(drafts: Drafts, prompt: str | None) -> str:
    return f"  # drafted by {_c(drafts.by)}" if prompt and drafts.by else ""


def render_config(
    source: str,
    golden: str,
    *,
    setup: Setup | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
) -> str:
    """The config `init` writes: the surface (with the setup its project needs, when a server is
    built or has dependencies to install), and the model that drafted the prompts — or bm25."""
    if setup is not None and source.startswith("server:"):
        source += f"\n  setup: {_q(setup.command)}   # {setup.why}: run before the server starts, on each side"
    if provider and model:
        chosen = f"  provider: {provider}\n  model: {_q(model)}\n" + (
            f"  base_url: {_q(base_url)}\n" if base_url else ""
        )
    else:
        chosen = OFFLINE_MODEL
    return CONFIG.format(source=source, golden=golden, model=chosen)


# --------------------------------------------------------------------------- --draft

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


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


TEXT = {"type": "string"}
MAX_PROMPT = 500  # characters: a drafted prompt longer than this is a model rambling, not a user asking
TOOL_SCHEMA = _object({"direct": TEXT, "paraphrase": TEXT, "arguments": TEXT})
PAIR_SCHEMA = _object({"prompt": TEXT, "tool": TEXT})
NEGATIVES_SCHEMA = _object({"prompts": {"type": "array", "items": TEXT}})
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


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer ({} when there is none)."""
    return read_json_object(text)[0] or {}


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


async def draft(provider: Any, surface: Surface, throttle: Any) -> Drafts:
    """Ask the model for prompts — one request per tool, per confusable pair, and one for the
    negatives — through `throttle` (its concurrency and pace, as `eval`), the provider's retries and the
    answer cache. Each answer is read leniently; a prompt that could not be drafted stays TODO, with why."""
    import asyncio

    from .providers import SampleError

    tools = list(surface.tools)
    pairs = [(a, b) for _, a, b in confusable_pairs(surface)]
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


# --------------------------------------------------------------------------- --trajectory

TRAJECTORY_RECIPE = """\
# Trajectory cases written by `toolselect init --trajectory` from {origin}:
# seed 004's canonical suite, 3 cases of each of its 6 kinds.
#
# A trajectory case lets the model call several tools. No tool is ever executed: each call is
# answered from the case's `mocks` (consumed in order, the last one repeats; `when: {{arg: value}}`
# answers only matching calls; a tool without a mock answers {{"status": "ok"}}), until the model
# answers in text or reaches max_turns (default 8). Each sample is scored 0–3 on selection,
# arguments, error recovery and restraint, with seed 004's failure codes (docs/trajectories.md).
#
# Every case is `status: needs_review`: replace each TODO with a real request, make the mocks look
# like what the server really returns, name the arguments you expect (`args:`), then set
# `status: reviewed`.
"""


def example_value(schema: Any, depth: int = 0) -> Any:
    """A value shaped like a JSON schema: enums' first value, minimums, an example per property."""
    if not isinstance(schema, dict) or depth > 4:
        return "TODO"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            return example_value(options[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties")
        return {
            name: example_value(spec, depth + 1) for name, spec in (props if isinstance(props, dict) else {}).items()
        }
    if kind == "array":
        return [example_value(schema.get("items"), depth + 1)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    return "TODO"


def _mock_result(tool: Any) -> str:
    """A stubbed result for a tool: shaped like its outputSchema when it has one, else a text."""
    if tool.output_schema:
        return json.dumps(example_value(tool.output_schema), ensure_ascii=False)
    return _q(f"TODO: what {tool.name} returns")


def render_trajectories(surface: Surface) -> str:
    """Seed 004's 18-case suite as a skeleton: no tool needed, single obvious tool, two plausible
    tools, multi-tool chain, first call errors, ambiguous request — 3 of each, for this surface."""
    tools = list(surface.tools)
    out = [TRAJECTORY_RECIPE.format(origin=_c(surface.origin))]
    if not tools:
        return "\n".join(out) + "[]\n"
    pairs = [(a, b) for _, a, b in confusable_pairs(surface)]
    by_name = {t.name: t for t in tools}

    def pick(i: int) -> Any:
        return tools[i % len(tools)]

    def case(name: str, prompt: str, lines: list[str]) -> None:
        out.append(f"- name: {_q(name)}")
        out.append(f"  prompt: {_q(prompt)}")
        out.extend(f"  {line}" for line in lines)
        out.append("  status: needs_review")
        out.append("")

    def args_comment(tool: Any) -> list[str]:
        hint = _args_hint(tool.input_schema)
        return [f"  # args: {_c(hint)}"] if hint else []

    def mocks(*chosen: Any) -> list[str]:
        lines = ["mocks:"]
        for t in {t.name: t for t in chosen}.values():
            lines.append(f"  {_q(t.name)}: {{result: {_mock_result(t)}}}")
        return lines

    out.append("# --- no tool needed: restraint's baseline (the request is answerable without a tool)")
    for i, prompt in enumerate(
        (
            "TODO: a greeting or a thank-you that needs no tool",
            "TODO: something the model knows without looking it up",
            "TODO: a question answered by what the user just said",
        ),
        1,
    ):
        case(f"traj-no-tool-{i}", prompt, ["expect_calls: []"])

    out.append("# --- single obvious tool: selection and argument basics")
    for i in range(3):
        t = pick(i)
        case(
            f"traj-single-{t.name}-{i + 1}",
            f"TODO: a request only {t.name} can serve ({i + 1})",
            ["expect_calls:", f"  - tool: {_q(t.name)}", *args_comment(t), *mocks(t)],
        )

    out.append("# --- two plausible tools: selection discrimination (the likely-confusable pairs first)")
    plausible = list(dict.fromkeys(pairs + [(pick(i).name, pick(i + 1).name) for i in range(3)]))
    plausible = [plausible[i % len(plausible)] for i in range(3)]
    for i, (a, b) in enumerate(plausible):
        case(
            f"traj-plausible-{a}-{b}-{i + 1}",
            f"TODO: a request {a} and {b} could both seem to serve, where {a} is right ({i + 1})",
            [
                f"expect_calls: [{{tool: {_q(a)}}}]",
                f"# acceptable: [{_q(b)}]   # if {_c(b)} would also work, only not as well (scored SEL-SUBOPTIMAL)",
                *mocks(by_name[a], by_name[b]),
            ],
        )

    out.append("# --- multi-tool chain: sequencing and restraint (the second call needs the first's result)")
    for i in range(3):
        a, b = pick(i), pick(i + 1)
        case(
            f"traj-chain-{a.name}-{b.name}-{i + 1}",
            f"TODO: a request that needs {a.name}, then {b.name} with what it returned ({i + 1})",
            [
                "expect_calls:",
                f"  - tool: {_q(a.name)}",
                f"  - tool: {_q(b.name)}",
                "sequence: strict   # in_order: other calls allowed between; unordered: any order",
                *mocks(a, b),
            ],
        )

    out.append("# --- first call errors: error recovery (retry once, try another way, or tell the user)")
    for i in range(3):
        t = pick(i)
        case(
            f"traj-error-{t.name}-{i + 1}",
            f"TODO: a request for {t.name} whose first call fails ({i + 1})",
            [
                f"expect_calls: [{{tool: {_q(t.name)}}}]",
                "sequence: in_order   # one retry is fine; the same failing call made more than once again is REC-LOOP",
                "mocks:   # it keeps failing (the last mock repeats): try another way, or tell the user",
                f'  {_q(t.name)}: {{error: "503 Service Unavailable"}}   # TODO: an error your server really returns',
                "final:   # the answer must tell the user what failed (else REC-SILENT)",
                '  regex: "(?i)error|unavailable|failed|could ?n.t|unable"',
            ],
        )

    out.append("# --- ambiguous request: ask for what is missing instead of guessing")
    for i in range(3):
        t = pick(i)
        case(
            f"traj-ambiguous-{t.name}-{i + 1}",
            f"TODO: a request for {t.name} that leaves out something it needs ({i + 1})",
            [
                "expect_calls: []   # the right move is a clarifying question, not a call",
                "final:",
                '  contains: "?"',
            ],
        )
    return "\n".join(out)
