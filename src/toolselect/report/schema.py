"""The report's records: what a run measured, as the JSON (`schema_version: 1`, documented in
docs/report-format.md) holds it — the literals and limits a report read back is held to, and the
one-line views of a case every renderer shares.

The renderers, the base-branch diff and the Action all read this one type, so a report loaded from
disk (report/files.py) and one just built (report/build.py) are handled the same way.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, Field

from ..explain import show
from ..severity import CriticalCode
from ..strict import Record
from ..taxonomy import DIMENSIONS, FAILURE_CODES, FailureCode, ReplyKind, SampleOutcome

SCHEMA_VERSION: Literal[1] = 1
NONE, UNKNOWN, ERROR = "(none)", "(unknown)", "(error)"
CLIENT_FAILED = "(client failed)"  # the client couldn't present the surface: nothing was sent
MISSING = "(tool missing)"  # the case expects a tool the surface does not have: nothing was sent
PENDING = "needs_review"

# The enumerated fields: a report read from disk (a fork PR's artifact is untrusted) holds one of
# these values or is refused; the JSON is the same strings.
Count = Annotated[int, Field(ge=0)]
CaseStatus = Literal["reviewed", "needs_review"]
CacheMode = Literal["use", "refresh", "only", "off"]  # as cache.Mode
CiMethod = Literal["wilson", "cluster bootstrap over cases"]
MetricName = Literal[
    "accuracy",
    "tool_accuracy",
    "arg_accuracy",
    "schema_valid_rate",
    "no_call_precision",
    "no_call_recall",
    "over_trigger_rate",
    "under_trigger_rate",
    "error_rate",
    "clarify_rate",
]
METRIC_NAMES: tuple[str, ...] = get_args(MetricName)
# shown only when measured, and absent from reports written before it (2026-12-04)
OPTIONAL_METRICS = frozenset({"clarify_rate"})


def shown_metric(report: Report, key: str) -> Metric | None:
    """A metric to show: None when the report lacks it or it is an optional one nothing measured."""
    m = report.metrics.get(key)
    return None if m is None or (key in OPTIONAL_METRICS and not m.denominator) else m


Third = Literal["first", "middle", "last"]
Sequence_ = Literal["strict", "in_order", "unordered", "any_of_these"]
LintCode = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,63}$")]  # e.g. "description-missing"
Label = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+~-]{0,63}$")
]  # a model's label (config.LABEL_PATTERN)
MODELS_SCHEMA_VERSION: Literal[2] = 2
MAX_MODELS = 16
SurfaceHash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]  # sha256 hex


def _keys_of(names: tuple[str, ...]) -> AfterValidator:
    """A mapping's keys must be among `names` (typed `str` keys, for callers that index by name)."""

    def check(value: dict[str, Any]) -> dict[str, Any]:
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"unknown key {show(unknown[0])} (known: {', '.join(names)})")
        return value

    return AfterValidator(check)


class Metric(Record):
    """A rate with its counts and a 95% interval; `value` is null when not measured (never 0)."""

    value: float | None
    numerator: Count
    denominator: Count
    ci: tuple[float, float] | None = None
    ci_method: CiMethod | None = None  # "cluster bootstrap over cases" when samples repeat


class ToolStats(Record):
    precision: Metric
    recall: Metric
    f1: float | None
    support: Count


class SourceOut(Record):
    file: str
    line: Count


class UsageOut(Record):
    input_tokens: Count | None = None  # not written to or read from the API's prompt cache
    output_tokens: Count | None = None
    prompt_cache_write_tokens: Count = Field(0, exclude_if=lambda v: v == 0)  # left out when none
    prompt_cache_read_tokens: Count = Field(0, exclude_if=lambda v: v == 0)


def only_when_set(default: Any = None) -> Any:
    """A field a single-call report leaves out (so its JSON stays as it was before trajectories):
    omitted when None, or, for a list or mapping default, when empty."""
    if isinstance(default, (list, dict)):
        return Field(default_factory=type(default), exclude_if=lambda v: not v)
    return Field(default, exclude_if=lambda v: v is None)


class TraceCallOut(Record):
    """One call in a trace (seed 004's tool_calls[]): name, arguments, when, the stub's answer."""

    name: str
    arguments: Any = None
    raw_arguments: str | None = only_when_set()
    turn: Count
    timestamp_ms: Annotated[float, Field(ge=0)]  # the model's time until the answer carrying the call
    result: Any = None
    error: str | None = only_when_set()


class TraceOut(Record):
    """Seed 004's trace capture schema, per sample of a trajectory case."""

    request: str
    tool_calls: list[TraceCallOut]
    final_response: str | None
    expected_tools: list[str]
    expected_no_tools: bool
    turns: Count
    hit_max_turns: bool = False


Score = Annotated[int, Field(ge=0, le=3)]


class JudgeOut(Record):
    """evals.judge's reading of a trajectory's final answer after a tool error."""

    surfaced: bool | None  # null: the judge answered neither yes nor no
    said: str = ""
    cached: bool = False


class ReplyOut(Record):
    """What a sample without a call replied: its kind, and who read it (the rules, or the judge)."""

    kind: ReplyKind
    by: Literal["rules", "judge"] = "rules"
    said: str = Field("", exclude_if=lambda v: not v)  # the judge's own words


class JudgeRunOut(Record):
    model: str
    api_calls: Count = 0
    cache_hits: Count = 0


class ScoresOut(Record):
    """Seed 004's four dimensions, 0–3 (null: the dimension doesn't apply), and the failure codes."""

    selection: Score | None
    arguments: Score | None
    recovery: Score | None
    restraint: Score
    codes: list[FailureCode] = Field(default_factory=list)


class SearchOut(Record):
    """A deferred client's search before the pick: the model's query and the tools it found."""

    query: str
    found: list[str] = Field(default_factory=list)


class CriticalOut(Record):
    """A critical misroute (severity.py): its code and the tool the sample called."""

    code: CriticalCode
    tool: str


class SampleOut(Record):
    index: Count
    outcome: SampleOutcome
    picked_tool: str | None
    picked_args: Any = None
    raw_args: str | None = None
    text: str = ""
    reasons: list[str] = Field(default_factory=list)
    calls: Count = 0
    cached: bool = False
    latency_ms: float | None = None
    usage: UsageOut | None = None
    stop_reason: str | None = None
    tool_order: list[str] | None = None  # the order the tools were offered in (shuffled samples)
    position: Count | None = None  # where the expected tool was in that order (0-based)
    trace: TraceOut | None = only_when_set()  # a trajectory case's whole conversation
    scores: ScoresOut | None = only_when_set()
    judge: JudgeOut | None = only_when_set()
    searched: list[SearchOut] = only_when_set([])  # a deferred client: the searches before the pick
    reply: ReplyOut | None = only_when_set()  # no call: what kind of reply it gave
    critical: CriticalOut | None = only_when_set()  # a call that matters most when it is wrong


class ExpectedCallOut(Record):
    tool: str
    args: dict[str, Any] | None = None
    match: dict[str, Any] = Field(default_factory=dict)


class CaseOut(Record):
    name: str
    prompt: str
    source: SourceOut
    expect_tool: str | list[str] | None
    expect_args: dict[str, Any] = Field(default_factory=dict)
    match: dict[str, Any] = Field(default_factory=dict)
    forbid_extra_args: bool = False
    tags: list[str] = Field(default_factory=list)
    split: str | None = None
    status: CaseStatus = "reviewed"
    passed: Count  # samples that passed
    evaluated: Count  # samples that were asked
    pass_rate: float | None
    samples: list[SampleOut]
    acceptable: list[str] = only_when_set([])
    must_not_call: list[str] = only_when_set([])  # a call of one is critical (severity.py)
    expect_reply: ReplyKind | None = only_when_set()  # no call, and this kind of reply
    # a trajectory case
    expect_calls: list[ExpectedCallOut] | None = only_when_set()
    sequence: Sequence_ | None = only_when_set()
    max_turns: Annotated[int, Field(ge=1, le=50)] | None = only_when_set()
    final: dict[Literal["contains", "regex", "not_contains"], list[str]] | None = only_when_set()


class LeftOutOut(Record):
    name: str
    reason: str


class SurfaceOut(Record):
    hash: SurfaceHash
    origin: str
    tools: list[str]
    left_out: list[LeftOutOut] = Field(default_factory=list)
    definitions: list[dict[str, Any]] = Field(default_factory=list)


class BatchOut(Record):
    """--batch: what went through the model API's batch API (at half the price)."""

    batches: list[Annotated[str, Field(max_length=200)]]  # the batch ids, as the API named them
    requests: Count  # sent in the batches
    answered: Count
    failed: Count  # scored ERROR, with the batch's reason
    late: Count  # not answered in the batch (cancelled at batch_timeout_s, refused): asked synchronously
    waited_s: float
    note: str | None = only_when_set()  # why requests went synchronously


class DroppedOut(Record):
    tool: str
    position: Count
    why: str


class ClientOut(Record):
    """The client a report's model was asked through (evals.clients) and what it did to the surface."""

    name: str
    title: str
    checked: str
    server: str  # the server's name in the client's tool names
    renamed: dict[str, str] = Field(default_factory=dict)  # the server's name → the client's
    dropped: list[DroppedOut] = Field(default_factory=list)  # never sent, by position
    grouped: list[str] = Field(default_factory=list)  # behind the client's tool groups
    builtins: list[str] = Field(default_factory=list)  # the client's own tools, offered first
    alongside: dict[str, Count] = Field(default_factory=dict)  # other servers beside yours → tools offered
    deferred: Count | None = None  # definitions behind a search that loads at most this many tools
    refused: str | None = None  # why the client can't take the surface at all (CLIENT-FAILED)
    driven: str | None = only_when_set()  # the real client's version, when it was run for each sample
    driven_as: str | None = only_when_set()  # how it took the endpoint: as its vendor's API, or as a gateway
    gateway: bool = Field(False, exclude_if=lambda v: not v)  # driven as behind a gateway (--client-endpoint)
    network: str | None = only_when_set()  # what it could reach while driven
    observed: str | None = only_when_set()  # the version whose captured facts its profile holds


class ToolSearchOut(Record):
    """The API's own tool search the model was asked behind (--tool-search): its mode, the tools kept
    loaded, how many tools one search returns at most, and the tool list's tokens per request with
    every tool loaded and with the tools deferred (the search tool and the eager tools)."""

    mode: Literal["anthropic-regex", "anthropic-bm25", "openai"]
    eager: list[str] = Field(default_factory=list)
    k: Count
    tokens_loaded: Count
    tokens_deferred: Count


class RunOut(Record):
    toolselect_version: str
    provider: str
    model: str
    endpoint: str | None = None
    repeat: Annotated[int, Field(ge=1)]
    concurrency: Annotated[int, Field(ge=1)]
    started_at: str
    finished_at: str
    duration_s: float
    args_measured: bool
    replies_read: bool = True  # the provider writes replies (bm25 and `command` pickers don't): kinds are read
    config: str | None = None
    system: str | None = None
    temperature: float | None = None
    seed: int | None = None
    shuffle: bool = False
    cache_mode: CacheMode = "off"
    cache_hits: Count = 0
    api_calls: Count = 0
    cache_writes: Count = 0  # new answers saved to the cache
    input_tokens: Count = 0  # neither written to nor read from the API's prompt cache
    output_tokens: Count = 0
    prompt_cache_write_tokens: Count = 0
    prompt_cache_read_tokens: Count = 0
    cost_usd: float | None = 0.0  # null: no price known for this model
    priced_by: str | None = only_when_set()  # "list prices of 2026-12-01" or "evals.price"
    pool_shrinks: Count = 0  # how often a 429 (or 529) slowed the run's pace
    judge: JudgeRunOut | None = only_when_set()  # evals.judge: its model and what it cost, apart
    label: Label | None = only_when_set()  # the model's label in a run of several models (evals.models)
    batch: BatchOut | None = only_when_set()  # --batch: the batches' requests, answers and wait
    client: ClientOut | None = only_when_set()  # evals.clients: the client it was asked through, and what it did
    tool_search: ToolSearchOut | None = only_when_set()  # --tool-search: the tools deferred behind the API's search


class GateOut(Record):
    """The head's own gate as judged when the report was built, and every gate option in force (the
    comparison's too, so a saved report can be compared under the gate its run had)."""

    passed: bool
    min_accuracy: float
    max_error_rate: float
    max_over_trigger: float | None = None
    min_tool_recall: dict[str, float] = Field(default_factory=dict)
    min_dimension: Annotated[dict[str, float], _keys_of(DIMENSIONS)] = only_when_set({})
    max_drop: float | None = None
    significance: float | None = None
    fail_on_certain_flips: bool = False
    base_failure: Literal["fail", "pass"] = "fail"
    fail_on_client_limits: bool = Field(True, exclude_if=lambda v: v)  # said only when turned off
    max_steal_rise: float | None = only_when_set()
    max_search_recall_drop: float | None = only_when_set()
    min_clarify: float | None = only_when_set()
    max_critical: Count = 0
    mode: Literal["enforce", "warn"] = Field("enforce", exclude_if=lambda v: v == "enforce")  # said only in warn
    reasons: list[str] = Field(default_factory=list)
    stopped: str | None = None  # why the run stopped early (infrastructure failure)


class FindingOut(Record):
    code: LintCode
    severity: Literal["error", "warning", "info"]
    scope: Literal["surface", "golden"]
    message: str
    fix: str = ""
    tool: str | None = None
    case: str | None = None
    file: str | None = None
    line: Count | None = None


class DimensionOut(Record):
    """One of seed 004's dimensions over the counted trajectory samples it applies to: the mean
    score (0–3) with a 95% interval (a bootstrap over cases), and how many samples scored 0, 1, 2, 3."""

    mean: float | None
    ci: tuple[float, float] | None = None
    n: Count
    distribution: dict[Literal["0", "1", "2", "3"], Count]


class Counts(Record):
    cases: Count
    samples: Count
    counted_samples: Count  # evaluated samples of reviewed cases: what the metrics and the gate use
    pending_cases: Count  # status: needs_review (scored and shown, not counted)
    not_evaluated: Count
    outcomes: dict[SampleOutcome, Count]
    critical: dict[CriticalCode, Count] = only_when_set({})  # critical samples of reviewed cases, by code


class PartOut(Record):
    """A shard's report (`--shard I/N`): which slice it holds and the plan it belongs to."""

    shard: Annotated[int, Field(ge=1, le=256)]
    shards: Annotated[int, Field(ge=1, le=256)]
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class MissedOut(Record):
    """A sample whose searches never found its tool: the case, the tool, and what was searched for."""

    case: str
    tool: str
    queries: list[str] = Field(default_factory=list)


class SearchStatsOut(Record):
    """A deferred client's searches, over the samples that expected one of the server's tools:
    how often a search found the expected tool (recall@k), found it but the model picked otherwise,
    or never found it."""

    k: Count
    samples: Count
    found: Count
    found_not_picked: Count
    never_found: Count
    recall: Metric
    per_tool: dict[str, Metric] = Field(default_factory=dict)
    missed: list[MissedOut] = only_when_set([])  # the searches that never found the expected tool (the first few)
    keep_loaded: list[str] = only_when_set([])  # the tools whose samples failed only because search never found them


class StealOut(Record):
    """Samples that expected one of the server's tools and got a client's own tool instead (a
    Wilson interval on the rate), and which tools took them."""

    rate: Metric
    by: dict[str, Count] = Field(default_factory=dict)  # `(built-in: Grep)` → samples


class Report(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    passed: bool
    gate: GateOut
    metrics: Annotated[dict[str, Metric], _keys_of(get_args(MetricName))]
    per_tool: dict[str, ToolStats]
    confusion: dict[str, dict[str, Count]]
    counts: Counts
    cases: list[CaseOut]
    surface: SurfaceOut
    run: RunOut
    lint: list[FindingOut] = Field(default_factory=list)  # what `toolselect lint` finds, before any model is asked
    flaky: list[str] = Field(default_factory=list)  # cases whose pass rate is strictly between 0 and 1
    # accuracy by the expected tool's third (shuffled runs)
    position: Annotated[dict[str, Metric], _keys_of(get_args(Third))] | None = None
    warnings: list[str] = Field(default_factory=list)
    # trajectory cases: seed 004's dimensions and how often each failure code applied
    dimensions: Annotated[dict[str, DimensionOut], _keys_of(DIMENSIONS)] | None = only_when_set()
    failure_codes: Annotated[dict[str, Count], _keys_of(FAILURE_CODES)] | None = only_when_set()
    part: PartOut | None = only_when_set()  # a shard's report: one slice of the units, merged by `toolselect merge`
    search: SearchStatsOut | None = only_when_set()  # a deferred client's searches (evals.clients)
    steal: StealOut | None = only_when_set()  # a client with tools of its own: how often they took the pick
