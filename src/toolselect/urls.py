"""What a URL may show, and what it hides: user info, the query, and path segments that read like a
key (a gateway's tenant token: https://gw.example/t/<token>/v1). Used wherever a URL is printed,
scrubbed from text, or kept from a program of the pull request."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

# a URL inside a value (PIP_INDEX_URL, GOPROXY's list, NPM_CONFIG_REGISTRY, …)
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s,|;]+")


def public_url(url: str) -> str:
    """A URL as it may be shown: scheme, host, port and a path whose secret-looking segments (long
    random-looking tokens: https://hooks.example/s/<token>/mcp) are `…`; no user info, no query."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:  # e.g. a port that is not a number ({port} before it is filled in)
        return url.split("://", 1)[0] + "://…" if "://" in url else "…"
    path = "/".join("…" if looks_secret(segment) else segment for segment in parts.path.split("/"))
    shown = urlunsplit((parts.scheme, host, path, "", ""))
    return shown + ("?…" if parts.query else "")


def secret_parts(url: str) -> list[str]:
    """What `public_url` hides: user info, the query, secret-looking path segments (to scrub from text)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    hidden = [parts.netloc.rpartition("@")[0], parts.query]
    hidden += [segment for segment in parts.path.split("/") if looks_secret(segment)]
    return sorted((h for h in hidden if len(h) >= 4), key=len, reverse=True)


def looks_secret(segment: str) -> bool:
    """A path segment that reads like a key: 16+ characters mixing letters and digits, or 24+ of any."""
    if len(segment) < 16 or not re.fullmatch(r"[A-Za-z0-9_\-.~%+=]+", segment):
        return False
    mixed = any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)
    return mixed or len(segment) >= 24


def hides_something(url: str) -> bool:
    """Whether `public_url` would hide part of this URL (user info, a query, a key-like segment)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return True  # unreadable: treat as secret
    return bool(parts.username or parts.password or "@" in parts.netloc or parts.query) or any(
        looks_secret(segment) for segment in parts.path.split("/")
    )


def holds_secret_url(value: str) -> bool:
    """Whether a value (an environment variable's) contains a URL that `public_url` would redact."""
    return any(hides_something(found) for found in URL_IN_TEXT.findall(value))
