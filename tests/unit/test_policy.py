"""The Action's policy, as a table: event kind × inputs × keys → what the run does."""

from __future__ import annotations

from typing import get_args

import pytest

from toolselect.errors import ConfigError
from toolselect.options import BY_KEY
from toolselect.policy import PUSH_NOTE, Event, Review, decide

BASE_SHA = "b" * 40


def pr(fork: bool = False) -> Event:
    return Event(
        "pull_request",
        {
            "pull_request": {
                "number": 7,
                "base": {"sha": BASE_SHA, "repo": {"full_name": "acme/mcp"}},
                "head": {"sha": "h" * 40, "repo": {"full_name": "someone/mcp" if fork else "acme/mcp"}},
            }
        },
    )


def workflow_run(event: str = "pull_request", fork: bool = True) -> Event:
    return Event(
        "workflow_run",
        {
            "workflow_run": {
                "event": event,
                "head_sha": "h" * 40,
                "head_branch": "topic",
                "html_url": "https://github.com/acme/mcp/runs/9",
                "head_repository": {"full_name": "someone/mcp" if fork else "acme/mcp", "owner": {"login": "someone"}},
            }
        },
    )


KEY = {"OPENAI_API_KEY": "sk-test", "GITHUB_REPOSITORY": "acme/mcp"}
NO_KEY = {"GITHUB_REPOSITORY": "acme/mcp"}
ALWAYS = {"comment": "always"}

# (name, event, inputs, provider, environ) → (mode, base_ref, cache_only, comment, enforced, fork)
TABLE = [
    ("PR with a key", pr(), ALWAYS, "openai", KEY, ("evaluate", BASE_SHA, False, "always", True, False)),
    ("PR, no key given", pr(), ALWAYS, "openai", NO_KEY, ("evaluate", BASE_SHA, True, "always", True, False)),
    ("PR, offline provider", pr(), ALWAYS, "bm25", NO_KEY, ("evaluate", BASE_SHA, False, "always", True, False)),
    (
        "PR, comment on-change",
        pr(),
        {"comment": "on-change"},
        "openai",
        KEY,
        ("evaluate", BASE_SHA, False, "on-change", True, False),
    ),
    ("PR, comment off", pr(), {"comment": "off"}, "openai", KEY, ("evaluate", BASE_SHA, False, "off", True, False)),
    (
        "PR, base-ref given",
        pr(),
        {**ALWAYS, "base_ref": "origin/main"},
        "openai",
        KEY,
        ("evaluate", "origin/main", False, "always", True, False),
    ),
    ("fork PR", pr(fork=True), ALWAYS, "openai", NO_KEY, ("evaluate", BASE_SHA, True, "off", False, True)),
    (
        "fork PR, fail-on-fork",
        pr(fork=True),
        {**ALWAYS, "fail_on_fork": True},
        "openai",
        NO_KEY,
        ("evaluate", BASE_SHA, True, "off", True, True),
    ),
    (
        "fork PR, offline provider",
        pr(fork=True),
        ALWAYS,
        "bm25",
        NO_KEY,
        ("evaluate", BASE_SHA, True, "off", False, True),
    ),
    (
        "push",
        Event("push", {"ref": "refs/heads/main"}),
        ALWAYS,
        "openai",
        KEY,
        ("evaluate", None, False, "off", True, False),
    ),
    (
        "push with base-ref",
        Event("push", {}),
        {**ALWAYS, "base_ref": "HEAD~1"},
        "openai",
        KEY,
        ("evaluate", "HEAD~1", False, "off", True, False),
    ),
    ("schedule", Event("schedule", {}), ALWAYS, "anthropic", NO_KEY, ("evaluate", None, True, "off", True, False)),
    (
        "workflow_run poster, fork",
        workflow_run(),
        {**ALWAYS, "from_artifact": "a"},
        None,
        NO_KEY,
        ("post", None, False, "always", False, True),
    ),
    (
        "workflow_run poster, same repo",
        workflow_run(fork=False),
        {**ALWAYS, "from_artifact": "a"},
        None,
        NO_KEY,
        ("post", None, False, "always", False, False),
    ),
    (
        "workflow_run after a push",
        workflow_run(event="push"),
        {**ALWAYS, "from_artifact": "a"},
        None,
        NO_KEY,
        ("nothing", None, False, "off", True, False),
    ),
    (
        "workflow_run without from-artifact",
        workflow_run(),
        ALWAYS,
        "openai",
        KEY,
        ("evaluate", None, False, "off", True, False),
    ),
]


@pytest.mark.parametrize(
    ("event", "inputs", "provider", "environ", "expected"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE]
)
def test_decide(event, inputs, provider, environ, expected):
    plan = decide(event, inputs, provider, environ)
    assert (plan.mode, plan.base_ref, plan.cache_only, plan.comment, plan.enforced, plan.fork) == expected


def test_what_each_plan_says():
    fork = decide(pr(fork=True), ALWAYS, "openai", NO_KEY)
    assert fork.pr == 7 and "this check does not fail on the gate" in fork.notes[0]
    assert fork.notices and "workflow_run workflow" in fork.notices[0]
    keyless = decide(pr(), ALWAYS, "anthropic", NO_KEY)
    assert keyless.warnings == ("no API key for anthropic: evaluating cached answers only (pass anthropic-api-key)",)
    assert decide(Event("push", {}), ALWAYS, "bm25", NO_KEY).base_note == PUSH_NOTE
    assert (
        decide(Event("schedule", {}), ALWAYS, "bm25", NO_KEY).base_note
        == "schedule: head only (set base-ref to compare)"
    )
    poster = decide(workflow_run(), {"from_artifact": "a"}, None, NO_KEY)
    assert poster.lookup is not None and (poster.lookup.owner, poster.lookup.branch) == ("someone", "topic")
    assert poster.notes == (
        "posted from the PR run's artifact: a fork PR, so only answers already in the cache were evaluated",
    )
    assert decide(workflow_run(event="push"), {"from_artifact": "a"}, None, NO_KEY).notices == (
        "the triggering run was not a pull_request run: nothing to post",
    )


@pytest.mark.parametrize(
    ("event", "inputs", "review"),
    [
        (pr(), ALWAYS, "regressions"),  # the input's default
        (pr(), {"review_comments": "all-changes"}, "all-changes"),
        (pr(), {"review_comments": "off"}, "annotations"),
        (pr(fork=True), ALWAYS, "none"),  # its poster reviews
        (Event("push", {}), ALWAYS, "none"),
        (workflow_run(), {"from_artifact": "a"}, "regressions"),
        (workflow_run(), {"from_artifact": "a", "review_comments": "off"}, "annotations"),
    ],
    ids=["PR", "PR all-changes", "PR off", "fork PR", "push", "poster", "poster off"],
)
def test_where_the_changed_lines_are_reviewed(event, inputs, review):
    assert decide(event, inputs, "openai", KEY).review == review


def test_the_review_choices_are_the_inputs():
    assert set(get_args(Review)) == {*BY_KEY["review_comments"].choices, "annotations", "none"} - {"off"}


def test_pull_request_target_is_refused_with_the_safe_pattern():
    with pytest.raises(ConfigError) as refused:
        decide(Event("pull_request_target", {"pull_request": {"number": 1}}), ALWAYS, "openai", KEY)
    assert "gives a PR's code your secrets" in refused.value.message and "workflow_run" in refused.value.message


@pytest.mark.parametrize(
    ("event", "inputs", "stress"),
    [
        (pr(), ALWAYS, True),  # the input's default: pull requests
        (Event("push", {}), ALWAYS, False),
        (Event("push", {}), {"stress_test": "always"}, True),
        (pr(), {"stress_test": "off"}, False),
        (pr(fork=True), ALWAYS, True),  # cache-only, like the eval
    ],
    ids=["PR", "push", "push always", "PR off", "fork PR"],
)
def test_when_the_stress_test_runs(event, inputs, stress):
    assert decide(event, inputs, "openai", KEY).stress is stress


@pytest.mark.parametrize(
    ("event", "inputs", "batch"),
    [
        (pr(), ALWAYS, None),  # no input: evals.batch decides
        (Event("push", {}), {"batch_events": "push"}, True),  # a push seeds the cache: nobody waits on it
        (pr(), {"batch_events": "push"}, False),
        (pr(), {"batch_events": "always"}, True),
        (Event("push", {}), {"batch_events": "never"}, False),
    ],
    ids=["no input", "push on push", "push on a PR", "always", "never"],
)
def test_when_the_requests_go_as_a_batch(event, inputs, batch):
    assert decide(event, inputs, "anthropic", KEY).batch is batch
