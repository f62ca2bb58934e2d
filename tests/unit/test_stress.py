"""The stress test's pure parts: surfaces drawn per size and seed, the curve, the cliff, the culprits."""

from __future__ import annotations

from tests.builders import OBJ
from toolselect.golden import Case, Source
from toolselect.pick import Pick
from toolselect.scoring import score_sample
from toolselect.stress import compose, curve, sparkline
from toolselect.surface import Neighbour, build_surface
from toolselect.surface.neighbours import bundled

USER = build_surface(
    [
        {"name": "get_weather", "description": "Weather now", "inputSchema": OBJ},
        {"name": "search", "description": "Search the forecast archive", "inputSchema": OBJ},
    ],
    "t",
)
POOL = [Neighbour("web", {"name": "search", "description": "Search the web", "inputSchema": OBJ})] + [
    Neighbour("other" if i % 2 else "more", {"name": f"tool_{i}", "description": f"Tool {i}", "inputSchema": OBJ})
    for i in range(20)
]
POOL.append(Neighbour("dup", {"name": "tool_3", "description": "Another tool 3", "inputSchema": OBJ}))


def test_draws_are_nested_per_seed_and_keep_every_user_tool():
    for seed in range(3):
        small, large = compose(USER, POOL, 5, seed), compose(USER, POOL, 15, seed)
        assert {"get_weather", "search"} <= set(small.surface.names)
        assert set(small.distractors) <= set(large.distractors)  # what hurts at 5 is still there at 15
        assert len(small.surface.tools) == 7 and len(large.surface.tools) == 17
    assert compose(USER, POOL, 10, 1).surface.names == compose(USER, POOL, 10, 1).surface.names  # seeded
    assert compose(USER, POOL, 10, 1).distractors.keys() != compose(USER, POOL, 10, 2).distractors.keys()
    assert len(compose(USER, POOL, 99, 0).distractors) == len(POOL)  # capped by the pool


def test_colliding_names_are_prefixed_the_way_clients_do():
    everything = compose(USER, POOL, len(POOL), 0)
    offered = {(c.tool, c.server, c.offered_as) for c in everything.collisions}
    assert ("search", "web", "web__search") in offered  # collides with the user's own `search`
    assert {("tool_3", "other", "other__tool_3"), ("tool_3", "dup", "dup__tool_3")} <= offered  # with each other
    assert "other__tool_3" in compose(USER, POOL, 21, 0).distractors  # prefixed even when drawn alone
    assert "search" in everything.surface.names and "web__search" in everything.surface.names
    assert everything.distractors["web__search"].server == "web"


def results_at(size: int, seed: int, wrong_from: int, cases: list[Case]):
    composed = compose(USER, POOL, size, seed)
    distractor = next(iter(composed.distractors), None)
    picks = [Pick(tool=distractor if size >= wrong_from and distractor else c.expected[0], args={}) for c in cases]
    return composed, [score_sample(c, p, composed.surface, 0) for c, p in zip(cases, picks, strict=True)]


def test_the_curve_names_the_cliff_and_the_culprits():
    cases = [Case(f"c{i}", f"weather {i}", "get_weather", {}, Source("g.yaml", i + 1)) for i in range(8)]
    runs = [results_at(size, seed, 10, cases) for size in (0, 5, 10, 20) for seed in range(2)]
    result = curve(runs)
    assert [(p.size, p.accuracy.value) for p in result.points] == [(0, 1.0), (5, 1.0), (10, 0.0), (20, 0.0)]
    assert result.cliff is not None and result.cliff.size == 10 and result.cliff.worsened == 8
    assert result.cliff.p_value < 0.01 and result.cliff.delta_pt == -100.0
    top = result.culprits[0]
    assert top.instead_of == "get_weather" and top.count >= 2 and set(top.sizes) <= {10, 20}
    assert sum(c.count for c in result.culprits) == 32  # 8 cases × 2 seeds × 2 sizes
    first, last = result.points[0], result.points[3]
    assert first.tokens_estimated and (last.tokens_per_request or 0) > (first.tokens_per_request or 0)


def test_no_cliff_when_the_drop_is_not_significant():
    cases = [Case(f"c{i}", f"weather {i}", "get_weather", {}, Source("g.yaml", i + 1)) for i in range(3)]
    runs = [results_at(size, 0, 10, cases) for size in (0, 10)]
    assert curve(runs).cliff is None  # 3 cases all worse: p = 0.25


def test_the_bundled_pool_is_real_and_recorded():
    neighbours, sources = bundled()
    assert len(neighbours) >= 150 and len(sources) >= 8
    assert all(n.definition.get("name") for n in neighbours)
    assert all(n.definition.get("inputSchema", {}).get("type") == "object" for n in neighbours)
    assert {"filesystem", "git", "github", "playwright", "time", "fetch", "memory"} <= {s.server for s in sources}
    assert all("MIT" in s.origin or "Apache-2.0" in s.origin for s in sources)


def test_sparkline():
    assert sparkline([1.0, 0.5, 0.0, None]) == "█▅▁·"
