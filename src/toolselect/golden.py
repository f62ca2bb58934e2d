"""Golden set → cases.

Cases come from the config's `evals.cases` (toolproof's format) and from golden files: JSONL in
the seed-001 format (`id`, `question`, `expected_tool`, `expected_args`, `match`) or YAML lists in
toolproof's case format. Every case remembers the file and line it starts on.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from .errors import ConfigError, ConfigErrors, did_you_mean, where
from .explain import explain_errors, show
from .locate import Loc, Located, display_path, load_jsonl, load_yaml
from .strict import Authored

MATCH_MODES = ("loose", "contains", "regex", "any_of", "exact")
STATUSES = ("reviewed", "needs_review")
EXPECT_TOOL_HINT = "use null when no tool should be called"


# --------------------------------------------------------------------------- file models


class _CaseFields(Authored):
    tags: list[str] = Field(default_factory=list)
    split: str | None = None
    status: Literal["reviewed", "needs_review"] = "reviewed"
    match: dict[str, Any] = Field(default_factory=dict)
    forbid_extra_args: bool | None = None

    @field_validator("match")
    @classmethod
    def _modes(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key, mode in value.items():
            if isinstance(mode, str) and mode in MATCH_MODES:
                continue
            if isinstance(mode, dict) and set(mode) == {"approx"}:
                tol = mode["approx"]
                if isinstance(tol, (int, float)) and not isinstance(tol, bool) and tol >= 0 and math.isfinite(tol):
                    continue
                raise ValueError(f"'{key}': approx tolerance must be a number ≥ 0 (got {show(tol)})")
            modes = ", ".join(MATCH_MODES)
            raise ValueError(f"'{key}': unknown match mode {show(mode)} (use one of {modes}, or {{approx: tolerance}})")
        return value


def _check_expect_tool(value: Any) -> Any:
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        if len(set(value)) != len(value):
            raise ValueError("lists the same tool twice")
        return value
    raise ValueError(f"must be a tool name, a non-empty list of tool names, or null (got {show(value)})")


class YamlCase(_CaseFields):
    """A case in toolproof's format (config `evals.cases` and YAML golden files)."""

    prompt: str = Field(min_length=1)
    expect_tool: Any = Field(...)
    expect_args: dict[str, Any] = Field(default_factory=dict)
    name: str | None = None

    @field_validator("expect_tool")
    @classmethod
    def _expect(cls, value: Any) -> Any:
        return _check_expect_tool(value)


class JsonlCase(_CaseFields):
    """A case in the seed-001 golden.jsonl format."""

    id: str | None = None
    question: str = Field(min_length=1)
    expected_tool: Any = Field(...)
    expected_args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("expected_tool")
    @classmethod
    def _expect(cls, value: Any) -> Any:
        return _check_expect_tool(value)


# --------------------------------------------------------------------------- the case type


@dataclass(frozen=True)
class Source:
    file: str
    line: int


@dataclass(frozen=True)
class Case:
    """One golden case: a prompt and what the model should do with it."""

    name: str
    prompt: str
    expect_tool: str | tuple[str, ...] | None  # as written: one name, several (any is right), or none
    expect_args: dict[str, Any]
    source: Source
    match: dict[str, Any] = field(default_factory=dict)
    forbid_extra_args: bool = False
    tags: tuple[str, ...] = ()
    split: str | None = None
    status: str = "reviewed"

    @property
    def expected(self) -> tuple[str, ...]:
        """The acceptable tools; empty when no tool should be called."""
        if self.expect_tool is None:
            return ()
        return (self.expect_tool,) if isinstance(self.expect_tool, str) else self.expect_tool

    @property
    def holdout(self) -> bool:
        return self.split == "holdout"


def default_name(prompt: str) -> str:
    """toolproof's rule: the prompt with whitespace collapsed, cut to 60 characters."""
    return " ".join(prompt.split())[:60]


# --------------------------------------------------------------------------- loading


def cases_from_config(doc: Located, raw_cases: list[YamlCase], forbid_extra_args: bool) -> list[Case]:
    """Cases written inline in the config's `evals.cases`."""
    cases = []
    for index, model in enumerate(raw_cases):
        loc = ("evals", "cases", index)
        cases.append(_from_yaml(model, doc, loc, forbid_extra_args))
    return cases


def load_golden(path: Path, forbid_extra_args: bool, base: Path | None = None) -> list[Case]:
    """Cases from one golden file: `.jsonl` (seed-001 format) or `.yaml`/`.yml` (toolproof format)."""
    shown = display_path(path, base)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _load_jsonl(path, shown, forbid_extra_args)
    if suffix in (".yaml", ".yml"):
        return _load_yaml_list(path, shown, forbid_extra_args)
    raise ConfigError(f"{shown}: golden files must end in .jsonl, .yaml or .yml")


def _load_yaml_list(path: Path, shown: str, forbid_extra_args: bool) -> list[Case]:
    doc = load_yaml(path, shown, "golden file")
    data = doc.data
    prefix: Loc = ()
    if isinstance(data, dict) and set(data) == {"cases"}:
        data, prefix = data["cases"], ("cases",)
    if data is None:
        return []
    if not isinstance(data, list):
        raise ConfigError(f"{where(shown, 1)}a YAML golden file must be a list of cases (got {type(data).__name__})")
    try:
        models = TypeAdapter(list[YamlCase]).validate_python(data)
    except ValidationError as exc:
        raise ConfigErrors(
            explain_errors(
                exc,
                doc,
                prefix=prefix,
                model_at=lambda loc: YamlCase,
                hints={"expect_tool": EXPECT_TOOL_HINT},
                label="" if prefix else "cases",
            )
        ) from None
    return [_from_yaml(m, doc, (*prefix, i), forbid_extra_args) for i, m in enumerate(models)]


def _from_yaml(model: YamlCase, doc: Located, loc: Loc, forbid_extra_args: bool) -> Case:
    _check_match(model.match, model.expect_args, doc, loc, "expect_args")
    return Case(
        name=model.name or default_name(model.prompt),
        prompt=model.prompt,
        expect_tool=_tool_value(model.expect_tool),
        expect_args=model.expect_args,
        source=Source(doc.file, doc.line(loc) or 1),
        match=model.match,
        forbid_extra_args=forbid_extra_args if model.forbid_extra_args is None else model.forbid_extra_args,
        tags=tuple(model.tags),
        split=model.split,
        status=model.status,
    )


def _load_jsonl(path: Path, shown: str, forbid_extra_args: bool) -> list[Case]:
    cases = []
    messages = []
    for line, row in load_jsonl(path, shown):
        doc = Located(data=row, file=shown, values={(): line})
        if not isinstance(row, dict):
            messages.append(f"{where(shown, line)}each line must be a JSON object (got {type(row).__name__})")
            continue
        try:
            model = JsonlCase.model_validate(row)
        except ValidationError as exc:
            messages.extend(
                explain_errors(
                    exc, doc, model_at=lambda loc: JsonlCase, hints={"expected_tool": EXPECT_TOOL_HINT}, label="case"
                )
            )
            continue
        try:
            _check_match(model.match, model.expected_args, doc, (), "expected_args")
        except ConfigError as exc:
            messages.append(exc.message)
            continue
        cases.append(
            Case(
                name=model.id or default_name(model.question),
                prompt=model.question,
                expect_tool=_tool_value(model.expected_tool),
                expect_args=model.expected_args,
                source=Source(shown, line),
                match=model.match,
                forbid_extra_args=forbid_extra_args if model.forbid_extra_args is None else model.forbid_extra_args,
                tags=tuple(model.tags),
                split=model.split,
                status=model.status,
            )
        )
    if messages:
        raise ConfigErrors(messages)
    return cases


def _tool_value(value: Any) -> str | tuple[str, ...] | None:
    if isinstance(value, list):
        return value[0] if len(value) == 1 else tuple(value)
    return value


def _check_match(match: dict[str, Any], args: dict[str, Any], doc: Located, loc: Loc, args_key: str) -> None:
    """A match mode must name an expected key, and the expected value must suit the mode."""
    for key, mode in match.items():
        line = doc.line((*loc, "match", key))
        place = where(doc.file, line)
        if key not in args:
            raise ConfigError(f"{place}match names '{key}' but {args_key} has no '{key}'{did_you_mean(key, args)}")
        expected = args[key]
        if mode == "regex":
            if not isinstance(expected, str):
                raise ConfigError(
                    f"{place}'{key}' uses regex, so its expected value must be a string (got {show(expected)})"
                )
            try:
                re.compile(expected)
            except re.error as exc:
                raise ConfigError(f"{place}'{key}': invalid regex {show(expected)}: {exc}") from None
        elif mode == "any_of":
            if not isinstance(expected, list) or not expected:
                raise ConfigError(
                    f"{place}'{key}' uses any_of, so its expected value must be a non-empty list of acceptable "
                    f"values (got {show(expected)})"
                )
        elif mode == "contains":
            if not isinstance(expected, str):
                raise ConfigError(
                    f"{place}'{key}' uses contains, so its expected value must be a string (got {show(expected)})"
                )
        elif isinstance(mode, dict) and (not isinstance(expected, (int, float)) or isinstance(expected, bool)):
            raise ConfigError(
                f"{place}'{key}' uses approx, so its expected value must be a number (got {show(expected)})"
            )
