"""`toolselect init`: a starter toolselect.yaml and golden set for a tool surface (docs/golden-set.md).

For each tool three placeholder cases (a direct ask, a paraphrase, an argument-extraction ask), a
case on each likely-confusable boundary, and five no-tool cases — all `status: needs_review`, so
they are scored and shown but not counted by the gate until someone who knows the domain confirms
them. With `--draft` a model writes the prompts (paraphrases in users' own words, not the
description's); they still need review.
"""

from __future__ import annotations

import json
from typing import Any

from .builds import Setup
from .drafting import NEGATIVES, Drafts
from .lint.finding import BOUNDARY_PAIRS, confusable_pairs
from .surface import Surface

RECIPE = """\
# Golden set written by `toolselect init` from {origin}.
#
# Every case is `status: needs_review`: toolselect scores and shows it, but the gate ignores it
# until someone who knows the domain confirms the label and sets `status: reviewed`.
#
# How to write the cases (docs/golden-set.md):
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
  #   provider: anthropic   (or openai, openai-responses, gemini)
  #   model: <model name>
  provider: bm25
"""


def yaml_string(text: str) -> str:
    """A JSON string is a valid YAML scalar; YAML's own line breaks (NEL, LS, PS) escaped too, or a
    reader would fold them."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _one_line(text: str, limit: int = 90) -> str:
    text = comment_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def comment_text(text: object) -> str:
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


def render_golden(surface: Surface, drafts: Drafts | None = None, boundaries: int = BOUNDARY_PAIRS) -> str:
    drafts = drafts or Drafts()
    out = [RECIPE.format(origin=comment_text(surface.origin))]
    for tool in surface.tools:
        written = drafts.tools.get(tool.name, {})
        out.append(f"# --- {_one_line(tool.name)}: {_one_line(tool.description) or '(no description)'}")
        hint = _args_hint(tool.input_schema)
        for kind, placeholder in (
            ("direct", f"TODO: ask directly for what {tool.name} does"),
            ("paraphrase", f"TODO: what {tool.name} is for, in a user's own words (not the description's)"),
            ("arguments", f"TODO: a request that spells out the arguments {tool.name} needs"),
        ):
            out.append(f"- name: {yaml_string(f'{tool.name}-{kind}')}" + _by(drafts, written.get(kind)))
            out.append(f"  prompt: {yaml_string(written.get(kind) or placeholder)}")
            out.append(f"  expect_tool: {yaml_string(tool.name)}")
            out.append("  status: needs_review")
            if kind == "arguments" and hint:
                out.append(f"  # expect_args: {comment_text(hint)}")
        out.append("")
    for score, a, b in confusable_pairs(surface)[:boundaries]:  # the most confusable pairs
        written = drafts.pairs.get((a, b), {})
        right = written["tool"] if written.get("tool") in (a, b) else a
        pair = f"{comment_text(a)} and {comment_text(b)}"
        out.append(f"# --- the boundary between {pair} (likely confusable, similarity {score:.2f})")
        out.append(f"- name: {yaml_string(f'boundary-{a}-{b}')}" + _by(drafts, written.get("prompt")))
        todo = f"TODO: a request that could go either way between {a} and {b}"
        out.append(f"  prompt: {yaml_string(written.get('prompt') or todo)}")
        both = f"[{yaml_string(a)}, {yaml_string(b)}]"
        out.append(f"  expect_tool: {yaml_string(right)}  # TODO: the right one, or {both} when both are fine")
        out.append("  status: needs_review")
        out.append("  tags: [confusable]")
        out.append("")
    out.append("# --- negatives: no tool should be called")
    destructive = [t.name for t in surface.tools if t.effect == "destructive"]  # by the server's annotations
    if destructive:
        out.append("# (and never a destructive one: a call of a tool under must_not_call is a critical misroute)")
    for i, (kind, placeholder) in enumerate(NEGATIVES, 1):
        prompt = drafts.negatives[i - 1] if i <= len(drafts.negatives) else placeholder
        drafted = i <= len(drafts.negatives)
        by = f"; drafted by {comment_text(drafts.by)}" if drafted and drafts.by else ""
        out.append(f"- name: no-tool-{i}  # {kind}{by}")
        out.append(f"  prompt: {yaml_string(prompt)}")
        out.append("  expect_tool: null")
        if destructive:
            out.append(f"  must_not_call: [{', '.join(yaml_string(t) for t in destructive)}]")
        out.append("  status: needs_review")
    return "\n".join(out) + "\n"


def _by(drafts: Drafts, prompt: str | None) -> str:
    return f"  # drafted by {comment_text(drafts.by)}" if prompt and drafts.by else ""


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
        source += f"\n  setup: {yaml_string(setup.command)}   # {setup.why}: run before the server starts, on each side"
    if provider and model:
        chosen = f"  provider: {provider}\n  model: {yaml_string(model)}\n" + (
            f"  base_url: {yaml_string(base_url)}\n" if base_url else ""
        )
    else:
        chosen = OFFLINE_MODEL
    return CONFIG.format(source=source, golden=golden, model=chosen)


TRAJECTORY_RECIPE = """\
# Trajectory cases written by `toolselect init --trajectory` from {origin}:
# an 18-case suite, 3 cases of each of 6 kinds.
#
# A trajectory case lets the model call several tools. No tool is ever executed: each call is
# answered from the case's `mocks` (consumed in order, the last one repeats; `when: {{arg: value}}`
# answers only matching calls; a tool without a mock answers {{"status": "ok"}}), until the model
# answers in text or reaches max_turns (default 8). Each sample is scored 0–3 on selection,
# arguments, error recovery and restraint, with failure codes (docs/trajectories.md).
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
    return yaml_string(f"TODO: what {tool.name} returns")


def render_trajectories(surface: Surface) -> str:
    """The 18-case trajectory suite as a skeleton: no tool needed, single obvious tool, two plausible
    tools, multi-tool chain, first call errors, ambiguous request — 3 of each, for this surface."""
    tools = list(surface.tools)
    out = [TRAJECTORY_RECIPE.format(origin=comment_text(surface.origin))]
    if not tools:
        return "\n".join(out) + "[]\n"
    pairs = [(a, b) for _, a, b in confusable_pairs(surface)]
    by_name = {t.name: t for t in tools}

    def pick(i: int) -> Any:
        return tools[i % len(tools)]

    def case(name: str, prompt: str, lines: list[str]) -> None:
        out.append(f"- name: {yaml_string(name)}")
        out.append(f"  prompt: {yaml_string(prompt)}")
        out.extend(f"  {line}" for line in lines)
        out.append("  status: needs_review")
        out.append("")

    def args_comment(tool: Any) -> list[str]:
        hint = _args_hint(tool.input_schema)
        return [f"  # args: {comment_text(hint)}"] if hint else []

    def mocks(*chosen: Any) -> list[str]:
        lines = ["mocks:"]
        for t in {t.name: t for t in chosen}.values():
            lines.append(f"  {yaml_string(t.name)}: {{result: {_mock_result(t)}}}")
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
            ["expect_calls:", f"  - tool: {yaml_string(t.name)}", *args_comment(t), *mocks(t)],
        )

    out.append("# --- two plausible tools: selection discrimination (the likely-confusable pairs first)")
    plausible = list(dict.fromkeys(pairs + [(pick(i).name, pick(i + 1).name) for i in range(3)]))
    plausible = [plausible[i % len(plausible)] for i in range(3)]
    for i, (a, b) in enumerate(plausible):
        case(
            f"traj-plausible-{a}-{b}-{i + 1}",
            f"TODO: a request {a} and {b} could both seem to serve, where {a} is right ({i + 1})",
            [
                f"expect_calls: [{{tool: {yaml_string(a)}}}]",
                (
                    f"# acceptable: [{yaml_string(b)}]   # if {comment_text(b)} would also work, only not as well "
                    "(scored SEL-SUBOPTIMAL)"
                ),
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
                f"  - tool: {yaml_string(a.name)}",
                f"  - tool: {yaml_string(b.name)}",
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
                f"expect_calls: [{{tool: {yaml_string(t.name)}}}]",
                "sequence: in_order   # one retry is fine; the same failing call made more than once again is REC-LOOP",
                "mocks:   # it keeps failing (the last mock repeats): try another way, or tell the user",
                (
                    f'  {yaml_string(t.name)}: {{error: "503 Service Unavailable"}}   '
                    "# TODO: an error your server really returns"
                ),
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
                "expect_tool: null",
                "expect_reply: clarify   # ask for what is missing: a guessed call is RES-GUESSED",
            ],
        )
    return "\n".join(out)
