"""`toolselect serve TOOLS.json`: a frozen surface served over stdio as a real MCP server — what a driven
client connects to. Listed verbatim (a snapshot of it is the file again); a tools/call is refused with an
error result and written down, never run."""

from __future__ import annotations

import json
import sys

import anyio

from tests.conftest import toolselect

TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city.",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "odd-schema", "description": "A schema the SDK itself would refuse.",
     "inputSchema": {"type": "object", "properties": {"x": {"type": "strng"}}}},
]  # fmt: skip


def test_a_snapshot_of_the_served_file_is_the_file(tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    served = [sys.executable, "-m", "toolselect", "serve", "tools.json", "--name", "weather"]
    done = toolselect("snapshot", "-o", "again.json", "--", *served, cwd=tmp_path)
    assert done.code == 0, done.err
    assert json.loads((tmp_path / "again.json").read_text())["tools"] == TOOLS


def test_a_tool_call_is_refused_and_written_down(tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    calls = tmp_path / "calls.jsonl"

    async def call() -> tuple[list[str], bool, str]:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolselect", "serve", str(tmp_path / "tools.json"), "--calls", str(calls)],
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            result = await session.call_tool("get_weather", {"city": "Paris"})
            return [t.name for t in listed.tools], bool(result.is_error), getattr(result.content[0], "text", "")

    names, refused, said = anyio.run(call)
    assert names == ["get_weather", "odd-schema"]
    assert refused and "never run" in said
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [
        {"tool": "get_weather", "arguments": {"city": "Paris"}}
    ]


def test_a_file_that_is_no_tool_list_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "tools.json").write_text("{not json")
    done = toolselect("serve", "tools.json", cwd=tmp_path, process=True)
    assert done.code == 2 and done.err.startswith("error: ") and len(done.err.splitlines()) <= 3
