"""Client profiles (offer/clients.py): each bundled client's names, limits and count rules as its sources
state them, and the findings `lint --client` makes of what the client does to a surface."""

from __future__ import annotations

import pytest

from toolselect.errors import ConfigError
from toolselect.golden import Case, Source
from toolselect.lint.client import lint_client
from toolselect.offer.clients import BUILT_IN, client_name, load_profile, present


def case(tool: str, n: int = 0) -> Case:
    return Case(f"asks {tool} {n}", f"prompt for {tool}", tool, {}, Source("golden.jsonl", n + 1))


def by_code(findings):
    out: dict[str, list] = {}
    for f in findings:
        out.setdefault(f.code, []).append(f)
    return out


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_bundled_profile_loads_with_its_sources_and_date(name):
    profile = load_profile(name)
    assert profile.name == name and profile.checked == (
        profile.observed.date if profile.observed else "2026-12-06" if name in ("vscode", "codex") else "2026-12-03"
    )
    if name != "raw":  # every limit a profile states comes with where it was read
        assert profile.names.sources
        if profile.tools.max is not None:
            assert profile.tools.sources
    if profile.builtins:
        assert profile.builtins_source and all(b.input_schema["type"] == "object" for b in profile.builtins)


def test_claude_code_as_captured_sorts_its_tools_and_drops_a_name_over_128():
    """The bundled facts of the real client (data/clients/claude-code.observed.yaml): `mcp__<server>__<tool>`,
    every character but letters, digits, `_` and `-` made `_`; sorted by name; a name over 128 never sent
    (no error: the client drops it); its own tools as it sends them when it defers (no Grep, no Glob)."""
    profile = load_profile("claude-code")
    assert profile.observed is not None and profile.observed.version == "2.1.332"
    assert client_name(profile, "weather", "get_weather") == "mcp__weather__get_weather"
    assert client_name(profile, "my server", "get.weather") == "mcp__my_server__get_weather"
    long = "search_the_issue_tracker_for_matching_tickets_by_text" * 2  # 106: 123 with the prefix
    longer = long + "_and_more"  # 132 with the prefix
    presented = present(profile, "jira-cloud", ["zeta_issue", "get_issue", long, longer])
    assert [s.tool for s in presented.shown] == ["get_issue", long, "zeta_issue"]  # sorted by the client's names
    found = by_code(lint_client(presented, [case(longer)]))
    [dropped] = found["client-tool-dropped"]
    assert (
        dropped.severity == "error"
        and dropped.tool == longer
        and "over Claude Code's 128 characters" in dropped.message
    )
    assert "client-name-too-long" not in found
    names = [b.name for b in profile.builtins]
    assert {"Bash", "Read", "Edit", "Write"} <= set(names) and "Grep" not in names and "Glob" not in names
    bash = next(b for b in profile.builtins if b.name == "Bash")
    assert bash.description == "Executes shell commands in your environment."  # the written stub, not its text


def test_cursor_sends_the_first_40_tools_and_drops_a_name_over_60():
    profile = load_profile("cursor")
    tools = [f"tool_{i:02d}" for i in range(90)]
    presented = present(profile, "catalogue", tools)
    assert [s.tool for s in presented.shown] == tools[:40]
    assert [d[0] for d in presented.dropped] == tools[40:]
    found = by_code(lint_client(presented, [case("tool_41"), case("tool_03")]))
    dropped = {f.tool: f for f in found["client-tool-dropped"]}
    assert len(dropped) == 50
    assert dropped["tool_41"].severity == "error" and "tool 42 of 90" in dropped["tool_41"].message
    assert "the golden set expects it in asks tool_41 0" in dropped["tool_41"].message
    assert dropped["tool_89"].severity == "warning"  # no case expects it
    # the server's and the tool's names together: 9 + 52 = 61 characters
    over = present(profile, "catalogue", ["a" * 52, "ok"])
    assert [s.tool for s in over.shown] == ["ok"] and over.dropped[0][0] == "a" * 52
    assert "over Cursor's 60 characters" in over.dropped[0][2]


def test_vscode_lowercases_and_cuts_the_label_truncates_at_64_and_says_when_two_names_meet():
    profile = load_profile("vscode")
    assert client_name(profile, "My GitHub Server", "list.issues") == "mcp_my_github_ser_list_issues"
    stem = "x" * 60
    presented = present(profile, "gh", [stem + "_one", stem + "_two"])
    found = by_code(lint_client(presented, []))
    assert [f.severity for f in found["client-name-truncated"]] == ["warning", "warning"]
    assert len(presented.shown[0].name) == 64
    [collision] = found["client-name-collision"]
    assert collision.severity == "error" and "both named" in collision.message
    grouped = present(profile, "big", [f"t{i}" for i in range(66)])  # past 64: half its hard limit of 128
    assert grouped.grouped == ("t64", "t65") and len(grouped.shown) == 66
    assert by_code(lint_client(grouped, []))["client-tools-grouped"][0].severity == "warning"


def test_the_openai_api_refuses_over_128_tools_and_a_name_it_cannot_take():
    profile = load_profile("openai-agents")
    presented = present(profile, "s", [f"t{i}" for i in range(129)] + ["get.weather"])
    found = by_code(lint_client(presented, []))
    assert presented.refused and found["client-too-many-tools"][0].severity == "error"
    assert "array too long" in found["client-too-many-tools"][0].message
    assert found["client-name-invalid"][0].tool == "get.weather"


def test_raw_changes_nothing():
    presented = present(load_profile("raw"), "s", ["a", "b"])
    assert not presented.renamed and not presented.dropped and not lint_client(presented, [case("a")])


def test_a_profile_of_your_own_is_checked_like_any_file_you_write(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "name: mine\ntitle: Mine\nchecked: '2026-12-01'\nnames: {template: 'x_{tool}', max_length: 10}\n"
        "tools: {max: 2, past_max: cut}\n"
    )
    profile = load_profile("mine.yaml", tmp_path)
    assert [s.name for s in present(profile, "s", ["a", "b", "c"]).shown] == ["x_a", "x_b"]
    mine.write_text(mine.read_text() + "colour: blue\n")
    with pytest.raises(ConfigError) as bad:
        load_profile(str(mine))
    assert "mine.yaml:6" in str(bad.value.message) and "colour" in str(bad.value.message)
    with pytest.raises(ConfigError) as unknown:
        load_profile("cursr")
    assert "did you mean 'cursor'" in unknown.value.message


def test_the_offer_puts_the_built_ins_first_and_maps_every_name_back():
    from toolselect.offer import offer
    from toolselect.pick import built_in
    from toolselect.surface import build_surface

    surface = build_surface(
        [{"name": n, "description": f"{n} tool", "inputSchema": {"type": "object"}} for n in ("get.weather", "search")],
        "test",
    )
    claude = load_profile("claude-code")
    made = offer(surface, "Be brief.", present(claude, "my server", surface.names))
    names = [t.name for t in made.tools]
    assert names[: len(claude.builtins)] == [b.name for b in claude.builtins]
    assert names[len(claude.builtins) :] == ["ToolSearch"]  # the server's tools wait behind its search
    assert made.deferred is not None
    assert [t.name for t in made.deferred.tools] == ["mcp__my_server__get_weather", "mcp__my_server__search"]
    assert made.from_wire("mcp__my_server__get_weather") == "get.weather"
    assert made.from_wire("Bash") == built_in("Bash") == "(built-in: Bash)"
    assert made.system is not None and made.system.endswith("\n\nBe brief.")  # the client's, then the run's
    assert "mcp__my_server__search\n</available-deferred-tools>" in made.system
    cursor = offer(surface, None, present(load_profile("cursor"), "s", surface.names))
    assert [t.name for t in cursor.tools] == ["mcp_s_get_weather", "mcp_s_search"] and cursor.deferred is None
    assert made.refused is None
    raw = offer(surface, None)
    assert [t.name for t in raw.tools] == ["get_weather", "search"] and raw.from_wire("get_weather") == "get.weather"
    too_many = build_surface([{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(129)], "test")
    agents = offer(too_many, None, present(load_profile("openai-agents"), "s", too_many.names))
    assert agents.refused is not None and agents.refused.startswith("129 tools is over OpenAI Agents SDK's 128")


def test_clients_multiply_the_models_each_with_its_label_and_gate(tmp_path):
    from tests.builders import settings
    from toolselect.config import Overrides

    text = """
tools_file: tools.json
evals:
  min_accuracy: 0.5
  models:
    - {provider: openai, model: gpt-4.1}
    - {provider: anthropic, model: claude-sonnet-4-5, gate: {max_error_rate: 0.2}}
  clients: [cursor, {name: claude-code, gate: {min_accuracy: 0.9}}]
"""
    (tmp_path / "tools.json").write_text('{"tools": []}')
    _, s = settings(tmp_path, text=text)
    # Claude Code only on the model whose API it speaks (driven there); Cursor, which no one drives, on both
    assert s.labels == ("gpt-4.1@cursor", "claude-sonnet-4-5@cursor", "claude-sonnet-4-5@claude-code")
    _, emulated = settings(tmp_path, text=text + "  client_mode: emulated\n")
    assert emulated.labels == (
        "gpt-4.1@cursor", "gpt-4.1@claude-code", "claude-sonnet-4-5@cursor", "claude-sonnet-4-5@claude-code",
    )  # fmt: skip
    each = {e.labels[0]: e for e in s.each_model()}
    assert each["gpt-4.1@cursor"].client.name == "cursor" and each["gpt-4.1@cursor"].gate.min_accuracy == 0.5
    assert each["claude-sonnet-4-5@claude-code"].gate.min_accuracy == 0.9  # the client's gate, over the model's
    assert each["claude-sonnet-4-5@claude-code"].gate.max_error_rate == 0.2
    flagged = Overrides({"clients": ("raw",), "min_accuracy": 0.1})
    _, one = settings(tmp_path, over=flagged, text=text)
    assert one.labels == ("gpt-4.1@raw", "claude-sonnet-4-5@raw")
    assert all(e.gate.min_accuracy == 0.1 for e in one.each_model())
    with pytest.raises(ConfigError, match=r"toolselect.yaml:\d+: evals.clients\[0\]: unknown client 'cursr'"):
        settings(tmp_path, text=text.replace("[cursor,", "[cursr,"))


TOOLS_FOR_SEARCH = [
    ("mcp__w__get_weather", "Current conditions for a city.", {"type": "object"}),
    ("mcp__w__get_forecast", "The next days, for a city.", {"type": "object", "properties": {"days": {}}}),
    ("mcp__w__get_alerts", "Severe weather warnings.", {"type": "object"}),
]


def test_a_client_search_ranks_by_name_then_description_and_takes_select():
    from toolselect.offer.clients import search

    assert search("keyword", "forecast", TOOLS_FOR_SEARCH, 5) == [1]  # in the name: 2 points
    assert search("keyword", "city", TOOLS_FOR_SEARCH, 5) == [0, 1]  # in two descriptions: ties keep the order
    assert search("keyword", "severe city", TOOLS_FOR_SEARCH, 1) == [0]  # at most `limit`
    assert search("keyword", "city +days", TOOLS_FOR_SEARCH, 5) == [1]  # +word: required (a parameter counts)
    assert search("keyword", "umbrella", TOOLS_FOR_SEARCH, 5) == []
    assert search("keyword", "select:mcp__w__get_alerts,nope", TOOLS_FOR_SEARCH, 5) == [2]
    assert search("regex", "warn|next", TOOLS_FOR_SEARCH, 5) == [1, 2]
    assert search("regex", "([", TOOLS_FOR_SEARCH, 5) == []  # not a pattern: nothing found, no crash
    assert search("bm25", "severe warnings", TOOLS_FOR_SEARCH, 5)[0] == 2


def test_the_search_loop_loads_what_it_found_and_ends_at_the_pick():
    from toolselect.offer.deferred import Deferral, Searching
    from toolselect.pick import Pick, ToolCall
    from toolselect.providers import Request, WireTool

    tools = tuple(WireTool(n, d, s) for n, d, s in TOOLS_FOR_SEARCH)
    finder = WireTool("ToolSearch", "search", {"type": "object"})
    deferral = Deferral(finder, tools, "keyword", results=5, searches=2)
    request = Request(prompt="will it rain", system=None, tools=(finder,))
    loop = Searching(request, deferral, lambda n: n.removeprefix("mcp__w__"))
    first = loop.next_request()
    assert first is not None and [t.name for t in first.tools] == ["ToolSearch"]
    loop.record(Pick(tool="ToolSearch", args={"query": "next days"}))
    second = loop.next_request()
    assert second is not None and [t.name for t in second.tools] == ["ToolSearch", "mcp__w__get_forecast"]
    assert second.history[0].stubs[0].result.startswith("Loaded 1 tool definitions: mcp__w__get_forecast")
    call = ToolCall("mcp__w__get_forecast", {"days": 2})
    loop.record(Pick(tool="mcp__w__get_forecast", args={"days": 2}, tool_calls=(call,), latency_ms=5.0))
    assert loop.next_request() is None
    out = loop.outcome()
    assert (out.tool, out.args) == ("get_forecast", {"days": 2})
    assert [(s.query, s.found) for s in out.searched] == [("next days", ("get_forecast",))]
    # still searching after its searches: its pick is the search tool
    stuck = Searching(request, deferral, lambda n: n)
    for _ in range(3):
        stuck.record(Pick(tool="ToolSearch", args={"query": "umbrella"}))
    assert stuck.next_request() is None and stuck.outcome().tool == "ToolSearch" and len(stuck.searches) == 2


def test_the_table_says_how_each_client_was_asked():
    from toolselect.render.clients import mode
    from toolselect.report.schema import ClientOut

    one = {"name": "claude-code", "title": "Claude Code", "checked": "2026-12-06", "server": "weather"}
    assert mode(ClientOut(**one, driven="2.1.332")) == "2.1.332 (driven)"
    assert mode(ClientOut(**one, driven="2.1.332", gateway=True)) == "2.1.332 (driven as a gateway)"
    assert mode(ClientOut(**one, observed="2.1.332")) == "(emulated: 2.1.332 as captured)"
    assert mode(ClientOut(**one)) == "(emulated)"
