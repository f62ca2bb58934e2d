"""The Action end to end: entrypoint.py in a subprocess with exactly the environment a container
action gets (INPUT_* with dashes, GITHUB_EVENT_PATH holding a real pull_request payload, the
runner's file commands), a temporary git repository whose head commit changes a tool description
so some cases flip, the fake model API and the fake GitHub API."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import (
    BASE_FORECAST,
    HEAD_FORECAST,
    KEY,
    TOKEN,
    ActionRun,
    Repo,
    git,
    make_repo,
    pull_request_event,
    register_pull,
    run_action,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI


def pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def test_warn_mode_comments_and_annotates_as_usual_says_would_fail_and_passes_the_check(world, tmp_path):
    """The same failing pull request in mode: warn: the comment, the review, the annotations and the
    outputs as usual, the verdict said as "would fail" in each, and exit 0."""
    api, github = world
    repo = make_repo(tmp_path)
    register_pull(github, repo)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"max-drop": "5", "mode": "warn"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 0, run.stderr + run.stdout
    [body] = [c["body"] for c in github.comments_on(7)]
    headline = "### ⚠️ toolselect would fail: accuracy 100.0% → 75.0% (−25.0 pt) · 2 broke — accuracy dropped"
    assert body.splitlines()[1].startswith(headline)
    assert "- ⚠️ accuracy dropped 25.0 pt vs the base, more than max-drop 5 pt" in body
    assert run.summary.startswith("### ⚠️ toolselect would fail")
    assert "mode: warn — not failing the check on this verdict (mode: enforce fails it)" in run.summary
    assert len(github.reviews) == 1  # the review comments as usual
    assert "::error file=evals/golden.jsonl,line=3,title=toolselect SEL-WRONG::case 'fc-dublin'" in run.stdout
    assert "::warning title=toolselect%3A would fail::would fail: accuracy dropped 25.0 pt" in run.stdout
    assert run.outputs["passed"] == "false" and run.outputs["verdict"] == "would fail"
    assert run.outputs["critical"] == "0"
    assert run.report()["gate"]["mode"] == "warn"


def test_pull_request_comment_diff_and_gate(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    other = github.add_comment(7, "<!-- toolselect:default -->\nnot the bot's", "octocat")
    event = pull_request_event(repo)
    register_pull(github, repo)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"max-drop": "5", "junit": "out/junit.xml"},
        event=event,
        event_name="pull_request",
        api=api,
        github=github,
    )

    # the gate: two boundary cases flipped (−25 points) with max-drop 5 → exit 1, after commenting
    assert run.code == 1, run.stderr + run.stdout
    head, base = run.report(), run.report("base.json")
    assert base["metrics"]["accuracy"]["numerator"] == 8 and head["metrics"]["accuracy"]["numerator"] == 6
    ours = [c for c in github.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1
    body = ours[0]["body"]
    lines = body.splitlines()
    assert lines[0] == "<!-- toolselect:default -->"
    # the numbers in the comment are the JSON report's
    assert lines[1] == (
        f"### ❌ toolselect failed: accuracy {pct(base['metrics']['accuracy']['value'])} → "
        f"{pct(head['metrics']['accuracy']['value'])} (−25.0 pt) · 2 broke — accuracy dropped 25.0 pt vs the base, "
        "more than max-drop 5 pt"
    )
    # only a description changed: its measured effect leads — two of eight cases flipped, a sign test
    # can't tell, and it did not decide; the confusion it heated; what it did to the tool list's size
    assert lines[3] == "**Only tool descriptions changed** (`get_forecast`). What they did to selection:"
    assert lines[5].startswith(
        "- accuracy 100.0% → 75.0%: paired over the whole suite: −25.0 pt, 95% CI −50.3…0.0, not significant "
        "(p = 0.5) — max-drop decided"
    )
    assert lines[6] == "- confusions heated: 🔺 wanted `get_forecast`, got `get_weather`: 0 → 2"
    assert lines[8] == "- tool-list tokens 118 → 109 (-9, -7.6%)"  # "day by day" and "coming days" gone
    assert "- ❌ accuracy dropped 25.0 pt vs the base, more than max-drop 5 pt" in body
    assert "- 🔺 wanted `get_forecast`, got `get_weather`: 0 → 2" in body
    assert "| fc-dublin | `get_forecast` | `get_forecast` | `get_weather` |" in body
    assert "| fc-seattle | `get_forecast` | `get_forecast` | `get_weather` |" in body
    assert f"-{BASE_FORECAST}" in body and f"+{HEAD_FORECAST}" in body
    assert "[run](https://github.com/acme/weather-mcp/actions/runs/4242)" in body
    assert github.comments[other["id"]]["body"] == "<!-- toolselect:default -->\nnot the bot's"  # left alone
    # one review, with a comment on the reworded line of the surface file
    [review] = github.reviews
    assert review["state"] == "COMMENTED" and review["commit_id"] == repo.head
    [inline] = github.review_comments_on(7)
    tools_json = (repo.path / "evals" / "tools.json").read_text()
    assert (
        inline["path"] == "evals/tools.json"
        and inline["line"]
        == tools_json.splitlines().index(next(x for x in tools_json.splitlines() if HEAD_FORECAST in x)) + 1
    )
    assert "| recall | 100.0% (3/3) | 33.3% (1/3) | −66.7 pt · p = 0.4, could be chance |" in inline["body"]

    # outputs, summary, annotations, JUnit, masks
    o = run.outputs
    assert o["accuracy"] == "0.7500" and o["base-accuracy"] == "1.0000" and o["accuracy-delta"] == "-25.00"
    assert o["passed"] == "false" and o["report"] == "toolselect-report/report.json" and o["cache-dirty"] == "true"
    assert o["comment-url"] == ours[0]["html_url"]
    assert run.summary.startswith("### ❌ toolselect failed") and "<!-- toolselect" not in run.summary
    assert (
        "::error file=evals/golden.jsonl,line=3,title=toolselect SEL-WRONG::case 'fc-dublin': expected get_forecast, "
        "got get_weather" in run.stdout
    )
    assert f"::add-mask::{KEY}" in run.stdout and f"::add-mask::{TOKEN}" in run.stdout
    assert (repo.path / "evals" / "out" / "junit.xml").exists()
    assert "::group::toolselect: evaluating the head and the base" in run.stdout
    # the runner's log is no terminal: plain progress lines, the last one at the end of each side's samples
    assert re.findall(r"^asked (\d+)/(\d+) · \d+ s$", run.stdout, re.M)[-1] == ("8", "8")
    # lint findings: in the comment only what the PR brought (here: about get_forecast, whose description it
    # changed); the four that were there before are the summary's. Annotations at their file (one finding per
    # code and tool, or per code and file: one fix, said once)
    assert "<summary>Lint: 1 warning new or on changed tools</summary>" in body
    assert "4 more were there before" in body and "`param-no-description`" in body
    assert "`no-annotations`" not in body and "`no-annotations`" in run.summary  # the tools never said what they do
    assert "`coverage-few-cases`" not in body and "`coverage-few-cases`" in run.summary
    assert (
        "::warning file=evals/golden.jsonl,title=toolselect lint coverage-few-cases::2 tools have fewer than 3 cases: "
        "get_weather (2), search_web (1)" in run.stdout
    )
    named = next(i for i, x in enumerate((repo.path / "evals" / "tools.json").read_text().splitlines(), 1)
                 if '"get_forecast"' in x)  # fmt: skip
    assert (  # at the tool's own entry in the tools file
        f"::warning file=evals/tools.json,line={named},title=toolselect lint param-no-description::get_forecast: "
        "parameters city, days have no description" in run.stdout
    )

    # a second run edits the same comment, and the base costs nothing: every answer is cached
    requests_before = api.requests
    again = run_action(
        repo.path, tmp_path, inputs={"max-drop": "5"}, event=event, event_name="pull_request", api=api, github=github
    )
    assert again.code == 1
    assert api.requests == requests_before
    assert again.report("base.json")["run"]["cache_hits"] == 8 and again.report("base.json")["run"]["api_calls"] == 0
    assert len([c for c in github.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]) == 1
    assert again.outputs["cache-dirty"] == "false"
    assert len(github.reviews) == 1 and len(github.review_comments_on(7)) == 1  # the finding is not posted twice


def test_a_403_when_commenting_keeps_the_exit_code_and_the_summary(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"github-token": "ro", "min-accuracy": "0.5"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 0, run.stdout + run.stderr  # 75% ≥ 50% and no max-drop: the gate passes
    assert (
        "::warning title=toolselect::could not post the PR comment: GitHub answered 403 Resource not accessible by "
        "integration" in run.stdout
    )
    assert run.summary.startswith(
        "### ✅ toolselect passed: accuracy 100.0% → 75.0% (−25.0 pt) · 2 broke\n\n**Only tool"
    )
    assert github.comments_on(7) == []


def test_300_comments_still_find_the_marker(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    for i in range(300):
        github.add_comment(7, f"review note {i}", "octocat")
    ours = github.add_comment(7, "<!-- toolselect:default -->\nstale", "github-actions[bot]")
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"comment": "on-change"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert github.comments[ours["id"]]["body"].startswith("<!-- toolselect:default -->\n### ✅ toolselect passed")
    assert len(github.comments_on(7)) == 301


def test_push_evaluates_the_head_only_and_seeds_the_cache(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={},
        event={"ref": "refs/heads/main", "after": repo.head},
        event_name="push",
        api=api,
        github=github,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert not (run.report_dir / "base.json").exists()
    assert run.outputs["base-accuracy"] == "" and run.outputs["cache-dirty"] == "true"
    assert api.requests == 8 and github.log == []
    assert "push: head only" in run.summary


def test_batch_push_sends_a_push_runs_requests_as_one_batch_and_a_pull_request_waits_on_none(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    push = run_action(
        repo.path,
        tmp_path,
        inputs={"batch": "push"},
        event={"ref": "refs/heads/main", "after": repo.head},
        event_name="push",
        api=api,
        github=github,
    )
    assert push.code == 0, push.stdout + push.stderr
    assert len(api.batches.created) == 1 and len(api.log) == 8 and all(e["batch"] for e in api.log)
    assert push.report()["run"]["batch"]["answered"] == 8
    assert "8 requests batched at half price" in push.summary
    pull = run_action(
        repo.path,
        tmp_path,
        inputs={"batch": "push"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert pull.code == 0, pull.stdout + pull.stderr
    assert len(api.batches.created) == 1 and not any(e["batch"] for e in api.log[8:])


def test_base_without_a_config_is_no_baseline(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path, base_has_config=False)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 0, run.stdout + run.stderr
    body = github.comments_on(7)[0]["body"]
    assert "no baseline: the base commit has no evals/toolselect.yaml" in body
    assert run.outputs["base-accuracy"] == ""


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_non_finite_numbers_are_refused(world, tmp_path, bad):
    api, github = world
    repo = make_repo(tmp_path)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"max-drop": bad},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 2 and f"input max-drop must be a number (got '{bad}')" in run.stdout


def test_invalid_inputs_are_usage_errors(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"min-accuracy": "90"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 2
    assert (
        "::error title=toolselect%3A invalid input::input min-accuracy must be between 0 and 1 (got 90); "
        "it is a share: 0.9 means 90%25"
    ) in run.stdout.splitlines()
    assert api.requests == 0


def seed_the_cache(repo: Repo, tmp: Path, api: FakeModelAPI, github: FakeGitHub) -> None:
    """The default branch's run (a push, against the base commit): every answer the PR needs is cached."""
    seed = run_action(
        repo.path, tmp, inputs={"base-ref": repo.base}, event={}, event_name="push", api=api, github=github
    )
    assert seed.code in (0, 1)


def fork_run(repo: Repo, tmp: Path, api: FakeModelAPI, github: FakeGitHub, **inputs: str) -> ActionRun:
    """A fork PR's run: no key, a read-only token."""
    return run_action(
        repo.path,
        tmp,
        inputs={"openai-api-key": "", "github-token": "ro", **inputs},
        event=pull_request_event(repo, fork=True),
        event_name="pull_request",
        api=api,
        github=github,
    )


def artifact_of(run: ActionRun, tmp: Path) -> Path:
    """The fork run's toolselect-report/, as the poster workflow downloads it."""
    artifact = tmp / "poster" / "artifact"
    artifact.parent.mkdir(exist_ok=True)
    subprocess.run(["cp", "-r", str(run.report_dir), str(artifact)], check=True)
    return artifact


def post(artifact: Path, repo: Repo, tmp: Path, api: FakeModelAPI, github: FakeGitHub, **inputs: str) -> ActionRun:
    """The workflow_run poster, after the fork PR's run on `repo.head`."""
    event = {
        "action": "completed",
        "workflow_run": {
            "event": "pull_request",
            "head_sha": repo.head,
            "head_branch": "reword-forecast",
            "conclusion": "success",
            "head_repository": {"full_name": "contributor/weather-mcp", "owner": {"login": "contributor"}},
            "html_url": "https://github.com/acme/weather-mcp/actions/runs/99",
            "pull_requests": [],
        },
    }
    return run_action(
        artifact.parent,
        tmp,
        inputs={"from-artifact": artifact.name, "working-directory": ".", **inputs},
        event=event,
        event_name="workflow_run",
        api=api,
        github=github,
    )


def test_fork_pr_runs_cache_only_and_the_poster_comments(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    seed_the_cache(repo, tmp_path, api, github)
    api.requests = 0
    github.log.clear()
    run = fork_run(repo, tmp_path, api, github, **{"max-drop": "0"})
    assert run.code == 0, run.stdout + run.stderr  # the gate fails (−25 pt) but a fork PR only gets a notice
    assert api.requests == 0 and github.log == []  # no key, no model call, no comment attempt
    assert "fork PR" in run.summary and "only answers already in the cache were evaluated" in run.summary
    assert "::notice title=toolselect::the gate failed on the cached answers of a fork PR" in run.stdout
    meta = json.loads((run.report_dir / "meta.json").read_text())
    assert meta["fork"] is True and meta["head_sha"] == repo.head

    # the workflow_run poster: no checkout of PR code, the artifact is data, the PR found via the API
    register_pull(github, repo)
    github.add_pull(7, "contributor", "reword-forecast", repo.head, repo.base)
    artifact = artifact_of(run, tmp_path)
    # a fork controls its artifact: it tries to pass as not-a-fork and to smuggle HTML, pings and a marker in
    meta_path = artifact / "meta.json"
    tampered = json.loads(meta_path.read_text()) | {
        "fork": False,
        "pr": 1,
        "base_note": "ok\n<img src=https://evil.example/x.png> @acme/security <!-- toolselect:default -->",
    }
    meta_path.write_text(json.dumps(tampered))
    report_path = artifact / "report.json"
    evil = json.loads(report_path.read_text())
    evil["surface"]["definitions"][0]["name"] = "x``<img src=x> @acme/maintainers <!-- toolselect:default --> ``y"
    report_path.write_text(json.dumps(evil))
    posted = post(artifact, repo, tmp_path, api, github, **{"max-drop": "0"})
    assert posted.code == 0, posted.stdout + posted.stderr
    [comment] = github.comments_on(7)  # on PR 7, found via the API: not the artifact's "pr": 1
    body = comment["body"]
    assert body.splitlines()[1].startswith(
        "### ❌ toolselect failed: accuracy 100.0% → 75.0% (−25.0 pt) · 2 broke — accuracy"
    )
    assert "a fork PR, so only answers already in the cache were evaluated" in body  # from the event, not meta.fork
    assert body.count("<!-- toolselect:") == 1 and "@acme" not in body and "evil.example" not in body
    outside_code = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", body)  # what GitHub renders as Markdown/HTML
    assert "<img" not in outside_code
    assert api.requests == 0
    # …and the review, placed from the PR's file list read from the API (the artifact names no line)
    [inline] = github.review_comments_on(7)
    assert inline["path"] == "evals/tools.json" and "`get_forecast`" in inline["body"]
    assert "<img" not in re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", inline["body"]) and "@acme" not in inline["body"]
    assert posted.outputs["review-url"] == github.reviews[0]["html_url"]


def test_the_poster_judges_with_the_gate_the_config_set(world, tmp_path):
    """`evals.max_drop` set only in the config: the fork PR's run and the poster both fail the drop."""
    api, github = world
    repo = make_repo(tmp_path, extra_config="  max_drop: 5\n")
    seed_the_cache(repo, tmp_path, api, github)
    run = fork_run(repo, tmp_path, api, github)
    assert run.code == 0 and run.outputs["passed"] == "false"  # a fork PR: said, not failing
    github.add_pull(7, "contributor", "reword-forecast", repo.head)
    artifact = artifact_of(run, tmp_path)
    posted = post(artifact, repo, tmp_path, api, github)
    assert posted.code == 0, posted.stdout + posted.stderr
    [comment] = github.comments_on(7)
    assert comment["body"].splitlines()[1].startswith("### ❌ toolselect failed: accuracy 100.0% → 75.0% (−25.0 pt")
    assert "- ❌ accuracy dropped 25.0 pt vs the base, more than max-drop 5 pt" in comment["body"]
    assert posted.outputs["passed"] == "false"
    # the poster's own input still wins over what the run recorded
    relaxed = post(artifact, repo, tmp_path, api, github, **{"max-drop": "30"})
    assert relaxed.outputs["passed"] == "true"
    assert github.comments_on(7)[0]["body"].splitlines()[1].startswith("### ✅ toolselect passed")


def test_github_5xx_after_retries_is_a_warning_not_an_exit_code(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)
    github.failures["GET"] = 50  # every listing of the comments fails, retries included
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"max-drop": "5"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 1  # the gate's verdict (−25 pt > 5), unchanged by GitHub's outage
    assert "::warning title=toolselect::could not post the PR comment: GitHub answered 502" in run.stdout
    assert "::warning title=toolselect::could not review the PR's lines: GitHub answered 502" in run.stdout
    assert run.summary.startswith("### ❌ toolselect failed")
    listings = [
        path
        for method, path in github.log
        if method == "GET" and path.startswith("/repos/acme/weather-mcp/issues/7/comments")
    ]
    assert len(listings) == 4  # PyGithub's retries (3), then a warning


def test_a_shallow_checkout_fetches_the_base_commit(world, tmp_path):
    """actions/checkout with fetch-depth 1: the base commit is not there and is fetched from origin,
    before any program of the pull request runs."""
    api, github = world
    origin = make_repo(tmp_path)
    clone = tmp_path / "clone"
    git("clone", "-q", "--depth", "1", f"file://{origin.path}", str(clone), cwd=tmp_path)
    with pytest.raises(subprocess.CalledProcessError):
        git("cat-file", "-e", f"{origin.base}^{{commit}}", cwd=clone)  # not in the shallow clone
    repo = Repo(clone, origin.base, origin.head)
    run = run_action(
        repo.path, tmp_path, inputs={}, event=pull_request_event(repo), event_name="pull_request", api=api,
        github=github,
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    assert run.report("base.json")["metrics"]["accuracy"]["numerator"] == 8
