"""The `toolselect` command: flags and environment → settings → pipeline → renderers → exit code.

Kept free of heavy imports at module level so `toolselect --version` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__
from .errors import EXIT_INFRA, EXIT_USAGE, ToolselectError


def _split_server_command(argv: list[str]) -> tuple[list[str], tuple[str, ...] | None]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], tuple(argv[i + 1 :]) or None
    return argv, None


def _number(text: str, what: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def _share(text: str) -> float:
    return _number(text, "a number between 0 and 1")


def _points(text: str) -> float:
    value = _number(text, "percentage points, e.g. 5")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more points (got {text})")
    return value


def _count(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _later(name: str):
    """A command of cli_surface.py, imported only when it runs (keeps --version fast)."""

    def run(args: argparse.Namespace) -> int:
        from . import cli_surface

        return getattr(cli_surface, name)(args)

    return run


def gate_flags(p: argparse.ArgumentParser) -> None:
    """The comparison gate's options (the same names as in the config and the Action's inputs)."""
    p.add_argument(
        "--max-drop",
        type=_points,
        metavar="PTS",
        help="fail when accuracy drops more than this many points vs the base (0: any drop)",
    )
    p.add_argument(
        "--significance",
        type=_alpha,
        metavar="ALPHA",
        help="a drop fails only when it is also significant (p < ALPHA, e.g. 0.05)",
    )
    p.add_argument(
        "--fail-on-certain-flips",
        action="store_const",
        const=True,
        default=None,
        help="fail when a case certainly flipped to failing (Fisher's exact test)",
    )


def _alpha(text: str) -> float:
    value = _share(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, e.g. 0.05 (got {text})")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolselect",
        description="Does the model still pick the right MCP tool, with the right arguments?",
    )
    parser.add_argument("--version", action="version", version=f"toolselect {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def surface_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("-c", "--config", help="config file (default: toolselect.yaml, then toolproof.yaml)")
        g = p.add_mutually_exclusive_group()
        g.add_argument("--tools", metavar="FILE", help="a frozen tool surface (tools/list JSON) instead of a server")
        g.add_argument("--url", help="an MCP server over streamable HTTP (or SSE when the path ends in /sse)")

    ev = sub.add_parser(
        "eval",
        help="run the golden set and report accuracy, restraint and the confusion matrix",
        usage="toolselect eval [-c CONFIG] [--tools FILE | --url URL | -- SERVER CMD…] [options]",
    )
    surface_flags(ev)
    ev.add_argument(
        "--golden",
        action="append",
        default=[],
        metavar="FILE",
        help="golden file (.jsonl/.yaml); repeatable; replaces evals.golden",
    )
    ev.add_argument("--provider", help="bm25 (offline), command, anthropic, openai, openai-responses")
    ev.add_argument("--model", help="model name passed to the provider")
    ev.add_argument("--min-accuracy", type=_share, metavar="X", help="fail below this share of correct samples (0..1)")
    ev.add_argument("--repeat", type=_count, metavar="N", help="samples per case")
    ev.add_argument("--concurrency", type=_count, metavar="N", help="requests in flight (default 8)")
    ev.add_argument(
        "--temperature",
        type=lambda t: _number(t, "a temperature, e.g. 0.7"),
        metavar="T",
        help="sampling temperature, where the API supports it",
    )
    ev.add_argument("--seed", type=_count, metavar="N", help="sampling seed, where the API supports it")
    ev.add_argument(
        "--timeout",
        type=lambda t: _number(t, "seconds, e.g. 30"),
        metavar="SECONDS",
        dest="timeout_s",
        help="per-request timeout (a stalled answer is cut off and retried)",
    )
    ev.add_argument("--max-retries", type=_count, metavar="N", help="retries of a transient API failure (default 5)")
    ev.add_argument(
        "--max-error-rate",
        type=_share,
        metavar="X",
        help="exit 3 when more samples than this share fail at the provider (default 0.1)",
    )
    ev.add_argument("--base-url", metavar="URL", help="an OpenAI-compatible (or Anthropic) endpoint")
    cache = ev.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="ask again and refresh the answer cache")
    cache.add_argument(
        "--cache-only", action="store_true", help="never call the API: uncached samples are NOT-EVALUATED"
    )
    ev.add_argument(
        "--cache-dir", metavar="DIR", help="the answer cache's folder (default .toolselect-cache beside the config)"
    )
    ev.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report")
    ev.add_argument("--markdown", type=Path, metavar="PATH", help="write the report as GitHub-flavoured Markdown")
    ev.add_argument(
        "--junit", type=Path, metavar="PATH", help="write JUnit XML (each missed case is a failing testcase)"
    )
    shuffle = ev.add_mutually_exclusive_group()
    shuffle.add_argument(
        "--shuffle",
        dest="shuffle",
        action="store_const",
        const=True,
        help="each sample sees the tools in its own seeded order (default when --repeat > 1)",
    )
    shuffle.add_argument(
        "--no-shuffle", dest="shuffle", action="store_const", const=False, help="always the server's tool order"
    )
    ev.add_argument(
        "--max-over-trigger",
        type=_share,
        metavar="X",
        help="fail when more than this share of no-tool samples call a tool",
    )
    ev.add_argument(
        "--min-tool-recall",
        action="append",
        default=[],
        metavar="TOOL=X",
        help="fail when a tool's recall is below X; repeatable",
    )
    ev.add_argument(
        "--dry-run", action="store_true", help="say how many requests, tokens and dollars the run would take, and stop"
    )
    ev.add_argument(
        "--max-requests",
        type=_count,
        metavar="N",
        help="refuse to start a run that would make more than N uncached requests",
    )
    ev.add_argument(
        "--base-ref",
        metavar="REF",
        help="also evaluate this git ref (in a worktree) and compare: --markdown then previews the PR comment",
    )
    gate_flags(ev)
    ev.add_argument("-q", "--quiet", action="store_true", help="print only the verdict")
    ev.set_defaults(func=_cmd_eval)

    df = sub.add_parser("diff", help="compare two saved JSON reports (base, head)")
    df.add_argument("base", type=Path, metavar="BASE.json")
    df.add_argument("head", type=Path, metavar="HEAD.json")
    gate_flags(df)
    df.add_argument("--markdown", type=Path, metavar="PATH", help="write the comparison as the PR comment Markdown")
    df.add_argument("--json", type=Path, metavar="PATH", help="write the diff as JSON")
    df.set_defaults(func=_cmd_diff)

    act = sub.add_parser("action", help="run as the GitHub Action (reads INPUT_* and the GitHub environment)")
    act.set_defaults(func=_cmd_action)

    snap = sub.add_parser(
        "snapshot",
        help="capture a live server's tool surface into a tools.json file",
        usage="toolselect snapshot [-c CONFIG] [--url URL | -- SERVER CMD…] -o tools.json",
    )
    surface_flags(snap)
    snap.add_argument("-o", "--output", type=Path, required=True, metavar="PATH", help="where to write tools.json")
    snap.set_defaults(func=_later("cmd_snapshot"))

    lint = sub.add_parser(
        "lint",
        help="check the tool surface and the golden set before any model is asked",
        usage="toolselect lint [-c CONFIG] [--tools FILE | --url URL | -- SERVER CMD…] [--golden FILE]… [--strict] [options]",
    )
    surface_flags(lint)
    lint.add_argument(
        "--golden", action="append", default=[], metavar="FILE", help="golden file (.jsonl/.yaml); repeatable"
    )
    lint.add_argument("--strict", action="store_true", help="warnings fail too")
    lint.add_argument("--json", type=Path, metavar="PATH", help="write the findings as JSON")
    lint.add_argument("--markdown", type=Path, metavar="PATH", help="write the findings as Markdown")
    lint.add_argument("--annotate", action="store_true", help="also print GitHub workflow annotations (file:line)")
    lint.set_defaults(func=_later("cmd_lint"))

    init = sub.add_parser(
        "init",
        help="write a starter toolselect.yaml and golden set for a server (seed 001's recipe)",
        usage="toolselect init [--tools FILE | --url URL | -- SERVER CMD…] [-o DIR] [--force] [--draft --provider P --model M]",
    )
    surface_flags(init)
    init.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where to write toolselect.yaml and golden.yaml",
    )
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.add_argument(
        "--draft", action="store_true", help="ask the model to write the prompts (they still need review)"
    )
    init.add_argument("--provider", help="for --draft: anthropic, openai or openai-responses")
    init.add_argument("--model", help="for --draft: the model that writes the prompts")
    init.add_argument("--base-url", metavar="URL", help="for --draft: an OpenAI-compatible (or Anthropic) endpoint")
    init.set_defaults(func=_later("cmd_init"))

    cache_cmd = sub.add_parser("cache", help="answer cache: stats, or prune the answers the last run did not use")
    cache_cmd.add_argument("action", choices=["stats", "prune"])
    cache_cmd.add_argument("-c", "--config", help="config file whose cache_dir to use")
    cache_cmd.add_argument("--cache-dir", metavar="DIR", help="the cache folder (overrides the config)")
    cache_cmd.add_argument("--dry-run", action="store_true", help="prune: only say what would go")
    cache_cmd.set_defaults(func=_later("cmd_cache"), tools=None, url=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    argv, server_command = _split_server_command(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command in ("diff", "action", "cache"):
        args.tools = args.url = None
    if server_command and args.command not in ("eval", "snapshot", "lint", "init"):
        parser.error("'-- SERVER COMMAND' only applies to eval, snapshot, lint and init")
    if server_command and (args.tools or args.url):
        parser.error("give only one of --tools, --url, or -- SERVER COMMAND")
    args.server_command = server_command
    try:
        return args.func(args)
    except ToolselectError as exc:
        _print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug of ours, never a verdict: not exit 1 ("the gate failed")
        if os.environ.get("TOOLSELECT_DEBUG"):
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(
            "  hint: please report it with the command you ran; TOOLSELECT_DEBUG=1 shows the traceback", file=sys.stderr
        )
        return EXIT_INFRA


def _print_error(exc: ToolselectError) -> None:
    """`error: ` before each problem; indented detail lines (hints, server stderr) as they are."""
    for line in str(exc).splitlines() or ["unknown error"]:
        print(
            line if line.startswith(" ") or (line.endswith(":") and "stderr" in line) else f"error: {line}",
            file=sys.stderr,
        )


def _overrides(args: argparse.Namespace):
    from .config import Overrides

    return Overrides(
        config=args.config,
        tools_file=args.tools,
        url=args.url,
        server_command=args.server_command,
        golden=tuple(getattr(args, "golden", ()) or ()),
        provider=getattr(args, "provider", None),
        model=getattr(args, "model", None),
        min_accuracy=getattr(args, "min_accuracy", None),
        repeat=getattr(args, "repeat", None),
        concurrency=getattr(args, "concurrency", None),
        cache_dir=getattr(args, "cache_dir", None),
        no_cache=getattr(args, "no_cache", False),
        cache_only=getattr(args, "cache_only", False),
        temperature=getattr(args, "temperature", None),
        seed=getattr(args, "seed", None),
        timeout_s=getattr(args, "timeout_s", None),
        max_retries=getattr(args, "max_retries", None),
        max_error_rate=getattr(args, "max_error_rate", None),
        base_url=getattr(args, "base_url", None),
        shuffle=getattr(args, "shuffle", None),
        max_requests=getattr(args, "max_requests", None),
        max_drop=getattr(args, "max_drop", None),
        significance=getattr(args, "significance", None),
        fail_on_certain_flips=getattr(args, "fail_on_certain_flips", None),
        max_over_trigger=getattr(args, "max_over_trigger", None),
        min_tool_recall=_floors(getattr(args, "min_tool_recall", [])),
    )


def _floors(items: list[str]) -> dict[str, float] | None:
    from .config import parse_floors

    return parse_floors("\n".join(items), "--min-tool-recall") if items else None


def _settings(args: argparse.Namespace):
    from .config import find_config, load_config, resolve_settings

    cwd = Path.cwd()
    over = _overrides(args)
    path = find_config(args.config, cwd)
    if path is None and not (over.tools_file or over.url or over.server_command):
        from .errors import ConfigError

        raise ConfigError(
            "no config file: toolselect.yaml or toolproof.yaml not found in this folder",
            hint="pass -c FILE, or start one with `toolselect init`",
        )
    loaded = load_config(path, os.environ)
    return loaded, over, resolve_settings(loaded, over, os.environ, cwd)


def _cmd_eval(args: argparse.Namespace) -> int:
    from .pipeline import run_eval
    from .render.console import ConsoleView

    loaded, over, settings = _settings(args)
    view = ConsoleView(quiet=args.quiet)
    if args.dry_run:
        return _dry_run(args, loaded, over, settings)
    if args.base_ref:
        return _eval_against_base(args, loaded, over, settings, view)
    if args.max_drop is not None or args.significance is not None or args.fail_on_certain_flips:
        from .errors import ConfigError

        raise ConfigError(
            "--max-drop, --significance and --fail-on-certain-flips compare against a base: add --base-ref REF (e.g. origin/main)"
        )
    report = run_async(run_eval(loaded, settings, view.hooks()), view)
    if report is None:
        return 130
    view.finish(report)
    _write_outputs(report, args, view)
    return exit_code(report)


def _dry_run(args, loaded, over, settings) -> int:
    """`eval --dry-run`: what the run would ask and cost; nothing is sent to a model."""
    from .budget import check_budget, describe
    from .pipeline import prepare, run_compare

    async def plan():
        if args.base_ref:
            return await run_compare(loaded, settings, over, args.base_ref, Path.cwd(), os.environ, dry_run=True)
        prep = await prepare(loaded, settings, connect=False)
        await prep.aclose()
        return prep.budget

    result = run_async(plan())
    if result is None:
        return 130
    sides = [("head", result.head), ("base", result.base)] if args.base_ref else [("run", result)]
    budgets = [b for _, b in sides if b is not None]
    for name, budget in sides:
        print(describe(budget, name) if budget is not None else f"base: {result.base_note}")
    total = sum(b.requests for b in budgets)
    costs = [b.cost_usd for b in budgets]
    money = "" if any(c is None for c in costs) else f", ≈ ${sum(costs):.4f}"
    print(
        f"total: {total} requests{money}"
        + (f" (max_requests {settings.max_requests})" if settings.max_requests else "")
    )
    check_budget(budgets, settings.max_requests)
    return 0


def _eval_against_base(args, loaded, over, settings, view) -> int:
    """`eval --base-ref REF`: the same comparison the Action makes, in any git checkout."""
    from .gate import comparing, judge
    from .pipeline import Hooks, run_compare
    from .render.comment import SUMMARY_LIMIT, render_comment
    from .report import write_report

    compared = run_async(
        run_compare(loaded, settings, over, args.base_ref, Path.cwd(), os.environ, view.hooks(), Hooks()), view
    )
    if compared is None:
        return 130
    view.finish(compared.head)
    verdict = judge(compared.head, compared.diff, comparing(settings))
    view.print_comparison(compared.diff, verdict, compared.base_note, args.base_ref)
    if args.json:
        write_report(compared.head, args.json)
        if compared.base is not None:
            write_report(compared.base, args.json.with_suffix(".base.json"))
    if args.markdown:
        body = render_comment(
            compared.head,
            verdict,
            base=compared.base,
            diff=compared.diff,
            base_note=compared.base_note,
            comment_id=None,
            limit=SUMMARY_LIMIT,
            summary_hint=False,
        )
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(body, encoding="utf-8")
        view.note(f"PR comment preview written to {args.markdown}")
    if args.junit:
        from .render.junit import render_junit

        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(render_junit(compared.head), encoding="utf-8")
    code = exit_code(compared.head)
    if code == 0 and not verdict.passed:
        from .errors import EXIT_GATE_FAILED

        return EXIT_GATE_FAILED
    return code


def _cmd_diff(args: argparse.Namespace) -> int:
    from .diff import diff_reports, incomparable
    from .errors import EXIT_GATE_FAILED, ConfigError
    from .gate import Comparing, Verdict, compare
    from .render.comment import SUMMARY_LIMIT, render_comment
    from .render.console import ConsoleView
    from .report import read_report

    base, head = read_report(args.base), read_report(args.head)
    reasons = incomparable(base, head)
    if reasons:
        raise ConfigError(f"{args.base} and {args.head} can't be compared: " + "; ".join(reasons))
    diff = diff_reports(base, head, alpha=args.significance or 0.05)
    failed, notes = compare(diff, Comparing(args.max_drop, args.significance, bool(args.fail_on_certain_flips)))
    verdict = Verdict(passed=not failed, reasons=tuple(failed), notes=tuple(notes))
    view = ConsoleView()
    view.print_comparison(diff, verdict, None, str(args.base))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(
            render_comment(
                head, verdict, base=base, diff=diff, comment_id=None, limit=SUMMARY_LIMIT, summary_hint=False
            ),
            encoding="utf-8",
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(diff.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return 0 if verdict.passed else EXIT_GATE_FAILED


def _cmd_action(args: argparse.Namespace) -> int:
    from .action import run_action

    return run_action(dict(os.environ))


def run_async(coro, view=None):
    """Run the pipeline on an event loop of our own; Ctrl-C or SIGTERM cancels it cleanly (answers
    already received stay in the cache, written as they arrived) and returns None.

    (asyncio.run would do, but its Runner briefly needs ~40 MB more at the end of a large run.)"""
    import asyncio
    import signal

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    main_task = loop.create_task(coro)
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, main_task.cancel)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - not on this platform
            pass
    try:
        return loop.run_until_complete(main_task)
    except (KeyboardInterrupt, asyncio.CancelledError):
        if view is not None and view.progress is not None:
            view.progress.stop()
        print(
            "interrupted: the answers received so far are kept in the answer cache; run again to continue",
            file=sys.stderr,
        )
        return None
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        asyncio.set_event_loop(None)
        loop.close()


def exit_code(report) -> int:
    """0 passed, 1 gate failed, 3 the run stopped or the provider failed too often."""
    from .errors import EXIT_GATE_FAILED, EXIT_PASSED

    if report.gate.stopped:
        return EXIT_INFRA
    errors = report.metrics["error_rate"]
    if errors.value is not None and errors.value > report.gate.max_error_rate + 1e-12:
        return EXIT_INFRA
    return EXIT_PASSED if report.passed else EXIT_GATE_FAILED


def _write_outputs(report, args: argparse.Namespace, view) -> None:
    from .render.junit import render_junit
    from .render.markdown import render_markdown
    from .report import write_report

    if args.json:
        write_report(report, args.json)
        view.note(f"JSON report written to {args.json}")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(render_markdown(report), encoding="utf-8")
        view.note(f"Markdown report written to {args.markdown}")
    if args.junit:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(render_junit(report), encoding="utf-8")
        view.note(f"JUnit report written to {args.junit}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
