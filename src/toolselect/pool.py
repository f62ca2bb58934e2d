"""How many requests may be in flight: `concurrency`, halved while the API keeps rate-limiting.

The SDKs retry a 429 themselves (honouring `retry-after`); this pool makes the *run* back off too:
each 429/529 answer halves the number of requests allowed out at once (never below 1), and every
`limit` successes in a row win one slot back, up to `concurrency` (additive increase,
multiplicative decrease).
"""

from __future__ import annotations

import asyncio


class Pool:
    def __init__(self, size: int) -> None:
        self.size = size
        self.limit = size
        self.in_flight = 0
        self.peak = 0
        self.shrinks = 0
        self._streak = 0
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def __aenter__(self) -> Pool:
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

    def rate_limited(self) -> None:
        """The API said 'slow down' (429 or 529): fewer requests go out at once."""
        self._streak = 0
        if self.limit > 1:
            self.limit = max(1, self.limit // 2)
            self.shrinks += 1

    def succeeded(self) -> None:
        """Called inside `async with pool`: the waiters re-check the limit when the slot is left."""
        self._streak += 1
        if self.limit < self.size and self._streak >= self.limit:
            self._streak = 0
            self.limit += 1
