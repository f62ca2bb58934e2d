"""Finding the source line of a changed tool text in a PR's patches, across languages."""

from __future__ import annotations

import difflib
import json

import pytest

from toolselect.sourcelines import FilePatch, Location, lines_changed, parse_patch, right_lines, text_changes, words


def patch(old: str, new: str) -> str:
    """The patch GitHub lists for a file: the hunks of a 3-line-context unified diff, no header."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
    return "\n".join(list(lines)[2:])


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)


def tool(name: str, description: str, **schema: dict) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": schema}}


TS_OLD = """\
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

const server = new McpServer({ name: "weather", version: "1.0.0" });

server.registerTool(
  "get_forecast",
  {
    description: `Get the weather forecast for a city
for the next days, with highs and lows
and the chance of rain.`,
    inputSchema: { city: z.string().describe("the city") },
  },
  async ({ city }) => ({ content: [{ type: "text", text: city }] }),
);

server.registerTool(
  "get_weather",
  {
    description: "Get the current weather in a city: temperature, wind and sky.",
    inputSchema: { city: z.string().describe("the city") },
  },
  async ({ city }) => ({ content: [{ type: "text", text: city }] }),
);
"""


def test_a_multi_line_typescript_template_string():
    new = TS_OLD.replace("for the next days, with highs and lows", "with highs and lows")
    base = [tool("get_forecast", TS_OLD.split("`")[1]), tool("get_weather", "Get the current weather")]
    head = [tool("get_forecast", new.split("`")[1]), base[1]]
    found = lines_changed(text_changes(base, head), [FilePatch("src/index.ts", patch(TS_OLD, new))])
    assert found["get_forecast"].path == "src/index.ts"
    assert found["get_forecast"].line == line_of(new, "with highs and lows") == 10
    assert found["get_forecast"].field == "description"
    assert "get_weather" not in found  # its text did not change


PY_OLD = """\
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("clock")


@mcp.tool(
    description="Return the current time "
    "in an IANA timezone, "
    'for example Europe/Paris.'
)
def current_time(timezone: str) -> str:
    return timezone


@mcp.tool(description="Convert a time " + "between two timezones.")
def convert_time(time: str, source: str, target: str) -> str:
    return time
"""


def test_a_python_string_concatenated_from_literals():
    new = PY_OLD.replace('"in an IANA timezone, "', '"in a timezone the user names, "')
    base = [
        tool("current_time", "Return the current time in an IANA timezone, for example Europe/Paris."),
        tool("convert_time", "Convert a time between two timezones."),
    ]
    head = [
        tool("current_time", "Return the current time in a timezone the user names, for example Europe/Paris."),
        base[1],
    ]
    found = lines_changed(text_changes(base, head), [FilePatch("clock/server.py", patch(PY_OLD, new))])
    assert found["current_time"].line == line_of(new, "the user names")
    # "+" concatenation, and a change in the middle of a literal
    new2 = PY_OLD.replace('" + "between two timezones."', '" + "between any two timezones of the world."')
    head2 = [base[0], tool("convert_time", "Convert a time between any two timezones of the world.")]
    found2 = lines_changed(text_changes(base, head2), [FilePatch("clock/server.py", patch(PY_OLD, new2))])
    assert found2["convert_time"].line == line_of(new2, "of the world")


def test_a_json_surface_file_with_escapes_and_an_enum():
    base = [
        tool("get_forecast", "Forecast for the next days.\nHighs and lows.", units={"enum": ["metric", "imperial"]}),
        tool("get_weather", "Current weather.", units={"enum": ["metric", "imperial"]}),
    ]
    head = [
        tool("get_forecast", "Forecast for the next days.\nHighs and lows.", units={"enum": ["metric", "kelvin"]}),
        base[1],
    ]
    old_text = json.dumps({"tools": base}, indent=2)
    new_text = json.dumps({"tools": head}, indent=2)
    changes = text_changes(base, head)
    assert [c.field for c in changes["get_forecast"]] == ["parameter `units`: enum"]
    found = lines_changed(changes, [FilePatch("tools.json", patch(old_text, new_text))])
    assert found["get_forecast"].line == line_of(new_text, '"kelvin"')


def test_a_yaml_block_scalar_and_a_parameter_description():
    old = """\
tools:
  - name: search_issues
    description: >-
      Search the issues of a repository
      by words in their title or body.
    inputSchema:
      type: object
      properties:
        query:
          type: string
          description: Words to look for, as typed by the user
"""
    new = old.replace(
        "Words to look for, as typed by the user", "Words to look for; quote a phrase to match it exactly"
    )
    base = [
        tool(
            "search_issues",
            "Search the issues of a repository by words in their title or body.",
            query={"type": "string", "description": "Words to look for, as typed by the user"},
        )
    ]
    head = [
        tool(
            "search_issues",
            base[0]["description"],
            query={"type": "string", "description": "Words to look for; quote a phrase to match it exactly"},
        )
    ]
    found = lines_changed(text_changes(base, head), [FilePatch("tools.yaml", patch(old, new))])
    assert found["search_issues"].field == "parameter `query`: description"
    assert found["search_issues"].line == line_of(new, "quote a phrase")


def test_a_go_raw_string_over_several_lines():
    old = (
        'package main\n\nvar forecast = mcp.NewTool("get_forecast",\n'
        "\tmcp.WithDescription(`Get the forecast\nfor the next days\nwith highs and lows.`),\n)\n"
    )
    new = old.replace("for the next days\n", "for the next seven days\n")
    base = [tool("get_forecast", "Get the forecast\nfor the next days\nwith highs and lows.")]
    head = [tool("get_forecast", "Get the forecast\nfor the next seven days\nwith highs and lows.")]
    found = lines_changed(text_changes(base, head), [FilePatch("main.go", patch(old, new))])
    assert found["get_forecast"].line == line_of(new, "seven days")


def test_text_in_no_file_of_the_pr_has_no_location():
    base = [tool("get_forecast", "Get the weather forecast for a city for the next days.")]
    head = [tool("get_forecast", "Get the weather forecast for a city.")]
    unrelated = patch("# Weather\n\nA server.\n", "# Weather\n\nA server for the weather forecast.\n")
    assert lines_changed(text_changes(base, head), [FilePatch("README.md", unrelated)]) == {}


def test_a_few_shared_words_are_not_a_match():
    """A line that shares the changed word but little else of the text is not where the text lives."""
    base = [tool("get_forecast", "Return the weather forecast for a city, with highs and lows and rain.")]
    head = [tool("get_forecast", "Return the weather forecast for a city, with highs and lows and snow.")]
    other = patch("const x = 1;\n", "const x = 1;\n// TODO: snow days and rain for the city\n")
    assert lines_changed(text_changes(base, head), [FilePatch("src/util.ts", other)]) == {}


def test_the_same_sentence_added_to_two_tools_lands_on_each_ones_own_line():
    old = (
        'a = Tool("get_forecast", "Get the weather forecast for a city for the next days.")\n\n\n\n\n\n\n\n'
        'b = Tool("get_weather", "Get the current weather in a city right now.")\n'
    )
    new = old.replace("next days.", "next days. Never call it for past dates.").replace(
        "right now.", "right now. Never call it for past dates."
    )
    base = [
        tool("get_forecast", "Get the weather forecast for a city for the next days."),
        tool("get_weather", "Get the current weather in a city right now."),
    ]
    head = [
        tool("get_forecast", "Get the weather forecast for a city for the next days. Never call it for past dates."),
        tool("get_weather", "Get the current weather in a city right now. Never call it for past dates."),
    ]
    found = lines_changed(text_changes(base, head), [FilePatch("tools.py", patch(old, new))])
    assert found["get_forecast"].line == 1
    assert found["get_weather"].line == line_of(new, "get_weather")


def test_two_tools_with_the_same_text_get_no_location():
    old = 'a = Tool("alpha", "Old words here for the tool.")\nb = Tool("beta", "Old words here for the tool.")\n'
    new = old.replace("Old words here", "Brand new words here")
    base = [tool("alpha", "Old words here for the tool."), tool("beta", "Old words here for the tool.")]
    head = [tool("alpha", "Brand new words here for the tool."), tool("beta", "Brand new words here for the tool.")]
    assert lines_changed(text_changes(base, head), [FilePatch("tools.py", patch(old, new))]) == {}


def test_source_wins_over_a_built_copy_and_files_without_a_patch_are_skipped():
    old = 'export const d = "Get the weather forecast for a city for the next days.";\n'
    new = 'export const d = "Get the weather forecast for a city for the next seven days.";\n'
    base = [tool("get_forecast", "Get the weather forecast for a city for the next days.")]
    head = [tool("get_forecast", "Get the weather forecast for a city for the next seven days.")]
    files = [
        FilePatch("dist/index.js", patch(old, new)),
        FilePatch("logo.png", None, "modified"),
        FilePatch("src/index.ts", patch(old, new)),
    ]
    found = lines_changed(text_changes(base, head), files)
    assert found["get_forecast"].path == "src/index.ts"


def test_a_new_tool_is_located_where_it_is_added():
    old = 'TOOLS = [\n    Tool("a", "Alpha does the first thing well."),\n]\n'
    new = old.replace("]\n", '    Tool("b", "Beta lists every open ticket of a project."),\n]\n')
    base = [tool("a", "Alpha does the first thing well.")]
    head = [*base, tool("b", "Beta lists every open ticket of a project.")]
    found = lines_changed(text_changes(base, head), [FilePatch("tools.py", patch(old, new))])
    assert found == {"b": Location("b", "description", "tools.py", 3, 3, covered=1.0, changed=1.0)}


def test_patch_lines_and_numbers():
    p = "@@ -3,3 +3,4 @@ def f():\n a\n-b\n+B\n+C\n c\n\\ No newline at end of file"
    [hunk] = parse_patch(p)
    assert [(x.kind, x.new, x.old) for x in hunk] == [
        (" ", 3, 3),
        ("-", None, 4),
        ("+", 4, None),
        ("+", 5, None),
        (" ", 6, 5),
    ]
    assert right_lines(p) == {3, 4, 5, 6}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"Forecast for\\nthe \\"next\\" days"', ["forecast", "for", "the", "next", "days"]),
        ("caf\\u00e9 Zürich", ["café", "zürich"]),
        ("`Get the` + 'forecast'", ["get", "the", "forecast"]),
    ],
)
def test_words_read_escapes_and_drop_quotes(text, expected):
    assert words(text) == expected


def test_a_changed_title_is_a_text_change_and_the_hash_ignores_it():
    from toolselect.surface import build_surface

    raw = {"name": "get_forecast", "description": "Forecast.", "inputSchema": {"type": "object"}}
    before = build_surface([{**raw, "title": "Weather forecast"}], "file: t.json")
    after = build_surface([{**raw, "annotations": {"title": "Seven-day weather forecast"}}], "file: t.json")
    assert before.hash == after.hash  # the model is not shown a title
    [change] = text_changes(list(before.definitions), list(after.definitions))["get_forecast"]
    assert (change.field, change.old, change.new) == ("title", "Weather forecast", "Seven-day weather forecast")


def test_a_longer_text_that_contains_the_new_one_is_not_its_line():
    """A PR moves two tools into a module; one text is the other's plus more words. Each lands on
    its own line, not on the first line that holds all of its words."""
    new = (
        "class Files:\n"
        "    def get_file_contents_at_ref(self):\n"
        '        """Get the contents of a file in a repository at a given branch, tag or commit."""\n'
        "\n"
        "    def get_file_contents(self):\n"
        '        """Get the contents of a file in a repository."""\n'
    )
    base = [
        tool(
            "get_file_contents_at_ref", "Get the contents of a file in a repository at a given branch, tag or commit."
        ),
        tool("get_file_contents", "Get the contents of a file in a repository, at its default branch."),
    ]
    head = [base[0], tool("get_file_contents", "Get the contents of a file in a repository.")]
    found = lines_changed(text_changes(base, head), [FilePatch("gh/files.py", patch("", new))])
    assert found["get_file_contents"].line == 6


def test_source_before_docs_lock_files_never_and_a_go_enum_beside_its_parameter():
    old = (
        'tool := mcp.NewTool("get_forecast",\n'
        '\tmcp.WithString("units", mcp.Enum("metric", "imperial"), mcp.Description("Units")),\n)\n'
    )
    new = old.replace('"imperial")', '"imperial", "kelvin")')
    base = [tool("get_forecast", "Forecast.", units={"enum": ["metric", "imperial"], "description": "Units"})]
    head = [tool("get_forecast", "Forecast.", units={"enum": ["metric", "imperial", "kelvin"], "description": "Units"})]
    readme = patch(
        "# Units\n", '# Units\n\ntool := mcp.NewTool("get_forecast", mcp.Enum("metric", "imperial", "kelvin"))\n'
    )
    files = [
        FilePatch("README.md", readme),
        FilePatch("package-lock.json", readme),
        FilePatch("src/clock.go", patch(old, new)),
    ]
    found = lines_changed(text_changes(base, head), files)
    assert (found["get_forecast"].path, found["get_forecast"].line) == ("src/clock.go", 2)
    assert lines_changed(text_changes(base, head), files[:2][::-1][:1]) == {}  # a lock file alone: never searched


def test_the_same_edit_in_two_places_is_no_location_even_for_one_tool():
    doc = "List the {x} of a repository.\n\n    Args:\n        page: The page of results, starting at 1.\n"
    old = (
        f'def list_issues():\n    """{doc.format(x="issues")}    """\n\n\n\n\n'
        f'def list_pulls():\n    """{doc.format(x="pulls")}    """\n'
    )
    new = old.replace("starting at 1.", "starting at 1; 30 results per page.")
    base = [tool("list_issues", doc.format(x="issues")), tool("list_pulls", doc.format(x="pulls"))]
    head = [
        tool(t["name"], t["description"].replace("starting at 1.", "starting at 1; 30 results per page.")) for t in base
    ]
    changes = text_changes(base, head)
    assert lines_changed({"list_pulls": changes["list_pulls"]}, [FilePatch("server.py", patch(old, new))]) == {}


def test_a_punctuation_or_case_change_is_found_where_the_text_is_added():
    old = 'x = Tool("get_forecast", "Get the weather forecast for a city for the next seven days.")\n'
    new = 'x = Tool("get_forecast", "get the weather forecast for a city, for the next seven days")\n'
    base = [tool("get_forecast", "Get the weather forecast for a city for the next seven days.")]
    head = [tool("get_forecast", "get the weather forecast for a city, for the next seven days")]
    assert lines_changed(text_changes(base, head), [FilePatch("tools.py", patch(old, new))])["get_forecast"].line == 1
