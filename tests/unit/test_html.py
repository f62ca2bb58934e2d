"""The HTML report, without a browser: each confusion cell lists exactly the samples report.confusion
counts there, every string from a report is escaped, the page loads nothing, and the one inline
script is the one the Content-Security-Policy allows.

Real reports come from scripts/html_screenshot.py: the bundled example run offline with bm25 (its
single-call and trajectory cases), as it is and with get_forecast reworded, at two thresholds.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from tests.builders import OBJ, RUN, Reports, build_report, gate, hostile, hostile_outcome, screenshot, shown_name
from toolselect.golden import Case, Source
from toolselect.outcome import ModelOutcome, Outcome, compare_saved
from toolselect.pick import Pick
from toolselect.render.html import CSP, SCRIPT, render_html
from toolselect.render.html_matrix import cell_members, confusion_cell
from toolselect.report.schema import Report
from toolselect.scoring import score_sample
from toolselect.surface import build_surface


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    """(label, base | head) → a real report of the bundled example (four offline runs at once)."""
    return screenshot.example_reports(tmp_path_factory.mktemp("example"))


def two_models(reports: Reports) -> Outcome:
    return screenshot.outcome_of(reports, tuple(screenshot.MODELS))


def one_model(reports: Reports) -> Outcome:
    return screenshot.outcome_of(reports, ("bm25",))


def counted_cells(report: Report) -> dict[str, dict[str, int]]:
    """report.confusion as counted from `cell_members`: each cell's samples."""
    cells, _ = cell_members(report)
    out: dict[str, dict[str, int]] = {}
    for (row, column), members in cells.items():
        out.setdefault(row, {})[column] = sum(len(m.samples) for m in members)
    return out


def edge_report() -> Report:
    """Samples of every kind the matrix places: an ERROR, an unknown and a left-out tool, a list of
    expected tools (picked, and missed), no call, a case that needs review, a sample never asked, and
    one case whose three samples land in three cells."""
    s = build_surface(
        [
            {"name": "get_weather", "description": "Weather now", "inputSchema": OBJ},
            {"name": "get_forecast", "description": "Forecast", "inputSchema": OBJ},
            {"name": "broken", "description": "bad schema", "inputSchema": {"type": "string"}},
        ],
        "t",
    )
    at = lambda i: Source("g.jsonl", i)  # noqa: E731
    cases = {
        "error": Case("error", "p", "get_weather", {}, at(1)),
        "unknown": Case("unknown", "p", "get_weather", {}, at(2)),
        "left out": Case("left out", "p", "get_weather", {}, at(3)),
        "list picked": Case("list picked", "p", ("get_forecast", "get_weather"), {}, at(4)),
        "list missed": Case("list missed", "p", ("get_forecast", "get_weather"), {}, at(5)),
        "none": Case("none", "p", None, {}, at(6)),
        "pending": Case("pending", "p", "get_weather", {}, at(7), status="needs_review"),
        "never asked": Case("never asked", "p", "get_forecast", {}, at(8)),
        "three cells": Case("three cells", "p", "get_forecast", {}, at(9)),
    }
    picks: dict[str, list[Pick]] = {
        "error": [Pick(error="500 from the API")],
        "unknown": [Pick("get_wether", {})],
        "left out": [Pick("broken", {})],
        "list picked": [Pick("get_weather", {})],
        "list missed": [Pick(None)],
        "none": [Pick("get_forecast", {})],
        "pending": [Pick("get_forecast", {})],
        "never asked": [Pick(skipped="not in the answer cache")],
        "three cells": [Pick("get_forecast", {}), Pick("get_weather", {}), Pick(None)],
    }
    results = [score_sample(cases[n], p, s, i) for n, ps in picks.items() for i, p in enumerate(ps)]
    lenient = gate(min_accuracy=0, max_error_rate=1)
    return build_report(list(cases.values()), results, s, RUN, lenient)


# --------------------------------------------------------------------------- cells


def test_each_cell_holds_exactly_the_samples_report_confusion_counts(reports: Reports):
    trajectory_cells = set()
    for report in reports.values():
        assert counted_cells(report) == report.confusion
        offered = set(report.surface.tools)
        for case in report.cases:
            if case.expect_calls is not None:
                trajectory_cells |= {confusion_cell(case, s, offered) for s in case.samples}
    # the trajectory cases are placed by their first call: right, wrong, and rightly none
    assert ("get_forecast", "get_forecast") in trajectory_cells and ("(none)", "(none)") in trajectory_cells
    assert any(cell is not None and cell[0] != cell[1] for cell in trajectory_cells)
    edge = edge_report()
    assert counted_cells(edge) == edge.confusion
    cells, uncounted = cell_members(edge)
    where = {(m.case.name, s.index): cell for cell, ms in cells.items() for m in ms for s in m.samples}
    assert where == {
        ("error", 0): ("get_weather", "(error)"),
        ("unknown", 0): ("get_weather", "(unknown)"),
        ("left out", 0): ("get_weather", "(unknown)"),
        ("list picked", 0): ("get_weather", "get_weather"),
        ("list missed", 0): ("get_forecast", "(none)"),
        ("none", 0): ("(none)", "get_forecast"),
        ("three cells", 0): ("get_forecast", "get_forecast"),
        ("three cells", 1): ("get_forecast", "get_weather"),
        ("three cells", 2): ("get_forecast", "(none)"),
    }
    assert sorted(m.case.name for m in uncounted) == ["never asked", "pending"]


# --------------------------------------------------------------------------- the page, parsed


class Page(HTMLParser):
    """Every element (tag, attributes) and the text, as a browser's parser sees them."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in = tag
            if tag == "script":
                self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in is None:
            self.text.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]

    def joined(self) -> str:
        return "".join(self.text)


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "main", "nav", "section", "div", "p", "span",
    "h1", "h2", "h3", "h4", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "a", "button", "code",
    "pre", "small", "strong", "em", "b", "br", "aside", "details", "summary", "dl", "dt", "dd", "footer", "script",
}  # fmt: skip


def test_every_report_string_is_escaped_and_shown_as_text(reports: Reports):
    outcome, tool = hostile_outcome(reports)
    page_html = render_html(outcome, run_url=hostile(97))
    assert "window.pwned" not in "".join(Page(page_html).scripts)
    assert "<img" not in page_html and "<script>window" not in page_html
    page = Page(page_html)
    assert {tag for tag, _ in page.elements} <= ALLOWED_TAGS
    assert not page.tags("img") and len(page.tags("script")) == 1
    assert not [(t, k) for t, attrs in page.elements for k in attrs if k.startswith("on")]
    text = page.joined()
    # each hostile string the reports carry, and each the outcome adds, is on the page as text
    dumped = "".join(m.head.model_dump_json() for m in outcome.models)
    fields = set(re.findall(r"window\.pwned=(\d+)</script>", dumped))
    shown = set(re.findall(r"window\.pwned=(\d+)</script>", text))
    holdout_only = holdout_fields(outcome)
    assert fields - holdout_only - shown == set()  # everything but a holdout case's own texts
    assert {"0", "50", "51", "60", "61", "70", "71", "80", "81", "97", "98", "99"} <= shown
    assert all(m.diff is not None for m in outcome.models)
    assert tool in text
    # and the base's descriptions, in the tool surface's diff
    base_descriptions = {
        n for m in outcome.models if m.base for d in m.base.surface.definitions
        for n in re.findall(r"window\.pwned=(\d+)</script>", d["description"])
    }  # fmt: skip
    assert base_descriptions and base_descriptions <= shown
    # a holdout case shows neither its name nor its prompt, arguments or reasons
    assert not holdout_only & shown


def holdout_fields(outcome: Outcome) -> set[str]:
    """The hostile strings only holdout cases carry (their names, prompts, arguments, reasons)."""
    found = set()
    for m in outcome.models:
        for case in m.head.cases:
            if case.split == "holdout":
                own = case.model_copy(update={"source": case.source.model_copy(update={"file": ""})})
                found |= set(re.findall(r"window\.pwned=(\d+)</script>", own.model_dump_json()))
    return found


def test_the_csp_allows_the_one_inline_script_by_its_hash_and_nothing_else(reports: Reports):
    page_html = render_html(two_models(reports))
    page = Page(page_html)
    [meta] = [a for a in page.tags("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    csp = meta["content"] or ""
    assert csp == CSP
    assert csp.startswith("default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-")
    [script] = page.scripts
    assert script == SCRIPT
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    assert f"script-src 'sha256-{digest}';" in csp
    assert page.tags("script") == [{}]  # inline, no src
    assert not page.tags("link") and not page.tags("iframe") and not page.tags("form")


def test_the_page_links_nothing_outside_itself(reports: Reports):
    url = "https://github.com/acme/weather/actions/runs/1"
    page_html = render_html(two_models(reports), run_url=url)
    page = Page(page_html)
    refs = [(k, v or "") for _, attrs in page.elements for k, v in attrs.items() if k in ("src", "href", "action")]
    assert refs and all(k == "href" and v.startswith("#") for k, v in refs)
    ids = {attrs["id"] for _, attrs in page.elements if attrs.get("id")}
    assert {v[1:] for _, v in refs} <= ids  # every link is to a place on the page
    attributes = " ".join(v or "" for _, attrs in page.elements for v in attrs.values())
    assert "http://" not in attributes and "https://" not in attributes
    assert not re.search(r"url\(", page_html)
    assert url in page.joined()  # the run is named, as text


def test_one_model_and_two_models(reports: Reports):
    one = Page(render_html(one_model(reports)))
    sections = [a for a in one.tags("section") if "model" in (a.get("class") or "").split()]
    assert [a["id"] for a in sections] == ["m0"]
    assert not one.tags("nav") and not [a for a in one.tags("section") if a.get("class") == "overview"]
    two = Page(render_html(two_models(reports)))
    sections = [a for a in two.tags("section") if "model" in (a.get("class") or "").split()]
    assert [a["id"] for a in sections] == ["m0", "m1"]
    assert len(two.tags("nav")) == 1
    tabs = [a.get("data-show") for a in two.tags("a") + two.tags("button") if (a.get("class") or "") == "tab"]
    assert sorted(t or "" for t in tabs) == ["all", "m0", "m1"]
    assert [a for a in two.tags("section") if a.get("class") == "overview"]
    text = two.joined()
    assert "bm25-strict" in text and "Models" in text


def test_every_cell_links_to_the_group_that_lists_its_cases(reports: Reports):
    outcome = two_models(reports)
    page_html = render_html(outcome)
    for i, m in enumerate(outcome.models):
        cells, uncounted = cell_members(m.head)
        links = set(re.findall(rf'<a class="cell" href="#(m{i}-cell-\d+-\d+)" data-cell="\1"', page_html))
        groups = re.findall(rf'<section class="group \w+" id="(m{i}-cell-\d+-\d+)" data-group="\1">', page_html)
        assert links == set(groups) and len(groups) == len(cells)
        in_groups = Counter(shown_name(member.case) for ms in cells.values() for member in ms)
        expected: Counter[str] = Counter()
        for case in m.head.cases:  # a case is listed once in each cell its samples are in
            for _ in {confusion_cell(case, s, m.head.surface.tools) for s in case.samples} - {None}:
                expected[shown_name(case)] += 1
        assert in_groups == expected and not uncounted


def test_a_pending_case_and_unasked_samples_are_listed_apart():
    report = edge_report()
    outcome = compare_saved(None, report, {}, base_label="main")
    page_html = render_html(outcome)
    group = page_html.split('id="m0-uncounted"')[1].split("</section>")[0]
    assert "pending" in group and "never asked" in group and "needs review" in group
    text = Page(page_html).joined()
    assert "wanted get_weather, got (error)" in text and "wanted get_weather, got (unknown)" in text
    assert "samples #0 of 3 · passed 1/3" in text and "samples #2 of 3" in text  # one case in three cells


def test_a_one_model_outcome_without_a_base_renders(reports: Reports):
    head = reports[("bm25", "head")]
    outcome = compare_saved(None, head, {}, base_label="main")
    m = outcome.models[0]
    assert m.diff is None
    page_html = render_html(replace(outcome, models=(ModelOutcome(m.label, head, None, None, m.verdict, "no base"),)))
    text = Page(page_html).joined()
    assert "no base" in text and "Confusion matrix" in text and "(head; Δ vs base" not in text
    assert "Trajectories" in text and "1. [turn 0]" in text  # the trajectory cases' traces


def test_a_thousand_cases_render_each_once_in_a_bounded_page():
    """(Not timed: a timed assertion flakes on a loaded 2-core machine.)"""
    s = build_surface([{"name": f"tool_{i}", "description": f"does {i}", "inputSchema": OBJ} for i in range(30)], "t")
    cases = [Case(f"case {i}", f"prompt {i} " * 8, f"tool_{i % 30}", {}, Source("g.jsonl", i + 1)) for i in range(1000)]
    results = [score_sample(c, Pick(f"tool_{(i * 7) % 31}", {"q": i}), s, 0) for i, c in enumerate(cases)]
    report = build_report(cases, results, s, RUN, gate(min_accuracy=0))
    page_html = render_html(compare_saved(None, report, {}, base_label="main"))
    assert page_html.count('<tr><td><div class="name">') == 1000  # each case once (one sample each)
    assert len(page_html) < 2_000_000


def test_holdout_cases_show_their_place_only():
    """As in the other views: a holdout case's name, prompt, arguments and reasons may give it away."""
    s = build_surface([{"name": "get_weather", "description": "Weather now", "inputSchema": OBJ}], "t")
    secret = "Will it snow in Oslo tonight"
    seen = Case("seen", "Weather in Rome?", "get_weather", {"city": "Rome"}, Source("g.jsonl", 1))
    held = Case(secret, secret, "get_weather", {"city": "Oslo"}, Source("g.jsonl", 2), split="holdout")
    lenient = gate(min_accuracy=0)
    base = build_report([seen], [score_sample(seen, Pick("get_weather", {"city": "Rome"}), s)], s, RUN, lenient)
    results = [
        score_sample(seen, Pick("get_weather", {"city": "Rome"}), s),
        score_sample(held, Pick("get_weather", {"city": "Oslo"}), s),
    ]
    head = build_report([seen, held], results, s, RUN, lenient)
    text = Page(render_html(compare_saved(base, head, {}, base_label="main"))).joined()
    assert "new: holdout case (g.jsonl:2)" in text and "holdout case (g.jsonl:2)(holdout: not shown)" in text
    assert "Oslo" not in text and "snow" not in text and "(holdout: not shown)" in text
    assert "Rome" in text  # a case that is not held out shows its prompt and arguments


def test_a_report_whose_matrix_does_not_match_its_samples_still_renders():
    """A report read back is checked for its sums, not cell by cell: its cases are listed all the same."""
    report = edge_report().model_copy(update={"confusion": {}})
    page_html = render_html(compare_saved(None, report, {}, base_label="main"))
    text = Page(page_html).joined()
    assert "No counted samples." in text and "wanted get_weather, got (error)" in text
    assert 'id="m0-cell-x0"' in page_html


def test_a_change_is_coloured_by_its_direction():
    """Under-triggering rising is worse (red), as accuracy falling is; a fall of it is better."""
    from tests.builders import weather_report
    from toolselect.outcome import compare_saved
    from toolselect.render.html import metrics_table

    good = {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
    silent = {**good, "rain tomorrow": None, "wind now": None}
    worse = compare_saved(weather_report(good), weather_report(silent), {}, base_label="b")
    table = metrics_table(worse.head, worse.diff)
    row = next(r for r in table.split("<tr") if "under-triggering" in r)
    assert 'class="delta worse">+66.7 pt' in row
    assert 'class="delta worse">−50.0 pt' in next(r for r in table.split("<tr") if ">accuracy (right" in r)
    better = compare_saved(weather_report(silent), weather_report(good), {}, base_label="b")
    row = next(r for r in metrics_table(better.head, better.diff).split("<tr") if "under-triggering" in r)
    assert 'class="delta better">−66.7 pt' in row
