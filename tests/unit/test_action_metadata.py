"""action.yml, the code that reads its inputs, and the README agree on every input and output."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT
from toolselect.action import DEFAULTS

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def test_every_input_is_read_with_the_same_default():
    declared = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    assert set(declared) == set(DEFAULTS)
    for name, default in declared.items():
        if "${{" not in default:
            assert DEFAULTS[name] == default, name
        assert ACTION["inputs"][name]["description"], name


def test_the_container_step_gets_every_input_and_the_cache_wraps_it():
    steps = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite"
    restore, run, save = steps
    assert restore["uses"].startswith("actions/cache/restore@") and save["uses"].startswith("actions/cache/save@")
    assert re.fullmatch(r"docker://ghcr\.io/[^/]+/tool-select-action:\d+\.\d+\.\d+", run["uses"])
    assert run["with"] == {name: f"${{{{ inputs.{name} }}}}" for name in ACTION["inputs"]}
    assert restore["with"]["path"] == save["with"]["path"]
    assert save["if"] == "always() && steps.eval.outputs.cache-dirty == 'true'"
    assert ACTION["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_every_third_party_action_is_pinned_by_sha():
    for path in [
        ROOT / "action.yml",
        *(ROOT / ".github" / "workflows").glob("*.yml"),
        *(ROOT / "examples" / "workflows").glob("*.yml"),
    ]:
        for ref in re.findall(r"uses:\s*([\w.-]+/[\w./-]+)@(\S+)", path.read_text()):
            name, version = ref
            if name == "org/tool-select-action":
                continue  # users reference this action by its major tag
            assert re.fullmatch(r"[0-9a-f]{40}", version), f"{path.name}: {name}@{version}"


def test_readme_documents_every_input_and_output():
    readme = (ROOT / "README.md").read_text()
    for name in [*ACTION["inputs"], *ACTION["outputs"]]:
        assert f"`{name}`" in readme, name
