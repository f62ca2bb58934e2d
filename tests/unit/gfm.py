"""Markdown as a reader sees it: rendered to HTML by a CommonMark parser with GFM tables and
strikethrough (markdown-it-py, which rich already depends on), with raw HTML let through as GitHub
lets its allowed tags through. GitHub's extras on top — bare-URL autolinks, @mentions and issue
references — are checked on the rendered text outside code, where GitHub would apply them."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_CODE = re.compile(r"<code[^>]*>.*?</code>", re.DOTALL)
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def html(markdown: str) -> str:
    return _PARSER.render(markdown)


def live(markdown: str) -> list[str]:
    """What GitHub would turn into HTML, a link, a ping or reordered text: empty when nothing."""
    page = html(markdown)
    prose = _CODE.sub("", page)  # code spans and blocks: no autolinks, mentions or references there
    found = []
    found += re.findall(r"<(?:img|a|script|iframe|svg|picture|video|style)\b[^>]*", page)
    found += re.findall(r"@[A-Za-z0-9][\w/-]*", page)  # a mention pings, in code or out (if code broke)
    found += re.findall(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", prose)  # GFM's extended autolinks
    found += re.findall(r"(?:\b[\w.-]+/[\w.-]+)?#\d+", prose)  # issue references
    found += [f"U+{ord(ch):04X}" for ch in page if ch in BIDI]
    return found
