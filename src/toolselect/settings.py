"""The resolved settings of one run (after flags > environment > YAML > defaults): run-wide values,
and the run's models, each a `ModelCall` and the gate its report is judged by. Built from the option
table (options.py): an option's value is `settings.option(key)`, the typed fields below are the ones
the pipeline reads by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cache import Mode as CacheMode
from .errors import where
from .gate import Gate
from .options import BY_KEY, OPTIONS
from .providers.call import ModelCall
from .shards import Shard, parse_shard
from .surface.spec import DistractorServer, ServerSpec, default_server_name

if TYPE_CHECKING:
    from .offer.clients import Profile


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
    """One model of a run: its call (who answers, where, how) and the gate its report is judged by."""

    label: str
    call: ModelCall
    gate: Gate
    client: Profile | None = None  # the client that presents the surface to it (evals.clients); None: the raw list
    model_label: str = ""  # with a client: the model's own label (`label` is the model's and the client's)
    client_version: str | None = None  # a driven client pinned to a version (claude-code@2.1.332)

    @property
    def provider(self) -> str:
        return self.call.provider

    @property
    def model(self) -> str:
        return self.call.model


@dataclass(frozen=True)
class Settings:
    """Everything one run needs, after flags > environment > YAML > defaults: the run-wide values
    and the run's models. `for_model` gives one model's settings (`call`, `gate` and `client` are
    its own; in the settings of a run of several, the first model's)."""

    config_file: str | None
    base_dir: Path
    server: ServerSpec | None
    tools_file: Path | None
    golden: tuple[Path, ...]
    models: tuple[ModelSpec, ...]  # every model of the run, in order (one model's settings: that one)
    command: tuple[str, ...] | None
    system: str | None
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
    notes: tuple[str, ...] = ()
    select: str | None = None  # -k: the cases a run asks (selecting.py)
    failed_last: tuple[str, ...] | None = None  # --last-failed: the names the last run failed (None: every case)
    max_fail: int | None = None  # stop asking once this many cases failed
    strict: bool = False  # a case expecting a tool the surface lacks is a config error (else: TOOL-MISSING)
    origins: Mapping[str, tuple[str, int | None]] = field(default_factory=dict, repr=False)  # key → (file, line)
    given: Mapping[str, str] = field(default_factory=dict, repr=False)  # key → the flag, input or variable that set it
    several: bool = False  # one model's settings in a run of several: its report carries its label
    shard: Shard | None = None  # --shard I/N: this run evaluates only its slice of the units
    max_rpm: float | None = None  # per endpoint, by hand (gateways that announce no limit)
    max_tpm: float | None = None
    prompt_cache: bool = True  # requests shaped for the API's prompt cache
    batch: bool = False  # uncached single-turn requests through the batch API
    batch_timeout_s: float = 3600.0
    server_name: str | None = None  # the server's name in a client's tool names (evals.server_name)
    rewriter: ModelCall | None = None  # who writes fix's rewrites (evals.rewriter); None: the run's first model
    candidates: int = 3  # rewrites proposed per tool
    # other servers beside yours (evals.alongside): bundled pool names, tools.json files, MCP servers
    alongside: tuple[str | Path | DistractorServer, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict, repr=False)  # every option's resolved value, by key

    def option(self, key: str) -> Any:
        """An option's resolved value (options.py declares it; the typed fields above are the same values)."""
        return self.options[key] if key in self.options else BY_KEY[key].default

    @property
    def call(self) -> ModelCall:
        """This model's call (in the settings of a run of several: the first model's)."""
        return self.models[0].call

    @property
    def gate(self) -> Gate:
        """This model's gate (in the settings of a run of several: the first model's)."""
        return self.models[0].gate

    @property
    def judge_call(self) -> ModelCall | None:
        """The judge (evals.judge): a model on this model's provider and endpoint."""
        return replace(self.call, model=self.judge) if self.judge else None

    @property
    def client(self) -> Profile | None:
        """The client this model is asked through (one model's settings), or None: the raw tool list."""
        return self.models[0].client

    @property
    def server_label(self) -> str:
        """The server's name in a client's tool names: evals.server_name (--server-name), else the
        likeliest name a user gives it (surface/spec.py: default_server_name)."""
        if self.server_name:
            return self.server_name
        command, url = (self.server.command, self.server.url) if self.server else (None, None)
        return default_server_name(command, url, self.base_dir.resolve().name)  # else the config's folder

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(m.label for m in self.models)

    def for_model(self, spec: ModelSpec) -> Settings:
        """These settings for one model of the run."""
        return replace(self, models=(spec,), several=len(self.models) > 1)

    def each_model(self) -> tuple[Settings, ...]:
        return tuple(self.for_model(m) for m in self.models)

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
    return build(merged, base_dir=base, config_file=None, server=None, tools_file=None, golden=(), cache_mode="use")


def _as_is(value: Any, values: Mapping[str, Any]) -> Any:
    return value


# An option whose Settings field is not its value as it is: how the field is made from it (and from
# the other options' values). Every other field named like an option is its value.
SHAPED: dict[str, Any] = {
    "command": lambda v, _: tuple(v) if v else None,
    "price": lambda v, _: v.model_dump() if hasattr(v, "model_dump") else v,
    "judge": lambda v, _: v or None,
    "select": lambda v, _: v or None,
    "shuffle": lambda v, values: v if v is not None else values["repeat"] > 1,
    "cache_dir": lambda v, _: Path(v),
    "shard": lambda v, _: parse_shard(v) if v else None,
    "alongside": lambda v, _: tuple(v or ()),
}
# what a model call takes from the run-wide options (besides its provider, model, endpoint and params)
CALL_OPTIONS = ("temperature", "seed", "max_tokens", "timeout_s", "max_retries", "prompt_cache")


def build(values: Mapping[str, Any], *, models: tuple[ModelSpec, ...] = (), **structure: Any) -> Settings:
    """Settings from option values (`values`, by key) and what resolution made of the rest (`structure`:
    the surface, the golden files, the models…): every field named like an option is filled from it."""
    named = {f.name for f in fields(Settings)} & set(BY_KEY)
    run_wide = {
        key: SHAPED.get(key, _as_is)(values.get(key, BY_KEY[key].default), values)
        for key in named - set(structure) - {"models", "rewriter"}
    }
    if not models:
        call = ModelCall(values["provider"], values["model"] or "", values["base_url"], dict(values["params"]))
        models = (ModelSpec(values["model"] or values["provider"], call, Gate.from_values(values)),)
    origins = structure.get("origins") or {}
    complete = dict(
        {key: values[key] for key in CALL_OPTIONS},
        connections=values["concurrency"],
        command=run_wide["command"],
        cwd=structure["base_dir"],
        params_at=where(*origins.get("params", (None, None))),
    )
    rewriter = values.get("rewriter_call")
    return Settings(
        **run_wide,
        **structure,
        models=tuple(replace(m, call=replace(m.call, **complete)) for m in models),
        rewriter=replace(rewriter, **complete) if rewriter else None,
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
        options={key: value for key, value in values.items() if key in BY_KEY},
    )
