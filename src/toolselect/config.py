"""toolproof-compatible configuration, our extensions, and the resolved settings of one run.

A toolproof config (top-level `server:` + `evals:`) is a valid toolselect config. The `evals:` keys
are the options declared in options.py. Precedence for each setting: a flag (or an Action input) >
the environment (provider, model) > the YAML > the option's default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, create_model, field_validator, model_validator

from .errors import ConfigError, ConfigErrors, where
from .explain import explain_errors
from .gate import Gate
from .golden import EXPECT_TOOL_HINT, Case, YamlCase, case_part, cases_from_config, load_golden
from .locate import Loc, Located, display_path, load_yaml
from .options import BY_KEY, OPTIONS, GivenBy, Option, parse_models
from .providers.registry import PROVIDERS
from .shards import Shard, parse_shard
from .strict import Authored
from .urls import public_url

if TYPE_CHECKING:
    from .clients import Profile

CONFIG_NAMES = ("toolselect.yaml", "toolproof.yaml")
TOOLPROOF_IGNORED = ("checks", "tests", "fuzz", "bench", "timeout_ms", "retries")
CacheMode = Literal["use", "refresh", "only", "off"]  # refresh: --no-cache; only: --cache-only; off: cache: false


class ServerModel(Authored):
    """toolproof's `server:` section, plus `transport` for SSE servers and the keys that build and
    start a server in CI: `setup`, `start`, `setup_timeout_s`, `ready_timeout_s`."""

    command: list[str] | None = None
    url: str | None = None
    transport: Literal["streamable-http", "sse"] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    startup_timeout_s: float = Field(30.0, gt=0)
    setup: str | list[str] | None = None
    setup_inputs: list[str] | None = None  # globs (in the server's folder): a local run re-runs setup when they change
    setup_timeout_s: float = Field(900.0, gt=0)
    start: str | list[str] | None = None
    ready_timeout_s: float = Field(60.0, gt=0)

    @field_validator("setup", "start", mode="before")
    @classmethod
    def _shell_lines(cls, value: Any) -> Any:
        for index, line in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(line, dict):
                raise ValueError(
                    f"entry {index + 1} is a mapping, not a command: YAML reads `word: text` as a key and a value; "
                    "put the command in quotes"
                )
        return value

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
        if self.start is not None and self.url is None:
            raise ValueError("'start' starts an HTTP server: give its 'url' too (e.g. http://127.0.0.1:{port}/mcp)")
        if not self.start and self.start is not None:
            raise ValueError("'start' is empty; give the command that starts the HTTP server")
        start = " ".join([self.start] if isinstance(self.start, str) else self.start or [])
        elsewhere = [*self.env.values(), *self.headers.values()]
        if self.start is None and (PORT in (self.url or "") or any(PORT in v for v in elsewhere)):
            raise ValueError("'{port}' is a port toolselect picks for 'start': add 'start', or write the port")
        if self.start is not None and PORT in (self.url or "") and PORT not in start + " ".join(self.env.values()):
            raise ValueError(
                "the server started by 'start' is never told '{port}': put it in 'start' (--port {port}) or in "
                "'env' (PORT: '{port}')"
            )
        setup = [self.setup] if isinstance(self.setup, str) else self.setup or []
        if any(not command.strip() for command in setup):
            raise ValueError("'setup' has an empty command")
        return self


PORT = "{port}"  # in server.start, url, env and headers: a free port picked for each side


LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@+~-]{0,63}$"  # how a model is named in the views and outputs
MAX_MODELS = 16  # a report of several models holds at most this many (report.MAX_MODELS)


def _bounds(option: Option) -> dict[str, Any]:
    if option.kind == "floors":
        return {}
    return {
        k: v for k, v in (("ge", option.ge), ("gt", option.gt), ("le", option.le), ("lt", option.lt)) if v is not None
    }


class OwnPrice(Authored):
    """evals.price: your own prices, USD per million tokens, for the cost estimate."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)  # input read from the API's prompt cache (default: input's)
    cache_write: float | None = Field(None, ge=0)  # input written to it (default: input's)


GATE_KEYS = tuple(o.key for o in OPTIONS if o.group in ("gate", "compare") and o.config == "evals")

# One model's own gate (evals.models[].gate): any gate option, the rest from evals:.
GateEntry = create_model(  # type: ignore[call-overload]
    "GateEntry",
    __base__=Authored,
    **{key: (BY_KEY[key].field()[0] | None, Field(None, **_bounds(BY_KEY[key]))) for key in GATE_KEYS},
)


class ModelEntry(Authored):
    """One of evals.models: a model evaluated in the same run, on the same cases."""

    provider: str
    model: str = ""
    base_url: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = Field(None, pattern=LABEL_PATTERN)
    gate: GateEntry | None = None  # type: ignore[valid-type]

    @field_validator("provider")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in PROVIDERS:
            from .errors import did_you_mean

            raise ValueError(f"unknown provider '{value}'{did_you_mean(value, tuple(PROVIDERS))}")
        return value


class ClientEntry(Authored):
    """One of evals.clients with a gate of its own: a bundled profile's name or a profile file."""

    name: str = Field(min_length=1)
    gate: GateEntry | None = None  # type: ignore[valid-type]


class DistractorServer(Authored):
    """A distractor source that is an MCP server: listed with tools/list only, never called."""

    command: list[str] | None = None
    url: str | None = None
    name: str | None = None  # the server's label in prefixes and reports (default: from the command or URL)


# toolproof's `evals:` keys plus toolselect's extensions: one field per option of options.py (the
# structured ones typed here).
STRUCTURED = {
    "alongside": list[str | DistractorServer],
    "cases": list[YamlCase],
    "price": OwnPrice | None,
    "models": list[ModelEntry] | None,
    "clients": list[str | ClientEntry] | None,
}
EvalsModel = create_model(  # type: ignore[call-overload]
    "EvalsModel",
    __base__=Authored,
    **{o.key: o.field(STRUCTURED.get(o.key)) for o in OPTIONS if o.config == "evals"},
)


StressModel = create_model(  # type: ignore[call-overload]
    "StressModel",
    __base__=Authored,
    **{
        o.key: o.field(list[str | DistractorServer] if o.key == "distractors" else None)
        for o in OPTIONS
        if o.config == "stress"
    },
)

ConfigModel = create_model(  # type: ignore[call-overload]
    "ConfigModel",
    __base__=Authored,
    server=(ServerModel | None, None),
    tools_file=(str | None, None),
    evals=(EvalsModel, Field(default_factory=EvalsModel)),
    stress=(StressModel, Field(default_factory=StressModel)),
    # toolproof sections toolselect accepts and ignores
    **dict.fromkeys(TOOLPROOF_IGNORED, (Any, None)),
)


MODELS_AT: dict[Loc, Any] = {
    (): ConfigModel,
    ("server",): ServerModel,
    ("evals",): EvalsModel,
    ("stress",): StressModel,
}


def _model_at(loc: Loc) -> Any:
    """The model at a place in the config, for did-you-mean on unknown keys."""
    in_case = len(loc) >= 3 and loc[:2] == ("evals", "cases")
    return MODELS_AT.get(loc) or (case_part(YamlCase, loc[3:]) if in_case else None)


def _range(loc: Loc) -> tuple[str, str] | None:
    """An `evals:` option's range and unit, for a value outside it."""
    option = BY_KEY.get(str(loc[1])) if len(loc) >= 2 and loc[0] == "evals" else None
    return (option.bounds(), option.unit) if option and option.bounds() else None


# --------------------------------------------------------------------------- resolved settings


@dataclass(frozen=True)
class ServerSpec:
    """How to reach a live MCP server, and how to build and start it first."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    transport: str | None = None  # None: streamable HTTP, or SSE when the URL path ends in /sse
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: Path | None = None
    startup_timeout_s: float = 30.0
    setup: tuple[str, ...] = ()  # shell commands, run in `cwd` before the server starts
    setup_inputs: tuple[str, ...] = ()  # globs whose files decide whether a local setup runs again
    setup_skip: Literal["never", "always", "unchanged"] = "never"  # the head: --no-setup, or a local run
    setup_stamp: Path | None = None  # where a local run notes the inputs its setup last succeeded on
    setup_timeout_s: float = 900.0
    start: str | tuple[str, ...] | None = None  # starts the HTTP server at `url` (a shell line, or argv)
    ready_timeout_s: float = 60.0
    place: str = ""  # `file:line: ` of the config's server: section, for messages
    # the command and URL as the config wrote them (`${VAR}` unexpanded), for messages and reports
    shown_command: tuple[str, ...] | None = None
    shown_url: str | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)  # `${VAR}` values and header values

    def describe(self) -> str:
        """For reports and messages: the command or URL as written in the config (never what `${VAR}`
        expanded to), the URL without its query, user info or secret-looking path segments."""
        if self.command:
            return describe_server(self.shown_command or self.command, None, None)
        return describe_server(None, self.shown_url or self.url, self.transport)

    def scrub(self, text: str) -> str:
        """`text` (e.g. an error with the server's last words) without any of the secrets."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text


def describe_server(command: Any, url: str | None, transport: str | None) -> str:
    if command:
        return "stdio: " + " ".join(str(part) for part in command)
    url = url or ""
    kind = transport or ("sse" if url.split("?")[0].rstrip("/").endswith("/sse") else "streamable-http")
    return f"{kind}: {public_url(url)}"


@dataclass(frozen=True)
class StressSettings:
    """`toolselect stress`: the sizes to measure, draws per size, where distractors come from."""

    sizes: tuple[int, ...]
    seeds: int
    distractors: tuple[Path | DistractorServer, ...]  # tools.json files (resolved), or MCP servers
    bundled_pool: bool
    retriever: str | None = None  # bm25, command, embeddings-command
    retriever_command: tuple[str, ...] | None = None
    top_k: int = 5
    min_accuracy_at: Mapping[int, float] = field(default_factory=dict)  # the gate: floors by size
    fail_on_cliff_move: bool = False


@dataclass(frozen=True)
class ModelSpec:
    """One model of a run: who answers, where, and the gate its report is judged by."""

    label: str
    provider: str
    model: str
    base_url: str | None
    params: Mapping[str, Any]
    gate: Gate
    client: Profile | None = None  # the client that presents the surface to it (evals.clients); None: the raw list
    model_label: str = ""  # with a client: the model's own label (`label` is the model's and the client's)


@dataclass(frozen=True)
class Settings:
    """Everything one run needs, after flags > environment > YAML > defaults. With several models
    (evals.models), `provider`, `model`, `base_url`, `params` and `gate` are the first model's, and
    `for_model` gives each model's own settings."""

    config_file: str | None
    base_dir: Path
    server: ServerSpec | None
    tools_file: Path | None
    golden: tuple[Path, ...]
    provider: str
    model: str
    command: tuple[str, ...] | None
    system: str | None
    params: Mapping[str, Any]
    base_url: str | None
    temperature: float | None
    seed: int | None
    max_tokens: int
    timeout_s: float | None
    max_retries: int
    price: Mapping[str, float | None] | None
    judge: str | None
    stress: StressSettings
    repeat: int
    concurrency: int
    shuffle: bool
    max_requests: int | None
    max_cost: float | None
    forbid_extra_args: bool
    cache_mode: CacheMode
    cache_dir: Path
    gate: Gate
    notes: tuple[str, ...] = ()
    select: str | None = None  # -k: the cases a run asks (selecting.py)
    failed_last: tuple[str, ...] | None = None  # --last-failed: the names the last run failed (None: every case)
    max_fail: int | None = None  # stop asking once this many cases failed
    strict: bool = False  # a case expecting a tool the surface lacks is a config error (else: TOOL-MISSING)
    origins: Mapping[str, tuple[str, int | None]] = field(default_factory=dict, repr=False)  # key → (file, line)
    given: Mapping[str, str] = field(default_factory=dict, repr=False)  # key → the flag, input or variable that set it
    models: tuple[ModelSpec, ...] = ()  # every model of the run, in order (one: this one)
    several: bool = False  # one model's settings in a run of several: its report carries its label
    shard: Shard | None = None  # --shard I/N: this run evaluates only its slice of the units
    max_rpm: float | None = None  # per endpoint, by hand (gateways that announce no limit)
    max_tpm: float | None = None
    prompt_cache: bool = True  # requests shaped for the API's prompt cache
    batch: bool = False  # uncached single-turn requests through the batch API
    batch_timeout_s: float = 3600.0
    server_name: str | None = None  # the server's name in a client's tool names (evals.server_name)
    rewriter: ModelSpec | None = None  # who writes fix's rewrites (evals.rewriter); None: the run's first model
    candidates: int = 3  # rewrites proposed per tool
    # other servers beside yours (evals.alongside): bundled pool names, tools.json files, MCP servers
    alongside: tuple[str | Path | DistractorServer, ...] = ()

    @property
    def client(self) -> Profile | None:
        """The client this model is asked through (one model's settings), or None: the raw tool list."""
        return self.models[0].client if self.models else None

    @property
    def server_label(self) -> str:
        """The server's name in a client's tool names: evals.server_name (--server-name), else the
        likeliest name a user gives it (clients.default_server_name)."""
        from .clients import default_server_name

        if self.server_name:
            return self.server_name
        command, url = (self.server.command, self.server.url) if self.server else (None, None)
        return default_server_name(command, url, self.base_dir.resolve().name)  # else the config's folder

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(m.label for m in self.models) or (self.model or self.provider,)

    def for_model(self, spec: ModelSpec) -> Settings:
        """These settings for one model of the run."""
        from dataclasses import replace

        return replace(
            self,
            provider=spec.provider,
            model=spec.model,
            base_url=spec.base_url,
            params=dict(spec.params),
            gate=spec.gate,
            models=(spec,),
            several=len(self.models) > 1,
        )

    def each_model(self) -> tuple[Settings, ...]:
        return tuple(self.for_model(m) for m in self.models) if self.models else (self,)

    def named(self, key: str) -> str:
        """Where an option was set, for a message: `--min-tool-recall`, `input min-tool-recall`,
        or `toolselect.yaml:10: evals.min_tool_recall`."""
        if key in self.given:
            return self.given[key]
        return self.origin(key) + (BY_KEY[key].config_key or key)

    def origin(self, key: str) -> str:
        """`file:line: ` of a config key (an `evals:` key, `server` or `tools_file`), for messages."""
        file, line = self.place(key)
        return where(file, line)

    def place(self, key: str) -> tuple[str | None, int | None]:
        return self.origins.get(key, (None, None))


def default_settings(provider: str, model: str = "", base_dir: Path | None = None, **values: Any) -> Settings:
    """Settings with every option at its default (for a model that only writes, and for tests)."""
    base = Path.cwd() if base_dir is None else base_dir
    defaults = {o.key: o.default for o in OPTIONS}
    merged = defaults | {"provider": provider, "model": model} | values
    return _build(merged, base_dir=base, config_file=None, server=None, tools_file=None, golden=(), cache_mode="use")


@dataclass(frozen=True)
class Overrides:
    """What the command line (or the Action's inputs) asks for: option key → value, already parsed
    and range-checked; a key that is absent was not given."""

    values: Mapping[str, Any] = field(default_factory=dict)
    source: GivenBy = "flag"
    url: str | None = None
    server_command: tuple[str, ...] | None = None
    cache_mode: Literal["refresh", "only"] | None = None

    def get(self, key: str) -> Any:
        return self.values.get(key)


@dataclass(frozen=True)
class Loaded:
    """A parsed config file (or none): its sections as validated values."""

    evals: Mapping[str, Any]  # option key → value (its default when the file doesn't set it): evals: and stress:
    server: ServerModel | None
    tools_file: str | None
    ignored: tuple[str, ...]  # toolproof sections present and ignored
    doc: Located | None
    path: Path | None
    raw_server: Any = None  # `server:` as written, before `${VAR}` expansion: what messages and reports show
    secrets: tuple[str, ...] = ()  # every value `${VAR}` expanded to: never shown, masked in the Action

    def config_value(self, key: str) -> Any:
        return self.evals.get(key, BY_KEY[key].default)

    @property
    def has_stress(self) -> bool:
        """The config has a `stress:` section: the Action runs the stress test too."""
        return self.doc is not None and ("stress",) in self.doc.keys


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
    empty = EvalsModel()
    if path is None:
        return Loaded(empty.model_dump() | StressModel().model_dump(), None, None, (), None, None)
    shown = display_path(path)
    if not path.exists():
        raise ConfigError(f"{shown}: config file not found", hint="create one with `toolselect init`, or pass -c FILE")
    doc = load_yaml(path, shown, "config file")
    data = doc.data
    if data is None:
        raise ConfigError(
            f"{shown} is empty", hint="add an evals: section (provider, cases), or write one with `toolselect init`"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where(shown, 1)}a config file must be a mapping with an evals: section (got {type(data).__name__})"
        )
    raw_server = data.get("server")
    expanded: list[str] = []
    if isinstance(raw_server, dict):
        data = dict(data, server=_expand(raw_server, ("server",), doc, environ, expanded))
    try:
        model = ConfigModel.model_validate(data)
    except ValidationError as exc:
        raise ConfigErrors(
            explain_errors(exc, doc, model_at=_model_at, hints={"expect_tool": EXPECT_TOOL_HINT}, ranges=_range)
        ) from None
    if model.server is not None and model.tools_file is not None:
        raise ConfigError(
            f"{where(shown, doc.line(('tools_file',), key=True))}set either server: or tools_file:, not both"
        )
    evals = {key: getattr(model.evals, key) for key in EvalsModel.model_fields}
    evals |= {key: getattr(model.stress, key) for key in StressModel.model_fields}  # one value per option key
    ignored = tuple(k for k in TOOLPROOF_IGNORED if getattr(model, k) is not None)
    secrets = tuple(dict.fromkeys(v for v in expanded if v.strip()))
    return Loaded(evals, model.server, model.tools_file, ignored, doc, path, raw_server, secrets)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: Any, loc: Loc, doc: Located, environ: Mapping[str, str], expanded: list[str]) -> Any:
    """toolproof's `${VAR}` expansion, applied only inside `server:` (not to the shell lines); every
    value it puts in is added to `expanded`. toolselect's own keys and tokens never expand: the
    config may come from a pull request, and would send them wherever it likes."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in PROTECTED or name.startswith(PROTECTED_PREFIXES):
                raise ConfigError(
                    f"{where(doc.file, doc.line(loc))}${{{name}}} can't be used in a config: it is toolselect's own "
                    "key or token, and a config (a pull request's, too) could send it anywhere",
                    hint="the server gets its own credentials: pass a variable of its own, e.g. ${WEATHER_API_TOKEN}",
                )
            if name not in environ:
                raise ConfigError(
                    f"{where(doc.file, doc.line(loc))}environment variable {name} is not set (used as ${{{name}}} in "
                    "'server')",
                    hint=f"export {name}=… before running, or remove it from the config",
                )
            expanded.append(environ[name])
            return environ[name]

        return _VAR.sub(sub, value)
    if isinstance(value, list):
        return [_expand(v, (*loc, i), doc, environ, expanded) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {
            k: v if loc == ("server",) and k in SHELL_KEYS else _expand(v, (*loc, k), doc, environ, expanded)
            for k, v in value.items()
        }
    return value


# toolselect's own keys and tokens, never expanded into a config: every provider's key variables
# (from the registry, so a new provider's are covered) and everything in their namespaces
# (ANTHROPIC_BASE_URL, OPENAI_ORG_ID, …), GitHub's tokens, the runner's and the Action's inputs
PROTECTED = frozenset({key for info in PROVIDERS.values() for key in info.keys} | {"GITHUB_TOKEN", "GH_TOKEN"})
PROTECTED_PREFIXES = (
    "ACTIONS_",
    "INPUT_",
    *sorted({key.split("_", 1)[0] + "_" for info in PROVIDERS.values() for key in info.keys}),
)


SHELL_KEYS = ("setup", "start")  # shell lines: `$VAR` there is the shell's, from the server's small environment


def resolve_value(option: Option, loaded: Loaded, over: Overrides, environ: Mapping[str, str]) -> tuple[Any, str, str]:
    """(value, where it came from, `file:line: ` when that is the config) for one option."""
    if option.key in over.values:
        return over.values[option.key], option.label(over.source), ""
    for variable in option.env:
        if environ.get(variable):
            return environ[variable], variable, ""
    if option.config in ("evals", "stress") and loaded.doc is not None:
        written = (option.config, option.key) in loaded.doc.keys
        place = where(loaded.doc.file, loaded.doc.line((option.config, option.key))) if written else ""
        return loaded.config_value(option.key), str(option.config_key), place
    return option.default, "", ""


def resolve_settings(loaded: Loaded, over: Overrides, environ: Mapping[str, str], cwd: Path) -> Settings:
    """Merge the config file with the command line (or the Action's inputs) and the environment."""
    doc = loaded.doc
    base = loaded.path.parent if loaded.path else cwd
    shown = doc.file if doc else None

    def at(*loc: str | int) -> str:
        return where(shown, doc.line(loc)) if doc else ""

    notes = []
    if loaded.ignored:
        notes.append(f"ignoring toolproof section(s) {', '.join(loaded.ignored)}: toolselect runs the evals only")

    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    for option in OPTIONS:
        if option.config is None and option.key not in over.values:
            continue
        value, origin, place = resolve_value(option, loaded, over, environ)
        if option.choices and value is not None:  # from the environment or the YAML: checked here
            option.check_text(value, origin, place)
        values[option.key] = value
        if origin and not place and origin != option.config_key:  # a flag, an input or a variable
            given[option.key] = origin

    # files beside: a flag's from the working directory, the config's from the config's folder
    beside = "alongside" in over.values  # a bundled server's name stays a name; a file is a path
    values["alongside"] = tuple(
        _path(d, cwd if beside else base) if isinstance(d, str) and d.endswith((".json", ".yaml", ".yml")) else d
        for d in values["alongside"] or ()
    )
    if values["alongside"] and not values.get("clients"):
        raise ConfigError(
            f"{at('evals', 'alongside')}alongside: other servers are offered as a client names them: name the "
            "clients too (evals.clients, --client; raw for the names as listed)"
        )
    from_flags = "distractors" in over.values  # distractor files: the same
    values["distractors"] = tuple(
        _path(d, cwd if from_flags else base) if isinstance(d, str) else d for d in values["distractors"] or ()
    )
    if values["retriever"] in ("command", "embeddings-command") and not values["retriever_command"]:
        raise ConfigError(
            f"{at('stress', 'retriever')}retriever {values['retriever']} needs stress.retriever_command, "
            "e.g. [python, rank.py]"
        )
    specs = _client_specs(_model_specs(loaded, over, environ, values, at), values, over, base, cwd, at)
    first = specs[0]
    values |= {"provider": first.provider, "model": first.model, "base_url": first.base_url, "params": first.params}
    if values["judge"] and not all(PROVIDERS[m.provider].api for m in specs):
        provider = next(m.provider for m in specs if not PROVIDERS[m.provider].api)
        raise ConfigError(
            f"{at('evals', 'judge')}evals.judge is a model on the run's provider: it needs anthropic, openai or "
            f"openai-responses, not {provider}",
            hint="add final checks to the trajectory cases instead (final: {regex: ...})",
        )
    values["rewriter_spec"] = _rewriter(values["rewriter"], first, at) if values["rewriter"] else None
    if any(m.provider == "command" for m in specs) and not values["command"]:
        raise ConfigError(f"{at('evals')}provider 'command' needs evals.command, e.g. command: [python, pick_tool.py]")

    server, tools_file = surface_source(loaded, over, cwd)
    if server is None and tools_file is None:
        raise ConfigError(
            "no tool surface: add server: (or tools_file:) to the config, or pass --tools FILE, --url URL, "
            "or -- SERVER COMMAND"
        )
    cache_dir = over.get("cache_dir")
    values["cache_dir"] = _path(cache_dir, cwd) if cache_dir else _path(loaded.config_value("cache_dir"), base)
    if server is not None and server.setup:
        server = _setup_skipping(server, values.get("head_setup") is False, values["cache_dir"], environ)
    if values.get("shard") and not values["cache"]:
        raise ConfigError(
            f"{at('evals', 'cache')}a shard's answers are how its part is merged: --shard needs the answer cache "
            "(evals.cache: true)"
        )
    failed_last: tuple[str, ...] | None = None
    if values.get("last_failed"):
        from .selecting import read_last_failed

        recorded = read_last_failed(Path(values["cache_dir"]))
        notes.append(
            f"--last-failed: the {len(recorded)} case(s) the last run failed"
            if recorded
            else "--last-failed: no failures recorded by an earlier run: every case"
        )
        failed_last = tuple(recorded) if recorded else None
    return _build(
        values,
        failed_last=failed_last,
        base_dir=base,
        config_file=shown,
        server=server,
        tools_file=tools_file,
        golden=_golden_paths(loaded, over, cwd, at),
        cache_mode=over.cache_mode or ("use" if values["cache"] else "off"),
        notes=tuple(notes),
        origins=_origins(doc),
        given=given,
        models=specs,
    )


def _model_specs(
    loaded: Loaded, over: Overrides, environ: Mapping[str, str], values: Mapping[str, Any], at: Any
) -> tuple[ModelSpec, ...]:
    """The run's models: repeated --model flags (or the models input), else one model from a
    provider/model given as a flag or in the environment, else evals.models, else evals.provider
    and evals.model. Each is checked and labelled (labels are unique), with its own gate: a flag
    or an input for every model > the model's own `gate:` > evals:."""
    flagged = over.get("models")
    single = any(k in over.values for k in ("provider", "model")) or any(
        environ.get(v) for k in ("provider", "model") for v in BY_KEY[k].env
    )
    configured = values["models"] if not flagged and not single else None
    if configured and loaded.doc is not None:
        for key in ("provider", "model", "base_url", "params"):
            if ("evals", key) in loaded.doc.keys:
                raise ConfigError(
                    f"{at('evals', key)}evals.{key} and evals.models both name models: put every model in "
                    "evals.models (each with its provider, model, base_url, params)"
                )
    entries: list[dict[str, Any]]
    if flagged:
        entries = [dict(m) for m in flagged]
    elif configured:
        entries = [m.model_dump(exclude_none=True) for m in configured]
    else:
        entries = [{"provider": values["provider"], "model": values["model"], "base_url": values["base_url"]}]
    specs = []
    for i, entry in enumerate(entries):
        where_ = at("evals", "models", i) if configured else ""
        provider = entry.get("provider") or values["provider"]
        if not provider:
            raise ConfigError(
                "no provider: set evals.provider in the config, TOOLSELECT_PROVIDER, or --provider",
                hint="run offline with --provider bm25 (no API key needed)",
            )
        model = entry.get("model") or ""
        if (
            model
            and not PROVIDERS[provider].takes_model
            and not _overridden("provider", "model", over, environ, configured)
        ):
            raise ConfigError(
                f"{where_}model {model!r} is set ({_said_by('model', loaded, over, environ, configured)}), but "
                f"provider {provider!r} ({_said_by('provider', loaded, over, environ, configured)}) takes no model: "
                "the run would never ask it",
                hint=f"set {_how_to_set('provider', over, environ, configured)} {provider_for(model)} too, or drop "
                f"the model to run {provider} offline",
            )
        if not PROVIDERS[provider].takes_model:
            model = ""  # a provider run offline on purpose (--provider bm25) is labelled by itself
        if PROVIDERS[provider].api and not model:
            raise ConfigError(
                f"{where_}no model for provider '{provider}': set evals.model, TOOLSELECT_MODEL, or --model",
                hint="pick the model your users' clients actually use",
            )
        gate_values = {k: v for k, v in (entry.get("gate") or {}).items() if v is not None}
        gate_values |= {k: over.values[k] for k in GATE_KEYS if k in over.values}
        specs.append(
            ModelSpec(
                label=entry.get("label") or "",
                provider=provider,
                model=model,
                base_url=_base_url(entry, provider, values["base_url"], over.source),
                params=dict(entry["params"]) if entry.get("params") else dict(values["params"]),
                gate=Gate.from_values(dict(values) | gate_values),
            )
        )
    return _labelled(specs, at if configured else None)


def _client_specs(
    specs: tuple[ModelSpec, ...], values: Mapping[str, Any], over: Overrides, base: Path, cwd: Path, at: Any
) -> tuple[ModelSpec, ...]:
    """Every model asked through every client of evals.clients (or --client, the clients input):
    labelled by the client alone when there is one model, else `<model>@<client>`. A client's own
    `gate:` is over the model's; a flag or an input is over both. A profile file is read from the
    config's folder (a flag's or an input's from the working directory)."""
    from dataclasses import replace

    from .clients import load_profile

    given = values.get("clients")
    if not given:
        return specs
    from_flags = "clients" in over.values
    gates: list[dict[str, Any]] = []  # each client's own gate
    profiles = []
    for i, entry in enumerate(given):
        gates.append(entry.gate.model_dump() if isinstance(entry, ClientEntry) and entry.gate else {})
        if not isinstance(entry, (str, ClientEntry)):  # a profile already read: the head's, for its base
            profiles.append(entry)
            continue
        try:
            profiles.append(load_profile(entry if isinstance(entry, str) else entry.name, cwd if from_flags else base))
        except ConfigError as exc:
            where_ = "" if from_flags else f"{at('evals', 'clients', i)}evals.clients[{i}]: "
            raise ConfigError(f"{where_}{exc.message}", hint=exc.hint) from None
    names = [p.name for p in profiles]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ConfigError(f"{'' if from_flags else at('evals', 'clients')}the client {twice!r} is named twice")
    if len(specs) * len(profiles) > MAX_MODELS:
        raise ConfigError(
            f"{len(specs)} models × {len(profiles)} clients: a run takes at most {MAX_MODELS} (split them over "
            "several runs)"
        )
    out = []
    for spec in specs:
        for own, profile in zip(gates, profiles, strict=True):
            gate = spec.gate.overridden(own | {k: over.values[k] for k in GATE_KEYS if k in over.values})
            label = profile.name if len(specs) == 1 else f"{spec.label}@{profile.name}"
            out.append(replace(spec, label=_as_label(label), gate=gate, client=profile, model_label=spec.label))
    return tuple(out)


def provider_for(model: str) -> str:
    """The API provider a model's name suggests, for a hint."""
    name = model.lower()
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith(("gpt", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    return "anthropic (or openai, openai-responses)"


def _overridden(key: str, other: str, over: Overrides, environ: Mapping[str, str], configured: Any) -> bool:
    """`key` was given more specifically than `other` (a flag or input over a variable over the
    config): e.g. `--provider bm25` to run a config's model offline on purpose."""

    def rank(name: str) -> int:
        if configured:
            return 1
        if name in over.values:
            return 3
        return 2 if any(environ.get(v) for v in BY_KEY[name].env) else 1

    return rank(key) > rank(other)


def _how_to_set(key: str, over: Overrides, environ: Mapping[str, str], configured: Any) -> str:
    """How to set `key` where the model was given: a flag, an input, a variable, or the config."""
    option = BY_KEY[key]
    if configured:
        return f"each evals.models entry's {key}:"
    if "model" in over.values:
        return f"the input {option.input_name}:" if over.source == "input" else str(option.flag_name)
    if any(environ.get(v) for v in BY_KEY["model"].env):
        return f"{option.env[0]}=" if option.env else str(option.flag_name)
    return f"evals.{key}:"


def _said_by(key: str, loaded: Loaded, over: Overrides, environ: Mapping[str, str], configured: Any) -> str:
    """Where a model's provider or model was given: a flag or input, a variable, or the config's line."""
    if configured:
        return "evals.models"
    _, source, place = resolve_value(BY_KEY[key], loaded, over, environ)
    if not source:
        return "the default"
    return f"{place}{source}" if place else source


def _base_url(entry: Mapping[str, Any], provider: str, run_wide: str | None, source: str) -> str | None:
    """A model's endpoint: its own, else the run's (evals.base_url, --base-url). In the Action the
    run's is the openai-base-url input, for the OpenAI APIs: an Anthropic model keeps Anthropic's."""
    if entry.get("base_url"):
        return str(entry["base_url"])
    if source == "input" and not provider.startswith("openai"):
        return None  # the Action's openai-base-url input is for the OpenAI APIs' models
    return run_wide


def _as_label(name: str) -> str:
    """A model's name as a label: what a label can't hold becomes '-', and a long name is cut (with a
    short hash of the whole, so two long names stay apart)."""
    import hashlib

    label = re.sub(r"[^A-Za-z0-9._:/@+-]", "-", name).lstrip("._:/@+-") or "model"
    if len(label) > 64:
        label = label[:55] + "~" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return label


def _labelled(specs: list[ModelSpec], at: Any) -> tuple[ModelSpec, ...]:
    """Each model with its label: as given, else the model's name (the provider's for bm25 and
    command), else provider:model when two share a name; two models under one label is an error."""
    from collections import Counter
    from dataclasses import replace

    if len(specs) > MAX_MODELS:
        raise ConfigError(f"{len(specs)} models: a run takes at most {MAX_MODELS} (split them over several runs)")
    names = Counter(s.model or s.provider for s in specs if not s.label)
    out = []
    for i, s in enumerate(specs):
        if s.label and not re.fullmatch(LABEL_PATTERN, s.label):
            place = at("evals", "models", i, "label") if at else ""
            raise ConfigError(
                f"{place}the label {s.label!r} can't name a model: letters, digits and . _ : / @ + - only, up to 64, "
                "starting with a letter or digit"
            )
        name = s.model or s.provider
        out.append(replace(s, label=s.label or _as_label(name if names[name] == 1 else f"{s.provider}:{name}")))
    seen: dict[str, int] = {}
    for i, s in enumerate(out):
        if s.label in seen:
            place = at("evals", "models", i) if at else ""
            raise ConfigError(
                f"{place}two models are labelled '{s.label}' (models {seen[s.label] + 1} and {i + 1}): give each a "
                "label of its own",
                hint="evals.models: [{provider: openai, model: gpt-4.1-mini, label: mini-t0}, …]",
            )
        seen[s.label] = i
    return tuple(out)


def _rewriter(text: str, first: ModelSpec, at: Any) -> ModelSpec:
    """evals.rewriter (provider:model) as a model of the run: on the first model's endpoint when it
    takes the same key (openai and openai-responses), else on its own provider's endpoint and
    defaults — a key never goes to another provider's endpoint."""
    from dataclasses import replace

    given = parse_models(text, f"{at('evals', 'rewriter')}evals.rewriter")
    if len(given) > 1:
        raise ConfigError(f"{at('evals', 'rewriter')}evals.rewriter is one model, provider:model (got {len(given)})")
    provider, model = given[0]["provider"], given[0]["model"]
    if not PROVIDERS[provider].api:
        raise ConfigError(
            f"{at('evals', 'rewriter')}evals.rewriter is {provider}, which doesn't write: it needs anthropic, openai "
            "or openai-responses",
            hint="e.g. rewriter: anthropic:claude-sonnet-4-5",
        )
    named = replace(first, provider=provider, model=model, label=f"{provider}:{model}", client=None, model_label="")
    if set(PROVIDERS[provider].keys) == set(PROVIDERS[first.provider].keys):
        return named
    return replace(named, base_url=None, params={})


def _build(values: Mapping[str, Any], **structure: Any) -> Settings:
    repeat = values["repeat"]
    shuffle = values["shuffle"]
    price = values["price"]
    return Settings(
        provider=values["provider"],
        model=values["model"] or "",
        command=tuple(values["command"]) if values["command"] else None,
        system=values["system"],
        params=dict(values["params"]),
        base_url=values["base_url"],
        temperature=values["temperature"],
        seed=values["seed"],
        max_tokens=values["max_tokens"],
        timeout_s=values["timeout_s"],
        max_retries=values["max_retries"],
        price=price.model_dump() if hasattr(price, "model_dump") else price,
        judge=values["judge"] or None,
        stress=StressSettings(
            sizes=tuple(sorted(set(values["sizes"]))),
            seeds=values["seeds"],
            distractors=tuple(values["distractors"] or ()),
            bundled_pool=values["bundled_pool"],
            retriever=values["retriever"],
            retriever_command=tuple(values["retriever_command"]) if values["retriever_command"] else None,
            top_k=values["top_k"],
            min_accuracy_at=dict(values["min_accuracy_at"]),
            fail_on_cliff_move=values["fail_on_cliff_move"],
        ),
        repeat=repeat,
        concurrency=values["concurrency"],
        shuffle=shuffle if shuffle is not None else repeat > 1,
        max_requests=values["max_requests"],
        max_cost=values["max_cost"],
        forbid_extra_args=values["forbid_extra_args"],
        strict=values["strict"],
        select=values.get("select") or None,
        max_fail=values.get("max_fail"),
        cache_dir=Path(values["cache_dir"]),
        gate=structure["models"][0].gate if structure.get("models") else Gate.from_values(values),
        shard=parse_shard(values["shard"]) if values.get("shard") else None,
        max_rpm=values.get("max_rpm"),
        max_tpm=values.get("max_tpm"),
        prompt_cache=values["prompt_cache"],
        batch=values["batch"],
        batch_timeout_s=values["batch_timeout_s"],
        server_name=values.get("server_name"),
        rewriter=values.get("rewriter_spec"),
        candidates=values["candidates"],
        alongside=tuple(values.get("alongside") or ()),
        **structure,
    )


def _golden_paths(loaded: Loaded, over: Overrides, cwd: Path, at: Any) -> tuple[Path, ...]:
    given = over.get("golden")
    if given:
        paths = [_path(g, cwd) for g in given]
        for name, path in zip(given, paths, strict=True):
            if not path.is_file():
                raise ConfigError(f"{BY_KEY['golden'].label(over.source)} {name}: golden file not found")
        return tuple(paths)
    configured = loaded.config_value("golden")
    if not configured:
        return ()
    base = loaded.path.parent if loaded.path else cwd
    entries = [configured] if isinstance(configured, str) else configured
    paths = [_path(g, base) for g in entries]
    for index, (name, path) in enumerate(zip(entries, paths, strict=True)):
        if not path.is_file():
            loc = ("evals", "golden") if isinstance(configured, str) else ("evals", "golden", index)
            raise ConfigError(f"{at(*loc)}golden file {name} not found (paths are relative to the config file)")
    return tuple(paths)


def _origins(doc: Located | None) -> dict[str, tuple[str, int | None]]:
    if doc is None:
        return {}
    out: dict[str, tuple[str, int | None]] = {
        key: (doc.file, doc.line(("evals", key))) for key in EvalsModel.model_fields
    }
    for key in ("server", "tools_file"):
        out[key] = (doc.file, doc.line((key,), key=True))
    return out


def _setup_skipping(server: ServerSpec, no_setup: bool, cache_dir: Path, environ: Mapping[str, str]) -> ServerSpec:
    """The head's setup: skipped with --no-setup; on a local run (never the Action's: its checkout is
    fresh, and its cache the pull request's to write) skipped while its inputs are unchanged since it
    last succeeded, noted in the answer cache's folder. A base worktree's always runs (baseline.py)."""
    from dataclasses import replace

    from .contain import ACTION

    if no_setup:
        return replace(server, setup_skip="always")
    if environ.get(ACTION):
        return server
    import hashlib
    import json

    named = json.dumps([server.setup, str(server.cwd), server.setup_inputs]).encode()
    stamp = cache_dir / "setup" / f"{hashlib.sha256(named).hexdigest()[:24]}.json"
    return replace(server, setup_skip="unchanged", setup_stamp=stamp)


def _path(value: str, base: Path) -> Path:
    path = Path(value)
    return path if path.is_absolute() else base / path


def surface_source(loaded: Loaded, over: Overrides, cwd: Path) -> tuple[ServerSpec | None, Path | None]:
    """Where the tool surface comes from: a flag (--tools, --url, -- CMD) beats the config."""
    base = loaded.path.parent if loaded.path else cwd
    tools_file = over.get("tools_file")
    given = [x for x in (tools_file, over.url, over.server_command) if x]
    if len(given) > 1:
        raise ConfigError("give only one of --tools, --url, or -- SERVER COMMAND")
    if tools_file:
        return None, _path(tools_file, cwd)
    server = loaded.server
    secrets = loaded.secrets
    if over.url:
        headers = server.headers if server and server.url else {}
        return ServerSpec(url=over.url, headers=dict(headers), secrets=(*secrets, *headers.values())), None
    if over.server_command:
        env = server.env if server else {}
        return ServerSpec(command=tuple(over.server_command), env=dict(env), cwd=cwd, secrets=secrets), None
    if loaded.tools_file:
        return None, _path(loaded.tools_file, base)
    if server:
        doc = loaded.doc
        return (
            ServerSpec(
                command=tuple(server.command) if server.command else None,
                url=server.url,
                transport=server.transport,
                env=dict(server.env),
                headers=dict(server.headers),
                cwd=_path(server.cwd, base) if server.cwd else base,
                startup_timeout_s=server.startup_timeout_s,
                setup=(server.setup,) if isinstance(server.setup, str) else tuple(server.setup or ()),
                setup_inputs=tuple(server.setup_inputs or ()),
                setup_timeout_s=server.setup_timeout_s,
                start=tuple(server.start) if isinstance(server.start, list) else server.start,
                ready_timeout_s=server.ready_timeout_s,
                place=where(doc.file, doc.line(("server",), key=True)) if doc else "",
                shown_command=_as_written(loaded.raw_server, "command"),
                shown_url=_as_written(loaded.raw_server, "url"),
                secrets=(*secrets, *server.headers.values()),
            ),
            None,
        )
    return None, None


def _as_written(raw: Any, key: str) -> Any:
    """`server.command` or `server.url` as the config wrote it, before `${VAR}` expansion."""
    value = raw.get(key) if isinstance(raw, dict) else None
    if isinstance(value, list):
        return tuple(str(part) for part in value)
    return value if isinstance(value, str) else None


def load_cases(loaded: Loaded, settings: Settings) -> list[Case]:
    """Inline cases first, then each golden file in order; names must be unique."""
    cases: list[Case] = []
    if loaded.doc is not None:
        cases += cases_from_config(loaded.doc, loaded.config_value("cases"), settings.forbid_extra_args)
    for path in settings.golden:
        cases += load_golden(path, settings.forbid_extra_args)
    if not cases:
        raise ConfigError(
            "no cases: add evals.cases to the config, or golden files (evals.golden or --golden)",
            hint="`toolselect init` writes a starter golden set",
        )
    if settings.select or settings.failed_last is not None:
        from .selecting import select

        chosen = select(cases, settings.select, settings.failed_last)
        if not chosen:
            raise ConfigError(
                f"-k {settings.select!r} matches none of the {len(cases)} cases"
                if settings.select
                else "--last-failed: none of the cases the last run failed is in the golden set now",
                hint="-k matches words in a case's name, tags or prompt (and, or, not)",
            )
        cases = chosen
    return cases  # names, tools and arguments are checked against the surface by lint
