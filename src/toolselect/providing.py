"""The provider a model call names, made: its module imported by name from the registry, and wrapped
in the answer cache when its answers are worth keeping. Above both the providers and the cache (which
wraps a provider), so neither imports the other's maker."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .providers import Provider
from .providers.registry import PROVIDERS

if TYPE_CHECKING:
    from .cache import Mode
    from .providers.call import ModelCall
    from .throttle import Throttle


def make_provider(
    call: ModelCall, throttle: Throttle, environ: Mapping[str, str], cache_dir: Path, cache_mode: Mode
) -> Provider:
    """The provider `call` names, wrapped in the answer cache (in `cache_dir`) when its answers are worth
    keeping. `environ` is where its key and endpoint variables are read (never os.environ behind its back)."""
    module_name, _, factory = PROVIDERS[call.provider].factory.partition(":")
    provider: Provider = getattr(importlib.import_module(module_name), factory)(call, throttle, environ)
    if provider.cacheable:
        from .cache import AnswerCache, CachedProvider

        provider = CachedProvider(provider, AnswerCache(cache_dir), cache_mode)
    return provider
