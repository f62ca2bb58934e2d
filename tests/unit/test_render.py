"""Renderers: Markdown escaping, JUnit failures, and the console's progress bar."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from tests.builders import SEARCH_SURFACE, markup_report
from tests.unit.gfm import BIDI, html, live
from toolselect.outcome import Comparison, evaluate
from toolselect.render.console import ConsoleView
from toolselect.render.escape import code, esc, fence
from toolselect.render.junit import render_junit
from toolselect.render.markdown import render_markdown
from toolselect.settings import default_settings


def test_escape_defangs_mentions_html_pipes_and_markers():
    text = esc("@octocat | <script> <!-- toolselect:x --> `x` [link](u)")
    assert "@octocat" not in text and "@\u200boctocat" in text
    assert "<" not in text and "<!--" not in text
    assert "\\|" in text and "\\`" in text and "\\[" in text


def test_escape_keeps_a_backslash_from_reopening_a_link():
    """`\\[click\\](…)`: escaping only the brackets left the backslash to escape the escape."""
    text = esc("\\[click\\](https://evil.example) and [plain](https://evil.example)")
    assert live(text) == [] and "<a" not in html(text)
    assert "<p>\\[click\\](https:\u200b//evil.example) and [plain](" in html(text)  # shown as written
    cell = esc("a \\| b `c` <b>x</b>")
    table = f"| x |\n|---|\n| {cell} |"
    assert live(table) == [] and html(table).count("<td>") == 1


@pytest.mark.parametrize("char", list(BIDI + "\u200b\u200c\u200d\u2060\ufeff\x00\x1b"), ids=lambda c: f"U+{ord(c):04X}")
def test_bidi_controls_and_invisible_characters_are_shown_not_obeyed(char):
    text = f"invoice{char}fdp.exe"
    shown = f"invoice⟨U+{ord(char):04X}⟩fdp.exe"
    assert esc(text) == shown
    assert code(text) == f"`{shown}`"
    assert char not in fence(text) and shown in fence(text)


def test_escape_leaves_no_autolink_mention_or_issue_reference():
    text = esc("see https://evil.example, www.evil.example, me@evil.example, @acme/team and acme/x#12 ~~no~~ $x$")
    assert live(text) == []
    rendered = html(text)
    assert "<del>" not in rendered and "$x$" in rendered


def test_markdown_report_is_safe_and_hides_holdout_names():
    md = render_markdown(evaluate(Comparison(markup_report())))
    assert md.startswith("## ❌ toolselect failed: accuracy 0.0% (0/2), min 100%")
    assert "<!-- toolselect" not in md and "@octocat" not in md
    assert "secret holdout" not in md and "the holdout prompt" not in md
    assert "holdout case (g.yaml:9)" in md
    for line in md.splitlines():
        if line.startswith("| SEL-WRONG"):
            assert line.count(" | ") + line.count("\\| ") >= 4  # pipes inside cells are escaped


def test_junit_fails_each_missed_case():
    root = ET.fromstring(render_junit(evaluate(Comparison(markup_report()))))
    suite = root.find("testsuite")
    failures = [tc.get("name") for tc in suite.iter("testcase") if tc.find("failure") is not None]
    assert failures == ["ping @octocat <!-- toolselect:x -->", "secret holdout", "gate"]
    holdout = next(tc for tc in suite.iter("testcase") if tc.get("name") == "secret holdout")
    assert "the holdout prompt" not in (holdout.find("system-out").text or "")


def test_console_shows_a_progress_bar_on_a_terminal():
    buffer = io.StringIO()
    view = ConsoleView(console=Console(file=buffer, force_terminal=True, width=120))
    s = default_settings("bm25")
    view.start(s, SEARCH_SURFACE, [], 3)
    for _ in range(3):
        view.advance(None, None)
    view.finish_outcome(evaluate(Comparison(markup_report())))
    out = buffer.getvalue()
    assert "asking" in out and "3/3" in out
    assert out.count("FAILED") == 1 and "Confusion matrix" in out


def test_inline_code_cannot_be_broken_out_of():
    from toolselect.render.escape import code

    evil = "x``<img src=x> @acme <!-- toolselect:default --> ``y"
    rendered = code(evil)
    fence = rendered.split(" ", 1)[0]
    assert fence == "```" and rendered.endswith(" ```")  # longer than any backtick run inside
    assert "<!--" not in rendered and "@acme" not in rendered


def test_holdout_rows_show_the_tool_but_not_its_arguments():
    from toolselect.render.common import case_row

    rep = markup_report()
    holdout = next(c for c in rep.cases if c.split == "holdout")
    holdout.samples[0].picked_args = {"q": "the holdout prompt, quoted"}
    row = case_row(holdout)
    assert row.picked == "search|web" and row.why == ""
