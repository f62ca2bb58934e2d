"""A whole answer streamed as the Messages API streams it: the real anthropic SDK, reading the events
from a server on 127.0.0.1, puts back exactly the message it was made from — text, a tool's input,
thinking with its signature, a tool search's call and result."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic

from toolselect.drive.stream import anthropic_events

MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5",
    "content": [
        {"type": "thinking", "thinking": "The user wants the weather.", "signature": "sig-1"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "weather"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "mcp__w__get_weather"}]}},
        {"type": "text", "text": "Let me look — “Paris” ✓"},
        {"type": "tool_use", "id": "toolu_1", "name": "mcp__w__get_weather", "input": {"city": "Paris", "day": [1]}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 120, "output_tokens": 37, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
}  # fmt: skip


class _Streams(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = anthropic_events(MESSAGE)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_the_sdk_reads_back_the_message_it_was_streamed_from():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streams)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = anthropic.Anthropic(api_key="k", base_url=f"http://127.0.0.1:{server.server_port}", max_retries=0)
        with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as s:
            final = s.get_final_message()
    finally:
        server.shutdown()
        server.server_close()
    got = final.model_dump(exclude_none=True)
    assert got["content"] == [{k: v for k, v in block.items() if v is not None} for block in MESSAGE["content"]]
    assert (got["stop_reason"], got["usage"]["output_tokens"], got["usage"]["input_tokens"]) == ("tool_use", 37, 120)
