"""Fixtures shared by the Action's end-to-end tests."""

from __future__ import annotations

import pytest

from tests.e2e.harness import SCRIPT, TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI


@pytest.fixture
def world():
    """The fake model API (answers scripted by description) and the fake GitHub API."""
    with (
        FakeModelAPI(SCRIPT) as api,
        FakeGitHub(
            {TOKEN: "github-actions[bot]", "dev": "octocat", "ro": "github-actions[bot]"},
            read_only={"ro"},
        ) as github,
    ):
        yield api, github
