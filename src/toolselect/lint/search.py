"""What the API's tool search would miss, offline (`lint --tool-search MODE`): each golden prompt as the
query of a BM25 search over the deferred tools' names, descriptions and arguments — as Anthropic's
bm25 variant searches — and the cases whose tool is not among the first k. A model writes its own
queries (shorter, and from what it understood), so this is a free first look, not the measurement:
`eval --tool-search` is. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from ..golden import Case
from ..lexical import BM25, tokenize, tool_text
from ..surface import Surface
from .finding import Finding

MAX_LISTED = 3


def search_misses(
    cases: Sequence[Case], surface: Surface, mode: str, k: int, eager: Sequence[str] = ()
) -> list[Finding]:
    """A `search-miss` for each single-call case whose expected (deferred) tool the prompt doesn't
    find in the top `k`."""
    deferred = [t for t in surface.tools if t.name not in set(eager)]
    if not deferred:
        return []
    index = BM25.build([tool_text(t.name, t.description, t.input_schema, name_weight=1) for t in deferred])
    out = []
    for case in cases:
        wanted = case.expected[:1] if case.script is None else ()
        if not wanted or wanted[0] not in {t.name for t in deferred}:
            continue
        scores = index.scores(tokenize(case.prompt))
        ranked = [t.name for score, t in sorted(zip(scores, deferred, strict=True), key=lambda p: -p[0]) if score > 0]
        if wanted[0] in ranked[:k]:
            continue
        where = f"ranked #{ranked.index(wanted[0]) + 1}" if wanted[0] in ranked else "not found at all"
        top = ", ".join(ranked[:MAX_LISTED]) or "nothing"
        out.append(
            Finding(
                "search-miss",
                "warning",
                f"'{case.name}' wants {wanted[0]}: its prompt, searched as {mode} searches, finds it {where} "
                f"(top {k}: {top}{' …' if len(ranked) > MAX_LISTED else ''})",
                fix=f"put the words users say for it in {wanted[0]}'s description, or keep it loaded (eager: "
                f"[{wanted[0]}]); a model writes its own queries: eval --tool-search measures them",
                scope="golden",
                tool=wanted[0],
                case=case.name,
                file=case.source.file,
                line=case.source.line,
            )
        )
    return out
