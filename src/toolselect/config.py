"""The config file: toolproof's schema plus toolselect's extensions, read and validated (`Loaded`),
and what overrides it (`Overrides`: the flags or the Action's inputs, then the environment).

A toolproof config (top-level `server:` + `evals:`) is a valid toolselect config. The `evals:` keys
are the options declared in options.py. resolve.py merges all of it into one run's Settings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, create_model, field_validator

from .errors import ConfigError, ConfigErrors, where
from .explain import explain_errors
from .gate import GateEntry
from .golden import EXPECT_TOOL_HINT, YamlCase, case_part
from .locate import Loc, Located, display_path, load_yaml
from .options import BY_KEY, OPTIONS, GivenBy, Option
from .providers.registry import PROVIDERS
from .severity import Forbidden
from .strict import Authored
from .surface.spec import DistractorServer, ServerModel

CONFIG_NAMES = ("toolselect.yaml", "toolproof.yaml")
TOOLPROOF_IGNORED = ("checks", "tests", "fuzz", "bench", "timeout_ms", "retries")


LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@+~-]{0,63}$"  # how a model is named in the views and outputs
MAX_MODELS = 16  # a report of several models holds at most this many (report.MAX_MODELS)


class OwnPrice(Authored):
    """evals.price: your own prices, USD per million tokens, for the cost estimate."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)  # input read from the API's prompt cache (default: input's)
    cache_write: float | None = Field(None, ge=0)  # input written to it (default: input's)


class ModelEntry(Authored):
    """One of evals.models: a model evaluated in the same run, on the same cases."""

    provider: str
    model: str = ""
    base_url: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = Field(None, pattern=LABEL_PATTERN)
    gate: GateEntry | None = None

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
    gate: GateEntry | None = None


# toolproof's `evals:` keys plus toolselect's extensions: one field per option of options.py (the
# structured ones typed here).
STRUCTURED = {
    "alongside": list[str | DistractorServer],
    "cases": list[YamlCase],
    "must_not_call": Forbidden,
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
