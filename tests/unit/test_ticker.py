"""Progress in a log that is no terminal: a line per tenth of the samples, and one at least every 30 s."""

from __future__ import annotations

import threading

from tests.builders import Clock
from toolselect.render.ticker import Ticker


def test_a_line_for_each_tenth_and_one_when_nothing_moves_for_thirty_seconds():
    lines: list[str] = []
    clock = Clock()
    ticker = Ticker(lines.append, 400, clock=clock, beat_s=None)
    for i in range(120):
        clock.now += 0.3
        ticker.advance(error=i in (5, 77))
    assert lines == [
        "asked 40/400 · 1 error · 12 s",
        "asked 80/400 · 2 errors · 24 s",
        "asked 120/400 · 2 errors · 36 s",
    ]
    clock.now += 29
    ticker.due()
    assert len(lines) == 3  # quiet for 29 s: nothing yet
    clock.now += 1
    ticker.due()
    assert lines[-1] == "asked 120/400 · 2 errors · 66 s"  # a rate-limit wait: the log still moves
    ticker.grow(100)  # another model's samples
    for _ in range(380):
        ticker.advance()
    assert lines[-1] == "asked 500/500 · 2 errors · 66 s" and len(lines) == 4 + 7


def test_the_heartbeat_runs_on_its_own_and_stops():
    said = threading.Event()
    ticker = Ticker(lambda line: said.set(), 10, every_s=0.05, beat_s=0.01)
    assert said.wait(10)
    ticker.stop()
    assert ticker.thread is not None and not ticker.thread.is_alive()
