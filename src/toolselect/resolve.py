"""Resolution: the config file merged with the command line (or the Action's inputs) and the
environment into one run's Settings. Precedence for each option: a flag (or an input) > the
environment (provider, model) > the YAML > the option's default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .config import EvalsModel, Loaded, Overrides, resolve_value
from .errors import ConfigError, where
from .golden import Case, read_cases
from .lineup import client_specs, model_specs, rewriter_call
from .locate import Located
from .options import BY_KEY, OPTIONS
from .providers.registry import PROVIDERS
from .providers.search import PROVIDER_OF
from .selecting import read_last_failed, select
from .settings import ModelSpec, Settings, build
from .severity import forbid
from .surface.spec import ServerSpec


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
    specs = client_specs(model_specs(loaded, over, environ, values, at), values, over, base, cwd, at)
    first = specs[0]
    values |= {"provider": first.provider, "model": first.model, "base_url": first.call.base_url}
    values["params"] = first.call.params
    if values["judge"] and not all(PROVIDERS[m.provider].api for m in specs):
        provider = next(m.provider for m in specs if not PROVIDERS[m.provider].api)
        raise ConfigError(
            f"{at('evals', 'judge')}evals.judge is a model on the run's provider: it needs anthropic, openai or "
            f"openai-responses, not {provider}",
            hint="add final checks to the trajectory cases instead (final: {regex: ...})",
        )
    values["rewriter_call"] = rewriter_call(values["rewriter"], first, at) if values["rewriter"] else None
    _check_tool_search(values, specs, at)
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
        recorded = read_last_failed(Path(values["cache_dir"]))
        notes.append(
            f"--last-failed: the {len(recorded)} case(s) the last run failed"
            if recorded
            else "--last-failed: no failures recorded by an earlier run: every case"
        )
        failed_last = tuple(recorded) if recorded else None
    return build(
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


def _check_tool_search(values: Mapping[str, Any], specs: Sequence[ModelSpec], at: Any) -> None:
    """--tool-search is the API's own: each model on the API that has that search, asked with the raw
    tool list (a client presents and defers the tools its own way)."""
    mode = values.get("tool_search") or "off"
    if mode == "off":
        if values.get("eager"):
            raise ConfigError(f"{at('evals', 'eager')}eager keeps tools loaded with tool_search: set tool_search too")
        return
    wanted = PROVIDER_OF[mode]
    for spec in specs:
        if spec.client is not None:
            raise ConfigError(
                f"{at('evals', 'tool_search')}tool_search {mode} sends the raw tool list deferred behind the API's "
                f"search; the client {spec.client.name} presents the tools its own way: choose one"
            )
        if spec.provider != wanted and PROVIDERS[spec.provider].api:  # offline: lint searches, eval refuses
            raise ConfigError(
                f"{at('evals', 'tool_search')}tool_search {mode} is {wanted}'s tool search, and the model "
                f"{spec.label} is on {spec.provider}",
                hint=f"set the provider {wanted}, or tool_search to the mode of the model's API",
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
    """The cases a run asks: its golden set (golden.read_cases), then those -k or --last-failed name."""
    cases = read_cases(loaded.doc, loaded.config_value("cases"), settings.golden, settings.forbid_extra_args)
    cases = forbid(cases, loaded.config_value("must_not_call"))
    if settings.select is None and settings.failed_last is None:
        return cases
    chosen = select(cases, settings.select, settings.failed_last)
    if not chosen:
        raise ConfigError(
            f"-k {settings.select!r} matches none of the {len(cases)} cases"
            if settings.select
            else "--last-failed: none of the cases the last run failed is in the golden set now",
            hint="-k matches words in a case's name, tags or prompt (and, or, not)",
        )
    return chosen
