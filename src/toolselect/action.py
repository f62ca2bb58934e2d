"""`toolselect action`: the GitHub Action's step, run by entrypoint.py inside the container.

Inputs arrive as `INPUT_<NAME>` with dashes kept (`min-accuracy` → `INPUT_MIN-ACCURACY`); every
declared input is present and may be empty, and `required` is not enforced by GitHub, so they are
validated here. On a pull request the head and the base are evaluated and diffed; on a push only
the head (which seeds the answer cache for every PR). The comment is posted before the exit code
says the gate failed, and a GitHub failure when commenting never changes the exit code.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .config import parse_floors
from .errors import EXIT_GATE_FAILED, EXIT_INFRA, EXIT_PASSED, EXIT_USAGE, ConfigError, ToolselectError
from .github.commands import Workflow, chown_like

REPORT_DIR = "toolselect-report"
API_KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY",),
    "openai-responses": ("OPENAI_API_KEY",),
}
DEFAULTS = {
    "config": "",
    "golden": "",
    "tools-file": "",
    "provider": "",
    "model": "",
    "min-accuracy": "",
    "max-drop": "",
    "repeat": "",
    "concurrency": "",
    "cache-dir": ".toolselect-cache",
    "base-ref": "",
    "comment": "always",
    "comment-id": "default",
    "github-token": "",
    "anthropic-api-key": "",
    "openai-api-key": "",
    "openai-base-url": "",
    "working-directory": ".",
    "junit": "",
    "fail-on-fork": "false",
    "from-artifact": "",
    "significance": "",
    "fail-on-certain-flips": "",
    "max-over-trigger": "",
    "min-tool-recall": "",
    "max-requests": "",
}


@dataclass(frozen=True)
class Inputs:
    config: str | None
    golden: tuple[str, ...]
    tools_file: str | None
    provider: str | None
    model: str | None
    min_accuracy: float | None
    max_drop: float | None
    repeat: int | None
    concurrency: int | None
    cache_dir: str
    base_ref: str | None
    comment: Literal["always", "on-change", "off"]
    comment_id: str
    github_token: str
    anthropic_api_key: str
    openai_api_key: str
    openai_base_url: str | None
    working_directory: str
    junit: str | None
    fail_on_fork: bool
    from_artifact: str | None
    significance: float | None = None
    fail_on_certain_flips: bool | None = None
    max_over_trigger: float | None = None
    min_tool_recall: dict[str, float] | None = None
    max_requests: int | None = None


def read_inputs(environ: dict[str, str]) -> Inputs:
    """Every input, validated; an invalid one is a ConfigError that names the input."""
    raw = {name: environ.get(f"INPUT_{name.upper()}", "").strip() or default for name, default in DEFAULTS.items()}

    def number(name: str, low: float, high: float | None, cast=float):
        text = raw[name]
        if not text:
            return None
        try:
            value = cast(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            kind = "a whole number" if cast is int else "a number"
            raise ConfigError(f"input {name} must be {kind} (got {text!r})") from None
        if value < low or (high is not None and value > high):
            span = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            unit = {
                "min-accuracy": "; it is a share: 0.9 means 90%",
                "max-drop": "; it is in points: 5 means five points",
            }
            raise ConfigError(f"input {name} must be {span} (got {text}){unit.get(name, '')}")
        return value

    if raw["comment"] not in ("always", "on-change", "off"):
        raise ConfigError(f"input comment must be always, on-change or off (got {raw['comment']!r})")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", raw["comment-id"]):
        raise ConfigError(
            f"input comment-id may use letters, digits, '.', '_' and '-' only (got {raw['comment-id']!r})"
        )
    for flag in ("fail-on-fork", "fail-on-certain-flips"):
        if raw[flag] and raw[flag].lower() not in ("true", "false"):
            raise ConfigError(f"input {flag} must be true or false (got {raw[flag]!r})")
    significance = number("significance", 0, 1)
    if significance in (0, 1):
        raise ConfigError(f"input significance must be between 0 and 1, e.g. 0.05 (got {raw['significance']})")
    return Inputs(
        config=raw["config"] or None,
        golden=tuple(g.strip() for g in re.split(r"[\n,]", raw["golden"]) if g.strip()),
        tools_file=raw["tools-file"] or None,
        provider=raw["provider"] or None,
        model=raw["model"] or None,
        min_accuracy=number("min-accuracy", 0, 1),
        max_drop=number("max-drop", 0, None),
        repeat=number("repeat", 1, None, int),
        concurrency=number("concurrency", 1, None, int),
        cache_dir=raw["cache-dir"],
        base_ref=raw["base-ref"] or None,
        comment=raw["comment"],  # type: ignore[arg-type]
        comment_id=raw["comment-id"],
        github_token=raw["github-token"],
        anthropic_api_key=raw["anthropic-api-key"],
        openai_api_key=raw["openai-api-key"],
        openai_base_url=raw["openai-base-url"] or None,
        working_directory=raw["working-directory"],
        junit=raw["junit"] or None,
        fail_on_fork=raw["fail-on-fork"].lower() == "true",
        from_artifact=raw["from-artifact"] or None,
        significance=significance,
        fail_on_certain_flips=None
        if not raw["fail-on-certain-flips"]
        else raw["fail-on-certain-flips"].lower() == "true",
        max_over_trigger=number("max-over-trigger", 0, 1),
        min_tool_recall=parse_floors(raw["min-tool-recall"], "input min-tool-recall")
        if raw["min-tool-recall"]
        else None,
        max_requests=number("max-requests", 1, None, int),
    )


class Meta(BaseModel):
    """`toolselect-report/meta.json`: what a fork PR's run hands to the workflow_run poster."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[1] = 1
    event: str
    pr: int | None = None
    head_sha: str | None = None
    base_sha: str | None = None
    fork: bool = False
    base_note: str | None = None
    run_url: str | None = None


@dataclass(frozen=True)
class Event:
    name: str
    payload: dict[str, Any]

    @property
    def pull_request(self) -> dict[str, Any] | None:
        pr = self.payload.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def fork(self) -> bool:
        pr = self.pull_request
        if not pr:
            return False
        head = ((pr.get("head") or {}).get("repo") or {}).get("full_name")
        base = ((pr.get("base") or {}).get("repo") or {}).get("full_name")
        return bool(head and base and head != base)


def read_event(environ: dict[str, str]) -> Event:
    path = environ.get("GITHUB_EVENT_PATH")
    payload: dict[str, Any] = {}
    if path and Path(path).is_file():
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"GITHUB_EVENT_PATH {path} is not readable JSON: {exc}") from None
    return Event(environ.get("GITHUB_EVENT_NAME", ""), payload if isinstance(payload, dict) else {})


def run_url(environ: dict[str, str]) -> str | None:
    server, repo, run = environ.get("GITHUB_SERVER_URL"), environ.get("GITHUB_REPOSITORY"), environ.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def run_action(environ: dict[str, str]) -> int:
    wf = Workflow(environ)
    try:
        inputs = read_inputs(environ)
    except ConfigError as exc:
        wf.annotate("error", exc.message, title="toolselect: invalid input")
        return EXIT_USAGE
    for secret in (inputs.github_token, inputs.anthropic_api_key, inputs.openai_api_key):
        wf.mask(secret)
    # The SDKs read their keys from the usual variables.
    for value, name in (
        (inputs.anthropic_api_key, "ANTHROPIC_API_KEY"),
        (inputs.openai_api_key, "OPENAI_API_KEY"),
        (inputs.openai_base_url, "OPENAI_BASE_URL"),
    ):
        if value:
            os.environ[name] = value
            environ[name] = value
    workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    workdir = (workspace / inputs.working_directory).resolve()
    try:
        os.chdir(workdir)
    except OSError as exc:
        wf.annotate(
            "error", f"working-directory {inputs.working_directory}: {exc.strerror}", title="toolselect: invalid input"
        )
        return EXIT_USAGE
    try:
        event = read_event(environ)
        if event.name == "workflow_run" and inputs.from_artifact:
            return post_from_artifact(inputs, event, environ, wf, workspace)
        return evaluate(inputs, event, environ, wf, workspace, workdir)
    except ToolselectError as exc:
        title = (
            "toolselect: configuration error" if exc.exit_code == EXIT_USAGE else "toolselect: infrastructure failure"
        )
        wf.annotate("error", str(exc), title=title)
        wf.write_summary(f"### ❌ toolselect could not run\n\n```\n{exc}\n```\n")
        return exc.exit_code


def evaluate(
    inputs: Inputs, event: Event, environ: dict[str, str], wf: Workflow, workspace: Path, workdir: Path
) -> int:
    from .cache import prune
    from .cli import exit_code, run_async
    from .config import Overrides, find_config, load_config, resolve_settings
    from .gate import Verdict, comparing, judge
    from .pipeline import Hooks, run_compare, run_eval
    from .render.comment import SUMMARY_LIMIT, render_comment
    from .render.console import ConsoleView
    from .render.junit import render_junit
    from .report import write_report

    pr = event.pull_request
    notes: list[str] = []
    over = Overrides(
        config=inputs.config,
        tools_file=inputs.tools_file,
        golden=inputs.golden,
        provider=inputs.provider,
        model=inputs.model,
        min_accuracy=inputs.min_accuracy,
        repeat=inputs.repeat,
        concurrency=inputs.concurrency,
        cache_dir=inputs.cache_dir,
        max_drop=inputs.max_drop,
        significance=inputs.significance,
        fail_on_certain_flips=inputs.fail_on_certain_flips,
        max_over_trigger=inputs.max_over_trigger,
        min_tool_recall=inputs.min_tool_recall,
        max_requests=inputs.max_requests,
    )
    path = find_config(inputs.config, workdir)
    if path is None and not inputs.tools_file:
        raise ConfigError(
            f"no config: toolselect.yaml or toolproof.yaml not found in {inputs.working_directory}; set the config input"
        )
    loaded = load_config(path, environ)
    settings = resolve_settings(loaded, over, environ, workdir)
    keyless = settings.provider in API_KEYS and not any(environ.get(k) for k in API_KEYS[settings.provider])
    if event.fork or keyless:
        over = replace(over, cache_only=True)
        settings = resolve_settings(loaded, over, environ, workdir)
        if event.fork:
            notes.append(
                "fork PR: no secrets and a read-only token here, so only answers already in the cache were "
                "evaluated; the comment is posted by the workflow_run workflow"
                + ("" if inputs.fail_on_fork else ", and this check does not fail on the gate")
            )
        elif settings.provider in API_KEYS:
            wf.annotate(
                "warning",
                f"no API key for {settings.provider}: evaluating cached answers only "
                f"(pass {'anthropic' if settings.provider == 'anthropic' else 'openai'}-api-key)",
                title="toolselect",
            )
    view = ConsoleView()
    base_ref = inputs.base_ref or ((pr.get("base") or {}).get("sha") if pr else None)
    with wf.group("toolselect: evaluating the head" + (f" and the base {base_ref[:12]}" if base_ref else "")):
        if base_ref:
            result = run_async(
                run_compare(loaded, settings, over, base_ref, workdir, environ, view.hooks(), Hooks()), view
            )
            if result is None:
                return 130
            head, base, diff, base_note = result.head, result.base, result.diff, result.base_note
        else:
            head = run_async(run_eval(loaded, settings, view.hooks()), view)
            if head is None:
                return 130
            base = diff = None
            base_note = None if pr else "push: head only (this run seeds the answer cache for pull requests)"
        view.finish(head)
    if base_note and base_ref:
        wf.annotate("warning", base_note, title="toolselect: no baseline")
    verdict = judge(head, diff, comparing(settings))
    verdict = Verdict(verdict.passed, verdict.reasons, (*notes, *verdict.notes))
    url = run_url(environ)

    out_dir = workspace / REPORT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    write_report(head, out_dir / "report.json")
    if base is not None:
        write_report(base, out_dir / "base.json")
    comment = render_comment(
        head, verdict, base=base, diff=diff, base_note=base_note, comment_id=inputs.comment_id, run_url=url
    )
    summary = render_comment(
        head,
        verdict,
        base=base,
        diff=diff,
        base_note=base_note,
        comment_id=None,
        run_url=url,
        limit=SUMMARY_LIMIT,
        summary_hint=False,
    )
    (out_dir / "comment.md").write_text(comment, encoding="utf-8")
    meta = Meta(
        event=event.name,
        pr=(pr or {}).get("number"),
        head_sha=((pr or {}).get("head") or {}).get("sha"),
        base_sha=base_ref,
        fork=event.fork,
        base_note=base_note,
        run_url=url,
    )
    (out_dir / "meta.json").write_text(meta.model_dump_json(indent=2) + "\n", encoding="utf-8")
    written = [out_dir]
    if inputs.junit:
        junit = workdir / inputs.junit
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(render_junit(head), encoding="utf-8")
        written.append(junit)

    annotate_cases(head, wf, workdir, workspace)
    annotate_lint(head, wf, workdir, workspace)
    pruned = 0
    if settings.cache_mode in ("use", "refresh") and head.run.cache_mode != "off":
        try:
            pruned, _ = prune(settings.cache_dir)
        except ConfigError:
            pruned = 0
    dirty = head.run.cache_writes + (base.run.cache_writes if base else 0) + pruned > 0
    written.append(settings.cache_dir)
    written.append(workspace / ".git")  # the base commit's fetch and worktree write there

    wf.write_summary(summary)
    comment_url = ""
    if pr and inputs.comment != "off" and not event.fork:
        comment_url = post(
            inputs,
            environ,
            wf,
            pr["number"],
            comment,
            create=inputs.comment == "always" or bool(diff and diff.has_changes),
        )
    elif event.fork:
        wf.annotate(
            "notice",
            "fork PR: the comment is left to the workflow_run workflow (examples/workflows/toolselect-comment.yml); "
            f"the report is in {REPORT_DIR}/",
            title="toolselect",
        )

    acc = head.metrics["accuracy"]
    wf.set_outputs(
        {
            "accuracy": _share(acc.value),
            "tool-accuracy": _share(head.metrics["tool_accuracy"].value),
            "arg-accuracy": _share(head.metrics["arg_accuracy"].value),
            "base-accuracy": _share(base.metrics["accuracy"].value) if base else "",
            "accuracy-delta": f"{diff.metrics['accuracy'].delta_pt:.2f}"
            if diff and diff.metrics["accuracy"].delta_pt is not None
            else "",
            "passed": "true" if verdict.passed else "false",
            "report": f"{REPORT_DIR}/report.json",
            "comment-url": comment_url,
            "cache-dirty": "true" if dirty else "false",
        }
    )
    chown_like(written, workspace)

    code = exit_code(head)
    if code == EXIT_INFRA:
        return code
    if not verdict.passed:
        if event.fork and not inputs.fail_on_fork:
            wf.annotate(
                "notice",
                "the gate failed on the cached answers of a fork PR; not failing the check (set fail-on-fork: true to fail)",
                title="toolselect",
            )
            return EXIT_PASSED
        return EXIT_GATE_FAILED
    return EXIT_PASSED


def _share(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def annotate_cases(head, wf: Workflow, workdir: Path, workspace: Path, limit: int = 50) -> None:
    """One `::error` per failing reviewed case, at its golden file line (relative to the repo)."""
    from .report import headline, pick_name

    shown = 0
    for case in head.cases:
        outcome, sample = headline(case)
        if outcome in ("PASS", "NOT-EVALUATED") or case.status == "needs_review":
            continue
        if shown == limit:
            wf.annotate("warning", f"more failing cases than {limit}: see the job summary", title="toolselect")
            break
        shown += 1
        file = _repo_path(case.source.file, workdir, workspace)
        rate = f" ({case.passed}/{case.evaluated} samples passed)" if len(case.samples) > 1 else ""
        if case.split == "holdout":
            message = f"a holdout case failed: {outcome}{rate}"
        else:
            why = sample.reasons[0] if sample and sample.reasons else f"picked {pick_name(sample)}"
            message = f"case '{case.name}': {why}{rate}"
        wf.annotate("error", message, file=file, line=case.source.line, title=f"toolselect {outcome}")


def _repo_path(file: str | None, workdir: Path, workspace: Path) -> str | None:
    if not file:
        return None
    try:
        return (workdir / file).resolve().relative_to(workspace).as_posix()
    except ValueError:
        return None


def annotate_lint(head, wf: Workflow, workdir: Path, workspace: Path, limit: int = 30) -> None:
    """Lint findings as annotations at their file and line (warnings and errors; notes stay in the summary)."""
    from .render.common import sorted_findings

    shown = [f for f in sorted_findings(head.lint) if f.severity in ("error", "warning")]
    for f in shown[:limit]:
        message = f.message + (f" — fix: {f.fix}" if f.fix else "")
        wf.annotate(
            f.severity,
            message,
            file=_repo_path(f.file, workdir, workspace),
            line=f.line,
            title=f"toolselect lint {f.code}",
        )


def post(inputs: Inputs, environ: dict[str, str], wf: Workflow, number: int, body: str, create: bool) -> str:
    """Upsert the sticky comment; any GitHub failure is a warning, never a different exit code."""
    from github import GithubException
    from requests.exceptions import RequestException

    from .github.comment import make_client, upsert_comment
    from .render.comment import marker

    repo = environ.get("GITHUB_REPOSITORY")
    if not inputs.github_token or not repo:
        wf.annotate(
            "warning", "no github-token (or GITHUB_REPOSITORY): the PR comment was not posted", title="toolselect"
        )
        return ""
    gh = make_client(environ.get("GITHUB_API_URL", "https://api.github.com"), inputs.github_token)
    try:
        posted = upsert_comment(gh, repo, number, body, marker(inputs.comment_id), create=create)
        print(f"toolselect: PR comment {posted.action}{': ' + posted.url if posted.url else ''}", flush=True)
        return posted.url
    except GithubException as exc:
        message = (exc.data or {}).get("message") if isinstance(exc.data, dict) else None
        hint = " (the job needs `permissions: pull-requests: write`)" if exc.status == 403 else ""
        wf.annotate(
            "warning",
            f"could not post the PR comment: GitHub answered {exc.status} {message or ''}{hint}".strip(),
            title="toolselect",
        )
    except (RequestException, AssertionError) as exc:
        wf.annotate("warning", f"could not post the PR comment: {exc}", title="toolselect")
    finally:
        gh.close()
    return ""


def post_from_artifact(inputs: Inputs, event: Event, environ: dict[str, str], wf: Workflow, workspace: Path) -> int:
    """The fork-safe poster (`on: workflow_run`): re-render the comment from the artifact's JSON,
    treated as untrusted data, for the PR found through the API — never the artifact's word."""
    from .diff import diff_reports, incomparable
    from .gate import Comparing, Verdict, judge
    from .github.comment import find_pull_request, make_client
    from .render.comment import render_comment
    from .report import read_report

    folder = (workspace / inputs.from_artifact).resolve()
    for name in ("report.json", "meta.json", "base.json"):
        file = folder / name
        if file.exists() and file.stat().st_size > 50 * 1024 * 1024:
            raise ConfigError(f"{file}: larger than 50 MB; not a toolselect artifact")
    try:
        meta = Meta.model_validate_json((folder / "meta.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{folder}/meta.json is not a toolselect artifact: {str(exc).splitlines()[0]}") from None
    head = read_report(folder / "report.json")
    base = read_report(folder / "base.json") if (folder / "base.json").exists() else None
    if base is not None and incomparable(base, head):
        base = None
    diff = diff_reports(base, head, alpha=inputs.significance or 0.05) if base is not None else None
    run = event.payload.get("workflow_run") or {}
    head_sha = run.get("head_sha")
    owner = ((run.get("head_repository") or {}).get("owner") or {}).get("login")
    branch = run.get("head_branch")
    if run.get("event") != "pull_request" or not (head_sha and owner and branch):
        wf.annotate("notice", "the triggering run was not a pull_request run: nothing to post", title="toolselect")
        return EXIT_PASSED
    if meta.head_sha and meta.head_sha != head_sha:
        wf.annotate(
            "warning",
            "the artifact was made for another commit than the triggering run: not posting",
            title="toolselect",
        )
        return EXIT_PASSED
    repo = environ.get("GITHUB_REPOSITORY", "")
    from github import GithubException
    from requests.exceptions import RequestException

    gh = make_client(environ.get("GITHUB_API_URL", "https://api.github.com"), inputs.github_token)
    try:
        number = find_pull_request(gh, repo, owner, branch, head_sha)
    except (GithubException, RequestException) as exc:
        status = getattr(exc, "status", "")
        wf.annotate(
            "warning",
            f"could not look up the pull request: GitHub answered {status or type(exc).__name__}",
            title="toolselect",
        )
        return EXIT_PASSED
    finally:
        gh.close()
    if number is None:
        wf.annotate(
            "notice",
            f"no open pull request has {owner}:{branch} at {head_sha[:12]}: nothing to post",
            title="toolselect",
        )
        return EXIT_PASSED
    verdict = judge(head, diff, Comparing(inputs.max_drop, inputs.significance, inputs.fail_on_certain_flips))
    # Whether the PR came from a fork is read from the event, never from the artifact.
    fork = (run.get("head_repository") or {}).get("full_name") != repo
    notes = (
        "posted from the PR run's artifact"
        + (": a fork PR, so only answers already in the cache were evaluated" if fork else ""),
    )
    verdict = Verdict(verdict.passed, verdict.reasons, (*notes, *verdict.notes))
    body = render_comment(
        head,
        verdict,
        base=base,
        diff=diff,
        base_note=None if diff else "no baseline in the PR's run",
        comment_id=inputs.comment_id,
        run_url=run.get("html_url"),
    )
    url = post(inputs, environ, wf, number, body, create=True)
    wf.set_outputs({"comment-url": url, "passed": "true" if verdict.passed else "false"})
    return EXIT_PASSED


def main() -> int:  # pragma: no cover - entrypoint.py calls the CLI
    return run_action(dict(os.environ))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
