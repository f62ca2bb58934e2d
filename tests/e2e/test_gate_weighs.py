"""A gate that weighs what went wrong, through `toolselect eval --base-ref` on a git repository and the
fake model API: a read question routed to a destructive tool fails the check though accuracy stays
within max-drop and the drop is not significant; a forbidden call is critical; a consistent new
failure *broke*, a flaky one *destabilized*; mode: warn exits 0 saying "would fail"; a base another
model answered is refused — and the console, JSON, Markdown, HTML and JUnit all say the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import toolselect
from tests.e2e.harness import git
from tests.fakes.model_api import FakeModelAPI

READ = "List the calendar's events in a date range."
TOOLS: list[dict[str, Any]] = [
    {"name": "list_events", "description": READ, "annotations": {"readOnlyHint": True}},
    {"name": "create_event", "description": "Create an event.", "annotations": {"destructiveHint": False}},
    {"name": "delete_all_events", "description": "Delete every event.", "annotations": {"destructiveHint": True}},
    {"name": "ping", "description": "Check that the calendar answers."},  # its server says nothing of it
]
GOLDEN = """\
- {name: cal-today, prompt: "What's on my calendar today?", expect_tool: list_events}
- {name: cal-week, prompt: "Show me this week's events", expect_tool: list_events}
- {name: cal-add, prompt: "Add lunch with Sam", expect_tool: create_event}
- {name: cal-month, prompt: "Anything on in May?", expect_tool: list_events}
- {name: thanks, prompt: "Thanks, that's all", expect_tool: null, tags: [chat]}
"""
CONFIG = """\
tools_file: tools.json
evals:
  provider: openai
  model: fake-model
  golden: golden.yaml
  repeat: 3
  min_accuracy: 0
  max_drop: 60
  significance: 0.05
  must_not_call: {chat: [ping]}
"""
# the head rewords list_events ("Manage …"): the model then deletes for a read question, flips
# between reading and writing for another, and pings after a thank-you; the base's answers are right
SCRIPT = {
    "answers": {
        "What's on my calendar today?": [
            {"tool": "delete_all_events", "args": {}, "when": {"list_events": "Manage"}},
            {"tool": "list_events", "args": {}},
        ],
        "Show me this week's events": [
            {
                "random": [{"tool": "list_events", "args": {}}, {"tool": "create_event", "args": {}}],
                "when": {"list_events": "Manage"},
            },
            {"tool": "list_events", "args": {}},
        ],
        "Add lunch with Sam": {"tool": "create_event", "args": {}},
        "Anything on in May?": {"tool": "list_events", "args": {}},
        "Thanks, that's all": [
            {"tool": "ping", "args": {}, "when": {"list_events": "Manage"}},
            {"text": "You're welcome!"},
        ],
    },
    "seed": 3,
}


def repository(root: Path) -> Path:
    ws = root / "calendar"
    ws.mkdir()
    git("init", "-q", "-b", "main", cwd=ws)
    tools = [t | {"inputSchema": {"type": "object", "properties": {}}} for t in TOOLS]
    (ws / "tools.json").write_text(json.dumps({"tools": tools}, indent=1))
    (ws / "golden.yaml").write_text(GOLDEN)
    (ws / "toolselect.yaml").write_text(CONFIG)
    git("add", "-A", cwd=ws)
    git("commit", "-qm", "base", cwd=ws)
    (ws / "tools.json").write_text((ws / "tools.json").read_text().replace(READ, "Manage the calendar's events."))
    git("commit", "-qam", "head: reword list_events", cwd=ws)
    return ws


def evaluate(ws: Path, api: FakeModelAPI, *flags: str):
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": api.url + "/v1", "HOME": str(ws.parent)}
    outputs = ("--json", "r.json", "--markdown", "r.md", "--html", "r.html", "--junit", "r.xml")
    return toolselect("eval", "--base-ref", "HEAD~1", *outputs, *flags, cwd=ws, env=env)


def test_a_destructive_misroute_fails_the_gate_that_accuracy_and_significance_would_pass(tmp_path):
    ws = repository(tmp_path)
    with FakeModelAPI(SCRIPT) as api:
        run = evaluate(ws, api)
    assert run.code == 1, run.err
    out = run.out
    # the critical misroutes first, before the case table; the verdict's first and only reason
    assert out.index("Critical misroutes (8 samples)") < out.index("Cases")
    assert (
        "⛔ cal-today: called delete_all_events, a destructive tool, unasked (CRIT-DESTRUCTIVE), 3 of 3 samples" in out
    )
    assert "⛔ thanks: called ping, which the case must never call (CRIT-FORBIDDEN), 3 of 3 samples" in out
    # the drop alone would pass: within max-drop 60, and not significant
    assert "paired over 5 cases: −53.3 pt" in out and "not significant (p = 0.25)" in out
    assert "FAILED  accuracy" in out
    assert "  - 8 critical misroutes (max_critical 0): cal-today: called delete_all_events" in out
    assert out.count("\n  - ") == 1
    # the states, beside the flips
    assert "2 broke · 1 destabilized" in out  # beside the flips, and in the verdict's line
    assert "and the comparison with HEAD~1 (2 broke, 1 destabilized)" in out
    assert "flipped to failing: cal-today — base list_events, head delete_all_events (broke)" in out
    assert "flipped to failing: cal-week — base list_events, head create_event (destabilized)" in out
    report = json.loads((ws / "r.json").read_text())
    assert report["counts"]["critical"] == {"CRIT-FORBIDDEN": 3, "CRIT-DESTRUCTIVE": 3, "CRIT-WRITE": 2}
    assert report["gate"]["max_critical"] == 0 and report["gate"]["reasons"][0].startswith("8 critical misroutes")
    assert report["cases"][4]["must_not_call"] == ["ping"]
    assert report["cases"][0]["samples"][0]["critical"] == {"code": "CRIT-DESTRUCTIVE", "tool": "delete_all_events"}
    assert report["surface"]["definitions"][2]["annotations"] == {"destructiveHint": True}
    comment = (ws / "r.md").read_text()  # with a base: the PR comment as it would be posted
    assert comment.startswith(
        "### ❌ toolselect failed: accuracy 100.0% → 46.7% (−53.3 pt) · 2 broke, 1 destabilized — 8 critical misroutes"
    )
    assert comment.index("**Critical misroutes (8 samples)**") < comment.index("| metric |")
    html = (ws / "r.html").read_text()
    assert '<span class="badge fail">FAIL</span> toolselect failed' in html
    assert "critical misroutes (8 samples)" in html and "⛔ cal-today: called delete_all_events" in html
    junit = (ws / "r.xml").read_text()
    assert 'type="CRIT-DESTRUCTIVE"' in junit and 'type="CRIT-FORBIDDEN"' in junit
    assert 'message="8 critical misroutes (max_critical 0)' in junit


def test_warn_mode_runs_as_usual_says_would_fail_and_exits_0(tmp_path):
    ws = repository(tmp_path)
    with FakeModelAPI(SCRIPT) as api:
        run = evaluate(ws, api, "--mode", "warn")
    assert run.code == 0, run.err
    assert "WOULD FAIL  accuracy" in run.out
    assert "mode: warn — not failing the check on this verdict (mode: enforce fails it)" in run.out
    assert "Critical misroutes (8 samples)" in run.out  # the run as usual
    assert json.loads((ws / "r.json").read_text())["gate"]["mode"] == "warn"
    assert (
        (ws / "r.md")
        .read_text()
        .startswith("### ⚠️ toolselect would fail: accuracy 100.0% → 46.7% (−53.3 pt) · 2 broke")
    )
    assert '<span class="badge warn">WOULD FAIL</span>' in (ws / "r.html").read_text()
    assert 'message="would fail (mode: warn): 8 critical misroutes' in (ws / "r.xml").read_text()
    # the saved reports, compared again: the mode the run recorded holds, and a flag overrides it
    assert toolselect("diff", "r.base.json", "r.json", cwd=ws).code == 0
    assert toolselect("diff", "r.base.json", "r.json", "--mode", "enforce", cwd=ws).code == 1


def test_a_base_another_model_answered_is_refused(tmp_path):
    ws = repository(tmp_path)
    with FakeModelAPI(SCRIPT) as api:
        assert evaluate(ws, api).code == 1
    base = json.loads((ws / "r.base.json").read_text())
    base["run"]["model"] = "fake-model-mini"  # kept from a run of another model
    (ws / "other.json").write_text(json.dumps(base))
    run = toolselect("diff", "other.json", "r.json", cwd=ws)
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        "error: other.json and the head can't be compared: different model: base 'fake-model-mini', head 'fake-model'"
    ]
