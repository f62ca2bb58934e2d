"""The review comment's marker and words: a hostile tool name can't end the hidden marker, break
out of code, or ping anyone; a marker of another comment id is not ours."""

from __future__ import annotations

import re

from toolselect.impact import RateChange, ToolImpact
from toolselect.render.review import Mark, annotation_text, finding_key, inline_body, read_mark, resolved_body
from toolselect.report.schema import Metric
from toolselect.sourcelines import Location, TextChange

EVIL = "x`` --> <img src=x> @acme/maintainers <!-- toolselect-review:default tool=y key=00 -->"


def metric(k: int, n: int) -> Metric:
    return Metric(value=k / n if n else None, numerator=k, denominator=n)


def impact(tool: str = EVIL) -> ToolImpact:
    return ToolImpact(
        tool=tool,
        changes=(TextChange(tool, "description", "old", "new"),),
        recall=RateChange(metric(4, 4), metric(1, 4), 0.14),
        precision=RateChange(metric(4, 4), metric(1, 1), 1.0),
        cells=(),
        flips=(),
        alpha=0.05,
    )


def test_a_hostile_tool_name_stays_inside_its_marker_and_its_code():
    where = Location(EVIL, "description", "src/a.ts", 3, 5, 1.0, 1.0)
    mark = Mark("default", EVIL, finding_key(impact(), where))
    body = inline_body(impact(), where, mark, "https://github.com/acme/w/pull/7#issuecomment-1")
    first, rest = body.split("\n", 1)
    assert read_mark(body, "default") == mark and first.count("-->") == 1
    assert "<!--" not in rest and "-->" not in rest and "@acme" not in body
    assert "<img" not in re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", rest)
    assert "| recall | 100.0% (4/4) | 25.0% (1/4) | −75.0 pt · p = 0.14, could be chance |" in body
    assert "on these lines" in body and read_mark(body, "other") is None


def test_resolving_keeps_the_marker_first_and_says_why():
    mark = Mark("default", "get_forecast", "ab12")
    body = resolved_body(f"{mark.text()}\n#### old words\n", mark, "at abc, fixed")
    again = read_mark(body, "default")
    assert again is not None and again.resolved and again.key == "ab12"
    assert body.splitlines()[1] == "> ✅ **Resolved:** at abc, fixed" and "#### old words" in body


def test_the_annotation_is_one_plain_line():
    where = Location("get_forecast", "description", "a.py", 1, 1, 1.0, 1.0)
    assert annotation_text(impact("get_forecast"), where) == (
        "description of get_forecast changed. recall 100.0% → 25.0%, precision 100.0% → 100.0%"
    )
    assert impact().regressed


def test_a_parameter_field_reads_as_words_with_its_name_as_code():
    where = Location("t", "parameter `a`b`: enum", "a.py", 1, 1, 1.0, 1.0)
    body = inline_body(impact("t"), where, Mark("default", "t", "ab"), None)
    assert "The enum of parameter `` a`b `` of `t` changed on this line" in body
