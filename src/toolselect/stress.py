"""The stress test (seed 003's RAG-MCP measurement, on the user's own cases): the tool surface grows
with distractors — tools of other servers offered beside the user's — and selection accuracy is
measured at each size. Pure: (surface, pool, size, seed) → the surface offered; (results per size
and seed) → the curve, the cliff and the culprits.

- **Draws.** For each seed the pool is shuffled once (seeded, recorded) and a size takes the first
  `size` distractors of that order, so a seed's surfaces are nested: what hurts at 25 is still there
  at 50. The user's tools are always all present; the order offered is shuffled per size and seed.
- **Names.** A distractor whose name collides with one of the user's tools or with another tool of
  the pool is offered as `<server>__<tool>`, as MCP clients that mount several servers do; every
  collision is reported. Decided over the whole pool, so a tool keeps its name at every size.
- **The cliff** is the smallest size at which accuracy is significantly below the accuracy with no
  distractors: the exact sign test over cases on their pass rates (each case's pass rate at that
  size, over its seeds and samples, against its pass rate alone), p < α and a drop.
- **Culprits**: each distractor picked instead of one of the user's tools (or instead of no call),
  with how often and at which sizes — shadowing, measured.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import Field

from .report.build import counted
from .report.schema import Count
from .retrieval import Ranking, recall_at
from .scoring import Result
from .stats import cluster_bootstrap, sign_test, wilson
from .strict import Record
from .surface import Neighbour, Surface, build_surface
from .taxonomy import SampleOutcome

SEPARATOR = "__"  # server__tool, the way clients prefix tools of several servers
DEFAULT_SIZES = (0, 10, 25, 50, 100, 200)
DEFAULT_SEEDS = 3


@dataclass(frozen=True)
class Collision:
    tool: str
    server: str
    offered_as: str


@dataclass(frozen=True)
class Composed:
    """The surface offered at one size and seed: the user's tools, the drawn distractors (offered
    name → the neighbour), and the names that had to be prefixed."""

    size: int
    seed: int
    surface: Surface
    distractors: Mapping[str, Neighbour]
    collisions: tuple[Collision, ...] = ()


def draw_order(pool: Sequence[Neighbour], seed: int) -> list[int]:
    """The seed's order of the pool; a size takes its first `size` entries."""
    order = list(range(len(pool)))
    random.Random(f"stress:{seed}").shuffle(order)
    return order


def compose(user: Surface, pool: Sequence[Neighbour], size: int, seed: int) -> Composed:
    """The user's surface plus `size` distractors drawn for `seed` (fewer when the pool is smaller)."""
    drawn = [pool[i] for i in draw_order(pool, seed)[:size]]
    taken = set(user.all_names)
    names = Counter(str(n.definition.get("name", "")) for n in pool)  # the whole pool: a name is stable across sizes
    offered: dict[str, Neighbour] = {}
    collisions = []
    definitions = [dict(d) for d in user.definitions]
    for n in drawn:
        name = str(n.definition.get("name", ""))
        final = name
        if name in taken or names[name] > 1:
            final = f"{n.server}{SEPARATOR}{name}"
            k = 2
            while final in taken:
                final, k = f"{n.server}{SEPARATOR}{name}{SEPARATOR}{k}", k + 1
            collisions.append(Collision(name, n.server, final))
        taken.add(final)
        offered[final] = n
        definitions.append({**n.definition, "name": final})
    random.Random(f"stress:{seed}:{size}:order").shuffle(definitions)
    surface = build_surface(definitions, f"{user.origin} + {len(drawn)} distractors (seed {seed})")
    return Composed(size, seed, surface, offered, tuple(collisions))


# --------------------------------------------------------------------------- the curve


@dataclass(frozen=True)
class Rate:
    k: int
    n: int
    ci: tuple[float, float] | None = None

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class Point:
    """One size: accuracy (interval: a cluster bootstrap over cases), how often no tool was called,
    the tools actually offered and the mean input tokens per request."""

    size: int
    tools: int
    accuracy: Rate
    no_call: Rate
    tokens_per_request: float | None
    samples: int
    tokens_estimated: bool = False  # no input tokens counted by an API: estimated from the request's text


@dataclass(frozen=True)
class Cliff:
    size: int
    p_value: float
    delta_pt: float  # mean per-case change against no distractors, in points
    improved: int
    worsened: int


@dataclass(frozen=True)
class Culprit:
    distractor: str  # as offered (maybe prefixed)
    server: str
    instead_of: str  # the user's tool it shadowed, or "(none)" when no call was right
    count: int
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class Curve:
    points: tuple[Point, ...]
    cliff: Cliff | None
    culprits: tuple[Culprit, ...]
    collisions: tuple[Collision, ...] = field(default=())


def curve(runs: Sequence[tuple[Composed, Sequence[Result]]], alpha: float = 0.05) -> Curve:
    """The curve over sizes, the cliff and the culprits, from each (size, seed)'s scored samples."""
    by_size: dict[int, list[tuple[Composed, Result]]] = {c.size: [] for c, _ in runs}  # every size run
    for composed, results in runs:
        by_size[composed.size].extend((composed, r) for r in results if counted(r))
    points = []
    rates: dict[int, dict[str, float]] = {}
    for size in sorted(by_size):
        items = by_size[size]
        results = [r for _, r in items]
        per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in results:
            per_case[r.case.name][0] += r.passed
            per_case[r.case.name][1] += 1
        rates[size] = {name: k / n for name, (k, n) in per_case.items()}
        passed = sum(r.passed for r in results)
        ci = cluster_bootstrap([k for k, _ in per_case.values()], [n for _, n in per_case.values()])
        answered = [r for r in results if r.outcome is not SampleOutcome.ERROR]  # an error is no answer, not "no call"
        no_call = sum(r.pick.tool is None for r in answered)
        tokens = [r.pick.usage.prompt_tokens for r in results if r.pick.usage and r.pick.usage.prompt_tokens]
        estimated = not tokens
        if estimated:  # about four characters per token, as the budget estimates
            tokens = [_request_tokens(c.surface, r.case.prompt) for c, r in items]
        tools = max((len(c.surface.tools) for c, _ in items), default=0)
        points.append(
            Point(
                size=size,
                tools=tools,
                accuracy=Rate(passed, len(results), ci),
                no_call=Rate(no_call, len(answered), wilson(no_call, len(answered))),
                tokens_per_request=sum(tokens) / len(tokens) if tokens else None,
                samples=len(results),
                tokens_estimated=estimated and bool(tokens),
            )
        )
    cliff = _cliff(rates, alpha)
    culprits = _culprits(runs)
    collisions = {(c.tool, c.server, c.offered_as): c for composed, _ in runs for c in composed.collisions}
    return Curve(tuple(points), cliff, culprits, tuple(collisions.values()))


def _request_tokens(surface: Surface, prompt: str) -> int:
    text = json.dumps([[t.wire_name, t.description, t.input_schema] for t in surface.tools]) + prompt
    return len(text) // 4 + 20


def _cliff(rates: Mapping[int, Mapping[str, float]], alpha: float) -> Cliff | None:
    alone = rates.get(0)
    if not alone:
        return None
    for size in sorted(s for s in rates if s > 0):
        common = [name for name in rates[size] if name in alone]
        deltas = [rates[size][n] - alone[n] for n in common]
        improved, worsened = sum(d > 0 for d in deltas), sum(d < 0 for d in deltas)
        p = sign_test(improved, worsened)
        mean = sum(deltas) / len(deltas) if deltas else 0.0
        if p < alpha and mean < 0:
            return Cliff(size, p, round(mean * 100, 6), improved, worsened)
    return None


def _culprits(runs: Sequence[tuple[Composed, Sequence[Result]]]) -> tuple[Culprit, ...]:
    found: Counter[tuple[str, str, str]] = Counter()
    sizes: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for composed, results in runs:
        for r in results:
            picked = r.pick.tool
            if not counted(r) or picked is None or picked not in composed.distractors:
                continue
            if r.case.expected and picked in r.case.expected:
                continue
            key = (picked, composed.distractors[picked].server, r.case.expected[0] if r.case.expected else "(none)")
            found[key] += 1
            sizes[key].add(composed.size)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple(Culprit(d, s, i, n, tuple(sorted(sizes[(d, s, i)]))) for (d, s, i), n in ranked)


def sparkline(values: Sequence[float | None]) -> str:
    """Accuracy per size as a one-line chart: ▁ (0%) to █ (100%), · where nothing was measured."""
    bars = "▁▂▃▄▅▆▇█"
    return "".join("·" if v is None else bars[min(len(bars) - 1, int(v * (len(bars) - 1) + 0.5))] for v in values)


# --------------------------------------------------------------------------- the JSON report


Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class RateOut(Record):
    value: Share | None
    numerator: Count
    denominator: Count
    ci: tuple[Share, Share] | None = None


class PointOut(Record):
    size: Count  # distractors added
    tools: Count  # tools offered in all
    accuracy: RateOut
    no_call_rate: RateOut
    tokens_per_request: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None  # mean input tokens
    tokens_estimated: bool = False  # true: no API counted them; about four characters per token
    samples: Count


class CliffOut(Record):
    size: Count
    p_value: Share
    delta_pt: Annotated[float, Field(ge=-100, le=100, allow_inf_nan=False)]
    improved: Count
    worsened: Count


class CulpritOut(Record):
    distractor: str
    server: str
    instead_of: str
    count: Count
    sizes: list[Count]


class CollisionOut(Record):
    tool: str
    server: str
    offered_as: str


class SourceOut(Record):
    server: str
    origin: str
    tools: Count


class StressRunOut(Record):
    toolselect_version: str
    provider: str
    model: str
    cases: Count
    repeat: Count
    seeds: list[int]
    alpha: Share
    started_at: str
    duration_s: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    api_calls: Count = 0
    cache_hits: Count = 0


class RetrievalOut(Record):
    """Seed 003's RAG-MCP shape on the user's cases: recall@k of the retriever over the whole pool,
    and selection accuracy with only the top k offered next to accuracy with every tool offered."""

    retriever: str
    pool_tools: Count
    top_k: Count
    recall: dict[Literal["1", "3", "5", "10"], RateOut]  # k → share of cases with an expected tool in the top k
    accuracy_top_k: RateOut
    accuracy_all: RateOut


class StressGateOut(Record):
    min_accuracy_at: dict[Annotated[int, Field(ge=0)], Share] = Field(default_factory=dict)  # size → floor
    fail_on_cliff_move: bool = False


class StressReport(Record):
    """`toolselect stress --json` (docs/stress.md): the curve, the cliff, the culprits."""

    stress_version: Literal[1] = 1
    points: list[PointOut] = Field(max_length=1_000)
    cliff: CliffOut | None
    culprits: list[CulpritOut] = Field(max_length=100_000)
    collisions: list[CollisionOut] = Field(max_length=100_000)
    sources: list[SourceOut] = Field(max_length=10_000)
    retrieval: RetrievalOut | None = None
    gate: StressGateOut = Field(default_factory=StressGateOut)  # the stress gate this run was judged under
    run: StressRunOut
    warnings: list[str] = Field(default_factory=list)


def _rate(r: Rate) -> RateOut:
    return RateOut(value=r.value, numerator=r.k, denominator=r.n, ci=r.ci)


def stress_report(
    result: Curve,
    sources: Sequence[Any],
    run: StressRunOut,
    warnings: Sequence[str] = (),
    retrieval: RetrievalOut | None = None,
    gate: StressGateOut | None = None,
) -> StressReport:
    return StressReport(
        retrieval=retrieval,
        gate=gate or StressGateOut(),
        points=[
            PointOut(
                size=p.size,
                tools=p.tools,
                accuracy=_rate(p.accuracy),
                no_call_rate=_rate(p.no_call),
                tokens_per_request=None if p.tokens_per_request is None else round(p.tokens_per_request, 1),
                tokens_estimated=p.tokens_estimated,
                samples=p.samples,
            )
            for p in result.points
        ],
        cliff=CliffOut(**vars(result.cliff)) if result.cliff else None,
        culprits=[CulpritOut(**{**vars(c), "sizes": list(c.sizes)}) for c in result.culprits],
        collisions=[CollisionOut(**vars(c)) for c in result.collisions],
        sources=[SourceOut(server=s.server, origin=s.origin, tools=s.tools) for s in sources],
        run=run,
        warnings=list(warnings),
    )


def _accuracy(results: Sequence[Result]) -> Rate:
    kept = [r for r in results if counted(r)]
    per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in kept:
        per_case[r.case.name][0] += r.passed
        per_case[r.case.name][1] += 1
    ci = cluster_bootstrap([k for k, _ in per_case.values()], [n for _, n in per_case.values()])
    return Rate(sum(r.passed for r in kept), len(kept), ci)


def retrieval_out(
    retriever: str,
    rankings: Sequence[Ranking],
    top_k: int,
    narrowed: Sequence[Result],
    everything: Sequence[Result],
    pool_tools: int,
) -> RetrievalOut:
    return RetrievalOut(
        retriever=retriever,
        pool_tools=pool_tools,
        top_k=top_k,
        recall={
            cast(Literal["1", "3", "5", "10"], str(k)): _rate(Rate(hit, n, wilson(hit, n)))
            for k, (hit, n) in recall_at(rankings).items()
        },
        accuracy_top_k=_rate(_accuracy(narrowed)),
        accuracy_all=_rate(_accuracy(everything)),
    )


# --------------------------------------------------------------------------- the gate


def stress_reasons(head: StressReport, base: StressReport | None) -> list[str]:
    """Why the stress gate the head's run recorded fails: a size below its `min_accuracy_at` floor,
    or (`fail_on_cliff_move`) a cliff at fewer distractors than the base's, or one the base lacked."""
    floors, cliff_move = head.gate.min_accuracy_at, head.gate.fail_on_cliff_move
    reasons = []
    run = {p.size: p for p in head.points}
    largest = max(run, default=0)
    for size, floor in sorted(floors.items()):
        point = run.get(size) or (run.get(largest) if size > largest else None)  # capped by the pool or the API
        if point is None:
            reasons.append(f"min_accuracy_at names {size} distractors, which was not run (sizes: {sorted(run)})")
        elif point.accuracy.value is None:
            reasons.append(f"min_accuracy_at names {size} distractors, but nothing was evaluated there")
        elif point.accuracy.value is not None and point.accuracy.value < floor - 1e-12:
            reasons.append(
                f"accuracy with {size} distractors is {point.accuracy.value:.1%} "
                f"({point.accuracy.numerator}/{point.accuracy.denominator}), below min_accuracy_at {floor:.0%}"
            )
    if cliff_move and base is not None and head.cliff is not None:
        if base.cliff is None:
            reasons.append(f"a cliff appeared at {head.cliff.size} distractors; the base had none")
        elif head.cliff.size < base.cliff.size:
            reasons.append(f"the cliff moved left: {base.cliff.size} → {head.cliff.size} distractors")
    return reasons


MAX_STRESS_BYTES = 8 * 1024 * 1024


def read_stress_report(path: Path) -> StressReport:
    """A saved stress report (maybe another run's artifact: untrusted), bounded and validated."""
    from pydantic import ValidationError

    from .errors import ConfigError

    try:
        size = path.stat().st_size
        if size > MAX_STRESS_BYTES:
            raise ConfigError(f"{path}: {size:,} bytes, more than a stress report can be ({MAX_STRESS_BYTES:,})")
        report = StressReport.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{path}: not a readable stress report ({exc.strerror or exc})") from None
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        at = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{path}: not a toolselect stress report: {at}: {first['msg']}") from None
    if len(report.points) > 1_000 or len(report.culprits) > 100_000:
        raise ConfigError(f"{path}: not a toolselect stress report: too many points or culprits")
    return report
