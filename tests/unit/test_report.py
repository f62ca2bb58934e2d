"""Report building: metric denominators, restraint, per-tool stats, the confusion matrix, the gate."""

from __future__ import annotations

from tests.builders import build_report, write_report
from tests.conftest import run_record
from toolselect.gate import Gate
from toolselect.golden import Case, Source
from toolselect.pick import Pick, failed, skipped
from toolselect.report.files import read_report
from toolselect.scoring import score_sample
from toolselect.surface import build_surface

OBJ = {"type": "object", "properties": {"city": {"type": "string"}}}
SURFACE = build_surface([{"name": n, "inputSchema": OBJ} for n in ("a", "b", "c")], "test")
RUN = run_record("command")


def case(name, expect, args=None, status="reviewed"):
    return Case(
        name=name, prompt=name, expect_tool=expect, expect_args=args or {}, source=Source("g", 1), status=status
    )


def report_for(pairs, **gate):
    cases = [c for c, _ in pairs]
    results = [score_sample(c, p, SURFACE, 0) for c, p in pairs]
    return build_report(
        cases, results, SURFACE, RUN, Gate.from_values({"min_accuracy": 0.5, "max_error_rate": 0.5, **gate})
    )


PAIRS = [
    (case("a-ok", "a", {"city": "x"}), Pick("a", {"city": "x"})),
    (case("a-args", "a", {"city": "x"}), Pick("a", {"city": "y"})),
    (case("a-as-b", "a"), Pick("b", {})),
    (case("b-ok", "b"), Pick("b", {})),
    (case("b-none", "b"), Pick(None)),
    (case("none-ok", None), Pick(None)),
    (case("none-called", None), Pick("c", {})),
    (case("err", "c"), failed("boom")),
    (case("list", ("b", "c")), Pick("c", {})),
    (case("pending", "a", status="needs_review"), Pick("b", {})),
    (case("skipped", "a"), skipped("not in cache")),
]


def test_metric_denominators():
    m = report_for(PAIRS).metrics
    # 9 counted samples: pending and not-evaluated ones are out; the error counts as a failure
    assert (m["accuracy"].numerator, m["accuracy"].denominator) == (4, 9)
    assert (m["tool_accuracy"].numerator, m["tool_accuracy"].denominator) == (5, 9)
    # argument accuracy: right tool and expected args (a-ok, a-args)
    assert (m["arg_accuracy"].numerator, m["arg_accuracy"].denominator) == (1, 2)
    # restraint, over errors excluded: 2 cases expect none; 2 samples called none (b-none, none-ok)
    assert (m["no_call_recall"].numerator, m["no_call_recall"].denominator) == (1, 2)
    assert (m["no_call_precision"].numerator, m["no_call_precision"].denominator) == (1, 2)
    assert (m["over_trigger_rate"].numerator, m["over_trigger_rate"].denominator) == (1, 2)
    assert (m["under_trigger_rate"].numerator, m["under_trigger_rate"].denominator) == (1, 6)
    assert (m["error_rate"].numerator, m["error_rate"].denominator) == (1, 9)


def test_confusion_and_per_tool():
    r = report_for(PAIRS)
    assert r.confusion == {
        "(none)": {"(none)": 1, "c": 1},
        "a": {"a": 2, "b": 1},
        "b": {"(none)": 1, "b": 1},
        "c": {"(error)": 1, "c": 1},  # the list case's row is the listed tool it picked
    }
    a = r.per_tool["a"]
    assert (a.precision.value, a.recall.value, a.support) == (1.0, 2 / 3, 3)
    b = r.per_tool["b"]
    assert (b.precision.numerator, b.precision.denominator) == (1, 2)
    assert r.counts.pending_cases == 1 and r.counts.not_evaluated == 1


def test_not_measured_is_null_not_zero():
    run = RUN.model_copy(update={"args_measured": False})
    c = case("a", "a", {"city": "x"})
    rep = build_report(
        [c],
        [score_sample(c, Pick("a"), SURFACE, 0, args_measured=False)],
        SURFACE,
        run,
        Gate.from_values({"min_accuracy": 1, "max_error_rate": 0}),
    )
    assert rep.metrics["arg_accuracy"].value is None
    assert rep.metrics["schema_valid_rate"].value is None
    assert rep.passed


def test_gate_reasons():
    r = report_for(PAIRS, min_accuracy=0.9, max_error_rate=0.05)
    assert not r.passed
    assert r.gate.reasons == [
        "1/9 samples failed at the provider (11.1% > max_error_rate 5%): an outage is not a result",
        "accuracy 44.4% (4/9) is below min_accuracy 90%",
    ]


def test_report_round_trips_through_json(tmp_path):
    r = report_for(PAIRS)
    write_report(r, tmp_path / "deep" / "r.json")
    assert read_report(tmp_path / "deep" / "r.json") == r


def test_two_tools_split_into_first_and_last_not_middle():
    from toolselect.report.build import accuracy_by_position
    from toolselect.scoring import Result
    from toolselect.taxonomy import SampleOutcome

    c = case("a", "a")
    results = [
        Result(c, 0, Pick("a"), SampleOutcome.PASS, tool_ok=True, tool_order=("a", "b")),
        Result(c, 1, Pick("b"), SampleOutcome.SEL_WRONG, tool_ok=False, tool_order=("b", "a")),
    ]
    table = accuracy_by_position(results)
    assert table["first"].value == 1.0 and table["last"].value == 0.0 and table["middle"].denominator == 0
