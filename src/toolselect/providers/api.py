"""What the model-API providers share: one HTTP client per run, the SDKs' retries configured (not
re-implemented), rate limits that shrink the pool, and errors sorted into fatal and per-sample."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..errors import InfraError
from ..pool import Pool
from . import SampleError

DEFAULT_TIMEOUT_S = 60.0
# Statuses after which no other request would fare better: stop the run at once.
FATAL_STATUSES = {400, 401, 402, 403, 404, 413, 422}
SLOW_DOWN = {429, 529}


class SdkProvider:
    """What the model-API providers share: settings, the run's pool, one lazily built SDK client."""

    sdk = ""  # the SDK's module, imported early by preload()
    produces_args = True
    cacheable = True

    def __init__(self, settings: Settings, pool: Pool, endpoint: str) -> None:
        self.settings = settings
        self.pool = pool
        self.model = settings.model
        self.client: Any = None
        self.endpoint = endpoint.rstrip("/")  # fixed here: the cache key must not depend on connecting

    def preload(self) -> None:
        """Import the SDK (about a second) while the MCP server starts."""
        import importlib

        importlib.import_module(self.sdk)

    def connect(self) -> None:  # pragma: no cover - each provider builds its client
        raise NotImplementedError

    def ensure_connected(self) -> None:
        if self.client is None:
            self.connect()

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.close()


def http_client(settings: Settings, pool: Pool, client_class: Any) -> Any:
    """The run's one HTTP client: a pool sized to `concurrency`, and a hook that tells the run's
    pool to send fewer requests at once whenever the API answers 429/529 (each attempt, retries
    included)."""
    import httpx2

    async def on_response(response: Any) -> None:
        if response.status_code in SLOW_DOWN:
            pool.rate_limited()

    limits = httpx2.Limits(max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency)
    return client_class(limits=limits, timeout=timeout(settings), event_hooks={"response": [on_response]})


def timeout(settings: Settings) -> Any:
    import httpx2

    seconds = settings.timeout_s or DEFAULT_TIMEOUT_S
    return httpx2.Timeout(seconds, connect=min(10.0, seconds))


def api_message(exc: Any) -> str:
    """The API's own words from an SDK error (Anthropic's body is the whole JSON, OpenAI's the
    inner error object)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            kind = inner.get("type") or inner.get("code")
            return f"{kind}: {inner['message']}" if isinstance(kind, str) else inner["message"]
    return str(getattr(exc, "message", "") or exc)


SECRET_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")


def redact(text: str) -> str:
    """Belt and braces: no API key value ever appears in a message we keep or print."""
    import os

    for name in SECRET_VARS:
        value = os.environ.get(name, "").strip()
        if len(value) >= 8:
            text = text.replace(value, f"<{name}>")
    return text


def check_key(value: str | None, variable: str) -> None:
    """A key with whitespace or a line break (a common copy-paste slip) can't go in a header, and the
    transport's error would echo it: say so before the first request."""
    if value and (value != value.strip() or any(ch.isspace() or ord(ch) < 32 for ch in value)):
        raise InfraError(f"{variable} contains whitespace or a line break: remove it (the key is not shown here)")


def sort_error(exc: Exception, provider: str, model: str, endpoint: str, retries: int) -> Exception:
    """An SDK exception as a fatal InfraError (stop the run) or a SampleError (this sample only)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status in FATAL_STATUSES:
        hint = {
            401: "check the API key (the SDK reads it from the usual environment variable)",
            403: "the key is not allowed to use this model or endpoint",
            404: "is the model name right, and the endpoint the one you meant?",
            400: "the API rejects the request itself: check evals.params, temperature and the tool schemas",
            422: "the API rejects the request itself: check evals.params, temperature and the tool schemas",
        }.get(status)
        return InfraError(
            redact(f"{provider} answered {status} for model '{model}' at {endpoint}: {api_message(exc)}"), hint=hint
        )
    tries = f" (after {retries} retries)" if retries else ""
    if isinstance(status, int):
        return SampleError(redact(f"{status} {api_message(exc)}{tries}"))
    name = type(exc).__name__
    if "Timeout" in name:
        return SampleError(f"no answer within the timeout{tries}")
    if "Connection" in name:
        # the transport's own text can quote request headers (and so the key): name the cause only
        cause = type(exc.__cause__).__name__ if exc.__cause__ else name
        return SampleError(f"connection error ({cause}) at {endpoint}{tries}")
    return SampleError(redact(f"{name}: {exc}"))
