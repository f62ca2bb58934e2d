"""Tool retrieval (seed 003's RAG-MCP setup): rank every tool of the pool — the user's and every
distractor — for a prompt, and offer the model only the top k.

Retrievers: `bm25` (built in, offline: the same Okapi BM25 over names, descriptions and parameters
as the bm25 provider), `command` (your program ranks: it reads `{"prompt", "k", "tools": [{name,
description, input_schema}]}` on stdin and prints `{"tools": [names, best first]}`), and
`embeddings-command` (your program embeds: it reads `{"texts": [...]}` and prints `{"embeddings":
[[...], ...]}`, one vector per text; tools are ranked by cosine similarity to the prompt). Both
commands are code from the pull request: they run in the config's folder as contain.py says (never
as root, a small environment), like the command provider.

recall@k is the share of cases (those that expect a tool) with an expected tool among the top k.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .contain import child_environment, confinement, unstartable
from .errors import InfraError
from .explain import show
from .golden import Case
from .lexical import BM25, tokenize, tool_text
from .surface import Surface, Tool
from .sweep import stop_group, sweep

RETRIEVERS = ("bm25", "command", "embeddings-command")
RECALL_AT = (1, 3, 5, 10)
TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Ranking:
    case: Case
    tools: tuple[str, ...]  # every tool of the pool, best first

    def top(self, k: int) -> tuple[str, ...]:
        return self.tools[:k]


def bm25_rankings(cases: Sequence[Case], pool: Surface) -> list[Ranking]:
    tools = sorted(pool.tools, key=lambda t: t.name)  # ties go to the earlier name, whatever the order
    index = BM25.build([tool_text(t.name, t.description, t.input_schema) for t in tools])
    out = []
    for case in cases:
        scores = index.scores(tokenize(case.prompt))
        ranked = sorted(zip(tools, scores, strict=True), key=lambda pair: (-pair[1], pair[0].name))
        out.append(Ranking(case, tuple(t.name for t, _ in ranked)))
    return out


async def _run(command: Sequence[str], payload: object, cwd: Path, environ: Mapping[str, str]) -> object:
    env = child_environment({}, environ)
    if why := unstartable(command[0], env, cwd):
        raise InfraError(f"cannot start the retriever {show(' '.join(command), 80)}: {why}")
    try:
        proc = await asyncio.create_subprocess_exec(
            *confinement(environ).command(command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise InfraError(f"cannot start the retriever {show(' '.join(command), 80)}: {exc.strerror or exc}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(json.dumps(payload).encode()), TIMEOUT_S)
    except TimeoutError:
        raise InfraError(f"the retriever {show(' '.join(command), 80)} took more than {TIMEOUT_S:g} s") from None
    finally:
        await stop_group(proc)
        sweep(environ)  # nothing it started outlives its answer
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise InfraError(f"the retriever exited {proc.returncode}: {' | '.join(tail)}")
    try:
        return json.loads(out.decode("utf-8", "replace"))
    except json.JSONDecodeError:
        raise InfraError(f"the retriever printed invalid JSON: {show(out.decode('utf-8', 'replace'), 80)}") from None


def _listing(tools: Sequence[Tool]) -> list[dict[str, object]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


async def command_rankings(
    cases: Sequence[Case], pool: Surface, command: Sequence[str], cwd: Path, environ: Mapping[str, str], k: int
) -> list[Ranking]:
    names = set(pool.names)
    out = []
    for case in cases:
        answer = await _run(command, {"prompt": case.prompt, "k": k, "tools": _listing(pool.tools)}, cwd, environ)
        ranked = answer.get("tools") if isinstance(answer, dict) else None
        if not isinstance(ranked, list) or not all(isinstance(n, str) for n in ranked):
            raise InfraError(f'the retriever must print {{"tools": [names, best first]}} (got {show(answer, 80)})')
        unknown = [n for n in ranked if n not in names]
        if unknown:
            raise InfraError(f"the retriever ranked {show(unknown[0])}, which is not in the pool")
        rest = [n for n in pool.names if n not in ranked]
        out.append(Ranking(case, (*dict.fromkeys(ranked), *rest)))
    return out


async def embedding_rankings(
    cases: Sequence[Case], pool: Surface, command: Sequence[str], cwd: Path, environ: Mapping[str, str]
) -> list[Ranking]:
    texts = [f"{t.name}: {t.description}" for t in pool.tools] + [c.prompt for c in cases]
    answer = await _run(command, {"texts": texts}, cwd, environ)
    vectors = answer.get("embeddings") if isinstance(answer, dict) else None
    if not isinstance(vectors, list) or len(vectors) != len(texts):
        raise InfraError(f'the embeddings command must print {{"embeddings": [...]}} with {len(texts)} vectors')
    if not all(isinstance(v, list) and all(isinstance(x, int | float) for x in v) for v in vectors):
        raise InfraError("the embeddings command must print lists of numbers, one per text")
    tool_vectors, prompt_vectors = vectors[: len(pool.tools)], vectors[len(pool.tools) :]
    out = []
    for case, query in zip(cases, prompt_vectors, strict=True):
        scored = [(-_cosine(query, v), t.name) for t, v in zip(pool.tools, tool_vectors, strict=True)]
        out.append(Ranking(case, tuple(name for _, name in sorted(scored))))
    return out


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def recall_at(rankings: Sequence[Ranking], ks: Sequence[int] = RECALL_AT) -> dict[int, tuple[int, int]]:
    """k → (cases with an expected tool in the top k, cases that expect a tool)."""
    expecting = [r for r in rankings if r.case.expected]
    return {k: (sum(any(t in r.top(k) for t in r.case.expected) for r in expecting), len(expecting)) for k in ks}


def offered(pool: Surface, ranking: Ranking, k: int) -> Surface:
    """The surface a model sees for one prompt: the pool's top-k tools, best first."""
    from .surface import build_surface

    chosen = set(ranking.top(k))
    by_name = {d["name"]: d for d in pool.definitions if d.get("name") in chosen}
    return build_surface([by_name[n] for n in ranking.top(k) if n in by_name], f"top {k} of {len(pool.tools)}")
