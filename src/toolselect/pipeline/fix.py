"""`toolselect fix`: description rewrites that must pass a held-out test before they are suggested.

The golden set is split into tuning and held-out cases (split.py). The current surface is asked
every case; for each target tool (named, else the tools that missed on tuning cases, most misses
first) the rewriter proposes K descriptions from the tool, its confusable neighbours and its failed
tuning prompts (rewriting.py); each is asked the tuning cases and the best goes on to the held-out
cases, judged sample by sample against the current description (acceptance.py). Every request goes
through the pool and the answer cache, so a re-run is free; the most it can ask is said first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..acceptance import BeforeAfter, Judged, judge, none_passed
from ..config import Loaded
from ..errors import ConfigError
from ..golden import Case
from ..offer import wire_tools
from ..providers import Provider
from ..providers.call import ModelCall
from ..providers.registry import PROVIDERS
from ..report.schema import CaseOut, Report, SampleOutcome
from ..resolve import load_cases
from ..rewriting import Candidate, Rival, propose
from ..settings import Settings
from ..split import Split, split_cases
from ..surface import Surface, build_surface
from ..throttle import Throttle
from .execute import execute
from .prepare import Hooks, load_surface, pacer, prepare

MAX_TARGETS = 3  # tools rewritten in one run when none is named


@dataclass(frozen=True)
class Tried:
    candidate: Candidate
    tuning: int  # tuning samples passing with it


@dataclass(frozen=True)
class Fix:
    """One target tool's rewrites: what was tried, the held-out verdict of the best, the line that
    says it."""

    tool: str
    current: str
    tried: tuple[Tried, ...]
    judged: Judged | None  # the best candidate's held-out test
    best: Tried | None
    note: str

    @property
    def accepted(self) -> Tried | None:
        return self.best if self.judged is not None and self.judged.accepted else None


@dataclass(frozen=True)
class Fixes:
    split: Split
    fixes: tuple[Fix, ...]
    most_requests: int  # the most the run could ask, said before anything was asked
    rewriter: str = ""  # provider:model of the model that wrote the candidates


def with_description(surface: Surface, tool: str, description: str) -> Surface:
    """The surface with one tool's description replaced (everything else as listed)."""
    definitions = [dict(d, description=description) if d.get("name") == tool else dict(d) for d in surface.definitions]
    return build_surface(definitions, surface.origin)


async def run_fix(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    tools: Sequence[str] = (),
    hooks: Hooks = Hooks(),
    said: Callable[[str], None] = print,
    surface: Surface | None = None,
    keys: set[str] | None = None,
    dry_run: bool = False,
) -> Fixes:
    """`surface`: the tool surface as already listed (the Action's head run); else it is loaded.
    `keys`: the answer cache's keys this session already used (the Action's eval): the cache's
    manifest lists them with the fix's, so pruning keeps every answer of the run. `dry_run`: say the
    most it could ask, and ask nothing (no key needed)."""
    session = keys if keys is not None else set()
    cases = load_cases(loaded, settings)
    surface = surface or await load_surface(settings, environ, hooks.on_note)
    for name in tools:
        if surface.get(name) is None:
            raise ConfigError(f"--tool {name}: no such tool on the surface ({', '.join(surface.names)})")
    split = split_cases(cases, seed=settings.seed or 0)
    tuning = [c for c in cases if c.name in split.tuning]
    held = [c for c in cases if c.name in split.holdout]
    if not tuning or not held:
        raise ConfigError("fix needs cases on both sides of the held-out split: add more golden cases (3 per tool)")
    one = settings.each_model()[0]
    k = settings.candidates
    writer_call = settings.rewriter or one.call  # the rewriter: its own model, else the run's first
    if not PROVIDERS[writer_call.provider].api:
        raise ConfigError(
            f"fix needs a model that writes, and {writer_call.provider} doesn't",
            hint="add --rewriter anthropic:<model> (or openai:, openai-responses:, gemini:), or run on an API provider",
        )
    first = await prepare(one, cases, environ, surface=surface, connect=not dry_run)  # what the current surface asks
    per_tool = k * len(tuning) * one.repeat + len(held) * one.repeat  # the model's, per tool rewritten
    targets_most = len(tools) or MAX_TARGETS
    most = first.budget.requests + targets_most * (per_tool + 1)
    cost = await _cost_ceiling(one, cases, environ, surface, most - targets_most)
    writing = _rewriter_cost(
        writer_call, one.price if settings.rewriter is None else None, surface, tools, len(tuning), k
    )
    if cost is not None:
        cost = None if writing is None else cost + writing * targets_most
    priced = f", ≈ ${cost:.4f}" if cost is not None else ""
    said(
        f"fix: at most {most} requests{priced} ({first.budget.requests} for the current descriptions, "
        f"then per tool rewritten: 1 to the rewriter {_label(writer_call)}"
        + (f" (≈ ${writing:.4f})" if writing is not None else " (no price known)")
        + f" and {per_tool} to test its {k} candidates on {len(tuning)} tuning and {len(held)} held-out cases)"
    )
    for line in _too_few(tools or surface.names, tuning, held):
        said(f"fix: warning: {line}")
    over = _over_budget(settings, one.call.model, most, cost)
    if over is not None:
        await first.aclose()
        raise over
    if dry_run:
        await first.aclose()
        return Fixes(split, (), most, _label(writer_call))
    current = await execute(first, cache_keys=session)
    targets = list(tools) or _targets(current, {c.name for c in tuning})
    said(f"fix: {len(targets)} tool(s) to rewrite ({', '.join(targets) or 'none missed'})")
    from ..providing import make_provider

    throttle = Throttle(settings.concurrency, pacer(settings))
    writer = make_provider(writer_call, throttle, environ, settings.cache_dir, settings.cache_mode)
    fixes = []
    try:
        for tool in targets:
            fixes.append(
                await _fix_one(tool, surface, current, tuning, held, one, environ, writer, throttle, k, session)
            )
    finally:
        await writer.aclose()
        writer.finish(session)
    return Fixes(split, tuple(fixes), most, _label(writer_call))


def _over_budget(settings: Settings, model: str, most: int, cost: float | None) -> ConfigError | None:
    """Why `most` requests (costing at most `cost`) are over --max-requests or --max-cost; None: within."""
    if settings.max_requests is not None and most > settings.max_requests:
        return ConfigError(
            f"fix could ask up to {most} requests, over --max-requests {settings.max_requests}",
            hint="name fewer tools (--tool), fewer candidates (--candidates), or raise --max-requests",
        )
    if settings.max_cost is None or (cost is not None and cost <= settings.max_cost):
        return None
    if cost is None:
        return ConfigError(
            f"--max-cost is ${settings.max_cost:g} but no price is known for {model}: fix can't be held to it",
            hint="set evals.price: {input: USD, output: USD} (per million tokens), or drop max_cost",
        )
    return ConfigError(
        f"fix could cost up to ≈ ${cost:.4f}, over --max-cost ${settings.max_cost:g}",
        hint="name fewer tools (--tool), fewer candidates (--candidates), or raise --max-cost",
    )


async def _cost_ceiling(
    settings: Settings, cases: list[Case], environ: Mapping[str, str], surface: Surface, most: int
) -> float | None:
    """The most `most` requests could cost: each priced as the average request of a whole pass
    over the cases with nothing cached (None when the model has no known price)."""
    whole = await prepare(replace(settings, cache_mode="off"), cases, environ, surface=surface, connect=False)
    await whole.aclose()
    budget = whole.budget
    if budget.local:
        return 0.0
    if budget.cost_usd is None or not budget.requests:
        return None
    return most * budget.cost_usd / budget.requests


REWRITER_OUTPUT = 220  # tokens a rewriter answers per candidate (a description and why), estimated
MIN_TO_LEARN = 2  # tuning cases a tool needs before a rewrite is learned from them


def _rewriter_cost(
    writer: ModelCall,
    own_price: Mapping[str, float | None] | None,
    surface: Surface,
    tools: Sequence[str],
    tuning: int,
    k: int,
) -> float | None:
    """What one rewriter request costs, estimated: the tool's definition, the failing prompts and the
    instructions in; k candidates out (None: no price known for the rewriter's model). `own_price`:
    evals.price, when the rewriter is the run's model."""
    from ..budget import prefix_tokens
    from ..prices import price_for

    if not PROVIDERS[writer.provider].api:
        return 0.0
    found = price_for(writer.model, own_price)
    if found is None:
        return None
    heaviest = max((prefix_tokens([t], None) for t in wire_tools(surface) if not tools or t.name in tools), default=0)
    tokens_in, tokens_out = heaviest + 40 * min(tuning, 20) + 600, REWRITER_OUTPUT * k
    price = found[0]
    return (tokens_in * price.input + tokens_out * price.output) / 1_000_000


def _too_few(tools: Iterable[str], tuning: Sequence[Case], held: Sequence[Case]) -> list[str]:
    """The tools with too few cases to learn a rewrite from, or to test one on."""
    out = []
    for tool in tools:
        learn = sum(tool in c.expected for c in tuning)
        test = sum(tool in c.expected for c in held)
        if (learn or test) and (learn < MIN_TO_LEARN or test < 1):
            out.append(
                f"{tool} has {learn} tuning and {test} held-out case(s): too few to learn a rewrite from and test it "
                f"(add cases: at least {MIN_TO_LEARN} tuning and 1 held-out, 3–5 per tool)"
            )
    return out


def _label(call: ModelCall) -> str:
    return f"{call.provider}:{call.model}"


async def _fix_one(
    tool: str,
    surface: Surface,
    current: Report,
    tuning: list[Case],
    held: list[Case],
    settings: Settings,
    environ: Mapping[str, str],
    writer: Provider,
    throttle: Throttle,
    k: int,
    session: set[str],
) -> Fix:
    definition = surface.get(tool)
    assert definition is not None
    tuning_names = {c.name for c in tuning}
    missed = [c for c in current.cases if c.name in tuning_names and _expects(c.expect_tool, tool) and _failed(c)]
    failing = [c.prompt for c in missed]
    confused = sorted(
        ((n, col) for col, n in current.confusion.get(tool, {}).items() if col != tool and surface.get(col)),
        reverse=True,
    )
    rivals = [Rival(col, surface.get(col).description) for _, col in confused[:3]]  # type: ignore[union-attr]
    candidates, problem = await propose(
        writer, throttle, tool, definition.description, definition.input_schema, rivals, failing, k
    )
    if not candidates:
        return Fix(tool, definition.description, (), None, None, f"no rewrite for {tool}: {problem}")
    tried = []
    for candidate in candidates:
        report = await _ask(settings, tuning, environ, with_description(surface, tool, candidate.description), session)
        tried.append(Tried(candidate, report.metrics["accuracy"].numerator))
    best = max(tried, key=lambda t: t.tuning)  # a tie: the rewriter's own order (the first of the best)
    after = await _ask(settings, held, environ, with_description(surface, tool, best.candidate.description), session)
    judged = judge(_paired(current, after), tool, definition.description, best.candidate.description,
                   alpha=settings.gate.alpha)  # fmt: skip
    note = f"{tool}: {judged.why}" if judged.accepted else none_passed(tool, len(tried), judged)
    return Fix(tool, definition.description, tuple(tried), judged, best, note)


async def _ask(
    settings: Settings, cases: list[Case], environ: Mapping[str, str], surface: Surface, session: set[str]
) -> Report:
    """`cases` asked on `surface`, through the answer cache: the report."""
    prep = await prepare(settings, cases, environ, surface=surface)
    return await execute(prep, cache_keys=session)


def _targets(report: Report, tuning: set[str]) -> list[str]:
    """The tools that missed on tuning cases, most misses first."""
    misses: dict[str, int] = {}
    for case in report.cases:
        if case.name not in tuning or not isinstance(case.expect_tool, str):
            continue
        failed = sum(s.outcome not in (SampleOutcome.PASS, SampleOutcome.NOT_EVALUATED) for s in case.samples)
        if failed:
            misses[case.expect_tool] = misses.get(case.expect_tool, 0) + failed
    return [t for t, _ in sorted(misses.items(), key=lambda kv: (-kv[1], kv[0]))][:MAX_TARGETS]


def _expects(expect: str | list[str] | None, tool: str) -> bool:
    return expect == tool or (isinstance(expect, list) and tool in expect)


def _failed(case: CaseOut) -> bool:
    return any(s.outcome != SampleOutcome.PASS for s in case.samples)


def _paired(before: Report, after: Report) -> list[BeforeAfter]:
    """Each held-out sample with and without the rewrite (same case, same sample index)."""
    was = {(c.name, s.index): s.outcome == SampleOutcome.PASS for c in before.cases for s in c.samples}
    out = []
    for case in after.cases:
        expect = case.expect_tool if isinstance(case.expect_tool, str) else None
        for s in case.samples:
            if s.outcome == SampleOutcome.NOT_EVALUATED or (case.name, s.index) not in was:
                continue
            out.append(BeforeAfter(expect, was[(case.name, s.index)], s.outcome == SampleOutcome.PASS))
    return out


def description_source(settings: Settings, tool: str, description: str = "") -> Path | None:
    """The file that holds a tool's description: the frozen tools file, or the server's source."""
    if settings.tools_file is not None:
        return settings.tools_file
    server = settings.server
    if server is not None and server.command and server.cwd is not None:
        from ..locate import source_lines

        found = source_lines(server.cwd, {tool: description}).get(tool)
        return server.cwd / found[0] if found else None
    return None
