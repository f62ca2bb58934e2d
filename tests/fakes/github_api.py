"""A fake GitHub REST (+ a sliver of GraphQL) server on 127.0.0.1 for PyGithub's real client.

Issue comments (list with Link-header pagination, create, edit), the authenticated user (or 403
"Resource not accessible by integration" for an installation token), GraphQL `viewer { login }`,
and the open pulls of a head branch. Response bodies follow GitHub's published OpenAPI schemas
(tests/data/github/openapi-schemas.json; a unit test validates them).

    with FakeGitHub(tokens={"tok": "github-actions[bot]"}) as gh: ... gh.url ... gh.comments
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DENIED = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
    "status": "403",
}
BAD_CREDENTIALS = {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}
STAMP = "2026-11-30T08:00:00Z"


class FakeGitHub:
    def __init__(
        self,
        tokens: dict[str, str] | None = None,
        *,
        installation_tokens: set[str] | frozenset[str] = frozenset(),
        read_only: set[str] | frozenset[str] = frozenset(),
        owner: str = "acme",
        repo: str = "weather-mcp",
    ) -> None:
        self.tokens = tokens or {"test-token": "github-actions[bot]"}  # token → login
        self.installation = set(installation_tokens)  # GET /user answers 403 for these
        self.read_only = set(read_only)  # POST/PATCH answer 403 for these (fork PRs)
        self.owner, self.repo = owner, repo
        self.comments: dict[int, dict[str, Any]] = {}  # id → comment, per PR via issue_number
        self.pulls: list[dict[str, Any]] = []
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

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # ------------------------------------------------------------------ shapes (OpenAPI)

    def user(self, login: str) -> dict[str, Any]:
        bot = login.endswith("[bot]")
        uid = 41898282 if bot else 1000 + sum(map(ord, login))
        u = f"{self.url}/users/{urllib.parse.quote(login)}"
        return {
            "login": login,
            "id": uid,
            "node_id": f"MDM6Qm90{uid}",
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

    def add_pull(self, number: int, head_owner: str, head_branch: str, head_sha: str) -> None:
        base = f"{self.url}/repos/{self.owner}/{self.repo}"
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
                "base": {"label": f"{self.owner}:main", "ref": "main", "sha": "b" * 40, "user": self.user(self.owner)},
            }
        )

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

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
                reason = {
                    200: "OK",
                    201: "Created",
                    401: "Unauthorized",
                    403: "Forbidden",
                    404: "Not Found",
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
                if method == "GET" and path == "/user":
                    if token in fake.installation:
                        return self._send(403, DENIED)
                    return self._send(200, fake.authenticated_user(login))
                if method == "POST" and path == "/graphql":
                    if "viewer" in body.get("query", ""):
                        # GraphQL names a bot without REST's `[bot]` suffix, and says what it is
                        bot = login.endswith("[bot]")
                        viewer = {"login": login.removesuffix("[bot]"), "__typename": "Bot" if bot else "User"}
                        return self._send(200, {"data": {"viewer": viewer}})
                    return self._send(200, {"errors": [{"message": "unsupported query"}]})
                m = re.fullmatch(rf"{repo}/issues/(\d+)/comments", path)
                if m and method == "GET":
                    return self._list(int(m.group(1)), query, path)
                if m and method == "POST":
                    if token in fake.read_only:
                        return self._send(403, DENIED)
                    comment = fake.add_comment(int(m.group(1)), body["body"], login)
                    return self._send(201, comment, {"location": comment["url"]})
                m = re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)
                if m and method == "PATCH":
                    if token in fake.read_only:
                        return self._send(403, DENIED)
                    with fake._lock:
                        comment = fake.comments.get(int(m.group(1)))
                        if comment is None:
                            return self._send(404, {"message": "Not Found", "status": "404"})
                        comment["body"] = body["body"]
                        comment["updated_at"] = "2026-11-30T09:00:00Z"
                    return self._send(200, comment)
                if path == f"{repo}/pulls" and method == "GET":
                    found = [p for p in fake.pulls if query.get("head") in (None, p["head"]["label"])]
                    return self._send(200, found)
                return self._send(
                    404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
                )

            def _list(self, number: int, query: dict[str, str], path: str) -> None:
                per_page = int(query.get("per_page", 30))
                page = int(query.get("page", 1))
                items = sorted(fake.comments_on(number), key=lambda c: c["id"])
                pages = max(1, -(-len(items) // per_page))
                chunk = items[(page - 1) * per_page : page * per_page]
                links = []
                if page < pages:
                    links.append(f'<{fake.url}{path}?page={page + 1}&per_page={per_page}>; rel="next"')
                    links.append(f'<{fake.url}{path}?page={pages}&per_page={per_page}>; rel="last"')
                self._send(200, chunk, {"link": ", ".join(links)} if links else None)

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_PATCH(self) -> None:
                self._route("PATCH")

        return Handler
