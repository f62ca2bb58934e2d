"""What the commands share: flags → overrides → the config and the resolved settings."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Literal

from ..config import Loaded, Overrides, find_config, load_config
from ..errors import ConfigError
from ..options import read_flags
from ..resolve import resolve_settings
from ..settings import Settings


def flag_overrides(args: argparse.Namespace, **values: object) -> Overrides:
    """The options given as flags (plus `values`), the server flags and the cache mode."""
    given = read_flags(vars(args)) | {k: v for k, v in values.items() if v is not None}
    cache_mode: Literal["refresh", "only"] | None = None
    if getattr(args, "no_cache", False):
        cache_mode = "refresh"
    elif getattr(args, "cache_only", False):
        cache_mode = "only"
    return Overrides(given, "flag", getattr(args, "url", None), getattr(args, "server_command", None), cache_mode)


def has_surface_flag(over: Overrides) -> bool:
    return bool(over.get("tools_file") or over.url or over.server_command)


def load_settings(
    over: Overrides, *, config_optional: bool = False, config_beside: bool = False
) -> tuple[Loaded, Settings]:
    """The config (found as `eval` finds it) and the settings; with `config_optional`, a surface
    flag alone will do and a config is read only when -c names one — or, `config_beside`, when
    one is found too (lint reads its golden set as eval does)."""
    cwd = Path.cwd()
    explicit = over.get("config")
    wanted = explicit or config_beside or not (config_optional and has_surface_flag(over))
    path = find_config(explicit, cwd) if wanted else None
    if path is None and not has_surface_flag(over):
        if config_optional:
            raise ConfigError("no tool surface: pass --tools FILE, --url URL, or -- SERVER COMMAND (or -c CONFIG)")
        raise ConfigError(
            "no config file: toolselect.yaml or toolproof.yaml not found in this folder",
            hint="pass -c FILE, or start one with `toolselect init`",
        )
    loaded = load_config(path, os.environ)
    return loaded, resolve_settings(loaded, over, os.environ, cwd)
