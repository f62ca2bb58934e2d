"""The sticky review against the fake GitHub through PyGithub's real client: only our own comments
are touched, a person's resolution is respected, a refused resolve falls back to minimizing, a
finding that comes back reopens its thread, and a line outside the diff is never commented."""

from __future__ import annotations

from tests.fakes.github_api import FakeGitHub
from toolselect.github.comment import Identity, make_client
from toolselect.github.review import InlineComment, our_comments, plan_review, pull_files, sync_review
from toolselect.render.review import Mark, read_mark
from toolselect.sourcelines import Location

REPO = "acme/weather-mcp"
BOT = Identity("github-actions[bot]", "Bot")
PATCH = "@@ -1,3 +1,3 @@\n a\n-old words\n+new words for the tool\n c"


def finding(tool: str, key: str, body: str = "numbers", line: int = 2) -> InlineComment:
    mark = Mark("default", tool, key)
    return InlineComment(
        tool, Location(tool, "description", "tools.py", line, line, 1.0, 1.0), key, f"{mark.text()}\n{body}\n"
    )


def sync(gh, findings):
    pull = pull_files(gh, REPO, 7)
    ours = our_comments(gh, REPO, 7, "default", BOT)
    plan = plan_review(findings, ours, lambda tool: f"{tool} is fine now")
    return sync_review(gh, REPO, 7, pull, plan, "<!-- toolselect-review:default -->\nreview")


def test_only_our_comments_move_and_a_persons_resolution_stays():
    with FakeGitHub({"tok": "github-actions[bot]", "dev": "octocat"}) as fake:
        fake.add_pull(7, "acme", "b", "a" * 40)
        fake.set_files(7, [("tools.py", PATCH)])
        gh = make_client(fake.url, "tok")
        first = sync(gh, [finding("alpha", "a1"), finding("beta", "b2")])
        assert (first.posted, len(fake.reviews)) == (2, 1)
        # someone else copies our marker onto their own comment: never touched
        theirs = fake.add_review_comment(7, "tools.py", 2, Mark("default", "alpha", "c0").text() + "\nmine", "octocat")
        fake.set_files(7, [("tools.py", PATCH)])
        # a person resolves beta's thread: we leave it resolved, and never post it again
        beta = next(c for c in fake.review_comments_on(7) if "tool=beta" in c["body"])
        fake.thread_of(beta["id"])["resolved"] = True
        second = sync(gh, [finding("alpha", "a1", "numbers moved"), finding("beta", "b2", "numbers moved")])
        assert (second.posted, second.updated, second.unchanged, second.resolved) == (0, 1, 1, 0)
        assert fake.review_comments[theirs["id"]]["body"].endswith("mine")
        # alpha no longer regresses: resolved with why; beta stays as the person left it
        third = sync(gh, [])
        assert third.resolved == 1
        alpha = next(c for c in fake.review_comments_on(7) if "tool=alpha" in c["body"] and c["id"] != theirs["id"])
        assert read_mark(alpha["body"], "default").resolved and "alpha is fine now" in alpha["body"]
        assert fake.thread_of(alpha["id"])["resolved"] and not fake.thread_of(theirs["id"])["resolved"]
        # the same finding comes back: its thread is reopened and its comment edited, nothing posted
        back = sync(gh, [finding("alpha", "a1")])
        assert (back.posted, back.updated) == (0, 1) and not fake.thread_of(alpha["id"])["resolved"]
        assert not read_mark(fake.review_comments[alpha["id"]]["body"], "default").resolved
        gh.close()


def test_a_refused_resolve_minimizes_and_a_line_outside_the_diff_is_not_commented():
    with FakeGitHub({"tok": "github-actions[bot]"}) as fake:
        fake.add_pull(7, "acme", "b", "a" * 40)
        fake.set_files(7, [("tools.py", PATCH)])
        gh = make_client(fake.url, "tok")
        sync(gh, [finding("alpha", "a1")])
        [old] = fake.review_comments_on(7)
        fake.deny_resolve = True
        moved = sync(gh, [finding("alpha", "b2", line=40)])  # the text moved out of the diff
        assert moved.posted == 0 and "tools.py:40 is not in the pull request's diff; not commented" in moved.notes
        assert fake.review_comments_on(7) == [old]  # no new comment, and the old one is not said to be replaced
        gone = sync(gh, [])  # alpha no longer regresses; resolving is refused, so it is minimized
        assert gone.resolved == 1 and gone.notes == ()
        [old] = fake.review_comments_on(7)
        assert old["node_id"] in fake.minimized and not fake.thread_of(old["id"])["resolved"]
        assert "alpha is fine now" in old["body"]
        back = sync(gh, [finding("alpha", "a1")])  # it comes back: the comment is shown again
        assert back.posted == 0 and old["node_id"] not in fake.minimized
        gh.close()


def test_a_review_holds_at_most_max_new_comments():
    findings = [finding(f"tool{i:02}", f"{i:02x}") for i in range(35)]
    plan = plan_review(findings, [], lambda tool: "")
    assert len(plan.post) == 30 and plan.left_out == 5
    assert [f.tool for f in plan.post][:2] == ["tool00", "tool01"]  # the most important first
