"""The whole flow on one screen: golden set → tool surface → picks → results → report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import __version__
from .ask import Job, ask_all, plan
from .cache import AnswerCache, CachedProvider, Spend
from .baseline import NoBaseline, base_settings, repo_root, resolve_commit, worktree
from .config import Loaded, Overrides, Settings, load_cases
from .diff import Diff, diff_reports
from .errors import ToolselectError
from .golden import Case
from .lint import check_cases
from .pick import Pick
from .pool import Pool
from .prices import cost_usd
from .providers import make_provider
from .report import Report, RunOut, build_report
from .scoring import Result, score_sample
from .surface import Surface, build_surface


@dataclass(frozen=True)
class Hooks:
    """Callbacks for the console: what is about to run, and each sample as it finishes."""

    on_start: Callable[[Settings, Surface, list[Case], int], None] = lambda *a: None
    on_sample: Callable[[Job, Pick], None] = lambda *a: None


async def load_surface(settings: Settings) -> Surface:
    """The tool surface from a frozen tools.json or a live MCP server (tools/list only)."""
    if settings.tools_file is not None:
        from .locate import display_path
        from .surface.file import read_tools_file

        return build_surface(read_tools_file(settings.tools_file), f"file: {display_path(settings.tools_file)}")
    from .surface.mcp import list_tools

    assert settings.server is not None
    return build_surface(await list_tools(settings.server), settings.server.describe())


async def run_eval(loaded: Loaded, settings: Settings, hooks: Hooks = Hooks(), cache_keys: set[str] | None = None) -> Report:
    cases = load_cases(loaded, settings)  # golden set
    pool = Pool(settings.concurrency)
    provider = make_provider(settings, pool)
    if provider.cacheable:  # the answer cache wraps any API provider
        provider = CachedProvider(provider, AnswerCache(settings.cache_dir), settings.cache_mode)
    try:
        # the SDK loads (and a missing key is found) while the MCP server starts: both before any case
        connected, surface = await asyncio.gather(
            asyncio.to_thread(provider.connect), load_surface(settings), return_exceptions=True
        )
        for outcome in (connected, surface):  # a missing key is reported before a server problem
            if isinstance(outcome, BaseException):
                raise outcome
        warnings = check_cases(cases, surface)  # impossible cases stop here, before any request
        jobs = plan(cases, settings.repeat)
        hooks.on_start(settings, surface, cases, len(jobs))
        started_at, clock = datetime.now(UTC), time.perf_counter()
        asked = await ask_all(  # picks
            provider, surface, jobs, system=settings.system, pool=pool, on_done=hooks.on_sample
        )
    finally:
        await provider.aclose()
    if isinstance(provider, CachedProvider):
        provider.finish(cache_keys)
    spend = provider.spend if isinstance(provider, CachedProvider) else Spend()
    results: list[Result] = [  # results
        score_sample(job.case, pick, surface, job.sample, args_measured=provider.produces_args)
        for job, pick in zip(asked.jobs, asked.picks, strict=True)
    ]
    run = RunOut(
        toolselect_version=__version__,
        provider=settings.provider,
        model=settings.model,
        endpoint=provider.identity().get("endpoint"),
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
        cache_mode=settings.cache_mode if provider.cacheable else "off",
        cache_hits=spend.cache_hits,
        api_calls=spend.api_calls,
        cache_writes=spend.cache_writes,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        cost_usd=cost_usd(settings.model, spend.input_tokens, spend.output_tokens, settings.price) if spend.api_calls else 0.0,
        pool_shrinks=pool.shrinks,
    )
    return build_report(  # report
        cases, results, surface, run,
        min_accuracy=settings.min_accuracy, max_error_rate=settings.max_error_rate,
        stopped=asked.stopped, warnings=[*settings.notes, *warnings],
    )


@dataclass(frozen=True)
class Comparison:
    head: Report
    base: Report | None
    diff: Diff | None
    base_note: str | None  # why there is no baseline


async def run_compare(
    loaded: Loaded, settings: Settings, over: Overrides, base_ref: str, cwd: Path,
    environ: Mapping[str, str], hooks: Hooks = Hooks(), base_hooks: Hooks = Hooks(),
) -> Comparison:
    """Evaluate the head, then the base commit in a git worktree, and diff them (pure)."""
    keys: set[str] = set()
    head = await run_eval(loaded, settings, hooks, keys)
    try:
        root = repo_root(cwd)
        with worktree(root, resolve_commit(root, base_ref)) as tree:
            base_loaded, base = base_settings(loaded, settings, over, root, tree, cwd, environ)
            base_report = await run_eval(base_loaded, base, base_hooks, keys)
    except NoBaseline as exc:
        return Comparison(head, None, None, f"no baseline: {exc}")
    except ToolselectError as exc:
        return Comparison(head, None, None, f"no baseline: the base could not be evaluated: {exc.message}")
    return Comparison(head, base_report, diff_reports(base_report, head), None)
