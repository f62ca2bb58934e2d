"""The head is judged in one place (gate.judged), and every view says that one verdict: the console,
the Markdown report, the PR comment, the HTML report and JUnit agree on passed/failed and on every
reason, whichever way the outcome was reached (a live run judged under another gate, a saved pair)."""

from __future__ import annotations

import html as htmllib
import io
import re
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from tests.builders import markup_report
from toolselect.gate import Gate, Verdict
from toolselect.outcome import Comparison, Outcome, compare_saved, evaluate
from toolselect.render.comment import render_comment
from toolselect.render.console import ConsoleView
from toolselect.render.escape import esc
from toolselect.render.html import render_html
from toolselect.render.junit import render_junit
from toolselect.render.markdown import render_markdown


def console_says(outcome: Outcome) -> tuple[bool, list[str]]:
    buffer = io.StringIO()
    ConsoleView(console=Console(file=buffer, width=400)).finish_outcome(outcome)
    lines = buffer.getvalue().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(("PASSED", "FAILED")))
    reasons = [line[4:] for line in lines[at + 1 :] if line.startswith("  - ")]
    return lines[at].startswith("PASSED"), reasons


def markdown_says(text: str, heading: str, bullet: str) -> tuple[bool, list[str]]:
    """The headline's mark, and the bullets said under it before the metrics (the reasons)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(heading))
    reasons: list[str] = []
    for line in lines[at + 1 :]:
        if line.startswith(("|", "#", "<")):  # the metrics begin: no reasons were said
            break
        if line.startswith(bullet):
            reasons.append(line[len(bullet) :])
        elif reasons:
            break
    return "✅" in lines[at], reasons


def html_says(page: str) -> tuple[bool, list[str]]:
    summary = re.search(r'<section class="summary (pass|fail)">(.*?)</section>', page, re.S)
    assert summary is not None
    listed = re.search(r'<ul class="reasons">(.*?)</ul>', summary[2], re.S)
    items = re.findall(r"<li>(.*?)</li>", listed[1]) if listed else []
    return summary[1] == "pass", [htmllib.unescape(i) for i in items]


def junit_says(xml: str) -> tuple[bool, list[str]]:
    gate = next(tc for tc in ET.fromstring(xml).iter("testcase") if tc.get("name") == "gate")
    failure = gate.find("failure")
    return failure is None, [] if failure is None else failure.get("message", "").split("; ")


def lenient() -> Comparison:
    return Comparison(markup_report())  # built under min_accuracy 1: failed as built


OUTCOMES = {
    "judged again under a looser gate": lambda: evaluate(lenient(), Gate.from_values({"min_accuracy": 0})),
    "judged again under a stricter gate": lambda: evaluate(
        lenient(), Gate.from_values({"min_accuracy": 0.5, "min_tool_recall": {"other": 1.0}})
    ),
    "a saved pair under the options given": lambda: compare_saved(
        markup_report(), markup_report(), {"min_accuracy": 0.0, "max_drop": 0}, base_label="main"
    ),
    "a saved head alone": lambda: compare_saved(None, markup_report(), {"min_accuracy": 0.4}, base_label="main"),
}


@pytest.mark.parametrize("name", OUTCOMES)
def test_every_view_says_the_one_verdict(name):
    outcome = OUTCOMES[name]()
    verdict: Verdict = outcome.verdict
    escaped = [esc(r) for r in verdict.reasons]
    views = {
        "console": console_says(outcome),
        "markdown": markdown_says(render_markdown(outcome), "## ", "- "),
        "comment": markdown_says(render_comment(outcome, comment_id="x"), "### ", "- ❌ "),
        "html": html_says(render_html(outcome)),
        "junit": junit_says(render_junit(outcome)),
    }
    expected = {
        "console": (verdict.passed, list(verdict.reasons)),
        "markdown": (verdict.passed, escaped),
        "comment": (verdict.passed, escaped),
        "html": (verdict.passed, list(verdict.reasons)),
        "junit": (verdict.passed, list(verdict.reasons)),
    }
    assert views == expected
    assert outcome.head.passed == (not outcome.head.gate.reasons)  # the report records what the gate judged


def test_a_report_judged_again_records_the_new_judgment():
    """The head report's own record follows the gate it is judged under, so its JSON and the views agree."""
    strict = evaluate(lenient())
    loose = evaluate(lenient(), Gate.from_values({"min_accuracy": 0}))
    assert not strict.head.passed and strict.head.gate.reasons == ["accuracy 0.0% (0/2) is below min_accuracy 100%"]
    assert loose.head.passed and loose.head.gate.reasons == [] and loose.head.gate.min_accuracy == 0
    assert loose.verdict.passed and not strict.verdict.passed
