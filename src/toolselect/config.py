"""toolproof-compatible configuration, our extensions, and the resolved settings of one run.

A toolproof config (top-level `server:` + `evals:`) is a valid toolselect config. Precedence for
each setting: CLI flag > environment (provider and model only) > YAML > default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ConfigError, ConfigErrors, did_you_mean, where
from .explain import explain_errors, show
from .golden import EXPECT_TOOL_HINT, Case, YamlCase, cases_from_config, load_golden
from .locate import Loc, Located, display_path, load_yaml

CONFIG_NAMES = ("toolselect.yaml", "toolproof.yaml")
PROVIDERS = ("bm25", "command", "anthropic", "openai", "openai-responses")
TOOLPROOF_IGNORED = ("checks", "tests", "fuzz", "bench", "timeout_ms", "retries")
DEFAULT_CACHE_DIR = ".toolselect-cache"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ServerModel(_Strict):
    """toolproof's `server:` section, plus `transport` for SSE servers."""

    command: list[str] | None = None
    url: str | None = None
    transport: Literal["streamable-http", "sse"] | None = None
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    cwd: str | None = None
    startup_timeout_s: float = Field(30.0, gt=0)

    @model_validator(mode="after")
    def _one_way_in(self) -> ServerModel:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of 'command' (a stdio server) or 'url' (an HTTP server)")
        if self.command is not None and not self.command:
            raise ValueError("'command' is empty; give the program and its arguments, e.g. [python, server.py]")
        if self.headers and self.url is None:
            raise ValueError("'headers' only apply to a 'url' server")
        if self.transport and self.url is None:
            raise ValueError("'transport' only applies to a 'url' server")
        return self


class Price(_Strict):
    """USD per million tokens, for the cost estimate."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class EvalsModel(_Strict):
    """toolproof's `evals:` keys plus toolselect's extensions (documented in docs/config.md)."""

    # toolproof's keys
    enabled: bool = True
    provider: str | None = None
    model: str | None = None
    command: list[str] | None = None
    system: str | None = None
    params: dict[str, Any] = {}
    min_accuracy: float = Field(1.0, ge=0, le=1)
    cache: bool = True
    cache_dir: str = DEFAULT_CACHE_DIR
    timeout_s: float | None = Field(None, gt=0)
    cases: list[YamlCase] = []
    # toolselect's extensions
    golden: str | list[str] | None = None
    repeat: int = Field(1, ge=1)
    concurrency: int = Field(8, ge=1)
    forbid_extra_args: bool = False
    max_error_rate: float = Field(0.1, ge=0, le=1)
    temperature: float | None = Field(None, ge=0, le=2)
    seed: int | None = None
    base_url: str | None = None
    max_retries: int = Field(5, ge=0)
    max_tokens: int = Field(4096, ge=1)
    price: Price | None = None
    shuffle: bool | None = None  # default: on when repeat > 1
    max_requests: int | None = Field(None, ge=1)
    # the gate, beyond min_accuracy (docs/config.md "Choosing your gate")
    max_drop: float | None = Field(None, ge=0)
    significance: float | None = Field(None, gt=0, lt=1)
    fail_on_certain_flips: bool = False
    max_over_trigger: float | None = Field(None, ge=0, le=1)
    min_tool_recall: dict[str, float] = {}


class ConfigModel(_Strict):
    server: ServerModel | None = None
    tools_file: str | None = None
    evals: EvalsModel = EvalsModel()
    # toolproof sections toolselect accepts and ignores
    checks: Any = None
    tests: Any = None
    fuzz: Any = None
    bench: Any = None
    timeout_ms: Any = None
    retries: Any = None


def _model_at(loc: Loc) -> type[BaseModel] | None:
    if loc == ():
        return ConfigModel
    if loc == ("server",):
        return ServerModel
    if loc == ("evals",):
        return EvalsModel
    if len(loc) == 3 and loc[:2] == ("evals", "cases"):
        return YamlCase
    return None


# --------------------------------------------------------------------------- resolved settings


@dataclass(frozen=True)
class ServerSpec:
    """How to reach a live MCP server."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    transport: str | None = None  # None: streamable HTTP, or SSE when the URL path ends in /sse
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: Path | None = None
    startup_timeout_s: float = 30.0

    def describe(self) -> str:
        """For reports and messages: the URL without its query or user info, which can hold keys."""
        if self.command:
            return "stdio: " + " ".join(self.command)
        kind = self.transport or (
            "sse" if (self.url or "").split("?")[0].rstrip("/").endswith("/sse") else "streamable-http"
        )
        return f"{kind}: {public_url(self.url or '')}"


def public_url(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    shown = urlunsplit((parts.scheme, host, parts.path, "", ""))
    return shown + ("?…" if parts.query else "")


@dataclass(frozen=True)
class Settings:
    """Everything one run needs, after CLI > environment > YAML > defaults."""

    config_file: str | None
    base_dir: Path
    server: ServerSpec | None
    tools_file: Path | None
    golden: tuple[Path, ...]
    provider: str
    model: str
    command: tuple[str, ...] | None = None
    system: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    min_accuracy: float = 1.0
    cache_mode: str = "use"  # use | refresh (--no-cache) | only (--cache-only) | off (cache: false)
    cache_dir: Path = Path(DEFAULT_CACHE_DIR)
    timeout_s: float | None = None
    repeat: int = 1
    concurrency: int = 8
    forbid_extra_args: bool = False
    max_error_rate: float = 0.1
    temperature: float | None = None
    seed: int | None = None
    base_url: str | None = None
    max_retries: int = 5
    max_tokens: int = 4096
    price: Mapping[str, float] | None = None
    shuffle: bool = False
    max_requests: int | None = None
    max_drop: float | None = None
    significance: float | None = None
    fail_on_certain_flips: bool = False
    max_over_trigger: float | None = None
    min_tool_recall: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    origins: Mapping[str, tuple[str, int | None]] = field(default_factory=dict, repr=False)  # key → (file, line)

    def origin(self, key: str) -> str:
        """`file:line: ` of a config key (an `evals:` key, `server` or `tools_file`), for messages."""
        file, line = self.place(key)
        return where(file, line)

    def place(self, key: str) -> tuple[str | None, int | None]:
        return self.origins.get(key, (None, None))


@dataclass(frozen=True)
class Overrides:
    """What the command line (or the Action's inputs) asks for; None means 'not given'."""

    config: str | None = None
    tools_file: str | None = None
    url: str | None = None
    server_command: tuple[str, ...] | None = None
    golden: tuple[str, ...] = ()
    provider: str | None = None
    model: str | None = None
    min_accuracy: float | None = None
    repeat: int | None = None
    concurrency: int | None = None
    cache_dir: str | None = None
    no_cache: bool = False
    cache_only: bool = False
    temperature: float | None = None
    seed: int | None = None
    timeout_s: float | None = None
    max_retries: int | None = None
    max_error_rate: float | None = None
    base_url: str | None = None
    shuffle: bool | None = None
    max_requests: int | None = None
    max_drop: float | None = None
    significance: float | None = None
    fail_on_certain_flips: bool | None = None
    max_over_trigger: float | None = None
    min_tool_recall: Mapping[str, float] | None = None


@dataclass(frozen=True)
class Loaded:
    """A parsed config file (or none) and the cases it defines inline."""

    model: ConfigModel
    doc: Located | None
    path: Path | None


def find_config(explicit: str | None, cwd: Path) -> Path | None:
    """`-c FILE`, else toolselect.yaml, else toolproof.yaml in the current folder, else None."""
    if explicit:
        path = Path(explicit)
        return path if path.is_absolute() else cwd / path
    for name in CONFIG_NAMES:
        if (cwd / name).is_file():
            return cwd / name
    return None


def load_config(path: Path | None, environ: Mapping[str, str]) -> Loaded:
    """Parse and validate a config file; `${VAR}` inside `server:` is expanded from `environ`."""
    if path is None:
        return Loaded(ConfigModel(), None, None)
    shown = display_path(path)
    if not path.exists():
        raise ConfigError(f"{shown}: config file not found", hint="create one with `toolselect init`, or pass -c FILE")
    doc = load_yaml(path, shown, "config file")
    data = doc.data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where(shown, 1)}a config file must be a mapping with an evals: section (got {type(data).__name__})"
        )
    if isinstance(data.get("server"), dict):
        data = dict(data, server=_expand(data["server"], ("server",), doc, environ))
    try:
        model = ConfigModel.model_validate(data)
    except ValidationError as exc:
        raise ConfigErrors(
            explain_errors(exc, doc, model_at=_model_at, hints={"expect_tool": EXPECT_TOOL_HINT})
        ) from None
    if model.server is not None and model.tools_file is not None:
        raise ConfigError(
            f"{where(shown, doc.line(('tools_file',), key=True))}set either server: or tools_file:, not both"
        )
    return Loaded(model, doc, path)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: Any, loc: Loc, doc: Located, environ: Mapping[str, str]) -> Any:
    """toolproof's `${VAR}` expansion, applied only inside `server:`."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in environ:
                raise ConfigError(
                    f"{where(doc.file, doc.line(loc))}environment variable {name} is not set (used as ${{{name}}} in 'server')",
                    hint=f"export {name}=… before running, or remove it from the config",
                )
            return environ[name]

        return _VAR.sub(sub, value)
    if isinstance(value, list):
        return [_expand(v, (*loc, i), doc, environ) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _expand(v, (*loc, k), doc, environ) for k, v in value.items()}
    return value


def resolve_settings(loaded: Loaded, over: Overrides, environ: Mapping[str, str], cwd: Path) -> Settings:
    """Merge the config file with the command line and the environment."""
    model, doc = loaded.model, loaded.doc
    ev = model.evals
    base = loaded.path.parent if loaded.path else cwd
    shown = doc.file if doc else None

    def at(*loc: str | int) -> str:
        return where(shown, doc.line(loc)) if doc else ""

    notes = []
    ignored = [k for k in TOOLPROOF_IGNORED if getattr(model, k) is not None]
    if ignored:
        notes.append(f"ignoring toolproof section(s) {', '.join(ignored)}: toolselect runs the evals only")

    provider, provider_from = _first(
        (over.provider, "--provider"),
        (environ.get("TOOLSELECT_PROVIDER"), "TOOLSELECT_PROVIDER"),
        (environ.get("TOOLPROOF_EVAL_PROVIDER"), "TOOLPROOF_EVAL_PROVIDER"),
        (ev.provider, "evals.provider"),
    )
    if not provider:
        raise ConfigError(
            "no provider: set evals.provider in the config, TOOLSELECT_PROVIDER, or --provider",
            hint="run offline with --provider bm25 (no API key needed)",
        )
    if provider not in PROVIDERS:
        place = at("evals", "provider") if provider_from == "evals.provider" else ""
        raise ConfigError(f"{place}unknown provider '{provider}' in {provider_from}{did_you_mean(provider, PROVIDERS)}")
    model_name, _ = _first(
        (over.model, "--model"),
        (environ.get("TOOLSELECT_MODEL"), "TOOLSELECT_MODEL"),
        (environ.get("TOOLPROOF_EVAL_MODEL"), "TOOLPROOF_EVAL_MODEL"),
        (ev.model, "evals.model"),
    )
    if provider in ("anthropic", "openai", "openai-responses") and not model_name:
        raise ConfigError(
            f"no model for provider '{provider}': set evals.model, TOOLSELECT_MODEL, or --model",
            hint="pick the model your users' clients actually use",
        )
    if provider == "command" and not ev.command:
        raise ConfigError(f"{at('evals')}provider 'command' needs evals.command, e.g. command: [python, pick_tool.py]")

    for flag, value in (("--min-accuracy", over.min_accuracy), ("--max-error-rate", over.max_error_rate)):
        if value is not None and not 0 <= value <= 1:
            raise ConfigError(f"{flag} must be between 0 and 1 (got {show(value)}); 0.9 means 90%")
    for flag, value in (("--repeat", over.repeat), ("--concurrency", over.concurrency)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} must be at least 1 (got {value})")
    if over.temperature is not None and not 0 <= over.temperature <= 2:
        raise ConfigError(f"--temperature must be between 0 and 2 (got {show(over.temperature)})")
    if over.timeout_s is not None and over.timeout_s <= 0:
        raise ConfigError(f"--timeout must be more than 0 seconds (got {show(over.timeout_s)})")
    if over.max_retries is not None and over.max_retries < 0:
        raise ConfigError(f"--max-retries must be 0 or more (got {over.max_retries})")
    if over.significance is not None and not 0 < over.significance < 1:
        raise ConfigError(f"--significance must be between 0 and 1, e.g. 0.05 (got {show(over.significance)})")
    if over.max_over_trigger is not None and not 0 <= over.max_over_trigger <= 1:
        raise ConfigError(f"--max-over-trigger must be between 0 and 1 (got {show(over.max_over_trigger)})")
    for tool, floor in (over.min_tool_recall or {}).items():
        if not 0 <= floor <= 1:
            raise ConfigError(f"--min-tool-recall {tool}={floor:g}: the floor must be between 0 and 1")
    for name, floor in ev.min_tool_recall.items():
        if not 0 <= floor <= 1:
            raise ConfigError(
                f"{at('evals', 'min_tool_recall', name)}evals.min_tool_recall.{name} must be between 0 and 1 (got {show(floor)})"
            )
    if over.cache_only and over.no_cache:
        raise ConfigError("--cache-only and --no-cache contradict each other: pick one")

    server, tools_file = surface_source(loaded, over, cwd)
    if server is None and tools_file is None:
        raise ConfigError(
            "no tool surface: add server: (or tools_file:) to the config, or pass --tools FILE, --url URL, or -- SERVER COMMAND"
        )

    golden_paths: list[Path] = []
    if over.golden:
        golden_paths = [_path(g, cwd) for g in over.golden]
        for given, path in zip(over.golden, golden_paths, strict=True):
            if not path.is_file():
                raise ConfigError(f"--golden {given}: golden file not found")
    elif ev.golden:
        entries = [ev.golden] if isinstance(ev.golden, str) else ev.golden
        golden_paths = [_path(g, base) for g in entries]
        for index, (given, path) in enumerate(zip(entries, golden_paths, strict=True)):
            if not path.is_file():
                loc = ("evals", "golden") if isinstance(ev.golden, str) else ("evals", "golden", index)
                raise ConfigError(f"{at(*loc)}golden file {given} not found (paths are relative to the config file)")

    return Settings(
        config_file=shown,
        base_dir=base,
        server=server,
        tools_file=tools_file,
        golden=tuple(golden_paths),
        provider=provider,
        model=model_name or "",
        command=tuple(ev.command) if ev.command else None,
        system=ev.system,
        params=dict(ev.params),
        min_accuracy=over.min_accuracy if over.min_accuracy is not None else ev.min_accuracy,
        cache_mode="only" if over.cache_only else "off" if not ev.cache else "refresh" if over.no_cache else "use",
        cache_dir=_path(over.cache_dir, cwd) if over.cache_dir else _path(ev.cache_dir, base),
        timeout_s=_given(over.timeout_s, ev.timeout_s),
        repeat=over.repeat or ev.repeat,
        concurrency=over.concurrency or ev.concurrency,
        forbid_extra_args=ev.forbid_extra_args,
        max_error_rate=_given(over.max_error_rate, ev.max_error_rate),
        temperature=_given(over.temperature, ev.temperature),
        seed=_given(over.seed, ev.seed),
        base_url=over.base_url or ev.base_url,
        max_retries=_given(over.max_retries, ev.max_retries),
        max_tokens=ev.max_tokens,
        price=ev.price.model_dump() if ev.price else None,
        shuffle=_given(over.shuffle, ev.shuffle)
        if _given(over.shuffle, ev.shuffle) is not None
        else (over.repeat or ev.repeat) > 1,
        max_requests=_given(over.max_requests, ev.max_requests),
        max_drop=_given(over.max_drop, ev.max_drop),
        significance=_given(over.significance, ev.significance),
        fail_on_certain_flips=_given(over.fail_on_certain_flips, ev.fail_on_certain_flips),
        max_over_trigger=_given(over.max_over_trigger, ev.max_over_trigger),
        min_tool_recall=dict(over.min_tool_recall if over.min_tool_recall is not None else ev.min_tool_recall),
        notes=tuple(notes),
        origins=_origins(doc),
    )


def _origins(doc: Located | None) -> dict[str, tuple[str, int | None]]:
    if doc is None:
        return {}
    out: dict[str, tuple[str, int | None]] = {
        key: (doc.file, doc.line(("evals", key))) for key in EvalsModel.model_fields
    }
    for key in ("server", "tools_file"):
        out[key] = (doc.file, doc.line((key,), key=True))
    return out


def parse_floors(text: str, label: str) -> dict[str, float]:
    """`get_weather=0.8, get_forecast=0.9` (or one per line, `tool: 0.8`) → {tool: floor}."""
    floors = {}
    for item in re.split(r"[\n,]", text):
        if not item.strip():
            continue
        m = re.fullmatch(r"\s*([^=:\s]+)\s*[=:]\s*(\S+)\s*", item)
        try:
            tool, floor = m.group(1), float(m.group(2))  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            raise ConfigError(f"{label}: expected tool=floor, e.g. get_weather=0.8 (got {item.strip()!r})") from None
        if not 0 <= floor <= 1:
            raise ConfigError(f"{label}: {item.strip()!r}: the floor must be between 0 and 1")
        floors[tool] = floor
    return floors


def _given(flag: Any, yaml: Any) -> Any:
    return flag if flag is not None else yaml


def _first(*pairs: tuple[str | None, str]) -> tuple[str | None, str]:
    for value, origin in pairs:
        if value:
            return value, origin
    return None, ""


def _path(value: str, base: Path) -> Path:
    path = Path(value)
    return path if path.is_absolute() else base / path


def surface_source(loaded: Loaded, over: Overrides, cwd: Path) -> tuple[ServerSpec | None, Path | None]:
    """Where the tool surface comes from: CLI (--tools, --url, -- CMD) beats the config."""
    model = loaded.model
    base = loaded.path.parent if loaded.path else cwd
    given = [x for x in (over.tools_file, over.url, over.server_command) if x]
    if len(given) > 1:
        raise ConfigError("give only one of --tools, --url, or -- SERVER COMMAND")
    if over.tools_file:
        return None, _path(over.tools_file, cwd)
    if over.url:
        headers = model.server.headers if model.server and model.server.url else {}
        return ServerSpec(url=over.url, headers=dict(headers)), None
    if over.server_command:
        env = model.server.env if model.server else {}
        return ServerSpec(command=tuple(over.server_command), env=dict(env), cwd=cwd), None
    if model.tools_file:
        return None, _path(model.tools_file, base)
    if model.server:
        s = model.server
        return (
            ServerSpec(
                command=tuple(s.command) if s.command else None,
                url=s.url,
                transport=s.transport,
                env=dict(s.env),
                headers=dict(s.headers),
                cwd=_path(s.cwd, base) if s.cwd else base,
                startup_timeout_s=s.startup_timeout_s,
            ),
            None,
        )
    return None, None


def load_cases(loaded: Loaded, settings: Settings) -> list[Case]:
    """Inline cases first, then each golden file in order; names must be unique."""
    cases: list[Case] = []
    if loaded.doc is not None:
        cases += cases_from_config(loaded.doc, loaded.model.evals.cases, settings.forbid_extra_args)
    for path in settings.golden:
        cases += load_golden(path, settings.forbid_extra_args)
    if not cases:
        raise ConfigError(
            "no cases: add evals.cases to the config, or golden files (evals.golden or --golden)",
            hint="`toolselect init` writes a starter golden set",
        )
    return cases  # names, tools and arguments are checked against the surface by lint
