"""Shared helpers: run the real `toolselect` command, and start real MCP servers on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# The helpers the tests share keep pytest's assert messages, as they had in the test modules they came from
pytest.register_assert_rewrite("tests.builders", "tests.e2e.harness")

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
FAKES = TESTS / "fakes"
DATA = TESTS / "data"
EXAMPLE = ROOT / "examples" / "weather"


def run_record(provider: str = "openai") -> Any:
    """A report's `run` section for unit tests: what ran, without timings or costs."""
    from toolselect.report.schema import RunOut

    return RunOut(
        toolselect_version="t",
        provider=provider,
        model="m",
        repeat=1,
        concurrency=1,
        started_at="s",
        finished_at="f",
        duration_s=0.0,
        args_measured=True,
    )


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self, path: Path) -> dict:
        return json.loads(path.read_text(encoding="utf-8"))


def cli_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a user's `toolselect` runs in: none of the runner's or a developer's keys."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TOOLSELECT_", "TOOLPROOF_", "INPUT_", "GITHUB_", "ANTHROPIC_", "OPENAI_"))
        and k != "CI"  # the CI machine sets it; a test that wants it says so
    }
    full_env.update({"COLUMNS": "200", "NO_COLOR": "1", "PYTHONWARNINGS": "error"})
    # `python` in example configs means this interpreter, even when its venv isn't activated
    full_env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + full_env.get("PATH", "")
    full_env.update(env or {})
    return full_env


def toolselect(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120, process: bool = False
) -> Run:
    """Run `toolselect ARGS` as a user would, in `cwd` with only the environment a user has; never a
    traceback. In this process by default (its CLI's `main`, as the console script calls it: what it
    prints and the exit code); `process=True` starts `python -m toolselect` instead, for what only a
    process of its own shows (the subreaper and the sweep, signals, the interpreter's start)."""
    full_env = cli_environment(env)
    if process:
        proc = subprocess.run(
            [sys.executable, "-m", "toolselect", *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        return Run(proc.returncode, proc.stdout, proc.stderr)
    return _in_process(list(args), cwd, full_env)


def _in_process(argv: list[str], cwd: Path, env: dict[str, str]) -> Run:
    import contextlib
    import io
    import threading
    import warnings

    from toolselect.cli import main

    # the working folder and the environment are the process's: one run at a time, from the main thread
    assert threading.current_thread() is threading.main_thread(), "toolselect(...) in a thread needs process=True"

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("error")  # as PYTHONWARNINGS=error does for a process
            try:
                code = main(argv, own_process=False)
            except SystemExit as exc:  # argparse: --help, a usage error
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return Run(code, out.getvalue(), err.getvalue())


@dataclass
class HttpServer:
    url: str
    proc: subprocess.Popen


def start_http_server(argv: list[str], path: str, env: dict[str, str] | None = None) -> HttpServer:
    """Start a server that prints `PORT=<n>` and return its URL (the caller stops it)."""
    proc = subprocess.Popen(
        [sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("PORT="):
        proc.kill()
        proc.wait()
        proc.stdout.close()
        raise RuntimeError(f"server did not announce a port: {line!r}")
    return HttpServer(f"http://127.0.0.1:{line.removeprefix('PORT=')}{path}", proc)


def stop(server: HttpServer) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
    if server.proc.stdout is not None:
        server.proc.stdout.close()


@pytest.fixture
def model_api() -> Iterator:
    """`model_api(script)` starts the fake Anthropic/OpenAI API for this test (a thread)."""
    from tests.fakes.model_api import FakeModelAPI

    started: list[FakeModelAPI] = []

    def _start(script: dict | None = None, **overrides) -> FakeModelAPI:
        api = FakeModelAPI(script, **overrides).start()
        started.append(api)
        return api

    yield _start
    for api in started:
        api.stop()


@pytest.fixture
def serve() -> Iterator:
    """`serve(argv, path, env)` starts a loopback MCP server for this test."""
    started: list[HttpServer] = []

    def _serve(argv: list[str], path: str = "/mcp", env: dict[str, str] | None = None) -> HttpServer:
        server = start_http_server(argv, path, env)
        started.append(server)
        return server

    yield _serve
    for server in started:
        stop(server)
