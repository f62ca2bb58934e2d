"""Every option, declared once: its config key, command-line flag, Action input, type, range,
default and help.

From these declarations come the `evals:` fields of the config model (and their validation), the
command-line flags, the Action's inputs (action.yml and the tables of docs/action.md and
docs/config.md are generated from them by `python scripts/sync_options.py`), the parsing and range
checks of a flag's or an input's text, every "must be between 0 and 1" message, and the resolved value
(`settings.option(key)`). Adding an option is one declaration here and its behaviour.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import ConfigError, did_you_mean
from .providers.registry import PROVIDERS
from .taxonomy import DIMENSIONS

INIT_BOUNDARIES = 10  # init's --boundaries: boundary cases for this many of the most confusable pairs (lint's too)

Kind = Literal["float", "int", "bool", "text", "floors", "files", "sizes", "models", "any"]
# Which commands take an option's flag (cli.py) and where the docs list it.
Group = Literal["surface", "run", "gate", "compare", "base", "report", "stress", "action", "client", "fix"]
GivenBy = Literal["flag", "input"]


@dataclass(frozen=True)
class Option:
    key: str  # snake_case: evals.<key> in the config, the Settings field
    help: str  # one line: --help, the Action input's description, the docs row
    kind: Kind
    group: Group
    default: Any = None
    ge: float | None = None  # the range (for `floors`: of each floor)
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    unit: str = ""  # said after a range error, e.g. "it is a share: 0.9 means 90%"
    choices: tuple[str, ...] = ()
    noun: str = ""  # with choices: "unknown provider 'x'" instead of "must be one of"
    pattern: str = ""  # a regular expression the whole text must match
    config: Literal["evals", "top", "stress", None] = "evals"  # evals.<key>, a top-level <key>, stress.<key>, or none
    toolproof: bool = False  # one of toolproof's own `evals:` keys
    flag: str | None = ""  # "" → --key-with-dashes; None → no flag
    short: str = ""  # e.g. -c
    metavar: str = ""
    input: str | None = ""  # "" → key-with-dashes; None → not an Action input
    input_default: str = ""  # the input's default in action.yml
    env: tuple[str, ...] = ()  # variables read between the flag (or input) and the config
    secret: bool = False  # an Action input that is masked and never written anywhere
    annotation: Any = None  # the config key's type, when `kind` doesn't say it (config.py types `cases`, `price`, …)
    shown_default: str = ""  # the default as the docs say it, when not the value itself
    example: str = ""  # for `floors`: one floor as a flag takes it, e.g. get_weather=0.8
    keys: tuple[str, ...] = ()  # for `floors`: the names a floor may have (empty: any, e.g. tool names)
    int_keys: bool = False  # for `floors`: the names are whole numbers ≥ 0 (stress sizes)
    repeatable: bool = False  # the flag may be given once per model (--provider, --model, --base-url)

    # ------------------------------------------------------------------ derived names

    @property
    def flag_name(self) -> str | None:
        return None if self.flag is None else self.flag or "--" + self.key.replace("_", "-")

    @property
    def input_name(self) -> str | None:
        return None if self.input is None else self.input or self.key.replace("_", "-")

    @property
    def config_key(self) -> str | None:
        return {"evals": f"evals.{self.key}", "top": self.key, "stress": f"stress.{self.key}", None: None}[self.config]

    def label(self, source: GivenBy) -> str:
        """How a message names the option where it was given: `--max-drop`, `input max-drop`."""
        return f"input {self.input_name}" if source == "input" else str(self.flag_name)

    # ------------------------------------------------------------------ the range, in words

    def bounds(self) -> str:
        low, high = self.ge if self.ge is not None else self.gt, self.le if self.le is not None else self.lt
        if low is not None and high is not None:
            return f"between {low:g} and {high:g}"
        if self.ge is not None:
            return f"at least {self.ge:g}" if self.ge else "0 or more"
        if self.gt is not None:
            return f"more than {self.gt:g}"
        if high is not None:
            return f"at most {high:g}"
        return ""

    def out_of_range(self, value: float) -> bool:
        return (
            (self.ge is not None and value < self.ge)
            or (self.gt is not None and value <= self.gt)
            or (self.le is not None and value > self.le)
            or (self.lt is not None and value >= self.lt)
        )

    def range_message(self, label: str, shown: str) -> str:
        return f"{label} must be {self.bounds()} (got {shown})" + (f"; {self.unit}" if self.unit else "")

    # ------------------------------------------------------------------ the config model's field

    def field(self, annotation: Any = None) -> tuple[Any, Any]:
        """(annotation, pydantic Field) of the config key, with the same range."""
        from typing import Annotated

        from pydantic import Field

        optional = self.default is None
        floor_names: Any = Literal[self.keys] if self.keys else str  # e.g. the dimensions, or any tool name
        if self.int_keys:
            floor_names = Annotated[int, Field(ge=0)]
        annotation = (
            annotation
            or self.annotation
            or {
                "float": float | None if optional else float,
                "int": int | None if optional else int,
                "bool": bool | None if optional else bool,
                "text": str | None if optional else str,
                "floors": dict[floor_names, Annotated[float, Field(ge=self.ge, le=self.le)]],
                "files": str | list[str] | None,
                "sizes": list[Annotated[int, Field(ge=0, le=10_000)]],
            }[self.kind]
        )
        bounds = {"ge": self.ge, "gt": self.gt, "le": self.le, "lt": self.lt}
        constraints: dict[str, Any] = {}
        if self.kind != "floors":
            constraints = {k: v for k, v in bounds.items() if v is not None}
        default: Any = self.default
        if isinstance(default, (dict, list)):
            default = type(default)(default)  # a fresh copy: pydantic copies it again per model
        return annotation, Field(default, description=self.help, **constraints)

    # ------------------------------------------------------------------ text: a flag's or an input's

    def parse(self, text: str, label: str) -> Any:
        """A flag's or an input's text as a value, range-checked; a ConfigError names `label`."""
        text = text.strip()
        value: Any
        if self.kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ConfigError(f"{label} must be true or false (got {text!r})")
            return text.lower() == "true"
        if self.kind in ("int", "float"):
            try:
                value = int(text) if self.kind == "int" else float(text)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                word = "a whole number" if self.kind == "int" else "a number"
                raise ConfigError(f"{label} must be {word} (got {text!r})")
            if self.out_of_range(value):
                raise ConfigError(self.range_message(label, text))
            return value
        if self.kind == "floors":
            return self.parse_floors(text, label)
        if self.kind == "files":
            return tuple(item.strip() for item in re.split(r"[\n,]", text) if item.strip())
        if self.kind == "models":
            return parse_models(text, label)
        if self.kind == "sizes":
            items = [item for item in re.split(r"[\s,]+", text) if item]
            if not items or not all(item.isdigit() for item in items):
                raise ConfigError(f"{label} must be whole numbers ≥ 0, e.g. 0,10,25,50 (got {text!r})")
            return tuple(sorted({int(item) for item in items}))
        self.check_text(text, label)
        return text

    def parse_floors(self, text: str, label: str) -> dict[Any, float]:
        """`get_weather=0.8, get_forecast=0.9` (or one per line, `tool: 0.8`) → {name: floor}, each
        floor in the option's range."""
        floors: dict[Any, float] = {}
        for item in re.split(r"[\n,]", text):
            if not item.strip():
                continue
            m = re.fullmatch(r"\s*([^=:\s]+)\s*[=:]\s*(\S+)\s*", item)
            try:
                name, floor = m.group(1), float(m.group(2))  # type: ignore[union-attr]
            except (AttributeError, ValueError):
                raise ConfigError(
                    f"{label}: expected {self.metavar.split('=')[0].lower()}=floor, e.g. {self.example} "
                    f"(got {item.strip()!r})"
                ) from None
            if self.int_keys and not name.isdigit():
                raise ConfigError(f"{label}: '{name}' is not a size (a whole number ≥ 0), e.g. {self.example}")
            if self.keys and name not in self.keys:
                raise ConfigError(
                    f"{label}: unknown name '{name}'{did_you_mean(name, self.keys)} (use {_one_of(self.keys)})"
                )
            if not math.isfinite(floor) or self.out_of_range(floor):
                raise ConfigError(f"{label}: {item.strip()!r}: the floor must be {self.bounds()}")
            floors[int(name) if self.int_keys else name] = floor
        return floors

    def check_text(self, text: str, label: str, place: str = "") -> None:
        """A text value against the choices or the pattern; `place` (`file:line: `) starts the message."""
        if self.choices and text not in self.choices:
            if self.noun:
                raise ConfigError(f"{place}unknown {self.noun} '{text}' in {label}{did_you_mean(text, self.choices)}")
            raise ConfigError(f"{label} must be {_one_of(self.choices)} (got {text!r})")
        if self.pattern and not re.fullmatch(self.pattern, text):
            raise ConfigError(f"{label} {self.unit} (got {text!r})")


def _one_of(choices: tuple[str, ...]) -> str:
    return ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]


SHARE = "it is a share: 0.9 means 90%"
POINTS = "it is in points: 5 means five points"
KNOWN_PROVIDERS = tuple(sorted(PROVIDERS))
TOOL_SEARCH_MODES = ("off", "anthropic-regex", "anthropic-bm25", "openai")  # providers/search.py: each one's wire shape

# A table: one declaration per option reads better than one argument per line.
# fmt: off
OPTIONS: tuple[Option, ...] = (
    # where the cases and the tool surface come from
    Option("config", "the config file, relative to the working directory", "text", "surface", config=None, short="-c",
           metavar="FILE", shown_default="`toolselect.yaml`, then `toolproof.yaml`"),
    Option("tools_file", "a frozen tool surface (a tools/list result, JSON or YAML) instead of the config's server",
           "text", "surface", config="top", flag="--tools", metavar="FILE", shown_default="the config's"),
    Option("head_setup",
           "--no-setup: skip server.setup on the head (your machine built the server already); a base worktree "
           "always runs it. Without it a local run skips a setup whose inputs are unchanged since it last succeeded",
           "bool", "surface", config=None, input=None, default=True, flag="--setup"),
    Option("golden",
           "golden files (.jsonl, one case per line, or .yaml: docs/golden-set.md), after the inline cases; a flag "
           "(repeatable) or an input (one per line or comma-separated) replaces the config's list",
           "files", "surface", metavar="FILE"),
    # the model
    Option("provider", f"who picks the tools: {', '.join(KNOWN_PROVIDERS)} (bm25 is offline)", "text", "run",
           choices=KNOWN_PROVIDERS, noun="provider", toolproof=True, repeatable=True,
           env=("TOOLSELECT_PROVIDER", "TOOLPROOF_EVAL_PROVIDER")),
    Option("model", "the model your users' clients use; also part of the answer cache's key (several models: repeat "
           "--model, a --provider each or one for all; or `models`)", "text", "run",
           toolproof=True, repeatable=True, env=("TOOLSELECT_MODEL", "TOOLPROOF_EVAL_MODEL")),
    Option("models",
           "several models in one run, each judged by its own gate: a list of `{provider, model, base_url, params, "
           "label, gate}`; as an input, one `[label=]provider:model` per line",
           "models", "run", flag=None, shown_default="one: provider and model"),
    Option("command", "the program for provider command (it runs in the config's folder)", "any", "run",
           toolproof=True, flag=None, input=None, annotation=list[str] | None),
    Option("system", "a system prompt, e.g. the one your client uses", "any", "run", toolproof=True, flag=None,
           input=None, annotation=str | None),
    Option("params", "extra request fields for the provider; for bm25: threshold (1.0), k1 (1.2), b (0.75)", "any",
           "run", default={}, toolproof=True, flag=None, input=None, annotation=dict[str, Any]),
    Option("base_url", "an OpenAI-compatible (or Anthropic) endpoint; repeatable like --model", "text", "run",
           metavar="URL", input=None, repeatable=True),
    Option("temperature", "sampling temperature, sent where the API has it and recorded in the report", "float",
           "run", ge=0, le=2, metavar="T", input=None),
    Option("seed", "sampling seed, sent where the API has it; also seeds the tool-order shuffle", "int", "run",
           metavar="N", input=None),
    Option("max_tokens",
           "the most tokens a model may answer with, sent to every provider (Anthropic max_tokens, OpenAI "
           "max_completion_tokens — max_tokens at a compatible server — and the Responses API's max_output_tokens): "
           "only the first call is scored, so a rambling model stops early",
           "int", "run", default=4096, ge=16, metavar="N"),
    Option("timeout_s",
           "per-request timeout in seconds (a stalled answer is cut off and retried); per run of the program for "
           "provider command",
           "float", "run", gt=0, flag="--timeout", metavar="SECONDS", input=None, toolproof=True,
           shown_default="60 (API), 120 (command)"),
    Option("max_retries", "retries of a transient API failure (429, 5xx, 529, timeouts), by the SDK's own machinery",
           "int", "run", default=5, ge=0, metavar="N", input=None),
    Option("price",
           "`{input: X, output: Y, cache_read: Z, cache_write: W}` in USD per million tokens, for the bill (cached "
           "input without its own price costs what input costs)",
           "any", "run", flag=None, input=None, shown_default="built-in table"),
    Option("prompt_cache",
           "requests share their tool list as a prefix the API's prompt cache can read (Anthropic: cache_control "
           "breakpoints; OpenAI: identical prefixes, a prompt_cache_key); --no-prompt-cache to measure without",
           "bool", "run", default=True, input=None),
    Option("batch",
           "the run's uncached single-call requests go through the API's batch API at half the price, one batch per "
           "model after one synchronous warm-up request per tool order; answers take minutes to hours (trajectories "
           "stay synchronous)",
           "bool", "run", default=False, input=None),
    Option("batch_timeout_s",
           "how long to wait for a batch; past it the batch is cancelled and its unanswered requests are asked "
           "synchronously", "float", "run", default=3600.0, gt=0, flag="--batch-timeout", metavar="SECONDS",
           input=None),
    # how much to ask
    Option("repeat", "samples per case; a case's pass rate is the share of its samples that pass", "int", "run",
           default=1, ge=1, metavar="N"),
    Option("concurrency", "requests in flight", "int", "run", default=8, ge=1, metavar="N"),
    Option("shuffle", "each sample sees the tools in its own seeded order, recorded in the report", "bool", "run",
           input=None, shown_default="on when repeat > 1"),
    Option("max_rpm",
           "requests per minute at most, per endpoint, for gateways that announce no limit (the rate-limit headers "
           "of OpenAI-compatible APIs and Anthropic are followed anyway)",
           "float", "run", gt=0, metavar="N", shown_default="the endpoint's announced limit"),
    Option("max_tpm", "tokens per minute at most, per endpoint (paced by the tokens answers take on average)",
           "float", "run", gt=0, metavar="N", shown_default="the endpoint's announced limit"),
    Option("shard",
           "evaluate one slice of the run, I of N (e.g. 2/4): every sample of every model goes to one shard; "
           "`toolselect merge` puts the parts back together",
           "text", "run", config=None, metavar="I/N", input=None, pattern=r"\s*\d+\s*/\s*\d+\s*",
           unit="must be I/N, e.g. 2/4 for the second of four shards"),
    Option("max_requests",
           "refuse to start a run (head and base together) that would make more uncached model requests", "int",
           "run", ge=1, metavar="N", shown_default="none"),
    Option("max_cost",
           "refuse to start a run (head and base together) whose estimated cost is more, in USD (the estimate "
           "counts the prompt cache; it needs a known price or evals.price)", "float", "run", gt=0, metavar="USD",
           shown_default="none"),
    Option("judge",
           "a model that reads, in place of rules, what kind of reply a sample without a call gave (clarify, unable, "
           "answer), and for trajectory cases without final checks whether the answer after a tool error tells the "
           "user (REC-SILENT); it runs on the run's provider and endpoint, through the answer cache",
           "text", "run", metavar="MODEL", shown_default="none"),
    Option("select",
           "only the cases this matches: words found in a case's name, tags or prompt, joined with and, or, not "
           "(pytest's -k), e.g. -k 'forecast and not holdout'",
           "text", "run", config=None, input=None, short="-k", metavar="EXPRESSION"),
    Option("last_failed",
           "only the cases the last run on this answer cache failed (every case when none is recorded)",
           "bool", "run", default=False, config=None, input=None),
    Option("max_fail",
           "stop asking once this many cases failed (pytest's --maxfail): the rest are NOT-EVALUATED, the run fails",
           "int", "run", ge=1, config=None, input=None, metavar="N"),
    Option("strict",
           "a case that expects a tool the surface does not have stops the run (exit 2), as a config error; "
           "without it that case fails as TOOL-MISSING and the others run",
           "bool", "run", default=False, input=None),
    Option("forbid_extra_args",
           "any argument a case's expect_args doesn't list fails the case (BFCL's rule); cases can override", "bool",
           "run", default=False, flag=None, input=None),
    Option("cache", "cache model answers", "bool", "run", default=True, toolproof=True, flag=None, input=None),
    Option("cache_dir",
           "the answer cache's folder (in the config: beside the config; as a flag or input: relative to the working "
           "directory)",
           "text", "run", default=".toolselect-cache", toolproof=True, metavar="DIR",
           input_default=".toolselect-cache"),
    Option("enabled", "accepted for toolproof's `run`; `toolselect eval` always runs", "bool", "run", default=True,
           toolproof=True, flag=None, input=None),
    Option("cases", "the cases, in toolproof's format (below)", "any", "run", default=[], toolproof=True, flag=None,
           input=None),
    Option("must_not_call",
           "tools never to be called, for every case (a list) or by tag (`{tag: [tools]}`, `\"*\"`: every case); "
           "one call is a critical misroute (docs/gate.md)",
           "any", "run", default=[], flag=None, input=None),
    # the stress test (`toolselect stress`; the `stress:` section)
    Option("sizes", "how many distractors to add beside your tools, one run per size (0: your tools alone)", "sizes",
           "stress", default=[0, 10, 25, 50, 100, 200], config="stress", metavar="N,N,…", input=None),
    Option("seeds", "random draws of distractors per size (each seeded and recorded)", "int", "stress", default=3,
           ge=1, le=100, config="stress", metavar="N", input=None),
    Option("distractors",
           "other surfaces to draw distractors from: tools.json files (JSON or YAML); in the config also "
           "{command: [...]} or {url: ...} MCP servers, listed with tools/list only",
           "files", "stress", default=[], config="stress", metavar="FILE", input=None, annotation=list[Any]),
    Option("bundled_pool",
           "draw from the bundled pool too: 165 tools of 17 public MCP servers (filesystem, git, GitHub, "
           "Playwright, Notion, …)",
           "bool", "stress", default=True, config="stress", input=None),
    Option("retriever",
           "also measure tool retrieval (as RAG-MCP does): rank the whole pool for each prompt and offer the "
           "top_k; bm25 (built in), command or embeddings-command (your program, retriever_command)",
           "text", "stress", config="stress", choices=("bm25", "command", "embeddings-command"), metavar="KIND",
           input=None, shown_default="none"),
    Option("retriever_command", "the program behind retriever: command or embeddings-command (docs/stress.md)",
           "any", "stress", config="stress", flag=None, input=None, annotation=list[str] | None),
    Option("top_k", "how many retrieved tools the model is offered", "int", "stress", default=5, ge=1, le=100,
           config="stress", metavar="K", input=None),
    Option("min_accuracy_at",
           "stress gate: accuracy floors by size, in the config a mapping {100: 0.8}; as a flag (repeatable): 100=0.8",
           "floors", "stress", default={}, ge=0, le=1, config="stress", metavar="SIZE=X", example="100=0.8",
           input=None, int_keys=True),
    Option("fail_on_cliff_move",
           "stress gate: fail when the cliff comes at fewer distractors than the base's (or appears)", "bool",
           "stress", default=False, config="stress", input=None),
    # the gate on the head
    Option("min_accuracy", "fail below this share (0..1) of correct samples", "float", "gate", default=1.0, ge=0,
           le=1, unit=SHARE, toolproof=True, metavar="X"),
    Option("max_error_rate", "more provider errors than this share exits 3: an outage is never a low score", "float",
           "gate", default=0.1, ge=0, le=1, unit=SHARE, metavar="X", input=None),
    Option("max_critical",
           "fail when more than this many samples are critical misroutes: a destructive or writing tool nobody "
           "asked for, or a tool the case must not call (docs/gate.md#severity); not excused by significance",
           "int", "gate", default=0, ge=0, metavar="N"),
    Option("max_over_trigger", "fail when more than this share (0..1) of no-tool samples call a tool", "float",
           "gate", ge=0, le=1, unit=SHARE, metavar="X", shown_default="none"),
    Option("min_clarify",
           "fail when, of the samples of cases that expect a question to the user (expect_reply: clarify), a smaller "
           "share than this (0..1) asks instead of guessing or answering", "float", "gate", ge=0, le=1, unit=SHARE,
           metavar="X", shown_default="none"),
    Option("min_tool_recall",
           "per-tool recall floors: in the config a mapping {get_weather: 0.8}; as a flag (repeatable) or an input: "
           "get_weather=0.8, get_forecast=0.9",
           "floors", "gate", default={}, ge=0, le=1, metavar="TOOL=X", example="get_weather=0.8"),
    Option("min_dimension",
           "trajectory cases: floors for the mean tool-use dimension scores (0–3): in the config a mapping "
           "{recovery: 2.0}; as a flag (repeatable) or an input: recovery=2, restraint=2.5",
           "floors", "gate", default={}, ge=0, le=3, metavar="DIMENSION=X", example="recovery=2",
           keys=DIMENSIONS),
    # the gate against the base
    Option("max_drop", "fail when accuracy drops more than this many points against the base (0: any drop)", "float",
           "compare", ge=0, unit=POINTS, metavar="PTS", shown_default="none"),
    Option("max_steal_rise",
           "with clients that have tools of their own: fail when the share of picks they take from your tools "
           "(the steal rate) rises more than this many points against the base, significantly (a paired test over "
           "cases, at significance or 0.05)",
           "float", "compare", ge=0, le=100, unit=POINTS, metavar="PTS", shown_default="none: off"),
    Option("max_search_recall_drop",
           "with tool-search (or a client that defers): fail when the share of samples whose search found the "
           "expected tool drops more than this many points against the base, significantly (a paired test over "
           "cases, at significance or 0.05)",
           "float", "compare", ge=0, le=100, unit=POINTS, metavar="PTS", shown_default="none: off"),
    Option("significance",
           "α, e.g. 0.05: a drop beyond the allowed drop fails only when it is also significant (a paired test over "
           "cases); without max-drop, any significant drop fails",
           "float", "compare", gt=0, lt=1, unit="e.g. 0.05", metavar="ALPHA", shown_default="none"),
    Option("fail_on_client_limits",
           "with clients named (evals.clients): fail when a client can't take the surface as it is: a name over "
           "its limit, a tool it never sends that a golden case expects, more tools than it takes",
           "bool", "gate", default=True),
    Option("fail_on_certain_flips",
           "fail when a case certainly flipped to failing (Fisher's exact test on its samples, e.g. 5/5 → 0/5)",
           "bool", "compare", default=False),
    Option("base_failure",
           "fail: a base that can't be evaluated (the ref doesn't resolve, its setup, server or provider fails) "
           "exits 3 and the comparison is said not to have run; pass: the head's own gate decides then. A base "
           "without a config (the PR that adds toolselect) is never a failure",
           "text", "compare", default="fail", choices=("fail", "pass"), metavar="fail|pass"),
    Option("base_ref", "the git ref to compare against (the Action's default: the pull request's base commit)",
           "text", "base", config=None, metavar="REF", shown_default="the PR's base commit"),
    Option("mode",
           "enforce: a failed verdict fails the check (exit 1); warn: the run, comment and annotations as usual, "
           "the verdict said as \"would fail\", and the exit code 0 — for adopting the check before enforcing it",
           "text", "gate", default="enforce", choices=("enforce", "warn"), metavar="enforce|warn"),
    # what is written
    Option("junit", "also write JUnit XML here (each missed case is a failing testcase)", "text", "report",
           config=None, metavar="PATH"),
    Option("html",
           "also write the HTML report here: one self-contained file (a heatmap whose cells list their cases, every "
           "model); the Action always writes toolselect-report/report.html",
           "text", "report", config=None, metavar="PATH", input=None),
    Option("report_artifact",
           "the name your workflow uploads toolselect-report/ under (actions/upload-artifact): the PR comment then "
           "links to the run's artifacts for the HTML report",
           "text", "action", config=None, flag=None, pattern=r"[A-Za-z0-9._-]{1,100}",
           unit="may use letters, digits, '.', '_' and '-' only", shown_default="empty: no link"),
    # how a client presents the surface (offer/clients.py): each client is asked like a model; lint checks it offline
    Option("clients",
           "evaluate the surface as this client presents it: claude-code, codex, gemini-cli, copilot-cli, opencode, "
           "cursor, vscode, openai-agents, raw, or a profile file (.yaml); repeatable (each client is asked like a "
           "model of the run); in the config a list of names or `{name, gate}`",
           "files", "client", flag="--client", metavar="NAME",
           shown_default="none: the raw tool list"),
    Option("client_mode",
           "real: drive the installed client itself (claude-code, codex, gemini-cli, copilot-cli, opencode; "
           "NAME@VERSION pins one); each sample a run of it against a local endpoint that stands in for its model "
           "API; emulated: present the surface as its profile says; auto: real when the client is installed in "
           "clients-dir (in the Action: installed) and the provider speaks its API",
           "text", "client", default="auto", choices=("auto", "real", "emulated"), metavar="MODE"),
    Option("client_endpoint",
           "how a driven client takes toolselect's endpoint: vendor, as its vendor's own API (Claude Code's tool "
           "search on, as on Anthropic's); gateway, as a proxy or gateway at a custom base URL (what it does there by "
           "itself: Claude Code decides its tool search); the report says which",
           "text", "client", default="vendor", choices=("vendor", "gateway"), metavar="AS"),
    Option("clients_dir",
           "where driven clients are installed, each version in its own folder: <dir>/<client>/<version> (`toolselect "
           "clients install NAME[@VERSION]` puts them there); in the Action its own folder, kept with actions/cache",
           "text", "client", metavar="DIR", input=None, shown_default="~/.cache/toolselect/clients"),
    Option("alongside",
           "other servers your users run beside yours, offered with your tools as each client names them: a "
           "bundled pool server (github, filesystem, …), a tools.json file; in the config also {command: [...]} or "
           "{url: ...}, listed with tools/list only; repeatable",
           "files", "client", default=[], metavar="SERVER", shown_default="none"),
    Option("server_name",
           "the name your users give the server in their client (it is in names such as mcp__<server>__<tool>)",
           "text", "client", metavar="NAME", pattern=r"[^\x00-\x1f]{1,100}",
           unit="must be 1 to 100 characters, no control characters",
           shown_default="the server's command or URL, else the config's folder"),
    # the APIs' own tool search (docs/tool-search.md): every tool deferred, found by the API's search, then picked
    Option("tool_search",
           "send the tools as the API defers them behind its own tool search: anthropic-regex, anthropic-bm25 "
           "(Anthropic's tool search tools, every tool defer_loading), openai (the Responses API's tool_search, the "
           "tools in a namespace); the search's recall per tool is reported; lint runs the BM25 search offline",
           "text", "client", default="off", choices=TOOL_SEARCH_MODES, metavar="MODE"),
    Option("eager",
           "with tool-search: tools kept loaded (not deferred), the rest found by search; repeatable",
           "files", "client", default=[], metavar="TOOL", shown_default="none: every tool deferred"),
    # description rewrites (`toolselect fix`, the Action's suggest: docs/fix.md)
    Option("rewriter",
           "the model that writes description rewrites (fix, and the Action's suggest), as provider:model; a "
           "provider with another key than the run's uses its own endpoint (its base-url input or variable)",
           "text", "fix", metavar="PROVIDER:MODEL", shown_default="the run's first model"),
    Option("candidates", "description rewrites proposed per tool (fix, and the Action's suggest)", "int", "fix",
           default=3, ge=1, le=10, metavar="K"),
    # the Action only
    Option("stress_test",
           "pull-requests: run the config's stress: section on pull requests only; always: on every event (a push "
           "seeds the cache); off: never",
           "text", "action", config=None, flag=None, choices=("pull-requests", "always", "off"),
           input_default="pull-requests"),
    Option("batch_events",
           "never: ask synchronously; push: batch on pushes (they seed the answer cache for pull requests, and "
           "nobody waits on them); always: on every event; empty: evals.batch decides",
           "text", "action", config=None, flag=None, input="batch", choices=("never", "push", "always"),
           shown_default="empty: evals.batch (off)"),
    Option("comment",
           "always: post or update the PR comment; on-change: only when something changed (an existing comment is "
           "always updated); off",
           "text", "action", config=None, flag=None, choices=("always", "on-change", "off"), input_default="always"),
    Option("review_comments",
           "regressions: a PR review with an inline comment on the source line of each changed tool text that made "
           "the model pick worse; all-changes: on every changed tool text; off: annotations on those lines instead",
           "text", "action", config=None, flag=None, choices=("regressions", "all-changes", "off"),
           input_default="regressions"),
    Option("suggest",
           "regressions: for each tool whose recall this PR lowered, rewrites of its description are tried and the "
           "one that passes a held-out test is suggested on its source line (docs/fix.md); confusions: for the "
           "tools of the hottest confusion cells; off",
           "text", "action", config=None, flag=None, choices=("regressions", "confusions", "off"),
           input_default="regressions"),
    Option("comment_id", "keeps several toolselect comments on one PR apart (letters, digits, . _ -)", "text",
           "action", config=None, flag=None, pattern="[A-Za-z0-9_.-]{1,64}",
           unit="may use letters, digits, '.', '_' and '-' only", input_default="default"),
    Option("github_token",
           "token for the PR comment (needs pull-requests: write); GitHub never passes it to containers by itself",
           "text", "action", config=None, flag=None, secret=True, input_default="${{ github.token }}"),
    Option("anthropic_api_key", "for provider anthropic; empty (e.g. on fork PRs) means cached answers only", "text",
           "action", config=None, flag=None, secret=True, env=("ANTHROPIC_API_KEY",), shown_default="empty"),
    Option("openai_api_key", "for provider openai or openai-responses; empty means cached answers only", "text",
           "action", config=None, flag=None, secret=True, env=("OPENAI_API_KEY",), shown_default="empty"),
    Option("openai_base_url",
           "an OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, OpenRouter, gateways) for the OpenAI providers; "
           "a base_url in the config is used only when this input names the same URL",
           "text", "action", config=None, flag=None, secret=True, env=("OPENAI_BASE_URL",), shown_default="empty"),
    Option("anthropic_base_url",
           "an Anthropic-compatible endpoint (a gateway, a proxy) for provider anthropic; without it the Anthropic "
           "key goes to api.anthropic.com only",
           "text", "action", config=None, flag=None, secret=True, env=("ANTHROPIC_BASE_URL",), shown_default="empty"),
    Option("gemini_api_key", "for provider gemini; empty means cached answers only", "text",
           "action", config=None, flag=None, secret=True, env=("GEMINI_API_KEY",), shown_default="empty"),
    Option("gemini_base_url",
           "a Gemini-compatible endpoint (a gateway, a proxy) for provider gemini; without it the Gemini key goes to "
           "generativelanguage.googleapis.com only",
           "text", "action", config=None, flag=None, secret=True, env=("GOOGLE_GEMINI_BASE_URL",),
           shown_default="empty"),
    Option("runner",
           "container: the eval runs in the Action's image (Python, Node.js, uv, git); host: on the job's machine, "
           "after your own setup steps (anything the job can run, the server can: Docker images too)",
           "text", "action", config=None, flag=None, choices=("container", "host"), input_default="container"),
    Option("working_directory", "where the config lives and the eval runs, relative to the workspace", "text",
           "action", config=None, flag=None, input_default="."),
    Option("fail_on_fork",
           "on fork PRs (no secrets, a read-only token) the gate only adds a notice; true fails the check there too",
           "bool", "action", default=False, config=None, flag=None, input_default="false"),
    Option("matrix_shard",
           "in a matrix job: this job's shard, 1 to `shards`; it uploads its part and its new answers "
           "(toolselect-report/) and posts nothing",
           "int", "action", config=None, flag=None, input="shard", ge=1, le=256, shown_default="empty: no shards"),
    Option("shards", "in a matrix job: how many shards the run is split into", "int", "action", config=None,
           flag=None, ge=1, le=256, shown_default="empty"),
    Option("merge",
           "the merge job: the folder the shard jobs' artifacts were downloaded to; their parts (head and base) and "
           "answers become one run: one comment, one check",
           "text", "action", config=None, flag=None, shown_default="empty"),
    Option("from_artifact",
           "in a workflow_run workflow: the folder of a fork PR run's toolselect-report artifact, to post its comment",
           "text", "action", config=None, flag=None, shown_default="empty"),
)
# fmt: on

BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}


def option(key: str) -> Option:
    return BY_KEY[key]


def with_flags(groups: Iterable[Group]) -> list[Option]:
    wanted = set(groups)
    return [o for o in OPTIONS if o.group in wanted and o.flag_name]


def inputs() -> list[Option]:
    return [o for o in OPTIONS if o.input_name]


def read_inputs(environ: Mapping[str, str]) -> dict[str, Any]:
    """Every Action input that was given (GitHub passes each declared input as `INPUT_<NAME>`, dashes
    kept, empty when not set), parsed and range-checked: key → value."""
    given: dict[str, Any] = {}
    for o in inputs():
        name = str(o.input_name)
        text = environ.get(f"INPUT_{name.upper()}", "").strip() or o.input_default
        if text and "${{" not in text:
            given[o.key] = o.parse(text, o.label("input"))
    return given


def add_flags(parser: argparse.ArgumentParser, options: Iterable[Option]) -> None:
    """The options' flags; their text is parsed by `read_flags`, after argparse."""
    for o in options:
        names = [n for n in (o.short, str(o.flag_name)) if n]
        common: dict[str, Any] = {"dest": o.key, "help": o.help, "default": None}
        if o.kind == "bool":
            parser.add_argument(*names, action=argparse.BooleanOptionalAction, **common)
        elif o.kind in ("floors", "files") or o.repeatable:
            parser.add_argument(*names, action="append", metavar=o.metavar or None, **common)
        else:
            parser.add_argument(*names, metavar=o.metavar or None, **common)


def read_flags(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The options given as flags (argparse's values: text, a list for a repeatable flag, a bool for
    an on/off flag), parsed and range-checked: key → value."""
    given: dict[str, Any] = {}
    for o in OPTIONS:
        value = raw.get(o.key)
        if value is None or not o.flag_name:
            continue
        label = o.label("flag")
        if o.repeatable:
            given[o.key] = [o.parse(v, label) for v in ([value] if isinstance(value, str) else value)]
            if len(given[o.key]) == 1:
                given[o.key] = given[o.key][0]
        elif o.kind == "bool":
            given[o.key] = bool(value)
        elif o.kind == "floors":
            given[o.key] = o.parse_floors("\n".join(value), label)
        elif o.kind == "files":
            given[o.key] = tuple(value)
        else:
            given[o.key] = o.parse(value, label)
    return pair_models(given)


def pair_models(given: dict[str, Any]) -> dict[str, Any]:
    """Repeated `--model` flags as the `models` option: `--provider openai --model a --provider
    anthropic --model b` pairs them in order; one `--provider` (or `--base-url`), or none (the
    config's), goes with every model."""
    many = {k: given[k] for k in ("provider", "model", "base_url") if isinstance(given.get(k), list)}
    if not many:
        return given
    models = given.get("model")
    if not isinstance(models, list):
        raise ConfigError(
            f"{len(many[next(iter(many))])} --{next(iter(many)).replace('_', '-')} flags but "
            f"{'one --model' if models else 'no --model'}: give one --model per --provider",
            hint="e.g. --provider openai --model gpt-4.1-mini --provider anthropic --model claude-haiku-4-5",
        )
    for key in ("provider", "base_url"):
        values = given.get(key)
        if isinstance(values, list) and len(values) != len(models):
            flag = "--" + key.replace("_", "-")
            raise ConfigError(
                f"{len(values)} {flag} flags for {len(models)} --model flags: give one {flag} per --model, "
                "or one for all",
                hint="e.g. --provider openai --model gpt-4.1-mini --provider anthropic --model claude-haiku-4-5",
            )

    def nth(key: str, i: int) -> Any:
        value = given.get(key)
        return value[i] if isinstance(value, list) else value

    rest = {k: v for k, v in given.items() if k not in ("provider", "model", "base_url")}
    return rest | {
        "models": tuple(
            {"provider": nth("provider", i), "model": model, "base_url": nth("base_url", i)}
            for i, model in enumerate(models)
        )
    }


MODEL_LINE = re.compile(
    r"(?:(?P<label>[A-Za-z0-9][A-Za-z0-9._:/@+~-]{0,63})=)?(?P<provider>[a-z][a-z0-9-]*):(?P<model>\S+)"
)


def parse_models(text: str, label: str) -> tuple[dict[str, Any], ...]:
    """The `models` input: one `[label=]provider:model` per line (or comma-separated)."""
    models = []
    for item in re.split(r"[\n,]", text):
        if not item.strip() or item.strip().startswith("#"):
            continue
        m = MODEL_LINE.fullmatch(item.strip())
        if m is None:
            raise ConfigError(
                f"{label}: expected [label=]provider:model, e.g. haiku=anthropic:claude-haiku-4-5 "
                f"(got {item.strip()!r})"
            )
        provider = m.group("provider")
        if provider not in PROVIDERS:
            raise ConfigError(
                f"{label}: unknown provider '{provider}' in {item.strip()!r}{did_you_mean(provider, tuple(PROVIDERS))}"
            )
        models.append({"provider": provider, "model": m.group("model"), "label": m.group("label")})
    if not models:
        raise ConfigError(f"{label}: no model given; one [label=]provider:model per line")
    return tuple(models)
