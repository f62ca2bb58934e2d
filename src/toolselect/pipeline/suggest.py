"""The Action's `suggest`: after a pull request's eval, rewrites of the descriptions of the tools it
made the model pick worse (or that the model confuses), each held to the held-out test of `fix`
(pipeline/fix.py), and the accepted ones placed on the head's source (suggestions.py).

The server is not started again: the surface is the one the head's run listed (its report), and the
source files are read from the checkout without following a link. The run's model answers the fix's
cases, and with `provider: command` that is the pull request's own program: the Action runs suggest
inside the containment (containment.py), like the eval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..cache import AnswerCache
from ..config import Loaded
from ..nofollow import read_text
from ..outcome import Outcome
from ..settings import Settings
from ..sourcelines import FilePatch, Location, lines_changed, right_lines, text_changes
from ..suggestions import Mode, Suggestion, most_affected, place, targets, unplaced
from ..surface import build_surface
from .fix import Fix, description_source, run_fix


async def suggest_in_pr(
    loaded: Loaded,
    settings: Settings,
    environ: Mapping[str, str],
    outcome: Outcome,
    mode: Mode,
    *,
    workspace: Path,
    files: Callable[[], Sequence[FilePatch]],
    said: Callable[[str], None],
) -> tuple[Suggestion, ...]:
    """`files`: the PR's files with their patches (from the API, asked only when a rewrite passed);
    paths are the repository's. With several models, the rewrites are tested with the one the PR
    hurt most."""
    head = outcome.head
    surface = build_surface(head.surface.definitions, head.surface.origin)
    listed = set(surface.names)
    sides = [(m.head, m.base) for m in outcome.models]
    pick = most_affected(mode, sides, listed)
    chosen = targets(mode, *sides[pick], listed)
    if not chosen:
        said(f"suggest: no tool to rewrite ({'no recall fell' if mode == 'regressions' else 'no confusion'})")
        return ()
    model = settings.each_model()[pick] if len(outcome.models) > 1 else settings
    used = AnswerCache(settings.cache_dir).manifest_keys() or set()  # the eval's: kept with the fix's
    fixes = await run_fix(loaded, model, environ, tools=chosen, surface=surface, said=said, keys=used)
    if not any(f.accepted for f in fixes.fixes):
        return tuple(_placed(f, fixes.rewriter, settings, workspace, {}, {}) for f in fixes.fixes)
    listing = files()
    base = outcome.models[pick].base
    changed = text_changes(base.surface.definitions, head.surface.definitions) if base is not None else {}
    located = lines_changed(changed, listing)
    patches = {f.path: f.patch for f in listing if f.patch}
    return tuple(_placed(f, fixes.rewriter, settings, workspace, located, patches) for f in fixes.fixes)


def _placed(
    fix: Fix,
    rewriter: str,
    settings: Settings,
    workspace: Path,
    located: Mapping[str, Location],
    patches: Mapping[str, str],
) -> Suggestion:
    accepted = fix.accepted
    said = Suggestion(
        fix.tool,
        fix.note,
        rewriter,
        len(fix.tried),
        fix.judged,
        description=accepted.candidate.description if accepted else "",
    )
    if accepted is None:
        return said
    source = description_source(settings, fix.tool, fix.current)
    if source is None:
        return unplaced(said, f"the source of {fix.tool}'s description was not found")
    full = Path(source).absolute()
    try:
        path = full.relative_to(workspace).as_posix()
    except ValueError:
        return unplaced(said, f"{source} is outside the repository")
    text = read_text(full)
    if text is None:
        return unplaced(said, f"{path} could not be read as a file of the repository (a link, or not UTF-8 text)")
    where = located.get(fix.tool)
    window = None
    if where is not None and where.path == path and where.field == "description":
        window = (where.start_line, where.line)
    diff_lines = right_lines(patches[path]) if path in patches else set()
    return place(said, path, text, fix.current, window, diff_lines)
