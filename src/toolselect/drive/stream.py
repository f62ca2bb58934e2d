"""A whole answer as the API streams it (server-sent events), for a client that asked with
`"stream": true`. Anthropic Messages: `message_start`, each content block's start, deltas and stop, `message_delta`
(the stop reason and the output tokens) and `message_stop`. A text comes as one `text_delta`, a tool's
input as one `input_json_delta`, thinking as a `thinking_delta` and its `signature_delta`; a block the
API sends whole (a tool search's result) comes whole in its `content_block_start`. OpenAI Responses:
`response.created`, each output item added, its text or arguments as one delta and done, the item
done, then `response.completed` with the whole response. Pure."""

from __future__ import annotations

import json
from typing import Any

WITH_INPUT = ("tool_use", "server_tool_use")


def anthropic_events(message: dict[str, Any]) -> bytes:
    """The SSE bytes of `message` (a Messages API answer, as JSON)."""
    usage = dict(message.get("usage") or {})
    started = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    started["usage"] = {**usage, "output_tokens": min(1, int(usage.get("output_tokens") or 0))}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": started})]
    for index, block in enumerate(message.get("content") or []):
        kind = block.get("type")
        first: dict[str, Any]
        if kind == "text":
            first, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block.get("text", "")}]
        elif kind in WITH_INPUT:
            first = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})}]
        elif kind == "thinking":
            first = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block.get("thinking", "")},
                {"type": "signature_delta", "signature": block.get("signature", "")},
            ]
        else:  # sent whole: redacted thinking, a tool search's result
            first, deltas = block, []
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": first}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": message.get("stop_reason"), "stop_sequence": message.get("stop_sequence")}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage.get("output_tokens") or 0}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def responses_events(response: dict[str, Any]) -> bytes:
    """The SSE bytes of `response` (a Responses API answer, as JSON)."""
    events: list[dict[str, Any]] = []
    started = {**response, "status": "in_progress", "output": []}
    events += [{"type": "response.created", "response": started}, {"type": "response.in_progress", "response": started}]
    for index, item in enumerate(response.get("output") or []):
        at = {"output_index": index, "item_id": item.get("id", "")}
        kind = item.get("type")
        if kind == "message":
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}}
            )
            for n, part in enumerate(item.get("content") or []):
                text = part.get("text", "")
                events.append(
                    {"type": "response.content_part.added", **at, "content_index": n, "part": {**part, "text": ""}}
                )
                if part.get("type") == "output_text":
                    events.append({"type": "response.output_text.delta", **at, "content_index": n, "delta": text})
                    events.append({"type": "response.output_text.done", **at, "content_index": n, "text": text})
                events.append({"type": "response.content_part.done", **at, "content_index": n, "part": part})
        elif kind == "function_call":
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": ""}}
            )
            arguments = item.get("arguments", "")
            events.append({"type": "response.function_call_arguments.delta", **at, "delta": arguments})
            events.append({"type": "response.function_call_arguments.done", **at, "arguments": arguments})
        else:  # reasoning, a search's call and output, a custom tool's call: whole
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n".encode()
        for n, e in enumerate(events)
    )
