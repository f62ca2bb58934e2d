"""The commands that work from a tool surface without running an eval: snapshot, lint, init, cache."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..config import Overrides
from ..providers.registry import API_PROVIDERS
from ..render.common import tools_count
from ..runtime import run_async
from ..settings import Settings
from ..surface import Surface
from .common import flag_overrides, load_settings


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve a frozen surface over stdio until the client hangs up (surface/serve.py)."""
    import anyio

    from ..surface.file import read_tools_file
    from ..surface.serve import serve

    tools = read_tools_file(args.tools)  # a file that isn't a tools list: one line and exit 2, before serving
    anyio.run(serve, tools, args.name, args.calls)
    return 0


def cmd_snapshot(args: argparse.Namespace) -> int:
    """Write the live surface as a stable tools.json (-o), or say whether a committed one is current
    (--check: exit 1 with what changed when it is stale)."""
    from ..config import find_config, load_config
    from ..errors import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASSED, ConfigError
    from ..locate import display_path
    from ..resolve import surface_source
    from ..surface import build_surface
    from ..surface.file import read_tools_file, tools_file_text, write_tools_file
    from ..surface.launch import capture

    if args.tools_file:
        raise ConfigError("snapshot captures a live server: use --url URL, -- SERVER COMMAND, or a config with server:")
    if (args.output is None) == (args.check is None):
        raise ConfigError("snapshot needs exactly one of -o PATH (write tools.json) or --check PATH (is it current?)")
    if args.check is not None and not args.check.is_file():
        raise ConfigError(
            f"{display_path(args.check)}: no such tools file to check",
            hint=f"write it with `toolselect snapshot -o {display_path(args.check)}` and commit it",
        )
    committed = read_tools_file(args.check) if args.check is not None else []  # a broken file: before the server
    cwd = Path.cwd()
    explicit = args.config or not (args.url or args.server_command)
    path = find_config(args.config, cwd) if explicit else None
    loaded = load_config(path, os.environ)
    server, _ = surface_source(loaded, Overrides(url=args.url, server_command=args.server_command), cwd)
    if server is None:
        raise ConfigError("nothing to snapshot: pass --url URL or -- SERVER COMMAND, or use a config with server:")
    captured = run_async(capture(server, os.environ, _say), message=STOPPED)
    if captured is None:
        return EXIT_INTERRUPTED
    tools = captured.tools
    surface = build_surface(tools, captured.origin)
    if args.check is not None:
        shown = display_path(args.check)
        if args.check.read_text(encoding="utf-8") == tools_file_text(tools):
            print(f"{shown} is current: {tools_count(len(tools))} from {surface.origin} (surface hash {surface.hash})")
            return EXIT_PASSED
        print(f"{shown} is stale: the server at {surface.origin} now lists a different tool surface")
        for line in _surface_report(committed, tools):
            print(line)
        print(f"update it with: toolselect snapshot -o {shown} (with the same server options), and commit it")
        return EXIT_GATE_FAILED
    write_tools_file(args.output, tools)
    print(f"{tools_count(len(tools))} from {surface.origin} written to {args.output}")
    print(f"surface hash {surface.hash}")
    for lo in surface.left_out:
        print(f"  left out {lo.name}: {lo.reason}")
    return 0


def _surface_report(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    """What changed between two tools/list results, tool by tool (then anything else)."""
    from ..diff import surface_changes
    from ..surface import build_surface

    before, after = build_surface(old, "file"), build_surface(new, "server")
    changes = surface_changes(list(before.definitions), list(after.definitions))
    lines = []
    for change in changes:
        lines.append(f"  {change.kind}: {change.name}")
        lines += [f"    {row}" for row in (change.diff or "").splitlines()[2:]]  # without the ---/+++ header
    if not changes:
        old_names = [d["name"] for d in before.definitions]
        new_names = [d["name"] for d in after.definitions]
        what = "the order of the tools" if sorted(old_names) == sorted(new_names) and old_names != new_names else None
        lines.append(f"  changed: {what or 'other fields (title, annotations, outputSchema, formatting)'}")
    return lines


STOPPED = "interrupted: the server was stopped; nothing was written"


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _surface_only(args: argparse.Namespace, config_beside: bool = False) -> Any:
    """Config (optional) and settings for commands that need a tool surface but no model."""
    over = flag_overrides(args, provider="bm25", model="")
    return load_settings(over, config_optional=True, config_beside=config_beside)


def cmd_lint(args: argparse.Namespace) -> int:
    import json

    from rich.markup import escape as escape_markup

    from ..errors import EXIT_INTERRUPTED, EXIT_PASSED, EXIT_USAGE, ConfigError
    from ..lint.client import lint_client
    from ..lint.golden import lint_golden
    from ..lint.stops import replies_unread
    from ..lint.surface import lint_surface
    from ..offer.clients import client_out, present, summary
    from ..pipeline.prepare import load_surface, surface_place
    from ..providers.registry import PROVIDERS
    from ..render.common import lint_summary
    from ..render.console import ConsoleView
    from ..render.markdown import esc, lint_list
    from ..report.schema import FindingOut
    from ..resolve import load_cases

    over = flag_overrides(args, provider="bm25", model="")
    loaded, settings = load_settings(over, config_optional=True, config_beside=True)  # --tools FILE + golden set
    profiles = list({m.client.name: m.client for m in settings.models if m.client}.values())  # evals.clients, --client
    try:
        cases = load_cases(loaded, settings)
    except ConfigError as exc:
        if not str(exc).startswith("no cases"):
            raise
        cases = []
    surface = run_async(load_surface(settings, os.environ, _say), message=STOPPED)
    if surface is None:
        return EXIT_INTERRUPTED
    findings = lint_surface(surface, *surface_place(settings, surface)) + (lint_golden(cases, surface) if cases else [])
    for provider in dict.fromkeys(m.provider for m in settings.models):  # what eval adds for its providers
        findings += replies_unread(cases, provider, PROVIDERS[provider].api)
    mode = settings.option("tool_search")
    if mode != "off" and cases:  # what the API's search would miss, searched with the prompts
        from ..lint.search import search_misses
        from ..pipeline.prepare import eager_tools
        from ..providers.search import RESULTS

        eager = eager_tools(settings.option("eager"), surface, settings.named("eager"))
        findings += search_misses(cases, surface, mode, RESULTS[mode], eager)
    view = ConsoleView()
    counted = f"{len(cases)} case" + ("" if len(cases) == 1 else "s")
    view.console.print(f"tool surface: {tools_count(len(surface.tools))} from {surface.origin}; {counted}")
    server = settings.server_label
    shown = []
    for profile in profiles:
        presented = present(profile, server, [t.name for t in surface.tools])
        findings += lint_client(presented, cases, *surface_place(settings, surface))
        view.console.print(f"client {escape_markup(summary(presented))}")  # what the client does to the surface
        shown.append(client_out(presented))
    if findings:
        view.print_lint(findings, per_code=None if args.all else 3, every="every finding: toolselect lint --all")
    else:
        view.console.print("Lint: no findings")
    out = [FindingOut(**vars(f)).model_dump() for f in findings]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {"schema_version": 1, "surface_hash": surface.hash, "findings": out}
                | ({"clients": shown} if shown else {}),
                indent=2,
            )
            + "\n"
        )
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        clients = [f"- client {esc(summary(present(p, server, [t.name for t in surface.tools])))}" for p in profiles]
        body = "\n".join(
            [
                f"### Lint: {lint_summary(findings) or 'no findings'}",
                "",
                *([*clients, ""] if clients else []),
                *lint_list(findings, per_code=None),
            ]
        )
        args.markdown.write_text(body + "\n", encoding="utf-8")
    if args.annotate:
        from ..github.annotations import annotate_findings
        from ..github.commands import Workflow

        wf = Workflow(os.environ)
        with wf.annotations(rest="`toolselect lint`"):
            annotate_findings(findings, wf)
    failing = [f for f in findings if f.severity == "error" or (args.strict and f.severity == "warning")]
    return EXIT_USAGE if failing else EXIT_PASSED


def cmd_init(args: argparse.Namespace) -> int:
    from ..builds import setup_for
    from ..errors import EXIT_GATE_FAILED, EXIT_INTERRUPTED, ConfigError
    from ..init import render_config, render_golden, render_trajectories
    from ..lint.finding import confusable_pairs
    from ..pipeline.prepare import load_surface
    from ..urls import public_url

    out = args.output
    targets = [out / "toolselect.yaml", out / "golden.yaml"]
    trajectories = out / "trajectories.yaml"
    # --trajectory beside an existing config adds the trajectory file alone
    only_trajectories = args.trajectory and targets[0].exists() and not args.force
    written = [trajectories] if only_trajectories else [*targets, *([trajectories] if args.trajectory else [])]
    existing = [p for p in written if p.exists()]
    if existing and not args.force:
        raise ConfigError(
            f"{existing[0]} already exists: pass --force to overwrite it", hint="or -o DIR to write elsewhere"
        )
    if not (args.tools_file or args.url or args.server_command):
        raise ConfigError("init needs a tool surface: --tools FILE, --url URL, or -- SERVER COMMAND")
    for key in ("provider", "model", "base_url"):  # repeatable for eval (several models); one model drafts
        given = getattr(args, key) or [None]
        if len(given) > 1:
            raise ConfigError(f"init takes one --{key.replace('_', '-')}: one model drafts the prompts")
        setattr(args, key, given[0])
    if args.draft and args.provider not in API_PROVIDERS:
        raise ConfigError(
            f"--draft asks a model to write the prompts: add --provider {'|'.join(API_PROVIDERS)} and --model M"
        )
    _, settings = _surface_only(args)
    surface = run_async(load_surface(settings, os.environ, _say), message=STOPPED)
    if surface is None:
        return EXIT_INTERRUPTED
    drafts = None
    if args.draft:
        drafts = run_async(_draft(args, surface, out))
        if drafts is None:
            return EXIT_INTERRUPTED
    out.mkdir(parents=True, exist_ok=True)
    if args.trajectory:
        trajectories.write_text(render_trajectories(surface), encoding="utf-8")
    if only_trajectories:
        print(
            f"wrote {trajectories}: an 18-case trajectory suite for {len(surface.tools)} tools, all status: "
            f"needs_review; add it to evals.golden in {targets[0]} (golden: [golden.yaml, trajectories.yaml])"
        )
        return 0
    golden = render_golden(surface, drafts, args.boundaries)
    listed = "[golden.yaml, trajectories.yaml]" if args.trajectory else "golden.yaml"
    setup = setup_for(out) if args.server_command else None
    chosen = {"provider": args.provider, "model": args.model, "base_url": args.base_url}
    config_text = render_config(_init_source(args, out), listed, setup=setup, **chosen)
    targets[0].write_text(config_text, encoding="utf-8")
    targets[1].write_text(golden, encoding="utf-8")
    _ignore_the_cache(out / ".gitignore")
    if args.trajectory:
        print(f"wrote {trajectories}: an 18-case trajectory suite, all status: needs_review")
    cases = sum(line.startswith("- name: ") for line in golden.splitlines())
    print(
        f"wrote {targets[0]} and {targets[1]}: {cases} cases for {len(surface.tools)} tools, all status: needs_review"
    )
    pairs = len(confusable_pairs(surface))
    if pairs > args.boundaries:
        print(
            f"{pairs} likely-confusable pairs: boundary cases for the {args.boundaries} most confusable "
            "(--boundaries N for more; lint lists every pair as `confusable`)"
        )
    if setup is not None:
        print(f"server.setup: {setup.command} ({setup.why}): each side's checkout builds its own server")
    if args.provider in API_PROVIDERS and args.model:
        print(
            f"the config asks {args.provider} {args.model}"
            + (f" at {public_url(args.base_url)}" if args.base_url else "")
        )
    if drafts is not None:
        print(f"{drafts.summary()} — by {drafts.by}")
        if args.strict and drafts.missing:
            print("--strict: every prompt must be drafted", file=sys.stderr)
            return EXIT_GATE_FAILED
    print(
        "next: replace the TODO prompts, have a domain owner confirm each label (status: reviewed), then `toolselect "
        "eval`"
    )
    return 0


def _ignore_the_cache(gitignore: Path) -> None:
    """The answer cache is never committed (the Action refuses a tracked one): actions/cache keeps it."""
    line = ".toolselect-cache/"
    text = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    if line not in text.splitlines():
        gitignore.write_text(text + ("" if not text or text.endswith("\n") else "\n") + line + "\n", encoding="utf-8")


async def _draft(args: argparse.Namespace, surface: Surface, out: Path) -> Any:
    """The model's drafts, through the throttle (--concurrency, the endpoint's pace), its retries and the
    answer cache in the output folder (--no-cache asks again), as `eval` asks."""
    from ..drafting import draft
    from ..errors import ConfigError
    from ..options import option
    from ..pipeline.prepare import pacer
    from ..providing import make_provider
    from ..settings import default_settings
    from ..throttle import Throttle

    if not args.model:
        raise ConfigError("--draft needs --model: the model that writes the prompts")
    settings: Settings = default_settings(
        args.provider,
        args.model,
        base_url=args.base_url,
        concurrency=option("concurrency").parse(args.concurrency, "--concurrency") if args.concurrency else 4,
        cache_dir=str(out / ".toolselect-cache"),
    )
    if args.no_cache:
        from dataclasses import replace

        settings = replace(settings, cache_mode="refresh")
    throttle = Throttle(settings.concurrency, pacer(settings))
    provider = make_provider(settings.call, throttle, os.environ, settings.cache_dir, settings.cache_mode)
    provider.connect()
    finished = False
    try:
        drafted = await draft(provider, surface, throttle, args.boundaries)
        finished = True
        return drafted
    finally:
        await provider.aclose()
        provider.finish(None, interrupted=not finished)


def _init_source(args: argparse.Namespace, out: Path) -> str:
    """The surface part of the written config, with paths that work from the output folder."""
    import json

    if args.tools_file:
        return f"tools_file: {json.dumps(os.path.relpath(Path(args.tools_file).resolve(), out.resolve()))}"
    if args.url:
        return f"server:\n  url: {json.dumps(args.url)}"

    def portable(arg: str) -> str:  # a file argument, as the server (run in the config's folder) will see it
        path = Path(arg)
        if not path.exists() or path.is_absolute():
            return arg
        full = Path(os.path.normpath(path.absolute()))  # not resolve(): a venv's python is a symlink to keep
        try:
            return full.relative_to(out.absolute()).as_posix()
        except ValueError:
            return full.as_posix()

    return "server:\n  command: [" + ", ".join(json.dumps(portable(a)) for a in args.server_command) + "]"


def cmd_cache(args: argparse.Namespace) -> int:
    from ..cache import cache_stats, merge_caches, prune
    from ..config import find_config, load_config
    from ..errors import ConfigError

    cwd = Path.cwd()
    if args.sources and args.action != "merge":
        raise ConfigError(f"cache {args.action} takes no folders (only cache merge does)")
    if args.cache_dir:
        root = Path(args.cache_dir)
    else:
        path = find_config(args.config, cwd)
        if path is None:
            from ..errors import ConfigError

            raise ConfigError("no config file here to find the cache in: pass --cache-dir DIR or -c FILE")
        root = path.parent / load_config(path, os.environ).config_value("cache_dir")  # as eval resolves it
    if args.action == "merge":
        if not args.sources:
            raise ConfigError(
                "cache merge needs the caches to copy from: toolselect cache merge DIR… [--cache-dir DIR]"
            )
        merged = merge_caches(args.sources, root)
        print(
            f"{root}: {merged.copied} answers added from {len(args.sources)} caches ({merged.present} already there"
            + (f", {merged.refused} refused: not answers of this format" if merged.refused else "")
            + ")"
        )
        return 0
    if args.action == "stats":
        stats = cache_stats(root)
        print(f"{root}: {stats['entries']} answers, {stats['bytes'] / 1024:.1f} KiB")
        for model, n in sorted(stats["by_model"].items()):
            print(f"  {n:>6}  {model}")
        if stats["unreadable"]:
            print(f"  {stats['unreadable']} unreadable entries (they are asked again; prune removes them)")
        if stats["unused_by_last_run"] is not None:
            print(f"  {stats['unused_by_last_run']} not used by the last run (`toolselect cache prune` removes them)")
        return 0
    removed, freed = prune(root, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    print(f"{verb} {removed} answers the last run did not use ({freed / 1024:.1f} KiB)")
    return 0


def cmd_surface(args: argparse.Namespace) -> int:
    """The tool surface as the model gets it: each tool (as a client names it, with --client), the
    tokens it adds to every request, the heaviest first."""
    import json

    from rich.markup import escape as escape_markup

    from ..budget import prefix_tokens
    from ..errors import EXIT_INTERRUPTED, EXIT_PASSED
    from ..offer import offer
    from ..offer.clients import present, summary
    from ..pipeline.prepare import load_surface
    from ..render.console import ConsoleView

    _, settings = _surface_only(args, config_beside=True)
    surface = run_async(load_surface(settings, os.environ, _say), message=STOPPED)
    if surface is None:
        return EXIT_INTERRUPTED
    view = ConsoleView()
    profile = settings.client
    presented = present(profile, settings.server_label, surface.names) if profile else None
    offered = offer(surface, settings.system, presented)
    rows = sorted(
        ((prefix_tokens([t], None), t.name, offered.from_wire(t.name), t.description) for t in offered.tools),
        key=lambda r: (-r[0], r[1]),
    )
    total = prefix_tokens(offered.tools, offered.system)
    as_whom = f" as {profile.name} presents it" if profile else ""
    view.console.print(
        f"tool surface{escape_markup(as_whom)}: {tools_count(len(rows))} from {escape_markup(surface.origin)}, "
        f"≈ {total:,} tokens in every request (estimated: 4 characters a token)"
    )
    if presented is not None:
        view.console.print(f"client {escape_markup(summary(presented))}")
    width = max((len(r[1]) for r in rows), default=4)
    view.console.print(f"[bold]{'tokens':>7}  {'tool':<{width}}  share  description[/]")
    for tokens, name, behind, description in rows:
        first = " ".join(description.split())
        first = first if len(first) <= 90 else first[:89] + "…"
        mark = f" ({behind})" if behind != name else ""
        share = f"{tokens / total:.0%}" if total else ""
        view.console.print(
            f"{tokens:>7,}  {escape_markup(name):<{width}}  {share:>5}  {escape_markup(first)}{escape_markup(mark)}"
        )
    for lo in surface.left_out:
        view.console.print(f"  [yellow]left out[/] {escape_markup(lo.name)}: {escape_markup(lo.reason)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        shown = [{"tool": behind, "sent_as": name, "tokens": tokens} for tokens, name, behind, _ in rows]
        args.json.write_text(
            json.dumps({"origin": surface.origin, "tokens": total, "tools": shown}, indent=2) + "\n", encoding="utf-8"
        )
    return EXIT_PASSED
