"""The Action's policy as data: for a GitHub event, its inputs and the run's settings, what the run
does — evaluate or post a fork PR's artifact, against which base, with keys or from the cache only,
whether to comment and to review the changed lines, whether a failed gate fails the check. Pure,
and tested as a table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from .errors import ConfigError
from .options import BY_KEY, OPTIONS
from .providers.registry import PROVIDERS

PUSH_NOTE = "push: head only (this run seeds the answer cache for pull requests)"
Review = Literal["regressions", "all-changes", "annotations", "none"]
Suggest = Literal["regressions", "confusions", "off"]
PULL_REQUEST_TARGET = (
    "toolselect does not run on pull_request_target: that event gives a PR's code your secrets and a write "
    "token. Run it on pull_request, and post fork PRs' comments with the workflow_run workflow "
    "(examples/workflows/toolselect-comment.yml)"
)


@dataclass(frozen=True)
class Event:
    name: str
    payload: Mapping[str, Any]

    @property
    def pull_request(self) -> Mapping[str, Any] | None:
        pr = self.payload.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def fork(self) -> bool:
        pr = self.pull_request
        if not pr:
            return False
        head = _get(pr, "head", "repo", "full_name")
        base = _get(pr, "base", "repo", "full_name")
        return bool(head and base and head != base)


def _get(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data


def read_event(environ: Mapping[str, str]) -> Event:
    path = environ.get("GITHUB_EVENT_PATH")
    payload: Any = {}
    if path and Path(path).is_file():
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"GITHUB_EVENT_PATH {path} is not readable JSON: {exc}") from None
    return Event(environ.get("GITHUB_EVENT_NAME", ""), payload if isinstance(payload, dict) else {})


@dataclass(frozen=True)
class PullLookup:
    """How the poster finds the PR: by its head, through the API (never the artifact's word)."""

    owner: str
    branch: str
    sha: str
    run_url: str | None


@dataclass(frozen=True)
class Plan:
    mode: Literal["evaluate", "post", "nothing"]  # post: the fork-safe poster; nothing: only say why
    fork: bool = False
    pr: int | None = None  # the pull request commented on (evaluate mode)
    base_ref: str | None = None  # the commit to compare with; None: the head only
    base_note: str | None = None  # why there is no base, when that is by design (a push)
    cache_only: bool = False  # no key here (a fork PR, or no key given): only answers already cached
    comment: Literal["always", "on-change", "off"] = "off"
    enforced: bool = True  # a failed verdict fails the check (not on a fork PR, unless fail-on-fork)
    notes: tuple[str, ...] = ()  # said with the verdict, in the comment and the job summary
    warnings: tuple[str, ...] = ()  # annotated as ::warning
    notices: tuple[str, ...] = ()  # annotated as ::notice
    lookup: PullLookup | None = None  # post mode
    # the changed tool texts' source lines: a review on those that regressed (or on all changes),
    # annotations instead (review-comments: off), or nothing (no PR here, or a fork PR's own run)
    review: Review = "none"
    stress: bool = False  # run the config's stress: section (the stress-test input, and the event)
    batch: bool | None = None  # ask through the batch API (the batch input, and the event); None: the config says
    # rewrites of the descriptions of the tools that regressed (or are confused), tested on held-out
    # cases and suggested: only on a PR whose run has a key (a fork's, or a keyless one, is cache-only)
    suggest: Suggest = "off"


def key_input(provider: str) -> str:
    """The Action input that carries a provider's key, e.g. anthropic-api-key."""
    keys = set(PROVIDERS[provider].keys)
    return next(str(o.input_name) for o in OPTIONS if o.secret and set(o.env) & keys)


def decide(event: Event, inputs: Mapping[str, Any], provider: str | None, environ: Mapping[str, str]) -> Plan:
    """What to do. `inputs`: the Action's inputs that were given (key → value); `provider`: the
    run's resolved provider (None in the poster, which evaluates nothing); `environ`: the step's
    environment with the key inputs in it."""
    if event.name == "pull_request_target":
        raise ConfigError(PULL_REQUEST_TARGET)
    review = _review(inputs)
    if event.name == "workflow_run" and inputs.get("from_artifact"):
        return _poster(event, environ, review)
    pr = event.pull_request
    fork = event.fork
    fail_on_fork = bool(inputs.get("fail_on_fork"))
    info = PROVIDERS.get(provider or "")
    keyless = bool(info and info.api and not any(environ.get(k) for k in info.keys))
    notes, warnings, notices = [], [], []
    if fork:
        notes.append(
            "fork PR: no secrets and a read-only token here, so only answers already in the cache were "
            "evaluated; the comment is posted by the workflow_run workflow"
            + ("" if fail_on_fork else ", and this check does not fail on the gate")
        )
        notices.append(
            "fork PR: the comment is left to the workflow_run workflow (examples/workflows/toolselect-comment.yml); "
            "the report is in toolselect-report/"
        )
    elif keyless and provider:
        warnings.append(f"no API key for {provider}: evaluating cached answers only (pass {key_input(provider)})")
    base_ref = inputs.get("base_ref") or (_get(pr, "base", "sha") if pr else None)
    base_note = None
    if not base_ref:
        base_note = (
            PUSH_NOTE if event.name == "push" else f"{event.name or 'this event'}: head only (set base-ref to compare)"
        )
    return Plan(
        mode="evaluate",
        fork=fork,
        pr=_get(pr, "number") if pr else None,
        base_ref=base_ref,
        base_note=base_note,
        cache_only=fork or keyless,
        comment=inputs.get("comment", "always") if pr and not fork else "off",
        enforced=not fork or fail_on_fork,
        notes=tuple(notes),
        warnings=tuple(warnings),
        notices=tuple(notices),
        review=review if pr and not fork else "none",
        stress=_stress(inputs, bool(pr)),
        batch=_batch(inputs, event.name),
        suggest=_suggest(inputs) if pr and not fork and not keyless else "off",
    )


def _batch(inputs: Mapping[str, Any], event: str) -> bool | None:
    chosen = inputs.get("batch_events")
    return None if not chosen else chosen == "always" or (chosen == "push" and event == "push")


def _stress(inputs: Mapping[str, Any], pull_request: bool) -> bool:
    chosen = inputs.get("stress_test") or BY_KEY["stress_test"].input_default
    return chosen == "always" or (chosen == "pull-requests" and pull_request)


def _review(inputs: Mapping[str, Any]) -> Review:
    chosen = inputs.get("review_comments") or BY_KEY["review_comments"].input_default
    return "annotations" if chosen == "off" else cast(Review, chosen)


def _suggest(inputs: Mapping[str, Any]) -> Suggest:
    return cast(Suggest, inputs.get("suggest") or BY_KEY["suggest"].input_default)


def _poster(event: Event, environ: Mapping[str, str], review: Review) -> Plan:
    """`on: workflow_run` with from-artifact: post a fork PR run's comment from its artifact."""
    run = event.payload.get("workflow_run") or {}
    sha, branch = _get(run, "head_sha"), _get(run, "head_branch")
    owner = _get(run, "head_repository", "owner", "login")
    if _get(run, "event") != "pull_request" or not (sha and owner and branch):
        return Plan(mode="nothing", notices=("the triggering run was not a pull_request run: nothing to post",))
    # Whether the PR came from a fork is read from the event, never from the artifact.
    fork = _get(run, "head_repository", "full_name") != environ.get("GITHUB_REPOSITORY", "")
    note = "posted from the PR run's artifact" + (
        ": a fork PR, so only answers already in the cache were evaluated" if fork else ""
    )
    return Plan(
        mode="post",
        fork=fork,
        comment="always",
        enforced=False,  # the poster reports; the PR's own run is the check
        notes=(note,),
        review=review,
        lookup=PullLookup(str(owner), str(branch), str(sha), _get(run, "html_url")),
    )
