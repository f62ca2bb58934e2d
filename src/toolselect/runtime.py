"""The event loop a command runs on: Ctrl-C and SIGTERM cancel the run cleanly.

Answers already received stay in the answer cache (each is written as it arrives), so an
interrupted run is resumed by running it again.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine
from contextlib import suppress
from typing import Any, TypeVar

T = TypeVar("T")


KEPT = "interrupted: the answers received so far are kept in the answer cache; run again to continue"


def run_async(
    coro: Coroutine[Any, Any, T], on_interrupt: Callable[[], None] | None = None, message: str = KEPT
) -> T | None:
    """Run `coro` on an event loop of our own; on Ctrl-C or SIGTERM cancel it, call `on_interrupt`
    (e.g. to stop a progress bar), say `message` (what was kept), and return None.

    (asyncio.run would do, but its Runner briefly needs ~40 MB more at the end of a large run.)"""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    main_task = loop.create_task(coro)
    for sig in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError, RuntimeError, ValueError):  # not on every platform
            loop.add_signal_handler(sig, main_task.cancel)
    try:
        return loop.run_until_complete(main_task)
    except (KeyboardInterrupt, asyncio.CancelledError):
        if on_interrupt is not None:
            on_interrupt()
        print(message, file=sys.stderr)
        return None
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        asyncio.set_event_loop(None)
        loop.close()
