"""`toolselect stress`: the golden set with your tools among more and more distractors, and the
base's curve to compare with."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from .. import __version__
from ..ask import ask_all, plan
from ..baseline import NoBaseline
from ..budget import Budget, check_budget, combined, estimate
from ..cache import AnswerCache
from ..config import Loaded
from ..errors import InfraError, Refused, ToolselectError
from ..golden import Case
from ..lint.stops import check_cases
from ..offer import offer
from ..providers import Spend
from ..providers.registry import PROVIDERS
from ..providing import make_provider
from ..resolve import load_cases
from ..retrieval import Ranking, bm25_rankings, command_rankings, embedding_rankings, offered
from ..scoring import Result, score_sample
from ..settings import Settings
from ..stress import (
    Composed,
    StressGateOut,
    StressReport,
    StressRunOut,
    compose,
    curve,
    retrieval_out,
    stress_report,
)
from ..surface import Surface
from ..surface.neighbours import PoolSource, gather
from ..sweep import sweep
from ..throttle import Throttle
from .prepare import Hooks, load_surface, pacer
from .sides import Against


@dataclass(frozen=True)
class Retrieved:
    """Retrieval: each case's ranking of the whole pool, the samples with only the top k offered,
    and the samples with every tool offered."""

    rankings: tuple[Ranking, ...]
    top_k: tuple[Result, ...]
    everything: tuple[Result, ...]
    pool_tools: int


@dataclass(frozen=True)
class StressRun:
    """What `toolselect stress` measured: each (size, seed)'s surface and scored samples, the
    sources distractors were drawn from, and what it cost."""

    runs: tuple[tuple[Composed, tuple[Result, ...]], ...]
    sources: tuple[PoolSource, ...]
    retrieval: Retrieved | None = field(default=None, kw_only=True)
    sizes: tuple[int, ...]  # as run (capped by the pool)
    budget: Budget
    spend: Spend
    warnings: tuple[str, ...]
    started_at: str
    duration_s: float


async def rank(settings: Settings, cases: Sequence[Case], pool: Surface, environ: Mapping[str, str]) -> list[Ranking]:
    """Each case's ranking of the whole pool, by the configured retriever."""
    stress = settings.stress
    if stress.retriever == "bm25":
        return bm25_rankings(cases, pool)
    command = stress.retriever_command or ()
    if stress.retriever == "command":
        return await command_rankings(cases, pool, command, settings.base_dir, environ, stress.top_k)
    return await embedding_rankings(cases, pool, command, settings.base_dir, environ)


async def run_stress(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    hooks: Hooks = Hooks(),
    *,
    dry_run: bool = False,
    session: set[str] | None = None,
) -> StressRun:
    """The golden set at each size (0 always: your tools alone) — the user's surface plus `size`
    distractors, `seeds` draws each — every (size, seed) asked concurrently through one throttle and one
    answer cache. `session`: the cache keys other runs of the same job used (the eval's), kept in
    the manifest with this run's so `cache prune` keeps them all."""
    cases = load_cases(loaded, settings)  # golden set
    throttle = Throttle(settings.concurrency, pacer(settings))
    provider = make_provider(
        settings.call, throttle, environ, settings.cache_dir, settings.cache_mode
    )  # (+ the answer cache)
    started_at, clock = datetime.now(UTC), time.perf_counter()
    finished = False
    try:
        user = await load_surface(settings, environ, hooks.on_note)  # tool surface
        check_cases(cases, user, settings.strict)
        neighbours, sources = await gather(  # distractors
            settings.stress.distractors,
            settings.stress.bundled_pool,
            settings.base_dir,
            settings.origin("distractors"),
            environ,
            hooks.on_note,
        )
        notes = []
        most = len(neighbours)
        limit = PROVIDERS[settings.call.provider].max_tools
        if limit is not None and len(user.tools) + most > limit:
            most = max(0, limit - len(user.tools))
            if max(settings.stress.sizes) > most:  # said only when a size asked for was cut
                notes.append(
                    f"{settings.call.provider} takes at most {limit} tools a request: sizes were capped at {most}"
                )
        elif max(settings.stress.sizes) > most:
            notes.append(f"sizes above {most} were capped: that is every distractor in the pool")
        sizes = tuple(sorted({0, *(min(s, most) for s in settings.stress.sizes)}))  # 0: your tools alone
        composed = [compose(user, neighbours, size, seed) for size in sizes for seed in range(settings.stress.seeds)]
        jobs = plan(cases, settings.repeat)
        whole = compose(user, neighbours, most, 0).surface  # retrieval ranks the whole pool (as offered)
        asks = [(c.surface, jobs) for c in composed]
        if dry_run:  # nothing runs: the retriever's requests counted as all-tools ones (an upper bound)
            extra = [(whole, jobs), (whole, jobs)] if settings.stress.retriever else []
            planned: set[str] = set()
            every = asks + extra
            budget = combined(
                [estimate(provider, js, offer(sf, settings.system), settings, planned, sf) for sf, js in every]
            )
            return StressRun((), tuple(sources), sizes, budget, provider.spend, tuple(notes), "", 0.0)
        rankings = await rank(settings, cases, whole, environ) if settings.stress.retriever else []
        narrowed = [(offered(whole, r, settings.stress.top_k), plan([r.case], settings.repeat)) for r in rankings]
        asks += narrowed + ([(whole, jobs)] if rankings else [])
        planned = set()
        budget = combined(
            [estimate(provider, js, offer(sf, settings.system), settings, planned, sf) for sf, js in asks]
        )
        check_budget([budget], settings.max_requests, settings.max_cost)
        if budget.requests:
            provider.check_writable()
            await asyncio.to_thread(provider.connect)
        hooks.on_start(settings, user, cases, sum(len(js) for _, js in asks))
        asked = await asyncio.gather(
            *(
                ask_all(provider, sf, js, offer=offer(sf, settings.system), throttle=throttle, on_done=hooks.on_sample)
                for sf, js in asks
            )
        )
        finished = True
    finally:
        await provider.aclose()
        provider.finish(session, interrupted=not finished)
        sweep(environ)
    stopped = next((a.stopped for a in asked if a.stopped), None)
    if stopped:
        raise InfraError(f"the stress run stopped: {stopped}")
    scored = [
        tuple(
            score_sample(
                j.case, p, sf, j.sample, args_measured=provider.produces_args, reads_replies=provider.produces_replies
            )
            for j, p in zip(a.jobs, a.picks, strict=True)
        )
        for (sf, _), a in zip(asks, asked, strict=True)
    ]
    runs = tuple(zip(composed, scored[: len(composed)], strict=True))
    retrieval = None
    if rankings:
        top = tuple(r for results in scored[len(composed) : -1] for r in results)
        retrieval = Retrieved(tuple(rankings), top, scored[-1], len(whole.tools))
    return StressRun(
        runs,
        tuple(sources),
        sizes,
        budget,
        provider.spend,
        (*notes, *provider.problems),
        started_at.isoformat(timespec="seconds"),
        round(time.perf_counter() - clock, 3),
        retrieval=retrieval,
    )


def stress_report_of(run: StressRun, settings: Settings) -> StressReport:
    """A stress run as its report: the curve, the cliff, the culprits, retrieval."""
    stress = settings.stress
    retrieved = run.retrieval
    return stress_report(
        curve(run.runs, alpha=settings.gate.alpha),
        run.sources,
        StressRunOut(
            toolselect_version=__version__,
            provider=settings.call.provider,
            model=settings.call.model,
            cases=len({r.case.name for _, results in run.runs for r in results}),
            repeat=settings.repeat,
            seeds=list(range(stress.seeds)),
            alpha=settings.gate.alpha,
            started_at=run.started_at,
            duration_s=run.duration_s,
            api_calls=run.spend.api_calls,
            cache_hits=run.spend.cache_hits,
        ),
        run.warnings,
        retrieval_out(
            stress.retriever or "",
            retrieved.rankings,
            stress.top_k,
            retrieved.top_k,
            retrieved.everything,
            retrieved.pool_tools,
        )
        if retrieved
        else None,
        StressGateOut(
            min_accuracy_at=dict(stress.min_accuracy_at),
            fail_on_cliff_move=stress.fail_on_cliff_move,
        ),
    )


async def stress_against(
    loaded: Loaded, settings: Settings, environ: Mapping[str, str], against: Against | None, hooks: Hooks = Hooks()
) -> tuple[StressReport, StressReport | None, str | None]:
    """The stress test on the head and, against a base commit (in a git worktree), on the base with
    the head's settings: (head, base or None, why there is no base)."""
    session = AnswerCache(settings.cache_dir).manifest_keys() or set()  # the eval's: kept, not pruned
    head = stress_report_of(await run_stress(loaded, settings, environ, hooks, session=session), settings)
    if against is None:
        return head, None, None
    try:
        async with against.checked_out(environ) as checkout:
            base_loaded, base = against.read(checkout, loaded, settings, environ, hooks.on_secret)
            if base_loaded.doc is None or ("stress",) not in base_loaded.doc.keys:
                return head, None, "no stress baseline: the base's config has no stress: section"
            said = replace(hooks, on_note=lambda text: hooks.on_note(f"base: {text}"))
            base = replace(base, stress=settings.stress)  # the head's sizes, seeds and distractors: comparable curves
            with checkout.turn(environ):
                base_run = await run_stress(base_loaded, base, environ, said, session=session)
            return head, stress_report_of(base_run, base), None
    except Refused:
        raise
    except NoBaseline as exc:
        return head, None, f"no stress baseline: {exc.message}"
    except ToolselectError as exc:
        return head, None, f"no stress baseline: the base could not be stressed: {exc.message}"
