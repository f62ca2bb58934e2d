"""The diff of two reports: metric deltas, changed cells, flipped cases, surface changes."""

from __future__ import annotations

from tests.builders import RUN, build_report, gate, weather_report, weather_surface
from toolselect.diff import diff_reports, incomparable
from toolselect.gate import comparison_reasons, decide_verdict, judged


def test_diff_names_the_cells_and_cases_that_moved():
    base = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    head = weather_report(
        {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_weather", "thanks": None},
        description="Daily outlook",
    )
    diff = diff_reports(base, head)
    assert diff.metrics["accuracy"].delta_pt == -50.0
    top = diff.cells[0]
    assert (top.expected, top.picked, top.base, top.head) == ("get_forecast", "get_weather", 0, 2)
    assert [c.name for c in diff.to_failing] == ["rain tomorrow", "week ahead"]
    assert diff.to_failing[0].base.pick == "get_forecast" and diff.to_failing[0].head.pick == "get_weather"
    assert not diff.to_passing
    [change] = diff.tools
    assert (
        change.kind == "description"
        and "-Forecast for the coming days" in change.diff
        and "+Daily outlook" in change.diff
    )
    assert diff.has_changes


def test_cases_pair_by_name_then_by_prompt():
    base = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    head = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "thanks": None},
        names=["rain tomorrow", "wind now", "thanks"],
    )
    diff = diff_reports(base, head)
    assert diff.removed_cases == ["week ahead"] and diff.new_cases == []


def test_max_drop_gate():
    base = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    head = weather_report(
        {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    diff = diff_reports(base, head)
    assert comparison_reasons(diff, gate(max_drop=25))[0] == []  # a 25-point drop is allowed with max-drop 25
    assert comparison_reasons(diff, gate(max_drop=24.9))[0] == [
        "accuracy dropped 25.0 pt vs the base, more than max-drop 24.9 pt"
    ]
    assert comparison_reasons(diff, gate())[0] == []
    assert comparison_reasons(diff_reports(base, base), gate(max_drop=0))[0] == []  # max-drop 0 fires on a drop only
    assert not decide_verdict(judged(head, gate(max_drop=0)), diff).passed


def test_the_heads_own_gate_counts_in_a_comparison():
    """A head below min_accuracy fails even when it did not drop against the base."""
    picks = {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_weather", "thanks": None}
    base, head = weather_report(picks), weather_report(picks)
    strict = gate(min_accuracy=0.9, max_drop=0)
    verdict = decide_verdict(judged(head, strict), diff_reports(base, head))
    assert not verdict.passed
    assert verdict.reasons == ("accuracy 50.0% (2/4) is below min_accuracy 90%",)
    assert decide_verdict(judged(head, gate(max_drop=0)), diff_reports(base, head)).passed


def test_incomparable_reports_say_why():
    a = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    b = a.model_copy(update={"run": a.run.model_copy(update={"model": "other", "temperature": 0.7})})
    assert incomparable(a, b) == [
        "different model: base 'm', head 'other'",
        "different temperature: base None, head 0.7",
    ]


def test_pending_cases_are_not_compared():
    from toolselect.golden import Case, Source
    from toolselect.pick import Pick
    from toolselect.scoring import score_sample

    s = weather_surface("Forecast for the coming days")
    cases = [
        Case("ok", "ok", "get_weather", {}, Source("g", 1)),
        Case("pending", "pending", "get_forecast", {}, Source("g", 2), status="needs_review"),
    ]

    def rep(pick_for_pending):
        picks = [Pick("get_weather", {}), Pick(pick_for_pending, {})]
        return build_report(
            cases,
            [score_sample(c, p, s, 0) for c, p in zip(cases, picks, strict=False)],
            s,
            RUN,
            gate(min_accuracy=0, max_error_rate=1),
        )

    diff = diff_reports(rep("get_forecast"), rep("get_weather"))
    assert diff.to_failing == [] and diff.paired.cases == 1 and diff.paired.worsened == 0


def test_a_huge_description_change_is_diffed_in_part():
    from toolselect.diff import DIFF_MAX_LINES, surface_changes

    base = [{"name": "t", "description": "\n".join(f"a{i}" for i in range(50_000)), "inputSchema": {}}]
    head = [{"name": "t", "description": "\n".join(f"b{i}" for i in range(50_000)), "inputSchema": {}}]
    (change,) = surface_changes(base, head)  # 14 s before the cut; bounded work now
    assert change.diff.endswith(f"… (only the first {DIFF_MAX_LINES} lines of each side are compared)")
    assert "-a0" in change.diff and "+b0" in change.diff and "a399" in change.diff and "a400" not in change.diff
