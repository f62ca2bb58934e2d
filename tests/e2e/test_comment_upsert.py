"""The sticky comment through PyGithub's real client against the fake GitHub server."""

from __future__ import annotations

import pytest
from github import GithubException

from tests.fakes.github_api import FakeGitHub
from toolselect.github.comment import Identity, find_pull_request, make_client, upsert_comment, whoami

REPO = "acme/weather-mcp"
MARK = "<!-- toolselect:default -->"


def test_created_once_then_edited_in_place_and_others_left_alone():
    with FakeGitHub({"tok": "github-actions[bot]", "dev": "octocat"}) as fake:
        spoof = fake.add_comment(7, f"{MARK}\nI copied your marker", "octocat")  # someone else's
        gh = make_client(fake.url, "tok")
        first = upsert_comment(gh, REPO, 7, f"{MARK}\none", MARK)
        second = upsert_comment(gh, REPO, 7, f"{MARK}\ntwo", MARK)
        third = upsert_comment(gh, REPO, 7, f"{MARK}\ntwo", MARK)
        gh.close()
        ours = [c for c in fake.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
        assert (first.action, second.action, third.action) == ("created", "updated", "unchanged")
        assert len(ours) == 1 and ours[0]["body"] == f"{MARK}\ntwo"
        assert fake.comments[spoof["id"]]["body"] == f"{MARK}\nI copied your marker"
        assert first.url == second.url == ours[0]["html_url"]


def test_marker_found_on_any_page_of_300_comments():
    with FakeGitHub({"tok": "github-actions[bot]", "dev": "octocat"}) as fake:
        for i in range(300):  # ours is the last one, on the fourth page of 100
            fake.add_comment(7, f"comment {i}", "octocat" if i % 2 else "github-actions[bot]")
        ours = fake.add_comment(7, f"{MARK}\nold", "github-actions[bot]")
        gh = make_client(fake.url, "tok")
        posted = upsert_comment(gh, REPO, 7, f"{MARK}\nnew", MARK)
        gh.close()
        assert posted.action == "updated" and fake.comments[ours["id"]]["body"] == f"{MARK}\nnew"
        assert len(fake.comments_on(7)) == 301
        assert sum(1 for method, path in fake.log if method == "GET" and "/comments" in path) == 4


def test_identity_falls_back_to_graphql_for_installation_tokens():
    with FakeGitHub({"tok": "toolselect-app[bot]"}) as fake:
        gh = make_client(fake.url, "tok")
        assert whoami(gh) == Identity("toolselect-app[bot]", "Bot")
        gh.close()
        assert ("POST", "/graphql") in fake.log


def test_a_person_named_like_the_bot_keeps_their_comment():
    """`github-actions` (a User) is not `github-actions[bot]` (a Bot): their comment, marker and all,
    is left alone; the bot creates its own and edits only that one."""
    with FakeGitHub({"tok": "github-actions[bot]", "human": "github-actions"}) as fake:
        theirs = fake.add_comment(7, f"{MARK}\nmine, a person's", "github-actions")
        assert theirs["user"]["type"] == "User"
        gh = make_client(fake.url, "tok")
        first = upsert_comment(gh, REPO, 7, f"{MARK}\none", MARK)
        second = upsert_comment(gh, REPO, 7, f"{MARK}\ntwo", MARK)
        gh.close()
        assert (first.action, second.action) == ("created", "updated")
        assert fake.comments[theirs["id"]]["body"] == f"{MARK}\nmine, a person's"
        ours = [c for c in fake.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
        assert len(ours) == 1 and ours[0]["body"] == f"{MARK}\ntwo" and ours[0]["user"]["type"] == "Bot"
        assert not any(m == "PATCH" and p.endswith(f"/comments/{theirs['id']}") for m, p in fake.log)
        # and the other way round: the person's token never edits the bot's comment
        gh = make_client(fake.url, "human")
        assert whoami(gh) == Identity("github-actions", "User")
        mine = upsert_comment(gh, REPO, 7, f"{MARK}\nthe person again", MARK)
        gh.close()
        assert mine.action == "updated" and mine.url == theirs["html_url"]
        assert ours[0]["body"] == f"{MARK}\ntwo"


def test_an_app_bot_found_by_graphql_skips_a_person_named_like_it():
    with FakeGitHub({"tok": "toolselect-app[bot]"}) as fake:
        theirs = fake.add_comment(7, f"{MARK}\nspoof", "toolselect-app")
        ours = fake.add_comment(7, f"{MARK}\nold", "toolselect-app[bot]")
        gh = make_client(fake.url, "tok")
        posted = upsert_comment(gh, REPO, 7, f"{MARK}\nnew", MARK)
        gh.close()
        assert posted.action == "updated" and posted.url == ours["html_url"]
        assert fake.comments[ours["id"]]["body"] == f"{MARK}\nnew"
        assert fake.comments[theirs["id"]]["body"] == f"{MARK}\nspoof"


def test_comment_on_change_does_not_create():
    with FakeGitHub() as fake:
        gh = make_client(fake.url, "test-token")
        assert upsert_comment(gh, REPO, 7, f"{MARK}\nx", MARK, create=False).action == "skipped"
        gh.close()
        assert fake.comments_on(7) == []


def test_read_only_token_raises_403():
    with FakeGitHub(read_only={"test-token"}) as fake:
        gh = make_client(fake.url, "test-token")
        with pytest.raises(GithubException) as exc:
            upsert_comment(gh, REPO, 7, f"{MARK}\nx", MARK)
        gh.close()
        assert exc.value.status == 403 and exc.value.data["message"] == "Resource not accessible by integration"


def test_find_pull_request_by_head_branch_and_sha():
    with FakeGitHub() as fake:
        fake.add_pull(12, "contributor", "better-descriptions", "c" * 40)
        gh = make_client(fake.url, "test-token")
        assert find_pull_request(gh, REPO, "contributor", "better-descriptions", "c" * 40) == 12
        assert find_pull_request(gh, REPO, "contributor", "better-descriptions", "d" * 40) is None
        gh.close()
