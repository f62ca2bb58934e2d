"""`toolselect diff BASE.json HEAD.json`: compare two saved reports."""

from __future__ import annotations

import json

from tests.conftest import DATA, toolselect

TOOLS = DATA / "outcomes" / "tools.json"


GOLDEN = (
    '{"id": "a", "question": "current weather in Paris city", "expected_tool": "get_weather"}\n'
    '{"id": "b", "question": "forecast for Rome", "expected_tool": "get_forecast"}\n'
)


def reports(tmp_path, min_accuracy="0", head_threshold="100", golden=GOLDEN):
    (tmp_path / "g.jsonl").write_text(golden)
    for name, threshold in (("base", "0.1"), ("head", head_threshold)):  # a high threshold: bm25 calls nothing
        (tmp_path / f"{name}.yaml").write_text(
            f"tools_file: {json.dumps(str(TOOLS))}\nevals:\n  provider: bm25\n  min_accuracy: {min_accuracy}\n"
            "  golden: g.jsonl\n"
            f"  params: {{threshold: {threshold}}}\n"
        )
        run = toolselect("eval", "-c", f"{name}.yaml", "--json", f"{name}.json", "-q", cwd=tmp_path)
        assert run.code in (0, 1), run.err


def test_diff_gates_on_a_drop_and_writes_markdown_and_json(tmp_path):
    reports(tmp_path)
    run = toolselect(
        "diff", "base.json", "head.json", "--max-drop", "0", "--markdown", "d.md", "--json", "d.json", cwd=tmp_path
    )
    assert run.code == 1
    assert "accuracy 100.0% → 0.0% (−100.0 pt)" in run.out
    assert "flipped to failing: a — base get_weather, head (none)" in run.out
    diff = json.loads((tmp_path / "d.json").read_text())
    assert diff["metrics"]["accuracy"]["delta_pt"] == -100.0 and len(diff["to_failing"]) == 2
    assert (
        (tmp_path / "d.md")
        .read_text()
        .startswith(
            "### ❌ toolselect failed: accuracy 100.0% → 0.0% (−100.0 pt) · 2 broke — accuracy dropped 100.0 pt vs the "
            "base, more than max-drop 0 pt\n\nPaired over the whole suite: −100.0 pt, 95% CI −100.0…−100.0, not "
            "significant (p = 0.5)"
        )
    )
    same = toolselect("diff", "base.json", "base.json", "--max-drop", "0", cwd=tmp_path)
    assert same.code == 0


def test_reports_that_cannot_be_compared(tmp_path):
    reports(tmp_path)
    head = json.loads((tmp_path / "head.json").read_text())
    head["run"]["model"] = "another-model"
    (tmp_path / "other.json").write_text(json.dumps(head))
    run = toolselect("diff", "base.json", "other.json", cwd=tmp_path)
    assert run.code == 2
    assert "can't be compared: different model: base '', head 'another-model'" in run.err
    (tmp_path / "junk.json").write_text('{"hello": 1}')
    run = toolselect("diff", "base.json", "junk.json", cwd=tmp_path)
    assert run.code == 2 and "not a toolselect report with schema_version 1" in run.err


def test_a_head_that_fails_its_own_gate_fails_the_comparison(tmp_path):
    """No drop at all, but the head is below its min_accuracy: ❌ and exit 1, as a live run says."""
    missed = '{"id": "c", "question": "tell me a joke", "expected_tool": "get_weather"}\n'  # bm25: no tool
    reports(tmp_path, min_accuracy="1", head_threshold="0.1", golden=GOLDEN + missed)
    head = json.loads((tmp_path / "head.json").read_text())
    assert head["passed"] is False
    run = toolselect("diff", "base.json", "head.json", "--max-drop", "0", "--markdown", "d.md", cwd=tmp_path)
    assert run.code == 1
    body = (tmp_path / "d.md").read_text()
    assert body.startswith("### ❌ toolselect failed: accuracy 66.7% → 66.7% (±0.0 pt")
    assert "- ❌ accuracy 66.7% (2/3) is below min\\_accuracy 100%" in body  # escaped Markdown
    assert "accuracy 66.7% (2/3) is below min_accuracy 100%" in run.out
