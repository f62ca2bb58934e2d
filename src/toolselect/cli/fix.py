"""`toolselect fix`: rewrites tried, the held-out evidence, and only the accepted ones as a patch."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASSED
from ..literal import NotWritten, applied, rewrite, unified
from ..locate import display_path
from ..pipeline.fix import Fixes, description_source, run_fix
from ..runtime import run_async
from ..settings import Settings
from .common import flag_overrides, load_settings


def cmd_fix(args: argparse.Namespace) -> int:
    loaded, settings = load_settings(flag_overrides(args))
    fixes = run_async(run_fix(loaded, settings, os.environ, tools=args.tool, said=print, dry_run=args.dry_run))
    if fixes is None:
        return EXIT_INTERRUPTED
    if args.dry_run:
        print(f"dry run: nothing was asked (the rewriter: {fixes.rewriter})")
        return EXIT_PASSED
    for fix in fixes.fixes:
        mark = "✓" if fix.accepted else "✗"
        print(f"{mark} {fix.note}")
        for tried in fix.tried:
            print(f"    tuning {tried.tuning} passed: {' '.join(tried.candidate.description.split())[:160]}")
    accepted = [f for f in fixes.fixes if f.accepted]
    print(f"held-out split: {len(fixes.split.holdout)} cases held out, {len(fixes.split.tuning)} tuning "
          f"(seed {fixes.split.seed}); {len(accepted)} of {len(fixes.fixes)} rewrites accepted")  # fmt: skip
    if args.patch or args.apply:
        _patch(settings, fixes, args.patch, args.apply)
    return EXIT_PASSED if accepted or not fixes.fixes else EXIT_GATE_FAILED


def _patch(settings: Settings, fixes: Fixes, patch: Path | None, apply: bool) -> None:
    """The accepted rewrites in their source files: a unified diff, and with `apply` the files written."""
    changed: dict[Path, tuple[str, str]] = {}
    for fix in fixes.fixes:
        if fix.accepted is None:
            continue
        path = description_source(settings, fix.tool, fix.current)
        if path is None:
            print(f"  {fix.tool}: its description's source was not found: no patch")
            continue
        before = changed[path][1] if path in changed else path.read_text(encoding="utf-8")
        made = rewrite(str(path), before, 1, len(before.splitlines()), fix.current, fix.accepted.candidate.description)
        if isinstance(made, NotWritten):  # not found, or it would not read back: never written
            print(f"  {fix.tool}: {made.why}: no patch")
            continue
        changed[path] = (changed[path][0] if path in changed else before, applied(before, made))
    diff = "".join(unified(display_path(p), a, b) for p, (a, b) in changed.items())  # from here: git apply -p1
    if patch is not None:
        patch.write_text(diff, encoding="utf-8")
        print(f"patch written to {patch}")
    if apply:
        for path, (_, text) in changed.items():
            path.write_text(text, encoding="utf-8")
            print(f"applied to {path}")
