"""The provider a run's settings name, made: its module imported by name from the registry, and
wrapped in the answer cache when its answers are worth keeping (above the cache, which wraps a
provider: so the provider package itself never imports the cache)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from . import Provider
from .registry import PROVIDERS

if TYPE_CHECKING:
    from ..config import Settings
    from ..throttle import Throttle


def make_provider(settings: Settings, throttle: Throttle, environ: Mapping[str, str]) -> Provider:
    """The provider the settings name, wrapped in the answer cache when its answers are worth keeping.
    `environ` is where its key and endpoint variables are read (never os.environ behind its back)."""
    module_name, _, factory = PROVIDERS[settings.provider].factory.partition(":")
    provider: Provider = getattr(importlib.import_module(module_name), factory)(settings, throttle, environ)
    if provider.cacheable:
        from ..cache import AnswerCache, CachedProvider

        provider = CachedProvider(provider, AnswerCache(settings.cache_dir), settings.cache_mode)
    return provider
