"""Reading a client's recorded requests into its facts (drive/capture.py, pure): a client shaped as
Gemini CLI was seen to be — `mcp_<server>_<tool>`, `.`, `:` and `-` kept, a name over 63 shortened to
its first 30 + `...` + last 30, the server's order, its own tools first, nothing deferred."""

from __future__ import annotations

import re

from toolselect.drive.capture import COUNTS, count_surface, naming_surface
from toolselect.drive.capture import facts as read_facts


def gemini_name(tool: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", f"mcp_probe_{tool}")
    return name if len(name) <= 63 else name[:30] + "..." + name[-30:]


def request(tools: list[dict], deferred: bool = False) -> dict:
    own = [{"name": "run_shell_command", "description": "x" * 300, "parameters": {"type": "object"}}]
    sent = [] if deferred else [{"name": gemini_name(t["name"]), "description": t["description"]} for t in tools]
    named = {}
    for t in sent:  # a later tool of the same name overwrites the earlier
        named[t["name"]] = t
    return {"model": "gemini-3", "system": "You are Gemini CLI. " * 10, "tools": own + list(named.values())}


def test_a_gemini_shaped_client_reads_as_its_facts():
    runs = {"naming/off": request(naming_surface()), "naming/driven": request(naming_surface())}
    for n in COUNTS:
        runs |= {f"count-{n}/{s}": request(count_surface(n)) for s in ("off", "default")}
    got = read_facts(runs, "gemini-cli", "0.61.0", "2026-12-06")
    names = got["names"]
    assert names["template"] == "mcp_{server}_{tool}"
    assert names["kept"] == ["-", ".", ":", "_"] and names["replaced"] == {
        " ": "_",
        "+": "_",
        "/": "_",
        "@": "_",
        "é": "_",
    }
    assert names["max_length"] == 63 and names["past_limit"] == "shortened" and names["cut_to"] == [63]
    assert got["order"] == "server" and got["builtins_first"] is True
    assert got["builtins"] == [
        {
            "name": "run_shell_command",
            "chars": len(
                '{"name": "run_shell_command", "description": "' + "x" * 300 + '", "parameters": {"type": "object"}}'
            ),
        }
    ]
    assert got["deferred"]["as_driven"] is False and got["deferred"]["search_tool"] is None
    assert got["collisions"] == "none"  # clash.one keeps its dot: no collision in this client
    assert got["counts"][300] == {"sent": 300, "deferred_by_default": False}
    assert got["system"]["chars"] == len("You are Gemini CLI. " * 10)


def test_a_client_that_sorts_its_own_tools_and_the_servers_together_reads_as_order_all():
    """opencode sends its built-ins and the server's tools as one list sorted by name."""

    def together(tools: list[dict]) -> dict:
        body = request(tools)
        body["tools"] = sorted(body["tools"], key=lambda t: t["name"].lower())
        return body

    runs = {"naming/off": together(naming_surface()), "naming/driven": together(naming_surface())}
    for n in COUNTS:
        runs |= {f"count-{n}/{s}": together(count_surface(n)) for s in ("off", "default")}
    assert read_facts(runs, "opencode", "1.18.33", "2026-12-06")["order"] == "all"
