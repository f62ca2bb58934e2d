"""A fake GitHub REST and GraphQL server on 127.0.0.1 for PyGithub's real client.

REST: issue comments (list with Link-header pagination, create, edit), the authenticated user (or
403 "Resource not accessible by integration" for an installation token), the open pulls of a head
branch, one pull request, its files with their patches (paginated, at most 3000 as GitHub lists),
its review comments (paginated, edit) and reviews (create, with GitHub's 422 for a comment on a line
outside the diff). Every response is checked against GitHub's published OpenAPI schemas and every
request body against the operation's request schema (tests/data/github/openapi-schemas.json, no
unknown keys either): a mismatch is recorded in `violations` and answered 422, as GitHub would.

GraphQL: `viewer`, review threads (list, resolve, unresolve), `minimizeComment` and
`unminimizeComment`, every answer executed by graphql-core on GitHub's own schema (npm
@octokit/graphql-schema, installed by tests/install-servers.sh): a query GitHub would refuse is
refused, and no answer has a shape the schema can't give.

Accounts as GitHub treats them. A token's login ending in `[bot]` is an installation token — the
Actions' `GITHUB_TOKEN` (`github-actions[bot]`) or a GitHub App's (`<slug>[bot]`): `GET /user`
refuses it (403), and GraphQL's `viewer`, typed `User!`, answers `__typename: "User"` with the
login *with* its `[bot]` suffix. Any other login is a person's token (a PAT): `GET /user` answers.
Comments show their author in REST as `user: {login: "<slug>[bot]", type: "Bot"}`, and in
GraphQL's `author` (an `Actor`) as `Bot` with the login *without* the suffix.

    with FakeGitHub(tokens={"tok": "github-actions[bot]"}) as gh: ... gh.url ... gh.comments
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import urllib.parse
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema

from toolselect.sourcelines import parse_patch

DATA = Path(__file__).resolve().parents[1] / "data" / "github"
GRAPHQL_SCHEMA = (
    Path(__file__).resolve().parents[1] / "node" / "node_modules" / "@octokit" / "graphql-schema" / "schema.json"
)

DENIED = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
    "status": "403",
}
BAD_CREDENTIALS = {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}
STAMP = "2026-11-30T08:00:00Z"
MAX_FILES = 3000  # GitHub lists at most this many files of a pull request


@cache
def openapi() -> dict[str, Any]:
    return json.loads((DATA / "openapi-schemas.json").read_text(encoding="utf-8"))


def as_json_schema(node: Any, strict: bool = False) -> Any:
    """OpenAPI 3.0 → JSON Schema: `nullable: true` becomes a null alternative; refs stay local;
    `strict`: objects take no keys the schema doesn't name (for what we send)."""
    if isinstance(node, list):
        return [as_json_schema(n, strict) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_json_schema(v, strict) for k, v in node.items() if k not in ("nullable", "example", "examples")}
    if "$ref" in out:
        out["$ref"] = "#/definitions/" + out["$ref"].rsplit("/", 1)[-1]
    if strict and out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


@cache
def _validator(name: str) -> jsonschema.Draft7Validator:
    spec = openapi()
    definitions = {k: as_json_schema(v) for k, v in spec["schemas"].items()}
    if name.split(" ")[0] in ("GET", "POST", "PATCH"):
        schema = {**as_json_schema(spec["requests"][name], strict=True), "definitions": definitions}
    elif name.endswith("[]"):
        schema = {"type": "array", "items": {"$ref": f"#/definitions/{name[:-2]}"}, "definitions": definitions}
    else:
        schema = {"$ref": f"#/definitions/{name}", "definitions": definitions}
    return jsonschema.Draft7Validator(schema)


def problems(payload: Any, name: str) -> list[str]:
    """Where `payload` breaks the OpenAPI schema `name` (a component, `name[]`, or "METHOD path")."""
    return [
        f"{name}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator(name).iter_errors(payload)
    ]


def is_bot(login: str) -> bool:
    """A GitHub App's account (the Actions' own included): no person's login can hold brackets."""
    return login.endswith("[bot]")


def account_id(login: str) -> int:
    if login == "github-actions[bot]":
        return 41898282  # the Actions bot's id on github.com
    return 1000 + sum(map(ord, login)) + (7_000_000 if is_bot(login) else 0)


def viewer_node(login: str) -> dict[str, Any]:
    """GraphQL `viewer` (a `User!`) for a token of `login`: an installation token's viewer is typed
    User yet keeps the `[bot]` suffix, as github.com answers it."""
    uid = account_id(login)
    return {
        "login": login,
        "databaseId": uid,
        "id": f"BOT_kgDO{uid}" if is_bot(login) else f"U_kgDO{uid}",
        "url": f"https://github.com/{login}",
        "isViewer": True,
    }


def actor_node(login: str) -> dict[str, Any]:
    """A comment's GraphQL `author` (an `Actor`): a bot is a `Bot` named without the suffix."""
    if is_bot(login):
        uid = account_id(login)
        return {"__typename": "Bot", "login": login.removesuffix("[bot]"), "databaseId": uid, "id": f"BOT_kgDO{uid}"}
    return {"__typename": "User", "login": login, "databaseId": account_id(login), "id": f"U_kgDO{account_id(login)}"}


@cache
def graphql_schema() -> Any:
    from graphql import build_client_schema

    data = json.loads(GRAPHQL_SCHEMA.read_text(encoding="utf-8"))
    schema = build_client_schema(data.get("data", data))
    # GitHub's schema deprecates a few fields of implementations but not of their interfaces, which
    # graphql-core's own schema check refuses; queries are still validated and executed on it as is.
    schema._validation_errors = []
    return schema


def _unprocessable(why: str) -> dict[str, Any]:
    return {
        "message": "Unprocessable Entity",
        "errors": [why],
        "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
        "status": "422",
    }


class FakeGitHub:
    def __init__(
        self,
        tokens: dict[str, str] | None = None,
        *,
        read_only: set[str] | frozenset[str] = frozenset(),
        owner: str = "acme",
        repo: str = "weather-mcp",
    ) -> None:
        self.tokens = tokens or {"test-token": "github-actions[bot]"}  # token → login (a bot's: an installation's)
        self.read_only = set(read_only)  # POST/PATCH answer 403 for these (fork PRs)
        self.owner, self.repo = owner, repo
        self.comments: dict[int, dict[str, Any]] = {}  # id → comment, per PR via issue_number
        self.pulls: list[dict[str, Any]] = []
        self.files: dict[int, list[dict[str, Any]]] = {}  # PR number → its files (diff entries)
        self.review_comments: dict[int, dict[str, Any]] = {}  # id → review comment
        self.reviews: list[dict[str, Any]] = []
        self.threads: dict[str, dict[str, Any]] = {}  # GraphQL id → {"comment": id, "resolved": bool}
        self.minimized: set[str] = set()  # node ids of minimized comments
        self.deny_resolve = False  # resolveReviewThread answers FORBIDDEN (as for a token without the right)
        self.violations: list[str] = []  # OpenAPI mismatches in what was sent or answered
        self.failures: dict[str, int] = {}  # "POST" / "PATCH" / "GET" → how many 502s to answer first
        self.log: list[tuple[str, str]] = []
        self._ids = itertools.count(900_000)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.request_queue_size = 128
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
        if kind is None and self.violations:  # what we sent, or the fake answered, is not GitHub's shape
            raise AssertionError("GitHub API shapes broken:\n" + "\n".join(self.violations))

    # ------------------------------------------------------------------ shapes (OpenAPI)

    def user(self, login: str) -> dict[str, Any]:
        bot = is_bot(login)
        uid = account_id(login)
        u = f"{self.url}/users/{urllib.parse.quote(login)}"
        return {
            "login": login,
            "id": uid,
            "node_id": f"BOT_kgDO{uid}" if bot else f"U_kgDO{uid}",
            "type": "Bot" if bot else "User",
            "site_admin": False,
            "url": u,
            "html_url": f"https://github.com/{login}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "",
            "followers_url": f"{u}/followers",
            "following_url": f"{u}/following{{/other_user}}",
            "gists_url": f"{u}/gists{{/gist_id}}",
            "starred_url": f"{u}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{u}/subscriptions",
            "organizations_url": f"{u}/orgs",
            "repos_url": f"{u}/repos",
            "events_url": f"{u}/events{{/privacy}}",
            "received_events_url": f"{u}/received_events",
        }

    def authenticated_user(self, login: str) -> dict[str, Any]:
        """`GET /user`: the private-user shape."""
        return {
            **self.user(login),
            "name": login,
            "company": None,
            "blog": "",
            "location": None,
            "email": None,
            "hireable": None,
            "bio": None,
            "public_repos": 3,
            "public_gists": 0,
            "followers": 1,
            "following": 0,
            "created_at": STAMP,
            "updated_at": STAMP,
            "collaborators": 0,
            "disk_usage": 10,
            "owned_private_repos": 0,
            "private_gists": 0,
            "total_private_repos": 0,
            "two_factor_authentication": True,
        }

    def add_comment(self, number: int, body: str, login: str) -> dict[str, Any]:
        cid = next(self._ids)
        base = f"{self.url}/repos/{self.owner}/{self.repo}"
        comment = {
            "id": cid,
            "node_id": f"IC_kwDO{cid}",
            "url": f"{base}/issues/comments/{cid}",
            "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{base}/issues/{number}",
            "body": body,
            "user": self.user(login),
            "created_at": STAMP,
            "updated_at": STAMP,
            "author_association": "NONE",
        }
        with self._lock:
            self.comments[cid] = comment
        return comment

    def add_pull(self, number: int, head_owner: str, head_branch: str, head_sha: str, base_sha: str = "b" * 40) -> None:
        base = f"{self.url}/repos/{self.owner}/{self.repo}"
        self.pulls = [p for p in self.pulls if p["number"] != number]
        self.pulls.append(
            {
                "number": number,
                "state": "open",
                "url": f"{base}/pulls/{number}",
                "id": number,
                "node_id": f"PR_{number}",
                "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}",
                "issue_url": f"{base}/issues/{number}",
                "title": f"PR {number}",
                "user": self.user(head_owner),
                "head": {
                    "label": f"{head_owner}:{head_branch}",
                    "ref": head_branch,
                    "sha": head_sha,
                    "user": self.user(head_owner),
                },
                "base": {"label": f"{self.owner}:main", "ref": "main", "sha": base_sha, "user": self.user(self.owner)},
            }
        )

    def pull(self, number: int) -> dict[str, Any] | None:
        """`GET /pulls/{n}`: GitHub's own example pull request, made this one."""
        simple = next((p for p in self.pulls if p["number"] == number), None)
        if simple is None:
            return None
        full = json.loads(json.dumps(openapi()["examples"]["pull-request"]))
        full.update(
            {k: simple[k] for k in ("number", "url", "id", "node_id", "html_url", "issue_url", "title", "user")}
        )
        full["head"].update({k: simple["head"][k] for k in ("label", "ref", "sha", "user")})
        full["base"].update({k: simple["base"][k] for k in ("label", "ref", "sha", "user")})
        full["changed_files"] = len(self.files.get(number, []))
        full["requested_teams"] = []  # the example's teams lack the `type` its own schema requires
        return full

    def set_files(self, number: int, files: list[tuple[str, str | None]], status: str = "modified") -> None:
        """The PR's files as `GET /pulls/{n}/files` lists them: (path, patch or None)."""
        raw = f"https://github.com/{self.owner}/{self.repo}/raw"
        entries = []
        for path, patch in files:
            added = sum(1 for h in parse_patch(patch or "") for x in h if x.kind == "+")
            removed = sum(1 for h in parse_patch(patch or "") for x in h if x.kind == "-")
            quoted = urllib.parse.quote(path)
            entry = {
                "sha": f"{abs(hash(path)) % 16**40:040x}",
                "filename": path,
                "status": status,
                "additions": added,
                "deletions": removed,
                "changes": added + removed,
                "blob_url": f"https://github.com/{self.owner}/{self.repo}/blob/HEAD/{quoted}",
                "raw_url": f"{raw}/HEAD/{quoted}",
                "contents_url": f"{self.url}/repos/{self.owner}/{self.repo}/contents/{quoted}?ref=HEAD",
            }
            if patch is not None:
                entry["patch"] = patch
            entries.append(entry)
        self.files[number] = entries

    def review_comments_on(self, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.review_comments.values() if c["pull_request_url"].endswith(f"/pulls/{number}")]

    def thread_of(self, comment_id: int) -> dict[str, Any]:
        return next(t for t in self.threads.values() if t["comment"] == comment_id)

    def _review(self, number: int, body: dict[str, Any], login: str) -> tuple[int, dict[str, Any]]:
        """`POST /pulls/{n}/reviews`: GitHub's checks, then the review and its comments."""
        pull = next((p for p in self.pulls if p["number"] == number), None)
        if pull is None:
            return 404, {"message": "Not Found", "status": "404"}
        event = body.get("event")
        if event in ("COMMENT", "REQUEST_CHANGES") and not body.get("body"):
            return 422, _unprocessable("Body is required for COMMENT and REQUEST_CHANGES")
        commit = body.get("commit_id") or pull["head"]["sha"]
        if commit != pull["head"]["sha"]:
            return 422, _unprocessable(f"No commit found for SHA: {commit}")
        files = {f["filename"]: f.get("patch") for f in self.files.get(number, [])}
        for c in body.get("comments", []):
            patch = files.get(c["path"])
            if patch is None:
                return 422, _unprocessable("Path could not be resolved")
            hunks = [{x.new for x in h if x.new is not None} for h in parse_patch(patch)]
            line, start = c.get("line"), c.get("start_line", c.get("line"))
            if c.get("side", "RIGHT") != "RIGHT" or not any(line in h and start in h for h in hunks):
                return 422, _unprocessable("Pull request review thread line must be part of the diff")
            if start > line:
                return 422, _unprocessable("start_line must precede line")
        rid = next(self._ids)
        base = f"{self.url}/repos/{self.owner}/{self.repo}"
        html = f"https://github.com/{self.owner}/{self.repo}/pull/{number}"
        review = {
            "id": rid,
            "node_id": f"PRR_kwDO{rid}",
            "user": self.user(login),
            "body": body.get("body", ""),
            "state": {"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(
                event or "", "PENDING"
            ),
            "html_url": f"{html}#pullrequestreview-{rid}",
            "pull_request_url": f"{base}/pulls/{number}",
            "_links": {
                "html": {"href": f"{html}#pullrequestreview-{rid}"},
                "pull_request": {"href": f"{base}/pulls/{number}"},
            },
            "submitted_at": STAMP,
            "commit_id": commit,
            "author_association": "NONE",
        }
        with self._lock:
            self.reviews.append(review)
        for c in body.get("comments", []):
            cid = next(self._ids)
            comment = {
                "url": f"{base}/pulls/comments/{cid}",
                "pull_request_review_id": rid,
                "id": cid,
                "node_id": f"PRRC_kwDO{cid}",
                "diff_hunk": (files[c["path"]] or "").split("\n", 1)[0],
                "path": c["path"],
                "commit_id": commit,
                "original_commit_id": commit,
                "user": self.user(login),
                "body": c["body"],
                "created_at": STAMP,
                "updated_at": STAMP,
                "html_url": f"{html}#discussion_r{cid}",
                "pull_request_url": f"{base}/pulls/{number}",
                "author_association": "NONE",
                "_links": {
                    "self": {"href": f"{base}/pulls/comments/{cid}"},
                    "html": {"href": f"{html}#discussion_r{cid}"},
                    "pull_request": {"href": f"{base}/pulls/{number}"},
                },
                "start_line": c.get("start_line"),
                "original_start_line": c.get("start_line"),
                "start_side": c.get("start_side") if c.get("start_line") else None,
                "line": c["line"],
                "original_line": c["line"],
                "side": c.get("side", "RIGHT"),
                "subject_type": "line",
            }
            with self._lock:
                self.review_comments[cid] = comment
                self.threads[f"PRRT_kwDO{cid}"] = {"comment": cid, "resolved": False}
        return 200, review

    def add_review_comment(self, number: int, path: str, line: int, body: str, login: str) -> dict[str, Any]:
        """A review comment someone else wrote (a one-comment review), bypassing the diff checks."""
        patch = "@@ -1 +1 @@\n" + "\n".join(" x" for _ in range(line))
        with self._lock:
            saved = self.files.get(number, [])
        self.set_files(number, [(path, patch)])
        pull_known = any(p["number"] == number for p in self.pulls)
        if not pull_known:
            self.add_pull(number, "someone", "branch", "c" * 40)
        sha = next(p for p in self.pulls if p["number"] == number)["head"]["sha"]
        _, review = self._review(
            number,
            {
                "commit_id": sha,
                "body": body,
                "event": "COMMENT",
                "comments": [{"path": path, "line": line, "body": body}],
            },
            login,
        )
        self.files[number] = saved
        return next(c for c in self.review_comments.values() if c["pull_request_review_id"] == review["id"])

    # ------------------------------------------------------------------ GraphQL

    def _graphql(self, query: str, variables: dict[str, Any], token: str) -> dict[str, Any]:
        from graphql import GraphQLError, execute_sync, parse, validate

        schema = graphql_schema()
        try:
            document = parse(query)
        except GraphQLError as exc:
            return {"errors": [{"message": exc.message}]}
        invalid = validate(schema, document)
        if invalid:
            self.violations += [f"GraphQL: {e.message}" for e in invalid]
            return {"errors": [{"message": e.message} for e in invalid]}
        fake = self

        def allowed() -> None:
            if token in fake.read_only or fake.deny_resolve:
                raise GraphQLError("Resource not accessible by integration", extensions={"type": "FORBIDDEN"})

        def thread_node(tid: str) -> dict[str, Any]:
            t = fake.threads[tid]
            c = fake.review_comments[t["comment"]]
            author = actor_node(c["user"]["login"])
            node = {
                "databaseId": c["id"],
                "id": c["node_id"],
                "body": c["body"],
                "isMinimized": c["node_id"] in fake.minimized,
                "author": author,
            }
            return {
                "id": tid,
                "isResolved": t["resolved"],
                "isOutdated": False,
                "path": c["path"],
                "line": c["line"],
                "comments": lambda info, **_: {"nodes": [node], "totalCount": 1},
            }

        def threads(number: int, first: int | None = None, after: str | None = None, **_: Any) -> dict[str, Any]:
            ids = [
                tid
                for tid, t in fake.threads.items()
                if fake.review_comments[t["comment"]]["pull_request_url"].endswith(f"/pulls/{number}")
            ]
            start = int(after) if after else 0
            size = min(first or 100, 100)
            page = ids[start : start + size]
            more = start + size < len(ids)
            return {
                "nodes": [thread_node(t) for t in page],
                "totalCount": len(ids),
                "pageInfo": {
                    "hasNextPage": more,
                    "endCursor": str(start + size) if page else None,
                    "hasPreviousPage": start > 0,
                    "startCursor": str(start),
                },
            }

        def repository(info: Any, owner: str, name: str, **_: Any) -> dict[str, Any] | None:
            if (owner, name) != (fake.owner, fake.repo):
                return None
            return {
                "pullRequest": lambda info, number: {
                    "number": number,
                    "reviewThreads": lambda info, **kw: threads(number, **kw),
                }
            }

        def set_resolved(input: dict[str, Any], value: bool) -> dict[str, Any]:
            allowed()
            if input["threadId"] not in fake.threads:
                raise GraphQLError(f"Could not resolve to a node with the global id of '{input['threadId']}'")
            fake.threads[input["threadId"]]["resolved"] = value
            return {"thread": thread_node(input["threadId"])}

        def minimize(info: Any, input: dict[str, Any]) -> dict[str, Any]:
            if token in fake.read_only:
                raise GraphQLError("Resource not accessible by integration", extensions={"type": "FORBIDDEN"})
            fake.minimized.add(input["subjectId"])
            return {
                "minimizedComment": {
                    "__typename": "PullRequestReviewComment",
                    "isMinimized": True,
                    "minimizedReason": input["classifier"].lower(),
                }
            }

        def unminimize(info: Any, input: dict[str, Any]) -> dict[str, Any]:
            if token in fake.read_only:
                raise GraphQLError("Resource not accessible by integration", extensions={"type": "FORBIDDEN"})
            fake.minimized.discard(input["subjectId"])
            return {"unminimizedComment": {"__typename": "PullRequestReviewComment", "isMinimized": False}}

        root = {
            "viewer": lambda info: viewer_node(fake.tokens[token]),
            "repository": repository,
            "resolveReviewThread": lambda info, input: set_resolved(input, True),
            "unresolveReviewThread": lambda info, input: set_resolved(input, False),
            "minimizeComment": minimize,
            "unminimizeComment": unminimize,
        }
        with self._lock:
            result = execute_sync(schema, document, root_value=root, variable_values=variables)
        out: dict[str, Any] = {"data": result.data}
        if result.errors:
            out["errors"] = [
                {
                    "message": e.message,
                    **({"type": e.extensions["type"]} if e.extensions and "type" in e.extensions else {}),
                }
                for e in result.errors
            ]
        return out

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.comments.values() if c["issue_url"].endswith(f"/issues/{number}")]

    # ------------------------------------------------------------------ HTTP

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(
                self, status: int, payload: Any, headers: dict[str, str] | None = None, schema: str | None = None
            ) -> None:
                if schema is not None and status < 300:
                    fake.violations += problems(payload, schema)
                data = json.dumps(payload).encode()
                extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
                reason = {
                    200: "OK",
                    201: "Created",
                    401: "Unauthorized",
                    403: "Forbidden",
                    404: "Not Found",
                    422: "Unprocessable Entity",
                    502: "Bad Gateway",
                }.get(status, "")
                head = (
                    f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json; charset=utf-8\r\n"
                    f"content-length: {len(data)}\r\n{extra}\r\n"
                )
                self.wfile.write(head.encode() + data)

            def _body(self) -> dict[str, Any]:
                length = int(self.headers.get("content-length") or 0)
                return json.loads(self.rfile.read(length) or b"{}") if length else {}

            def _route(self, method: str) -> None:
                parsed = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parsed.query))
                path = parsed.path
                body = self._body() if method in ("POST", "PATCH") else {}
                fake.log.append((method, self.path))
                token = (self.headers.get("authorization") or "").split(" ", 1)[-1]
                login = fake.tokens.get(token)
                if login is None:
                    return self._send(401, BAD_CREDENTIALS)
                with fake._lock:
                    if fake.failures.get(method, 0) > 0:
                        fake.failures[method] -= 1
                        return self._send(502, {"message": "Server Error"})
                repo = f"/repos/{fake.owner}/{fake.repo}"
                operation = _operation(method, path, repo)
                if operation is not None:
                    wrong = problems(body, operation)
                    if wrong:
                        fake.violations += wrong
                        return self._send(422, _unprocessable("; ".join(wrong)))
                if method == "GET" and path == "/user":
                    if is_bot(login):  # an installation token has no user
                        return self._send(403, DENIED)
                    return self._send(200, fake.authenticated_user(login), schema="private-user")
                if method == "POST" and path == "/graphql":
                    return self._send(200, fake._graphql(body.get("query", ""), body.get("variables") or {}, token))
                m = re.fullmatch(rf"{repo}/issues/(\d+)/comments", path)
                if m and method == "GET":
                    items = sorted(fake.comments_on(int(m.group(1))), key=lambda c: c["id"])
                    return self._page(items, query, path, "issue-comment[]")
                if m and method == "POST":
                    if token in fake.read_only:
                        return self._send(403, DENIED)
                    comment = fake.add_comment(int(m.group(1)), body["body"], login)
                    return self._send(201, comment, {"location": comment["url"]}, schema="issue-comment")
                m = re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)
                if m and method == "PATCH":
                    return self._edit(fake.comments, int(m.group(1)), body, token, login, "issue-comment")
                m = re.fullmatch(rf"{repo}/pulls/(\d+)", path)
                if m and method == "GET":
                    pull = fake.pull(int(m.group(1)))
                    if pull is None:
                        return self._send(404, {"message": "Not Found", "status": "404"})
                    return self._send(200, pull, schema="pull-request")
                m = re.fullmatch(rf"{repo}/pulls/(\d+)/files", path)
                if m and method == "GET":
                    files = fake.files.get(int(m.group(1)), [])[:MAX_FILES]
                    return self._page(files, query, path, "diff-entry[]")
                m = re.fullmatch(rf"{repo}/pulls/(\d+)/comments", path)
                if m and method == "GET":
                    items = sorted(fake.review_comments_on(int(m.group(1))), key=lambda c: c["id"])
                    return self._page(items, query, path, "pull-request-review-comment[]")
                m = re.fullmatch(rf"{repo}/pulls/(\d+)/reviews", path)
                if m and method == "POST":
                    if token in fake.read_only:
                        return self._send(403, DENIED)
                    status, answer = fake._review(int(m.group(1)), body, login)
                    return self._send(status, answer, schema="pull-request-review")
                m = re.fullmatch(rf"{repo}/pulls/comments/(\d+)", path)
                if m and method == "PATCH":
                    return self._edit(
                        fake.review_comments, int(m.group(1)), body, token, login, "pull-request-review-comment"
                    )
                if path == f"{repo}/pulls" and method == "GET":
                    found = [
                        fake.pull(p["number"]) for p in fake.pulls if query.get("head") in (None, p["head"]["label"])
                    ]
                    return self._send(200, found, schema="pull-request-simple[]")
                return self._send(
                    404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
                )

            def _edit(
                self,
                store: dict[int, dict[str, Any]],
                cid: int,
                body: dict[str, Any],
                token: str,
                login: str,
                schema: str,
            ) -> None:
                """PATCH a comment's body: only its author may (GitHub answers 404 to others' tokens here)."""
                if token in fake.read_only:
                    return self._send(403, DENIED)
                with fake._lock:
                    comment = store.get(cid)
                    if comment is None or comment["user"]["login"] != login:
                        return self._send(404, {"message": "Not Found", "status": "404"})
                    comment["body"] = body["body"]
                    comment["updated_at"] = "2026-11-30T09:00:00Z"
                return self._send(200, comment, schema=schema)

            def _page(self, items: list[Any], query: dict[str, str], path: str, schema: str) -> None:
                per_page = min(int(query.get("per_page", 30)), 100)
                page = int(query.get("page", 1))
                pages = max(1, -(-len(items) // per_page))
                chunk = items[(page - 1) * per_page : page * per_page]
                links = []
                if page < pages:
                    links.append(f'<{fake.url}{path}?page={page + 1}&per_page={per_page}>; rel="next"')
                    links.append(f'<{fake.url}{path}?page={pages}&per_page={per_page}>; rel="last"')
                self._send(200, chunk, {"link": ", ".join(links)} if links else None, schema=schema)

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_PATCH(self) -> None:
                self._route("PATCH")

        return Handler


def _operation(method: str, path: str, repo: str) -> str | None:
    """The OpenAPI operation of a request whose body the fake checks: "METHOD /repos/{owner}/…"."""
    patterns = {
        ("POST", rf"{repo}/issues/\d+/comments"): "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        ("PATCH", rf"{repo}/issues/comments/\d+"): "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        ("POST", rf"{repo}/pulls/\d+/reviews"): "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        ("PATCH", rf"{repo}/pulls/comments/\d+"): "PATCH /repos/{owner}/{repo}/pulls/comments/{comment_id}",
    }
    return next((name for (m, p), name in patterns.items() if m == method and re.fullmatch(p, path)), None)
