"""The fake GitHub server answers in the shapes of GitHub's published OpenAPI description."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import requests

from tests.fakes.github_api import DENIED, FakeGitHub

SPEC = json.loads((Path(__file__).resolve().parents[1] / "data" / "github" / "openapi-schemas.json").read_text())


def as_json_schema(node):
    """OpenAPI 3.0 → JSON Schema: `nullable: true` becomes a null alternative; refs stay local."""
    if isinstance(node, list):
        return [as_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_json_schema(v) for k, v in node.items() if k not in ("nullable", "example", "examples")}
    if "$ref" in out:
        out["$ref"] = "#/definitions/" + out["$ref"].rsplit("/", 1)[-1]
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def validate(payload, name):
    definitions = {k: as_json_schema(v) for k, v in SPEC["schemas"].items()}
    jsonschema.validate(
        payload, {"$ref": f"#/definitions/{name}", "definitions": definitions}, cls=jsonschema.Draft7Validator
    )


def test_responses_match_the_openapi_schemas():
    with FakeGitHub({"tok": "github-actions[bot]", "dev": "octocat"}, installation_tokens={"tok"}) as gh:
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
