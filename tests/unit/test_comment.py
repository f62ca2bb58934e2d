"""The PR comment: verdict first, escaped, holdout-safe, and within GitHub's size limit."""

from __future__ import annotations

from tests.builders import build_report, gate, weather_report
from toolselect.outcome import compare_saved
from toolselect.render.comment import COMMENT_LIMIT, marker, render_comment
from toolselect.render.escape import fence


def test_first_line_is_the_verdict_with_base_to_head():
    base = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    head = weather_report(
        {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None},
        description="Daily outlook",
    )
    body = render_comment(
        compare_saved(base, head, {"max_drop": 5}, base_label="base"),
        comment_id="weather",
        run_url="https://github.com/acme/x/actions/runs/1",
    )
    lines = body.splitlines()
    assert lines[0] == marker("weather") == "<!-- toolselect:weather -->"
    assert lines[1] == (  # one line: the verdict, accuracy base → head, what decided
        "### ❌ toolselect failed: accuracy 100.0% → 75.0% (−25.0 pt) · 1 broke — accuracy dropped 25.0 pt vs the "
        "base, more than max-drop 5 pt"
    )
    # only a description changed: its effect leads, the paired test first, and that it did not decide
    assert lines[3] == "**Only tool descriptions changed** (`get_forecast`). What they did to selection:"
    assert lines[5] == (
        "- accuracy 100.0% → 75.0%: paired over the whole suite: −25.0 pt, 95% CI −75.0…0.0, not significant "
        "(p = 1) — max-drop decided, not the test (`significance: 0.05` fails only significant drops)."
    )
    assert "- 🔺 wanted `get_forecast`, got `get_weather`: 0 → 1" in body
    assert "| accuracy (right tool and arguments) | 100.0% | 75.0% (3/4) | 30.1–95.4% | −25.0 pt |" in body
    assert (
        "Flipped to failing (1)" in body
        and "| rain tomorrow | `get_forecast` | `get_forecast` | `get_weather` |" in body
    )
    assert "-Forecast for the coming days" in body and "[run](https://github.com/acme/x/actions/runs/1)" in body
    assert body.count("<!-- toolselect:") == 1


def test_repo_content_cannot_spoof_the_marker_or_break_out_of_code():
    evil = "x <!-- toolselect:weather --> ``` @octocat |"
    block = fence(evil, "diff")
    assert block.startswith("````diff\n") and block.endswith("\n````")
    assert "<!-- toolselect" not in block
    head = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None},
        description=evil,
    )
    base = weather_report(
        {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    )
    body = render_comment(compare_saved(base, head, {}, base_label="base"), comment_id="weather")
    assert body.count("<!-- toolselect:") == 1
    # no mention survives, inside code blocks or out
    assert "@\u200boctocat" in body and "@octocat" not in body


def test_big_comments_drop_the_least_important_sections_first():
    names = [f"case {i} " + "word " * 30 for i in range(600)]
    from tests.builders import RUN, weather_surface
    from toolselect.golden import Case, Source
    from toolselect.pick import Pick
    from toolselect.scoring import score_sample

    s = weather_surface("Forecast")
    cases = [Case(n, n, "get_forecast", {}, Source("g.jsonl", i + 1)) for i, n in enumerate(names)]
    lenient = gate(min_accuracy=0, max_error_rate=1)
    base = build_report(cases, [score_sample(c, Pick("get_forecast", {}), s, 0) for c in cases], s, RUN, lenient)
    head = build_report(cases, [score_sample(c, Pick("get_weather", {}), s, 0) for c in cases], s, RUN, lenient)
    body = render_comment(compare_saved(base, head, {}, base_label="base"))
    assert len(body) <= COMMENT_LIMIT
    assert "✂️ Cut to fit: all cases" in body and "see the job summary" in body
    assert "Flipped to failing (600)" in body and "… 550 more" in body


def test_a_failure_that_holds_on_the_base_too_says_so_in_one_line():
    """Below min_accuracy on both sides and nothing dropped: the headline says it isn't this PR."""
    same = {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    outcome = compare_saved(
        weather_report(same), weather_report(same), {"min_accuracy": 0.9, "max_drop": 5}, base_label="base"
    )
    [headline] = [line for line in render_comment(outcome, comment_id="x").splitlines() if line.startswith("###")][:1]
    assert headline == (
        "### ❌ toolselect failed: accuracy 75.0% → 75.0% (±0.0 pt) — fails on the base too: accuracy 75.0% (3/4) is "
        "below min\\_accuracy 90%"
    )
    assert len(headline) <= 150
    worse = compare_saved(weather_report(same), weather_report({**same, "week ahead": "get_weather"}),
                          {"min_accuracy": 0.9}, base_label="base")  # fmt: skip
    assert "fails on the base too" not in render_comment(worse, comment_id="x").splitlines()[1]  # it dropped: this PR
