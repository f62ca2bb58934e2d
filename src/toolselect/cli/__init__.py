"""The `toolselect` command: flags → overrides → settings → pipeline → outcome → outputs → exit code.

Kept free of heavy imports at module level so `toolselect --version` starts fast: each command's
module is imported when it runs. The options' flags come from their declarations (options.py).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import EXIT_INFRA, EXIT_INTERRUPTED, EXIT_USAGE, ToolselectError

if TYPE_CHECKING:
    import argparse

SURFACE_COMMANDS = ("eval", "stress", "snapshot", "lint", "init", "surface")


def _later(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command in cli/<module>.py, imported only when it runs (keeps --version fast)."""

    def run(args: argparse.Namespace) -> int:
        command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return command(args)

    return run


def _url(p: argparse.ArgumentParser) -> None:  # a flag of the CLI only: no config key, no input
    p.add_argument("--url", help="an MCP server over streamable HTTP (or SSE when the path ends in /sse)")


def _at_least_zero(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def build_parser(first: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. `first`: the command line's first word; when it names a command,
    only that command's flags are built (argparse takes ~20 µs for each of ~280: a warm run's budget
    counts them), and when it names none, every command's (for the help and argparse's own error)."""
    import argparse
    from pathlib import Path

    from ..options import INIT_BOUNDARIES, add_flags, option, with_flags

    class Unasked(argparse.ArgumentParser):
        """A command the command line did not name: its flags are not built."""

        def __init__(self) -> None:  # no help flag, no formatter: nothing
            pass

        def add_argument(self, *names: Any, **described: Any) -> argparse.Action:
            return argparse.Action([], "unasked")

        def add_mutually_exclusive_group(self, **described: Any) -> Any:
            return self

        def set_defaults(self, **values: Any) -> None:
            pass

    named: list[str] = []

    parser = argparse.ArgumentParser(
        prog="toolselect",
        description="Does the model still pick the right MCP tool, with the right arguments?",
    )
    parser.add_argument("--version", action="version", version=f"toolselect {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, **described: Any) -> argparse.ArgumentParser:
        if first is not None and name != first:
            return Unasked()
        named.append(name)
        return sub.add_parser(name, **described)

    ev = command(
        "eval",
        help="run the golden set and report accuracy, restraint and the confusion matrix",
        usage="toolselect eval [-c CONFIG] [--tools FILE | --url URL | -- SERVER CMD…] [options]",
    )
    add_flags(ev, with_flags(("surface", "run", "client", "gate", "compare", "base", "report")))
    _url(ev)
    cache = ev.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="ask again and refresh the answer cache")
    cache.add_argument(
        "--cache-only", action="store_true", help="never call the API: uncached samples are NOT-EVALUATED"
    )
    ev.add_argument(
        "--json", type=Path, metavar="PATH", help="write the JSON report (with --base-ref, the base's beside it)"
    )
    ev.add_argument(
        "--markdown", type=Path, metavar="PATH", help="write the report as Markdown (with --base-ref: the PR comment)"
    )
    ev.add_argument(
        "--dry-run", action="store_true", help="say how many requests, tokens and dollars the run would take, and stop"
    )
    ev.add_argument("-q", "--quiet", action="store_true", help="print only the verdict")
    ev.set_defaults(func=_later("evaluate", "cmd_eval"))

    st = command(
        "stress",
        help="selection accuracy as distractor tools join yours: the curve, the cliff, the culprits",
        usage="toolselect stress [-c CONFIG] [--tools FILE | --url URL | -- SERVER CMD…] [--sizes N,N,…] [options]",
    )
    add_flags(st, with_flags(("surface", "run", "stress")))
    _url(st)
    stress_cache = st.add_mutually_exclusive_group()
    stress_cache.add_argument("--no-cache", action="store_true", help="ask again and refresh the answer cache")
    stress_cache.add_argument(
        "--cache-only", action="store_true", help="never call the API: uncached samples are NOT-EVALUATED"
    )
    st.add_argument("--json", type=Path, metavar="PATH", help="write the stress report as JSON")
    st.add_argument(
        "--markdown", type=Path, metavar="PATH", help="write it as Markdown, with a Mermaid chart GitHub renders"
    )
    st.add_argument(
        "--against",
        type=Path,
        metavar="BASE.json",
        help="a saved stress report to compare with: its curve beside this one, and fail_on_cliff_move",
    )
    st.add_argument(
        "--dry-run", action="store_true", help="say how many requests and tokens the sizes × seeds would take, and stop"
    )
    st.add_argument("-q", "--quiet", action="store_true", help="print only the curve")
    st.set_defaults(func=_later("stress", "cmd_stress"))

    fx = command(
        "fix",
        help="propose description rewrites and suggest only those that pass a held-out test",
        usage="toolselect fix [-c CONFIG] [--tool NAME]… [--candidates K] [--rewriter PROVIDER:MODEL] "
        "[--patch FILE] [--apply] [--dry-run]",
    )
    add_flags(fx, with_flags(("surface", "run", "fix")))
    _url(fx)
    fx.add_argument(
        "--tool", action="append", default=[], metavar="NAME", help="rewrite this tool (default: those that missed)"
    )
    fx.add_argument("--patch", type=Path, metavar="FILE", help="write the accepted rewrites as a unified diff")
    fx.add_argument("--apply", action="store_true", help="write the accepted rewrites into their source files")
    fx.add_argument("--dry-run", action="store_true", help="say the most it could ask, and stop (no key needed)")
    fx.set_defaults(func=_later("fix", "cmd_fix"))

    df = command("diff", help="compare two saved JSON reports (base, head) under the head's recorded gate")
    df.add_argument("base", type=Path, metavar="BASE.json")
    df.add_argument("head", type=Path, metavar="HEAD.json")
    add_flags(df, with_flags(("compare",)))
    df.add_argument("--markdown", type=Path, metavar="PATH", help="write the comparison as the PR comment Markdown")
    df.add_argument("--json", type=Path, metavar="PATH", help="write the diff as JSON")
    add_flags(df, [option("html"), option("mode")])
    df.set_defaults(func=_later("evaluate", "cmd_diff"))

    mg = command(
        "merge",
        help="put the parts of a sharded run (eval --shard I/N) back together: one report, one verdict",
        usage="toolselect merge PART.json… [--base-parts PART.json… --base-ref REF] [-o report.json] [options]",
    )
    mg.add_argument("parts", type=Path, nargs="+", metavar="PART.json", help="the head's parts, one per shard")
    mg.add_argument(
        "--base-parts", type=Path, nargs="+", default=[], metavar="PART.json", help="the base's parts (with --base-ref)"
    )
    add_flags(
        mg,
        [o for o in with_flags(("surface", "run", "client", "gate", "compare", "base", "report")) if o.key != "shard"],
    )
    mg.add_argument("-o", "--json", type=Path, metavar="PATH", help="write the merged JSON report")
    mg.add_argument("--markdown", type=Path, metavar="PATH", help="write the report (with a base: the PR comment)")
    mg.add_argument("-q", "--quiet", action="store_true", help="print only the verdict")
    mg.set_defaults(func=_later("evaluate", "cmd_merge"))

    act = command("action", help="run as the GitHub Action (reads INPUT_* and the GitHub environment)")
    act.set_defaults(func=_cmd_action)

    snap = command(
        "snapshot",
        help="capture a live server's tool surface into a tools.json file",
        usage="toolselect snapshot [-c CONFIG] [--url URL | -- SERVER CMD…] (-o tools.json | --check tools.json)",
    )
    add_flags(snap, [option("config"), option("tools_file")])
    _url(snap)
    snap.add_argument("-o", "--output", type=Path, metavar="PATH", help="where to write tools.json")
    snap.add_argument(
        "--check",
        type=Path,
        metavar="PATH",
        help="exit 1 (saying what changed) when this committed tools.json is stale",
    )
    snap.set_defaults(func=_later("surface", "cmd_snapshot"))

    serve = command(
        "serve",
        help="serve a tools.json over stdio as an MCP server: tools/list only, every tools/call refused (what a "
        "driven client connects to; try a client against a snapshot)",
        usage="toolselect serve TOOLS.json [--name NAME] [--calls PATH]",
    )
    serve.add_argument("tools", type=Path, metavar="TOOLS.json", help="a tools/list result, as snapshot writes it")
    serve.add_argument("--name", default="toolselect", help="the server's name in its initialize answer")
    serve.add_argument("--calls", type=Path, metavar="PATH", help="append each refused tools/call here (JSON lines)")
    serve.set_defaults(func=_later("surface", "cmd_serve"))

    lint = command(
        "lint",
        help="check the tool surface and the golden set before any model is asked",
        usage="toolselect lint [-c CONFIG] [--tools FILE | --url URL | -- SERVER CMD…] [--golden FILE]… "
        "[--client NAME]… [--strict] [--all]",
    )
    add_flags(lint, with_flags(("surface", "client")))
    _url(lint)
    lint.add_argument("--strict", action="store_true", help="warnings fail too")
    lint.add_argument(
        "--all", action="store_true", help="show every finding (default: 3 of each code, the rest counted)"
    )
    lint.add_argument("--json", type=Path, metavar="PATH", help="write the findings as JSON")
    lint.add_argument("--markdown", type=Path, metavar="PATH", help="write the findings as Markdown")
    lint.add_argument("--annotate", action="store_true", help="also print GitHub workflow annotations (file:line)")
    lint.set_defaults(func=_later("surface", "cmd_lint"))

    init = command(
        "init",
        help="write a starter toolselect.yaml and golden set for a server (asks per tool, likely confusions, "
        "no-tool cases)",
        usage="toolselect init [--tools FILE | --url URL | -- SERVER CMD…] [-o DIR] [--force] "
        "[--boundaries N] [--draft --provider P --model M [--concurrency N] [--no-cache] [--strict]] [--trajectory]",
    )
    add_flags(init, [option("tools_file"), option("provider"), option("model"), option("base_url")])
    _url(init)
    init.add_argument("-o", "--output", type=Path, default=Path("."), metavar="DIR", help="where to write the files")
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.add_argument(
        "--draft", action="store_true", help="ask the model to write the prompts (they still need review)"
    )
    add_flags(init, [option("concurrency")])
    init.add_argument(
        "--no-cache", action="store_true", help="--draft: ask again (the answers are cached beside the written files)"
    )
    init.add_argument(
        "--strict", action="store_true", help="--draft: a prompt the model could not draft fails (exit 1)"
    )
    init.add_argument(
        "--trajectory",
        action="store_true",
        help="also write trajectories.yaml: an 18-case trajectory suite for the surface (alone beside an existing "
        "config)",
    )
    init.add_argument(
        "--boundaries",
        type=_at_least_zero,
        default=INIT_BOUNDARIES,
        metavar="N",
        help=f"boundary cases for the N most confusable pairs of tools (default {INIT_BOUNDARIES})",
    )
    init.set_defaults(func=_later("surface", "cmd_init"))

    view = command(
        "surface",
        help="the tool surface as the model gets it: every tool and the tokens it adds to each request, "
        "the heaviest first",
        usage="toolselect surface [-c CONFIG] [--tools FILE | --url URL | -- SERVER CMD…] [--client NAME] "
        "[--json PATH]",
    )
    add_flags(view, [*with_flags(("surface",)), option("clients")])
    _url(view)
    view.add_argument("--json", type=Path, metavar="PATH", help="write the tools and their tokens as JSON")
    view.set_defaults(func=_later("surface", "cmd_surface"))

    cl = command(
        "clients",
        help="install a client toolselect drives (claude-code, codex, gemini-cli, copilot-cli, opencode) from npm, "
        "at the version it was tested with; capture what it does to a server's tools (its observed facts, as YAML)",
        usage="toolselect clients {install,capture} NAME[@VERSION] [--clients-dir DIR] [--out FILE]",
    )
    cl.add_argument("action", choices=["install", "capture"])
    cl.add_argument("client", metavar="NAME[@VERSION]", help="claude-code, codex, or one pinned: codex@0.171.0")
    add_flags(cl, [option("clients_dir")])
    cl.add_argument("--out", type=Path, metavar="FILE", help="capture: write the facts to FILE (else stdout)")
    cl.set_defaults(func=_later("clients", "cmd_clients"))

    imp = command(
        "import",
        help="turn a published eval suite into a golden file (Apify's {query, expectedTools}, the golden-set "
        "JSONL, promptfoo tool-call tests)",
    )
    imp.add_argument("file", type=Path, metavar="FILE", help="the suite: JSON, JSONL or YAML")
    imp.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("golden.imported.yaml"),
        metavar="PATH",
        help="the golden file to write",
    )
    imp.add_argument("--force", action="store_true", help="overwrite an existing file")
    imp.set_defaults(func=_later("importing", "cmd_import"))

    cache_cmd = command(
        "cache",
        help="answer cache: stats, prune the answers the last run did not use, or merge other caches into it",
        usage="toolselect cache {stats,prune} [-c CONFIG] [--cache-dir DIR]\n       toolselect cache merge SOURCE_DIR… "
        "[--cache-dir DIR]",
    )
    cache_cmd.add_argument("action", choices=["stats", "prune", "merge"])
    cache_cmd.add_argument("sources", type=Path, nargs="*", metavar="SOURCE_DIR", help="merge: caches to copy from")
    add_flags(cache_cmd, [option("config"), option("cache_dir")])
    cache_cmd.add_argument("--dry-run", action="store_true", help="prune: only say what would go")
    cache_cmd.set_defaults(func=_later("surface", "cmd_cache"))
    return parser if named else build_parser()


def main(argv: list[str] | None = None, *, own_process: bool | None = None) -> int:
    """`own_process`: toolselect is this process's program (the `toolselect` command, the Action's
    entrypoint), so it may become the subreaper of what it starts and sweep it; by default when
    `argv` comes from the command line. A caller that imports it keeps its own children."""
    own = argv is None if own_process is None else own_process
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # answered before the parser (and the option declarations) are imported
        print(f"toolselect {__version__}")
        return 0
    server_command: tuple[str, ...] | None = None
    if "--" in argv:
        i = argv.index("--")
        argv, server_command = argv[:i], tuple(argv[i + 1 :]) or None
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if server_command and args.command not in SURFACE_COMMANDS:
        parser.error("'-- SERVER COMMAND' only applies to eval, stress, snapshot, lint, init and surface")
    given = [x for x in (getattr(args, "tools_file", None), getattr(args, "url", None), server_command) if x]
    if len(given) > 1:
        parser.error("give only one of --tools, --url, or -- SERVER COMMAND")
    args.server_command = server_command
    args.own_process = own
    from ..sweep import Survived, become_subreaper, sweep

    if own:
        become_subreaper()  # what the pull request's programs detach stays below this process, and is swept
    try:
        code: int = args.func(args)
        return code
    except ToolselectError as exc:
        _print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if os.environ.get("TOOLSELECT_DEBUG"):
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(
            "  hint: please report it with the command you ran; TOOLSELECT_DEBUG=1 shows the traceback", file=sys.stderr
        )
        return EXIT_INFRA
    finally:
        if own:
            try:
                sweep(os.environ)  # at the end at the latest, nothing any of them started is still running
            except Survived as exc:
                _print_error(exc)


def _print_error(exc: ToolselectError) -> None:
    """`error: ` before each problem; indented detail lines (hints, server stderr) as they are."""
    for line in str(exc).splitlines() or ["unknown error"]:
        detail = line.startswith((" ", "(")) or line.endswith("(last lines):")
        print(line if detail else f"error: {line}", file=sys.stderr)


def _cmd_action(args: argparse.Namespace) -> int:
    from ..action import run_action
    from ..contain import IN_IMAGE
    from ..runtime import secrets_apart
    from ..sweep import own_namespace

    # inputs, keys and tokens out of this process's environment before any code from the PR runs
    environ = secrets_apart(dict(os.environ), ["-m", "toolselect", "action"])
    if args.own_process and not environ.get(IN_IMAGE):
        # outside the image (runner: host), the PR's programs share toolselect's uid: they are stopped
        # all at once as the processes of its own PID namespace, where the machine allows one
        own_namespace()
    return run_action(environ)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
