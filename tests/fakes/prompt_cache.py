"""The prompt caches of the Anthropic and OpenAI APIs, as the fake model API bills them.

Both cache a request's prefix — its tools, then its system prompt, then its messages, in that order —
and bill a later request that starts with the same bytes less for that part. An entry exists only
once the response that wrote it is back: requests sent together all miss. Entries live `ttl_s`
(five minutes by default), each read refreshing them. A prefix shorter than `min_tokens` (1024 by
default; Anthropic's Haiku models: 2048) is never cached. Tokens are counted as a quarter of the
characters of the blocks' JSON.

Anthropic (`cache_control` breakpoints, at most four a request): an entry is written at each
breakpoint; a read is the longest cached prefix ending at a block boundary at most 20 blocks before a
breakpoint. `cache_read_input_tokens` is that prefix, `cache_creation_input_tokens` the rest up to the
last breakpoint, `input_tokens` what follows it. Without a breakpoint nothing is cached.

OpenAI (automatic, no markup): requests are routed by `prompt_cache_key` when given, else by their
first 256 tokens; within a route the longest cached prefix counts, in steps of 128 tokens from 1024.
`cached_tokens` (in `prompt_tokens_details` or `input_tokens_details`) is part of the prompt's tokens.
Writing costs nothing extra.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

LOOKBACK = 20  # blocks before a breakpoint where Anthropic looks for an earlier entry
MAX_BREAKPOINTS = 4
STEP = 128  # OpenAI caches prefixes in steps of this many tokens
ROUTE_TOKENS = 256


class TooManyBreakpoints(ValueError):
    """Anthropic's 400: more than four blocks with cache_control."""


@dataclass(frozen=True)
class Billed:
    """One request's input, as the API bills it."""

    input: int  # uncached
    cache_write: int
    cache_read: int

    @property
    def prompt(self) -> int:
        return self.input + self.cache_write + self.cache_read


def tokens(text: str) -> int:
    return len(text) // 4


def _strip(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as (block JSON, has a breakpoint), in the order the API caches them."""
    out: list[tuple[str, bool]] = []
    for tool in body.get("tools") or []:
        out.append((json.dumps(_strip(tool), sort_keys=True), "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str):
        out.append((json.dumps(system), False))
    for block in system if isinstance(system, list) else []:
        out.append((json.dumps(_strip(block), sort_keys=True), "cache_control" in block))
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            marked = isinstance(block, dict) and "cache_control" in block
            out.append((json.dumps([message.get("role"), _strip(block)], sort_keys=True), marked))
    return out


def openai_text(api: str, body: dict[str, Any]) -> str:
    """The request as one text, in the order the API renders it: tools, instructions, messages."""
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    if api == "gemini":  # its implicit cache: the same prefix (tools, system, contents) is read again
        parts.append(json.dumps(body.get("systemInstruction"), sort_keys=True))
        parts += [json.dumps(c, sort_keys=True) for c in body.get("contents") or []]
        return "".join(parts)
    if api == "responses":
        parts.append(json.dumps(body.get("instructions")))
        given = body.get("input")
        parts += [json.dumps(given)] if isinstance(given, str) else [json.dumps(i, sort_keys=True) for i in given or []]
    else:
        parts += [json.dumps(m, sort_keys=True) for m in body.get("messages") or []]
    return "".join(parts)


@dataclass
class PromptCache:
    min_tokens: int = 1024
    ttl_s: float = 300.0
    entries: dict[str, float] = field(default_factory=dict)  # prefix digest → when it expires

    def _live(self, digest: str, now: float) -> bool:
        expires = self.entries.get(digest)
        if expires is None or expires <= now:
            self.entries.pop(digest, None)
            return False
        self.entries[digest] = now + self.ttl_s  # a read refreshes it
        return True

    # ---------------------------------------------------------------- Anthropic

    def anthropic(self, body: dict[str, Any], now: float) -> tuple[Billed, list[str]]:
        """(what this request is billed, the entries its answer writes: store them with `keep` once it is
        back)."""
        blocks = anthropic_blocks(body)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        if len(marks) > MAX_BREAKPOINTS:
            raise TooManyBreakpoints(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marks)}."
            )
        digests, ends, h, total = [], [], hashlib.sha256(), 0
        for text, _ in blocks:
            h.update(text.encode())
            digests.append(h.copy().hexdigest())
            total += tokens(text)
            ends.append(total)
        read_at = -1
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if i > read_at and ends[i] >= self.min_tokens and self._live(digests[i], now):
                    read_at = i
                    break
        read = ends[read_at] if read_at >= 0 else 0
        cacheable = [m for m in marks if ends[m] >= self.min_tokens]
        last = cacheable[-1] if cacheable else -1
        write = ends[last] - read if last > read_at else 0
        rest = total - max(read, ends[last] if last >= 0 else 0)
        return Billed(rest, write, read), [digests[m] for m in cacheable]

    # ---------------------------------------------------------------- OpenAI

    def openai(self, api: str, body: dict[str, Any], now: float) -> tuple[Billed, list[str]]:
        text = openai_text(api, body)
        route = body.get("prompt_cache_key") or hashlib.sha256(text[: ROUTE_TOKENS * 4].encode()).hexdigest()
        total = tokens(text)
        digests: list[tuple[int, str]] = []  # (prefix tokens, digest) at each step from min_tokens
        h = hashlib.sha256(str(route).encode())
        done = 0
        for size in range(self.min_tokens, total + 1, STEP):
            h.update(text[done * 4 : size * 4].encode())
            done = size
            digests.append((size, h.copy().hexdigest()))
        cached = 0
        for size, digest in reversed(digests):
            if self._live(digest, now):
                cached = size
                break
        return Billed(total - cached, 0, cached), [d for _, d in digests]

    def keep(self, digests: list[str], now: float) -> None:
        for digest in digests:
            self.entries[digest] = now + self.ttl_s
