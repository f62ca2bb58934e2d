"""The verdict's states: each moved case broke, destabilized, fixed or inconclusive; a comparison
that can tell nothing is inconclusive (no measurement, never a silent "no change"); mode: warn says
"would fail" and exits 0; a base another client answered is refused."""

from __future__ import annotations

from tests.builders import RUN, build_report, gate, weather_surface
from toolselect.golden import Case, Source
from toolselect.outcome import compare_saved, exit_code
from toolselect.pick import Pick, failed
from toolselect.render.comment import render_comment
from toolselect.render.junit import render_junit
from toolselect.report.schema import ClientOut
from toolselect.scoring import score_sample

SURFACE = weather_surface("Forecast for the coming days")
EXPECT = {
    "rain tomorrow": "get_forecast",
    "wind now": "get_weather",
    "week ahead": "get_forecast",
    "sun": "get_weather",
}
ALL_RIGHT = {name: [tool] * 3 for name, tool in EXPECT.items()}
ERR = "error"


def report(picks: dict[str, list[str | None]], **gate_values):
    """The cases `picks` names, each sample picked as listed ("error": the provider failed)."""
    cases = [Case(n, n, EXPECT[n], {}, Source("g.jsonl", i + 1)) for i, n in enumerate(picks)]
    results = [
        score_sample(c, failed("503") if p == ERR else Pick(p, {}, calls=1), SURFACE, k)
        for c in cases
        for k, p in enumerate(picks[c.name])
    ]
    return build_report(cases, results, SURFACE, RUN.model_copy(update={"repeat": 3}), gate(**gate_values))


def test_each_moved_case_has_its_state():
    base = report(ALL_RIGHT | {"sun": ["get_weather", "get_forecast", "get_forecast"]})
    head = report(
        {
            "rain tomorrow": ["get_weather"] * 3,  # 3/3 → 0/3
            "wind now": ["get_weather", "get_forecast", "get_weather"],  # 3/3 → 2/3
            "week ahead": ["get_forecast", ERR, ERR],  # 3/3 → 1/3, two of three errors
            "sun": ["get_weather"] * 3,  # 1/3 → 3/3
        },
        max_error_rate=1,
    )
    outcome = compare_saved(base, head, {}, base_label="b")
    diff = outcome.diff
    assert diff is not None
    assert {c.name: c.state for c in diff.to_failing} == {"rain tomorrow": "broke", "wind now": "destabilized"}
    assert {c.name: c.state for c in diff.to_passing} == {"sun": "fixed"}
    assert [c.name for c in diff.inconclusive_cases] == ["week ahead"]  # not a flip: mostly errors
    assert diff.states == {"broke": 1, "destabilized": 1, "fixed": 1, "inconclusive": 1}
    assert diff.inconclusive is None  # three cases could be told
    comment = render_comment(outcome)
    assert comment.splitlines()[1].startswith(
        "### ✅ toolselect passed: accuracy 83.3% → 50.0% (−33.3 pt) · 1 broke, 1 destabilized, 1 fixed, 1 inconclusive"
    )


def test_a_comparison_that_can_tell_nothing_is_inconclusive_and_no_measurement():
    base = report(ALL_RIGHT)
    head = report({name: [ERR, ERR, tool] for name, tool in EXPECT.items()}, max_error_rate=1, min_accuracy=0)
    outcome = compare_saved(base, head, {}, base_label="b")
    assert (
        outcome.diff is not None and outcome.diff.inconclusive == "all 4 cases that moved are mostly errors on one side"
    )
    assert outcome.verdict.reasons == (
        "the comparison is inconclusive: all 4 cases that moved are mostly errors on one side",
    )
    assert outcome.word == "inconclusive" and exit_code(outcome) == 3
    assert render_comment(outcome).splitlines()[1].startswith("### ❔ toolselect inconclusive: accuracy 100.0% → 33.3%")
    assert 'type="inconclusive"' in render_junit(outcome)
    let_pass = compare_saved(base, head, {"base_failure": "pass"}, base_label="b")
    assert let_pass.word == "passed" and exit_code(let_pass) == 0
    assert let_pass.verdict.notes[-1].endswith("(base-failure: pass: the head's own gate decides)")
    renamed = report({"wind now": ["get_weather"] * 3})
    nothing = compare_saved(report({"sun": ["get_weather"] * 3}), renamed, {}, base_label="b")
    assert nothing.diff is not None and nothing.diff.inconclusive == (
        "no case was evaluated on both sides (renamed, or pending review on one side)"
    )


def test_warn_mode_says_would_fail_and_exits_0_but_never_passes_what_was_not_measured():
    base, head = report(ALL_RIGHT), report(ALL_RIGHT | {"rain tomorrow": ["get_weather"] * 3})
    enforced = compare_saved(base, head, {"max_drop": 5}, base_label="b")
    assert enforced.word == "failed" and exit_code(enforced) == 1
    warned = compare_saved(base, head, {"max_drop": 5, "mode": "warn"}, base_label="b")
    assert warned.word == "would fail" and warned.warned and exit_code(warned) == 0
    assert warned.head.gate.mode == "warn"  # recorded: a saved report is judged alike
    comment = render_comment(warned)
    assert comment.splitlines()[1].startswith("### ⚠️ toolselect would fail: accuracy 100.0% → 75.0%")
    assert "mode: warn — not failing the check on this verdict" in comment
    assert "would fail (mode: warn): accuracy dropped" in render_junit(warned)
    errors = report({name: [ERR, ERR, tool] for name, tool in EXPECT.items()}, max_error_rate=1, min_accuracy=0)
    unmeasured = compare_saved(base, errors, {"mode": "warn"}, base_label="b")
    assert exit_code(unmeasured) == 3  # warn mode forgives a verdict, not a comparison that told nothing


def test_a_base_another_client_answered_is_refused():
    base, head = report(ALL_RIGHT), report(ALL_RIGHT)
    through = base.model_copy(
        update={
            "run": base.run.model_copy(
                update={
                    "client": ClientOut(name="claude-code", title="Claude Code", checked="2026-12-01", server="weather")
                }
            )
        }
    )
    outcome = compare_saved(through, head, {}, base_label="the PR run's base")
    assert outcome.diff is None
    assert outcome.base_note == (
        "base refused: the base report can't be compared: different client: base 'claude-code (its profile)', "
        "head 'none'"
    )
    assert "· base refused" in render_comment(outcome).splitlines()[1]
