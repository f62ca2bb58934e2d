"""Ask the provider for every sample of every case, concurrently, and collect the picks.

Requests in flight are bounded by `concurrency`. A sample whose request fails gets an ERROR pick;
a fatal provider error (bad key, unknown model, a program that can't start) stops the run: no new
request goes out, the sample that hit it is ERROR, and samples never asked are NOT-EVALUATED. A
trajectory case's sample is a conversation (converse.py): its turns are asked one after another, in
one slot of the throttle.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .converse import Conversation
from .errors import InfraError
from .golden import Case, placeholder
from .offer import Offer
from .offer.deferred import Searching
from .pick import Pick, failed, skipped
from .providers import Provider, Request, SampleError, WireTool
from .scoring import missing_tools, score_sample
from .surface import Surface
from .taxonomy import SampleOutcome
from .throttle import Throttle

STOPPED = "the run stopped before this sample was asked"
PLACEHOLDER = "the prompt is still a TODO placeholder: never sent to a paid model (write the prompt)"
NOT_ON_SURFACE = "the case expects a tool the surface does not have: not asked"
DRIVEN_SINGLE = (
    "a driven client answers single-call cases: trajectory cases are asked emulated (--client-mode emulated)"
)
MAX_FAIL = "--max-fail"  # how a sample not asked after --max-fail's cases failed is marked (the gate counts them)


@dataclass(frozen=True)
class Job:
    case: Case
    sample: int
    order: tuple[int, ...] | None = None  # indices into the offered tools; None: the server's order


@dataclass(frozen=True)
class Asked:
    jobs: tuple[Job, ...]
    picks: tuple[Pick, ...]  # aligned with jobs
    stopped: str | None  # the fatal error that stopped the run, if any


class Offered:
    """The request a job sends: its prompt, the system prompt and the tools in the job's order — one
    tuple per order, so every request of an order carries the same one."""

    def __init__(self, offer: Offer) -> None:
        self.tools, self.system, self.deferred, self.search = offer.tools, offer.system, offer.deferred, offer.search
        self._orders: dict[tuple[int, ...] | None, tuple[WireTool, ...]] = {None: self.tools}

    def request(self, job: Job) -> Request:
        if job.case.script is not None and self.deferred is not None:  # a trajectory: every definition up front
            tools = self.tools + self.deferred.tools
            return Request(prompt=job.case.prompt, system=self.system, tools=tools, sample=job.sample)
        if job.order not in self._orders:
            self._orders[job.order] = tuple(self.tools[i] for i in job.order or ())
        tools = self._orders[job.order]
        return Request(prompt=job.case.prompt, system=self.system, tools=tools, sample=job.sample, search=self.search)


Loop = Conversation | Searching  # next_request(), record(pick), outcome(), max_turns


def looped(surface: Surface, request: Request, job: Job, offer: Offer) -> Loop | None:
    """The loop a job's sample is asked in, turn by turn: a trajectory's conversation, or a deferred
    client's searches before the pick; None: one request."""
    if job.case.script is not None:
        return Conversation(surface, request, job.case.script, offer.from_wire)
    if offer.deferred is not None:
        return Searching(request, offer.deferred, offer.from_wire)
    return None


def plan(cases: Sequence[Case], repeat: int, tools: int = 0, shuffle: bool = False, seed: int = 0) -> tuple[Job, ...]:
    """Every sample of every case; with `shuffle`, sample k of every case sees the tools in the same
    seeded order π_k (the same seed and k always give the same order): each case still meets `repeat`
    orders, and every request of one sample index shares its prefix, so the prompt cache serves it."""
    orders: list[tuple[int, ...] | None] = [None] * repeat
    if shuffle and tools > 1:
        for i in range(repeat):
            indices = list(range(tools))
            random.Random(f"{seed}:sample:{i}").shuffle(indices)
            orders[i] = tuple(indices)
    return tuple(Job(case, i, orders[i]) for case in cases for i in range(repeat))


def warm_first(jobs: Sequence[Job]) -> list[int]:
    """The order to ask `jobs` in (indices): the first job of each tool order, then the rest as planned —
    the first request of a prefix writes the prompt cache the others read."""
    first: dict[tuple[int, ...] | None, int] = {}
    for i, job in enumerate(jobs):
        first.setdefault(job.order, i)
    chosen = set(first.values())
    return list(first.values()) + [i for i in range(len(jobs)) if i not in chosen]


async def ask_all(
    provider: Provider,
    surface: Surface,
    jobs: Sequence[Job],
    *,
    offer: Offer,
    throttle: Throttle,
    on_done: Callable[[Job, Pick], None] | None = None,
    preset: Mapping[tuple[str, int], Pick] | None = None,
    warm: bool = False,
    max_fail: int | None = None,
) -> Asked:
    """Ask every job; `throttle.size` workers pull jobs in order, and the throttle bounds how many requests
    are in flight (its pacer, how fast they start). `preset`: picks already known by (case, sample),
    not asked (a merge: the samples a shard recorded as provider errors). `warm`: warm, then fan out —
    the first uncached request of each tool order goes alone and the others of that order wait for its
    answer (a prompt-cache entry exists only once the first response is back: requests sent together
    all miss it). `offer`: the tools as sent (a client's, or the raw list) and the system prompt.
    `max_fail`: once this many cases failed, the rest are not asked (NOT-EVALUATED, marked MAX_FAIL)."""
    offered = Offered(offer)
    picks: list[Pick | None] = [None] * len(jobs)
    pending = ((i, jobs[i]) for i in (warm_first(jobs) if warm else range(len(jobs))))
    fatal: list[InfraError] = []
    warmed: dict[tuple[int, ...] | None, asyncio.Event] = {}
    failing: set[str] = set()  # the cases a sample of which failed (for max_fail)

    def failed_case(job: Job, pick: Pick) -> bool:
        outcome = score_sample(
            job.case, pick, surface, job.sample,
            args_measured=provider.produces_args, reads_replies=provider.produces_replies,
        ).outcome  # fmt: skip
        return outcome not in (SampleOutcome.PASS, SampleOutcome.NOT_EVALUATED)

    async def one(request: Request) -> Pick:
        try:
            return await provider.pick(request)
        except SampleError as exc:
            return failed(str(exc))
        except InfraError as exc:
            fatal.append(exc)
            return failed(exc.message)
        finally:
            if throttle.pacer.stalled is not None and not fatal:  # its headers asked for a wait no request makes
                fatal.append(throttle.pacer.stalled)

    def gates(job: Job) -> tuple[asyncio.Event | None, asyncio.Event | None]:
        """(the gate this job opens: the first uncached request of its order, the gate it waits at)."""
        if not warm:
            return None, None
        key = provider.answer_key(offered.request(job))
        if key is not None and provider.has_answer(key):
            return None, None  # answered from the answer cache: it warms nothing and waits for nothing
        if job.order in warmed:
            return None, warmed[job.order]
        warmed[job.order] = asyncio.Event()
        return warmed[job.order], None

    async def ask(job: Job) -> Pick:
        if offer.driven is not None and endpoint is not None:  # the real client, run for this sample
            if job.case.script is not None:
                return skipped(DRIVEN_SINGLE)
            from .drive.sample import drive

            try:
                return await drive(offer.driven, endpoint, job.case.prompt, job.sample)
            except InfraError as exc:
                fatal.append(exc)
                return failed(exc.message)
        request = offered.request(job)
        loop = looped(surface, request, job, offer)
        if loop is not None:  # a trajectory's conversation, or a deferred client's search before the pick
            while (turn := loop.next_request()) is not None:
                loop.record(skipped(STOPPED) if fatal else await one(turn))
            return loop.outcome()
        return offer.named_back(await one(request))

    async def worker() -> None:
        for index, job in pending:
            known = preset.get((job.case.name, job.sample)) if preset else None
            if known is not None:
                pick = known
            elif offer.refused:
                pick = Pick(unsent=offer.refused)  # the client fails every request: none is sent
            elif missing_tools(job.case, surface):
                pick = skipped(NOT_ON_SURFACE)  # scored TOOL-MISSING: no answer could pass it
            elif provider.cacheable and placeholder(job.case):
                pick = skipped(PLACEHOLDER)
            elif fatal:
                pick = skipped(STOPPED)
            elif max_fail is not None and len(failing) >= max_fail:
                pick = skipped(f"{MAX_FAIL} {max_fail}: {len(failing)} cases failed first, so it was not asked")
            else:
                gate, wait = gates(job)
                if wait is not None:
                    await wait.wait()
                try:
                    async with throttle:
                        pick = skipped(STOPPED) if fatal else await ask(job)
                finally:
                    if gate is not None:
                        gate.set()  # answered or failed: the others go
            picks[index] = pick
            if max_fail is not None and not pick.skipped and failed_case(job, pick):
                failing.add(job.case.name)
            if on_done:
                on_done(job, pick)

    endpoint = None
    if offer.driven is not None:  # the local model API the real client talks to, for this run
        from .drive.endpoint import Endpoint

        endpoint = Endpoint(provider, ends=offer.driven.ends, search_tool=offer.driven.search_tool)
        await endpoint.start()
    try:
        await asyncio.gather(*(worker() for _ in range(min(throttle.size, len(jobs)) or 1)))
    finally:
        if endpoint is not None:
            await endpoint.stop()
    stopped = None
    if fatal:
        stopped = fatal[0].message + (f" ({fatal[0].hint})" if fatal[0].hint else "")
    answered = tuple(p for p in picks if p is not None)
    assert len(answered) == len(jobs)  # every worker fills its slot, asked or skipped
    return Asked(tuple(jobs), answered, stopped)
