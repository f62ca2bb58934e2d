"""What a run will cost before it asks anything: requests, answers already cached, tokens, dollars.

Tokens are estimated from the request's text (about four characters per token for the tool list,
the prompt and the system prompt, plus a small answer); the estimate is for budgeting, the report
records what the API actually counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .ask import Job, Loop, Offered, looped
from .errors import ConfigError
from .offer import Offer
from .perlist import PerList
from .pick import Usage
from .prices import CACHE_MIN_TOKENS, cost_usd
from .providers import Provider, Request, WireTool
from .providers.search import RESULTS
from .settings import Settings
from .surface import Surface

ANSWER_TOKENS = 40  # a tool call and its arguments, or a short reply


@dataclass(frozen=True)
class Budget:
    provider: str
    model: str
    samples: int
    cached: int  # answers already in the cache
    requests: int  # uncached requests the run would send to the model API (0 for local providers)
    not_evaluated: int  # --cache-only: samples that will be NOT-EVALUATED
    input_tokens: int  # neither written to nor read from the API's prompt cache
    output_tokens: int
    cost_usd: float | None
    local: bool
    prompt_cache_write_tokens: int = 0
    prompt_cache_read_tokens: int = 0
    driven: str = ""  # the real client each sample runs (its requests sized as captured)


def driven_overhead(offer: Offer) -> int:
    """For a driven client, the tokens each of its requests carries beyond what its profile's stubs say:
    its own system prompt and built-ins at their captured sizes, less the stubs' (0 when not driven,
    or no capture says)."""
    presented = offer.presented
    if offer.driven is None or presented is None or presented.profile.observed is None:
        return 0
    p, seen = presented.profile, presented.profile.observed
    own = {b.name for b in p.builtins}
    real = seen.system.chars + sum(b.chars for b in seen.builtins if b.name in own)
    stubs = len(p.system or "") + sum(len(json.dumps([b.name, b.description, b.input_schema])) for b in p.builtins)
    return max(0, real - stubs) // 4


def prefix_tokens(tools: Sequence[WireTool], system: str | None) -> int:
    """The tokens every request of one tool order shares (the tool list, then the system prompt)."""
    return len(json.dumps([[t.name, t.description, t.input_schema] for t in tools]) + (system or "")) // 4


_prefixes: PerList[int] = PerList()  # the tokens of each tool list and system prompt


def _tokens(request: Request) -> int:
    """A request's tokens: its tool list's and system prompt's counted once per tool list, not per sample."""
    shared = _prefixes.get(
        request.tools, (request.search, request.system), lambda: prefix_tokens(sent_tools(request), request.system)
    )
    return shared + len(request.prompt) // 4 + 20


def sent_tools(request: Request) -> Sequence[WireTool]:
    """The definitions a request puts in the model's context: behind the API's tool search, the eager
    tools and about one search's worth of found ones (the heaviest, to err on the side of cost)."""
    if request.search is None:
        return request.tools
    eager = [t for t in request.tools if t.name in request.search.eager]
    deferred = sorted(
        (t for t in request.tools if t.name not in request.search.eager), key=lambda t: -len(t.description)
    )
    return [*eager, *deferred[: RESULTS[request.search.mode]]]


def _replay(provider: Provider, conversation: Loop, planned: set[str]) -> tuple[int, int]:
    """(turns found in the cache, turns still to ask) of one sample asked in a loop (a trajectory's
    conversation, a deferred client's searches before the pick)."""
    found = 0
    while (turn := conversation.next_request()) is not None:
        key = provider.answer_key(turn)
        answer = provider.cached_answer(key) if key is not None else None
        if answer is None:
            if key is not None and key in planned:
                return found + 1, 0  # the other side asks it first: what follows is unknown, not ours to count
            if key is not None:
                planned.add(key)
            return found, max(1, conversation.max_turns - found)  # the most it can take: never over a budget
        found += 1
        conversation.record(answer)
    return found, 0


def estimate(
    provider: Provider,
    jobs: Sequence[Job],
    offer: Offer,
    settings: Settings,
    planned: set[str] | None = None,
    surface: Surface | None = None,
) -> Budget:
    """`planned`: keys another side of the run will already have asked (counted as cached here);
    this side's uncached keys are added to it. A trajectory sample's cached turns are walked with
    its stubs (`surface` maps the names back); past the cache it is counted at the most it can take,
    max_turns requests in all, so `max_requests` is a ceiling the run can't exceed."""
    local = not provider.cacheable  # answered by a local program or bm25: no API request
    cached = uncached = tokens = not_evaluated = 0
    planned = planned if planned is not None else set()
    offered = Offered(offer)
    extra = driven_overhead(offer)
    prefixes: dict[tuple[int, ...] | None, int] = {}  # the tokens each order's requests share
    written: set[tuple[int, ...] | None] = set()
    write = read = 0
    single = Usage(0, 0)  # the single-turn requests' share of the tokens

    def count(order: tuple[int, ...] | None, request: Request, times: int) -> int:
        """`times` requests of this order: their uncached tokens; the shared prefix is written once
        (by the first, the warm-up) and read by the others when the prompt cache is on and long enough."""
        nonlocal write, read
        whole = (_tokens(request) + extra) * times
        if not settings.prompt_cache or local:
            return whole
        if order not in prefixes:
            prefixes[order] = prefix_tokens(sent_tools(request), request.system)
        prefix = prefixes[order]
        if prefix < CACHE_MIN_TOKENS:
            return whole
        reads = times - (order not in written)
        write += prefix * (times - reads)
        read += prefix * reads
        written.add(order)
        return whole - prefix * times

    for job in () if offer.refused else jobs:  # a client that can't present the surface: nothing is sent
        request = offered.request(job)
        loop = looped(surface, request, job, offer) if surface is not None else None
        if loop is not None:
            asked, missing = _replay(provider, loop, planned)
            cached += asked
            if missing:
                uncached += missing
                not_evaluated += 1
                tokens += count(job.order, request, missing)
            continue
        key = provider.answer_key(request)
        if key is not None:
            if key in planned or provider.has_answer(key):
                cached += 1
                continue
            planned.add(key)
        uncached += 1
        not_evaluated += 1
        before = (tokens, write, read)
        tokens += count(job.order, request, 1)
        single = single + Usage(tokens - before[0], ANSWER_TOKENS, write - before[1], read - before[2])
    only = settings.cache_mode == "only"
    requests = 0 if local or only else uncached
    out = ANSWER_TOKENS * requests
    if not requests:
        tokens = write = read = 0
    whole = Usage(tokens, out, write, read)
    # --batch: the single-turn requests go at the batch price (a trajectory's turns one by one)
    batched = single if settings.batch and provider.batchable and requests else None
    if batched is not None:
        whole = Usage(
            tokens - (single.input_tokens or 0),
            out - (single.output_tokens or 0),
            write - single.prompt_cache_write_tokens,
            read - single.prompt_cache_read_tokens,
        )
    return Budget(
        provider=settings.call.provider,
        model=settings.call.model,
        samples=len(jobs),
        cached=cached,
        requests=requests,
        not_evaluated=not_evaluated if only and not local else 0,
        input_tokens=tokens,
        output_tokens=out,
        cost_usd=cost_usd(settings.call.model, whole, settings.price, batched=batched) if requests else 0.0,
        local=local,
        prompt_cache_write_tokens=write,
        prompt_cache_read_tokens=read,
        driven=f"{offer.driven.name} {offer.driven.version}" if offer.driven is not None else "",
    )


def check_budget(budgets: Sequence[Budget], limit: int | None, max_cost: float | None = None) -> None:
    """Refuse to start a run over `max_requests` or `max_cost` (counted over every side: head and base)."""
    total = sum(b.requests for b in budgets)
    if limit is not None and total > limit:
        sides = " + ".join(f"{b.requests}" for b in budgets)
        raise ConfigError(
            f"this run would send {total} uncached model requests ({sides}), more than max_requests {limit}",
            hint="raise max_requests, use fewer cases or repeats, or fill the answer cache first (see --dry-run)",
        )
    if max_cost is None or not total:
        return
    unknown = sorted({b.model for b in budgets if b.requests and b.cost_usd is None})
    if unknown:
        raise ConfigError(
            f"max_cost is ${max_cost:g} but no price is known for {', '.join(unknown)}: the run can't be held to it",
            hint="set evals.price: {input: USD, output: USD} (per million tokens), or drop max_cost",
        )
    cost = sum(b.cost_usd or 0.0 for b in budgets)
    if cost > max_cost:
        sides = " + ".join(f"${b.cost_usd or 0.0:.4f}" for b in budgets)
        raise ConfigError(
            f"this run would cost ≈ ${cost:.4f} ({sides}), more than max_cost ${max_cost:g}",
            hint="raise max_cost, use fewer cases or repeats, or fill the answer cache first (see --dry-run)",
        )


def describe(budget: Budget, side: str) -> str:
    if budget.local:
        return f"{side}: {budget.samples} samples, answered locally by {budget.provider} (no API requests)"
    cost = "no price known for this model" if budget.cost_usd is None else f"≈ ${budget.cost_usd:.4f}"
    extra = f", {budget.not_evaluated} would be NOT-EVALUATED (--cache-only)" if budget.not_evaluated else ""
    w, r = budget.prompt_cache_write_tokens, budget.prompt_cache_read_tokens
    cached = f" (+ {w:,} written to and {r:,} read from the prompt cache)" if w or r else ""
    driven = (
        f", each through the real {budget.driven} (its requests sized as captured; the cache answers what it has "
        "as the client asks, so these are at most)"
        if budget.driven
        else ""
    )
    return (
        f"{side}: {budget.samples} samples, {budget.cached} already cached, {budget.requests} requests to "
        f"{budget.provider} {budget.model}{extra}{driven}; ≈ {budget.input_tokens:,} input{cached} + "
        f"{budget.output_tokens:,} output tokens, {cost}"
    )


def combined(budgets: Sequence[Budget]) -> Budget:
    """Several runs' budgets as one (a stress test's sizes and seeds)."""
    first = budgets[0]
    costs = [b.cost_usd for b in budgets]
    return Budget(
        provider=first.provider,
        model=first.model,
        samples=sum(b.samples for b in budgets),
        cached=sum(b.cached for b in budgets),
        requests=sum(b.requests for b in budgets),
        not_evaluated=sum(b.not_evaluated for b in budgets),
        input_tokens=sum(b.input_tokens for b in budgets),
        output_tokens=sum(b.output_tokens for b in budgets),
        prompt_cache_write_tokens=sum(b.prompt_cache_write_tokens for b in budgets),
        prompt_cache_read_tokens=sum(b.prompt_cache_read_tokens for b in budgets),
        cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
        local=first.local,
        driven=", ".join(sorted({b.driven for b in budgets if b.driven})),
    )
