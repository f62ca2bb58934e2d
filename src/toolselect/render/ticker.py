"""Progress for a log that is no terminal (a CI job): a progress bar draws nothing there, so a run of
400 samples looks hung for minutes. Instead, a plain line — `asked 120/400 · 2 errors · 38 s` — each
time another tenth of the samples is done, and at least every 30 seconds while nothing is (a wait on
a rate limit says so too)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

EVERY_S = 30.0  # the longest a log goes without a line while a run is asking
STEP = 0.1  # …and a line each time this share of the samples more is done


class Ticker:
    def __init__(
        self,
        say: Callable[[str], None],
        total: int,
        *,
        every_s: float = EVERY_S,
        step: float = STEP,
        clock: Callable[[], float] = time.monotonic,
        beat_s: float | None = 1.0,
    ) -> None:
        """`beat_s`: how often a background thread checks that a line is due (None: no thread; the
        caller calls `due()`)."""
        self.say, self.total, self.every_s, self.step, self.clock = say, total, every_s, step, clock
        self.done = self.errors = 0
        self.started = self.last = clock()
        self.said_share = 0.0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        if beat_s is not None:
            self.thread = threading.Thread(target=self._beat, args=(beat_s,), name="toolselect-ticker", daemon=True)
            self.thread.start()

    def grow(self, samples: int) -> None:
        """Another model of the run: its samples join the count."""
        with self.lock:
            self.total += samples

    def advance(self, error: bool = False) -> None:
        with self.lock:
            self.done += 1
            self.errors += error
            share = self.done / self.total if self.total else 1.0
            if share >= self.said_share + self.step - 1e-9 or self.done == self.total:
                self._line()

    def due(self) -> None:
        """A line when the log has been quiet for `every_s`."""
        with self.lock:
            if self.clock() - self.last >= self.every_s:
                self._line()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout=5)

    def _line(self) -> None:
        now = self.clock()
        errors = f" · {self.errors} error{'s' * (self.errors != 1)}" if self.errors else ""
        self.say(f"asked {self.done}/{self.total}{errors} · {now - self.started:.0f} s")
        self.last = now
        if self.total:
            self.said_share = self.done / self.total

    def _beat(self, beat_s: float) -> None:
        while not self.stopped.wait(beat_s):
            self.due()
