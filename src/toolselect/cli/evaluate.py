"""`toolselect eval` and `toolselect diff`: a run (or two saved reports) → outcome → outputs → exit code."""

from __future__ import annotations

import argparse
import os
from contextlib import suppress
from pathlib import Path

from ..config import Loaded, Overrides
from ..errors import EXIT_INFRA, EXIT_INTERRUPTED, ConfigError
from ..outcome import Outcome, compare_saved, evaluate, exit_code
from ..outputs import Targets, write_outputs
from ..pipeline.eval import plan_eval, run_eval
from ..pipeline.sides import Against
from ..render.console import ConsoleView
from ..runtime import run_async
from ..settings import Settings
from ..shards import Shard
from .common import flag_overrides, load_settings

COMPARISON = ("max_drop", "significance", "fail_on_certain_flips")


def cmd_eval(args: argparse.Namespace) -> int:
    over = flag_overrides(args)
    loaded, settings = load_settings(over)
    base_ref = over.get("base_ref")
    against = Against(base_ref, over, Path.cwd()) if base_ref else None
    if args.dry_run:
        return _dry_run(loaded, settings, against)
    if settings.shard is not None and args.json is None:
        raise ConfigError("--shard writes a part for `toolselect merge`: add --json PART.json")
    if against is None and any(over.get(k) is not None for k in COMPARISON):
        raise ConfigError(
            "--max-drop, --significance and --fail-on-certain-flips compare against a base: "
            "add --base-ref REF (e.g. origin/main)"
        )
    view = ConsoleView(quiet=args.quiet)
    run = run_async(run_eval(loaded, settings, os.environ, view.hooks(), against=against), view.stop)
    if run is None:
        return EXIT_INTERRUPTED
    outcome = evaluate(run, base_label=base_ref)
    if settings.shard is not None:
        return _shard_done(outcome, settings.shard, args.json, view)
    _remember_failures(outcome, settings)
    return _finish(outcome, over, args, view)


def _remember_failures(outcome: Outcome, settings: Settings) -> None:
    """For --last-failed: this run's failing cases, and the earlier failures of cases it did not ask."""
    from ..selecting import read_last_failed, write_last_failed

    asked = {c.name for m in outcome.models for c in m.head.cases if c.evaluated}
    failing = {c.name for m in outcome.models for c in m.head.cases if c.evaluated and c.passed < c.evaluated}
    earlier = set(read_last_failed(settings.cache_dir) or ()) - asked
    with suppress(OSError):  # a cache folder that can't be written loses only this convenience
        write_last_failed(settings.cache_dir, sorted(failing | earlier))


def _finish(outcome: Outcome, over: Overrides, args: argparse.Namespace, view: ConsoleView) -> int:
    """A run's end, for eval and merge alike: the views, the files asked for, the exit code."""
    view.finish_outcome(outcome)
    junit, html = over.get("junit"), over.get("html")
    targets = Targets(
        json=args.json,
        markdown=args.markdown,
        junit=Path(junit) if junit else None,
        html=Path(html) if html else None,
    )
    _write(outcome, targets, view)
    return exit_code(outcome)


def _shard_done(outcome: Outcome, shard: Shard, json_path: Path | None, view: ConsoleView) -> int:
    """A shard's run: its part written, no verdict (a slice can't be judged): 0, or 3 when the run
    itself failed."""
    if json_path is None:
        raise ConfigError("--shard writes a part for `toolselect merge`: add --json PART.json")
    _write(outcome, Targets(json=json_path), view)
    asked = sum(m.head.counts.samples for m in outcome.models)
    print(f"shard {shard}: {asked} samples asked; merge every shard's part with `toolselect merge PART.json…`")
    # only a run that stopped fails a shard: the share of provider errors is the merge's to judge, on the whole
    failed = next((r.gate.stopped for m in outcome.models for r in (m.head, m.base) if r and r.gate.stopped), None)
    if failed:
        print(f"the shard's run failed: {failed}")
        return EXIT_INFRA
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Shards' parts → one outcome, as one unsharded run would give it (gate, outputs, exit code)."""
    from ..merging import Part
    from ..pipeline.merge import run_merge
    from ..report.files import read_reports

    over = flag_overrides(args)
    base_ref = over.get("base_ref")
    if args.base_parts and not base_ref:
        raise ConfigError("--base-parts needs --base-ref: the commit the base's shards evaluated")
    heads = [Part(str(p), read_reports(p)) for p in args.parts]
    bases = [Part(str(p), read_reports(p)) for p in args.base_parts]
    for part in (*heads, *bases):
        if part.reports[0].part is None:
            raise ConfigError(f"{part.where} is a whole report, not a shard's part (eval --shard I/N writes parts)")
    loaded, settings = load_settings(over)
    against = Against(base_ref, over, Path.cwd()) if base_ref else None
    view = ConsoleView(quiet=args.quiet)
    run = run_async(run_merge(loaded, settings, os.environ, heads, bases, against=against), view.stop)
    if run is None:
        return EXIT_INTERRUPTED
    outcome = evaluate(run, base_label=base_ref)
    return _finish(outcome, over, args, view)


def _dry_run(loaded: Loaded, settings: Settings, against: Against | None) -> int:
    """`eval --dry-run`: what the run would ask and cost; nothing is sent to a model."""
    from ..budget import check_budget, describe

    view = ConsoleView()
    plans = run_async(plan_eval(loaded, settings, os.environ, against=against, say=view.note))
    if plans is None:
        return EXIT_INTERRUPTED
    sides = [("head", plans.head), ("base", plans.base)] if against else [("run", plans.head)]
    budgets = [b for _, b in sides if b is not None]
    for name, budget in sides:
        if budget is not None:
            print(describe(budget, name))
        elif plans.base_failure is not None:
            print(
                f"base: {plans.base_failure.line}"
                + (f"\n  hint: {plans.base_failure.hint}" if plans.base_failure.hint else "")
            )
        else:
            print(f"base: {plans.base_note}")
    total = sum(b.requests for b in budgets)
    costs = [b.cost_usd for b in budgets]
    money = "" if any(c is None for c in costs) else f", ≈ ${sum(c or 0.0 for c in costs):.4f}"
    limits = [f"max_requests {settings.max_requests}"] if settings.max_requests else []
    limits += [f"max_cost ${settings.max_cost:g}"] if settings.max_cost else []
    limit = f" ({', '.join(limits)})" if limits else ""
    print(f"total: {total} requests{money}{limit}")
    check_budget(budgets, settings.max_requests, settings.max_cost)
    return EXIT_INFRA if plans.base_failure is not None and settings.gate.base_failure != "pass" else 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Two saved reports, judged as a live comparison: under the head's recorded gate, flags on top."""
    from ..report.files import read_reports

    base, head = read_reports(args.base), read_reports(args.head)
    over: Overrides = flag_overrides(args)
    outcome = compare_saved(base, head, over.values, base_label=str(args.base), refuse_incomparable=True)
    view = ConsoleView()
    if outcome.several:
        view.print_models(outcome)
    view.print_outcome(outcome)
    html = over.get("html")
    _write(outcome, Targets(markdown=args.markdown, diff_json=args.json, html=Path(html) if html else None), view)
    return exit_code(outcome)


def _write(outcome: Outcome, targets: Targets, view: ConsoleView) -> None:
    for what, path in write_outputs(outcome, targets).files:
        view.note(f"{what} written to {path}")
