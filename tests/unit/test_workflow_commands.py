"""Workflow commands as the runner reads them: escaping, outputs, summary, masks."""

from __future__ import annotations

import io

from toolselect.github.commands import SUMMARY_BYTES, Workflow, escape_data, escape_property


def test_escaping_follows_actions_core():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_annotation_drops_empty_properties():
    out = io.StringIO()
    Workflow({}, out).annotate(
        "error", "case 'x': expected a, got b\nsecond line", file="evals/g.jsonl", line=7, title="toolselect SEL-WRONG"
    )
    assert (
        out.getvalue()
        == "::error file=evals/g.jsonl,line=7,title=toolselect SEL-WRONG::case 'x': expected a, got b%0Asecond line\n"
    )
    out = io.StringIO()
    Workflow({}, out).annotate("warning", "plain")
    assert out.getvalue() == "::warning::plain\n"


def test_outputs_are_multiline_safe(tmp_path):
    path = tmp_path / "output"
    Workflow({"GITHUB_OUTPUT": str(path)}).set_outputs({"accuracy": "0.9", "note": "line one\nline two"})
    lines = path.read_text().splitlines()
    assert lines[0].startswith("accuracy<<ghadelimiter_") and lines[1] == "0.9" and lines[2] == lines[0].split("<<")[1]
    assert lines[4:6] == ["line one", "line two"]


def test_summary_is_cut_to_one_mebibyte(tmp_path):
    path = tmp_path / "summary"
    wf = Workflow({"GITHUB_STEP_SUMMARY": str(path)})
    assert wf.write_summary("é" * SUMMARY_BYTES)
    data = path.read_bytes()
    assert len(data) <= SUMMARY_BYTES and data.decode("utf-8").endswith("has everything)\n")
    assert not Workflow({}).write_summary("x")


def test_mask_and_group():
    out = io.StringIO()
    wf = Workflow({}, out)
    wf.mask("sk-secret")
    wf.mask("")
    with wf.group("evaluating"):
        out.write("inside\n")
    assert out.getvalue() == "::add-mask::sk-secret\n::group::evaluating\ninside\n::endgroup::\n"


def test_files_written_as_root_go_back_to_the_workspace_owner(tmp_path):
    import os

    from toolselect.github.commands import chown_like

    workspace = tmp_path / "ws"
    (workspace / "toolselect-report").mkdir(parents=True)
    (workspace / "toolselect-report" / "report.json").write_text("{}")
    if os.geteuid() == 0:
        os.chown(workspace, 1001, 121)  # the runner user owns the workspace; the container is root
    chown_like([workspace / "toolselect-report"], workspace)
    owner = workspace.stat().st_uid
    for path in (workspace / "toolselect-report", workspace / "toolselect-report" / "report.json"):
        assert path.stat().st_uid == owner


def test_inside_a_stop_commands_stretch_only_toolselects_own_commands_run():
    import io

    out = io.StringIO()
    wf = Workflow({}, out)
    wf.stop_commands()
    token = wf.token
    assert token and len(token) == 32
    out.write("::error::what a server said\n")  # printed by toolselect as text: inert
    wf.annotate("warning", "ours")
    wf.resume_commands()
    assert out.getvalue().splitlines() == [
        f"::stop-commands::{token}",
        "::error::what a server said",
        f"::{token}::",
        "::warning::ours",
        f"::stop-commands::{token}",
        f"::{token}::",
    ]


def test_outputs_and_the_summary_go_only_into_the_files_the_step_began_with(tmp_path):
    """Root appends to the runner's files after the pull request's programs ran: never through a
    link, and never to a file put in the place of the one the step began with (a link, or a
    replacement, would have root write wherever it points, or into a file the runner reads as its
    own)."""
    import io

    import pytest

    from toolselect.errors import InfraError

    output, summary, elsewhere = tmp_path / "output", tmp_path / "summary", tmp_path / "elsewhere"
    for path in (output, summary, elsewhere):
        path.write_text("")
    out = io.StringIO()
    wf = Workflow({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}, out)
    wf.set_outputs({"passed": "true"})
    assert "passed<<" in output.read_text()
    output.unlink()
    output.symlink_to(elsewhere)  # a link where the file was
    with pytest.raises(InfraError, match="is a link: toolselect writes nothing through it"):
        wf.set_outputs({"passed": "true"})
    planted = tmp_path / "planted"
    planted.write_text("")
    planted.replace(summary)  # another file moved into its place
    assert not wf.write_summary("### hello")
    assert elsewhere.read_text() == "" and summary.read_text() == ""
    assert "::error title=toolselect%3A job summary not written::" in out.getvalue()
    assert "is not the file the step began with" in out.getvalue()


def test_annotations_stay_within_ten_per_level_most_important_first():
    out = io.StringIO()
    wf = Workflow({}, out)
    wf.annotate("warning", "said before")  # written at once, and counted
    with wf.annotations():
        for i in range(15):
            wf.annotate("warning", f"lint {i}", rank=2)
        wf.annotate("warning", "the comment was not posted")  # the run's own: first
        for i in range(3):
            wf.annotate("error", f"case {i}", rank=1)
    lines = out.getvalue().splitlines()
    warnings = [x.split("::")[-1] for x in lines if x.startswith("::warning")]
    assert warnings == ["said before", "the comment was not posted", *[f"lint {i}" for i in range(7)],
                        "8 more warnings: see the job summary"]  # fmt: skip
    assert [x.split("::")[-1] for x in lines if x.startswith("::error")] == ["case 0", "case 1", "case 2"]
    wf.annotate("warning", "one too many")  # past GitHub's limit: not written (it would be dropped unsaid)
    assert "one too many" not in out.getvalue()
