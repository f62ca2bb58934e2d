"""Golden set → cases.

Cases come from the config's `evals.cases` (toolproof's format) and from golden files: JSONL in
the seed-001 format (`id`, `question`, `expected_tool`, `expected_args`, `match`) or YAML lists in
toolproof's case format. Every case remembers the file and line it starts on.

A case with `expect_calls` instead of `expect_tool` (`expected_tool`) is a trajectory case: the
model may call several tools, each answered from the case's `mocks`, until it answers in text or
reaches `max_turns`; `sequence`, `acceptable` and `final` say what counts (trajectory.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator, model_validator

from .errors import ConfigError, ConfigErrors, did_you_mean, where
from .explain import explain_errors, show
from .locate import Loc, Located, display_path, load_jsonl, load_yaml
from .strict import Authored
from .taxonomy import ReplyKind
from .trajectory import DEFAULT_MAX_TURNS, Expectation, ExpectedCall, FinalCheck, Mock, Order, Script

MATCH_MODES = ("loose", "contains", "regex", "any_of", "exact")
EXPECT_TOOL_HINT = "use null when no tool should be called"


# --------------------------------------------------------------------------- file models


def _check_modes(value: dict[str, Any]) -> dict[str, Any]:
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


def plain_json(value: Any, where: str = "") -> Any:
    """The value itself when it is plain JSON (YAML also reads dates, times like 12:30:00 as
    numbers of seconds, and binary): else a ValueError that says what to quote."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where or 'a value'} is {value!r}, which JSON can't carry")
        return value
    if isinstance(value, list):
        return [plain_json(v, where) for v in value]
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where or 'an object'} has the key {k!r}, which is not text: quote it")
            plain_json(v, where)
        return value
    kind = type(value).__name__
    raise ValueError(f"{where or 'a value'} holds a {kind} ({value!s}), which is not JSON: quote it in the YAML")


class ExpectedCallIn(Authored):
    """One expected call of a trajectory case."""

    tool: str = Field(min_length=1)
    args: dict[str, Any] | None = None  # absent: any arguments
    match: dict[str, Any] = Field(default_factory=dict)

    @field_validator("match")
    @classmethod
    def _modes(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _check_modes(value)


class MockIn(Authored):
    """A stubbed answer: `{result: <any JSON>}` or `{error: "<message>"}`, optionally `when`."""

    result: Any = None
    error: str | None = Field(default=None, min_length=1)
    when: dict[str, Any] = Field(default_factory=dict)

    @field_validator("result", "when")
    @classmethod
    def _json(cls, value: Any) -> Any:
        return plain_json(value)

    @field_validator("error", mode="before")
    @classmethod
    def _status_code(cls, value: Any) -> Any:
        """`error: 503` is the message "503" (YAML reads it as a number)."""
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value

    @model_validator(mode="before")
    @classmethod
    def _one_answer(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("result" in data) == ("error" in data):
            raise ValueError("a mock answers with either result (any JSON) or error (a message), exactly one of them")
        return data


class FinalIn(Authored):
    """Checks on the final text answer."""

    contains: list[str] = Field(default_factory=list)
    regex: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)

    @field_validator("contains", "regex", "not_contains", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regex {show(pattern)}: {exc}") from None
        return value


TRAJECTORY_ONLY = ("sequence", "mocks", "max_turns", "final")


class _CaseFields(Authored):
    tags: list[str] = Field(default_factory=list)
    split: str | None = None
    status: Literal["reviewed", "needs_review"] = "reviewed"
    match: dict[str, Any] = Field(default_factory=dict)
    forbid_extra_args: bool | None = None
    acceptable: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    must_not_call: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)  # severity.py
    # beside no expected call: the reply the model should give instead (replies.py)
    expect_reply: Literal["clarify", "unable", "answer"] | None = None
    # a trajectory case (issue 13): expect_calls instead of expect_tool / expected_tool
    expect_calls: list[ExpectedCallIn] | None = None
    sequence: Literal["strict", "in_order", "unordered", "any_of_these"] | None = None
    mocks: dict[str, list[MockIn]] = Field(default_factory=dict)  # one mock may be written without the list
    max_turns: int | None = Field(default=None, ge=1, le=50)
    final: FinalIn | None = None

    _modes = field_validator("match")(classmethod(lambda cls, v: _check_modes(v)))

    @field_validator("mocks", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: [v] if isinstance(v, dict) else v for k, v in value.items()}
        return value

    @model_validator(mode="before")
    @classmethod
    def _trajectory_or_not(cls, data: Any) -> Any:
        """`expect_calls` stands in for the expected tool; the trajectory-only keys need it."""
        if not isinstance(data, dict):
            return data
        tool_key = "expected_tool" if "question" in data else "expect_tool"
        if data.get("expect_reply") is not None and (data.get(tool_key) is not None or "expect_calls" in data):
            raise ValueError(
                f"expect_reply is for a case that expects no call: set {tool_key}: null (the model should "
                "reply instead of calling a tool)"
            )
        if "expect_calls" in data:
            if tool_key in data:
                raise ValueError(f"a case has {tool_key} (one call) or expect_calls (a trajectory), not both")
            args_key = "expected_args" if tool_key == "expected_tool" else "expect_args"
            for key in (args_key, "match"):
                if key in data:
                    raise ValueError(f"{key} is for single-call cases: in a trajectory, each expected call has its own")
            return {**data, tool_key: None}
        given = [k for k in TRAJECTORY_ONLY if k in data]
        if given:
            raise ValueError(f"{given[0]} is for trajectory cases: add expect_calls (the calls expected, in order)")
        return data

    def script(self) -> Script | None:
        """The trajectory script, or None for a single-call case."""
        if self.expect_calls is None:
            return None
        final = self.final
        return Script(
            expect=Expectation(
                calls=tuple(ExpectedCall(c.tool, c.args, c.match) for c in self.expect_calls),
                order=Order(self.sequence or Order.STRICT),
                acceptable=frozenset(self.acceptable),
                final=FinalCheck(tuple(final.contains), tuple(final.regex), tuple(final.not_contains))
                if final
                else None,
            ),
            mocks={tool: tuple(Mock(m.result, m.error, m.when) for m in ms) for tool, ms in self.mocks.items()},
            max_turns=self.max_turns or DEFAULT_MAX_TURNS,
        )


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


def case_part(root: Any, rest: Loc) -> Any:
    """The model at a place inside a case (`rest`: the location under the case), for did-you-mean
    on unknown keys."""
    if not rest:
        return root
    nested = {("expect_calls", 2): ExpectedCallIn, ("mocks", 3): MockIn, ("final", 1): FinalIn}
    return nested.get((str(rest[0]), len(rest)))


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
    acceptable: tuple[str, ...] = ()  # tools that work but are not the best choice (SEL-SUBOPTIMAL)
    must_not_call: tuple[str, ...] = ()  # tools never to be called for it: one call is critical (severity.py)
    script: Script | None = None  # a trajectory case's expectation, stubs and max_turns
    expect_reply: ReplyKind | None = None  # no call, and this kind of reply (None: any usable reply)

    @property
    def expected(self) -> tuple[str, ...]:
        """The acceptable tools; empty when no tool should be called."""
        if self.expect_tool is None:
            return ()
        return (self.expect_tool,) if isinstance(self.expect_tool, str) else self.expect_tool

    @property
    def holdout(self) -> bool:
        return self.split == "holdout"


def placeholder(case: Case) -> bool:
    """The prompt is still `init`'s TODO: nothing a user would type, so never sent to a paid model."""
    return case.prompt.lstrip().upper().startswith("TODO")


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
                model_at=lambda loc: case_part(YamlCase, loc[len(prefix) + 1 :]),
                hints={"expect_tool": EXPECT_TOOL_HINT},
                label="" if prefix else "cases",
            )
        ) from None
    return [_from_yaml(m, doc, (*prefix, i), forbid_extra_args) for i, m in enumerate(models)]


def _from_yaml(model: YamlCase, doc: Located, loc: Loc, forbid_extra_args: bool) -> Case:
    _check_match(model.match, model.expect_args, doc, loc, "expect_args")
    forbid = forbid_extra_args if model.forbid_extra_args is None else model.forbid_extra_args
    script = _script(model, doc, loc, forbid)
    return Case(
        name=model.name or default_name(model.prompt),
        prompt=model.prompt,
        expect_tool=_expected_first(script) if script else _tool_value(model.expect_tool),
        expect_args=model.expect_args,
        source=Source(doc.file, doc.line(loc) or 1),
        match=model.match,
        forbid_extra_args=forbid,
        tags=tuple(model.tags),
        split=model.split,
        status=model.status,
        acceptable=tuple(model.acceptable),
        must_not_call=tuple(dict.fromkeys(model.must_not_call)),
        script=script,
        expect_reply=model.expect_reply,
    )


def _script(model: _CaseFields, doc: Located, loc: Loc, forbid_extra_args: bool) -> Script | None:
    script = model.script()
    if script is None:
        return None
    for i, call in enumerate(model.expect_calls or []):
        _check_match(call.match, call.args or {}, doc, (*loc, "expect_calls", i), "args")
    return replace(script, expect=replace(script.expect, forbid_extra_args=forbid_extra_args))


def _expected_first(script: Script) -> str | tuple[str, ...] | None:
    """The tool(s) a trajectory's first call should be: its confusion row and its selection."""
    tools = list(dict.fromkeys(c.tool for c in script.expect.calls))
    if not tools:
        return None
    if script.expect.order in (Order.STRICT, Order.IN_ORDER) or len(tools) == 1:
        return tools[0]
    return tuple(tools)


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
                    exc,
                    doc,
                    model_at=lambda loc: case_part(JsonlCase, loc),
                    hints={"expected_tool": EXPECT_TOOL_HINT},
                    label="case",
                )
            )
            continue
        forbid = forbid_extra_args if model.forbid_extra_args is None else model.forbid_extra_args
        try:
            _check_match(model.match, model.expected_args, doc, (), "expected_args")
            script = _script(model, doc, (), forbid)
        except ConfigError as exc:
            messages.append(exc.message)
            continue
        cases.append(
            Case(
                name=model.id or default_name(model.question),
                prompt=model.question,
                expect_tool=_expected_first(script) if script else _tool_value(model.expected_tool),
                expect_args=model.expected_args,
                source=Source(shown, line),
                match=model.match,
                forbid_extra_args=forbid,
                tags=tuple(model.tags),
                split=model.split,
                status=model.status,
                acceptable=tuple(model.acceptable),
                must_not_call=tuple(dict.fromkeys(model.must_not_call)),
                script=script,
                expect_reply=model.expect_reply,
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


def read_cases(doc: Located | None, inline: Any, files: tuple[Path, ...], forbid_extra_args: bool) -> list[Case]:
    """A run's golden set: the config's inline cases first, then each golden file in order."""
    cases: list[Case] = []
    if doc is not None:
        cases += cases_from_config(doc, inline, forbid_extra_args)
    for path in files:
        cases += load_golden(path, forbid_extra_args)
    if not cases:
        raise ConfigError(
            "no cases: add evals.cases to the config, or golden files (evals.golden or --golden)",
            hint="`toolselect init` writes a starter golden set",
        )
    return cases  # names, tools and arguments are checked against the surface by lint
