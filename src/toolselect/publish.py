"""What the Action says on GitHub: the sticky PR comment, the review comments on the source lines
of the tools a PR changed, and the fork-safe poster that does both from a PR run's artifact (on
`workflow_run`), reading it as untrusted data. A GitHub failure here is a warning, never another exit
code. Every request goes through github/ with a client made here."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import (
    EXIT_PASSED,
    ConfigError,
)
from .gate import BaseFailure
from .github.commands import Workflow
from .meta import Meta
from .options import BY_KEY
from .outcome import Outcome, compare_saved, with_stress
from .outputs import Targets, write_outputs
from .policy import Plan, Review
from .report.files import read_reports
from .suggestions import Suggestion

if TYPE_CHECKING:
    from .github.review import InlineComment
    from .sourcelines import FilePatch

MAX_LOCATED = 200  # changed tools searched for in the PR's diff
META_MAX_BYTES = 1024 * 1024  # meta.json is a few hundred bytes; the reports have read_report's limit


def post(
    inputs: Mapping[str, Any], environ: Mapping[str, str], wf: Workflow, number: int, body: str, create: bool
) -> str:
    """Upsert the sticky comment; any GitHub failure is a warning, never a different exit code."""
    from github import GithubException
    from requests.exceptions import RequestException

    from .github.comment import make_client, upsert_comment
    from .render.comment import marker

    repo = environ.get("GITHUB_REPOSITORY")
    token = inputs.get("github_token", "")
    if not token or not repo:
        wf.annotate(
            "warning", "no github-token (or GITHUB_REPOSITORY): the PR comment was not posted", title="toolselect"
        )
        return ""
    gh = make_client(environ.get("GITHUB_API_URL", "https://api.github.com"), token)
    try:
        posted = upsert_comment(gh, repo, number, body, marker(inputs["comment_id"]), create=create)
        print(f"toolselect: PR comment {posted.action}{': ' + posted.url if posted.url else ''}", flush=True)
        return posted.url
    except GithubException as exc:
        message = (exc.data or {}).get("message") if isinstance(exc.data, dict) else None
        hint = " (the job needs `permissions: pull-requests: write`)" if exc.status == 403 else ""
        said = f"could not post the PR comment: GitHub answered {exc.status} {message or ''}{hint}"
        wf.annotate("warning", said.strip(), title="toolselect")
    except (RequestException, AssertionError) as exc:
        wf.annotate("warning", f"could not post the PR comment: {exc}", title="toolselect")
    finally:
        gh.close()
    return ""


def post_artifact(
    inputs: Mapping[str, Any], plan: Plan, environ: Mapping[str, str], wf: Workflow, workspace: Path
) -> int:
    """The fork-safe poster (`on: workflow_run`): re-render the comment from the artifact's JSON,
    treated as untrusted data, for the PR found through the API — never the artifact's word — and
    judge it as the PR's run would have: under the gate its report recorded, with this step's inputs
    on top."""
    from github import GithubException
    from requests.exceptions import RequestException

    from .github.comment import find_pull_request, make_client

    for notice in plan.notices:
        wf.annotate("notice", notice, title="toolselect")
    if plan.mode != "post" or plan.lookup is None:
        return EXIT_PASSED
    folder = (workspace / inputs["from_artifact"]).resolve()
    meta_file = folder / "meta.json"
    if meta_file.exists() and meta_file.stat().st_size > META_MAX_BYTES:
        raise ConfigError(f"{meta_file}: larger than 1 MiB; not a toolselect artifact")
    try:
        meta = Meta.model_validate_json((folder / "meta.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{folder}/meta.json is not a toolselect artifact: {str(exc).splitlines()[0]}") from None
    head = read_reports(folder / "report.json")
    base = read_reports(folder / "base.json") if (folder / "base.json").exists() else None
    lookup = plan.lookup
    if meta.head_sha and meta.head_sha != lookup.sha:
        wf.annotate(
            "warning",
            "the artifact was made for another commit than the triggering run: not posting",
            title="toolselect",
        )
        return EXIT_PASSED
    repo = environ.get("GITHUB_REPOSITORY", "")
    gh = make_client(environ.get("GITHUB_API_URL", "https://api.github.com"), inputs.get("github_token", ""))
    try:
        number = find_pull_request(gh, repo, lookup.owner, lookup.branch, lookup.sha)
    except (GithubException, RequestException) as exc:
        status = getattr(exc, "status", "")
        said = f"could not look up the pull request: GitHub answered {status or type(exc).__name__}"
        wf.annotate("warning", said, title="toolselect")
        return EXIT_PASSED
    finally:
        gh.close()
    if number is None:
        said = f"no open pull request has {lookup.owner}:{lookup.branch} at {lookup.sha[:12]}: nothing to post"
        wf.annotate("notice", said, title="toolselect")
        return EXIT_PASSED
    gate_inputs = {k: v for k, v in inputs.items() if BY_KEY[k].group in ("gate", "compare")}
    outcome = compare_saved(
        base,
        head,
        gate_inputs,
        base_label="the PR run's base",
        base_note=None if base is not None or meta.base_failure else meta.base_note or "no baseline in the PR's run",
        base_failure=BaseFailure(**meta.base_failure.model_dump()) if meta.base_failure else None,
        notes=plan.notes,
        enforced=False,
    )
    if (folder / "stress.json").exists():  # the PR run's stress test, read as untrusted as the rest
        from .stress import read_stress_report

        head_stress = read_stress_report(folder / "stress.json")
        base_file = folder / "stress.base.json"
        base_stress = read_stress_report(base_file) if base_file.exists() else None
        outcome = with_stress(outcome, head_stress, base_stress)  # under the stress gate the PR's run recorded
    written = write_outputs(
        outcome,
        Targets(comment_id=inputs["comment_id"], run_url=lookup.run_url, report_artifact=inputs.get("report_artifact")),
    )
    url = post(inputs, environ, wf, number, written.comment, create=True)
    review_url = review_lines(inputs, environ, wf, number, lookup.sha, outcome, url or lookup.run_url, plan.review)
    passed = "true" if outcome.verdict.passed else "false"
    wf.set_outputs({"comment-url": url, "review-url": review_url, "passed": passed})
    return EXIT_PASSED


def pull_patches(inputs: Mapping[str, Any], environ: Mapping[str, str], wf: Workflow, number: int) -> list[FilePatch]:
    """The PR's files with their patches (where a suggestion may go); none, with a warning, when
    GitHub can't say."""
    from github import GithubException
    from requests.exceptions import RequestException

    from .github.comment import make_client
    from .github.review import pull_files

    repo, token = environ.get("GITHUB_REPOSITORY"), inputs.get("github_token", "")
    if not repo or not token:
        return []
    gh = make_client(environ.get("GITHUB_API_URL", "https://api.github.com"), token)
    try:
        return list(pull_files(gh, repo, number).files)
    except (GithubException, RequestException, KeyError, TypeError, ValueError) as exc:
        status = getattr(exc, "status", "") or type(exc).__name__
        said = f"could not list the PR's files ({status}): rewrites are shown as patches, not suggested"
        wf.annotate("warning", said, title="toolselect")
        return []
    finally:
        gh.close()


def review_lines(
    inputs: Mapping[str, Any],
    environ: Mapping[str, str],
    wf: Workflow,
    number: int,
    head_sha: str,
    outcome: Outcome,
    report_url: str | None,
    review: Review,
) -> str:
    """Comment on the source lines of the tool texts the PR changed (a review), or annotate those
    lines, as the plan says (policy.decide: not in a fork PR's own run, whose poster reviews). Every
    path and line comes from the PR's own file list, read from the API. A GitHub failure is a warning."""
    from github import GithubException
    from requests.exceptions import RequestException

    from .github.comment import make_client, whoami
    from .github.review import InlineComment, merged, our_comments, plan_review, pull_files, sync_review
    from .impact import across_models, selected, tool_impacts
    from .render.escape import visible
    from .render.review import (
        Mark,
        annotation_text,
        finding_key,
        inline_body,
        review_body,
        why_resolved,
        why_withdrawn,
    )
    from .render.suggest import suggestable
    from .sourcelines import lines_changed

    repo, token = environ.get("GITHUB_REPOSITORY"), inputs.get("github_token", "")
    if not repo or not token or review == "none":
        return ""
    compared = [(m.label, tool_impacts(m.diff, m.base, m.head)) for m in outcome.models if m.base and m.diff]
    suggested = [s for s in outcome.suggestions if suggestable(s)] if review != "annotations" else []
    if not compared and not suggested:  # no baseline: nothing is known about any tool, so nothing changes
        return ""
    impacts = across_models(compared) if compared else []
    comment = review != "annotations"
    chosen = selected(impacts, every_change=review == "all-changes")
    if not comment and not chosen:
        return ""
    gh = make_client(environ.get("GITHUB_API_URL", "https://api.github.com"), token)
    try:
        pull = pull_files(gh, repo, number)
        if pull.head_sha != head_sha:
            said = f"the pull request moved on to {pull.head_sha[:12]}: the next run comments on its lines"
            wf.annotate("notice", said, title="toolselect")
            return ""
        # every changed tool is located (a tool not commented on still claims its own lines), those
        # chosen first; a forged report's thousands of tools are cut at MAX_LOCATED
        ordered = [*chosen, *(i for i in impacts if i not in chosen)][:MAX_LOCATED]
        found = lines_changed({i.tool: i.changes for i in ordered}, pull.files)
        located = [(i, found[i.tool]) for i in chosen if i.tool in found]
        if not comment:
            for impact, where in located:
                wf.annotate(
                    "warning" if impact.regressed else "notice",
                    annotation_text(impact, where),
                    file=where.path,
                    line=where.start_line,
                    end_line=where.line,
                    title=f"toolselect: {impact.tool}",
                )
            return ""
        comment_id = inputs["comment_id"]
        findings = []
        for impact, where in located:
            key = finding_key(impact, where)
            body = inline_body(impact, where, Mark(comment_id, impact.tool, key), report_url)
            findings.append(InlineComment(impact.tool, where, key, body))
        ours = our_comments(gh, repo, number, comment_id, whoami(gh))
        by_tool = {i.tool: i for i in impacts}
        listed = set(outcome.head.surface.tools)
        plan = merged(
            plan_review(
                findings,
                [o for o in ours if not o.mark.suggestion],
                lambda tool: why_resolved(tool, by_tool.get(tool), head_sha, tool in listed),
            ),
            plan_review(
                _suggestion_comments(suggested, comment_id, report_url),
                [o for o in ours if o.mark.suggestion],
                lambda tool: why_withdrawn(tool, head_sha),
            ),
        )
        body = review_body(comment_id, [i for i, _ in located], report_url, suggested=len(suggested))
        synced = sync_review(gh, repo, number, pull, plan, body)
        for note in synced.notes:
            wf.annotate("warning", note, title="toolselect: review")
        unlocated = [i.tool for i in chosen if i.tool not in found]
        print(
            f"toolselect: review comments: {synced.posted} posted, {synced.updated} updated, {synced.resolved} "
            f"resolved, {synced.unchanged} unchanged"
            + (f"; not found in the diff: {', '.join(visible(t) for t in unlocated)}" if unlocated else "")
            + (f": {synced.url}" if synced.url else ""),
            flush=True,
        )
        return synced.url
    except GithubException as exc:
        message = (exc.data or {}).get("message") if isinstance(exc.data, dict) else None
        hint = " (the job needs `permissions: pull-requests: write`)" if exc.status == 403 else ""
        wf.annotate(
            "warning",
            f"could not review the PR's lines: GitHub answered {exc.status} {message or ''}{hint}".strip(),
            title="toolselect",
        )
    except (RequestException, AssertionError) as exc:
        wf.annotate("warning", f"could not review the PR's lines: {exc}", title="toolselect")
    except (KeyError, TypeError, ValueError, UnicodeError) as exc:  # an answer not shaped as documented
        wf.annotate("warning", f"could not review the PR's lines: {type(exc).__name__}: {exc}", title="toolselect")
    finally:
        gh.close()
    return ""


def _suggestion_comments(suggestions: list[Suggestion], comment_id: str, report_url: str | None) -> list[InlineComment]:
    """The review comments of the suggestable rewrites, each on the lines it replaces."""
    from .github.review import InlineComment
    from .render.review import Mark
    from .render.suggest import suggestion_body, suggestion_key
    from .sourcelines import Location

    out = []
    for s in suggestions:
        if s.path is None or s.rewrite is None:
            continue
        key = suggestion_key(s)
        where = Location(s.tool, "description", s.path, s.rewrite.start, s.rewrite.end, 1.0, 1.0)
        mark = Mark(comment_id, s.tool, key, suggestion=True)
        out.append(InlineComment(s.tool, where, key, suggestion_body(s, mark.text(), report_url)))
    return out
