"""Batch mode (`--batch`): before a run is asked, its uncached single-turn requests — the head's and
the base's together — go through the model API's batch API at half the price, one batch per model
and endpoint (more when there are over BATCH_MAX requests), once the first request of each tool
order has been asked synchronously to warm the prompt cache for the rest. The stage waits with a
bounded, backing-off poll; each answer is kept in the answer cache exactly as a synchronous answer
would be and given to the ask stage as already known (`Prepared.preset`), a request the batch failed
is that sample's ERROR with the batch's reason, and whatever the batch did not answer — it was
cancelled at `batch_timeout_s`, the endpoint has no batch API, the batch was refused — is asked
synchronously after it, as without --batch. Trajectories (multi-turn) are always asked
synchronously: each turn depends on the answer to the one before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..ask import Job, Offered
from ..golden import placeholder
from ..pick import Pick, failed
from ..providers import BatchRefused, BatchState, Provider, Request, SampleError
from ..report.schema import BatchOut
from .prepare import Hooks, Prepared

BATCH_MAX = 2000  # requests per batch: far below both APIs' limits, and a file of tens of MB at most
POLL_FIRST_S = 0.25  # the first look at a new batch; each wait after doubles, up to POLL_MAX_S
POLL_MAX_S = 30.0
CANCEL_GRACE_S = 60.0  # after a cancel, how long the batch has to end (its answered requests are kept)


@dataclass
class _Item:
    rid: str
    request: Request
    owner: int  # the index of the side (Prepared) whose sample this is, whose spend it counts in
    job: Job


@dataclass
class _Tally:
    batches: list[str] = field(default_factory=list)
    requests: int = 0
    answered: int = 0
    failed: int = 0
    late: int = 0
    waited_s: float = 0.0
    note: str | None = None

    def out(self) -> BatchOut:
        return BatchOut(
            batches=self.batches,
            requests=self.requests,
            answered=self.answered,
            failed=self.failed,
            late=self.late,
            waited_s=round(self.waited_s, 3),
            note=self.note,
        )


async def batch_sides(preps: Sequence[Prepared], hooks: Hooks = Hooks()) -> list[Prepared]:
    """Every side that asks for --batch, its batchable requests answered through batches: the sides
    back with those answers as `preset` and what the batches did as `batch`."""
    groups: dict[str, list[int]] = {}
    for i, prep in enumerate(preps):
        if prep.settings.batch and prep.provider.batchable:
            identity = json.dumps(prep.provider.identity(), sort_keys=True, default=str)
            groups.setdefault(identity, []).append(i)
    if not groups:
        return list(preps)
    known: list[dict[tuple[str, int], Pick]] = [dict(p.preset or {}) for p in preps]
    tallies: dict[int, _Tally] = {}
    tasks = [asyncio.ensure_future(_one_model(preps, m, known, tallies, hooks)) for m in groups.values()]
    try:
        await asyncio.gather(*tasks)
    except BaseException:  # one model's batch stopped the run: the others' are cancelled too
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return [replace(p, preset=known[i], batch=tallies[i].out()) if i in tallies else p for i, p in enumerate(preps)]


def _items(preps: Sequence[Prepared], members: Sequence[int], known: list[dict[tuple[str, int], Pick]]) -> list[_Item]:
    """The requests to batch: every sample not known already, not a trajectory's, not a placeholder's,
    not in the answer cache; a request asked twice (the base's unchanged cases) goes once — its
    second asker reads it from the answer cache."""
    items: list[_Item] = []
    seen: set[str] = set()
    for owner in members:
        prep = preps[owner]
        if prep.offer.refused or prep.offer.deferred:
            continue  # the client can't present the surface (nothing is sent), or searches turn by turn
        offered = Offered(prep.offer)
        for job in prep.jobs:
            if job.case.script is not None or placeholder(job.case) or (job.case.name, job.sample) in known[owner]:
                continue
            request = offered.request(job)
            key = prep.provider.answer_key(request)
            if key is not None and (key in seen or prep.provider.has_answer(key)):
                continue
            if key is not None:
                seen.add(key)
            items.append(_Item(f"r{len(items)}", request, owner, job))
    return items


async def _warm_up(
    preps: Sequence[Prepared], items: list[_Item], known: list[dict[tuple[str, int], Pick]]
) -> list[_Item]:
    """Warm, then batch: the first request of each tool order is asked synchronously before the batch
    (a batch works on many requests at once, and requests sent together all miss the prompt cache), so
    the batch's requests read the prefix it wrote. Only when the prefix is long enough to be cached; a
    warm-up that fails is left in the batch. The items still to batch."""
    firsts: dict[tuple[int, tuple[int, ...] | None], _Item] = {}
    for item in items:
        side = preps[item.owner]
        if side.settings.prompt_cache and side.prefix_cached:
            firsts.setdefault((item.owner, item.job.order), item)
    if not firsts or len(firsts) == len(items):
        return items

    async def ask(item: _Item) -> bool:
        side = preps[item.owner]
        async with side.throttle:
            try:
                pick = await side.provider.pick(item.request)
            except SampleError:
                return False
        if pick.error is not None or pick.skipped is not None:
            return False
        mapped = replace(pick, tool=side.offer.from_wire(pick.tool)) if pick.tool is not None else pick
        known[item.owner][(item.job.case.name, item.job.sample)] = mapped
        return True

    warmed = await asyncio.gather(*(ask(item) for item in firsts.values()))
    done = {id(item) for item, ok in zip(firsts.values(), warmed, strict=True) if ok}
    return [item for item in items if id(item) not in done]


async def _one_model(
    preps: Sequence[Prepared],
    members: Sequence[int],
    known: list[dict[tuple[str, int], Pick]],
    tallies: dict[int, _Tally],
    hooks: Hooks,
) -> None:
    items = await _warm_up(preps, _items(preps, members, known), known)
    if not items:
        return
    first = preps[members[0]]
    provider, timeout_s = first.provider, first.settings.batch_timeout_s
    label = first.settings.labels[0]
    for owner in members:
        tallies[owner] = _Tally(requests=sum(i.owner == owner for i in items))
    ids: list[str] = []
    started = time.monotonic()
    results: dict[str, Pick | str] = {}
    late = False
    try:
        for at in range(0, len(items), BATCH_MAX):
            chunk = items[at : at + BATCH_MAX]
            ids.append(await provider.submit_batch([(i.rid, i.request) for i in chunk]))
        hooks.on_note(
            f"batch: {len(items)} requests for {label} sent as {', '.join(ids)}; waiting at most "
            f"{timeout_s:g} s (batch_timeout_s)"
        )
        hooks.on_batch(label, 0, len(items), False)
        states = await _wait(provider, ids, started + timeout_s, label, hooks)
        if not all(s.ended for s in states.values()):
            late = True
            await asyncio.gather(*(provider.cancel_batch(b) for b, s in states.items() if not s.ended))
            states = await _wait(provider, ids, time.monotonic() + CANCEL_GRACE_S, label, hooks)
        for batch_id, state in states.items():
            if state.ended:
                results |= await provider.batch_results(batch_id)
    except BatchRefused as exc:
        why = str(exc)
        await _cancel_quietly(provider, ids)
        results = {}
        for owner in members:
            tallies[owner].note = f"{why}: these requests were asked one by one, at the full price"
    except BaseException:  # interrupted (Ctrl-C), or a key the batch API refused: no batch left running
        await _cancel_quietly(provider, ids)
        raise
    finally:
        hooks.on_batch(label, 0, 0, True)
    waited = time.monotonic() - started
    for item in items:
        tally = tallies[item.owner]
        tally.waited_s = waited
        answer = results.get(item.rid)
        side = preps[item.owner]
        if isinstance(answer, Pick):
            side.provider.keep_batched(item.request, answer)
            mapped = replace(answer, tool=side.offer.from_wire(answer.tool)) if answer.tool is not None else answer
            known[item.owner][(item.job.case.name, item.job.sample)] = mapped
            tally.answered += 1
        elif isinstance(answer, str):
            known[item.owner][(item.job.case.name, item.job.sample)] = failed(f"batch: {answer}")
            tally.failed += 1
        else:
            tally.late += 1  # asked synchronously by the ask stage
    answered = sum(tallies[o].answered for o in members)
    if ids:
        failures = sum(tallies[o].failed for o in members)
        hooks.on_note(f"batch: {answered} answered, {failures} failed, in {waited:.0f} s")
    for owner in members:
        tallies[owner].batches = ids
        if tallies[owner].late and tallies[owner].note is None:
            tallies[owner].note = (
                f"the batch had not ended after batch_timeout_s ({timeout_s:g} s): it was cancelled, and its "
                f"{tallies[owner].late} unanswered requests were asked one by one, at the full price"
                if late
                else f"the batch ended without running {tallies[owner].late} of its requests (they expired): they "
                "were asked one by one, at the full price"
            )
        if (note := tallies[owner].note) is not None:
            preps[owner].provider.problems.append(note)


async def _wait(
    provider: Provider, ids: Sequence[str], until: float, label: str, hooks: Hooks
) -> dict[str, BatchState]:
    """Poll the batches until every one has ended or `until` (a monotonic time) has passed: each one's
    last state. The waits back off from POLL_FIRST_S to POLL_MAX_S."""
    delay = POLL_FIRST_S
    states: dict[str, BatchState] = {}
    while True:
        for batch_id in ids:
            if batch_id not in states or not states[batch_id].ended:
                states[batch_id] = await provider.batch_state(batch_id)
        hooks.on_batch(label, sum(s.done for s in states.values()), sum(s.total for s in states.values()), False)
        left = until - time.monotonic()
        if all(s.ended for s in states.values()) or left <= 0:
            return states
        await asyncio.sleep(min(delay, left))
        delay = min(delay * 2, POLL_MAX_S)


async def _cancel_quietly(provider: Provider, ids: Sequence[str]) -> None:
    """Cancel the batches, best effort (the run is stopping or has moved on without them)."""
    for batch_id in ids:
        with contextlib.suppress(Exception):  # it expires on its own within 24 h
            await asyncio.wait_for(asyncio.shield(provider.cancel_batch(batch_id)), timeout=10)
