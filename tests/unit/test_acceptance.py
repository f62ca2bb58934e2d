"""The held-out test a rewrite must pass (acceptance.py): a significant paired improvement, no
other tool's recall falling significantly (Holm), at most 20% longer."""

from __future__ import annotations

from toolselect.acceptance import BeforeAfter, judge, none_passed

CURRENT = "Forecast for a city for the coming days."  # 40 characters: 10 tokens


def flips(tool: str, fixed: int, kept: int = 0, broke: int = 0) -> list[BeforeAfter]:
    return (
        [BeforeAfter(tool, False, True)] * fixed
        + [BeforeAfter(tool, True, True)] * kept
        + [BeforeAfter(tool, True, False)] * broke
    )


def test_a_significant_held_out_gain_is_accepted():
    judged = judge(flips("get_forecast", 6, kept=4), "get_forecast", CURRENT, "Forecast: the coming days, a city.")
    assert judged.accepted and (judged.before, judged.after, judged.n) == (4, 10, 10)
    assert judged.p_value < 0.05 and judged.why.startswith("accepted: held-out accuracy 4/10 → 10/10")


def test_a_gain_that_is_not_significant_or_a_loss_is_refused():
    small = judge(flips("get_forecast", 1, kept=10), "get_forecast", CURRENT, CURRENT)
    assert not small.accepted and small.why.startswith("not significant") and small.p_value == 1.0
    worse = judge(flips("get_forecast", 0, kept=3, broke=2), "get_forecast", CURRENT, CURRENT)
    assert not worse.accepted and worse.why.startswith("no better on the held-out cases")


def test_a_rewrite_that_hurts_another_tool_or_grows_too_much_is_refused():
    samples = flips("get_forecast", 20) + flips("get_weather", 0, broke=7) + flips("get_alerts", 0, kept=5)
    hurt = judge(samples, "get_forecast", CURRENT, CURRENT)
    assert not hurt.accepted and hurt.dropped[0][:3] == ("get_weather", 7, 0)
    assert hurt.why.startswith("get_weather's recall fell 7 → 0 (Holm-adjusted p = 0.031)")
    long = judge(flips("get_forecast", 8), "get_forecast", CURRENT, CURRENT + " Also covers hourly views.")
    assert not long.accepted and long.why.startswith("too long: 10 → 16 tokens, more than +20%")


def test_when_none_passed_the_note_says_what_was_tried():
    best = judge(flips("t", 1, kept=11), "t", CURRENT, CURRENT)
    assert none_passed("get_forecast", 3, best).startswith(
        "3 rewrites tried for get_forecast; none passed the held-out test (best: +1 of 12, p = 1: not significant"
    )
