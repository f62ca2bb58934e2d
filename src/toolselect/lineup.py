"""The run's line-up: its models (repeated flags, the models input, evals.models, or one provider and
model), each checked and labelled, times its clients (evals.clients), each with its own gate; and the
rewriter as a model of the run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .config import LABEL_PATTERN, MAX_MODELS, ClientEntry, Loaded, Overrides, resolve_value
from .errors import ConfigError
from .gate import GATE_KEYS, Gate
from .options import BY_KEY, parse_models
from .providers.call import ModelCall
from .providers.registry import PROVIDERS
from .settings import ModelSpec


def model_specs(
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
                call=ModelCall(
                    provider,
                    model,
                    _base_url(entry, provider, values["base_url"], over.source),
                    dict(entry["params"]) if entry.get("params") else dict(values["params"]),
                ),
                gate=Gate.from_values(dict(values) | gate_values),
            )
        )
    return _labelled(specs, at if configured else None)


def client_specs(
    specs: tuple[ModelSpec, ...], values: Mapping[str, Any], over: Overrides, base: Path, cwd: Path, at: Any
) -> tuple[ModelSpec, ...]:
    """Every model asked through every client of evals.clients (or --client, the clients input) — a
    client toolselect drives only through the models that speak its API, when the run has one (not
    with client-mode emulated): labelled by the client alone when there is one model, else
    `<model>@<client>`. A client's own `gate:` is over the model's; a flag or an input is over both.
    A profile file is read from the config's folder (a flag's or an input's from the working
    directory)."""
    given = values.get("clients")
    if not given:
        return specs
    from .offer.clients import load_profile  # a run with no client loads no profiles

    from_flags = "clients" in over.values
    gates: list[dict[str, Any]] = []  # each client's own gate
    profiles = []
    versions: list[str | None] = []  # a driven client's pinned version (claude-code@2.1.332)
    for i, entry in enumerate(given):
        gates.append(entry.gate.model_dump() if isinstance(entry, ClientEntry) and entry.gate else {})
        if isinstance(entry, tuple):  # a profile already read, and its pin: the head's, for its base
            profiles.append(entry[0])
            versions.append(entry[1])
            continue
        try:
            name, version = client_pin(entry if isinstance(entry, str) else entry.name)
            profiles.append(load_profile(name, cwd if from_flags else base))
            versions.append(version)
        except ConfigError as exc:
            where_ = "" if from_flags else f"{at('evals', 'clients', i)}evals.clients[{i}]: "
            raise ConfigError(f"{where_}{exc.message}", hint=exc.hint) from None
    names = [p.name for p in profiles]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ConfigError(f"{'' if from_flags else at('evals', 'clients')}the client {twice!r} is named twice")
    clients = list(zip(gates, profiles, versions, strict=True))
    pairs = [(spec, own, profile, version) for spec in specs for own, profile, version in clients]
    if values.get("client_mode", "auto") != "emulated":  # a client driven on the models that can drive it
        pairs = [p for p in pairs if _drives(p[2].name, p[0].provider, specs)]
    if len(pairs) > MAX_MODELS:
        raise ConfigError(
            f"{len(specs)} models × {len(profiles)} clients: a run takes at most {MAX_MODELS} (split them over "
            "several runs)"
        )
    out = []
    for spec, own, profile, version in pairs:
        gate = spec.gate.overridden(own | {k: over.values[k] for k in GATE_KEYS if k in over.values})
        label = profile.name if len(specs) == 1 else f"{spec.label}@{profile.name}"
        named = replace(spec, label=_as_label(label), gate=gate, client=profile, model_label=spec.label)
        out.append(replace(named, client_version=version))
    return tuple(out)


def _drives(client: str, provider: str, specs: tuple[ModelSpec, ...]) -> bool:
    """Whether a client is asked through a model of this provider: always, unless toolselect drives
    the client and another model of the run speaks its API while this one doesn't (Claude Code on the
    anthropic model, Codex on the OpenAI one, Gemini CLI on the Gemini one, each driven, rather than
    every client on every model, most emulated)."""
    from .drive.install import KINDS

    kind = KINDS.get(client)
    if kind is None or provider in kind.apis:
        return True
    return not any(s.provider in kind.apis for s in specs)


def client_pin(entry: str) -> tuple[str, str | None]:
    """A client's name and the version it is pinned to: `claude-code@2.1.332` (only a client toolselect
    drives has versions; a profile file's name is kept whole)."""
    from .drive.install import KINDS, pinned

    if "@" not in entry or entry.endswith((".yaml", ".yml")):
        return entry, None
    name = entry.split("@", 1)[0]
    if name not in KINDS:
        raise ConfigError(
            f"{entry}: only a client toolselect drives ({', '.join(KINDS)}) is pinned to a version",
            hint=f"name it without @: {name}",
        )
    return pinned(entry)


def provider_for(model: str) -> str:
    """The API provider a model's name suggests, for a hint."""
    name = model.lower()
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith(("gpt", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    if name.startswith(("gemini", "gemma")):
        return "gemini"
    return "anthropic (or openai, openai-responses, gemini)"


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


def rewriter_call(text: str, first: ModelSpec, at: Any) -> ModelCall:
    """evals.rewriter (provider:model) as a model of the run: on the first model's endpoint when it
    takes the same key (openai and openai-responses), else on its own provider's endpoint and
    defaults — a key never goes to another provider's endpoint."""
    given = parse_models(text, f"{at('evals', 'rewriter')}evals.rewriter")
    if len(given) > 1:
        raise ConfigError(f"{at('evals', 'rewriter')}evals.rewriter is one model, provider:model (got {len(given)})")
    provider, model = given[0]["provider"], given[0]["model"]
    if not PROVIDERS[provider].api:
        raise ConfigError(
            f"{at('evals', 'rewriter')}evals.rewriter is {provider}, which doesn't write: it needs anthropic, openai, "
            "openai-responses or gemini",
            hint="e.g. rewriter: anthropic:claude-sonnet-4-5",
        )
    if set(PROVIDERS[provider].keys) == set(PROVIDERS[first.provider].keys):
        return ModelCall(provider, model, first.call.base_url, first.call.params)
    return ModelCall(provider, model)
