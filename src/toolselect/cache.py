"""The answer cache: never pay twice for the same answer.

One JSON file per answer, `<cache_dir>/v1/<key[:2]>/<key>.json`, written atomically (a temp file,
then a rename), so a killed run never leaves half an entry; an entry that fails to parse is ignored
and asked again. The key is the sha256 of canonical JSON over everything that can change the
answer — never the API key. Errors are never cached, and neither are local providers' answers.
Each run writes `manifest.json` listing the keys it used, for `toolselect cache prune`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from .errors import ConfigError, InfraError
from .nofollow import files_below, write_text
from .perlist import PerList, spliced
from .pick import Pick, Search, ToolCall, Usage, skipped
from .providers import BatchState, Provider, Request
from .strict import Record

FORMAT: Literal[1] = 1
Mode = Literal["use", "refresh", "only", "off"]
NOT_CACHED = "not in the answer cache (--cache-only)"


class CachedUsage(Record):
    input_tokens: int | None = None
    output_tokens: int | None = None
    prompt_cache_write_tokens: int = 0
    prompt_cache_read_tokens: int = 0


class CachedCall(Record):
    tool: str
    args: Any = None
    raw_args: str | None = None


class CachedSearch(Record):
    query: str
    found: list[str] = Field(default_factory=list)


class CachedPick(Record):
    tool: str | None  # the name the model answered with (a wire name)
    args: Any = None
    raw_args: str | None = None
    text: str = ""
    calls: int = 0
    stop_reason: str | None = None
    usage: CachedUsage | None = None
    latency_ms: float | None = None
    tool_calls: list[CachedCall] = Field(default_factory=list)  # every call of the answer (parallel calls)
    replay: list[dict[str, Any]] = Field(default_factory=list)  # reasoning the API wants back next turn
    searched: list[CachedSearch] = Field(default_factory=list)  # the API's tool searches before the pick


class Entry(Record):
    format: Literal[1]
    key: str
    provider: str
    model: str
    prompt: str
    sample: int
    created_at: str
    pick: CachedPick


def cache_key(identity: dict[str, Any], request: Request) -> str:
    """sha256 over the format version, the provider's identity (provider, model, endpoint, params,
    temperature, seed, tool_choice, …), the system prompt, the prompt, the tools exactly as sent
    (names after mapping, in the order sent) and the sample index; in a trajectory, the conversation
    so far too (a first turn's key is a single-call request's key). The tools' part of the text is
    made once per tool list, not once per sample (perlist.py)."""
    material: dict[str, Any] = {
        "format": FORMAT,
        **identity,
        "system": request.system,
        "prompt": request.prompt,
        "tools": None,  # its canonical JSON, made once per tool list (spliced in below)
        "sample": request.sample,
    }
    if request.search is not None:  # the same tools deferred are another request
        s = request.search
        material["tool_search"] = {"mode": s.mode, "eager": sorted(s.eager), "namespace": s.namespace}
    if request.history:
        material["history"] = [
            {
                "text": turn.text,
                "calls": [{"tool": c.tool, "args": c.args, "raw_args": c.raw_args} for c in turn.calls],
                "stubs": [{"result": s.result, "error": s.error} for s in turn.stubs],
            }
            for turn in request.history
        ]
    tools = _tool_lists.get(request.tools, None, lambda: _canonical([
        {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
    ]).encode("utf-8"))  # fmt: skip
    return hashlib.sha256(spliced(_canonical, material, "tools", tools)).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_tool_lists: PerList[bytes] = PerList()  # each tool list's canonical JSON


class AnswerCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return Path(self._file(key))

    def _file(self, key: str) -> str:  # asked for every sample (has, get): a string, no Path made
        return f"{self.root}/v{FORMAT}/{key[:2]}/{key}.json"

    def has(self, key: str) -> bool:
        return os.path.exists(self._file(key))

    def get(self, key: str) -> Pick | None:
        try:
            with open(self._file(key), "rb") as f:
                entry = Entry.model_validate_json(f.read())
        except (OSError, ValidationError, ValueError):
            return None  # missing, half-written by something else, or from another format: ask again
        if entry.key != key:
            return None
        kept = entry.pick.model_dump()
        usage = kept.pop("usage")
        calls = tuple(ToolCall(**c) for c in kept.pop("tool_calls"))
        replay = tuple(kept.pop("replay"))
        searched = tuple(Search(s["query"], tuple(s["found"])) for s in kept.pop("searched"))
        return Pick(
            **kept,
            usage=Usage(**usage) if usage else None,
            cached=True,
            tool_calls=calls,
            replay=replay,
            searched=searched,
        )

    def put(self, key: str, provider: str, model: str, request: Request, pick: Pick) -> None:
        entry = Entry(
            format=FORMAT,
            key=key,
            provider=provider,
            model=model,
            prompt=request.prompt,
            sample=request.sample,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            pick=CachedPick.model_validate(  # what an answer keeps: not its error, skip or cache flags
                {name: getattr(pick, name) for name in CachedPick.model_fields}
                | {"usage": vars(pick.usage) if pick.usage else None}
                | {"tool_calls": [vars(c) for c in pick.tool_calls], "replay": list(pick.replay)}
                | {"searched": [{"query": s.query, "found": list(s.found)} for s in pick.searched]}
            ),
        )
        write_text(self.path(key), entry.model_dump_json(indent=1))

    def write_manifest(self, keys: set[str]) -> None:
        manifest = {
            "format": FORMAT,
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "keys": sorted(keys),
        }
        write_text(self.root / "manifest.json", json.dumps(manifest, indent=1))

    def entries(self) -> list[Path]:
        """Every answer file, never through a link (prune removes what it lists)."""
        answers = self.root / f"v{FORMAT}"
        return sorted(p for p in files_below(answers) if p.suffix == ".json" and p.parent.parent == answers)

    def manifest_keys(self) -> set[str] | None:
        try:
            return set(json.loads((self.root / "manifest.json").read_text())["keys"])
        except (OSError, ValueError, KeyError, TypeError):
            return None


class CachedProvider(Provider):
    """Wraps a provider with the answer cache: the same contract, so the pipeline can't tell."""

    def __init__(self, inner: Provider, cache: AnswerCache | None, mode: Mode) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.cache = cache if mode != "off" else None
        self.mode = mode
        self.name = inner.name
        self.produces_args = inner.produces_args
        self.produces_replies = inner.produces_replies
        self.cacheable = inner.cacheable
        self.batchable = inner.batchable and mode != "only"
        self.problems = inner.problems  # one list: the inner provider's notes and the cache's
        self.touched: set[str] = set()
        self._broken = False  # a cache write failed: keep answering, stop caching
        self._asking: dict[str, asyncio.Future[Pick | None]] = {}  # requests in flight, by cache key
        # each single-call request's key, made once (a sample's is asked for by the plan, the warm-up and the
        # ask); its tool list held with it, so that list's identity stays its own
        self._keys: dict[tuple[Any, ...], tuple[tuple[Any, ...], str]] = {}
        self._kept: set[str] = set()  # keys found answered

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def answer_key(self, request: Request) -> str | None:
        if self.cache is None or self.mode == "refresh":
            return None
        return self._key(request)

    def _key(self, request: Request) -> str:
        if request.history:  # a conversation's turn: asked once
            return cache_key(self.inner.identity(), request)
        at = (request.prompt, request.system, id(request.tools), request.sample, request.search, request.every_call)
        seen = self._keys.get(at)
        if seen is None or seen[0] is not request.tools:
            seen = self._keys[at] = (request.tools, cache_key(self.inner.identity(), request))
        return seen[1]

    def has_answer(self, key: str) -> bool:
        if key not in self._kept and self.cache is not None and self.cache.has(key):
            self._kept.add(key)  # found once: not looked for again (the plan and the warm-up both ask)
        return key in self._kept

    def cached_answer(self, key: str) -> Pick | None:
        hit = self.cache.get(key) if self.cache is not None and self.mode in ("use", "only") else None
        return None if hit is None or hit.calls > len(hit.all_calls) else hit

    async def pick(self, request: Request) -> Pick:
        key = self._key(request) if self.cache else None
        if key and self.cache:
            self.touched.add(key)
            if self.mode in ("use", "only"):
                hit = self.cache.get(key)
                if hit is not None and request.every_call and hit.calls > len(hit.all_calls):
                    hit = None  # kept before toolselect kept every call of an answer: ask again
                if hit is not None:
                    self.spend.cache_hits += 1
                    return hit
        if self.mode == "only":
            return skipped(NOT_CACHED)
        asking = self._asking.get(key) if key else None
        if asking is not None:  # the same request is in flight (a stress test's sizes): its answer will do
            first = await asyncio.shield(asking)
            if first is not None:
                self.spend.cache_hits += 1
                return replace(first, cached=True)
        self.inner.ensure_connected()  # a run that planned to need no API (all cached) meets a damaged entry
        self.spend.api_calls += 1
        answered: asyncio.Future[Pick | None] = asyncio.get_running_loop().create_future()
        if key:
            self._asking[key] = answered
        try:
            pick = await self.inner.pick(request)
            if pick.error is None and pick.skipped is None:
                answered.set_result(pick)
        finally:
            if key and self._asking.get(key) is answered:
                del self._asking[key]
            if not answered.done():
                answered.set_result(None)  # a failed request: whoever waited asks for itself
        if pick.usage:
            self.spend.add(pick.usage)
        if key and pick.error is None and pick.skipped is None:
            self._keep(key, request, replace(pick, cached=False))
        return pick

    def _keep(self, key: str, request: Request, pick: Pick) -> None:
        """Write an answer to the cache; a full disk mid-run keeps the answer, stops caching, says so."""
        if self.cache is None or self._broken:
            return
        try:
            self.cache.put(key, self.name, self.model, request, pick)
            self.spend.cache_writes += 1
        except (OSError, InfraError) as exc:  # a full disk; a link planted in the cache
            self._broken = True
            said = exc.message if isinstance(exc, InfraError) else exc.strerror or exc
            self.problems.append(f"answers are no longer cached: writing to {self.cache.root} failed ({said})")

    async def submit_batch(self, requests: Sequence[tuple[str, Request]]) -> str:
        self.inner.ensure_connected()
        return await self.inner.submit_batch(requests)

    async def batch_state(self, batch_id: str) -> BatchState:
        return await self.inner.batch_state(batch_id)

    async def cancel_batch(self, batch_id: str) -> None:
        await self.inner.cancel_batch(batch_id)

    async def batch_results(self, batch_id: str) -> dict[str, Pick | str]:
        return await self.inner.batch_results(batch_id)

    def keep_batched(self, request: Request, pick: Pick) -> None:
        """A batch's answer: counted like a request made (at the batch price) and kept exactly as a
        synchronous answer to the same request would be."""
        super().keep_batched(request, pick)
        key = self._key(request) if self.cache else None
        if key:
            self.touched.add(key)
            self._keep(key, request, replace(pick, cached=False))

    def check_writable(self) -> None:
        """Before any request: a cache that can't be written would lose every answer paid for."""
        if self.cache is None or self.mode == "only":
            return
        try:
            self.cache.root.mkdir(parents=True, exist_ok=True)
            write_text(self.cache.root / ".write-check.json", "{}")
            (self.cache.root / ".write-check.json").unlink()
        except OSError as exc:
            from .errors import ConfigError

            raise ConfigError(
                f"cache_dir {self.cache.root}: cannot write there ({exc.strerror or exc})",
                hint="set cache_dir (or --cache-dir) to a writable folder, or cache: false",
            ) from None

    def preload(self) -> None:
        self.inner.preload()

    def connect(self) -> None:
        if self.mode != "only":
            self.inner.connect()

    def ensure_connected(self) -> None:
        self.inner.ensure_connected()

    async def write(self, system: str, prompt: str, schema: dict[str, Any] | None = None) -> str:
        return await self.inner.write(system, prompt, schema)

    @property
    def author(self) -> str:
        return self.inner.author

    async def write_cached(
        self, system: str, prompt: str, schema: dict[str, Any] | None = None
    ) -> tuple[str | None, bool]:
        """Text (a judge's verdict, a drafted prompt) kept like a pick: the key covers the identity, the
        system prompt, the prompt and the schema asked for, marked as text so it never meets a tool
        request's key."""
        request = Request(prompt=prompt, system=system, tools=())
        kind = {"answer": "text"} | ({"schema": schema} if schema else {})
        key = cache_key({**self.inner.identity(), **kind}, request) if self.cache else None
        if key and self.cache:
            self.touched.add(key)
            if self.mode in ("use", "only") and (hit := self.cache.get(key)) is not None:
                self.spend.cache_hits += 1
                return hit.text, True
        if self.mode == "only":
            return None, False
        self.inner.ensure_connected()
        self.spend.api_calls += 1
        text = await self.inner.write(system, prompt, schema)
        if key:
            self._keep(key, request, Pick(text=text))
        return text, False

    async def forward_cached(
        self, body: dict[str, Any], headers: dict[str, str], keyed: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any] | None, bool]:
        """A driven client's request kept like a pick: the key covers the identity, the client's whole
        body (as `keyed` has it) and its beta flags, marked so it never meets another request's key."""
        shown = keyed if keyed is not None else body
        request = Request(prompt=json.dumps(shown, sort_keys=True, ensure_ascii=False), system=None, tools=())
        kind = {"answer": "forwarded", "headers": dict(sorted(headers.items()))}
        key = cache_key({**self.inner.identity(), **kind}, request) if self.cache else None
        if key and self.cache:
            self.touched.add(key)
            if self.mode in ("use", "only") and (hit := self.cache.get(key)) is not None:
                self.spend.cache_hits += 1
                return json.loads(hit.text), True
        if self.mode == "only":
            return None, False
        self.inner.ensure_connected()
        self.spend.api_calls += 1
        answer = await self.inner.forward(body, headers)
        if key:
            self._keep(key, request, Pick(text=json.dumps(answer, ensure_ascii=False)))
        return answer, False

    async def aclose(self) -> None:
        await self.inner.aclose()

    def finish(self, session: set[str] | None = None, interrupted: bool = False) -> None:
        """Record the keys this run used (with those of the other runs in `session`, e.g. the
        base and the head of one PR), so `cache prune` can drop the rest. An interrupted run adds
        its keys to the last manifest instead: prune must not drop what it just kept."""
        if session is not None:
            session |= self.touched
        keys = set(session if session is not None else self.touched)
        if interrupted and self.cache:
            keys |= self.cache.manifest_keys() or set()
        if self.cache and keys:
            self.cache.write_manifest(keys)


# --------------------------------------------------------------------------- cache commands


def cache_stats(root: Path) -> dict[str, Any]:
    cache = AnswerCache(root)
    files = cache.entries()
    by_model: Counter[str] = Counter()
    size = 0
    broken = 0
    for path in files:
        size += path.stat().st_size
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            by_model[f"{entry['provider']} {entry['model']}"] += 1
        except (OSError, ValueError, KeyError, TypeError):
            broken += 1
    keys = cache.manifest_keys()
    unused = None if keys is None else sum(p.stem not in keys for p in files)
    return {
        "entries": len(files),
        "bytes": size,
        "by_model": dict(by_model),
        "unreadable": broken,
        "unused_by_last_run": unused,
    }


@dataclass(frozen=True)
class Merged:
    copied: int  # answers added
    present: int  # already in the cache (the same key is the same request: kept as it was)
    refused: int  # not an answer of this format, a file named for another key, or too big


MAX_ENTRY_BYTES = 4 * 1024 * 1024  # one answer; a trajectory turn's is a few KiB


def merge_caches(sources: Iterable[Path], root: Path) -> Merged:
    """Copy other caches' answers into the cache at `root` (the shards of one run, so the next run
    restores one cache). Each entry is read as an answer and must be filed under its own key."""
    target = AnswerCache(root)
    copied = present = refused = 0
    for source in sources:
        if not source.is_dir():
            raise ConfigError(f"{source}: no such cache folder")
        for path in AnswerCache(source).entries():
            try:
                if path.is_symlink() or path.stat().st_size > MAX_ENTRY_BYTES:
                    raise ValueError("not a regular answer file")
                data = path.read_bytes()
                entry = Entry.model_validate_json(data)
                if entry.key != path.stem:
                    raise ValueError("filed under another key")
            except (OSError, ValueError):  # ValidationError is a ValueError
                refused += 1
                continue
            if target.path(entry.key).exists():
                present += 1
                continue
            write_text(target.path(entry.key), data.decode("utf-8"))
            copied += 1
    return Merged(copied, present, refused)


def export_entries(root: Path, keys: Iterable[str], dest: Path) -> int:
    """Copy the answers under `keys` from the cache at `root` into a cache at `dest` (a shard's
    answers, for its artifact); returns how many were copied."""
    source, target = AnswerCache(root), AnswerCache(dest)
    n = 0
    for key in sorted(keys):
        path = source.path(key)
        if path.is_file() and not path.is_symlink():
            write_text(target.path(key), path.read_text(encoding="utf-8"))
            n += 1
    return n


def prune(root: Path, dry_run: bool = False) -> tuple[int, int]:
    """Remove entries the last run did not use: (entries removed, bytes freed)."""
    cache = AnswerCache(root)
    keys = cache.manifest_keys()
    if keys is None:
        from .errors import ConfigError

        raise ConfigError(
            f"{root}: no manifest.json: run `toolselect eval` once first so the cache knows which answers are in use"
        )
    removed = freed = 0
    for path in cache.entries():
        if path.stem not in keys:
            freed += path.stat().st_size
            removed += 1
            if not dry_run:
                path.unlink()
    for folder in (root / f"v{FORMAT}").glob("*"):
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()) and not dry_run:
            folder.rmdir()
    return removed, freed


def prune_after_run(root: Path, mode: str) -> int:
    """What the Action does after a run that used the cache: drop the answers it did not use, so a
    CI cache entry does not grow forever. The number removed (0 when there is nothing to go by)."""
    if mode not in ("use", "refresh"):
        return 0
    from .errors import ConfigError

    try:
        return prune(root)[0]
    except ConfigError:  # no manifest: this run wrote none (nothing was cached)
        return 0
