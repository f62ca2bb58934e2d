"""What a server is started with: its small environment and its `{port}` (pure parts of launch.py)."""

from __future__ import annotations

from pathlib import Path

from toolselect.contain import child_environment as server_environment
from toolselect.surface.launch import with_port
from toolselect.surface.spec import ServerSpec

JOB = {
    "PATH": "/usr/bin",
    "HOME": "/home/runner",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HTTPS_PROXY": "http://proxy:3128",
    "SSL_CERT_FILE": "/etc/ssl/cert.pem",
    "CI": "true",
    "RUNNER_TEMP": "/home/runner/work/_temp",
    "NODE_OPTIONS": "--max-old-space-size=4096",
    "npm_config_cache": "/home/runner/.npm",
    "UV_CACHE_DIR": "/home/runner/.cache/uv",
    "JAVA_HOME": "/usr/lib/jvm/17",
    "GOPROXY": "https://proxy.golang.org",
    # never
    "ANTHROPIC_API_KEY": "sk-ant",
    "OPENAI_API_KEY": "sk-oai",
    "OPENAI_BASE_URL": "http://gateway",
    "GITHUB_TOKEN": "ghs",
    "GITHUB_WORKSPACE": "/w",
    "ACTIONS_RUNTIME_TOKEN": "rt",
    "ACTIONS_CACHE_URL": "https://cache",
    "INPUT_GITHUB-TOKEN": "ghs",
    "INPUT_MODEL": "m",
    "TOOLSELECT_PROVIDER": "openai",
    "NODE_AUTH_TOKEN": "npm-publish-token",
    "npm_config__authToken": "npm-token",
    "UV_INDEX_PASSWORD": "pw",
    "PIP_INDEX_URL_PASSWORD": "pw",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "SOME_TOOL_SETTING": "not a toolchain variable",
    "GOOGLE_CLOUD_PROJECT": "not Go's",
    "PIP_INDEX_URL": "https://user:s3cret@pypi.internal/simple",
    "UV_INDEX_URL": "https://idx.corp/simple?private_token=t0k",
    "PIP_EXTRA_INDEX_URL": "https://idx.corp/t/a1b2c3d4e5f6a7b8c9d0/simple",
    "NPM_CONFIG_REGISTRY": "https://npm.corp/_t/9f8e7d6c5b4a39281706/",
    "GOPRIVATE": "https://proxy.corp,https://u:p@mirror.corp,direct",
    "NPM_CONFIG_USERCONFIG": "/home/runner/.npmrc",  # a path, not a URL: inherited
}


def test_the_server_gets_the_machine_the_locale_the_network_and_the_toolchains_only():
    env = server_environment({}, JOB)
    assert env == {
        k: JOB[k]
        for k in (
            "PATH", "HOME", "LANG", "LC_ALL", "HTTPS_PROXY", "SSL_CERT_FILE", "CI", "NODE_OPTIONS",
            "npm_config_cache", "UV_CACHE_DIR", "JAVA_HOME", "GOPROXY", "NPM_CONFIG_USERCONFIG",
        )
    }  # fmt: skip


def test_what_the_config_passes_arrives_and_wins():
    env = server_environment({"WEATHER_API_TOKEN": "explicit", "PATH": "/opt/bin"}, JOB)
    assert env["WEATHER_API_TOKEN"] == "explicit" and env["PATH"] == "/opt/bin"


def test_port_fills_start_url_env_and_headers_only():
    spec = ServerSpec(
        url="http://127.0.0.1:{port}/mcp",
        start="node build/http.js --port {port}",
        env={"PORT": "{port}", "NAME": "weather"},
        headers={"X-Origin": "http://localhost:{port}"},
        setup=("echo {port} stays as written",),
        cwd=Path("/srv"),
    )
    filled = with_port(spec, 41234)
    assert filled.url == "http://127.0.0.1:41234/mcp" and filled.start == "node build/http.js --port 41234"
    assert filled.env == {"PORT": "41234", "NAME": "weather"}
    assert filled.headers == {"X-Origin": "http://localhost:41234"}
    assert filled.setup == ("echo {port} stays as written",)  # setup runs before there is a port
    argv = with_port(ServerSpec(url="http://127.0.0.1:{port}/mcp", start=("python", "-m", "srv", "{port}")), 9)
    assert argv.start == ("python", "-m", "srv", "9")


def test_the_base_fetch_carries_the_token_in_git_s_environment_only():
    import base64

    from toolselect.baseline import fetch_credential

    env = fetch_credential({"INPUT_GITHUB-TOKEN": "ghs_t0k", "GITHUB_SERVER_URL": "https://github.example"})
    assert env["GIT_CONFIG_COUNT"] == "1" and env["GIT_CONFIG_KEY_0"] == "http.https://github.example/.extraheader"
    assert env["GIT_CONFIG_VALUE_0"] == "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:ghs_t0k").decode()
    assert fetch_credential({"GITHUB_SERVER_URL": "https://github.example"}) == {}  # no token: nothing
    assert fetch_credential({"INPUT_GITHUB-TOKEN": "t", "GITHUB_SERVER_URL": "http://plain"}) == {}  # never in clear


def test_as_root_the_prs_programs_never_run_as_root(tmp_path):
    import os

    import pytest

    from toolselect.contain import NOBODY, confinement, owner_of_checkout

    if os.geteuid() != 0:
        pytest.skip("as root only")
    ours = tmp_path / "runner-owned"
    ours.mkdir()
    os.chown(ours, 1001, 1001)
    assert owner_of_checkout({"GITHUB_WORKSPACE": str(ours)}) == (1001, 1001)
    # a checkout of root's own (a runner that runs as root): in the image they run as nobody
    assert owner_of_checkout({"GITHUB_WORKSPACE": str(tmp_path), "TOOLSELECT_IMAGE": "1"}) == NOBODY
    argv = confinement({"GITHUB_WORKSPACE": str(ours)}).command(["node", "build/index.js"])
    assert argv[1:6] == ["--reuid=1001", "--regid=1001", "--clear-groups", "--no-new-privs", "--pdeathsig=KILL"]
    assert argv[-4:] == ["/usr/bin/env", "--", "node", "build/index.js"]  # found with their own rights


def test_in_the_action_no_program_of_the_pr_starts_outside_the_one_stretch_that_contains_them(tmp_path, monkeypatch):
    """Every phase that can start a program of the pull request runs inside `containment()`: one
    added before or after it fails loudly (exit 3) instead of running their code with nothing held.
    Outside the Action (the CLI) there is no such stretch."""
    import pytest

    from toolselect import contain
    from toolselect.containment import containment
    from toolselect.errors import InfraError

    monkeypatch.setattr(contain, "_stretch", "before")
    action = {contain.ACTION: "1", "GITHUB_WORKSPACE": str(tmp_path)}
    with pytest.raises(InfraError, match=r"about to start a program of the pull request \(node\) before the stretch"):
        contain.confinement(action).command(["node", "server.js"])
    said: list[str] = []
    with containment(dict(action), tmp_path, said.append):
        assert contain.confinement(action).command(["node", "server.js"])[-2:] == ["node", "server.js"]
    with pytest.raises(InfraError, match="after the stretch"):
        contain.confinement(action).command(["node", "server.js"])
    assert contain.confinement({"GITHUB_WORKSPACE": str(tmp_path)}).command(["node"])[-1] == "node"  # the CLI


def test_a_process_that_survives_sigkill_keeps_everything_held_and_fails_the_run(tmp_path, monkeypatch):
    """A process of the PR's still running after the kill (stuck in the kernel) is named, and the
    stretch gives nothing back: what it held stays root's, and the run fails (exit 3)."""
    import os
    import subprocess

    import pytest

    from toolselect import containment, sweep

    stuck = subprocess.Popen(["sleep", "30"])  # a kill that never reaches it stands in for one it can't stop
    try:
        monkeypatch.setattr(sweep, "SURVIVAL_S", 0.3)
        with pytest.raises(
            sweep.Survived, match=rf"1 process of the pull request's programs still runs .*{stuck.pid} "
        ):
            sweep._stop_all(lambda: None, lambda procs: {stuck.pid})
        if os.geteuid() != 0:
            return
        held = tmp_path / "held"
        held.mkdir()
        os.chown(held, 1001, 1001)
        monkeypatch.setattr(containment, "owner_of_checkout", lambda env: (1001, 1001))
        monkeypatch.setattr(containment, "sweep", lambda env: sweep._stop_all(lambda: None, lambda procs: {stuck.pid}))
        env = {"GITHUB_ENV": str(held / "env")}
        with pytest.raises(sweep.Survived), containment.containment(env, tmp_path, print):
            assert held.stat().st_uid == 0  # held while their programs may run
        assert held.stat().st_uid == 0 and not containment.all_stopped()  # never given back
        os.rmdir(env["TOOLSELECT_PR_HOME"])
    finally:
        stuck.kill()
        stuck.wait()
        monkeypatch.setattr(containment, "_survived", False)


def test_where_no_namespace_can_be_made_the_log_says_the_sweep_can_be_outrun(tmp_path, monkeypatch):
    from toolselect import containment, sweep

    monkeypatch.setattr(sweep, "_namespace", False)
    monkeypatch.setattr(sweep, "_subreaper", True)
    monkeypatch.setattr(sweep, "_no_namespace", "no PID namespace could be made: Operation not permitted")
    said: list[str] = []
    with containment.containment({}, tmp_path, said.append):
        pass
    assert said == [
        (
            "toolselect: no PID namespace could be made: Operation not permitted; a process of the pull request that "
            "keeps forking could outrun the sweep that stops its programs (SECURITY.md: runner: host)"
        )
    ]
