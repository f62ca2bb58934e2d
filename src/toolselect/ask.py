"""Ask the provider for every sample of every case, concurrently, and collect the picks.

Requests in flight are bounded by `concurrency`. A sample whose request fails gets an ERROR pick;
a fatal provider error (bad key, unknown model, a program that can't start) stops the run: no new
request goes out, the sample that hit it is ERROR, and samples never asked are NOT-EVALUATED.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .errors import InfraError
from .golden import Case
from .pick import Pick, failed, skipped
from .providers import Provider, Request, SampleError, WireTool
from .surface import Surface

STOPPED = "the run stopped before this sample was asked"


@dataclass(frozen=True)
class Job:
    case: Case
    sample: int


@dataclass(frozen=True)
class Asked:
    jobs: tuple[Job, ...]
    picks: tuple[Pick, ...]  # aligned with jobs
    stopped: str | None  # the fatal error that stopped the run, if any


def wire_tools(surface: Surface) -> tuple[WireTool, ...]:
    return tuple(WireTool(t.wire_name, t.description, t.input_schema) for t in surface.tools)


def plan(cases: Sequence[Case], repeat: int) -> tuple[Job, ...]:
    return tuple(Job(case, i) for case in cases for i in range(repeat))


async def ask_all(
    provider: Provider,
    surface: Surface,
    jobs: Sequence[Job],
    *,
    system: str | None,
    concurrency: int,
    on_done: Callable[[Job, Pick], None] | None = None,
) -> Asked:
    tools = wire_tools(surface)
    gate = asyncio.Semaphore(concurrency)
    stop = asyncio.Event()
    fatal: list[InfraError] = []

    async def one(job: Job) -> Pick:
        async with gate:
            if stop.is_set():
                return skipped(STOPPED)
            request = Request(prompt=job.case.prompt, system=system, tools=tools, sample=job.sample)
            try:
                pick = await provider.pick(request)
            except SampleError as exc:
                pick = failed(str(exc))
            except InfraError as exc:
                if not fatal:
                    fatal.append(exc)
                stop.set()
                pick = failed(exc.message)
            else:
                if pick.tool is not None:
                    pick = _named(pick, surface.from_wire(pick.tool))
        if on_done:
            on_done(job, pick)
        return pick

    picks = await asyncio.gather(*(one(job) for job in jobs))
    return Asked(tuple(jobs), tuple(picks), fatal[0].message if fatal else None)


def _named(pick: Pick, tool: str) -> Pick:
    from dataclasses import replace

    return replace(pick, tool=tool)
