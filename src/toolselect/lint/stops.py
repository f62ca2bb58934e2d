"""What `eval` (and `stress`) stop for, or add, before any model is asked: golden-set errors (cases
that can never pass), options that name tools the surface lacks, and cases that expect a kind of
reply from a provider that writes none. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..errors import ConfigErrors, did_you_mean
from ..golden import Case
from ..surface import Surface
from .finding import Finding
from .golden import lint_golden


def replies_unread(cases: Sequence[Case], provider: str, writes: bool) -> list[Finding]:
    """Cases that expect a kind of reply, on a provider that writes none (bm25, a `command` picker)."""
    asking = [c for c in cases if c.expect_reply is not None]
    if not asking or writes:
        return []
    first = asking[0]
    return [
        Finding(
            "reply-not-read",
            "warning",
            f"{len(asking)} case{'s' * (len(asking) != 1)} expect a kind of reply (expect_reply), but {provider} "
            "writes no reply: without a call they pass, whatever the kind",
            "run them on a model that writes (anthropic, openai, openai-responses, gemini)",
            "golden",
            case=first.name,
            file=first.source.file,
            line=first.source.line,
        )
    ]


def check_cases(cases: Sequence[Case], surface: Surface, strict: bool = False) -> list[Finding]:
    """All findings; raise ConfigErrors when the golden set has errors (cases that can't pass). A case
    that names a tool the surface does not have is no config error unless `strict`: a pull request that
    removes or renames a tool makes it so, and the run says which cases (they fail as TOOL-MISSING)."""
    findings = lint_golden(cases, surface)
    if not strict:
        findings = [
            replace(f, severity="warning", fix=f"{f.fix} (the case fails as TOOL-MISSING; --strict: a config error)")
            if f.code == "case-unknown-tool"
            else f
            for f in findings
        ]
    errors = [f.text() for f in findings if f.severity == "error"]
    if errors:
        raise ConfigErrors(errors)
    return findings


def check_tool_names(names: Iterable[str], surface: Surface, where_: str) -> None:
    """Options that name tools (e.g. min_tool_recall) must name tools the surface has."""
    listed = surface.listed
    unknown = [n for n in names if n not in listed]
    if unknown:
        raise ConfigErrors(
            [f"{where_} names '{n}', which the tool surface does not have{did_you_mean(n, listed)}" for n in unknown]
        )
