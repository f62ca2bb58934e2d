"""Escaping, the one place text from a repo, a server or a model is made safe to show.

Markdown (the comment, the review comments, the job summary, `--markdown`): `esc` for prose and table
cells, `code` for inline code, `fence` for a code block. The HTML page escapes with its own `esc` on
top of `visible` (render/html.py): every view first makes invisible characters visible.
"""

from __future__ import annotations

import re

_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# Characters that change how text reads without showing: bidi embeddings, overrides and isolates
# (U+202A–U+202E, U+2066–U+2069), the directional marks (U+200E, U+200F, U+061C), zero-width
# spaces and joiners (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E), the soft hyphen, and control
# characters. Each is shown as its code point, e.g. ⟨U+202E⟩, so no text is reordered or hidden.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_ESCAPED = re.compile(r"[\\|`*_\[\]~$]")  # Markdown punctuation that could start emphasis, a link, code, math
_SCHEME = re.compile("://")  # a bare URL autolinks on GitHub; a zero-width space after the colon keeps it text
_WWW = re.compile(r"(?i)\bwww\.")
_ISSUE = re.compile(r"#(?=\d)")  # #123 and org/repo#123 would link, and cross-reference, another issue
ZWSP = "\u200b"


def visible(text: str) -> str:
    """Bidi controls, zero-width and control characters shown as ⟨U+XXXX⟩; line breaks as spaces."""
    s = " ".join(text.splitlines())
    return _INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", s)


def no_mentions(text: str) -> str:
    """A zero-width space after each @ keeps @user and @org/team from pinging anyone (and breaks
    e-mail autolinks)."""
    return _MENTION.sub("@" + ZWSP, text)


def esc(text: object) -> str:
    """Escape text for a Markdown table cell or a line of prose: no HTML, no link (Markdown, bare URL
    or issue reference), no emphasis, code or math, no @mention, no bidi or invisible characters."""
    s = visible(str(text))
    s = _ESCAPED.sub(lambda m: "\\" + m.group(), s)  # the backslash itself first, in the same pass
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _SCHEME.sub(":" + ZWSP + "//", s)
    s = _WWW.sub(lambda m: m.group()[:3] + ZWSP + ".", s)
    s = _ISSUE.sub("#" + ZWSP, s)
    return no_mentions(s)


def code(text: object) -> str:
    """Inline code that no text can break out of: a fence longer than any backtick run in it, pipes
    escaped for tables, no hidden-comment marker, no @mention (code spans don't ping, but a broken
    one would), bidi and invisible characters shown."""
    s = visible(str(text)).replace("|", "\\|")
    s = s.replace("<!--", "<!" + ZWSP + "--").replace("-->", "-" + ZWSP + "->")
    s = no_mentions(s)
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {s} {fence}" if longest else f"`{s}`"


def defang(text: str) -> str:
    """Text for a code block: no hidden-comment marker can be spelled out inside it, no @mention
    survives even if the block were ever rendered as text, and no bidi control reorders a line
    (each is shown as ⟨U+XXXX⟩, line by line)."""
    text = "\n".join(visible(line) for line in text.split("\n"))
    return no_mentions(text.replace("<!--", "<!" + ZWSP + "--").replace("-->", "-" + ZWSP + "->"))


def fence_ticks(text: str) -> str:
    """The backticks of a code fence around `text`: more than any run of them in it, at least three."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    return "`" * max(3, longest + 1)


def fence(text: str, lang: str = "") -> str:
    """A fenced code block longer than any run of backticks in the text."""
    ticks = fence_ticks(text)
    return f"{ticks}{lang}\n{defang(text)}\n{ticks}"


def exact_fence(text: str, lang: str = "") -> str:
    """A fenced code block of text meant to be copied as it is (a patch): only a bidi, zero-width or
    control character is shown as ⟨U+XXXX⟩ (an @ inside a code block pings no one)."""
    ticks = fence_ticks(text)
    return f"{ticks}{lang}\n" + "\n".join(visible(line) for line in text.split("\n")) + f"\n{ticks}"


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for ch in line:
        if ch == "`":
            current += ch
        elif current:
            runs.append(current)
            current = ""
    return runs + ([current] if current else [])
