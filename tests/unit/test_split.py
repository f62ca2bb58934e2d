"""The tuning / held-out split for description rewrites (split.py): deterministic, stratified by
expected tool, marked holdout cases always held out."""

from __future__ import annotations

import pytest

from toolselect.golden import Case, Source
from toolselect.split import split_cases


def case(name: str, tool: str | None, split: str | None = None) -> Case:
    return Case(name, f"prompt {name}", tool, {}, Source("golden.jsonl", 1), split=split)


CASES = [case(f"w{i}", "get_weather") for i in range(6)] + [case(f"f{i}", "get_forecast") for i in range(4)]
CASES += [case("n0", None), case("n1", None), case("solo", "get_alerts")]


def test_every_tool_is_on_both_sides_and_the_share_is_kept_per_tool():
    s = split_cases(CASES, share=0.5, seed=7)
    held, tuned = set(s.holdout), set(s.tuning)
    assert held.isdisjoint(tuned) and held | tuned == {c.name for c in CASES}
    assert sum(n.startswith("w") for n in held) == 3 and sum(n.startswith("f") for n in held) == 2
    assert sum(n.startswith("n") for n in held) == 1
    assert "solo" in held  # a tool with one case: it is held out (rounded up), nothing to tune on


def test_the_split_is_the_same_in_any_order_and_moves_with_the_seed():
    one = split_cases(CASES, seed=3)
    assert set(split_cases(list(reversed(CASES)), seed=3).holdout) == set(one.holdout)
    assert any(set(split_cases(CASES, seed=s).holdout) != set(one.holdout) for s in range(4, 10))


def test_a_case_marked_holdout_is_always_held_out_and_counts_toward_its_tool():
    marked = [case("w0", "get_weather", "holdout"), *(case(f"w{i}", "get_weather") for i in range(1, 4))]
    for seed in range(20):
        s = split_cases(marked, share=0.5, seed=seed)
        assert "w0" in s.holdout and len(s.holdout) == 2 and s.marked == ("w0",)


def test_a_share_out_of_range_is_refused():
    with pytest.raises(ValueError):
        split_cases(CASES, share=1.0)
