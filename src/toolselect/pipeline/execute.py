"""One prepared side asked and scored: its picks, the judge's readings, the results, the report."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .. import __version__
from ..ask import Asked, ask_all
from ..gate import judged
from ..pick import Reading
from ..prices import cost_usd, price_for
from ..replies import Reply
from ..report.build import build_report
from ..report.schema import JudgeRunOut, Report, RunOut
from ..scoring import Result, score_sample
from ..urls import public_url
from .prepare import Hooks, Prepared

if TYPE_CHECKING:
    from ..providers import Provider


async def execute(prep: Prepared, hooks: Hooks = Hooks(), cache_keys: set[str] | None = None) -> Report:
    settings, surface, provider = prep.settings, prep.surface, prep.provider
    hooks.on_start(settings, surface, prep.cases, len(prep.jobs))
    started_at, clock = datetime.now(UTC), time.perf_counter()
    finished = False
    by_judge: dict[int, Reading] = {}
    readings: dict[int, Reply] = {}
    session = cache_keys if cache_keys is not None else set()
    try:
        asked = await ask_all(
            provider,
            surface,
            prep.jobs,
            offer=prep.offer,
            throttle=prep.throttle,
            on_done=hooks.on_sample,
            preset=prep.preset,
            warm=settings.prompt_cache and provider.cacheable and prep.prefix_cached,
            max_fail=settings.max_fail,
        )
        if prep.judge is not None and not asked.stopped:
            by_judge, readings = await _judged(prep, prep.judge, asked)
        finished = True
    finally:
        await prep.aclose()
        if prep.judge is not None:
            prep.judge.finish(session, interrupted=not finished)
        provider.finish(session, interrupted=not finished)
    spend = provider.spend
    offered = [prep.offer.from_wire(t.name) for t in prep.offer.tools]  # a client's built-ins too
    results: list[Result] = []
    for i, (job, pick) in enumerate(zip(asked.jobs, asked.picks, strict=True)):
        scored = score_sample(
            job.case,
            pick,
            surface,
            job.sample,
            args_measured=provider.produces_args,
            surfaced=by_judge[i].surfaced if i in by_judge else None,
            reads_replies=provider.produces_replies,
            reply=readings.get(i),
        )
        if job.order is not None or i in by_judge:  # shuffled, or read by the judge: said with the result
            order = None if job.order is None else tuple(offered[k] for k in job.order)
            scored = replace(scored, tool_order=order, judge=by_judge.get(i))
        results.append(scored)
    run = RunOut(
        toolselect_version=__version__,
        provider=settings.call.provider,
        model=settings.call.model,
        endpoint=public_url(endpoint) if (endpoint := provider.identity().get("endpoint")) else None,
        repeat=settings.repeat,
        concurrency=settings.concurrency,
        started_at=started_at.isoformat(timespec="seconds"),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=round(time.perf_counter() - clock, 3),
        args_measured=provider.produces_args,
        replies_read=provider.produces_replies,
        config=settings.config_file,
        system=settings.system,
        temperature=settings.temperature,
        seed=settings.seed,
        shuffle=settings.shuffle,
        cache_mode=settings.cache_mode if provider.cacheable else "off",
        cache_hits=spend.cache_hits,
        api_calls=spend.api_calls,
        cache_writes=spend.cache_writes,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        prompt_cache_write_tokens=spend.prompt_cache_write_tokens,
        prompt_cache_read_tokens=spend.prompt_cache_read_tokens,
        cost_usd=cost_usd(settings.call.model, spend.synchronous(), settings.price, batched=spend.batched)
        if spend.api_calls
        else 0.0,
        priced_by=priced[1] if spend.api_calls and (priced := price_for(settings.call.model, settings.price)) else None,
        pool_shrinks=prep.throttle.shrinks,
        label=settings.models[0].label if settings.several else None,
        batch=prep.batch,
        client=prep.client,
        tool_search=prep.tool_search,
        judge=JudgeRunOut(
            model=settings.judge, api_calls=prep.judge.spend.api_calls, cache_hits=prep.judge.spend.cache_hits
        )
        if prep.judge is not None and settings.judge
        else None,
    )
    built = build_report(  # report
        prep.cases,
        results,
        surface,
        run,
        settings.gate.values(),
        stopped=asked.stopped,
        lint=prep.findings,
        warnings=[*settings.notes, *provider.problems],
    )
    report = judged(built, settings.gate)  # the head's own gate, applied here once
    return report.model_copy(update={"part": prep.part}) if prep.part else report


async def _judged(prep: Prepared, judge: Provider, asked: Asked) -> tuple[dict[int, Reading], dict[int, Reply]]:
    """evals.judge's readings (a run with no judge loads none of judge.py): trajectories' answers after
    an error, and replies without a call when the provider writes replies."""
    from ..judge import judge_all, read_replies, wants_judge, wants_reading

    pairs = list(enumerate(zip(asked.jobs, asked.picks, strict=True)))
    problems = prep.provider.problems
    items = [(i, job.case, pick) for i, (job, pick) in pairs if wants_judge(job.case, pick, prep.surface)]
    by_judge = await judge_all(judge, prep.throttle, items, problems) if items else {}
    readings: dict[int, Reply] = {}
    if prep.provider.produces_replies:
        said = [(i, job.case, pick) for i, (job, pick) in pairs if wants_reading(job.case, pick)]
        names = prep.surface.names
        readings = await read_replies(judge, prep.throttle, said, names, problems) if said else {}
    return by_judge, readings
