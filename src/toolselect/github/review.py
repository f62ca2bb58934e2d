"""The PR review on source lines: the PR's files (PyGithub, every page), our own earlier review
comments (marker and identity, as for the sticky comment), their threads (GraphQL), and one review
(event COMMENT, never REQUEST_CHANGES) per run with the new inline comments.

Sticky like the conversation comment: an unchanged finding is never posted twice (its comment is
edited when its numbers move), a comment on a tool that no longer regresses says why and its thread
is resolved (minimized when resolving is refused), and a thread a person resolved stays resolved.
Only comments written by exactly our account, starting with our marker, are ever touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..render.review import Mark, read_mark, resolved_body
from ..sourcelines import FilePatch, Location, right_lines
from .comment import Identity

THREADS = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId isMinimized } } }
      }
    }
  }
}
"""


@dataclass(frozen=True)
class PullFiles:
    head_sha: str  # the PR's head now: a review is placed on this commit's diff
    files: tuple[FilePatch, ...]


def pull_files(gh: Any, repo: str, number: int) -> PullFiles:
    """The PR's head commit and its files with their patches, every page (GitHub lists up to 3000)."""
    pull = gh.get_repo(repo).get_pull(number)
    files = tuple(FilePatch(f.filename, f.patch, f.status) for f in pull.get_files())
    return PullFiles(pull.head.sha, files)


@dataclass(frozen=True)
class Ours:
    """One of our earlier review comments."""

    id: int
    node_id: str
    mark: Mark
    body: str
    thread: str | None  # the GraphQL id of its thread
    resolved: bool  # its thread is resolved (by us or by a person)
    minimized: bool = False


@dataclass(frozen=True)
class InlineComment:
    """A tool's inline comment as this run would write it."""

    tool: str
    where: Location
    key: str
    body: str


MAX_NEW = 30  # new inline comments per review; the rest stay in the sticky comment


@dataclass(frozen=True)
class ReviewPlan:
    post: tuple[InlineComment, ...]
    edit: tuple[tuple[Ours, str], ...]  # (comment, its new body): numbers moved, or it came back
    reopen: tuple[Ours, ...]  # threads we resolved whose finding is back
    # (comment, its body saying why, the tool whose new comment replaces it: resolved once that is posted)
    resolve: tuple[tuple[Ours, str, str | None], ...]
    unchanged: int
    left_out: int = 0  # new findings over MAX_NEW


def plan_review(
    findings: Sequence[InlineComment], ours: Sequence[Ours], why: Callable[[str], str], max_new: int = MAX_NEW
) -> ReviewPlan:
    """What to post, edit, reopen and resolve. Pure. `why(tool)`: why a comment no longer holds.
    `findings` come most important first; at most `max_new` new comments are planned."""
    post: list[InlineComment] = []
    edit: list[tuple[Ours, str]] = []
    reopen: list[Ours] = []
    resolve: list[tuple[Ours, str, str | None]] = []
    unchanged = 0
    handled: set[int] = set()
    for finding in findings:
        same = [o for o in ours if o.mark.tool == finding.tool and o.mark.key == finding.key]
        if not same:
            post.append(finding)
            continue
        mine = same[-1]
        handled.update(o.id for o in same)
        if mine.mark.resolved:  # we resolved it; the same finding is back
            if mine.resolved or mine.minimized:
                reopen.append(mine)
            edit.append((mine, finding.body))
        elif mine.resolved or mine.body == finding.body:  # a person resolved it, or nothing moved
            unchanged += 1
        else:
            edit.append((mine, finding.body))
    posting = {f.tool for f in post[:max_new]}
    current = {f.tool for f in findings}
    newer = "a newer comment replaces this one (the text changed again)"
    for o in ours:
        if o.id in handled or o.mark.resolved or o.resolved:
            continue
        if o.mark.tool in posting:  # resolved once the new one is posted
            resolve.append((o, resolved_body(o.body, o.mark, newer), o.mark.tool))
        elif o.mark.tool in current and not any(f.tool == o.mark.tool for f in post):  # its newer one is up
            resolve.append((o, resolved_body(o.body, o.mark, newer), None))
        elif o.mark.tool not in current:
            resolve.append((o, resolved_body(o.body, o.mark, why(o.mark.tool)), None))
        # else: its new comment is over max_new; the old one stays as it is
    return ReviewPlan(
        tuple(post[:max_new]), tuple(edit), tuple(reopen), tuple(resolve), unchanged, max(0, len(post) - max_new)
    )


def merged(a: ReviewPlan, b: ReviewPlan) -> ReviewPlan:
    """Two plans as one review (findings about changes, and tested rewrites)."""
    return ReviewPlan(
        a.post + b.post,
        a.edit + b.edit,
        a.reopen + b.reopen,
        a.resolve + b.resolve,
        a.unchanged + b.unchanged,
        a.left_out + b.left_out,
    )


def our_comments(gh: Any, repo: str, number: int, comment_id: str, me: Identity) -> list[Ours]:
    """Our review comments on the PR (every page), oldest first, with their threads."""
    pull = gh.get_repo(repo).get_pull(number)
    found = []
    for c in pull.get_review_comments():
        user = c.user
        if user is None or (user.login, user.type) != (me.login, me.type):
            continue
        mark = read_mark(c.body or "", comment_id)
        if mark is not None:
            found.append((c, mark))
    if not found:
        return []
    threads = _threads(gh, repo, number)
    return [
        Ours(c.id, c.node_id, mark, c.body, *threads.get(c.id, (None, False, False)))
        for c, mark in sorted(found, key=lambda pair: pair[0].id)
    ]


def _threads(gh: Any, repo: str, number: int) -> dict[int, tuple[str | None, bool, bool]]:
    """First comment's id → (thread id, resolved, minimized), every page of the PR's review threads."""
    owner, name = repo.split("/", 1)
    out: dict[int, tuple[str | None, bool, bool]] = {}
    after = None
    while True:
        _, data = gh.requester.graphql_query(THREADS, {"owner": owner, "name": name, "number": number, "after": after})
        page = data["data"]["repository"]["pullRequest"]["reviewThreads"]
        for node in page["nodes"]:
            first = node["comments"]["nodes"]
            if first:
                out[first[0]["databaseId"]] = (node["id"], node["isResolved"], bool(first[0].get("isMinimized")))
        if not page["pageInfo"]["hasNextPage"]:
            return out
        after = page["pageInfo"]["endCursor"]


@dataclass(frozen=True)
class Synced:
    url: str  # the new review's, or ""
    posted: int
    updated: int
    resolved: int
    unchanged: int
    notes: tuple[str, ...] = ()  # what could not be done, for a warning


def sync_review(gh: Any, repo: str, number: int, pull: PullFiles, plan: ReviewPlan, review_body: str) -> Synced:
    """Carry out `plan`: post one review with the new comments (each checked against the PR's own
    file list first), then edit, reopen and resolve our earlier comments."""
    from github import GithubException

    notes: list[str] = []
    pr = gh.get_repo(repo).get_pull(number)
    allowed = {f.path: right_lines(f.patch) for f in pull.files if f.patch}
    comments, tools = [], set()
    for finding in plan.post:
        where = finding.where
        lines = allowed.get(where.path, set())
        if where.line not in lines or where.start_line not in lines:  # never a comment outside the diff
            notes.append(f"{where.path}:{where.line} is not in the pull request's diff; not commented")
            continue
        comment: dict[str, Any] = {"path": where.path, "line": where.line, "side": "RIGHT", "body": finding.body}
        if where.start_line < where.line:
            comment |= {"start_line": where.start_line, "start_side": "RIGHT"}
        comments.append(comment)
        tools.add(finding.tool)
    url = ""
    if comments:
        try:
            review = pr.create_review(
                commit=gh.get_repo(repo).get_commit(pull.head_sha), body=review_body, event="COMMENT", comments=comments
            )
            url = review.html_url
        except GithubException as exc:
            if exc.status != 422:
                raise
            notes.append(f"GitHub refused the review: {_message(exc)}")
            comments, tools = [], set()
    if plan.left_out:
        notes.append(f"{plan.left_out} more changed tools than fit one review ({MAX_NEW}): see the PR comment")
    resolve = [(o, body) for o, body, replaced_by in plan.resolve if replaced_by is None or replaced_by in tools]
    by_id = {c.id: c for c in pr.get_review_comments()} if plan.edit or resolve else {}
    for o in plan.reopen:
        if o.thread and (refused := _mutation(gh, "unresolveReviewThread", {"threadId": o.thread})):
            notes.append(f"could not reopen a review thread: {refused}")
        if o.minimized and (refused := _mutation(gh, "unminimizeComment", {"subjectId": o.node_id})):
            notes.append(f"could not unminimize a review comment: {refused}")
    edited = 0
    for o, body in plan.edit:
        if o.id in by_id:  # else deleted since it was listed: nothing to edit
            by_id[o.id].edit(body)
            edited += 1
    resolved = 0
    for o, body in resolve:
        if o.id not in by_id:
            continue
        by_id[o.id].edit(body)
        resolved += 1
        refused = _mutation(gh, "resolveReviewThread", {"threadId": o.thread}) if o.thread else "no thread"
        if refused and (also := _mutation(gh, "minimizeComment", {"subjectId": o.node_id, "classifier": "RESOLVED"})):
            notes.append(f"could neither resolve nor minimize a review comment: {refused}; {also}")
    return Synced(url, len(comments), edited, resolved, plan.unchanged, tuple(notes))


def _mutation(gh: Any, name: str, given: dict[str, Any]) -> str | None:
    """Run one GraphQL mutation; None when done, else what GitHub said."""
    from github import GithubException

    try:
        gh.requester.graphql_named_mutation(name, given, "clientMutationId")
        return None
    except GithubException as exc:
        return f"{name}: {_message(exc)}"


def _message(exc: Any) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    errors = data.get("errors")
    if isinstance(errors, list) and errors:
        first = errors[0]
        return str(first.get("message") if isinstance(first, dict) else first)
    return str(data.get("message") or exc.status)
