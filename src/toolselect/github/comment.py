"""The sticky PR comment, through PyGithub: found by its hidden marker *and* our own identity, on
any page of the PR's comments; edited in place, created only when there is none. Never touches a
comment someone else wrote, even one that carries the marker."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

BOT = "github-actions[bot]"


def make_client(api_url: str, token: str) -> Any:
    """One PyGithub client for the run: lazy objects (no GET for repo/issue), retries on GET and
    PATCH (not POST: a retried create could post twice), no hour-long rate-limit sleeps."""
    from github import Auth, Github, GithubRetry

    logging.getLogger("github").setLevel(logging.WARNING)  # PyGithub logs every retry at INFO
    retry = GithubRetry(
        total=3,
        backoff_factor=0.5,
        secondary_rate_wait=30,
        max_rate_limit_wait=60,
        raise_on_status=False,
        allowed_methods=frozenset({"GET", "PATCH"}),
    )
    return Github(
        base_url=api_url.rstrip("/"), auth=Auth.Token(token), retry=retry, timeout=30, per_page=100, lazy=True
    )


def _norm(login: str) -> str:
    return login.removesuffix("[bot]").lower()


def whoami(gh: Any) -> str:
    """The token's login: `GET /user`; when an installation token is refused there, GraphQL
    `viewer { login }`; else the Actions bot."""
    from github import GithubException
    from requests.exceptions import RequestException

    try:
        return gh.get_user().login
    except (GithubException, RequestException):
        pass
    try:
        _, data = gh.requester.graphql_query("query { viewer { login } }", {})
        return data["data"]["viewer"]["login"]
    except (GithubException, RequestException, KeyError, TypeError):
        return BOT


@dataclass(frozen=True)
class Posted:
    url: str
    action: str  # created | updated | unchanged | skipped


def find_comment(gh: Any, repo: str, number: int, marker: str, login: str) -> Any | None:
    issue = gh.get_repo(repo).get_issue(number)
    me = _norm(login)
    for comment in issue.get_comments():  # every page
        user = comment.user
        if user is not None and _norm(user.login) == me and (comment.body or "").startswith(marker):
            return comment
    return None


def upsert_comment(gh: Any, repo: str, number: int, body: str, marker: str, *, create: bool = True) -> Posted:
    """Edit our comment in place, or create it (unless `create` is False: comment: on-change)."""
    login = whoami(gh)
    mine = find_comment(gh, repo, number, marker, login)
    if mine is not None:
        if mine.body == body:
            return Posted(mine.html_url, "unchanged")
        mine.edit(body)
        return Posted(mine.html_url, "updated")
    if not create:
        return Posted("", "skipped")
    created = gh.get_repo(repo).get_issue(number).create_comment(body)
    return Posted(created.html_url, "created")


def find_pull_request(gh: Any, repo: str, head_owner: str, head_branch: str, head_sha: str) -> int | None:
    """The open PR whose head is `owner:branch` at `head_sha` (for the fork-safe poster: the number
    is looked up, never taken from the artifact)."""
    for pull in gh.get_repo(repo).get_pulls(state="open", head=f"{head_owner}:{head_branch}"):
        if pull.head.sha == head_sha:
            return pull.number
    return None
