"""Everything before the first request: the cases, the tool surface, the checks, each model's
provider, its throttle and its plan of samples, and what the answer cache already holds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from ..ask import Job, plan
from ..budget import Budget, estimate, prefix_tokens
from ..contain import confinement
from ..errors import ConfigError, ToolselectError
from ..golden import Case
from ..golden import Source as CaseSource
from ..lint.finding import Finding
from ..lint.stops import check_cases, check_tool_names, replies_unread
from ..lint.surface import lint_surface
from ..offer import Offer, client_record, client_without_a_model, offer_to
from ..pick import Pick
from ..prices import CACHE_MIN_TOKENS
from ..providers import Provider, WireTool
from ..providers.registry import PROVIDERS
from ..providers.search import PROVIDER_OF, RESULTS
from ..providing import make_provider
from ..report.schema import BatchOut, ClientOut, PartOut, ToolSearchOut
from ..scoring import missing_tools
from ..settings import Settings
from ..shards import Unit, fingerprint
from ..surface import Neighbour, Surface, build_surface
from ..throttle import Pacer, Throttle

if TYPE_CHECKING:
    from ..surface.launch import Say


@dataclass(frozen=True)
class Hooks:
    """Callbacks for the console: what is about to run, and each sample as it finishes."""

    on_start: Callable[[Settings, Surface, list[Case], int], None] = lambda *a: None
    on_sample: Callable[[Job, Pick], None] = lambda *a: None
    on_note: Say = lambda _: None  # e.g. the server's setup starting and done
    on_secret: Say = lambda _: None  # a value `${VAR}` put into a config (the base's too): mask it
    # --batch: a model's batches (its label, requests done, of how many, whether waiting is over)
    on_batch: Callable[[str, int, int, bool], None] = lambda *a: None


async def load_surface(settings: Settings, environ: Mapping[str, str], say: Say = lambda _: None) -> Surface:
    """The tool surface from a frozen tools.json or a live MCP server (built and started first when
    the config says how; tools/list only). `environ`: what the server's small environment is taken from."""
    if settings.tools_file is not None:
        from ..locate import display_path
        from ..surface.file import read_tools_file

        return build_surface(read_tools_file(settings.tools_file), f"file: {display_path(settings.tools_file)}")
    from ..surface.launch import capture

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
        from ..locate import display_path
        from ..surface.file import tool_lines

        shown = display_path(settings.tools_file)
        return shown, None, {name: (shown, line) for name, line in tool_lines(settings.tools_file).items()}
    server = settings.server
    places: dict[str, tuple[str, int]] = {}
    if server is not None and server.command and server.cwd is not None and server.cwd.is_dir():
        from ..locate import source_lines

        places = source_lines(server.cwd, {t.name: t.description for t in surface.tools})
    return (*settings.place("server"), places)


@dataclass
class Prepared:
    """One side of a run, ready to ask: nothing has been sent to a model yet."""

    settings: Settings
    cases: list[Case]
    surface: Surface
    provider: Provider
    throttle: Throttle
    jobs: tuple[Job, ...]
    offer: Offer  # the tools as sent (a client's presentation, or the raw list) and the system prompt
    findings: list[Finding]
    budget: Budget
    judge: Provider | None = None  # evals.judge: reads replies without a call, and trajectories' answers after errors
    part: PartOut | None = None  # a shard's run (--shard): its slice, and the plan's fingerprint
    preset: Mapping[tuple[str, int], Pick] | None = None  # samples known already: a batch's answers, a merge's errors
    batch: BatchOut | None = None  # --batch: what this side's batches answered
    client: ClientOut | None = None  # evals.clients: the client this side is asked through, and what it did
    tool_search: ToolSearchOut | None = None  # --tool-search: the tools deferred behind the API's search

    @cached_property
    def prefix_cached(self) -> bool:
        """The requests' shared prefix (tools, system prompt) is long enough for the API's prompt cache."""
        return prefix_tokens(self.offer.tools, self.offer.system) >= CACHE_MIN_TOKENS

    async def aclose(self) -> None:
        await self.provider.aclose()
        if self.judge is not None:
            await self.judge.aclose()


async def prepare(
    settings: Settings,
    cases: list[Case],
    environ: Mapping[str, str],
    *,
    connect: bool = True,
    planned: set[str] | None = None,
    say: Say = lambda _: None,
    surface: Surface | None = None,
    throttles: dict[tuple[str, ...], Throttle] | None = None,
    keep: Callable[[Job], bool] | None = None,
    beside: Sequence[Neighbour] = (),
) -> Prepared:
    """Everything before the first request, for one model asked the golden set's `cases`. `connect`:
    check the key and build the client (only when the plan needs the API: a fully cached run needs no
    key). `planned`: cache keys earlier sides will ask for, counted as cached here (and this side's
    are added). `environ`: where keys are read.
    `surface`: the tool surface another model of the run already listed. `throttles`: the run's throttles,
    one per endpoint (models on one endpoint share its concurrency and its rate-limit back-off).
    `keep`: the jobs this run asks (a shard's); the others are not planned. `beside`: the servers the
    user runs beside theirs (evals.alongside), offered through the client."""
    throttles = {} if throttles is None else throttles
    throttle = throttles.setdefault(endpoint_key(settings), Throttle(settings.concurrency, pacer(settings)))
    provider = make_provider(
        settings.call, throttle, environ, settings.cache_dir, settings.cache_mode
    )  # (+ the answer cache)

    async def listing() -> Surface:
        return surface if surface is not None else await load_surface(settings, environ, say)

    try:
        # the SDK is imported while a live MCP server starts; with a frozen surface only once a request is
        # to be made (`connect`): a run the cache answers whole never imports it
        live = surface is None and settings.tools_file is None
        loaded_sdk, listed = await asyncio.gather(
            asyncio.to_thread(provider.preload) if live else asyncio.sleep(0), listing(), return_exceptions=True
        )
        for outcome in (loaded_sdk, listed):
            if isinstance(outcome, BaseException):
                raise outcome
        assert isinstance(listed, Surface)
        surface = listed
        place = surface_place(settings, surface)
        findings = lint_surface(surface, *place)
        findings += check_cases(cases, surface, settings.strict)  # impossible cases stop here
        findings += replies_unread(cases, settings.call.provider, provider.produces_replies)
        check_tool_names(settings.gate.min_tool_recall, surface, settings.named("min_tool_recall"))
        offered = offer_to(
            surface,
            settings.system,
            settings.client,
            settings.server_label,
            beside,
            settings.option("tool_search"),
            eager_tools(settings.option("eager"), surface, settings.named("eager")),
        )
        if offered.presented is not None:  # what the client does to the surface, checked
            from ..lint.client import lint_client

            findings += lint_client(offered.presented, cases, *place)
        if settings.client is not None:  # the real client, when it is installed (or asked for)
            from ..drive.sample import driven_for, emulated_because

            driven = driven_for(
                settings.client.name,
                settings.models[0].client_version,
                settings.option("client_mode"),
                settings.option("clients_dir"),
                settings.call.provider,
                settings.server_label,
                settings.call.model,
                tuple(surface.definitions),
                environ.get("PATH", "/usr/bin:/bin"),
                confinement(environ),
                settings.option("client_endpoint") == "gateway",
            )
            offered = replace(offered, driven=driven) if driven is not None else offered
            mode, where = settings.option("client_mode"), settings.option("clients_dir")
            if driven is None and (why := emulated_because(settings.client.name, mode, where, settings.call.provider)):
                provider.problems.append(why)
        jobs = plan(cases, settings.repeat, len(offered.tools), settings.shuffle, settings.seed or 0)
        if keep is not None:
            jobs = tuple(j for j in jobs if keep(j))
        asked = tuple(j for j in jobs if not missing_tools(j.case, surface))  # TOOL-MISSING: never sent
        budget = estimate(provider, asked, offered, settings, planned, surface)
        if budget.requests:
            provider.check_writable()
        if connect and (budget.requests or not provider.cacheable):
            await asyncio.to_thread(provider.connect)  # a missing key stops here, before any request
    except BaseException:
        await provider.aclose()
        raise
    judge = None
    if settings.judge_call:  # trajectories' answers after an error, and replies without a call: through the cache
        judge = make_provider(settings.judge_call, throttle, environ, settings.cache_dir, settings.cache_mode)
    return Prepared(
        settings,
        cases,
        surface,
        provider,
        throttle,
        jobs,
        offered,
        findings,
        budget,
        judge,
        client=client_record(offered),
        tool_search=tool_search_record(offered, surface),
    )


def tool_search_record(offered: Offer, surface: Surface) -> ToolSearchOut | None:
    """What the API's tool search defers, for the report: the eager tools, the results a search
    returns at most, and the tool list's tokens per request loaded and deferred."""
    search = offered.search
    if search is None:
        return None
    finder = WireTool(search.mode, "search the tools", {})  # the search tool's own entry
    eager = [t for t in offered.tools if t.name in search.eager]
    return ToolSearchOut(
        mode=search.mode,  # type: ignore[arg-type]
        eager=[offered.from_wire(t.name) for t in eager],
        k=RESULTS[search.mode],
        tokens_loaded=prefix_tokens(offered.tools, None),
        tokens_deferred=prefix_tokens([finder, *eager], None),
    )


def eager_tools(eager: Sequence[str], surface: Surface, named: str) -> tuple[str, ...]:
    """The tools --eager keeps loaded: each must be one of the surface's."""
    unknown = [name for name in eager if surface.get(name) is None]
    if unknown:
        raise ConfigError(
            f"{named}: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a tool of the surface",
            hint=f"the surface has {', '.join(surface.names[:12])}{' …' if len(surface.names) > 12 else ''}",
        )
    return tuple(eager)


def pacer(settings: Settings) -> Pacer:
    """An endpoint's pace: by hand (--max-rpm, --max-tpm) and as its answers announce, never a wait
    longer than a request may take."""
    from ..providers.api import deadline

    return Pacer(settings.max_rpm, settings.max_tpm, max_wait_s=deadline(settings.call))


def endpoint_key(settings: Settings) -> tuple[str, ...]:
    """The endpoint a model's requests go to, for its throttle: one API (one key, one rate limit) at one
    URL. OpenAI's two APIs share one; bm25 and the command provider answer locally, each its own."""
    info = PROVIDERS[settings.call.provider]
    return (*(info.keys or (settings.call.provider,)), settings.call.base_url or "")


async def prepare_models(
    settings: Settings,
    cases: list[Case],
    environ: Mapping[str, str],
    *,
    connect: bool = True,
    planned: set[str] | None = None,
    say: Say = lambda _: None,
    surface: Surface | None = None,
    assigned: Mapping[Unit, int] | None = None,
    recorded: Mapping[Unit, Pick] | None = None,
) -> tuple[tuple[Prepared, ...], str | None]:
    """Every model of the run prepared (`prepare`) on one side's `cases`: the tool surface listed once
    (or `surface`, frozen), one throttle per endpoint. With `settings.shard`, each model asks only the
    units `assigned` to its shard, and the run is marked with the plan's fingerprint."""
    mode = settings.option("tool_search")
    if mode != "off" and not all(PROVIDERS[m.provider].api for m in settings.models):
        raise ConfigError(
            f"tool_search {mode} is the API's own search: it takes a model on {PROVIDER_OF[mode]}, and "
            f"{settings.call.provider} answers one request with one pick",
            hint=f"toolselect lint --tool-search {mode} runs the search offline",
        )
    unasked = client_without_a_model([(m.client, m.provider) for m in settings.models])
    if unasked is not None:
        raise ConfigError(
            unasked, hint="toolselect lint --client NAME checks how a client presents the surface, offline"
        )
    throttles: dict[tuple[str, ...], Throttle] = {}
    preps: list[Prepared] = []
    beside: list[Neighbour] = []
    if settings.alongside:  # the servers beside the user's: listed once for every model and client
        from ..surface.neighbours import alongside

        beside = await alongside(settings.alongside, settings.base_dir, settings.origin("alongside"), environ, say)
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
                    each, cases, environ, connect=connect, planned=planned, say=say, surface=listed,
                    throttles=throttles, keep=keep, beside=beside,
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
                {
                    "label": m.label,
                    "provider": m.provider,
                    "model": m.model,
                    "base_url": m.call.base_url,
                    "params": m.call.params,
                }
                for m in settings.models
            ],
            "asked": [settings.repeat, settings.shuffle, settings.seed, settings.temperature, settings.system],
            "more": [settings.max_tokens, settings.forbid_extra_args, settings.judge, settings.command],
            "cases": [
                repr(replace(c, source=CaseSource("", c.source.line))) for c in prep.cases
            ],  # a base: in a worktree
            "surface": prep.surface.hash,
            "shards": settings.shard.count if settings.shard else 1,
        }
    )
