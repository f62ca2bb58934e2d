"""`toolselect action`: the GitHub Action's step, run by entrypoint.py inside the container.

A straight line: the run decided (decided.py: the inputs as options, the policy's plan, the
settings; pure) → evaluate (and stress, suggest) inside the containment → outputs (outputs.py) →
publish (publish.py: the comment, the review) → exit code. Inputs arrive as
`INPUT_<NAME>` with dashes kept (`min-accuracy` → `INPUT_MIN-ACCURACY`); every declared input is
present and may be empty, and `required` is not enforced by GitHub, so options.py validates them.
The comment is posted before the exit code says the gate failed, and a GitHub failure when
commenting never changes the exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from contextlib import ExitStack, suppress
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .baseline import checked_out
from .config import Loaded, Overrides, find_config, load_config
from .contain import ACTION
from .containment import all_stopped, containment
from .decided import Decided, decide_run
from .errors import (
    EXIT_INTERRUPTED,
    EXIT_PASSED,
    EXIT_USAGE,
    ConfigError,
    Refused,
    ToolselectError,
)
from .github.annotations import annotate_cases, annotate_findings, repo_path
from .github.commands import Workflow, chown_like, run_url
from .matrix import matrix, parts, shard_job
from .meta import Meta, MetaFailure
from .nofollow import fresh_folder, write_text
from .options import OPTIONS, read_inputs
from .outcome import Outcome, evaluate, exit_code, with_stress
from .outputs import REPORT_DIR, Targets, step_outputs, write_outputs
from .pipeline.eval import run_eval
from .pipeline.merge import run_merge
from .pipeline.sides import Against
from .pipeline.stress import stress_against
from .policy import Event, Plan, decide, read_event
from .publish import post, post_artifact, pull_patches, review_lines
from .render.common import accuracy_line
from .render.escape import fence
from .runtime import run_async
from .settings import Settings
from .sourcelines import FilePatch

if TYPE_CHECKING:
    from .render.console import ConsoleView


def run_action(environ: Mapping[str, str]) -> int:
    wf = Workflow(environ)
    one_stream()
    wf.stop_commands()  # the log holds text of the PR's, its server's and the model's: none of it is a command
    try:
        return _run_action(environ, wf)
    finally:
        wf.resume_commands()


def one_stream() -> None:
    """stderr into stdout: one ordered stream, so no line of the log can slip between toolselect's
    `resume` and `stop` of the runner's commands (the runner reads two streams side by side)."""
    sys.stdout.flush()
    sys.stderr.flush()
    with suppress(OSError, ValueError):
        os.dup2(sys.stdout.fileno(), sys.stderr.fileno())


def _run_action(environ: Mapping[str, str], wf: Workflow) -> int:
    try:
        inputs = read_inputs(environ)
    except ConfigError as exc:
        wf.annotate("error", exc.message, title="toolselect: invalid input")
        return EXIT_USAGE
    for o in OPTIONS:
        if o.secret and inputs.get(o.key):
            wf.mask(inputs[o.key])
    # The providers read their keys and endpoints from this environment (never os.environ behind it).
    env = dict(environ) | {
        o.env[0]: inputs[o.key] for o in OPTIONS if o.group == "action" and o.env and inputs.get(o.key)
    }
    env[ACTION] = os.environ[ACTION] = "1"  # the Action's boundary (contain.py, nofollow.py) applies
    workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    workdir = (workspace / inputs["working_directory"]).resolve()
    try:
        os.chdir(workdir)  # report paths are shown relative to the working directory, as locally
    except OSError as exc:
        wf.annotate(
            "error",
            f"working-directory {inputs['working_directory']}: {exc.strerror}",
            title="toolselect: invalid input",
        )
        return EXIT_USAGE
    # what this run may write as root, given back to the workspace's owner however it ends (normally,
    # with an error, or stopped by a signal): the report folder, .git (the base's fetch and worktree),
    # and, once the settings name them, the answer cache and the JUnit file
    owned = [workspace / REPORT_DIR, workspace / ".git"]
    try:
        event = read_event(env)
        if event.name == "workflow_run" and inputs.get("from_artifact"):
            return post_artifact(inputs, decide(event, inputs, None, env), env, wf, workspace)
        return evaluate_event(inputs, event, env, wf, workspace, workdir, owned)
    except ToolselectError as exc:
        title = (
            "toolselect: configuration error" if exc.exit_code == EXIT_USAGE else "toolselect: infrastructure failure"
        )
        wf.annotate("error", str(exc), title=title)
        wf.write_summary(f"### ❌ toolselect could not run\n\n{fence(str(exc))}\n")  # the server's words can't end it
        return exc.exit_code
    finally:
        if all_stopped():  # never while a program of the pull request may still run
            chown_like(owned, workspace)


def install_clients(settings: Settings, wf: Workflow, env: Mapping[str, str]) -> None:
    """The clients the run drives, each installed (from npm, at its pinned or tested version) unless
    actions/cache brought it, before any program of the pull request runs: in the Action a client is
    never emulated because it is missing (only when the run's provider speaks another API, and the run
    says so), and a failed install stops the run (exit 3). The outputs name what the folder holds, for
    the cache's key."""
    from .drive.install import KINDS, VERSION, ensure

    if settings.option("client_mode") == "emulated":
        return
    wanted = {
        (m.client.name, m.client_version)
        for m in settings.models
        if m.client and m.client.name in KINDS and (m.call.provider in KINDS[m.client.name].apis or m.client_version)
    }
    if not wanted:
        return
    folder = Path(settings.option("clients_dir"))
    fresh = False
    for name, version in sorted(wanted, key=str):
        program, found, now = ensure(KINDS[name], version, folder)
        print(f"toolselect: {name} {found} {'installed' if now else 'restored from the cache'}: {program}", flush=True)
        fresh = fresh or now
    home = Path(env.get("HOME") or Path.home())
    chown_like([folder], home)  # the runner user's, as the rest of HOME (it saves the cache and cleans up)
    held = sorted(f"{p.parent.name}-{p.name}" for p in folder.glob("*/*") if VERSION.match(p.name))
    wf.set_outputs({"clients": "+".join(held), "clients-installed": "true" if fresh else "false"})


def check_folders(cache_dir: Path, report_dir: Path, workspace: Path) -> None:
    """The answer cache and the report folder are the run's own: never a symlink (writes and chown
    would follow it out of the workspace), never outside the workspace, and the cache never
    committed (anyone can compute a cache key and commit an answer that decides the verdict)."""
    from .baseline import GitFailed, git

    for name, folder in (("the answer cache", cache_dir), ("the report folder", report_dir)):
        inside = folder.absolute()
        links = [p for p in (inside, *inside.parents) if workspace in p.parents and p.is_symlink()]
        if links:
            raise ConfigError(
                f"{name} {_in(links[-1], workspace)} is a symlink: toolselect writes only into real folders in the "
                "workspace",
                hint="remove the link",
            )
        if folder.exists() and workspace != folder.resolve() and workspace not in folder.resolve().parents:
            raise ConfigError(f"{name} {folder} is outside the workspace", hint="use a folder inside the checkout")
    try:
        tracked = git("ls-files", "--", str(cache_dir), cwd=workspace)
    except (GitFailed, OSError):
        return  # not a git checkout: nothing can be committed
    if tracked:
        shown = _in(cache_dir, workspace)
        raise ConfigError(
            f"the answer cache {shown} is tracked by git: committed answers would decide the verdict (a cache key "
            "can be computed, so an answer can be forged)",
            hint=f"git rm -r --cached {shown} && echo '{shown}/' >> .gitignore; actions/cache keeps it between runs",
        )


def _in(path: Path, workspace: Path) -> str:
    try:
        return path.absolute().relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def evaluate_event(
    inputs: Mapping[str, Any],
    event: Event,
    env: dict[str, str],
    wf: Workflow,
    workspace: Path,
    workdir: Path,
    owned: list[Path],
) -> int:
    """The run an event asks for, to its exit code: decided (decided.py), carried out inside the one
    stretch that contains the pull request's programs, then published. `owned` gets every path it
    will write as root (the caller gives them back to the workspace's owner, whatever happens here)."""
    from .render.console import ConsoleView

    path = find_config(inputs.get("config"), workdir)
    if path is None and not inputs.get("tools_file"):
        raise ConfigError(
            f"no config: toolselect.yaml or toolproof.yaml not found in {inputs['working_directory']}; set the "
            "config input"
        )
    loaded = load_config(path, env)
    headers = loaded.server.headers.values() if loaded.server else ()
    for secret in (*loaded.secrets, *headers):  # what `${VAR}` put into server:, and header values: never printed
        wf.mask(secret)
    run = decide_run(event, inputs, loaded, env, workdir)
    owned += [run.settings.cache_dir, *([run.junit] if run.junit else [])]
    check_folders(run.settings.cache_dir, workspace / REPORT_DIR, workspace)
    for warning in run.plan.warnings:
        wf.annotate("warning", warning, title="toolselect")
    install_clients(run.settings, wf, env)
    view = ConsoleView()
    with containment(env, workspace, print):  # the one stretch in which the pull request's programs run
        outcome = _phases(loaded, run.settings, env, run.over, inputs, run.plan, wf, view, workspace, workdir)
    # every program of the pull request is stopped (and checked gone): what was held is given back
    if outcome is None:
        return EXIT_INTERRUPTED
    if run.settings.shard is not None:  # a matrix job: its part and its answers for the merge job; nothing posted
        return shard_job(outcome, run.settings, workspace, wf)
    return _publish(outcome, run, inputs, event, env, wf, workspace, workdir)


def _publish(
    outcome: Outcome,
    run: Decided,
    inputs: Mapping[str, Any],
    event: Event,
    env: dict[str, str],
    wf: Workflow,
    workspace: Path,
    workdir: Path,
) -> int:
    """An outcome made public: the report folder, the annotations, the comment and the review, the
    step's outputs; the exit code."""
    from .cache import prune_after_run

    plan, settings = run.plan, run.settings
    if outcome.base_note and plan.base_ref:
        wf.annotate("warning", outcome.base_note, title="toolselect: no baseline")
    if outcome.base_failure is not None:
        said = outcome.base_failure.line + (
            f" (hint: {outcome.base_failure.hint})" if outcome.base_failure.hint else ""
        )
        wf.annotate("error", said, title="toolselect: no comparison")
    out_dir = workspace / REPORT_DIR
    fresh_folder(out_dir)  # only what this run writes, never a link the PR committed or planted
    written = write_outputs(outcome, _targets(inputs, env, out_dir, run.junit))
    meta = Meta(
        event=event.name,
        pr=plan.pr,
        head_sha=_head_sha(event),
        base_sha=plan.base_ref,
        fork=plan.fork,
        base_note=outcome.base_note,
        base_failure=MetaFailure(**asdict(outcome.base_failure)) if outcome.base_failure else None,
        run_url=run_url(env),
    )
    write_text(out_dir / "meta.json", meta.model_dump_json(indent=2) + "\n")
    where = repo_path(workdir, workspace)
    pruned = prune_after_run(settings.cache_dir, outcome.head.run.cache_mode)
    writes = outcome.head.run.cache_writes + (outcome.base.run.cache_writes if outcome.base else 0)

    comment_url = review_url = ""
    with wf.annotations():  # GitHub's 10 per level: the run's own first, then failing cases, then lint
        annotate_cases(outcome.head, wf, where, passed=outcome.verdict.passed)
        annotate_findings(outcome.head.lint, wf, where, notes=False)
        if plan.pr is not None and plan.comment != "off":
            create = plan.comment == "always" or bool(outcome.diff and outcome.diff.has_changes)
            comment_url = post(inputs, env, wf, plan.pr, written.comment, create=create)
        head_sha = _head_sha(event)
        if plan.pr is not None and head_sha:
            review_url = review_lines(
                inputs, env, wf, plan.pr, head_sha, outcome, comment_url or run_url(env), plan.review
            )
        for notice in plan.notices:
            wf.annotate("notice", notice, title="toolselect")
        if outcome.head.metrics["accuracy"].denominator == 0:  # a pass that measured nothing is said, not silent
            wf.annotate(
                "notice",
                f"nothing was measured: {accuracy_line(outcome.head)} (write the TODO prompts, then set status: "
                "reviewed: docs/golden-set.md)",
                title="toolselect: nothing measured",
            )
    wf.set_outputs(step_outputs(outcome, comment_url, dirty=writes + pruned > 0) | {"review-url": review_url})

    code = exit_code(outcome)
    if code == EXIT_PASSED and outcome.warned:
        first = outcome.verdict.reasons[0] if outcome.verdict.reasons else "the gate failed"
        said = f"would fail: {first} (mode: warn: not failing the check)"
        wf.annotate("warning", said, title="toolselect: would fail")
    elif code == EXIT_PASSED and not outcome.verdict.passed:
        wf.annotate(
            "notice",
            "the gate failed on the cached answers of a fork PR; not failing the check (set fail-on-fork: true to "
            "fail)",
            title="toolselect",
        )
    return code


def _phases(
    loaded: Loaded,
    settings: Settings,
    env: dict[str, str],
    over: Overrides,
    inputs: Mapping[str, Any],
    plan: Plan,
    wf: Workflow,
    view: ConsoleView,
    workspace: Path,
    workdir: Path,
) -> Outcome | None:
    """Everything that may run a program of the pull request, in order: the base checked out (before
    any of them runs), the eval (or the shards' merge), the stress test, suggest. The outcome; None
    when interrupted. Called only inside `containment()`."""
    shard, merging = matrix(inputs)
    with ExitStack() as stack:
        against = None
        if plan.base_ref:  # before any program of the pull request runs (the stress test's base too)
            checkout = stack.enter_context(checked_out(workdir, plan.base_ref, env))
            against = Against(plan.base_ref, over, workdir, checkout)
        title = "toolselect: evaluating the head" + (f" and the base {plan.base_ref[:12]}" if plan.base_ref else "")
        if shard:
            title = f"toolselect: shard {shard}" + (f", head and base {plan.base_ref[:12]}" if plan.base_ref else "")
        with wf.group(title if merging is None else "toolselect: merging the shards' parts"):
            hooks = replace(view.hooks(), on_secret=wf.mask)
            if merging is not None:
                heads, bases = parts(workspace / merging, settings.cache_dir, wf, settings.labels)
                if not bases:
                    against = None
                run = run_async(run_merge(loaded, settings, env, heads, bases, hooks, against=against), view.stop)
            else:
                run = run_async(run_eval(loaded, settings, env, hooks, against=against), view.stop)
            if run is None:
                return None
            outcome = evaluate(
                run,
                base_label=plan.base_ref,
                base_note=plan.base_note,
                notes=plan.notes,
                enforced=plan.enforced,
            )
            view.finish_outcome(outcome)
        if settings.shard is not None:
            return outcome
        if loaded.has_stress and plan.stress and merging is None:  # the curve on the head and the base too
            stressed = _stress(outcome, loaded, settings, env, against, plan.base_ref, view, wf)
            if stressed is None:
                return None
            outcome = stressed
    if plan.suggest != "off" and plan.pr is not None:  # a `command` picker runs again here: still contained
        return _suggest(outcome, loaded, settings, env, plan, inputs, wf, workspace)
    return outcome


def _stress(
    outcome: Outcome,
    loaded: Loaded,
    settings: Settings,
    env: Mapping[str, str],
    against: Against | None,
    base_ref: str | None,
    view: ConsoleView,
    wf: Workflow,
) -> Outcome | None:
    """The config's stress: section run on the head (and the base): the outcome with its curves, or
    with why the stress test could not run (the eval stands); None when interrupted."""
    with wf.group("toolselect: stress test" + (f" (and the base {base_ref[:12]})" if base_ref else "")):
        hooks = replace(view.hooks(), on_secret=wf.mask)
        try:
            stressed = run_async(stress_against(loaded, settings, env, against, hooks), view.stop)
        except Refused:
            raise
        except ToolselectError as exc:  # the eval stands: the stress test's failure is said, not fatal
            failed = f"the stress test could not run: {exc.message}"
            view.stop()
            wf.annotate("warning", failed, title="toolselect: stress test")
            return replace(outcome, notes=(*outcome.notes, failed))
        view.stop()
        if stressed is None:
            return None
        head_stress, base_stress, stress_note = stressed
        view.print_stress(head_stress)
        return with_stress(outcome, head_stress, base_stress, stress_note)


def _suggest(
    outcome: Outcome,
    loaded: Loaded,
    settings: Settings,
    env: Mapping[str, str],
    plan: Plan,
    inputs: Mapping[str, Any],
    wf: Workflow,
    workspace: Path,
) -> Outcome | None:
    """Rewrites of the descriptions `suggest` names, tested on held-out cases (docs/fix.md), for the
    comment and the review; a failure is a warning (the eval stands); None when interrupted."""
    from .pipeline.suggest import suggest_in_pr

    assert plan.pr is not None and plan.suggest != "off"
    reviewing = plan.review in ("regressions", "all-changes")
    pr = plan.pr

    def files() -> list[FilePatch]:  # asked only when a rewrite passed: where it may be suggested
        return pull_patches(inputs, env, wf, pr) if reviewing else []

    with wf.group(f"toolselect: rewriting descriptions (suggest: {plan.suggest})"):
        try:
            found = run_async(
                suggest_in_pr(
                    loaded, settings, env, outcome, plan.suggest, workspace=workspace, files=files, said=print
                )
            )
        except Refused:
            raise
        except ToolselectError as exc:
            wf.annotate("warning", f"no rewrite was tried: {exc.message}", title="toolselect: suggest")
            return replace(outcome, notes=(*outcome.notes, f"no rewrite was tried: {exc.message}"))
    return None if found is None else replace(outcome, suggestions=found)


def _targets(inputs: Mapping[str, Any], env: Mapping[str, str], out_dir: Path, junit: Path | None) -> Targets:
    summary = env.get("GITHUB_STEP_SUMMARY")
    return Targets(
        json=out_dir / "report.json",
        base_json=out_dir / "base.json",
        comment=out_dir / "comment.md",
        stress_json=out_dir / "stress.json",
        html=out_dir / "report.html",
        junit=junit,
        summary=Path(summary) if summary else None,
        comment_id=inputs["comment_id"],
        run_url=run_url(env),
        report_artifact=inputs.get("report_artifact"),
    )


def _head_sha(event: Event) -> str | None:
    pr = event.pull_request or {}
    head = pr.get("head")
    return head.get("sha") if isinstance(head, dict) else None
