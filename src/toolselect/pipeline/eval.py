"""The whole flow on one screen: golden set → tool surface → picks → results → report (→ diff).

`prepare` does everything that asks no model (cases, surface, checks, the plan of samples and what
the cache already holds); `execute` asks and scores. Between the two, a budget can refuse the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..budget import Budget, check_budget, combined
from ..config import Loaded
from ..errors import ToolselectError
from ..gate import BaseFailure, failed_base
from ..outcome import BASE_REFUSED, Comparison
from ..pick import Pick
from ..settings import Settings
from ..shards import Unit
from ..surface import Surface
from ..sweep import sweep
from .execute import execute
from .prepare import Hooks, Prepared
from .sides import Against, sides

if TYPE_CHECKING:
    from ..surface.launch import Say


@dataclass(frozen=True)
class Plans:
    """What a run would ask (for --dry-run): each side's budget, or why there is no base."""

    head: Budget
    base: Budget | None
    base_note: str | None
    base_failure: BaseFailure | None = None


async def run_eval(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    hooks: Hooks = Hooks(),
    *,
    against: Against | None = None,
    base_hooks: Hooks = Hooks(),
    frozen: tuple[Surface | None, Surface | None] = (None, None),
    fingerprints: dict[str, str | None] | None = None,
    recorded: Mapping[str, Mapping[Unit, Pick]] | None = None,
) -> tuple[Comparison, ...]:
    """Evaluate every model on the head and, `against` a base commit (in a git worktree), on the
    base too: all planned and budgeted before anything is asked, the models of a side asked at once
    (one throttle per endpoint), then each model's base and head diffed (pure). A base without a config,
    or without the model, is "no baseline" for that model; anything else that keeps the base from
    being evaluated — a ref that doesn't resolve, a setup, server or provider that fails on the base
    — is the comparison's failure (`base_failure`), never a pass. `frozen`: the head's and
    the base's tool surfaces as already listed (a merge of shards); `fingerprints`: filled with each
    side's plan fingerprint (a merge: shard 0 of N)."""
    keys: set[str] = set()  # the cache keys both sides used, for `cache prune`
    says = (hooks.on_note, lambda text: hooks.on_note(f"base: {text}"))
    async with sides(
        loaded,
        settings,
        environ,
        against,
        connect=True,
        says=says,
        on_secret=hooks.on_secret,
        frozen=frozen,
        fingerprints=fingerprints,
        recorded=recorded,
    ) as both:
        head_preps, base_preps, note, failure = both.heads, both.bases, both.note, both.failure
        await _within_budget([*head_preps, *base_preps], settings.max_requests, settings.max_cost)
        try:
            if any(p.settings.batch for p in (*head_preps, *base_preps)):  # --batch: before anything is asked
                from .batch import batch_sides

                batched = await batch_sides([*head_preps, *base_preps], hooks)
                head_preps, base_preps = tuple(batched[: len(head_preps)]), tuple(batched[len(head_preps) :])
            heads = await asyncio.gather(*(execute(p, hooks, keys) for p in head_preps))
            sweep(environ)  # the head's pickers are done: the base's turn
            with both.base_turn(environ):
                bases = await asyncio.gather(*(execute(p, base_hooks, keys) for p in base_preps))
        except BaseException:  # every provider closed, the base's too (execute closes its own)
            for prep in (*head_preps, *base_preps):
                await prep.aclose()
            raise
        finally:
            sweep(environ)  # nothing a `command` picker started outlives the picks
    by_label = {p.settings.labels[0]: b for p, b in zip(base_preps, bases, strict=True)}
    out = []
    for prep, head in zip(head_preps, heads, strict=True):
        label = prep.settings.labels[0] if len(head_preps) > 1 else ""
        base = by_label.get(prep.settings.labels[0])
        if base is not None and (failed := failed_base(base)):
            out.append(Comparison(head, label=label, base_failure=failed))
        elif base is None:
            missing = f"no baseline: the base has no model labelled '{label}'" if base_preps else None
            out.append(Comparison(head, base_note=note or missing, label=label, base_failure=failure))
        else:
            from ..diff import diff_reports, incomparable

            if refused := incomparable(base, head):  # what answered each side, as their runs record it
                out.append(Comparison(head, base_note=f"{BASE_REFUSED}: {'; '.join(refused)}", label=label))
                continue
            out.append(Comparison(head, base, diff_reports(base, head, alpha=prep.settings.gate.alpha), label=label))
    return tuple(out)


async def plan_eval(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    against: Against | None = None,
    say: Say = lambda _: None,
) -> Plans:
    """What `run_eval` would ask and cost; nothing is sent to a model and no key is needed. `say`: the
    setup's progress, as a real run says it (the server's setup starting and done, on each side)."""
    says = (say, lambda text: say(f"base: {text}"))
    async with sides(loaded, settings, environ, against, connect=False, says=says) as both:
        for side in (*both.heads, *both.bases):
            await side.aclose()
        base = combined([p.budget for p in both.bases]) if both.bases else None
        return Plans(combined([p.budget for p in both.heads]), base, both.note, both.failure)


async def _within_budget(preps: Sequence[Prepared], limit: int | None, max_cost: float | None) -> None:
    try:
        check_budget([p.budget for p in preps], limit, max_cost)
    except ToolselectError:
        for side in preps:
            await side.aclose()
        raise
