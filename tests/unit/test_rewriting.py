"""The rewriter's prompt and answer (rewriting.py): only tuning prompts reach it, its candidates are
read defensively from untrusted text."""

from __future__ import annotations

import json

from toolselect.rewriting import Rival, read_candidates, request, schema

CURRENT = "Forecast for a city."


def test_the_prompt_holds_the_tool_its_neighbours_and_only_the_prompts_it_is_given():
    text = request("get_forecast", CURRENT, {"type": "object"}, [Rival("get_weather", "Weather now.")],
                   ["Will it rain tomorrow in Oslo?"], 3)  # fmt: skip
    assert "Current description: Forecast for a city." in text and "- get_weather: Weather now." in text
    assert "- Will it rain tomorrow in Oslo?" in text and "3 different rewrites" in text
    assert schema()["properties"]["candidates"]["items"]["required"] == ["description", "why"]


def test_candidates_are_read_distinct_bounded_and_never_the_current_text():
    answer = json.dumps({"candidates": [
        {"description": "Forecast for the coming days in a city: rain, temperatures.", "why": "names days"},
        {"description": "Forecast for the coming days in a city: rain, temperatures.", "why": "again"},
        {"description": CURRENT, "why": "unchanged"},
        {"description": "x" * 3000, "why": "too long"},
        {"description": "short", "why": "too short"},
        {"description": "Forecast for a city \u001b[31mnow\u001b[0m and later.", "why": "an escape"},
        {"description": "Forecast for a city \u202eretaw\u202c and later.", "why": "bidi"},
        {"description": "Tomorrow's and later days' weather for a city; not the weather now.", "why": 7},
        "not an object",
    ]})  # fmt: skip
    found, problem = read_candidates("Here you go:\n```json\n" + answer + "\n```", CURRENT, 3)
    assert problem is None
    assert [c.description[:20] for c in found] == ["Forecast for the com", "Tomorrow's and later"]
    assert found[1].why == ""
    assert read_candidates("I can't help with that.", CURRENT, 3)[1].startswith("the answer was not JSON")
    assert read_candidates('{"candidates": []}', CURRENT, 3) == ([], "no usable candidate in the answer")
