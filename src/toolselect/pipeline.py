"""The whole flow on one screen: golden set → tool surface → picks → results → report (→ diff).

`prepare` does everything that asks no model (cases, surface, checks, the plan of samples and what
the cache already holds); `execute` asks and scores. Between the two, a budget can refuse the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from . import __version__
from .ask import Job, ask_all, plan, wire_tools
from .baseline import Checkout, GitFailed, NoBaseline, base_settings, checked_out, failure_of
from .budget import Budget, check_budget, combined, estimate
from .cache import AnswerCache
from .config import Loaded, Overrides, Settings, load_cases
from .contain import sweep
from .diff import diff_reports
from .errors import ConfigError, InfraError, Refused, ToolselectError
from .gate import BaseFailure, failed_base, gate_of
from .golden import Case
from .golden import Source as CaseSource
from .judge import judge_all, wants_judge
from .lint import Finding, check_cases, check_tool_names, lint_surface
from .merging import Part
from .outcome import Comparison
from .pick import Pick, Reading
from .pool import Pacer, Pool
from .prices import cost_usd
from .providers import Provider, Spend
from .providers.api import deadline
from .providers.factory import make_provider
from .providers.registry import PROVIDERS
from .report.build import build_report
from .report.schema import JudgeRunOut, PartOut, Report, RunOut
from .retrieval import Ranking, bm25_rankings, command_rankings, embedding_rankings, offered
from .scoring import Result, score_sample
from .shards import Unit, assign_sides, cost, fingerprint, plan_units
from .stress import (
    Composed,
    StressGateOut,
    StressReport,
    StressRunOut,
    compose,
    curve,
    retrieval_out,
    stress_report,
)
from .surface import Surface, build_surface
from .surface.launch import Say
from .surface.neighbours import Source, gather
from .urls import public_url


@dataclass(frozen=True)
class Hooks:
    """Callbacks for the console: what is about to run, and each sample as it finishes."""

    on_start: Callable[[Settings, Surface, list[Case], int], None] = lambda *a: None
    on_sample: Callable[[Job, Pick], None] = lambda *a: None
    on_note: Say = lambda _: None  # e.g. the server's setup starting and done
    on_secret: Say = lambda _: None  # a value `${VAR}` put into a config (the base's too): mask it


async def load_surface(settings: Settings, environ: Mapping[str, str], say: Say = lambda _: None) -> Surface:
    """The tool surface from a frozen tools.json or a live MCP server (built and started first when
    the config says how; tools/list only). `environ`: what the server's small environment is taken from."""
    if settings.tools_file is not None:
        from .locate import display_path
        from .surface.file import read_tools_file

        return build_surface(read_tools_file(settings.tools_file), f"file: {display_path(settings.tools_file)}")
    from .surface.launch import capture

    server = settings.server
    assert server is not None
    try:
        captured = await capture(server, environ, say)
    except ToolselectError as exc:  # the server's last words may repeat a secret it was given
        raise type(exc)(server.scrub(exc.message), hint=exc.hint) from None
    return build_surface(captured.tools, captured.origin)


def surface_place(settings: Settings, surface: Surface) -> tuple[str | None, int | None, dict[str, tuple[str, int]]]:
    """Where surface findings point: each tool's entry in the frozen tools file, or its declaration
    in a stdio server's sources when it is found there, else the tools file or the config's
    `server:` line."""
    if settings.tools_file:
        from .locate import display_path
        from .surface.file import tool_lines

        shown = display_path(settings.tools_file)
        return shown, None, {name: (shown, line) for name, line in tool_lines(settings.tools_file).items()}
    server = settings.server
    places: dict[str, tuple[str, int]] = {}
    if server is not None and server.command and server.cwd is not None and server.cwd.is_dir():
        from .locate import source_lines

        places = source_lines(server.cwd, [t.name for t in surface.tools])
    return (*settings.place("server"), places)


@dataclass
class Prepared:
    """One side of a run, ready to ask: nothing has been sent to a model yet."""

    settings: Settings
    cases: list[Case]
    surface: Surface
    provider: Provider
    pool: Pool
    jobs: tuple[Job, ...]
    findings: list[Finding]
    budget: Budget
    judge: Provider | None = None  # evals.judge: reads trajectories' answers after an error
    part: PartOut | None = None  # a shard's run (--shard): its slice, and the plan's fingerprint
    preset: Mapping[tuple[str, int], Pick] | None = None  # a merge: samples a shard recorded as errors

    async def aclose(self) -> None:
        await self.provider.aclose()
        if self.judge is not None:
            await self.judge.aclose()


async def prepare(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    connect: bool = True,
    planned: set[str] | None = None,
    say: Say = lambda _: None,
    surface: Surface | None = None,
    pools: dict[tuple[str, ...], Pool] | None = None,
    keep: Callable[[Job], bool] | None = None,
) -> Prepared:
    """Everything before the first request. `connect`: check the key and build the client (only when
    the plan needs the API: a fully cached run needs no key). `planned`: cache keys earlier sides will
    ask for, counted as cached here (and this side's are added). `environ`: where keys are read.
    `surface`: the tool surface another model of the run already listed. `pools`: the run's pools,
    one per endpoint (models on one endpoint share its concurrency and its rate-limit back-off).
    `keep`: the jobs this run asks (a shard's); the others are not planned."""
    cases = load_cases(loaded, settings)  # golden set
    pools = {} if pools is None else pools
    pool = pools.setdefault(endpoint_key(settings), Pool(settings.concurrency, pacer(settings)))
    provider = make_provider(settings, pool, environ)  # (+ the answer cache)

    async def listing() -> Surface:
        return surface if surface is not None else await load_surface(settings, environ, say)

    try:
        # the SDK is imported while the MCP server starts
        loaded_sdk, listed = await asyncio.gather(
            asyncio.to_thread(provider.preload), listing(), return_exceptions=True
        )
        for outcome in (loaded_sdk, listed):
            if isinstance(outcome, BaseException):
                raise outcome
        assert isinstance(listed, Surface)
        surface = listed
        findings = lint_surface(surface, *surface_place(settings, surface))
        findings += check_cases(cases, surface)  # impossible cases stop here
        check_tool_names(settings.gate.min_tool_recall, surface, settings.named("min_tool_recall"))
        jobs = plan(cases, settings.repeat, len(surface.tools), settings.shuffle, settings.seed or 0)
        if keep is not None:
            jobs = tuple(j for j in jobs if keep(j))
        budget = estimate(provider, jobs, wire_tools(surface), settings, planned, surface)
        if budget.requests:
            provider.check_writable()
        if connect and (budget.requests or not provider.cacheable):
            await asyncio.to_thread(provider.connect)  # a missing key stops here, before any request
    except BaseException:
        await provider.aclose()
        raise
    judge = None
    if settings.judge and any(c.script is not None for c in cases):  # asked when needed, through the cache
        judge = make_provider(replace(settings, model=settings.judge), pool, environ)
    return Prepared(settings, cases, surface, provider, pool, jobs, findings, budget, judge)


def pacer(settings: Settings) -> Pacer:
    """An endpoint's pace: by hand (--max-rpm, --max-tpm) and as its answers announce, never a wait
    longer than a request may take."""
    return Pacer(settings.max_rpm, settings.max_tpm, max_wait_s=deadline(settings))


def endpoint_key(settings: Settings) -> tuple[str, ...]:
    """The endpoint a model's requests go to, for its pool: one API (one key, one rate limit) at one
    URL. OpenAI's two APIs share one; bm25 and the command provider answer locally, each its own."""
    info = PROVIDERS[settings.provider]
    return (*(info.keys or (settings.provider,)), settings.base_url or "")


async def prepare_models(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    connect: bool = True,
    planned: set[str] | None = None,
    say: Say = lambda _: None,
    surface: Surface | None = None,
    assigned: Mapping[Unit, int] | None = None,
    recorded: Mapping[Unit, Pick] | None = None,
) -> tuple[tuple[Prepared, ...], str | None]:
    """Every model of the run prepared (`prepare`): the tool surface listed once (or `surface`, frozen),
    one pool per endpoint. With `settings.shard`, each model asks only the units `assigned` to its
    shard, and the run is marked with the plan's fingerprint."""
    pools: dict[tuple[str, ...], Pool] = {}
    preps: list[Prepared] = []
    shard = settings.shard
    keeps: list[Callable[[Job], bool] | None] = [None] * len(settings.each_model())
    if shard is not None and shard.index and assigned is not None:  # shard 0: the whole run (a merge)
        index = shard.index

        def mine(label: str) -> Callable[[Job], bool]:
            return lambda job: assigned[(label, job.case.name, job.sample)] == index

        keeps = [mine(label) for label in settings.labels]
    try:
        for each, keep in zip(settings.each_model(), keeps, strict=True):
            listed = preps[0].surface if preps else surface
            preps.append(
                await prepare(
                    loaded, each, environ, connect=connect, planned=planned, say=say, surface=listed, pools=pools,
                    keep=keep,
                )
            )  # fmt: skip
    except BaseException:
        for prep in preps:
            await prep.aclose()
        raise
    if recorded:
        preps = [
            replace(p, preset={(case, i): pick for (label, case, i), pick in recorded.items() if label == name})
            for p, name in zip(preps, settings.labels, strict=True)
        ]
    if shard is not None:
        part = PartOut(shard=shard.index or 1, shards=shard.count, fingerprint=plan_fingerprint(settings, preps[0]))
        preps = [replace(p, part=part if shard.index else None) for p in preps]
        if not shard.index:
            return tuple(preps), part.fingerprint
    return tuple(preps), None


def plan_fingerprint(settings: Settings, prep: Prepared) -> str:
    """What decides a run's answers, hashed: the models and how they are asked, every case, the tool
    surface, the count of shards. (Not the gate: a merge may judge by other flags.)"""
    return fingerprint(
        {
            "models": [
                {"label": m.label, "provider": m.provider, "model": m.model, "base_url": m.base_url, "params": m.params}
                for m in settings.models
            ]
            or [{"provider": settings.provider, "model": settings.model, "params": settings.params}],
            "asked": [settings.repeat, settings.shuffle, settings.seed, settings.temperature, settings.system],
            "more": [settings.max_tokens, settings.forbid_extra_args, settings.judge, settings.command],
            "cases": [
                repr(replace(c, source=CaseSource("", c.source.line))) for c in prep.cases
            ],  # a base: in a worktree
            "surface": prep.surface.hash,
            "shards": settings.shard.count if settings.shard else 1,
        }
    )


async def execute(prep: Prepared, hooks: Hooks = Hooks(), cache_keys: set[str] | None = None) -> Report:
    settings, surface, provider = prep.settings, prep.surface, prep.provider
    hooks.on_start(settings, surface, prep.cases, len(prep.jobs))
    started_at, clock = datetime.now(UTC), time.perf_counter()
    finished = False
    verdicts: dict[int, Reading] = {}
    session = cache_keys if cache_keys is not None else set()
    try:
        asked = await ask_all(
            provider,
            surface,
            prep.jobs,
            system=settings.system,
            pool=prep.pool,
            on_done=hooks.on_sample,
            preset=prep.preset,
        )
        if prep.judge is not None and not asked.stopped:  # trajectories' answers after an error
            items = [
                (i, job.case, pick)
                for i, (job, pick) in enumerate(zip(asked.jobs, asked.picks, strict=True))
                if wants_judge(job.case, pick, surface)
            ]
            verdicts = await judge_all(prep.judge, prep.pool, items, provider.problems) if items else {}
        finished = True
    finally:
        await prep.aclose()
        if prep.judge is not None:
            prep.judge.finish(session, interrupted=not finished)
        provider.finish(session, interrupted=not finished)
    spend = provider.spend
    results: list[Result] = [  # results
        replace(
            score_sample(
                job.case,
                pick,
                surface,
                job.sample,
                args_measured=provider.produces_args,
                surfaced=verdicts[i].surfaced if i in verdicts else None,
            ),
            tool_order=None if job.order is None else tuple(surface.tools[i].name for i in job.order),
            judge=verdicts.get(i),
        )
        for i, (job, pick) in enumerate(zip(asked.jobs, asked.picks, strict=True))
    ]
    run = RunOut(
        toolselect_version=__version__,
        provider=settings.provider,
        model=settings.model,
        endpoint=public_url(endpoint) if (endpoint := provider.identity().get("endpoint")) else None,
        repeat=settings.repeat,
        concurrency=settings.concurrency,
        started_at=started_at.isoformat(timespec="seconds"),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=round(time.perf_counter() - clock, 3),
        args_measured=provider.produces_args,
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
        cost_usd=cost_usd(settings.model, spend.input_tokens, spend.output_tokens, settings.price)
        if spend.api_calls
        else 0.0,
        pool_shrinks=prep.pool.shrinks,
        label=settings.models[0].label if settings.several else None,
        judge=JudgeRunOut(
            model=settings.judge, api_calls=prep.judge.spend.api_calls, cache_hits=prep.judge.spend.cache_hits
        )
        if prep.judge is not None and settings.judge
        else None,
    )
    report = build_report(  # report
        prep.cases,
        results,
        surface,
        run,
        settings.gate,
        stopped=asked.stopped,
        lint=prep.findings,
        warnings=[*settings.notes, *provider.problems],
    )
    return report.model_copy(update={"part": prep.part}) if prep.part else report


@dataclass(frozen=True)
class Against:
    """The base to compare with: a git ref, evaluated with the head's overrides, from `cwd`.
    `checkout`: the base already checked out (or why it can't be) before any program of the pull
    request ran, shared by the eval and the stress test (the Action's); None: each checks it out."""

    ref: str
    over: Overrides
    cwd: Path
    checkout: Checkout | GitFailed | None = None

    @asynccontextmanager
    async def checked_out(self, environ: Mapping[str, str]) -> AsyncIterator[Checkout]:
        if isinstance(self.checkout, GitFailed):
            raise self.checkout
        if self.checkout is not None:
            yield self.checkout
            return
        with checked_out(self.cwd, self.ref, environ) as made:
            if isinstance(made, GitFailed):
                raise made
            yield made


@dataclass(frozen=True)
class Plans:
    """What a run would ask (for --dry-run): each side's budget, or why there is no base."""

    head: Budget
    base: Budget | None
    base_note: str | None
    base_failure: BaseFailure | None = None


async def run_eval(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    hooks: Hooks = Hooks(),
    *,
    against: Against | None = None,
    base_hooks: Hooks = Hooks(),
    frozen: tuple[Surface | None, Surface | None] = (None, None),
    fingerprints: dict[str, str | None] | None = None,
    recorded: Mapping[str, Mapping[Unit, Pick]] | None = None,
) -> tuple[Comparison, ...]:
    """Evaluate every model on the head and, `against` a base commit (in a git worktree), on the
    base too: all planned and budgeted before anything is asked, the models of a side asked at once
    (one pool per endpoint), then each model's base and head diffed (pure). A base without a config,
    or without the model, is "no baseline" for that model; anything else that keeps the base from
    being evaluated — a ref that doesn't resolve, a setup, server or provider that fails on the base
    — is the comparison's failure (`base_failure`), never a pass. `frozen`: the head's and
    the base's tool surfaces as already listed (a merge of shards); `fingerprints`: filled with each
    side's plan fingerprint (a merge: shard 0 of N)."""
    keys: set[str] = set()  # the cache keys both sides used, for `cache prune`
    says = (hooks.on_note, lambda text: hooks.on_note(f"base: {text}"))
    async with _sides(
        loaded,
        settings,
        environ,
        against,
        connect=True,
        says=says,
        on_secret=hooks.on_secret,
        frozen=frozen,
        fingerprints=fingerprints,
        recorded=recorded,
    ) as sides:
        head_preps, base_preps, note, failure = sides.heads, sides.bases, sides.note, sides.failure
        await _within_budget([*head_preps, *base_preps], settings.max_requests)
        try:
            heads = await asyncio.gather(*(execute(p, hooks, keys) for p in head_preps))
            sweep(environ)  # the head's pickers are done: the base's turn
            with sides.base_turn(environ):
                bases = await asyncio.gather(*(execute(p, base_hooks, keys) for p in base_preps))
        except BaseException:  # every provider closed, the base's too (execute closes its own)
            for prep in (*head_preps, *base_preps):
                await prep.aclose()
            raise
        finally:
            sweep(environ)  # nothing a `command` picker started outlives the picks
    by_label = {p.settings.labels[0]: b for p, b in zip(base_preps, bases, strict=True)}
    out = []
    for prep, head in zip(head_preps, heads, strict=True):
        label = prep.settings.labels[0] if len(head_preps) > 1 else ""
        base = by_label.get(prep.settings.labels[0])
        if base is not None and (failed := failed_base(base)):
            out.append(Comparison(head, label=label, base_failure=failed))
        elif base is None:
            missing = f"no baseline: the base has no model labelled '{label}'" if base_preps else None
            out.append(Comparison(head, base_note=note or missing, label=label, base_failure=failure))
        else:
            out.append(Comparison(head, base, diff_reports(base, head, alpha=prep.settings.gate.alpha), label=label))
    return tuple(out)


async def plan_eval(
    loaded: Loaded, settings: Settings, environ: Mapping[str, str], *, against: Against | None = None
) -> Plans:
    """What `run_eval` would ask and cost; nothing is sent to a model and no key is needed."""
    async with _sides(loaded, settings, environ, against, connect=False) as sides:
        for side in (*sides.heads, *sides.bases):
            await side.aclose()
        base = combined([p.budget for p in sides.bases]) if sides.bases else None
        return Plans(combined([p.budget for p in sides.heads]), base, sides.note, sides.failure)


@dataclass(frozen=True)
class Sides:
    """Both sides of a run, prepared: the head's models, the base's (with why there are none), and
    the base's checkout, whose turn its programs run in."""

    heads: tuple[Prepared, ...]
    bases: tuple[Prepared, ...]
    note: str | None  # no baseline, by design (the base has no config)
    checkout: Checkout | None
    failure: BaseFailure | None = None  # the base could not be evaluated

    def base_turn(self, environ: Mapping[str, str]) -> AbstractContextManager[None]:
        return self.checkout.turn(environ) if self.checkout is not None else nullcontext()


@asynccontextmanager
async def _sides(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    against: Against | None,
    *,
    connect: bool,
    says: tuple[Say, Say] = (lambda _: None, lambda _: None),
    on_secret: Say = lambda _: None,
    frozen: tuple[Surface | None, Surface | None] = (None, None),
    fingerprints: dict[str, str | None] | None = None,
    recorded: Mapping[str, Mapping[Unit, Pick]] | None = None,
) -> AsyncIterator[Sides]:
    """Every model prepared on the head and, against a base, on the base in its worktree (removed
    again at the end): the base's models are the head's (its own settings, the head's labels). A
    shard's units are assigned over both sides at once, so a unit is in the same shard on each."""
    planned: set[str] = set()  # requests the head will make: the base then finds them cached
    prints: dict[str, str | None] = {} if fingerprints is None else fingerprints
    base_loaded, base, note, checkout = None, None, None, None
    failure: BaseFailure | None = None
    async with AsyncExitStack() as stack:
        if against is not None:
            try:
                checkout = await stack.enter_async_context(against.checked_out(environ))
                root, tree = checkout.root, checkout.tree
                base_loaded, base = base_settings(loaded, settings, against.over, root, tree, against.cwd, environ)
                base = replace(base, shard=settings.shard)  # the base splits (or merges) as the head does
                for secret in base_loaded.secrets:
                    on_secret(secret)
                base_cases = load_cases(base_loaded, base) if settings.shard else []
            except NoBaseline as exc:
                base, note = None, f"no baseline: {exc.message}"
            except Refused:
                raise  # the run stops, on either side
            except ToolselectError as exc:
                base, failure = None, failure_of(exc, None, settings, checkout.tree if checkout else None)
        assigned = None
        if settings.shard is not None and settings.shard.index:
            head_units = plan_units(settings.labels, _costs(load_cases(loaded, settings)), settings.repeat)
            base_units = plan_units(base.labels, _costs(base_cases), base.repeat) if base is not None else []
            assigned = assign_sides(head_units, base_units, settings.shard.count)
        head_preps, prints["head"] = await prepare_models(
            loaded, settings, environ, connect=connect, planned=planned, say=says[0], surface=frozen[0],
            assigned=assigned, recorded=(recorded or {}).get("head"),
        )  # fmt: skip
        base_preps: tuple[Prepared, ...] = ()
        if base is not None and base_loaded is not None and checkout is not None:
            try:
                with checkout.turn(environ):  # the base's programs: the head's are all stopped by now
                    base_preps, prints["base"] = await prepare_models(
                        base_loaded, base, environ, connect=connect, planned=planned, say=says[1],
                        surface=frozen[1], assigned=assigned, recorded=(recorded or {}).get("base"),
                    )  # fmt: skip
            except Refused:
                raise  # the run stops, on either side
            except ToolselectError as exc:
                failure = failure_of(exc, base, settings, checkout.tree)
        yield Sides(head_preps, base_preps, note, checkout if base_preps else None, failure)


def _costs(cases: Sequence[Case]) -> list[tuple[str, int]]:
    return [(c.name, cost(c)) for c in cases]


async def _within_budget(sides: Sequence[Prepared], limit: int | None) -> None:
    try:
        check_budget([p.budget for p in sides], limit)
    except ToolselectError:
        for side in sides:
            await side.aclose()
        raise


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
    sources: tuple[Source, ...]
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
    distractors, `seeds` draws each — every (size, seed) asked concurrently through one pool and one
    answer cache. `session`: the cache keys other runs of the same job used (the eval's), kept in
    the manifest with this run's so `cache prune` keeps them all."""
    cases = load_cases(loaded, settings)  # golden set
    pool = Pool(settings.concurrency, pacer(settings))
    provider = make_provider(settings, pool, environ)  # (+ the answer cache)
    started_at, clock = datetime.now(UTC), time.perf_counter()
    finished = False
    try:
        user = await load_surface(settings, environ, hooks.on_note)  # tool surface
        check_cases(cases, user)
        neighbours, sources = await gather(settings, environ, hooks.on_note)  # distractors
        notes = []
        most = len(neighbours)
        limit = PROVIDERS[settings.provider].max_tools
        if limit is not None and len(user.tools) + most > limit:
            most = max(0, limit - len(user.tools))
            if max(settings.stress.sizes) > most:  # said only when a size asked for was cut
                notes.append(f"{settings.provider} takes at most {limit} tools a request: sizes were capped at {most}")
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
            budget = combined([estimate(provider, js, wire_tools(sf), settings, planned, sf) for sf, js in every])
            return StressRun((), tuple(sources), sizes, budget, provider.spend, tuple(notes), "", 0.0)
        rankings = await rank(settings, cases, whole, environ) if settings.stress.retriever else []
        narrowed = [(offered(whole, r, settings.stress.top_k), plan([r.case], settings.repeat)) for r in rankings]
        asks += narrowed + ([(whole, jobs)] if rankings else [])
        planned = set()
        budget = combined([estimate(provider, js, wire_tools(sf), settings, planned, sf) for sf, js in asks])
        check_budget([budget], settings.max_requests)
        if budget.requests:
            provider.check_writable()
            await asyncio.to_thread(provider.connect)
        hooks.on_start(settings, user, cases, sum(len(js) for _, js in asks))
        asked = await asyncio.gather(
            *(ask_all(provider, sf, js, system=settings.system, pool=pool, on_done=hooks.on_sample) for sf, js in asks)
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
            score_sample(j.case, p, sf, j.sample, args_measured=provider.produces_args)
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
            provider=settings.provider,
            model=settings.model,
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
            base_loaded, base = base_settings(
                loaded, settings, against.over, checkout.root, checkout.tree, against.cwd, environ
            )
            if base_loaded.doc is None or ("stress",) not in base_loaded.doc.keys:
                return head, None, "no stress baseline: the base's config has no stress: section"
            for secret in base_loaded.secrets:
                hooks.on_secret(secret)
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


async def run_merge(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    heads: Sequence[Part],
    bases: Sequence[Part] = (),
    hooks: Hooks = Hooks(),
    *,
    against: Against | None = None,
) -> tuple[Comparison, ...]:
    """Shards' parts → the run they split: the parts checked (one plan, every shard once), the whole
    plan replayed from the answer cache on the parts' own tool surfaces (no server, no request), each
    part's samples checked to be exactly its shard's, and the bookkeeping put back. The answer of a
    unit not in the cache is the run's failure (exit 3), naming the shard that should have asked it."""
    from .merging import answered, assigned, labels_of, put_back, recorded_errors, surface_of
    from .shards import Shard, check_plan, check_shards

    labels = list(settings.labels)
    sides = [("head", heads), *([("base", bases)] if bases else [])]
    count = {name: check_shards([p.given(labels) for p in parts], name) for name, parts in sides}
    if bases and count["base"] != count["head"]:
        raise ConfigError(
            f"the head has {count['head']} shards and the base {count['base']}: one run splits both alike"
        )
    whole = replace(settings, shard=Shard(0, count["head"]), cache_mode="only")  # replayed: nothing is asked
    if against is not None:
        against = replace(against, over=replace(against.over, cache_mode="only"))
    frozen = (surface_of(heads[0].reports[0]), surface_of(bases[0].reports[0]) if bases else None)
    prints: dict[str, str | None] = {}
    recorded = {name: recorded_errors(parts, labels) for name, parts in sides}
    runs = await run_eval(
        loaded, whole, environ, hooks, against=against, frozen=frozen, fingerprints=prints, recorded=recorded
    )
    merged_sides = [("head", heads, [r.head for r in runs])]
    if bases:
        replayed = [r.base for r in runs]
        if any(b is None for b in replayed):
            failed = next((r for r in runs if r.base is None), None)
            note = (failed.base_failure.reason if failed.base_failure else failed.base_note) if failed else None
            note = note or "no base"
            raise InfraError(f"the base parts were given, but the base could not be replayed: {note}")
        merged_sides.append(("base", bases, [b for b in replayed if b is not None]))
    put: dict[str, list[Report]] = {}
    whose = assigned([reports for _, _, reports in merged_sides], count["head"])
    for name, parts, reports in merged_sides:
        check_plan([p.given(labels) for p in parts], prints.get(name), whose, name)
        asked = {u for p in parts for u in answered(p.reports, labels)}  # what the shards had an answer for
        for m, report in enumerate(reports):
            label = labels_of(reports)[m]
            lost = [
                (c.name, s.index)
                for c in report.cases
                for s in c.samples
                if s.outcome == "NOT-EVALUATED" and (label, c.name, s.index) in asked
            ]
            if lost:
                shards = sorted({whose[(label, case, index)] for case, index in lost})
                case, index = lost[0]
                raise InfraError(
                    f"the {name}'s shard {', '.join(f'{s}/{count[name]}' for s in shards)}: {len(lost)} answered "
                    f"samples are not in the answer cache (e.g. case {case!r} sample {index})",
                    hint="merge the shards' answers first: toolselect cache merge CACHE_DIR… (the Action does it)",
                )
        put[name] = [put_back(r, [p.reports[m] for p in parts]) for m, r in enumerate(reports)]
    out = []
    for i, run in enumerate(runs):
        head = put["head"][i]
        if not bases or run.base is None:
            out.append(replace(run, head=head))
            continue
        base = put["base"][i]
        out.append(replace(run, head=head, base=base, diff=diff_reports(base, head, alpha=gate_of(head).alpha)))
    return tuple(out)
