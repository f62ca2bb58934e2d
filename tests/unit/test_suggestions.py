"""Which tools a PR's `suggest` rewrites, where an accepted rewrite lands (a one-click suggestion only
on lines of the diff), and the words that carry it — pure, no GitHub."""

from __future__ import annotations

import json
import re

from tests.builders import weather_report
from toolselect.acceptance import Judged
from toolselect.outcome import compare_saved
from toolselect.render.comment import render_comment
from toolselect.render.review import Mark, read_mark, resolved_body
from toolselect.render.suggest import suggestable, suggestion_body, suggestion_key, suggestions_markdown
from toolselect.suggestions import Suggestion, most_affected, place, targets

LISTED = {"get_weather", "get_forecast"}
GOOD = {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
JUDGED = Judged(True, 8, 2, 8, 0.031, 9, 10, (), "accepted")
TOOLS = {"tools": [{"name": "get_weather", "description": "Weather now."},
                   {"name": "get_forecast", "description": "Weather over time."}]}  # fmt: skip


def accepted(description: str = "Forecast: the coming days.") -> Suggestion:
    return Suggestion("get_forecast", "accepted", "openai:gpt-4.1", 3, JUDGED, description=description)


def test_regressions_are_the_tools_whose_recall_fell_most_first_and_confusions_the_hottest_cells():
    base = weather_report(GOOD)
    head = weather_report({**GOOD, "rain tomorrow": "get_weather", "wind now": "get_forecast"})
    # get_weather's recall fell 100% → 0%, get_forecast's 100% → 50%
    assert targets("regressions", head, base, LISTED) == ["get_weather", "get_forecast"]
    assert targets("regressions", base, base, LISTED) == []
    assert targets("regressions", head, None, LISTED) == []  # no base: nothing fell
    over = weather_report({**GOOD, "thanks": "get_weather"})
    assert targets("confusions", over, None, LISTED) == ["get_weather"]  # a case wanting no call: the tool picked
    assert targets("confusions", base, None, LISTED) == []
    # of two models, the rewrites are tested with the one the PR hurt
    assert most_affected("regressions", [(base, base), (head, base)], LISTED) == 1
    assert most_affected("confusions", [(over, None), (base, None)], LISTED) == 0


def test_a_rewrite_is_a_suggestion_only_when_every_line_it_replaces_is_in_the_diff():
    text = json.dumps(TOOLS, indent=2) + "\n"
    line = text.splitlines().index('      "description": "Weather over time."') + 1
    inside = place(accepted(), "tools.json", text, "Weather over time.", None, {line - 1, line, line + 1})
    assert inside.in_diff and suggestable(inside) and inside.rewrite is not None
    assert inside.rewrite.lines == ('      "description": "Forecast: the coming days."',)
    assert '+      "description": "Forecast: the coming days."' in inside.patch
    outside = place(accepted(), "tools.json", text, "Weather over time.", None, {1, 2})
    assert outside.patch and not outside.in_diff and not suggestable(outside)
    missing = place(accepted(), "tools.json", text, "Not this text.", None, {line})
    assert missing.rewrite is None and "not found in tools.json" in missing.unplaced


def test_a_rewrite_whose_file_would_not_read_back_is_reported_and_never_offered(monkeypatch):
    """A writer that broke the file (the triple-quoted description ending in a quote, as it was
    written before) gives neither a suggestion nor a patch: the comment says why."""
    from toolselect import literal

    source = 'mcp = Server()\n\n\n@mcp.tool(description="""Weather over time.""")\ndef get_forecast(): ...\n'
    monkeypatch.setattr(literal, "_literal", lambda text, opening, suffix: '"""' + text + '"""')
    broken = place(accepted('Forecast, not "now"'), "server.py", source, "Weather over time.", None, {4})
    assert broken.rewrite is None and broken.patch == "" and not suggestable(broken)
    assert "would not read back as the new description (it would not parse" in broken.unplaced
    monkeypatch.undo()
    fine = place(accepted('Forecast, not "now"'), "server.py", source, "Weather over time.", None, {4})
    assert fine.rewrite is not None and fine.in_diff
    assert fine.rewrite.lines == ('@mcp.tool(description="""Forecast, not "now\\"""")',)


def test_a_suggestion_block_is_the_exact_lines_longer_than_any_backtick_run_and_never_a_bidi_one():
    text = json.dumps(TOOLS, indent=2) + "\n"
    line = text.splitlines().index('      "description": "Weather over time."') + 1
    ticks = place(accepted("Use ```fences``` and @octocat."), "tools.json", text, "Weather over time.", None, {line})
    mark = Mark("default", "get_forecast", suggestion_key(ticks), suggestion=True)
    body = suggestion_body(ticks, mark.text(), None)
    assert "\n````suggestion\n" in body and "\n````\n" in body  # four: longer than the text's three
    assert '"description": "Use ```fences``` and @octocat."' in body  # exactly as accepting it writes it
    [block] = re.findall(r"\n````suggestion\n(.*?)\n````\n", body, re.DOTALL)
    lines = text.splitlines()
    lines[ticks.rewrite.start - 1 : ticks.rewrite.end] = block.split("\n")  # committing the suggestion
    assert json.loads("\n".join(lines))["tools"][1]["description"] == "Use ```fences``` and @octocat."
    assert read_mark(body, "default") == mark
    escaped = place(accepted("Weather\u202e later."), "tools.json", text, "Weather over time.", None, {line})
    assert escaped.rewrite is not None and escaped.rewrite.lines == ('      "description": "Weather\\u202e later."',)
    assert suggestable(escaped)  # the bidi character is written as its escape: nothing hidden in the block
    beside = '{"tools": [{"name": "get_forecast\u202e", "description": "Weather over time."}]}\n'  # one already there
    hidden = place(accepted(), "tools.json", beside, "Weather over time.", None, {1})
    assert hidden.in_diff and not suggestable(hidden)
    assert "⟨U+202E⟩" in suggestions_markdown([hidden])  # shown as a patch, the character visible


def test_a_withdrawn_suggestion_keeps_its_headline_and_no_block_that_could_be_applied():
    text = json.dumps(TOOLS, indent=2) + "\n"
    line = text.splitlines().index('      "description": "Weather over time."') + 1
    s = place(accepted(), "tools.json", text, "Weather over time.", None, {line})
    mark = Mark("default", "get_forecast", suggestion_key(s), suggestion=True)
    gone = resolved_body(suggestion_body(s, mark.text(), None), mark, "the description changed")
    assert "suggestion" not in gone.split("\n", 1)[1] and "passed the held-out test" in gone
    assert read_mark(gone, "default") == Mark("default", "get_forecast", mark.key, resolved=True, suggestion=True)


def test_the_comment_says_what_was_tried_when_nothing_passed():
    failed = Suggestion("get_forecast", "3 rewrites tried for get_forecast; none passed the held-out test", "x:y", 3)
    said = suggestions_markdown([failed])
    assert "✗ 3 rewrites tried for get\\_forecast; none passed" in said and "suggestion" not in said


def test_a_pr_that_changes_only_descriptions_leads_with_what_they_did_to_selection():
    base = weather_report(GOOD)
    shorter = weather_report({**GOOD, "rain tomorrow": "get_weather"}, description="Forecast")
    body = render_comment(compare_saved(base, shorter, {}, base_label="base"))
    lead = body.split("| metric |")[0]
    assert "**Only tool descriptions changed** (`get_forecast`). What they did to selection:" in lead
    assert (
        "- accuracy 100.0% → 75.0%: paired over the whole suite: −25.0 pt, 95% CI −75.0…0.0, not significant (p = 1)"
        in lead
    )
    assert "- confusions heated: 🔺 wanted `get_forecast`, got `get_weather`: 0 → 1" in lead
    assert "- confusions cooled: none" in lead and "- tool-list tokens " in lead and "(-5, " in lead
    same_text = weather_report(GOOD, names=["rain tomorrow", "wind now", "week ahead"])  # a case less, no text changed
    assert "Only tool descriptions" not in render_comment(compare_saved(base, same_text, {}, base_label="base"))
