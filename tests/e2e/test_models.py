"""Several models in one run, end to end: the Action on a pull request whose reworded description
helps one model and hurts the other (the fake model API answers by model), and the CLI's repeated
--provider/--model flags. The report, the console, the comment (its portability section), the
per-model gate and the outputs are checked against what each model did."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.conftest import toolselect
from tests.e2e.harness import (
    HEAD_FORECAST,
    KEY,
    SCRIPT,
    TOKEN,
    make_repo,
    pull_request_event,
    register_pull,
    run_action,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

BOUNDARY = ("Will it rain tomorrow in Dublin?", "Any rain in Seattle this weekend?")


def two_models_script() -> dict[str, Any]:
    """`fake-worse` is the Action tests' model (right on the base's description, wrong on the
    head's); `fake-better` is the reverse: it reads the head's rewording, not the base's."""
    script: dict[str, Any] = copy.deepcopy(SCRIPT)
    for prompt in BOUNDARY:
        worse = [dict(v, model="fake-worse") for v in script["answers"][prompt]]
        city = worse[0]["args"]["city"]
        better = [
            {"model": "fake-better", "when": {"get_forecast": HEAD_FORECAST}, "tool": "get_forecast",
             "args": {"city": city}},
            {"model": "fake-better", "tool": "get_weather", "args": {"city": city}},
        ]  # fmt: skip
        script["answers"][prompt] = worse + better
    return script


MODELS = """  models:
    - {provider: openai, model: fake-better, label: better}
    - {provider: openai, model: fake-worse, label: worse, gate: {min_accuracy: 0.8}}
"""


@pytest.fixture
def two_models():
    with (
        FakeModelAPI(two_models_script()) as api,
        FakeGitHub({TOKEN: "github-actions[bot]"}) as github,
    ):
        yield api, github


def test_two_models_on_a_pull_request(two_models, tmp_path):
    api, github = two_models
    repo = make_repo(tmp_path, models=MODELS)
    event = pull_request_event(repo)
    register_pull(github, repo)
    run = run_action(
        repo.path,
        tmp_path,
        # suggest off: the requests counted here are the picks (test_suggest.py tries rewrites)
        inputs={"max-drop": "5", "report-artifact": "toolselect-report", "junit": "out/junit.xml", "suggest": "off"},
        event=event,
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 1, run.stderr + run.stdout

    # the report: one section per model, each a whole report with its label; the base's too
    for name, better, worse in (("report.json", 8, 6), ("base.json", 6, 8)):
        data = run.report(name)
        assert data["schema_version"] == 2 and data["passed"] is (name == "base.json")  # worse fails on the head
        by_label = {m["run"]["label"]: m for m in data["models"]}
        assert list(by_label) == ["better", "worse"]
        assert by_label["better"]["run"]["model"] == "fake-better"
        assert by_label["better"]["metrics"]["accuracy"]["numerator"] == better
        assert by_label["worse"]["metrics"]["accuracy"]["numerator"] == worse
    head = {m["run"]["label"]: m for m in run.report()["models"]}
    assert head["worse"]["gate"]["min_accuracy"] == 0.8 and head["better"]["gate"]["min_accuracy"] == 0.6
    assert head["worse"]["gate"]["reasons"] == ["accuracy 75.0% (6/8) is below min_accuracy 80%"]
    # both models went through one pool (one endpoint): 8 cases × 2 models × 2 sides, no more
    assert api.requests == 32

    # the console: the model × metric table and each model's gate line
    assert "Models" in run.stdout and "✓ better: accuracy" in run.stdout and "✗ worse: accuracy" in run.stdout
    assert run.stdout.count("FAILED") == 1  # the verdict, said once

    # the comment: one line per model, the reasons named by model, the portability section
    [comment] = [c for c in github.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
    body = comment["body"]
    lines = body.splitlines()
    assert lines[1] == "### ❌ toolselect failed: 2 models"
    assert lines[3] == (
        "- ✅ **better** (`openai fake-better`): accuracy 75.0% → 100.0% (+25.0 pt, not significant (p = 0.5))"
    )
    assert lines[4] == (
        "- ❌ **worse** (`openai fake-worse`): accuracy 100.0% → 75.0% (−25.0 pt, not significant (p = 0.5))"
    )
    assert "- ❌ worse: accuracy 75.0% (6/8) is below min\\_accuracy 80%" in body
    assert "- ❌ worse: accuracy dropped 25.0 pt vs the base, more than max-drop 5 pt" in body
    assert not any(line.startswith("- ❌ better") for line in lines)
    portability = body[body.index("**Portability**") :]
    assert "| fc-dublin (golden.jsonl:3) | better 0% → 100% | worse 100% → 0% |" in portability
    assert "| fc-seattle (golden.jsonl:4) | better 0% → 100% | worse 100% → 0% |" in portability
    assert "- wanted `get_forecast`, got `get_weather`: less often for better (−2), more often for worse (+2)" in (
        portability
    )
    assert "- `get_forecast` picked right: more often for better (+2), less often for worse (−2)" in portability
    # each model's changed cells, under its label
    assert "**better** · **Confusion cells that changed** (base → head)" in body
    assert "**worse** · **Confusion cells that changed** (base → head)" in body
    assert "<summary>worse: Flipped to failing (2)</summary>" in body
    assert "[HTML report](https://github.com/acme/weather-mcp/actions/runs/4242#artifacts)" in body

    # the review on the reworded line speaks of the model it hurt (the other one it helped)
    [inline] = github.review_comments_on(7)
    assert inline["path"] == "evals/tools.json"
    assert "#### 🔻 toolselect: `worse` picks `get_forecast` worse since this change" in inline["body"]

    # the outputs: the joint verdict, and each model as JSON
    o = run.outputs
    assert o["passed"] == "false" and o["html"] == "toolselect-report/report.html"
    models = json.loads(o["models"])
    assert [(m["label"], m["passed"], m["accuracy"], m["base_accuracy"]) for m in models] == [
        ("better", True, 1.0, 0.75),
        ("worse", False, 0.75, 1.0),
    ]
    assert models[1]["accuracy_delta"] == -25.0 and len(models[1]["reasons"]) == 2
    assert (run.report_dir / "report.html").exists()
    # JUnit: a testsuite per model, each with its own gate testcase
    suites = ET.parse(repo.path / "evals" / "out" / "junit.xml").getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["toolselect[better]", "toolselect[worse]"]
    gates = [next(tc for tc in s.iter("testcase") if tc.get("name") == "gate") for s in suites]
    assert gates[0].find("failure") is None
    assert "below min_accuracy 80%" in gates[1].find("failure").get("message")

    # a second run asks nothing: every answer of both models, on both sides, is cached
    again = run_action(
        repo.path,
        tmp_path,
        inputs={"max-drop": "5", "suggest": "off"},
        event=event,
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert again.code == 1 and api.requests == 32


def test_one_model_in_models_gives_the_same_report_as_before(tmp_path):
    """A one-model run writes the report it always did (schema_version 1, no label), whether the
    model is named by provider/model or as the only entry of evals.models."""
    with FakeModelAPI(SCRIPT) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1"}
        repo = make_repo(tmp_path)
        folder = repo.path / "evals"
        plain = toolselect("eval", "--json", "plain.json", "-q", cwd=folder, env=env)
        config = (folder / "toolselect.yaml").read_text()
        listed = config.replace(
            "  provider: openai\n  model: fake-model\n", "  models:\n    - {provider: openai, model: fake-model}\n"
        )
        (folder / "listed.yaml").write_text(listed)
        one = toolselect(
            "eval",
            "-c",
            "listed.yaml",
            "--cache-dir",
            "another-cache",
            "--json",
            "listed.json",
            "-q",
            cwd=folder,
            env=env,
        )
    assert plain.code == one.code == 0, plain.err + one.err
    a, b = (json.loads((folder / name).read_text()) for name in ("plain.json", "listed.json"))
    for report in (a, b):
        assert report["schema_version"] == 1 and "label" not in report["run"]
        for key in ("started_at", "finished_at", "duration_s", "api_calls", "cache_hits", "cache_writes", "config"):
            report["run"].pop(key)
        for case in report["cases"]:
            for sample in case["samples"]:
                sample.pop("latency_ms"), sample.pop("cached")
    assert a == b


def test_repeated_model_flags_pair_with_providers(tmp_path):
    """`--provider openai --model a --provider openai --model b` on the command line: two models,
    the console's table, the JSON report of both, and `diff` on two such reports."""
    with FakeModelAPI(two_models_script(), latency=0.05) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.url + "/v1"}
        repo = make_repo(tmp_path)
        folder = repo.path / "evals"
        flags = ["--provider", "openai", "--model", "fake-better", "--model", "fake-worse", "--concurrency", "3"]
        run = toolselect("eval", *flags, "--json", "both.json", "--markdown", "both.md", cwd=folder, env=env)
        assert run.code == 0, run.err
        # both models go to one endpoint: they share its pool, so at most 3 requests are in flight, not 6
        assert api.stats()["max_in_flight"] == 3 and api.requests == 16
        assert "│ fake-better │" in run.out and "│ fake-worse  │" in run.out
        data = json.loads((folder / "both.json").read_text())
        assert [m["run"]["label"] for m in data["models"]] == ["fake-better", "fake-worse"]
        assert (folder / "both.md").read_text().startswith("## ✅ toolselect passed: 2 models")

        wrong = toolselect("eval", "--provider", "openai", "--provider", "anthropic", "--model", "x", cwd=folder)
        assert wrong.code == 2 and "2 --provider flags but one --model" in wrong.err

        # diff pairs the models by label; a base without one of them is refused by name
        diff = toolselect("diff", "both.json", "both.json", "--max-drop", "0", cwd=folder)
        assert diff.code == 0 and "fake-better" in diff.out and "fake-worse" in diff.out
        alone = toolselect("eval", "--model", "fake-better", "--json", "one.json", "-q", cwd=folder, env=env)
        assert alone.code == 0
        refused = toolselect("diff", "one.json", "both.json", cwd=folder)
        assert refused.code == 2 and "has no model labelled 'fake-better'" in refused.err


def test_each_endpoint_has_its_own_pool(tmp_path):
    """Two models on two endpoints: each endpoint gets `concurrency` requests in flight of its own."""
    script = dict(two_models_script(), latency=0.1)
    with FakeModelAPI(script) as one, FakeModelAPI(script) as two:
        repo = make_repo(tmp_path)
        flags = ["--model", "fake-better", "--base-url", one.url + "/v1", "--model", "fake-worse"]
        flags += ["--base-url", two.url + "/v1", "--concurrency", "2", "--json", "r.json", "-q"]
        run = toolselect("eval", *flags, cwd=repo.path / "evals", env={"OPENAI_API_KEY": KEY})
        assert run.code == 0, run.err
        assert (one.requests, two.requests) == (8, 8)
        assert one.stats()["max_in_flight"] == two.stats()["max_in_flight"] == 2
        endpoints = [m["run"]["endpoint"] for m in json.loads((repo.path / "evals" / "r.json").read_text())["models"]]
        assert endpoints == [one.url + "/v1", two.url + "/v1"]
