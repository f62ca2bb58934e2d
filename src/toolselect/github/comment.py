"""The sticky PR comment, through PyGithub: found by its hidden marker *and* our own identity, on
any page of the PR's comments; edited in place, created only when there is none. Never touches a
comment someone else wrote, even one that carries the marker — a person whose login looks like the
bot's (`github-actions` beside `github-actions[bot]`) included: the login and the account type must
both be ours."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Identity:
    """An account as a comment's `user` shows it in the REST API: the login (a bot's ends in
    `[bot]`) and the type ("Bot", "User", …)."""

    login: str
    type: str


BOT = Identity("github-actions[bot]", "Bot")


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


def whoami(gh: Any) -> Identity:
    """The token's account as REST shows its comments. `GET /user` answers for a person's token;
    an installation token (the Actions' `GITHUB_TOKEN`, a GitHub App's) is refused there, so it is
    GraphQL's `viewer`, which GitHub types `User!` even then: `__typename` is "User" and the login
    keeps its `[bot]` suffix (`github-actions[bot]`). No person's login can hold brackets, so a
    login ending in `[bot]` is a bot whatever the type says. Unknown: the Actions bot."""
    from github import GithubException
    from requests.exceptions import RequestException

    try:
        user = gh.get_user()
        return identity(user.login, user.type)
    except (GithubException, RequestException):
        pass
    try:
        _, data = gh.requester.graphql_query("query { viewer { login } }", {})
        login = data["data"]["viewer"]["login"]
    except (GithubException, RequestException, KeyError, TypeError, AttributeError):
        return BOT
    return identity(login, "User") if isinstance(login, str) and login else BOT


def identity(login: str, kind: str) -> Identity:
    """`login` of account type `kind` as a comment's REST `user` names it."""
    if login.endswith("[bot]") or kind == "Bot":
        return Identity(login if login.endswith("[bot]") else f"{login}[bot]", "Bot")
    return Identity(login, kind)


@dataclass(frozen=True)
class Posted:
    url: str
    action: str  # created | updated | unchanged | skipped


def find_comment(gh: Any, repo: str, number: int, marker: str, me: Identity) -> Any | None:
    """Our comment with `marker`: written by exactly our login, of our account type."""
    issue = gh.get_repo(repo).get_issue(number)
    for comment in issue.get_comments():  # every page
        user = comment.user
        if (
            user is not None
            and (user.login, user.type) == (me.login, me.type)
            and (comment.body or "").startswith(marker)
        ):
            return comment
    return None


def upsert_comment(gh: Any, repo: str, number: int, body: str, marker: str, *, create: bool = True) -> Posted:
    """Edit our comment in place, or create it (unless `create` is False: comment: on-change)."""
    mine = find_comment(gh, repo, number, marker, whoami(gh))
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
