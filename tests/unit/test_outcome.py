"""One outcome, one exit code, one place that writes the files."""

from __future__ import annotations

import json

import pytest

from tests.builders import gate, weather_report
from toolselect.errors import ConfigError
from toolselect.outcome import Comparison, compare_saved, evaluate, exit_code
from toolselect.outputs import Targets, write_outputs

GOOD = {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
WORSE = {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}


def test_exit_codes():
    base, head = weather_report(GOOD), weather_report(WORSE)
    assert exit_code(compare_saved(base, head, {"max_drop": 30}, base_label="b")) == 0
    failed = compare_saved(base, head, {"max_drop": 5}, base_label="b")
    assert exit_code(failed) == 1 and not failed.verdict.passed
    assert exit_code(compare_saved(base, head, {"max_drop": 5}, base_label="b", enforced=False)) == 0
    stopped = head.model_copy(update={"gate": head.gate.model_copy(update={"stopped": "401 from the API"})})
    assert exit_code(evaluate(Comparison(stopped), gate())) == 3


def test_a_base_whose_run_failed_is_no_comparison_and_no_pass():
    """The base's own run failed: nothing was compared, so the run is no measurement (exit 3) — not
    a pass on the head alone — unless base_failure is "pass", which lets the head's gate decide."""
    base = weather_report(GOOD)
    broken = base.model_copy(update={"gate": base.gate.model_copy(update={"stopped": "the server crashed"})})
    outcome = compare_saved(broken, weather_report(WORSE), {"max_drop": 0}, base_label="b")
    assert outcome.diff is None and outcome.base_note is None and not outcome.verdict.passed
    assert outcome.verdict.reasons[0] == (
        "the comparison was not run: the base could not be evaluated: the base run failed (the server crashed)"
    )
    assert exit_code(outcome) == 3
    accepted = compare_saved(broken, weather_report(WORSE), {"max_drop": 0, "base_failure": "pass"}, base_label="b")
    assert accepted.verdict.passed and exit_code(accepted) == 0
    assert "(base-failure: pass: the head's own gate decides)" in accepted.verdict.notes[0]
    a_config_missing = compare_saved(
        None, weather_report(WORSE), {"max_drop": 0}, base_label="b", base_note="no baseline: x"
    )
    assert a_config_missing.verdict.passed and exit_code(a_config_missing) == 0


def test_a_base_of_another_model_is_no_baseline_for_the_poster_and_an_error_for_diff():
    base = weather_report(GOOD)
    other = base.model_copy(update={"run": base.run.model_copy(update={"model": "another-model"})})
    outcome = compare_saved(
        other, weather_report(WORSE), {"max_drop": 0}, base_label="the PR run's base", enforced=False
    )
    assert outcome.diff is None and outcome.verdict.passed
    assert outcome.base_note is not None
    assert outcome.base_note.startswith("base refused: the base report can't be compared: different model")
    with pytest.raises(ConfigError, match=r"base\.json and the head can't be compared: different model"):
        compare_saved(other, weather_report(WORSE), {}, base_label="base.json", refuse_incomparable=True)


def test_write_outputs_writes_every_named_file(tmp_path):
    outcome = compare_saved(weather_report(GOOD), weather_report(WORSE), {"max_drop": 5}, base_label="origin/main")
    targets = Targets(
        json=tmp_path / "r.json",
        markdown=tmp_path / "c.md",
        junit=tmp_path / "j.xml",
        comment=tmp_path / "comment.md",
        diff_json=tmp_path / "d.json",
        summary=tmp_path / "summary.md",
        comment_id="x",
    )
    written = write_outputs(outcome, targets)
    assert [what for what, _ in written.files] == [
        "JSON report",
        "the base's JSON report",
        "PR comment preview",
        "JUnit report",
        "PR comment",
        "diff",
        "job summary",
    ]
    assert (tmp_path / "r.base.json").exists() and json.loads((tmp_path / "d.json").read_text())["to_failing"]
    assert (tmp_path / "comment.md").read_text() == written.comment
    assert written.comment.startswith("<!-- toolselect:x -->\n### ❌ toolselect failed")
    assert (tmp_path / "c.md").read_text().startswith("### ❌ toolselect failed")  # the preview: no marker
    assert (tmp_path / "summary.md").read_text() == (tmp_path / "c.md").read_text()
    junit = (tmp_path / "j.xml").read_text()
    assert 'name="gate"' in junit and "more than max-drop 5 pt" in junit  # the verdict, not only the head's gate
