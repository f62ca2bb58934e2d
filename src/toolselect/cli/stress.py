"""`toolselect stress`: the golden set as the tool list grows (the curve, the cliff, the culprits)."""

from __future__ import annotations

import argparse
import os

from rich.markup import escape

from ..budget import describe
from ..errors import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASSED
from ..pipeline.stress import run_stress, stress_report_of
from ..render.console import ConsoleView
from ..render.escape import esc
from ..render.stress import CHART_TITLE, stress_markdown
from ..runtime import run_async
from ..stress import read_stress_report, stress_reasons
from .common import flag_overrides, load_settings


def cmd_stress(args: argparse.Namespace) -> int:
    over = flag_overrides(args)
    loaded, settings = load_settings(over)
    view = ConsoleView(quiet=args.quiet)
    run = run_async(run_stress(loaded, settings, os.environ, view.hooks(), dry_run=args.dry_run), view.stop)
    if run is None:
        return EXIT_INTERRUPTED
    view.stop()
    stress = settings.stress
    if args.dry_run:
        runs = len(run.sizes) * stress.seeds
        print(f"sizes {', '.join(map(str, run.sizes))} × {stress.seeds} seeds = {runs} surfaces")
        for warning in run.warnings:  # e.g. a size cut to what the API takes
            print(f"warning: {warning}")
        print(describe(run.budget, "stress"))
        return EXIT_PASSED
    report = stress_report_of(run, settings)
    base = read_stress_report(args.against) if args.against else None
    reasons = stress_reasons(report, base)
    view.print_stress(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        view.note(f"JSON report written to {args.json}")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        verdict = "".join(f"- ❌ {esc(r)}\n" for r in reasons) + ("\n" if reasons else "")
        text = f"### {CHART_TITLE}\n\n{verdict}" + stress_markdown(report, base)
        args.markdown.write_text(text, encoding="utf-8")
        view.note(f"Markdown report written to {args.markdown}")
    for reason in reasons:
        view.console.print(f"[bold red]FAILED[/] {escape(reason)}")
    return EXIT_GATE_FAILED if reasons else EXIT_PASSED
