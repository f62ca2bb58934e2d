"""A real model, optional: `init --draft` and a small `eval` against llama.cpp's OpenAI-compatible
server (llama-cpp-python[server]) running a small GGUF model on this machine. Real models answer
messily — prose around the JSON, half an object, no tool call where one was due — which the fake
model API never does. Skipped, with the reason, where no server is built: docs/real-model.md says
how to build one (about 15 minutes, once, outside CI) and run this."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import DATA, toolselect

PYTHON = os.environ.get("TOOLSELECT_LLAMA_PYTHON", "")  # a Python with llama-cpp-python[server]
MODEL = os.environ.get("TOOLSELECT_LLAMA_MODEL", "")  # a GGUF file
READY = bool(PYTHON and MODEL and Path(PYTHON).exists() and Path(MODEL).is_file())

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(
        not READY,
        reason="no local model server: set TOOLSELECT_LLAMA_PYTHON (a Python with llama-cpp-python[server]) and "
        "TOOLSELECT_LLAMA_MODEL (a .gguf file) — docs/real-model.md",
    ),
    pytest.mark.xdist_group("real-model"),
]
WEATHER = json.loads((DATA / "lint" / "weather_tools.json").read_text())["tools"][:3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [PYTHON, "-m", "llama_cpp.server", "--model", MODEL, "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", "4096", "--model_alias", "local"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("llama.cpp's server did not start:\n" + log.read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def test_init_draft_with_a_real_model(server, tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps({"tools": WEATHER}))
    flags = ["init", "--tools", "tools.json", "--draft", "--provider", "openai", "--model", "local", "--base-url",
             server, "--concurrency", "2"]  # fmt: skip
    run = toolselect(*flags, cwd=tmp_path, env={"OPENAI_API_KEY": "local"}, timeout=900)
    assert run.code == 0, run.err
    said = re.search(r"drafted (\d+) of (\d+) prompts(.*)", run.out)
    assert said, run.out
    print(said.group(0))  # what the real model managed: in the closing note
    golden = yaml.safe_load((tmp_path / "golden.yaml").read_text())
    drafted = [c for c in golden if not str(c["prompt"]).startswith("TODO")]
    assert len(drafted) == int(said.group(1)) and all(str(c["prompt"]).strip() for c in drafted)
    again = toolselect(*flags, "--force", cwd=tmp_path, env={"OPENAI_API_KEY": "local"}, timeout=120)
    assert again.code == 0 and said.group(0).split(" —")[0] in again.out  # the same drafts, from the cache


def test_a_small_eval_with_a_real_model(server, tmp_path):
    (tmp_path / "tools.json").write_text(json.dumps({"tools": WEATHER}))
    cases = [
        {"id": "now", "question": "What's the weather in Paris right now?", "expected_tool": "get_weather"},
        {"id": "fc", "question": "Give me the 5 day forecast for Rome", "expected_tool": "get_forecast"},
        {"id": "none", "question": "Tell me a joke about clouds", "expected_tool": None},
    ]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: openai\n  model: local\n  golden: g.jsonl\n  min_accuracy: 0\n"
        f"  base_url: {server}\n  concurrency: 2\n"
    )
    run = toolselect("eval", "--json", "r.json", cwd=tmp_path, env={"OPENAI_API_KEY": "local"}, timeout=900)
    assert run.code == 0, run.err + run.out
    report = json.loads((tmp_path / "r.json").read_text())
    outcomes = {c["name"]: c["samples"][0]["outcome"] for c in report["cases"]}
    print(outcomes)  # what the real model picked: in the closing note
    assert "ERROR" not in outcomes.values()  # its answers, however wrong, were read
