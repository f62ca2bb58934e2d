"""action.yml, the option declarations, the code that reads the inputs and the docs agree."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT
from toolselect.options import OPTIONS, inputs, read_inputs

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def test_generated_files_are_up_to_date():
    """action.yml's inputs, docs/action.md's input table and docs/config.md's tables come from options.py."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "sync_options.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_input_is_declared_once_with_its_default_and_description():
    declared = {o.input_name: o for o in inputs()}
    assert list(ACTION["inputs"]) == list(declared)
    for name, spec in ACTION["inputs"].items():
        assert spec["default"] == declared[name].input_default, name
        assert spec["description"].rstrip(".") == declared[name].help.rstrip("."), name
    # every default GitHub passes (expressions aside) reads back without an error
    environ = {f"INPUT_{n.upper()}": str(s["default"]) for n, s in ACTION["inputs"].items()}
    given = read_inputs(environ)
    assert given["comment"] == "always" and given["working_directory"] == "." and given["fail_on_fork"] is False
    assert "github_token" not in given  # `${{ github.token }}` is GitHub's to fill in


def test_option_names_are_unique_everywhere():
    for attribute in ("key", "flag_name", "input_name", "config_key"):
        names = [getattr(o, attribute) for o in OPTIONS if getattr(o, attribute)]
        assert len(names) == len(set(names)), attribute


def test_both_runners_get_every_input_and_the_cache_wraps_them():
    steps = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite"
    by_id = {s["id"]: s for s in steps if "id" in s}
    restore, save = by_id["restore"], steps[-1]
    assert steps.index(restore) == 1 and steps[0]["id"] == "cache-key"
    assert restore["uses"].startswith("actions/cache/restore@") and save["uses"].startswith("actions/cache/save@")
    assert restore["with"]["path"] == save["with"]["path"]
    assert save["if"] == (
        "always() && (steps.eval.outputs.cache-dirty == 'true' || steps.eval-host.outputs.cache-dirty == 'true')"
    )
    # runner: container (the default) — the image, every input through `with:`
    container = by_id["eval"]
    assert container["if"] == "inputs.runner != 'host'" and ACTION["inputs"]["runner"]["default"] == "container"
    # a literal tag between releases; the release pins tag and digest (a re-pushed tag changes nothing)
    assert re.fullmatch(
        r"docker://ghcr\.io/[^/]+/tool-select-action:\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?", container["uses"]
    )
    assert container["with"] == {name: f"${{{{ inputs.{name} }}}}" for name in ACTION["inputs"]}
    # runner: host — the same INPUT_* variables GitHub gives the container, in toolselect's own environment
    host = by_id["eval-host"]
    assert host["if"] == "inputs.runner == 'host'"
    inputs_env = {k: v for k, v in host["env"].items() if k.startswith("INPUT_")}
    assert inputs_env == {f"INPUT_{name.upper()}": f"${{{{ inputs.{name} }}}}" for name in ACTION["inputs"]}
    assert host["run"] == 'exec "$TOOLSELECT_HOST_ENV/bin/python" -P -m toolselect action'
    for step in ("host-env", "host-restore", "host-install"):
        assert by_id[step]["if"] == "inputs.runner == 'host'", step
    assert by_id["host-restore"]["with"]["key"] == "${{ steps.host-env.outputs.key }}"
    # every output comes from whichever runner ran
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.eval.outputs.{name} || steps.eval-host.outputs.{name} }}}}", name
    assert ACTION["inputs"]["github-token"]["default"] == "${{ github.token }}"


def cache_prefix(tmp_path: Path, **inputs: str) -> str:
    """The answer cache's key prefix as the cache-key step computes it, for these inputs."""
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "cache-key")
    env = dict.fromkeys(step["env"], "") | inputs | {"PATH": os.environ["PATH"]}
    out = tmp_path / "out"
    out.write_text("")
    subprocess.run(["bash", "-c", step["run"]], env=env | {"GITHUB_OUTPUT": str(out)}, check=True)
    prefix, role = out.read_text().splitlines()
    return prefix.removeprefix("prefix=") + role.removeprefix("role=")


def test_the_cache_key_tells_apart_steps_with_other_models_or_configs(tmp_path):
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "cache-key")
    assert step["env"] == {
        "PROVIDER": "${{ inputs.provider }}",
        "MODEL": "${{ inputs.model }}",
        "MODELS": "${{ inputs.models }}",
        "CONFIG": "${{ inputs.config }}",
        "WORKDIR": "${{ inputs.working-directory }}",
        "CACHE_DIR": "${{ inputs.cache-dir }}",
        "SHARD": "${{ inputs.shard }}",
        "MERGE": "${{ inputs.merge }}",
    }
    one = cache_prefix(tmp_path, MODEL="claude-haiku-4-5", CACHE_DIR=".toolselect-cache")
    assert re.fullmatch(r"toolselect-v2-[0-9a-f]{16}-run", one)
    # matrix jobs save under keys of their own, with the prefix every job restores from
    shard, merge = (cache_prefix(tmp_path, MODEL="claude-haiku-4-5", CACHE_DIR=".toolselect-cache", **extra)
                    for extra in ({"SHARD": "3"}, {"MERGE": "parts"}))  # fmt: skip
    assert (shard, merge) == (one.replace("-run", "-shard3"), one.replace("-run", "-merge"))
    assert one == cache_prefix(tmp_path, MODEL="claude-haiku-4-5", CACHE_DIR=".toolselect-cache")
    others = {
        cache_prefix(tmp_path, MODEL="gpt-4.1-mini", CACHE_DIR=".toolselect-cache"),
        cache_prefix(tmp_path, MODELS="anthropic:claude-haiku-4-5\nopenai:gpt-4.1", CACHE_DIR=".toolselect-cache"),
        cache_prefix(tmp_path, MODEL="claude-haiku-4-5", CONFIG="other/toolselect.yaml", CACHE_DIR=".toolselect-cache"),
        cache_prefix(tmp_path, MODEL="claude-haiku-4-5", WORKDIR="server-b", CACHE_DIR=".toolselect-cache"),
    }
    assert one not in others and len(others) == 4
    restore = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "restore")
    assert restore["with"]["key"] == (
        "${{ steps.cache-key.outputs.prefix }}${{ steps.cache-key.outputs.role }}-${{ github.run_id }}-"
        "${{ github.run_attempt }}"
    )
    assert restore["with"]["restore-keys"].strip() == "${{ steps.cache-key.outputs.prefix }}"


def test_every_third_party_action_is_pinned_by_sha():
    workflows = [*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / "examples" / "workflows").glob("*.yml")]
    for path in [ROOT / "action.yml", *workflows]:
        for ref in re.findall(r"uses:\s*([\w.-]+/[\w./-]+)@(\S+)", path.read_text()):
            name, version = ref
            if name == "org/tool-select-action":
                continue  # users reference this action by its major tag
            assert re.fullmatch(r"[0-9a-f]{40}", version), f"{path.name}: {name}@{version}"


def test_the_action_docs_document_every_input_and_output():
    """docs/action.md is the Action's reference: its inputs table and its outputs table."""
    text = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    inputs_table = text.split("<!-- options:inputs:start -->", 1)[1].split("<!-- options:inputs:end -->", 1)[0]
    outputs_table = text.split("## Outputs", 1)[1].split("\n## ", 1)[0]
    for name in ACTION["inputs"]:
        assert f"| `{name}` |" in inputs_table or f"| `{name}` 💲 |" in inputs_table, name
    for name in ACTION["outputs"]:
        assert f"`{name}`" in outputs_table, name


def test_the_release_pins_the_image_by_tag_and_digest(tmp_path):
    """The release workflow's pin step, run as written (a `docker` on PATH answers `buildx imagetools
    inspect` of the joined tag with the digest the registry gave its manifest list, as buildx prints
    it): action.yml then names tag and digest, and the release tags reach the remote."""
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    (step,) = [s for s in release["jobs"]["release"]["steps"] if s.get("name", "").startswith("Pin the image")]
    digest = "sha256:" + "ab12" * 16
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    asked = "buildx imagetools inspect ghcr.io/acme/tool-select-action:1.2.3 --format {{.Manifest.Digest}}"
    (bin_dir / "docker").write_text(f'#!/bin/sh\n[ "$*" = "{asked}" ] || exit 1\necho "{digest}"\n')
    (bin_dir / "docker").chmod(0o755)
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    run = lambda *args, cwd=tmp_path: subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)  # noqa: E731
    run("git", "init", "-q", "--bare", str(remote))
    run("git", "init", "-q", "-b", "main", str(work))
    shutil.copy(ROOT / "action.yml", work / "action.yml")
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "action.yml", cwd=work)
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", cwd=work)
    run("git", "remote", "add", "origin", str(remote), cwd=work)
    step_env = env | {"VERSION": "1.2.3", "OWNER": "Acme", "GITHUB_REF_NAME": "main"}
    subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=step_env, check=True, capture_output=True)
    action = yaml.safe_load((work / "action.yml").read_text())
    (eval_step,) = [s for s in action["runs"]["steps"] if s.get("id") == "eval"]
    assert eval_step["uses"] == f"docker://ghcr.io/acme/tool-select-action:1.2.3@{digest}"
    tags = run("git", "tag", cwd=remote).stdout.decode().split()
    assert tags == ["v1", "v1.2.3"]


def test_the_release_tests_each_architectures_image_before_it_is_pushed():
    """amd64 and arm64 are each built natively and run through the container scenarios (on that very
    image, the suite required) before their push; the pin waits for both."""
    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())["jobs"]
    image = jobs["image"]
    assert {(x["arch"], x["runner"]) for x in image["strategy"]["matrix"]["include"]} == {
        ("amd64", "ubuntu-latest"),
        ("arm64", "ubuntu-24.04-arm"),
    }
    runs = [s.get("run", "") for s in image["steps"]]
    (build,) = [i for i, r in enumerate(runs) if "docker build" in r]
    (scenarios,) = [i for i, r in enumerate(runs) if "tests/container" in r]
    (push,) = [i for i, r in enumerate(runs) if "docker push" in r]
    assert build < scenarios < push
    assert "TOOLSELECT_CONTAINER_TESTS=required" in runs[scenarios]
    assert '"TOOLSELECT_IMAGE_UNDER_TEST=toolselect-release:$ARCH"' in runs[scenarios]
    assert 'docker build --tag "toolselect-release:$ARCH"' in runs[build]
    assert jobs["release"]["needs"] == "image"


def test_the_server_table_in_the_docs_has_every_key_with_its_default():
    """docs/config.md's `server:` table is written by hand: it must name every key of the model
    that reads `server:`, with the model's default, and nothing else."""
    from toolselect.surface.spec import ServerModel

    text = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    table = text.split("## `server:`", 1)[1].split("\n\n", 2)[1]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| ([^|]*) \|", table, re.MULTILINE)}
    assert set(rows) - {"key"} == set(ServerModel.model_fields)
    for name, field in ServerModel.model_fields.items():
        if isinstance(field.default, float):
            assert rows[name].strip() == f"`{field.default:g}`", name
    action = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")  # "Your server in CI" says them too
    for name in ("setup_timeout_s", "ready_timeout_s"):
        assert f"`{name}` (default {ServerModel.model_fields[name].default:g})" in action or (
            f"`{name}`, default {ServerModel.model_fields[name].default:g}" in action
        ), name


def test_the_gate_is_declared_once():
    """The gate's options (options.py, groups gate and compare), the Gate the verdict uses and the
    GateOut a report records are the same fields."""
    from dataclasses import fields

    from toolselect.gate import Gate
    from toolselect.report.schema import GateOut

    declared = {o.key for o in OPTIONS if o.group in ("gate", "compare") and o.config is not None}
    assert {f.name for f in fields(Gate)} == declared
    assert set(GateOut.model_fields) - {"passed", "reasons", "stopped"} == declared


def test_the_clients_it_drives_are_kept_in_a_cache_of_their_own_outside_the_checkout():
    steps = ACTION["runs"]["steps"]
    by_id = {s["id"]: s for s in steps if "id" in s}
    restore = by_id["clients-restore"]
    [save] = [s for s in steps if "clients-installed" in s.get("if", "")]
    assert steps.index(restore) < steps.index(by_id["eval"]) < steps.index(save)
    assert restore["with"]["path"] == save["with"]["path"] and "runner.temp" in restore["with"]["path"]
    assert "workspace" not in restore["with"]["path"] and "working-directory" not in restore["with"]["path"]
    # the container's HOME (/github/home) is _temp/_github_home on the runner: the default folder there
    assert "_github_home/.cache/toolselect/clients" in restore["with"]["path"]
    assert by_id["eval-host"]["env"]["TOOLSELECT_CLIENTS_DIR"] == "${{ runner.temp }}/toolselect-clients"
    assert restore["with"]["restore-keys"].strip() == "toolselect-clients-${{ runner.os }}-${{ runner.arch }}-"
    assert save["with"]["key"].endswith("${{ steps.eval.outputs.clients || steps.eval-host.outputs.clients }}")
    assert save["if"].startswith("always() && ")
