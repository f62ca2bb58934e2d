"""The fake GitHub server answers in the shapes of GitHub's published OpenAPI description."""

from __future__ import annotations

import requests

from tests.fakes.github_api import DENIED, FakeGitHub, problems


def validate(payload, name):
    assert problems(payload, name) == []


def test_responses_match_the_openapi_schemas():
    with FakeGitHub({"tok": "github-actions[bot]", "dev": "octocat"}) as gh:
        gh.add_comment(7, "hello", "octocat")
        session = requests.Session()

        def get(path, token="tok"):
            return session.get(gh.url + path, headers={"authorization": f"token {token}"}, timeout=5)

        comments = get("/repos/acme/weather-mcp/issues/7/comments").json()
        for comment in comments:
            validate(comment, "issue-comment")
        posted = session.post(
            gh.url + "/repos/acme/weather-mcp/issues/7/comments",
            json={"body": "x"},
            headers={"authorization": "token tok"},
            timeout=5,
        )
        assert posted.status_code == 201
        validate(posted.json(), "issue-comment")
        validate(get("/user", "dev").json(), "private-user")
        denied = get("/user")
        assert denied.status_code == 403 and denied.json() == DENIED
        validate(denied.json(), "basic-error")
        gh.add_pull(9, "fork-owner", "fix-descriptions", "a" * 40)
        pulls = get("/repos/acme/weather-mcp/pulls?state=open&head=fork-owner:fix-descriptions").json()
        assert [p["number"] for p in pulls] == [9]
        validate(pulls[0]["user"], "simple-user")
        session.close()


def test_what_github_would_refuse_is_refused_and_recorded():
    """The fake checks what the client sends: a review comment with a key GitHub doesn't know, a
    comment on a line outside the diff, a GraphQL field GitHub's schema doesn't have."""
    with FakeGitHub({"tok": "github-actions[bot]"}) as gh:
        gh.add_pull(7, "acme", "b", "a" * 40)
        gh.set_files(7, [("a.py", "@@ -1,2 +1,2 @@\n x\n-y\n+z")])
        session = requests.Session()
        headers = {"authorization": "token tok"}
        url = gh.url + "/repos/acme/weather-mcp/pulls/7/reviews"
        review = {"commit_id": "a" * 40, "body": "b", "event": "COMMENT"}
        typo = session.post(
            url, json={**review, "comments": [{"path": "a.py", "lin": 2, "body": "x"}]}, headers=headers
        )
        assert typo.status_code == 422 and "lin" in gh.violations[0]
        outside = session.post(
            url, json={**review, "comments": [{"path": "a.py", "line": 9, "body": "x"}]}, headers=headers
        )
        assert outside.status_code == 422 and outside.json()["errors"] == [
            "Pull request review thread line must be part of the diff"
        ]
        placed = session.post(
            url, json={**review, "comments": [{"path": "a.py", "line": 2, "body": "x"}]}, headers=headers
        )
        assert placed.status_code == 200
        validate(placed.json(), "pull-request-review")
        validate(gh.pull(7), "pull-request")
        query = {"query": 'query { repository(owner: "acme", name: "weather-mcp") { pullRequest(number: 7) { x } } }'}
        refused = session.post(gh.url + "/graphql", json=query, headers=headers).json()
        assert "Cannot query field 'x' on type 'PullRequest'." in refused["errors"][0]["message"]
        session.close()
        gh.violations.clear()  # recorded as they should be; the fake raises on leftovers


def test_viewer_is_answered_from_githubs_schema_as_github_answers_it():
    """`viewer` is `User!` in GitHub's schema: an installation token's viewer is a "User" whose
    login keeps `[bot]`; a comment's `author` (an Actor) names the same bot as a `Bot` without it."""
    with FakeGitHub({"tok": "github-actions[bot]", "dev": "octocat"}) as gh:
        gh.add_review_comment(7, "a.py", 1, "hi", "github-actions[bot]")
        session = requests.Session()

        def graphql(query, token="tok", **variables):
            answer = session.post(
                gh.url + "/graphql",
                json={"query": query, "variables": variables},
                headers={"authorization": f"bearer {token}"},
                timeout=30,
            )
            return answer.json()

        viewer = "query { viewer { __typename login databaseId } }"
        assert graphql(viewer)["data"]["viewer"] == {
            "__typename": "User",
            "login": "github-actions[bot]",
            "databaseId": 41898282,
        }
        assert graphql(viewer, "dev")["data"]["viewer"]["login"] == "octocat"
        threads = """query($n: Int!) { repository(owner: "acme", name: "weather-mcp") { pullRequest(number: $n) {
            reviewThreads(first: 10) { nodes { comments(first: 1) { nodes { author { __typename login } } } } } } } }"""
        [thread] = graphql(threads, n=7)["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"]
        assert thread["comments"]["nodes"][0]["author"] == {"__typename": "Bot", "login": "github-actions"}
        refused = graphql("query { viewer { loginn } }")
        assert "loginn" in refused["errors"][0]["message"]
        gh.violations.clear()  # the refused query was ours on purpose
        session.close()
