"""Findings about the golden set against the surface: cases that can never pass, prompts that give the
answer away or leave an expected argument out, and how well the set covers each tool, each
confusable pair and restraint (what `eval` stops for: stops.py). Pure."""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from jsonschema.exceptions import best_match

from ..errors import did_you_mean
from ..golden import Case, placeholder
from ..lexical import BM25, tokenize, tool_text
from ..surface import Surface, Tool
from .finding import (
    BOUNDARY_PAIRS,
    MIN_CASES_PER_TOOL,
    MIN_NEGATIVE_SHARE,
    Finding,
    Severity,
    confusable_pairs,
    declared_keys,
)


def lint_golden(cases: Sequence[Case], surface: Surface) -> list[Finding]:
    out: list[Finding] = []

    def add(
        case: Case | None, code: str, severity: Severity, message: str, fix: str = "", tool: str | None = None
    ) -> None:
        if case is not None and case.holdout:  # a holdout case's name may be its prompt: don't repeat it
            message = message.replace(f"'{case.name}'", "(a holdout case)")
        out.append(
            Finding(
                code,
                severity,
                message,
                fix,
                "golden",
                tool,
                case.name if case else None,
                case.source.file if case else None,
                case.source.line if case else None,
            )
        )

    listed = surface.listed
    for case in cases:
        if case.script is None:
            expected = [(t, case.expect_args, case.match) for t in case.expected]
        else:  # every expected call of a trajectory, each with its own arguments
            expected = [(e.tool, dict(e.args or {}), dict(e.match)) for e in case.script.expect.calls]
            unique = {(t, json.dumps(a, sort_keys=True, default=str)): (t, a, m) for t, a, m in expected}
            expected = list(unique.values())
        named = [("acceptable", t) for t in case.acceptable]
        named += [("mocks", t) for t in (case.script.mocks if case.script else {})]
        for where_, tool_name in named:
            if tool_name not in listed:
                add(
                    case,
                    "case-unknown-tool",
                    "error",
                    f"case '{case.name}': {where_} names '{tool_name}', which the tool surface does not have"
                    + did_you_mean(tool_name, listed),
                    "fix the name, or add the tool to the server",
                    tool_name,
                )
        for tool_name in (t for t in case.must_not_call if t not in listed):
            add(
                case,
                "forbidden-unknown-tool",
                "warning",
                f"case '{case.name}': must_not_call names '{tool_name}', which the tool surface does not have: "
                f"nothing to forbid" + did_you_mean(tool_name, listed),
                "fix the name (a typo forbids nothing), or drop a tool the server no longer has",
                tool_name,
            )
        asked = {t for t, _, _ in expected} | set(case.acceptable)
        for tool_name in (t for t in case.must_not_call if t in asked):
            add(
                case,
                "case-forbids-expected",
                "error",
                f"case '{case.name}' expects (or accepts) '{tool_name}' and must_not_call names it: it can't pass",
                f"drop '{tool_name}' from the case's must_not_call",
                tool_name,
            )
        script = case.script
        if script and any(m.error is not None for ms in script.mocks.values() for m in ms) and not script.expect.final:
            add(
                case,
                "trajectory-error-unchecked",
                "info",
                f"case '{case.name}' stubs an error, but nothing checks whether the final answer tells the user "
                "(REC-SILENT can't be found)",
                'add final checks, e.g. final: {regex: "(?i)unavailable|error"}, or configure evals.judge',
            )
        for tool_name, expect_args, match in expected:
            if tool_name not in listed:
                missing = f"case '{case.name}' expects tool '{tool_name}', which the tool surface does not have"
                unnamed = surface.nameless
                if unnamed:  # a tool without a name can't be matched: say so, it is likely the one
                    verb = "has" if len(unnamed) == 1 else "have"
                    missing += f" ({', '.join(unnamed)} in {surface.listed_in} {verb} no name: is it that one?)"
                else:
                    missing += did_you_mean(tool_name, listed)
                add(
                    case,
                    "case-unknown-tool",
                    "error",
                    missing,
                    "fix the name, or add the tool to the server",
                    tool_name,
                )
                continue
            if surface.is_left_out(tool_name):
                add(
                    case,
                    "case-expects-left-out",
                    "warning",
                    f"case '{case.name}' expects '{tool_name}', which was left out (invalid input schema): the model "
                    "can't pick it",
                    "fix the tool's input schema",
                    tool_name,
                )
                continue
            tool = surface.get(tool_name)
            if tool is None:  # listed, not left out: offered
                continue
            declared = declared_keys(tool.input_schema)
            for key, value in expect_args.items():
                if declared is not None and key not in declared:
                    add(
                        case,
                        "arg-undeclared",
                        "error",
                        f"case '{case.name}': "
                        + (f"args key '{key}' of the call to {tool_name}" if script else f"expect_args key '{key}'")
                        + f" is not a parameter of {tool_name}{did_you_mean(key, declared)}",
                        "use the parameter's name as the schema declares it",
                        tool_name,
                    )
                    continue
                problem = _value_problem(tool, key, value, match.get(key, "loose"))
                if problem:
                    add(
                        case,
                        "arg-invalid-value",
                        "error",
                        f"case '{case.name}': expected {key}={_short(value)} is not a valid {tool_name} argument: "
                        f"{problem}",
                        "the tool itself would reject this value: fix the expected value",
                        tool_name,
                    )
    lines = _file_lines()
    for case in cases:
        if placeholder(case):
            reviewed = case.status != "needs_review"
            add(
                case,
                "prompt-todo",
                "error" if reviewed else "info",
                f"case '{case.name}': the prompt is still a TODO placeholder"
                + (", yet the case is marked reviewed" if reviewed else "")
                + ": it is never sent to a paid model (NOT-EVALUATED)",
                "write what a user would type; then a domain owner confirms the label (status: reviewed)",
            )
            continue
        if (cut := _cut_by_comment(case, lines)) is not None:
            add(
                case,
                "prompt-cut-by-comment",
                "error",
                f"case '{case.name}': YAML read everything after ' #' as a comment: the prompt is {cut[0]!r}, "
                f"not {cut[1]!r}",
                f"quote the prompt: prompt: {json.dumps(cut[1], ensure_ascii=False)}",
            )
        if case.script is None:
            for key, value in _missing_from_prompt(case, surface.get(case.expected[0]) if case.expected else None):
                add(
                    case,
                    "arg-not-in-prompt",
                    "warning",
                    f"case '{case.name}': expected {key}={_short(value)} appears nowhere in the prompt",
                    "a copy-paste slip, or a prompt cut short? The model can only pass what the prompt says",
                )
    seen_names: dict[str, Case] = {}
    seen_prompts: dict[str, Case] = {}
    for case in cases:
        if case.name in seen_names:
            other = seen_names[case.name].source
            add(
                case,
                "case-duplicate-name",
                "error",
                f"duplicate case name '{case.name}' (also at {other.file}:{other.line}); give one of them a distinct "
                "name",
                "cases are paired with the base branch by name",
            )
        seen_names.setdefault(case.name, case)
        key = " ".join(case.prompt.lower().split())
        if key in seen_prompts:
            other = seen_prompts[key].source
            add(
                case,
                "prompt-duplicate",
                "warning",
                f"case '{case.name}' has the same prompt as the case at {other.file}:{other.line}",
                "drop one, or make it a real paraphrase",
            )
        seen_prompts.setdefault(key, case)
        for tool_name in case.expected:
            tool = surface.get(tool_name)
            if tool and _copies(case.prompt, tool.description):
                add(
                    case,
                    "prompt-copies-description",
                    "warning",
                    f"case '{case.name}': the prompt repeats {tool_name}'s description almost word for word; it "
                    "proves little",
                    "write it the way a user would ask",
                    tool_name,
                )
    home = cases[0].source.file if cases else None  # set-wide findings point at the (first) golden file
    out += [
        f if f.file else Finding(f.code, f.severity, f.message, f.fix, f.scope, f.tool, f.case, home, None)
        for f in _coverage(cases, surface)
    ]
    return out


def _short(value: Any) -> str:
    from ..explain import show

    return show(value)


# What toolproof's loose rule forgives, so a schema complaint about it is no reason the case can't pass:
# objects match key by key (a partial expected object is fine) and strings ignore case and spaces.
_PARTIAL_OBJECT = {
    "required",
    "additionalProperties",
    "minProperties",
    "dependentRequired",
    "dependencies",
    "unevaluatedProperties",
}


_RANGE = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}


def _forgiven(error: Any, mode: Any) -> bool:
    if mode == "exact":
        return False
    if error.validator in _PARTIAL_OBJECT:
        return True
    if isinstance(mode, dict) and error.validator in _RANGE:  # approx: a nearby number is right too
        return True
    if error.validator in ("enum", "const") and isinstance(error.instance, str):
        allowed = error.validator_value if error.validator == "enum" else [error.validator_value]
        wanted = error.instance.strip().casefold()
        return any(isinstance(v, str) and v.strip().casefold() == wanted for v in allowed)
    return False


def _value_problem(tool: Tool, key: str, value: Any, mode: Any) -> str | None:
    """Why no schema-valid answer could ever match the expected value (None when one could)."""
    schema = tool.input_schema.get("properties", {}).get(key)
    if not isinstance(schema, dict) or tool.validator is None or mode in ("contains", "regex"):
        return None  # a fragment or a pattern, not a value
    candidates = [v for v in value if v is not None] if mode == "any_of" else [value]
    for candidate in candidates:
        try:
            errors = [e for e in cast(Any, tool.validator).descend(candidate, schema) if not _forgiven(e, mode)]
        except Exception:  # noqa: BLE001 - a schema we can't apply (e.g. an unresolvable $ref)
            return None
        if errors:
            return best_match(errors).message
    return None


def _copies(prompt: str, description: str) -> bool:
    words, said = tokenize(prompt), _words(description)
    if len(words) < 5 or not said:
        return False
    if sum(w in said for w in words) / len(words) >= 0.9:
        return True
    same = _matcher(description.lower().strip())
    same.set_seq1(prompt.lower().strip())
    return same.real_quick_ratio() >= 0.8 and same.quick_ratio() >= 0.8 and same.ratio() >= 0.8  # bounds first


@functools.lru_cache(maxsize=1024)
def _matcher(description: str) -> difflib.SequenceMatcher[str]:
    """A matcher against a description, its index made once (each case expecting the tool reuses it)."""
    matcher: difflib.SequenceMatcher[str] = difflib.SequenceMatcher(None)
    matcher.set_seq2(description)
    return matcher


@functools.lru_cache(maxsize=4096)
def _words(description: str) -> frozenset[str]:
    """A tool's description's words, once per description (every case expecting the tool asks)."""
    return frozenset(tokenize(description))


def _file_lines() -> Callable[[str], list[str]]:
    """A golden file's lines, read once each (bounded: a huge file is not re-read for this)."""
    read: dict[str, list[str]] = {}

    def lines(file: str) -> list[str]:
        if file not in read:
            try:
                path = Path(file)
                read[file] = path.read_text(encoding="utf-8-sig").splitlines() if path.stat().st_size < 8 << 20 else []
            except (OSError, ValueError):
                read[file] = []
        return read[file]

    return lines


PLAIN_PROMPT = re.compile(r"^\s*(?:-\s+)?prompt:\s+(?P<value>[^\s\"'|>&*!%@`{\[][^#]*?)\s+#(?P<rest>.*)$")


def _cut_by_comment(case: Case, lines: Callable[[str], list[str]]) -> tuple[str, str] | None:
    """(the prompt as YAML read it, as written) when an unquoted prompt holds ` #`, which YAML reads
    as the start of a comment (`prompt: status of issue #42?`)."""
    file, line = case.source.file, case.source.line
    if not file or not line or not file.endswith((".yaml", ".yml")):
        return None
    text = lines(file)
    for number in range(line - 1, min(len(text), line + 30)):
        found = PLAIN_PROMPT.match(text[number])
        if found and found.group("value").strip() == case.prompt.strip():
            return case.prompt, f"{found.group('value')} #{found.group('rest')}".strip()
        if number > line - 1 and text[number].lstrip().startswith("- "):
            break  # the next case
    return None


NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


TENS = {30: "thirty", 40: "forty", 50: "fifty", 60: "sixty", 70: "seventy", 80: "eighty", 90: "ninety", 100: "hundred"}


DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _missing_from_prompt(case: Case, tool: Tool | None) -> list[tuple[str, Any]]:
    """Expected argument values that appear nowhere in the prompt — text of two characters or more,
    numbers of two digits or more, neither written out — a slip the model can't make up for. Not an
    enum's value (the model maps "fahrenheit" to "imperial"), nor a date ("tomorrow")."""
    said = " ".join(case.prompt.casefold().split())
    properties = (tool.input_schema.get("properties") if tool and isinstance(tool.input_schema, dict) else None) or {}
    out: list[tuple[str, Any]] = []
    for key, value in case.expect_args.items():
        schema = properties.get(key) if isinstance(properties, dict) else None
        if isinstance(schema, dict) and ("enum" in schema or "const" in schema or "format" in schema):
            continue
        if isinstance(value, str) and len(value.strip()) >= 2 and not DATE_LIKE.match(value):
            if " ".join(value.casefold().split()) not in said:
                out.append((key, value))
        elif isinstance(value, int | float) and not isinstance(value, bool) and abs(value) >= 10:
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            word = NUMBER_WORDS[int(value)] if value == int(value) and 0 <= value <= 20 else TENS.get(int(value))
            if shown not in said.replace(",", "") and not (word and re.search(rf"\b{word}\b", said)):
                out.append((key, value))
    return out


def _exercised(case: Case) -> list[str]:
    """The tools a case expects, each once: the listed ones, and every call a trajectory expects."""
    calls = [c.tool for c in case.script.expect.calls] if case.script is not None else []
    return list(dict.fromkeys([*case.expected, *calls]))


def _coverage(cases: Sequence[Case], surface: Surface) -> list[Finding]:
    out: list[Finding] = []
    reviewed = [c for c in cases if c.status != "needs_review"]  # what the gate will count
    counts = Counter(t for c in reviewed for t in _exercised(c))
    waiting = Counter(t for c in cases if c.status == "needs_review" for t in _exercised(c))
    uncovered = [t.name for t in surface.tools if not counts.get(t.name)]
    few = [(t.name, counts[t.name]) for t in surface.tools if 0 < counts.get(t.name, 0) < MIN_CASES_PER_TOOL]
    if uncovered:
        pending = sum(waiting.get(name, 0) for name in uncovered)
        out.append(
            Finding(
                "coverage-no-case",
                "warning",
                (
                    f"no reviewed case expects {', '.join(uncovered)} ({pending} wait for review)"
                    if pending
                    else f"no case expects {', '.join(uncovered)}"
                ),
                "add 3–5 cases per tool: a direct ask, paraphrases in users' own words, an argument-extraction ask",
                "golden",
                uncovered[0],
            )
        )
    if few:
        listed = (
            f"only {few[0][1]} case(s) expect {few[0][0]}"
            if len(few) == 1
            else (
                f"{len(few)} tools have fewer than {MIN_CASES_PER_TOOL} cases: "
                + ", ".join(f"{name} ({n})" for name, n in few)
            )
        )
        out.append(
            Finding(
                "coverage-few-cases",
                "warning",
                listed,
                "aim for at least 3 per tool: a direct ask, a paraphrase, an argument-extraction ask",
                "golden",
                few[0][0],
            )
        )
    if reviewed:
        negatives = sum(not c.expected for c in reviewed)
        share = negatives / len(reviewed)
        if share < MIN_NEGATIVE_SHARE:
            out.append(
                Finding(
                    "coverage-negatives",
                    "warning",
                    f"{negatives} of {len(reviewed)} cases ({share * 100:.1f}%) expect no tool; aim for at least "
                    f"{MIN_NEGATIVE_SHARE:.0%}",
                    "add prompts no tool should answer: small talk, general knowledge, follow-ups answered from "
                    "context",
                    "golden",
                )
            )
    boundary = BoundaryIndex(surface)
    for score, a, b in confusable_pairs(surface)[:BOUNDARY_PAIRS]:  # the rest: the surface's `confusable`
        if not any(boundary.on(case, a, b) for case in reviewed):
            out.append(
                Finding(
                    "coverage-boundary",
                    "warning",
                    f"no case sits on the boundary between {a} and {b} (similarity {score:.2f})",
                    f"add a prompt that could go either way (e.g. tagged 'confusable') and label which of {a} and "
                    f"{b} is right",
                    "golden",
                    a,
                )
            )
    pending = sum(c.status == "needs_review" for c in cases)
    if pending:
        out.append(
            Finding(
                "pending-review",
                "info",
                f"{pending} of {len(cases)} cases ({pending / len(cases):.0%}) still need review: scored and shown, "
                "not counted by the gate",
                "have a domain owner confirm each label, then set status: reviewed",
                "golden",
            )
        )
    return out


class BoundaryIndex:
    """Is a case on the boundary between two tools? It expects one of them and either lists both,
    is tagged confusable/boundary, or its prompt ranks the other tool in the top two (BM25)."""

    def __init__(self, surface: Surface) -> None:
        self.names = [t.name for t in surface.tools]
        self.bm25 = BM25.build([tool_text(t.name, t.description, t.input_schema) for t in surface.tools])
        self._top: dict[str, list[tuple[float, str]]] = {}  # each prompt's two best tools, ranked once

    def on(self, case: Case, a: str, b: str) -> bool:
        expected = set(case.expected)
        if not expected & {a, b}:
            return False
        if {a, b} <= expected or {"confusable", "boundary"} & set(case.tags):
            return True
        other = b if a in expected else a
        return any(name == other and score > 0 for score, name in self.top(case.prompt))

    def top(self, prompt: str) -> list[tuple[float, str]]:
        """The prompt's two best tools by BM25: once per prompt, whatever number of pairs ask."""
        if prompt not in self._top:
            scores = self.bm25.scores(tokenize(prompt))
            self._top[prompt] = sorted(zip(scores, self.names, strict=False), reverse=True)[:2]
        return self._top[prompt]
