"""The HTML report in a real browser (Debian's Chromium, driven by playwright): it loads nothing but
itself and logs no error; a click on a confusion cell shows exactly that cell's cases; the switcher
shows one model at a time; hostile report text stays text; and without JavaScript every model is
on the page and each cell is a link to the list of its cases.

The reports are real: the bundled example, run offline with bm25 (scripts/html_screenshot.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.builders import hostile, hostile_outcome, screenshot, shown_name
from toolselect.outcome import Outcome
from toolselect.render.html import render_html
from toolselect.render.html_matrix import confusion_cell
from toolselect.report.schema import Report

CHROMIUM = Path(screenshot.CHROMIUM)
# one worker runs every test here: the reports are built and the browser started once, not per worker
pytestmark = pytest.mark.xdist_group("browser")


@dataclass
class Watch:
    """What a page did: its console errors, uncaught errors, and every request it made."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@dataclass
class Pages:
    two: Path  # two models, each with a base
    one: Path  # one model
    hostile: Path
    outcome: Outcome  # the two models'
    browser: Browser
    page: Page  # with JavaScript, shared by the tests (a new context per test costs more than they do)
    watch: Watch


def watched(page: Page) -> Watch:
    watch = Watch()
    page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: watch.errors.append(str(e)))
    page.on("request", lambda r: watch.requests.append(r.url))
    return watch


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pages]:
    """The three pages, written from real reports, and one browser (started while the reports are made)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run tests/install-servers.sh first (it installs Debian's chromium)")
    tmp = tmp_path_factory.mktemp("html")
    with ThreadPoolExecutor(1) as pool, sync_playwright() as p:
        making = pool.submit(screenshot.example_reports, tmp / "runs")
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            reports = making.result()
            two = screenshot.outcome_of(reports, tuple(screenshot.MODELS))
            files = {
                "two": render_html(two, run_url="https://github.com/acme/weather/actions/runs/7"),
                "one": render_html(screenshot.outcome_of(reports, ("bm25",))),
                "hostile": render_html(hostile_outcome(reports)[0]),
            }
            for name, text in files.items():
                (tmp / f"{name}.html").write_text(text, encoding="utf-8")
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            yield Pages(tmp / "two.html", tmp / "one.html", tmp / "hostile.html", two, browser, page, watched(page))
        finally:
            browser.close()


def open_page(pages: Pages, path: Path) -> tuple[Page, Watch]:
    """`path` in the shared page, with a fresh record of what it does."""
    pages.page.goto("about:blank")  # a new document, even when only the URL's #fragment would differ
    pages.watch.errors.clear()
    pages.watch.requests.clear()
    pages.page.goto(path.as_uri())
    return pages.page, pages.watch


def expected_cases(report: Report, row: str, column: str) -> tuple[set[str], int]:
    """The names of the cases with a sample in cell (row, column), and how many samples are there."""
    offered = set(report.surface.tools)
    names, n = set(), 0
    for case in report.cases:
        here = [s for s in case.samples if confusion_cell(case, s, offered) == (row, column)]
        if here:
            names.add(shown_name(case))
            n += len(here)
    return names, n


# What a model's section shows, read in one round trip: the case groups that are visible and the
# names of their cases, whether the "one cell" bar is shown, the URL's hash, the selected cells.
SHOWN = """m => {
  const seen = el => !!el && el.getClientRects().length > 0;
  const groups = [...m.querySelectorAll(".cases .group")].filter(seen);
  return {
    groups: groups.length,
    names: groups.flatMap(g => [...g.querySelectorAll("tbody .name")].map(e => e.firstChild.textContent.trim())),
    filtered: seen(m.querySelector("[data-filter]")),
    hash: location.hash,
    selected: [...m.querySelectorAll("a.selected")].map(a => a.getAttribute("data-cell")),
  };
}"""
# Each matrix cell's link: its id, its row's and column's labels, and the count it shows.
CELLS = """m => {
  const rows = [...m.querySelectorAll(".heatmap tbody th.row")].map(th => th.textContent.trim());
  const cols = [...m.querySelectorAll(".heatmap thead th.col:not(.total)")].map(th => th.textContent.trim());
  return [...m.querySelectorAll(".heatmap a.cell")].map(a => ({
    id: a.getAttribute("data-cell"),
    row: rows[a.parentElement.parentElement.rowIndex - 1],
    column: cols[a.parentElement.cellIndex - 1],
    n: parseInt(a.textContent, 10),
  }));
}"""


def test_loads_nothing_and_logs_no_error(pages: Pages):
    for path in (pages.two, pages.one, pages.hostile):
        page, watch = open_page(pages, path)
        page.locator("section.model:visible td.off a.cell").first.click()
        if path != pages.one:
            page.locator("[data-show=all]").click()
        assert watch.errors == []
        assert watch.requests == [path.as_uri()]


def test_a_cell_shows_exactly_its_cases(pages: Pages):
    page, watch = open_page(pages, pages.two)
    for i, m in enumerate(pages.outcome.models):
        page.locator(f'.switcher [data-show="m{i}"]').click()
        model = page.locator(f"#m{i}")
        cells = model.evaluate(CELLS)
        assert len(cells) == sum(1 for row in m.head.confusion.values() for n in row.values() if n)
        for cell in cells:
            names, n = expected_cases(m.head, cell["row"], cell["column"])
            assert n == m.head.confusion[cell["row"]][cell["column"]] == cell["n"]
            model.locator(f'.heatmap a[data-cell="{cell["id"]}"]').click()
            shown = model.evaluate(SHOWN)
            assert sorted(shown["names"]) == sorted(names), cell
            assert shown["groups"] == 1 and shown["filtered"], cell
            assert shown["hash"] == "#" + cell["id"]
            assert set(shown["selected"]) == {cell["id"]}
        model.locator("[data-all-cases]").click()
        shown = model.evaluate(SHOWN)
        assert shown["groups"] == model.locator(".cases .group").count() > 1 and not shown["filtered"]
        assert set(shown["names"]) == {shown_name(c) for c in m.head.cases} and not shown["selected"]
    assert watch.errors == []


def test_the_switcher_shows_one_model_at_a_time(pages: Pages):
    page, watch = open_page(pages, pages.two)
    first, second = page.locator("#m0"), page.locator("#m1")
    assert first.is_visible() and not second.is_visible()
    assert page.locator('.switcher [data-show="m0"]').get_attribute("aria-pressed") == "true"
    page.locator('.switcher [data-show="m1"]').click()
    assert second.is_visible() and not first.is_visible()
    assert page.locator('.switcher [data-show="m1"]').get_attribute("aria-pressed") == "true"
    assert page.locator('.switcher [data-show="m0"]').get_attribute("aria-pressed") == "false"
    page.locator('.switcher [data-show="all"]').click()
    assert first.is_visible() and second.is_visible()
    box0, box1 = first.bounding_box(), second.bounding_box()
    assert box0 and box1 and box1["x"] > box0["x"] and abs(box1["y"] - box0["y"]) < 1  # side by side
    page.locator('.overview a[data-show="m0"]').click()  # the model × metric table's names switch too
    assert first.is_visible() and not second.is_visible()
    # a link to a cell of the hidden model opens that model, with that cell's cases
    cell_id = page.locator("#m1 .heatmap a.cell").first.get_attribute("data-cell")
    page.goto(pages.two.as_uri() + "#" + (cell_id or ""))
    page.reload()
    assert second.is_visible() and not first.is_visible()
    assert page.locator("#m1 .cases .group:visible").count() == 1
    one, _ = open_page(pages, pages.one)
    assert one.locator("section.model").count() == 1 and one.locator(".switcher").count() == 0
    assert one.locator("#m0").is_visible()
    assert watch.errors == []


def test_hostile_text_stays_text(pages: Pages):
    page, watch = open_page(pages, pages.hostile)
    page.locator("section.model:visible td.off a.cell").first.click()
    page.locator("section.model:visible details.surface summary").click()
    text = page.locator("body").inner_text()
    assert hostile(0) in text  # a tool's name
    for i in (60, 70, 80, 98, 99):  # a model's label, a note, a reason, the run's notes, the base
        assert hostile(i) in text
    assert "<script>window.pwned=" in text and '"><img src=x onerror=window.pwned=' in text
    description = page.locator("section.model:visible details.surface dd .desc").first.inner_text()
    assert description.startswith("<script>window.pwned=") and description.endswith("'&amp;")
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 1
    assert watch.errors == [] and watch.requests == [pages.hostile.as_uri()]


def test_without_javascript_every_model_shows_and_cells_link_to_their_cases(pages: Pages):
    context = pages.browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = watched(page)
    page.goto(pages.two.as_uri())
    assert page.locator("#m0").is_visible() and page.locator("#m1").is_visible()
    assert not page.locator('[data-show="all"]').is_visible()  # a button that needs the script
    m = pages.outcome.models[1]
    model = page.locator("#m1")
    cell = next(c for c in model.evaluate(CELLS) if c["row"] != c["column"])
    link = model.locator(f'.heatmap a[data-cell="{cell["id"]}"]')
    target = (link.get_attribute("href") or "").removeprefix("#")
    link.click()
    assert page.evaluate("location.hash") == "#" + target
    group = page.locator(f"[id='{target}']")
    assert group.is_visible() and group.evaluate("g => g.matches(':target')")
    box = group.bounding_box()
    assert box is not None and 0 <= box["y"] < 900  # scrolled to it
    names = group.locator(".name").evaluate_all("els => els.map(e => e.firstChild.textContent.trim())")
    assert sorted(names) == sorted(expected_cases(m.head, cell["row"], cell["column"])[0])
    assert page.locator(".cases .group:visible").count() == page.locator(".cases .group").count()  # all listed
    assert watch.errors == [] and watch.requests == [pages.two.as_uri()]
    context.close()
