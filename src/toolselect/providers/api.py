"""What the model-API providers share: one HTTP client per run, the SDKs' retries configured (not
re-implemented), rate limits that shrink the throttle, a retry-after that never outlasts the request
deadline, and errors sorted into fatal and per-sample."""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import random
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from ..errors import InfraError
from ..perlist import PerList, compact, spliced
from ..urls import public_url, secret_parts
from . import BatchRefused, Provider, Request, SampleError
from .registry import PROVIDERS

if TYPE_CHECKING:
    from ..throttle import Throttle
    from .call import ModelCall

DEFAULT_TIMEOUT_S = 60.0
# Statuses after which no other request would fare better: stop the run at once.
FATAL_STATUSES = {400, 401, 402, 403, 404, 413, 422}
# The endpoint asking to wait (rate limited, overloaded): not a failure, so retried for as long as
# the sample's time budget lasts, not a number of times. A 503 counts when it says how long to wait.
WAIT_STATUSES = {429, 529}
T = TypeVar("T")


class SdkProvider(Provider):
    """Its model call, the run's throttle, the environment its key is read from, one lazily built SDK client
    (`sdk_client`: in toolselect "client" means a client profile, such as claude-code)."""

    sdk = ""  # the SDK's module, imported early by preload()
    endpoint_variable = ""  # where the SDK reads an endpoint from the environment
    default_endpoint = ""
    produces_args = True
    produces_replies = True
    cacheable = True

    def __init__(self, call: ModelCall, throttle: Throttle, environ: Mapping[str, str]) -> None:
        super().__init__(call.model)
        self.call = call
        self.throttle = throttle
        self.environ = environ
        self.sdk_client: Any = None
        endpoint = call.base_url or environ.get(self.endpoint_variable) or self.default_endpoint
        self.endpoint = endpoint.rstrip("/")  # fixed here: the cache key must not depend on connecting
        self.shown_endpoint = public_url(self.endpoint)  # in messages: no user info, query or path token
        self._capped: set[float] = set()
        self._format = "json_schema"  # structured output: the most structured the endpoint accepted
        self._format_known = False  # until a structured answer came back, a refusal is not retried
        self._tool_lists: PerList[bytes] = PerList()  # each tool list's JSON as this provider sends it

    def identity(self) -> dict[str, Any]:
        """What every API provider's answer depends on; each adds its own request fields."""
        s = self.call
        return {
            "provider": self.name,
            "model": self.model,
            "endpoint": self.endpoint,
            "params": dict(s.params),
            "temperature": s.temperature,
            "seed": s.seed,
        }

    def sent(self, body: dict[str, Any], request: Request) -> bytes:
        """A request's body as the SDK would send it, as bytes (its `content`): the tool list's JSON made
        once per tool list (and tool-search mode), the rest per request. On a 240-tool surface the tools
        are most of each body, and most of a request's CPU was encoding them again."""
        variant = (request.search, self.call.prompt_cache)  # what else shapes how the tools are written
        tools = self._tool_lists.get(request.tools, variant, lambda: compact(body["tools"]).encode("utf-8"))
        return spliced(compact, body, "tools", tools)

    def preload(self) -> None:
        importlib.import_module(self.sdk)

    def ensure_connected(self) -> None:
        if self.sdk_client is None:
            self.connect()

    async def aclose(self) -> None:
        if self.sdk_client is not None:
            await self.sdk_client.close()

    def reach(self) -> None:
        """Before the first request: an endpoint that refuses connections, or a host name that does
        not resolve, stops the run at once — no request would fare better, and retrying each one
        would take minutes to say nothing. A slow network is left to the SDK's timeouts."""
        why = unreachable(self.endpoint, self.environ)
        if why is not None:
            raise InfraError(f"{why} at {self.shown_endpoint}", hint=_reach_hint(why, self.call.base_url))

    async def patiently(self, send: Callable[[], Awaitable[T]]) -> T:
        """`send()` (the SDK's call, its own retries inside) again while the endpoint answers that it
        is busy — 429, 529, a 503 with retry-after — within the sample's time budget: every attempt
        the SDK's retries could take (timeout_s × (max_retries + 1)). The throttle has slowed already
        (the pacer saw each 429), so the next attempt goes out at the endpoint's pace."""
        budget = deadline(self.call) * (self.call.max_retries + 1)
        started = time.monotonic()
        while True:
            try:
                return await send()
            except Exception as exc:
                wait = asks_to_wait(exc, deadline(self.call))
                if wait is None or self.throttle.pacer.stalled is not None:
                    raise
                if time.monotonic() - started + wait > budget:
                    raise BusyTooLong(exc, budget) from None
                await asyncio.sleep(wait)

    def key(self, variable: str) -> str | None:
        """A key from the run's environment, refused when it can't go in a header."""
        value = self.environ.get(variable) or None
        check_key(value, variable)
        return value

    def probing(self, mode: str, probe: bool) -> Any:
        """The client for a structured request: until a format has worked, one without the SDK's
        retries (`probe`), so a server that refuses the format (with a 500, as some do) is not asked
        five times; a probe that fails otherwise is asked again with them."""
        if mode == "text" or self._format_known or not probe:
            return self.sdk_client
        return self.sdk_client.with_options(max_retries=0)

    def http_client(self, client_class: Any) -> Any:
        """The run's one HTTP client: a connection pool sized to `concurrency`, and a hook on every answer
        (retries included) that tells the run's throttle to send fewer requests at once on 429/529 and
        keeps a retry-after within the request deadline."""
        import httpx2

        limit = deadline(self.call)

        async def on_request(request: Any) -> None:
            await self.throttle.pacer.wait()  # every attempt, the SDK's retries too: at the endpoint's pace

        async def on_response(response: Any) -> None:
            self.throttle.pacer.answered(response.status_code, response.headers)
            wait = retry_after(response.headers)
            if wait is not None and wait > limit:
                response.headers["retry-after"] = f"{limit:g}"
                response.headers.pop("retry-after-ms", None)
                if wait not in self._capped:
                    self._capped.add(wait)
                    self.problems.append(
                        f"{self.name} asked to wait {wait:g} s before retrying (retry-after); toolselect waited "
                        f"at most {limit:g} s, the request timeout (timeout_s)"
                    )

        concurrency = self.call.connections
        limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        hooks = {"request": [on_request], "response": [on_response]}
        return client_class(limits=limits, timeout=timeout(self.call), event_hooks=hooks)

    def redact(self, text: str) -> str:
        """Belt and braces: no key value ever appears in a message we keep or print, nor the secret
        parts of the endpoint (an API may echo the path it was sent)."""
        for name in sorted({k for info in PROVIDERS.values() for k in info.keys}):
            value = (self.environ.get(name) or "").strip()
            if len(value) >= 8:
                text = text.replace(value, f"<{name}>")
        for part in secret_parts(self.endpoint):
            text = text.replace(part, "…")
        return text

    def sort_error(self, exc: Exception) -> Exception:
        """An SDK exception as a fatal InfraError (stop the run) or a SampleError (this sample only)."""
        if self.throttle.pacer.stalled is not None:  # the endpoint asked for a wait no request may make
            return self.throttle.pacer.stalled
        if isinstance(exc, BusyTooLong):
            status = getattr(exc.error, "status_code", "?")
            return SampleError(
                self.redact(f"{status} {api_message(exc.error)}: still busy when the sample's {exc.budget:g} s of "
                            "waiting ran out (timeout_s × (max_retries + 1))")
            )  # fmt: skip
        status = getattr(exc, "status_code", None)
        retries = self.call.max_retries
        if isinstance(status, int) and status in FATAL_STATUSES:
            hint = {
                401: "check the API key (the SDK reads it from the usual environment variable)",
                403: "the key is not allowed to use this model or endpoint",
                404: "is the model name right, and the endpoint the one you meant?",
                400: "the API rejects the request itself: check evals.params, temperature and the tool schemas",
                422: "the API rejects the request itself: check evals.params, temperature and the tool schemas",
            }.get(status)
            at = self.shown_endpoint
            said = f"{self.name} answered {status} for model '{self.model}' at {at}: {api_message(exc)}"
            return InfraError(self.redact(said), hint=hint)
        tries = f" (after {retries} retries)" if retries else ""
        if isinstance(status, int):
            return SampleError(self.redact(f"{status} {api_message(exc)}{tries}"))
        name = type(exc).__name__
        if "Timeout" in name:
            return SampleError(f"no answer within the timeout{tries}")
        if "Connection" in name:
            why = unreachable(self.endpoint, self.environ)  # the endpoint went away mid-run: stop, don't wait on it
            if why is not None:
                return InfraError(f"{why} at {self.shown_endpoint}", hint=_reach_hint(why, self.call.base_url))
            # the transport's own text can quote request headers (and so the key): name the cause only
            cause = type(exc.__cause__).__name__ if exc.__cause__ else name
            return SampleError(f"connection error ({cause}) at {self.shown_endpoint}{tries}")
        return SampleError(self.redact(f"{name}: {exc}"))


# What an endpoint without a batch API answers its batch routes (compatible servers, gateways).
NO_BATCH_STATUSES = {404, 405, 501}


def batch_error(provider: SdkProvider, exc: Exception, submit: bool) -> Exception:
    """A batch API call's failure: a key that isn't allowed stops the run (InfraError); any other
    failure — no batch API at the endpoint, a batch refused, a transient error after the retries —
    is BatchRefused, and the batch's requests are asked one by one."""
    status = getattr(exc, "status_code", None)
    if submit and status in NO_BATCH_STATUSES:
        return BatchRefused(f"{provider.shown_endpoint} has no batch API (it answered {status})")
    sorted_out = provider.sort_error(exc)
    if isinstance(sorted_out, InfraError) and status in (401, 402, 403):
        return sorted_out
    said = sorted_out.message if isinstance(sorted_out, InfraError) else str(sorted_out)
    return BatchRefused(f"the batch API failed: {said}")


class BusyTooLong(Exception):
    """The endpoint kept asking to wait for longer than a sample's time budget."""

    def __init__(self, error: Exception, budget: float) -> None:
        super().__init__(str(error))
        self.error, self.budget = error, budget


def asks_to_wait(exc: Exception, limit: float) -> float | None:
    """Seconds to wait before asking again when an answer said the endpoint is busy (its
    retry-after, within `limit`; else a second or two, jittered), or None for any other error."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    said = retry_after(response.headers) if response is not None else None
    if status in WAIT_STATUSES or (status == 503 and said is not None):
        return min(limit, max(0.0, said)) if said is not None else 1.0 + random.random()
    return None


REACH_TIMEOUT_S = 5.0


def unreachable(endpoint: str, environ: Mapping[str, str]) -> str | None:
    """Why nothing can reach `endpoint` (its host doesn't resolve, or it refuses connections), else
    None — also when a proxy carries the requests (the proxy's to say) or the connection is only slow."""
    parts = urlsplit(endpoint)
    host = parts.hostname
    if not host or parts.scheme not in ("http", "https"):
        return None
    proxies = {k.lower(): v for k, v in environ.items() if k.lower() in ("http_proxy", "https_proxy", "all_proxy")}
    if (proxies.get(f"{parts.scheme}_proxy") or proxies.get("all_proxy")) and not _bypassed(host, environ):
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return f"cannot resolve the host name {host!r}"
    except OSError:
        return None
    refused: str | None = None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(REACH_TIMEOUT_S)
            try:
                sock.connect(address)
                return None  # something listens
            except ConnectionRefusedError:
                refused = "connection refused"
            except OSError as exc:
                if exc.errno in (101, 113):  # ENETUNREACH, EHOSTUNREACH
                    refused = refused or f"no route to the host ({exc.strerror})"
                else:
                    return None  # a timeout, or something else: slow is not refused
    return refused


def _bypassed(host: str, environ: Mapping[str, str]) -> bool:
    """NO_PROXY names the host (or a domain it is in, or `*`): requests go to it directly."""
    entries = (environ.get("no_proxy") or environ.get("NO_PROXY") or "").split(",")
    names = [e.strip().lower().lstrip(".").split(":")[0] for e in entries if e.strip()]
    host = host.lower()
    return any(n == "*" or host == n or host.endswith("." + n) for n in names)


def _reach_hint(why: str, base_url: str | None) -> str:
    if why.startswith("connection refused"):
        return "is the server running, and on this port?" + ("" if base_url else " (the endpoint is the default one)")
    if why.startswith("cannot resolve"):
        return "check the endpoint's host name (base_url, OPENAI_BASE_URL or ANTHROPIC_BASE_URL)"
    return "check the endpoint and the network"


def deadline(call: ModelCall) -> float:
    return call.timeout_s or DEFAULT_TIMEOUT_S


def timeout(call: ModelCall) -> Any:
    import httpx2

    seconds = deadline(call)
    return httpx2.Timeout(seconds, connect=min(10.0, seconds))


def refused_format(exc: Exception) -> bool:
    """The endpoint refused the request's structured-output field: ask again in a plainer form. Not
    every server says so with a 400 — llama.cpp's Python server answers 500 with a validation error
    naming `response_format` — so any 4xx or 500 that names the field counts; other errors stay
    errors."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or not (400 <= status < 500 or status == 500):
        return False
    text = str(getattr(exc, "message", "") or exc).lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "text.format"))


def retry_after(headers: Any) -> float | None:
    """Seconds an answer asks to wait (`retry-after-ms`, `retry-after` in seconds or as a date)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        text = headers.get(name)
        if text is None:
            continue
        try:
            return float(text) / scale
        except ValueError:
            pass
        if name == "retry-after" and (when := email.utils.parsedate_tz(text)) is not None:
            return float(email.utils.mktime_tz(when) - time.time())
    return None


def api_message(exc: Any) -> str:
    """The API's own words from an SDK error (Anthropic's body is the whole JSON, OpenAI's the
    inner error object)."""
    said = body_message(getattr(exc, "body", None))
    return said if said is not None else str(getattr(exc, "message", "") or exc)


def body_message(body: Any) -> str | None:
    """The message of an API's error body (`{"error": {"type"/"code", "message"}}`), if it has one."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            kind = inner.get("type") or inner.get("code")
            return f"{kind}: {inner['message']}" if isinstance(kind, str) else inner["message"]
    return None


def check_key(value: str | None, variable: str) -> None:
    """A key with whitespace or a line break (a common copy-paste slip) can't go in a header, and the
    transport's error would echo it: say so before the first request."""
    if value and (value != value.strip() or any(ch.isspace() or ord(ch) < 32 for ch in value)):
        raise InfraError(f"{variable} contains whitespace or a line break: remove it (the key is not shown here)")
