"""The Action's run, decided before anything runs: from the event, the inputs, the config and the
step's environment, which sides (the base, a fork's cache-only run), which options (the inputs over
the config, a shard, the batch API), which endpoint each key may go to, and the settings of the run.
Pure: reads the config already loaded, starts nothing, asks nothing — the Action (action.py) carries
it out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .config import Loaded, Overrides, resolve_value
from .errors import ConfigError, where
from .matrix import matrix
from .options import BY_KEY
from .policy import Event, Plan, decide
from .providers.registry import API_PROVIDERS, PROVIDERS
from .resolve import resolve_settings
from .settings import Settings
from .urls import public_url


@dataclass(frozen=True)
class Decided:
    """What the Action will do: the plan (sides, comment, review, stress, suggest), the options given
    by the inputs, the run's settings and the JUnit file it writes."""

    plan: Plan
    over: Overrides
    settings: Settings
    junit: Path | None


def decide_run(
    event: Event, inputs: Mapping[str, Any], loaded: Loaded, env: Mapping[str, str], workdir: Path
) -> Decided:
    """The run an event asks for, decided: the plan, the inputs as options (with the shard, a fork's
    cache-only mode and the batch API on top), each key's endpoint, and the resolved settings."""
    over = overrides(inputs)
    provider, source, place = resolve_value(BY_KEY["provider"], loaded, over, env)
    over = _endpoint_from_the_workflow(loaded, over, inputs, provider)
    plan = decide(event, inputs, _plan_provider(loaded, inputs, provider, env), env)
    shard, _ = matrix(inputs)
    if shard:
        over = replace(over, values={**over.values, "shard": shard})
    if plan.cache_only:
        over = replace(over, cache_mode="only")
    if plan.batch is not None:
        over = replace(over, values={**over.values, "batch": plan.batch})
    over = _clients_folder(loaded, over, env)
    settings = resolve_settings(loaded, over, env, workdir)
    keys_fit(settings, inputs, f"{place}{source}" if source else "the default")
    junit = workdir / inputs["junit"] if inputs.get("junit") else None
    return Decided(plan, over, settings, junit)


def overrides(inputs: Mapping[str, Any]) -> Overrides:
    """The inputs that set options of the run (not the Action's own: token, comment, …)."""
    run = {k: v for k, v in inputs.items() if BY_KEY[k].group not in ("action", "base", "report")}
    return Overrides(run, source="input")


def _clients_folder(loaded: Loaded, over: Overrides, env: Mapping[str, str]) -> Overrides:
    """In the Action the clients toolselect drives live in its own folder (kept with actions/cache, out
    of the checkout): TOOLSELECT_CLIENTS_DIR as action.yml sets it, else ~/.cache/toolselect/clients. A
    config — maybe the pull request's — naming another is refused: its programs would run as the client."""
    from .drive.install import DEFAULT_DIR

    if loaded.config_value("clients_dir"):
        place = where(loaded.doc.file, loaded.doc.line(("evals", "clients_dir"))) if loaded.doc else ""
        raise ConfigError(
            f"{place}evals.clients_dir: in the Action the clients it drives are installed into its own folder, and "
            "the config may come from a pull request (a folder of its own would run its programs as the client)",
            hint="remove evals.clients_dir; the Action installs each client and keeps it with actions/cache",
        )
    folder = env.get("TOOLSELECT_CLIENTS_DIR") or str(DEFAULT_DIR.expanduser())
    return replace(over, values={**over.values, "clients_dir": folder})


ENDPOINT_INPUTS = {
    "anthropic": "anthropic_base_url",
    "openai": "openai_base_url",
    "openai-responses": "openai_base_url",
    "gemini": "gemini_base_url",
}


def _endpoint_from_the_workflow(
    loaded: Loaded, over: Overrides, inputs: Mapping[str, Any], provider: str | None
) -> Overrides:
    """Each provider's key goes only to its own default endpoint or to the one the workflow names
    for that provider (openai-base-url, anthropic-base-url), which wins over evals.base_url. A
    base_url in the config — maybe the pull request's — is used only when the workflow names the
    same URL for that provider; an Anthropic model never goes to the OpenAI endpoint, nor the other
    way round."""
    given = {name: inputs.get(key) for name, key in ENDPOINT_INPUTS.items()}

    def refuse(at: tuple[Any, ...], shown: str, url: str, who: str) -> None:
        place = where(loaded.doc.file, loaded.doc.line(at)) if loaded.doc else ""
        named = ENDPOINT_INPUTS[who].replace("_", "-")
        raise ConfigError(
            f"{place}{shown} ({public_url(url)}) would receive the API key (provider {who}), and the config may come "
            "from a pull request: the Action sends each key only to its provider's own endpoint or to the one the "
            "workflow names for it",
            hint=f"set the action's {named} input to this URL (or remove {shown})",
        )

    for i, entry in enumerate(loaded.config_value("models") or ()):  # each model of evals.models, the same rule
        if entry.base_url and entry.provider in API_PROVIDERS and entry.base_url != given.get(entry.provider):
            refuse(("evals", "models", i, "base_url"), f"evals.models[{i}].base_url", entry.base_url, entry.provider)
    configured = loaded.config_value("base_url")
    several = [m.get("provider") for m in inputs.get("models") or ()] or [
        e.provider for e in loaded.config_value("models") or ()
    ]
    # who takes the run-wide endpoint: the one model of the run, or with several the OpenAI ones
    # (config._base_url): the input for that provider wins over evals.base_url, which is refused without it
    who = "openai" if several else provider
    if who not in API_PROVIDERS or (several and not any(p and p.startswith("openai") for p in several)):
        return over
    named = given.get(who)
    if named:
        return replace(over, values={**over.values, "base_url": named})
    if configured and loaded.doc is not None:
        refuse(("evals", "base_url"), "evals.base_url", configured, who)
    return over


KEY_INPUTS = {  # the key input → its provider
    "anthropic_api_key": "anthropic",
    "openai_api_key": "openai",
    "gemini_api_key": "gemini",
}


def keys_fit(settings: Settings, inputs: Mapping[str, Any], said_by: str) -> None:
    """An API key given to a run whose every provider answers offline (bm25) would be silently
    unused — the run labelled as if the model had answered: an error that says what to set."""
    given = [key for key in KEY_INPUTS if inputs.get(key)]
    if not given or any(PROVIDERS[m.provider].takes_model for m in settings.models):
        return  # an API provider uses it; a `command` picker is told the model (no key reaches it, by design)
    names = " and ".join(f"input {BY_KEY[k].input_name}" for k in given)
    provider = settings.models[0].provider if settings.models else settings.call.provider
    suggested = KEY_INPUTS[given[0]] if len(given) == 1 else "anthropic (or openai)"
    raise ConfigError(
        f"the {names} {'is' if len(given) == 1 else 'are'} set, but the run's provider is {provider} "
        f"({said_by}), which answers offline: the key would go unused",
        hint=f"set the inputs provider: {suggested} and model: <the model your users' clients use> (or leave the key "
        f"out to run {provider} offline)",
    )


def _plan_provider(
    loaded: Loaded, inputs: Mapping[str, Any], provider: str | None, env: Mapping[str, str]
) -> str | None:
    """The provider the plan judges keys by: with several models, the first whose key is missing (the
    run is then cache-only, and the warning names it), else the first."""
    models = inputs.get("models") or [{"provider": e.provider} for e in loaded.config_value("models") or ()]
    providers = [m.get("provider") or provider for m in models] or [provider]
    missing = next(
        (
            p
            for p in providers
            if p in PROVIDERS and PROVIDERS[p].api and not any(env.get(k) for k in PROVIDERS[p].keys)
        ),
        None,
    )
    return missing or providers[0]
