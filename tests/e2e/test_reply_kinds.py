"""Replies without a call, end to end through every provider's real SDK and the fake model API: the
kinds (clarify, unable, answer), the cases that expect one, a guessed call, a reply cut at the token
limit; shown in the console, the JSON, the Markdown, the HTML and JUnit; the clarification rate and
its gate; a re-run free from the cache; and the PR comment of a model that used to ask and now
guesses."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import PROVIDERS, TOOLS, key_env, run_eval
from tests.fakes.model_api import FakeModelAPI

CASES = [
    {"id": "vague-weather", "question": "What's the weather like?", "expected_tool": None, "expect_reply": "clarify"},
    {"id": "vague-forecast", "question": "Will it rain?", "expected_tool": None, "expect_reply": "clarify"},
    {"id": "book-flight", "question": "Book me a flight to Rome.", "expected_tool": None, "expect_reply": "unable"},
    {"id": "capital", "question": "What's the capital of France?", "expected_tool": None, "expect_reply": "answer"},
    {"id": "summary", "question": "Summarise our chat so far.", "expected_tool": None},
    {"id": "now-oslo", "question": "Is it raining in Oslo right now?", "expected_tool": "get_weather"},
]


GUESSING = "Daily outlook for a city."  # a get_forecast described so, the model guesses a city for "Will it rain?"
SCRIPT = {
    "answers": {
        "What's the weather like?": {"text": "Happy to check! Which city are you in?"},
        "Will it rain?": [
            {"when": {"get_forecast": GUESSING}, "tool": "get_forecast", "args": {"city": "Paris"}},
            {"text": "Could you tell me:\n1. the city\n2. the day?"},
        ],
        "Book me a flight to Rome.": {"text": "Sorry, I can't book flights: none of my tools do that."},
        "What's the capital of France?": {"text": "The capital of France is Paris."},
        "Summarise our chat so far.": {"text": "So far we talked about", "truncated": True},
        "Is it raining in Oslo right now?": {"text": "I don't have access to live weather data."},
    }
}


def repo(folder, forecast: str | None = None) -> None:
    tools = [dict(t, description=forecast) if forecast and t["name"] == "get_forecast" else t for t in TOOLS]
    (folder / "tools.json").write_text(json.dumps({"tools": tools}))
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (folder / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  model: fake-model\n  golden: golden.jsonl\n  min_accuracy: 0\n"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_reply_kind_is_read_scored_shown_and_gated(tmp_path, provider):
    repo(tmp_path)
    outputs = ("--markdown", "r.md", "--html", "r.html", "--junit", "r.xml")
    with FakeModelAPI(SCRIPT) as api:
        run = run_eval(tmp_path, provider, api, *outputs, "--min-clarify", "0.9")
        asked = len(api.log)
        again = run_eval(tmp_path, provider, api, "--min-clarify", "0.9")
        assert len(api.log) == asked  # every answer from the cache
    assert run.code == 0, run.out + run.err
    report = json.loads((tmp_path / "r.json").read_text())
    by_case = {c["name"]: c for c in report["cases"]}
    kinds = {name: (c["samples"][0]["outcome"], (c["samples"][0].get("reply") or {}).get("kind"))
             for name, c in by_case.items()}  # fmt: skip
    assert kinds == {
        "vague-weather": ("PASS", "clarify"),
        "vague-forecast": ("PASS", "clarify"),  # list-shaped
        "book-flight": ("PASS", "unable"),
        "capital": ("PASS", "answer"),
        "summary": ("NO-REPLY", "empty"),  # cut at the token limit: no reply, and never restraint
        "now-oslo": ("SEL-MISSED", "unable"),
    }
    assert by_case["now-oslo"]["samples"][0]["reasons"] == [
        "expected get_weather, but the model called no tool (it said it can't)"
    ]
    assert "cut at the token limit" in by_case["summary"]["samples"][0]["reasons"][0]
    assert report["metrics"]["clarify_rate"]["value"] == 1.0
    assert report["metrics"]["no_call_recall"]["numerator"] == 4  # of 5: the cut reply is no restraint
    assert report["confusion"]["(none: clarify)"] == {"(none: clarify)": 2}
    assert report["confusion"]["(none)"] == {"(none: empty)": 1}
    assert report["confusion"]["get_weather"] == {"(none: unable)": 1}
    assert again.code == 0 and "(none: clarify)" in run.out and "clarification rate" in run.out
    assert "replies without a call: 2 clarify · 2 unable · 1 answer · 1 empty" in run.out
    markdown = (tmp_path / "r.md").read_text()
    assert "| PASS | book-flight | (none: unable) | (none: unable) |  |" in markdown
    assert "| SEL-MISSED | now-oslo | get\\_weather | (none: unable) |" in markdown
    # the matrix: the rows and columns of its confusions (the right replies are counted, not drawn)
    assert (
        "| expected ＼ picked | `(none: empty)` | `(none: unable)` |\n|---|---:|---:|\n"
        "| `get_weather` | · | **1** |\n| `(none)` | **1** | · |\n\n"
        "_3 rows and 3 columns with only right answers (and nothing changed) left out._"
        in markdown
        and "clarification rate (cases that expect a question)" in markdown
    )
    assert "NO-REPLY" in markdown and "Replies without a call: 2 clarify · 2 unable · 1 answer · 1 empty." in markdown
    html = (tmp_path / "r.html").read_text()
    assert "(none: clarify)" in html and "wanted (none), got (none: empty)" in html
    junit = ET.parse(tmp_path / "r.xml").getroot()
    failed = {tc.get("name"): tc.find("failure").get("type") for tc in junit.iter("testcase")
              if tc.find("failure") is not None}  # fmt: skip
    assert failed == {"summary": "NO-REPLY", "now-oslo": "SEL-MISSED"}
    assert "picked (none: unable)" in junit.find(".//testcase[@name='now-oslo']/failure").text


def test_a_model_that_used_to_ask_and_now_guesses_fails_the_gate_and_the_comment_shows_the_flip(tmp_path):
    base, head = tmp_path / "base", tmp_path / "head"
    with FakeModelAPI(SCRIPT) as api:
        for folder, forecast in ((base, None), (head, GUESSING)):
            folder.mkdir()
            repo(folder, forecast)
            done = run_eval(folder, "openai", api, "--min-clarify", "0.9")
            assert done.code == (1 if forecast else 0), done.out + done.err
    assert "clarification rate 50.0% (1/2 samples asked the user) is below min_clarify 90%" in done.out
    guessed = json.loads((head / "r.json").read_text())["cases"][1]["samples"][0]
    assert guessed["outcome"] == "RES-GUESSED"
    compared = toolselect("diff", str(base / "r.json"), str(head / "r.json"), "--markdown", "c.md", cwd=tmp_path,
                          env=key_env(tmp_path))  # fmt: skip
    assert compared.code == 1, compared.out + compared.err
    comment = (tmp_path / "c.md").read_text()
    assert "| vague-forecast | `(none: clarify)` | `(none: clarify)` | `get_forecast` |" in comment
    assert "clarification rate (cases that expect a question) | 100.0% | 50.0% (1/2)" in comment
    assert "- 🔺 wanted `(none: clarify)`, got `get_forecast`: 0 → 1" in comment  # the cell a reviewer must see


def test_a_judge_reads_the_replies_in_place_of_the_rules_and_a_rerun_asks_it_nothing(tmp_path):
    """evals.judge set: the judge's structured reading decides each reply's kind (here it reads the
    list-shaped question as an answer, against the rules), its words kept with the sample; a reply
    the API cut is not sent to it."""
    repo(tmp_path)
    judged = lambda kind, why: {"text": json.dumps({"kind": kind, "why": why})}  # noqa: E731
    script = {
        **SCRIPT,
        "contains": {
            "Which city are you in?": judged("clarify", "It asks which city."),
            "none of my tools do that": judged("unable", "It says no tool books flights."),
            "Which kind of reply is it?": judged("answer", "It answers."),
        },
    }
    with FakeModelAPI(script) as api:
        run = run_eval(tmp_path, "openai", api, "--judge", "judge-model")
        asked = len(api.log)
        again = run_eval(tmp_path, "openai", api, "--judge", "judge-model")
        assert again.code == 0 and len(api.log) == asked  # the picks and the readings, all from the cache
    assert run.code == 0, run.out + run.err
    report = json.loads((tmp_path / "r.json").read_text())
    replies = {c["name"]: c["samples"][0].get("reply") for c in report["cases"]}
    assert replies["vague-weather"] == {"kind": "clarify", "by": "judge", "said": "It asks which city."}
    assert replies["book-flight"] == {"kind": "unable", "by": "judge", "said": "It says no tool books flights."}
    assert replies["vague-forecast"]["kind"] == "answer"  # the judge's word, not the rules'
    assert replies["summary"] == {"kind": "empty", "by": "rules"}  # cut: never sent to the judge
    outcomes = {c["name"]: c["samples"][0]["outcome"] for c in report["cases"]}
    assert outcomes["vague-forecast"] == "RES-WRONG-REPLY" and outcomes["now-oslo"] == "SEL-MISSED"
    wrong = next(c for c in report["cases"] if c["name"] == "vague-forecast")["samples"][0]["reasons"]
    assert wrong == ['expected the model to ask the user first; it answered, says the judge: "It answers."']
    assert report["run"]["judge"] == {"model": "judge-model", "api_calls": 0, "cache_hits": 5}  # the re-run's
    assert sum(e.get("model") == "judge-model" for e in api.log) == 5


def test_a_provider_that_writes_no_reply_is_said_to_read_no_kind(tmp_path):
    repo(tmp_path)
    done = toolselect("eval", "--provider", "bm25", "--json", "r.json", cwd=tmp_path, env=key_env(tmp_path))
    assert done.code == 0, done.out + done.err
    assert "reply-not-read" in done.out and "4 cases expect a kind of reply (expect_reply), but bm25" in done.out
    samples = [c["samples"][0] for c in json.loads((tmp_path / "r.json").read_text())["cases"]]
    assert all("reply" not in s for s in samples)  # bm25 says nothing: no kind is made up
