"""Seed 004's four scores and failure codes for a recorded trajectory (the scorer alone)."""

from __future__ import annotations

from toolselect.trajectory import Call, Expectation, ExpectedCall, FinalCheck, Order, Trajectory, score

CITY = ExpectedCall("find_city", {"name": "Paris"})
FORECAST = ExpectedCall("get_forecast", {"city_id": 7})


def run(*calls: Call, final: str | None = "Sunny tomorrow.", hit_max_turns: bool = False) -> Trajectory:
    return Trajectory(tuple(calls), final, hit_max_turns)


def test_a_two_call_chain_passes_with_full_marks():
    s = score(
        Expectation((CITY, FORECAST)), run(Call("find_city", {"name": "paris"}), Call("get_forecast", {"city_id": 7}))
    )
    assert (s.selection, s.arguments, s.recovery, s.restraint, s.codes, s.passed) == (3, 3, None, 3, (), True)


def test_the_wrong_order_fails_strict_and_passes_unordered():
    calls = run(Call("get_forecast", {"city_id": 7}), Call("find_city", {"name": "Paris"}))
    strict = score(Expectation((CITY, FORECAST)), calls)
    assert not strict.passed and strict.restraint == 2 and strict.selection == 1 and "SEL-WRONG" in strict.codes
    loose = score(Expectation((CITY, FORECAST), Order.UNORDERED), calls)
    assert loose.passed and loose.selection == 3 and loose.restraint == 3


def test_an_error_then_a_sensible_alternative_is_recovery_3():
    expect = Expectation((ExpectedCall("get_forecast"), ExpectedCall("get_weather")), Order.IN_ORDER)
    s = score(
        expect,
        run(
            Call("get_forecast", {"city": "Paris"}, error="service unavailable"), Call("get_weather", {"city": "Paris"})
        ),
    )
    assert s.recovery == 3 and s.passed and s.restraint == 3  # the failed call is recovery's, not restraint's


def test_the_same_failing_call_repeated_is_a_loop():
    failing = Call("get_forecast", {"city": "Paris"}, error="timeout")
    s = score(Expectation((ExpectedCall("get_forecast"),), Order.ANY_OF), run(failing, failing, failing))
    assert s.recovery == 0 and "REC-LOOP" in s.codes and not s.passed
    once = score(Expectation((ExpectedCall("get_forecast"),), Order.ANY_OF), run(failing, failing))
    assert "REC-LOOP" not in once.codes  # one retry is not a loop


def test_an_error_not_surfaced_is_silent():
    expect = Expectation((ExpectedCall("get_forecast"),), Order.ANY_OF, final=FinalCheck(contains=("unavailable",)))
    failing = Call("get_forecast", {"city": "Paris"}, error="service unavailable")
    silent = score(expect, run(failing, final="It will be sunny."))
    assert silent.recovery == 1 and "REC-SILENT" in silent.codes and not silent.passed
    said = score(expect, run(failing, final="The forecast service is unavailable right now; try again later."))
    assert said.recovery == 3 and "REC-SILENT" not in said.codes


def test_an_extra_call_overcalls_and_a_call_when_none_is_needed_is_unnecessary():
    extra = score(
        Expectation((CITY,), Order.IN_ORDER), run(Call("find_city", {"name": "Paris"}), Call("get_weather", {}))
    )
    assert extra.restraint == 1 and extra.codes == ("RES-OVERCALL",) and extra.sequence_ok and not extra.passed
    none = score(Expectation(()), run(Call("get_weather", {"city": "Paris"})))
    assert none.restraint == 0 and none.codes == ("RES-UNNECESSARY",) and none.selection is None and not none.passed
    assert score(Expectation(()), run()).passed


def test_max_turns_hit_fails_with_its_reason():
    s = score(
        Expectation((CITY,), Order.IN_ORDER), run(Call("find_city", {"name": "Paris"}), final=None, hit_max_turns=True)
    )
    assert not s.passed and "no final answer within max_turns" in s.reasons


def test_acceptable_tools_and_argument_scores():
    expect = Expectation((FORECAST,), acceptable=frozenset({"get_weather"}))
    sub = score(expect, run(Call("get_weather", {"city_id": 7})))
    assert sub.selection == 2 and "SEL-SUBOPTIMAL" in sub.codes
    invalid = score(expect, run(Call("get_forecast", {"city_id": "x"}, schema_problem="'x' is not an integer")))
    assert invalid.arguments == 0 and "ARG-INVALID" in invalid.codes
    semantic = score(expect, run(Call("get_forecast", {"city_id": 8})))
    assert semantic.arguments == 1 and "ARG-SEMANTIC" in semantic.codes
    extra = score(expect, run(Call("get_forecast", {"city_id": 7, "units": "metric"})))
    assert extra.arguments == 2 and extra.passed
    forbidden = score(
        Expectation((FORECAST,), forbid_extra_args=True), run(Call("get_forecast", {"city_id": 7, "x": 1}))
    )
    assert forbidden.arguments == 1 and not forbidden.passed


def test_final_checks_without_an_error():
    expect = Expectation((CITY,), final=FinalCheck(regex=(r"\d+°",), not_contains=("error",)))
    assert score(expect, run(Call("find_city", {"name": "Paris"}), final="21° in Paris")).passed
    s = score(expect, run(Call("find_city", {"name": "Paris"}), final="an error occurred"))
    assert not s.passed and s.codes == () and "the final answer mentions 'error'" in s.reasons


def test_a_retry_after_an_error_is_not_an_extra_call_but_an_unexpected_tool_is():
    retry = score(
        Expectation((ExpectedCall("get_forecast"),), Order.IN_ORDER),
        run(Call("get_forecast", {"city": "Paris"}, error="503"), Call("get_forecast", {"city": "Paris"})),
    )
    assert retry.restraint == 3 and retry.recovery == 3 and retry.passed  # the retry worked: recovered
    detour = score(
        Expectation((ExpectedCall("get_forecast"), ExpectedCall("get_weather")), Order.IN_ORDER),
        run(Call("get_forecast", {}, error="503"), Call("get_time", {}), Call("get_weather", {})),
    )
    assert detour.restraint == 1 and detour.codes == ("RES-OVERCALL",)
    assert "1 call(s) more than needed (get_time; 2 would do)" in detour.reasons


def test_a_call_to_a_tool_the_server_lacks_is_an_extra_call_not_an_error_to_recover_from():
    s = score(
        Expectation((ExpectedCall("get_forecast"),), Order.IN_ORDER),
        run(Call("get_forecast", {}), Call("foo", {}, off_surface=True)),
    )
    assert s.codes == ("RES-OVERCALL",) and s.recovery is None and not s.passed


def test_in_order_allows_an_extra_first_call_against_restraint_only():
    s = score(
        Expectation((ExpectedCall("get_forecast"), ExpectedCall("get_weather")), Order.IN_ORDER),
        run(Call("get_time", {}), Call("get_forecast", {}), Call("get_weather", {})),
    )
    assert s.selection == 3 and s.codes == ("RES-OVERCALL",) and s.sequence_ok


def test_a_judge_verdict_stands_in_for_final_checks():
    expect = Expectation((ExpectedCall("get_forecast"),), Order.ANY_OF)
    failing = Call("get_forecast", {"city": "Paris"}, error="down")
    silent = score(expect, Trajectory((failing,), "Sunny!", surfaced=False))
    assert silent.recovery == 1 and silent.codes == ("REC-SILENT",)
    assert "the judge found the final answer doesn't surface it" in silent.reasons[0]
    assert score(expect, Trajectory((failing,), "It's down.", surfaced=True)).recovery == 3
    assert score(expect, Trajectory((failing,), "It's down.")).recovery == 2  # nobody checked
