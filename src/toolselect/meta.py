"""`toolselect-report/meta.json`: what a pull request's run hands to the workflow_run poster beside
its reports (action.py writes it; publish.py reads it back as untrusted: a fork's run wrote it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .strict import Record


class MetaFailure(Record):
    """Why the PR's run could not evaluate its base (gate.BaseFailure), as the poster reads it back."""

    reason: str = Field(max_length=4000)
    details: str = Field("", max_length=20_000)
    hint: str = Field("", max_length=4000)


class Meta(Record):
    """`toolselect-report/meta.json`: what a fork PR's run hands to the workflow_run poster."""

    schema_version: Literal[1] = 1
    event: str
    pr: int | None = None
    head_sha: str | None = None
    base_sha: str | None = None
    fork: bool = False
    base_note: str | None = None
    base_failure: MetaFailure | None = None
    run_url: str | None = None
