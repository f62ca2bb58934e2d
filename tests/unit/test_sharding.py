"""Shards, the pure parts: the assignment (deterministic, balanced by cost, each unit once) and the
checks that refuse parts that are not one whole."""

from __future__ import annotations

import pytest

from toolselect.errors import ConfigError, InfraError
from toolselect.shards import Given, Shard, assign, assign_sides, check_plan, check_shards, parse_shard, plan_units


def test_parse_shard():
    assert parse_shard(" 2/4 ") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"
    for bad in ("0/4", "5/4", "2", "a/b", "1/0", "1/257"):
        with pytest.raises(ConfigError):
            parse_shard(bad)


def test_every_unit_goes_to_one_shard_balanced_by_cost_the_same_everywhere():
    cases = [(f"case-{i}", 1) for i in range(40)] + [(f"chain-{i}", 4) for i in range(10)]
    units = plan_units(["a", "b"], cases, 3)
    assert len(units) == 2 * 50 * 3
    for count in (1, 3, 4, 7):
        assigned = assign(units, count)
        assert set(assigned) == {u for u, _ in units} and set(assigned.values()) == set(range(1, count + 1))
        loads = [sum(w for u, w in units if assigned[u] == i) for i in range(1, count + 1)]
        assert max(loads) - min(loads) <= 4  # within one costliest unit
        assert assign(list(reversed(units)), count) == assigned  # the order given doesn't matter
    # a unit keeps its shard when it is in both the head's and the base's plan (assigned over both)
    assert assign(units, 4)[("a", "chain-3", 2)] == assign(units, 4)[("a", "chain-3", 2)]


def given(where, index, count=3, fp="0123456789abcdef", units=()):
    return Given(where, Shard(index, count), fp, frozenset(units))


def test_parts_that_are_not_one_whole():
    assert check_shards([given("p1", 1), given("p2", 2), given("p3", 3)], "head") == 3
    with pytest.raises(InfraError, match="the head lacks shard 2/3, 3/3: its job failed"):
        check_shards([given("p1", 1)], "head")
    with pytest.raises(ConfigError, match="shard 1/3 of the base is given twice: p1 and again"):
        check_shards([given("p1", 1), given("again", 1), given("p2", 2), given("p3", 3)], "base")
    with pytest.raises(ConfigError, match=r"p2 \(shard 2/4, plan 0123456789abcdef\) is not of the same plan as p1"):
        check_shards([given("p1", 1), given("p2", 2, count=4)], "head")
    with pytest.raises(ConfigError, match=r"p2 \(shard 2/3, plan ffffffffffffffff\) is not of the same plan"):
        check_shards([given("p1", 1), given("p2", 2, fp="f" * 16), given("p3", 3)], "head")


def test_a_part_must_hold_exactly_its_units():
    units = plan_units([""], [("x", 1), ("y", 1)], 2)
    assigned = assign(units, 2)
    mine = [u for u, s in assigned.items() if s == 1]
    others = [u for u, s in assigned.items() if s == 2]
    check_plan([given("p1", 1, 2, units=mine), given("p2", 2, 2, units=others)], "0123456789abcdef", assigned, "head")
    with pytest.raises(ConfigError, match="p1 is a part of another plan"):
        check_plan([given("p1", 1, 2, units=mine)], "f" * 16, assigned, "head")
    with pytest.raises(ConfigError, match=r"p1 \(shard 1/2 of the head\): 1 of its samples are missing"):
        check_plan([given("p1", 1, 2, units=mine[1:])], None, assigned, "head")
    with pytest.raises(ConfigError, match="samples are not its own"):
        check_plan([given("p1", 1, 2, units=[*mine, others[0]])], None, assigned, "head")


def test_the_fingerprint_is_the_same_whatever_the_hash_seed():
    """Sets (a trajectory case's `acceptable`) iterate in an order that depends on PYTHONHASHSEED."""
    import subprocess
    import sys

    code = (
        "from toolselect.shards import fingerprint;"
        "print(fingerprint({'acceptable': frozenset(['get_weather', 'get_forecast', 'search_web', 'convert'])}))"
    )

    def run(seed: str) -> str:
        env = {"PYTHONHASHSEED": seed}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout

    prints = {run(seed) for seed in ("1", "2", "3")}
    assert len(prints) == 1


def test_the_base_follows_the_head():
    head = plan_units(["m"], [("x", 1), ("y", 4), ("z", 1)], 2)
    base = plan_units(["m"], [("x", 1), ("y", 2), ("old", 3)], 2)
    alone = assign(head, 3)
    both = assign_sides(head, base, 3)
    assert {u: both[u] for u in alone} == alone  # the head splits the same with or without its base
    assert both[("m", "old", 0)] in (1, 2, 3) and len(both) == len(alone) + 2
