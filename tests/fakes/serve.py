"""Serve an ASGI app on 127.0.0.1 at $PORT (default 0: the OS picks) and announce it as `PORT=<n>`."""

from __future__ import annotations

import os
import socket
import sys

import anyio
import uvicorn


def serve_app(app, announce=sys.stdout) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(os.environ.get("PORT") or 0)))
    sock.listen(128)
    print(f"PORT={sock.getsockname()[1]}", file=announce, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    anyio.run(lambda: server.serve(sockets=[sock]))


def sse_app(server):
    """A Starlette app serving a low-level `Server` over the legacy SSE transport."""
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    return Starlette(
        routes=[Route("/sse", endpoint=handle_sse, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)]
    )


def require_bearer(app, token: str):
    """Answer 401 to any HTTP request without `Authorization: Bearer <token>`."""
    from starlette.responses import PlainTextResponse

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != f"Bearer {token}".encode():
            return await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
        await app(scope, receive, send)

    return guarded
