"""`bm25`: the built-in offline provider — a real retrieval baseline, no key, deterministic.

Ranks the offered tools by Okapi BM25 between the prompt and each tool's name, description and
parameter names/descriptions (the retrieval step of seed 003's RAG-MCP setup), and picks the best
tool when its score clears a threshold, else no tool. It picks tools only: cases are judged on the
tool, and argument metrics are reported as not measured.

In a trajectory case it calls its best tool once, then answers with the text of the results it
was given (a stand-in for a model that reports what the tool said).

Options go in `evals.params`: `threshold` (default 1.0), `k1` (1.2), `b` (0.75).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, did_you_mean
from ..lexical import BM25, tokenize, tool_text
from ..pick import Pick
from . import Provider, Request, WireTool

if TYPE_CHECKING:
    from .call import ModelCall

DEFAULTS = {"threshold": 1.0, "k1": 1.2, "b": 0.75}


class BM25Provider(Provider):
    name = "bm25"
    produces_args = False
    cacheable = False

    def __init__(self, threshold: float, k1: float, b: float) -> None:
        super().__init__("bm25")
        self.threshold, self.k1, self.b = threshold, k1, b
        self._index: tuple[tuple[str, ...], BM25] | None = None

    def _bm25(self, tools: tuple[WireTool, ...]) -> BM25:
        # Rank in name order so that shuffled tool orders give the same pick.
        key = tuple(sorted(t.name for t in tools))
        if self._index is None or self._index[0] != key:
            ordered = sorted(tools, key=lambda t: t.name)
            docs = [tool_text(t.name, t.description, t.input_schema) for t in ordered]
            self._index = (key, BM25.build(docs, self.k1, self.b))
        return self._index[1]

    def rank(self, prompt: str, tools: tuple[WireTool, ...]) -> list[tuple[str, float]]:
        """(tool, score) best first; ties go to the earlier name."""
        names = sorted(t.name for t in tools)
        scores = self._bm25(tools).scores(tokenize(prompt))
        return sorted(zip(names, scores, strict=True), key=lambda pair: (-pair[1], pair[0]))

    async def pick(self, request: Request) -> Pick:
        started = time.perf_counter()
        if request.history:
            said = "; ".join(stub.text for turn in request.history for stub in turn.stubs)
            return Pick(text=f"bm25: {said}", latency_ms=(time.perf_counter() - started) * 1000)
        ranking = self.rank(request.prompt, request.tools)
        best, score = ranking[0] if ranking else (None, 0.0)
        chosen = best if best is not None and score >= self.threshold else None
        top = ", ".join(f"{n} {s:.2f}" for n, s in ranking[:3] if s > 0)
        return Pick(
            tool=chosen,
            text=f"bm25: {top}" if top else "bm25: no tool shares a word with the prompt",
            calls=1 if chosen else 0,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def identity(self) -> dict[str, Any]:
        return {"provider": "bm25", "threshold": self.threshold, "k1": self.k1, "b": self.b}


def make(call: ModelCall, throttle: object = None, environ: Mapping[str, str] | None = None) -> BM25Provider:
    options: dict[str, Any] = dict(DEFAULTS)
    for key, value in call.params.items():
        if key not in DEFAULTS:
            raise ConfigError(f"{call.params_at}evals.params: bm25 has no option '{key}'{did_you_mean(key, DEFAULTS)}")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{call.params_at}evals.params.{key} must be a number ≥ 0 for bm25 (got {value!r})")
        options[key] = float(value)
    return BM25Provider(**options)
