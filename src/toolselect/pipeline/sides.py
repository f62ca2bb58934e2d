"""The head and the base of a run, prepared: the base commit checked out in a git worktree (removed
again at the end, whatever happens), read with the head's overrides, each side's cases loaded once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Loaded, Overrides
from ..errors import Refused, ToolselectError
from ..gate import BaseFailure
from ..golden import Case
from ..pick import Pick
from ..resolve import load_cases
from ..settings import Settings
from ..shards import Unit, assign_sides, cost, plan_units
from ..surface import Surface
from .prepare import Prepared, prepare_models

if TYPE_CHECKING:  # a run with no base loads none of baseline.py (git, worktrees, containment)
    from ..baseline import Checkout, GitFailed
    from ..surface.launch import Say


@dataclass(frozen=True)
class Against:
    """The base to compare with: a git ref, evaluated with the head's overrides, from `cwd`.
    `checkout`: the base already checked out (or why it can't be) before any program of the pull
    request ran, shared by the eval and the stress test (the Action's); None: each checks it out."""

    ref: str
    over: Overrides
    cwd: Path
    checkout: Checkout | GitFailed | None = None

    @asynccontextmanager
    async def checked_out(self, environ: Mapping[str, str]) -> AsyncIterator[Checkout]:
        from ..baseline import GitFailed, checked_out

        if isinstance(self.checkout, GitFailed):
            raise self.checkout
        if self.checkout is not None:
            yield self.checkout
            return
        with checked_out(self.cwd, self.ref, environ) as made:
            if isinstance(made, GitFailed):
                raise made
            yield made

    def read(
        self, checkout: Checkout, loaded: Loaded, settings: Settings, environ: Mapping[str, str], on_secret: Say
    ) -> tuple[Loaded, Settings]:
        """The base's config and settings, read in its checkout with the head's overrides; each
        secret its config puts in is masked from then on."""
        from ..baseline import base_settings

        base_loaded, base = base_settings(loaded, settings, self.over, checkout.root, checkout.tree, self.cwd, environ)
        for secret in base_loaded.secrets:
            on_secret(secret)
        return base_loaded, base


@dataclass(frozen=True)
class Sides:
    """Both sides of a run, prepared: the head's models, the base's (with why there are none), and
    the base's checkout, whose turn its programs run in."""

    heads: tuple[Prepared, ...]
    bases: tuple[Prepared, ...]
    note: str | None  # no baseline, by design (the base has no config)
    checkout: Checkout | None
    failure: BaseFailure | None = None  # the base could not be evaluated

    def base_turn(self, environ: Mapping[str, str]) -> AbstractContextManager[None]:
        return self.checkout.turn(environ) if self.checkout is not None else nullcontext()


@asynccontextmanager
async def sides(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    against: Against | None,
    *,
    connect: bool,
    says: tuple[Say, Say] = (lambda _: None, lambda _: None),
    on_secret: Say = lambda _: None,
    frozen: tuple[Surface | None, Surface | None] = (None, None),
    fingerprints: dict[str, str | None] | None = None,
    recorded: Mapping[str, Mapping[Unit, Pick]] | None = None,
) -> AsyncIterator[Sides]:
    """Every model prepared on the head and, against a base, on the base in its worktree (removed
    again at the end): the base's models are the head's (its own settings, the head's labels). A
    shard's units are assigned over both sides at once, so a unit is in the same shard on each."""
    planned: set[str] = set()  # requests the head will make: the base then finds them cached
    prints: dict[str, str | None] = {} if fingerprints is None else fingerprints
    head_cases = load_cases(loaded, settings)  # golden set: each side's read once, for all its models
    base_loaded, base, base_cases, note, checkout = None, None, [], None, None
    failure: BaseFailure | None = None
    async with AsyncExitStack() as stack:
        if against is not None:
            from ..baseline import NoBaseline, failure_of

            try:
                checkout = await stack.enter_async_context(against.checked_out(environ))
                base_loaded, base = against.read(checkout, loaded, settings, environ, on_secret)
                base = replace(base, shard=settings.shard)  # the base splits (or merges) as the head does
                base_cases = load_cases(base_loaded, base)
            except NoBaseline as exc:
                base, note = None, f"no baseline: {exc.message}"
            except Refused:
                raise  # the run stops, on either side
            except ToolselectError as exc:
                base, failure = None, failure_of(exc, None, settings, checkout.tree if checkout else None)
        assigned = None
        if settings.shard is not None and settings.shard.index:
            head_units = plan_units(settings.labels, _costs(head_cases), settings.repeat)
            base_units = plan_units(base.labels, _costs(base_cases), base.repeat) if base is not None else []
            assigned = assign_sides(head_units, base_units, settings.shard.count)
        head_preps, prints["head"] = await prepare_models(
            settings, head_cases, environ, connect=connect, planned=planned, say=says[0], surface=frozen[0],
            assigned=assigned, recorded=(recorded or {}).get("head"),
        )  # fmt: skip
        base_preps: tuple[Prepared, ...] = ()
        if base is not None and base_loaded is not None and checkout is not None:
            try:
                with checkout.turn(environ):  # the base's programs: the head's are all stopped by now
                    base_preps, prints["base"] = await prepare_models(
                        base, base_cases, environ, connect=connect, planned=planned, say=says[1],
                        surface=frozen[1], assigned=assigned, recorded=(recorded or {}).get("base"),
                    )  # fmt: skip
            except Refused:
                raise  # the run stops, on either side
            except ToolselectError as exc:
                from ..baseline import failure_of

                failure = failure_of(exc, base, settings, checkout.tree)
        yield Sides(head_preps, base_preps, note, checkout if base_preps else None, failure)


def _costs(cases: Sequence[Case]) -> list[tuple[str, int]]:
    return [(c.name, cost(c)) for c in cases]
