"""The PR review on the source lines of changed tool texts, end to end: the Action in a subprocess,
a real git repository per test (a Python server on the mcp SDK, a YAML or JSON surface file; the
TypeScript server built by its setup is test_servers.py's), the fake model API, and the fake GitHub
whose REST shapes are checked against GitHub's OpenAPI description and whose GraphQL runs on
GitHub's schema. The PR's files come from the repository's own `git diff`, as GitHub lists them."""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from tests.e2e.harness import (
    BASE_FORECAST,
    GOLDEN,
    HEAD_FORECAST,
    SCRIPT,
    TOOLS,
    commit_repo,
    fake_model_config,
    git,
    make_repo,
    no_process_left,
    pull_request_event,
    register_pull,
    run_action,
    run_pull_request,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

MARK = "<!-- toolselect-review:default "


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)


PY_SERVER = """\
from mcp.server.mcpserver import MCPServer

SOURCES = {sources}
mcp = MCPServer("weather")


@mcp.tool(description="Current weather conditions "
          "in a city right now.")
def get_weather(city: str) -> str:
    return city


@mcp.tool(
    description="{forecast_1} "
    "{forecast_2}"
)
def get_forecast(city: str, days: int = 3) -> str:
    return city


@mcp.tool(description=f"Search the web ({{len(SOURCES)}} sources).")
def search_web(query: str) -> str:
    return query


if __name__ == "__main__":
    mcp.run()
"""


def test_python_concatenated_string_is_found_and_a_computed_text_stays_out(world, tmp_path):
    """A description concatenated from two literals is found on its line; a description computed at
    run time (its changed words are in no line of the diff) gets no inline comment, even with
    review-comments: all-changes."""
    api, github = world
    config = fake_model_config(f"server:\n  command: [{json.dumps(sys.executable)}, server.py]\n")
    base_py = PY_SERVER.format(
        sources='["web"]', forecast_1="Weather forecast for a city", forecast_2="for the coming days, day by day."
    )
    head_py = PY_SERVER.format(sources='["web", "news"]', forecast_1="Daily outlook", forecast_2="for a city.")
    repo = commit_repo(
        tmp_path,
        {"server.py": base_py, "golden.jsonl": GOLDEN, "toolselect.yaml": config},
        {"server.py": head_py},
        ignore="toolselect-report/\n.toolselect-cache/\n",
    )
    register_pull(github, repo)
    run = run_pull_request(repo, tmp_path, api, github, **{"review-comments": "all-changes"})
    assert run.code == 0, run.stdout + run.stderr
    head = run.report()
    search = next(t for t in head["surface"]["definitions"] if t["name"] == "search_web")
    assert search["description"] == "Search the web (2 sources)."  # it did change…
    [comment] = github.review_comments_on(7)  # …but only get_forecast could be placed
    assert comment["path"] == "server.py" and "`get_forecast`" in comment["body"].splitlines()[1]
    # both literals changed: the comment spans them
    assert (comment["start_line"], comment["line"]) == (
        line_of(head_py, '"Daily outlook "'),
        line_of(head_py, '"for a city."'),
    )
    assert "not found in the diff: search_web" in run.stdout
    no_process_left(repo.path)


def tools_yaml(forecast: str) -> str:
    tools = [dict(t) for t in TOOLS]
    tools[1]["description"] = forecast
    return yaml.safe_dump({"tools": tools}, sort_keys=False, width=60)


def test_yaml_surface_review_is_sticky_across_pushes_and_300_files(world, tmp_path):
    """A YAML surface file among 300 changed files (the PR's file list spans four pages): the first
    run comments; a re-run posts nothing twice; a push that fixes the regression resolves it."""
    api, github = world
    config = fake_model_config("tools_file: tools.yaml\n")
    many = {f"docs/page-{i:03}.md": f"# Page {i}\n" for i in range(300)}
    repo = commit_repo(
        tmp_path,
        {"tools.yaml": tools_yaml(BASE_FORECAST), "golden.jsonl": GOLDEN, "toolselect.yaml": config},
        {"tools.yaml": tools_yaml(HEAD_FORECAST), **many},
        ignore="toolselect-report/\n.toolselect-cache/\n",
    )
    register_pull(github, repo)
    assert len(github.files[7]) == 301 and github.files[7][-1]["filename"] == "tools.yaml"

    first = run_pull_request(repo, tmp_path, api, github)
    assert first.code == 0, first.stdout + first.stderr
    pages = [path for method, path in github.log if "/pulls/7/files" in path]
    assert len(pages) == 4  # every page of the file list was read
    [comment] = github.review_comments_on(7)
    head_yaml = (repo.path / "tools.yaml").read_text()
    assert comment["path"] == "tools.yaml" and comment["line"] == line_of(head_yaml, HEAD_FORECAST)
    assert "1 changed tool text made the model pick its tool worse" in github.reviews[0]["body"]

    again = run_pull_request(repo, tmp_path, api, github)
    assert again.code == 0, again.stdout + again.stderr
    assert len(github.reviews) == 1 and len(github.review_comments_on(7)) == 1  # nothing posted twice
    assert "0 posted, 0 updated, 0 resolved, 1 unchanged" in again.stdout

    # a second push: the description says "coming days" again, so the model picks get_forecast again
    (repo.path / "tools.yaml").write_text(tools_yaml("Daily outlook for a city for the coming days."))
    git("commit", "-qam", "fix the forecast description", cwd=repo.path)
    repo.head = git("rev-parse", "HEAD", cwd=repo.path)
    register_pull(github, repo)
    fixed = run_pull_request(repo, tmp_path, api, github)
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert len(github.reviews) == 1  # no regression left: no new review
    [earlier] = github.review_comments_on(7)
    assert github.thread_of(earlier["id"])["resolved"] is True
    assert earlier["body"].startswith(MARK) and " resolved -->" in earlier["body"].splitlines()[0]
    assert (
        f"> ✅ **Resolved:** at {repo.head[:12]}, the model picks get\\_forecast as well as on the base"
        in earlier["body"]
    )
    assert "0 posted, 0 updated, 1 resolved" in fixed.stdout


@pytest.mark.parametrize(
    ("token", "login", "lookalike"),
    [
        ("ghs_actions", "github-actions[bot]", "github-actions"),  # the workflow's GITHUB_TOKEN
        ("ghs_app", "toolselect-app[bot]", "toolselect-app"),  # a GitHub App's installation token
        ("ghp_person", "octocat", "octocat[bot]"),  # a person's PAT
    ],
)
def test_every_kind_of_token_edits_its_one_comment_and_resolves_the_fixed_one(tmp_path, token, login, lookalike):
    """Push 1 comments; push 2 fixes the regression. Whatever the token (GitHub's GraphQL answers an
    installation token's `viewer` as a `User` named `…[bot]`), the run edits its one sticky comment
    and resolves its own review comment; an account named like it, holding copies of both, is
    never touched."""
    tokens = {token: login, "ghp_other": lookalike}
    with FakeModelAPI(SCRIPT) as api, FakeGitHub(tokens) as github:
        config = fake_model_config("tools_file: tools.yaml\n")
        repo = commit_repo(
            tmp_path,
            {"tools.yaml": tools_yaml(BASE_FORECAST), "golden.jsonl": GOLDEN, "toolselect.yaml": config},
            {"tools.yaml": tools_yaml(HEAD_FORECAST)},
            ignore="toolselect-report/\n.toolselect-cache/\n",
        )
        register_pull(github, repo)
        first = run_pull_request(repo, tmp_path, api, github, **{"github-token": token})
        assert first.code == 0, first.stdout + first.stderr
        [sticky] = github.comments_on(7)
        [ours] = github.review_comments_on(7)
        assert sticky["user"]["login"] == ours["user"]["login"] == login
        line, sticky_body, review_body = ours["line"], sticky["body"], ours["body"]
        theirs = github.add_comment(7, sticky_body, lookalike)
        their_review = github.add_review_comment(7, "tools.yaml", line, review_body, lookalike)
        register_pull(github, repo)  # add_review_comment's one-line diff is gone again

        (repo.path / "tools.yaml").write_text(tools_yaml("Daily outlook for a city for the coming days."))
        git("commit", "-qam", "fix the forecast description", cwd=repo.path)
        repo.head = git("rev-parse", "HEAD", cwd=repo.path)
        register_pull(github, repo)
        fixed = run_pull_request(repo, tmp_path, api, github, **{"github-token": token})
        assert fixed.code == 0, fixed.stdout + fixed.stderr
        mine = [c for c in github.comments_on(7) if c["user"]["login"] == login]
        assert [c["id"] for c in mine] == [sticky["id"]]  # the one comment, edited in place
        assert mine[0]["body"] != sticky_body and mine[0]["updated_at"] != mine[0]["created_at"]
        assert "0 posted, 0 updated, 1 resolved" in fixed.stdout
        assert github.thread_of(ours["id"])["resolved"] is True
        assert len(github.reviews) == 2  # the first run's and the look-alike's: none new
        assert github.comments[theirs["id"]]["body"] == sticky_body
        assert github.review_comments[their_review["id"]]["body"] == review_body
        assert github.thread_of(their_review["id"])["resolved"] is False


def test_review_comments_off_annotates_the_same_lines(world, tmp_path):
    api, github = world
    repo = make_repo(tmp_path)  # evals/tools.json: get_forecast reworded, two cases flip
    register_pull(github, repo)
    run = run_action(
        repo.path,
        tmp_path,
        inputs={"review-comments": "off"},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert github.reviews == [] and run.outputs["review-url"] == ""
    line = line_of((repo.path / "evals" / "tools.json").read_text(), HEAD_FORECAST)
    assert (
        f"::warning file=evals/tools.json,line={line},title=toolselect%3A get_forecast::description of get_forecast "
        "changed. recall 100.0%25 → 33.3%25, precision 100.0%25 → 100.0%25. wanted get_forecast, got get_weather: "
        "0 → 2. "
        "2 cases flipped to failing" in run.stdout
    )
