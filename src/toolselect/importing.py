"""A published eval suite → a golden file (`toolselect import`). Pure: the file's text in, the cases
and what could not be brought over out, then the golden YAML with a comment per case saying where
it came from.

Three shapes are read:
- `{query, expectedTools[], reference?, context?, id?, category?}` items (Apify's MCP server's
  evals/test_cases.json), a list or under one key of an object: a list of expected tools is any of
  them (the first call is one of them), none is "no tool";
- the golden-set evaluator's JSONL, `{id, question, expected_tool, expected_args}` per line;
- promptfoo test files (`tests:` or a list of tests) that assert on tool calls: `tool-call-f1`
  (threshold 1: every listed tool, in any order — a trajectory; below 1: any of them),
  `trajectory:tool-used` and `trajectory:tool-sequence` (in that order), and `javascript` that
  compares a call's name with one tool.
Anything else is an error that lists the fields seen.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import ConfigError
from .init import comment_text, yaml_string

PROMPT_KEYS = ("query", "question", "prompt", "input", "task", "message", "user_input", "request")
LIST_KEYS = ("testCases", "test_cases", "cases", "tests", "examples", "data", "items")


@dataclass(frozen=True)
class Imported:
    """One case as it will be written: its fields, and the comment lines that say where it came from."""

    name: str
    prompt: str
    expect_tool: str | list[str] | None = None
    expect_calls: list[str] = field(default_factory=list)
    sequence: str | None = None  # with expect_calls: in_order or unordered
    expect_args: Mapping[str, Any] | None = None
    tags: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # the comment lines above it


@dataclass(frozen=True)
class Suite:
    shape: str  # how the file was read, said in the header
    cases: list[Imported]
    skipped: list[str]  # "where: why", for what could not be brought over


def read_suite(text: str, shown: str) -> Suite:
    """The cases of a suite file (its text, and how to name it in messages)."""
    data = _parse(text, shown)
    if isinstance(data, list) and data and all(isinstance(x, Mapping) for x in data) and _jsonl(data):
        return _from_jsonl(data, shown)
    tests = _promptfoo_tests(data)
    if tests is not None:
        return _from_promptfoo(tests, data if isinstance(data, Mapping) else {}, shown)
    items = _items(data)
    if items is not None and any(_has(i, "expectedTools", "expected_tools") for i in items):
        return _from_expected_tools(items, shown)
    raise ConfigError(f"{shown}: no suite shape toolselect can import: {_fields_seen(data)}", hint=HINT)


HINT = (
    "toolselect import reads items of {query, expectedTools[], reference?, context?} (Apify's evals), the "
    "golden-set JSONL ({question, expected_tool, expected_args}) and promptfoo tests that assert on tool calls "
    "(tool-call-f1, trajectory:tool-used, trajectory:tool-sequence); docs/golden-set.md#importing-a-published-suite"
)


def render_suite(suite: Suite, source: str) -> str:
    """The golden YAML: a header, then each case under the comment that says where it came from."""
    out = [
        f"# Imported by `toolselect import` from {comment_text(source)} ({suite.shape}): {len(suite.cases)} cases.",
        "# The labels are the suite's own; read them before you trust a number (docs/golden-set.md).",
    ]
    if suite.skipped:
        out.append(f"# Not imported ({len(suite.skipped)}):")
        out += [f"#   {comment_text(s)}" for s in suite.skipped]
    out.append("")
    for case in suite.cases:
        out += [f"# {comment_text(line)}" for line in case.said]
        out.append(f"- name: {yaml_string(case.name)}")
        out.append(f"  prompt: {yaml_string(case.prompt)}")
        if case.expect_calls:
            out.append("  expect_calls:")
            out += [f"    - {{tool: {yaml_string(t)}}}" for t in case.expect_calls]
            if case.sequence:
                out.append(f"  sequence: {case.sequence}")
        elif isinstance(case.expect_tool, list):
            out.append(f"  expect_tool: [{', '.join(yaml_string(t) for t in case.expect_tool)}]  # any of them")
        else:
            out.append(f"  expect_tool: {yaml_string(case.expect_tool) if case.expect_tool else 'null'}")
        if case.expect_args:
            out.append(f"  expect_args: {json.dumps(case.expect_args, ensure_ascii=False)}")
        if case.tags:
            out.append(f"  tags: [{', '.join(yaml_string(t) for t in case.tags)}]")
        out.append("")
    return "\n".join(out)


# ----------------------------------------------------------------------------- reading the file


def _parse(text: str, shown: str) -> Any:
    stripped = text.strip()
    if not stripped:
        raise ConfigError(f"{shown}: the file is empty")
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    lines = [x for x in stripped.splitlines() if x.strip()]
    if lines and all(x.lstrip().startswith("{") for x in lines):  # JSONL
        out = []
        for number, line in enumerate(stripped.split("\n"), 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise ConfigError(f"{shown}:{number}: not JSON: {exc}") from None
        return out
    try:
        return yaml.safe_load(stripped)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{shown}: neither JSON, JSONL nor YAML: {exc}") from None


def _items(data: Any) -> list[Mapping[str, Any]] | None:
    """The suite's items: the list itself, or the one list of objects under a key of an object."""
    if isinstance(data, list):
        return [x for x in data if isinstance(x, Mapping)] or None
    if isinstance(data, Mapping):
        for key in (*LIST_KEYS, *data):
            value = data.get(key)
            if isinstance(value, list) and value and all(isinstance(x, Mapping) for x in value):
                return list(value)
    return None


def _has(item: Mapping[str, Any], *keys: str) -> bool:
    return any(k in item for k in keys)


def _fields_seen(data: Any) -> str:
    items = _items(data)
    if items:
        seen = sorted({k for item in items for k in item})
        return f"its items have the fields {', '.join(seen[:20])}"
    if isinstance(data, Mapping):
        return f"it is an object with the keys {', '.join(sorted(map(str, data))[:20])}"
    return f"it is a {type(data).__name__}, not a list of cases"


def _prompt(item: Mapping[str, Any]) -> str | None:
    for key in PROMPT_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _tool_names(value: Any) -> list[str] | None:
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list) and all(isinstance(x, str) and x for x in value):
        return list(value)
    return None


# ----------------------------------------------------------------------------- {query, expectedTools}


def _from_expected_tools(items: Sequence[Mapping[str, Any]], shown: str) -> Suite:
    cases, skipped, names = [], [], _Names()
    for i, item in enumerate(items):
        where = f"{shown} item {i + 1}" + (f" ({item['id']})" if isinstance(item.get("id"), str) else "")
        prompt = _prompt(item)
        raw = item.get("expectedTools", item.get("expected_tools"))
        tools = _tool_names(raw) if raw else []
        if prompt is None or tools is None:
            skipped.append(f"{where}: no query, or expectedTools is not a list of names")
            continue
        said = [f"from {shown}: " + (f"id {item['id']}" if "id" in item else f"item {i + 1}")]
        category = item.get("category")
        if isinstance(category, str):
            said[0] += f" (category {category})"
        if isinstance(item.get("reference"), str):
            said.append(f"reference: {item['reference']}")
        if item.get("context"):
            said.append(f"context (not asked: a case is one turn): {_short(item['context'])}")
        name = names.take(str(item.get("id") or prompt))
        expected: str | list[str] | None = tools[0] if len(tools) == 1 else (tools or None)
        cases.append(Imported(name, prompt, expected, tags=[category] if isinstance(category, str) else [], said=said))
    return Suite("{query, expectedTools[]} items", cases, skipped)


# ----------------------------------------------------------------------------- the golden-set JSONL


def _jsonl(data: Sequence[Mapping[str, Any]]) -> bool:
    return all("question" in x and "expected_tool" in x for x in data)


def _from_jsonl(data: Sequence[Mapping[str, Any]], shown: str) -> Suite:
    cases, skipped, names = [], [], _Names()
    for number, item in enumerate(data, 1):
        prompt, tool = item.get("question"), item.get("expected_tool")
        if not isinstance(prompt, str) or not (tool is None or isinstance(tool, str)):
            skipped.append(f"{shown}:{number}: question or expected_tool is not text")
            continue
        args = item.get("expected_args")
        cases.append(
            Imported(
                names.take(str(item.get("id") or prompt)),
                prompt,
                tool,
                expect_args=args if isinstance(args, Mapping) and args else None,
                said=[f"from {shown}:{number}" + (f" (id {item['id']})" if "id" in item else "")],
            )
        )
    return Suite("the golden-set evaluator's JSONL", cases, skipped)


# ----------------------------------------------------------------------------- promptfoo


def _promptfoo_tests(data: Any) -> list[Mapping[str, Any]] | None:
    tests = data.get("tests") if isinstance(data, Mapping) else data
    if isinstance(tests, list) and any(isinstance(t, Mapping) and ("assert" in t or "vars" in t) for t in tests):
        return [t for t in tests if isinstance(t, Mapping)]
    return None


_NAME_IS = re.compile(r"""\.name\s*===?\s*['"]([A-Za-z0-9_.:/-]{1,128})['"]""")


def _from_promptfoo(tests: Sequence[Mapping[str, Any]], config: Mapping[str, Any], shown: str) -> Suite:
    cases, skipped, names = [], [], _Names()
    template = _one_template(config.get("prompts"))
    for i, test in enumerate(tests, 1):
        where = f"{shown} test {i}" + (f" ({test['description']})" if isinstance(test.get("description"), str) else "")
        given = test.get("vars")
        variables: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        prompt = _render(template, variables) if template else _prompt(variables) or _only_text(variables)
        if not prompt:
            seen = ", ".join(sorted(map(str, variables))) or "none"
            skipped.append(f"{where}: no prompt (its vars: {seen}; a prompts: template with {{{{var}}}} names it)")
            continue
        expectation = _tool_assertion(test.get("assert"))
        if expectation is None:
            skipped.append(f"{where}: no assertion on a tool call this can read (tool-call-f1, trajectory:tool-*)")
            continue
        kind, tools = expectation
        said = [
            f"from {shown}: test {i}" + (f": {test['description']}" if isinstance(test.get("description"), str) else "")
        ]
        said.append(f"asserted by {kind}")
        name = names.take(str(test.get("description") or prompt))
        if kind in ("tool-call-f1 (threshold 1)", "trajectory:tool-used") and len(tools) > 1:
            cases.append(Imported(name, prompt, expect_calls=tools, sequence="unordered", said=said))
        elif kind == "trajectory:tool-sequence" and len(tools) > 1:
            cases.append(Imported(name, prompt, expect_calls=tools, sequence="in_order", said=said))
        else:
            cases.append(Imported(name, prompt, tools[0] if len(tools) == 1 else tools, said=said))
    return Suite("promptfoo tests with tool-call assertions", cases, skipped)


def _one_template(prompts: Any) -> str | None:
    if isinstance(prompts, str):
        prompts = [prompts]
    if isinstance(prompts, list) and len(prompts) == 1 and isinstance(prompts[0], str) and "{{" in prompts[0]:
        return prompts[0]
    return None


def _render(template: str, variables: Mapping[str, Any]) -> str | None:
    missing = []

    def one(m: re.Match[str]) -> str:
        value = variables.get(m.group(1))
        if value is None:
            missing.append(m.group(1))
            return ""
        return value if isinstance(value, str) else json.dumps(value)

    text = re.sub(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", one, template)
    return None if missing else text


def _only_text(variables: Mapping[str, Any]) -> str | None:
    texts = [v for v in variables.values() if isinstance(v, str) and v.strip()]
    return texts[0] if len(texts) == 1 else None


def _tool_assertion(asserts: Any) -> tuple[str, list[str]] | None:
    """(how it was asserted, the tools) from the first assertion on tool calls that names them."""
    for a in asserts if isinstance(asserts, list) else []:
        if not isinstance(a, Mapping):
            continue
        kind, value = a.get("type"), a.get("value")
        tools = _tool_names(value)
        if kind == "tool-call-f1" and tools:
            threshold = a.get("threshold", 1)
            whole = not isinstance(threshold, (int, float)) or threshold >= 1
            return ("tool-call-f1 (threshold 1)" if whole else f"tool-call-f1 (threshold {threshold})"), tools
        if kind in ("trajectory:tool-used", "trajectory:tool-sequence") and tools:
            return str(kind), tools
        if kind == "javascript" and isinstance(value, str) and len(set(_NAME_IS.findall(value))) == 1:
            return "javascript (a call's name)", _NAME_IS.findall(value)[:1]
    return None


# ----------------------------------------------------------------------------- names


class _Names:
    """Case names: the suite's id (or the prompt, cut), unique."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def take(self, wanted: str) -> str:
        base = " ".join(wanted.split())[:60] or "case"
        name, n = base, 2
        while name in self.seen:
            name, n = f"{base}-{n}", n + 1
        self.seen.add(name)
        return name


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tools_named(cases: Iterable[Imported]) -> list[str]:
    """Every tool the imported cases name, in first-seen order."""
    out: dict[str, None] = {}
    for c in cases:
        named = c.expect_calls or ([c.expect_tool] if isinstance(c.expect_tool, str) else c.expect_tool or [])
        out.update(dict.fromkeys(named))
    return list(out)
