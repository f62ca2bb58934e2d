"""One endpoint's share of the run: how many requests may be in flight (`concurrency`), and how fast
they may start — at the provider's rate limit, not below it and not into it.

The `Pacer` spaces every attempt (the SDKs' retries too) at the rate the endpoint allows:

- **announced**: the rate-limit headers of every answer — `x-ratelimit-limit-requests` /
  `-remaining-requests` / `-reset-requests` (and `-tokens`) from OpenAI-compatible APIs,
  `anthropic-ratelimit-requests-limit` / `-remaining` / `-reset` (and `-tokens`) from Anthropic.
  The limits are per minute; the pace is just under them, and when an answer says nothing remains,
  the next request waits for the reset;
- **by hand**: `max_rpm` / `max_tpm`, for gateways that announce nothing;
- **found**: without either, a 429 (or 529) sets the pace just under the rate the endpoint was
  answering at, and every second without one raises it by a step (additive increase,
  multiplicative decrease), so the run sits at the limit instead of staying halved.

Token limits become a request pace through the tokens an answer took on average so far.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from collections import deque
from collections.abc import Callable, Mapping

from .errors import InfraError

UNDER = 0.97  # of an announced limit: what is left for the clock's and the network's jitter
DECREASE = 0.9  # a 429 without headers: the pace becomes this share of the rate that was answered
STEP = 0.05  # then rises by this share of it per second (past the limit, the 429s cost little: the
# endpoint still answers at its limit; below it, every second is lost throughput)


class Stalled(InfraError):
    """The endpoint's headers ask for a wait longer than a request may take: the run stops."""


class Pacer:
    def __init__(
        self,
        max_rpm: float | None = None,
        max_tpm: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_wait_s: float | None = None,
    ) -> None:
        self.max_rpm, self.max_tpm = max_rpm, max_tpm
        self.clock = clock
        self.max_wait_s = max_wait_s  # the request timeout: no header makes a request wait longer
        self.stalled: Stalled | None = None  # once set, every request is refused at once
        self.limit_rpm: float | None = None  # announced by the endpoint
        self.limit_tpm: float | None = None
        self.found: float | None = None  # requests/s after a 429 without headers; None: not throttled
        self.step = 0.0
        self.slowdowns = 0  # how often a 429 slowed the pace
        self.tokens: float | None = None  # tokens an answer took, on average
        self._answers = 0
        self._next = 0.0  # the earliest start of the next request
        self._hold = 0.0  # nothing remains: no request before this
        self._epoch = float("-inf")  # the last slowdown (one per second: the 429s of one burst are one signal)
        self._grown = 0.0
        self._ok: deque[float] = deque()  # when answers came back in the last second, for the rate answered
        self._first: float | None = None  # the first answer
        self._sent: deque[float] = deque()  # when requests started in the last second

    def rate(self) -> float | None:
        """Requests per second allowed now; None: as fast as the throttle lets them out."""
        now = self.clock()
        if self.found is not None and now - self._epoch >= 1.0:  # additive increase, per second
            self.found += self.step * (now - max(self._grown, self._epoch + 1.0))
            self._grown = now
        caps = [c for c in (self._given(), self._announced()) if c]
        if self.found is not None and self.limit_rpm is None:
            caps.append(self.found)
        return min(caps) if caps else None

    def _given(self) -> float | None:
        """The pace --max-rpm and --max-tpm set by hand (requests per second)."""
        caps = [self.max_rpm / 60] if self.max_rpm else []
        if self.max_tpm and self.tokens:
            caps.append(self.max_tpm / 60 / self.tokens)
        return min(caps) if caps else None

    def _announced(self) -> float | None:
        """The pace the endpoint's headers announce (requests per second)."""
        caps = [self.limit_rpm / 60 * UNDER] if self.limit_rpm else []
        if self.limit_tpm and self.tokens:
            caps.append(self.limit_tpm * UNDER / 60 / self.tokens)
        return min(caps) if caps else None

    async def wait(self) -> None:
        """Before a request (every attempt) starts: its turn, at the pace. A wait the endpoint's headers
        ask for that is longer than a request may take is not waited: `stalled` says so, and the run
        stops (ask.py) once the requests in flight are answered."""
        if self.stalled is not None:
            return
        rate = self.rate()
        now = self.clock()
        start = max(now, self._hold, self._next if rate else now)
        if self.max_wait_s is not None and start - now > self.max_wait_s and self._stalls(now):
            return
        if rate:
            self._next = start + 1 / rate
        self._sent.append(start)
        while self._sent and start - self._sent[0] > 1.0:
            self._sent.popleft()
        if start > now:
            await asyncio.sleep(start - now)

    def _stalls(self, now: float) -> bool:
        """Whether the headers alone ask for more than `max_wait_s`: nothing remains until a far reset,
        or an announced limit is so low that one request waits longer than a request may take."""
        assert self.max_wait_s is not None
        announced = self._announced()
        interval = 1 / announced if announced else 0.0
        given = self._given()
        held = self._hold - now
        wait = max(held, interval)
        if wait <= max(self.max_wait_s, 1.05 / given if given else 0.0):  # or about the pace you set yourself
            return False
        why = "answered that no request remains until it resets"
        if announced and held < interval:
            why = f"announces a limit of {60 * announced / UNDER:.3g} requests a minute"
        self.stalled = Stalled(
            f"the endpoint {why}: the next request would wait {_span(wait)}, longer than a request may take "
            f"(timeout_s={self.max_wait_s:g} s); the run stops instead of waiting",
            hint="the answers received so far are kept in the answer cache: run again later, or raise timeout_s",
        )
        return True

    def answered(self, status: int, headers: Mapping[str, str]) -> bool:
        """An answer (every attempt's): the limits it announces; True when it said "slow down"."""
        now = self.clock()
        announced = read_limits(headers)
        if announced.requests_limit:
            self.limit_rpm = announced.requests_limit
        if announced.tokens_limit:
            self.limit_tpm = announced.tokens_limit
        if announced.requests_remaining is not None and announced.requests_remaining < 1 and announced.reset_s:
            self._hold = max(self._hold, now + announced.reset_s)
        slow = status in (429, 529)
        if not slow:
            self._first = now if self._first is None else self._first
            self._ok.append(now)
            while self._ok and now - self._ok[0] > 1.0:
                self._ok.popleft()
            return False
        if now - self._epoch >= 1.0:  # one slowdown per second: a burst's 429s are one signal
            span = min(1.0, now - self._first) if self._first is not None else 0.0
            answered = len(self._ok) / max(0.05, span) if self._ok else None
            current = self.found if self.found is not None else answered
            sent = len(self._sent) / max(0.05, min(1.0, now - self._sent[0])) if self._sent else None
            current = current if current is not None else sent  # nothing answered yet: what was sent
            if current is not None:
                self.found = max(0.02, DECREASE * min(current, answered or current))  # 0.02/s: 1.2 a minute
                self.step = STEP * self.found
            self._epoch, self._grown = now, now
            self.slowdowns += 1
        return True

    def spent(self, tokens: int) -> None:
        """The tokens an answer took (input and output), for a token limit's pace."""
        self._answers += 1
        self.tokens = tokens if self.tokens is None else self.tokens + (tokens - self.tokens) / self._answers


def _span(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


class Limits:
    """What one answer's headers announce (None: not said)."""

    def __init__(self) -> None:
        self.requests_limit: float | None = None
        self.requests_remaining: float | None = None
        self.tokens_limit: float | None = None
        self.reset_s: float | None = None


def read_limits(headers: Mapping[str, str]) -> Limits:
    """OpenAI-compatible (`x-ratelimit-*`) and Anthropic (`anthropic-ratelimit-*`) rate-limit headers."""
    out = Limits()
    get = {k.lower(): v for k, v in headers.items()}.get
    out.requests_limit = _number(get("x-ratelimit-limit-requests") or get("anthropic-ratelimit-requests-limit"))
    out.requests_remaining = _number(
        get("x-ratelimit-remaining-requests") or get("anthropic-ratelimit-requests-remaining")
    )
    out.tokens_limit = _number(get("x-ratelimit-limit-tokens") or get("anthropic-ratelimit-tokens-limit"))
    if (reset := get("x-ratelimit-reset-requests")) is not None:
        out.reset_s = duration(reset)
    elif (reset := get("anthropic-ratelimit-requests-reset")) is not None:
        out.reset_s = _until(reset)
    return out


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and value >= 0 else None


_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def duration(text: str) -> float | None:
    """OpenAI's reset: "1s", "6m0s", "20ms", "1h2m3.5s" → seconds."""
    parts = _PART.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def _until(stamp: str) -> float | None:
    """Anthropic's reset: an RFC 3339 time → seconds from now."""
    from datetime import UTC, datetime

    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(stamp)
        except (TypeError, ValueError, IndexError):
            return None  # a header we can't read is not announced
        if when is None:
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class Throttle:
    """`size` requests in flight at most, and the endpoint's pace (`pacer`)."""

    def __init__(self, size: int, pacer: Pacer | None = None) -> None:
        self.size = size
        self.limit = size
        self.in_flight = 0
        self.peak = 0
        self.pacer = pacer or Pacer()
        self._changed: asyncio.Condition | None = None

    @property
    def shrinks(self) -> int:
        """How often a 429 (or 529) slowed the run."""
        return self.pacer.slowdowns

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def __aenter__(self) -> Throttle:
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return self

    async def __aexit__(self, *exc: object) -> None:
        changed = self._condition()
        async with changed:
            self.in_flight -= 1
            changed.notify_all()

    def succeeded(self, tokens: int | None = None) -> None:
        """An answer came back: the tokens it took pace a token limit."""
        if tokens:
            self.pacer.spent(tokens)
