"""How findings are shown at scale: grouped, capped per code, tallied; on a PR only what it brought."""

from __future__ import annotations

from toolselect.lint.finding import Finding
from toolselect.render.findings import finding_groups, more_text, news, tally


def f(
    code: str, severity: str = "warning", scope: str = "surface", tool: str | None = None, message: str = "m"
) -> Finding:
    return Finding(code, severity, message, "", scope, tool)  # type: ignore[arg-type]


def test_golden_first_errors_always_shown_and_the_rest_counted():
    findings = [f("confusable", tool=f"t{i}", message=f"t{i}") for i in range(43)]
    findings += [f("name-empty", "error", message=str(i)) for i in range(5)]
    findings += [f("prompt-todo", "info", "golden", message=str(i)) for i in range(186)]
    golden, surface = finding_groups(findings, per_code=3)
    assert (golden.title, golden.total, len(golden.shown)) == ("Golden set", 186, 3)
    assert golden.more == [("prompt-todo", 183)]
    assert [x.code for x in surface.shown] == ["name-empty"] * 5 + ["confusable"] * 3  # errors first, never capped
    assert more_text(surface.more) == "… 40 more confusable"
    assert tally(findings) == "186 prompt-todo · 43 confusable · 5 name-empty"
    assert all(not g.more for g in finding_groups(findings, per_code=None))


def test_a_pull_request_shows_only_the_findings_it_brought():
    base = [f("param-no-description", tool="a", message="a: x"), f("coverage-few-cases", scope="golden")]
    head = [*base, f("param-no-description", tool="b", message="b: x"), f("description-long", tool="c", message="c")]
    assert [x.tool for x in news(head, base, [])] == ["b", "c"]
    # a finding that was there before, on a tool the PR changed, is the PR's to look at too
    assert [x.tool for x in news(head, base, ["a"])] == ["a", "b", "c"]
