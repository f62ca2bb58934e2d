"""The end-to-end harness, shared by the e2e tests (which import it from here, never from one another).

- The Action as a container action runs it: `run_action` starts entrypoint.py in a subprocess with the
  environment a runner gives (INPUT_* with dashes, GITHUB_EVENT_PATH holding a `pull_request_event`,
  the runner's file commands), in a temporary git repository (`make_repo`: its head commit rewords a
  tool description so some cases flip), against the fake model API (`SCRIPT`) and the fake GitHub
  API (`register_pull`); `run_pull_request` is that run on PR 7, its server on the host.
- Real servers on the host: the toolchains' environment (`toolchain_env`), repositories of any files
  (`commit_repo`), and the check that no process a run started is left (`no_process_left`).
- The providers' command line against the fake model API (`run_eval`, `base_url`, `key_env`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import DATA, ROOT, TESTS, toolselect
from tests.fakes.github_api import FakeGitHub
from tests.fakes.model_api import FakeModelAPI

# ----------------------------------------------------------------------------- the Action

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
KEY = "sk-action-test-key"
TOKEN = "ghs_action_token"
BASE_FORECAST = "Weather forecast for a city for the coming days, day by day."
HEAD_FORECAST = "Daily outlook for a city."

TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather conditions in a city right now.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {
        "name": "get_forecast",
        "description": BASE_FORECAST,
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
    {
        "name": "search_web",
        "description": "Search the web.",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
]
CASES = [
    ("now-paris", "Is it raining in Paris right now?", "get_weather", {"city": "Paris"}),
    ("now-oslo", "How windy is Oslo at the moment?", "get_weather", {"city": "Oslo"}),
    ("fc-dublin", "Will it rain tomorrow in Dublin?", "get_forecast", {"city": "Dublin"}),
    ("fc-seattle", "Any rain in Seattle this weekend?", "get_forecast", {"city": "Seattle"}),
    ("fc-lisbon", "7-day outlook for Lisbon", "get_forecast", {"city": "Lisbon"}),
    ("web", "Search the web for MCP news", "search_web", {}),
    ("none-thanks", "Thanks, that's all!", None, {}),
    ("none-joke", "Tell me a joke about clouds.", None, {}),
]
# The model picks get_forecast for the boundary prompts only while its description says "coming days".
SCRIPT = {
    "key": KEY,
    "answers": {
        "Is it raining in Paris right now?": {"tool": "get_weather", "args": {"city": "Paris"}},
        "How windy is Oslo at the moment?": {"tool": "get_weather", "args": {"city": "Oslo"}},
        "Will it rain tomorrow in Dublin?": [
            {"when": {"get_forecast": "coming days"}, "tool": "get_forecast", "args": {"city": "Dublin"}},
            {"tool": "get_weather", "args": {"city": "Dublin"}},
        ],
        "Any rain in Seattle this weekend?": [
            {"when": {"get_forecast": "coming days"}, "tool": "get_forecast", "args": {"city": "Seattle"}},
            {"tool": "get_weather", "args": {"city": "Seattle"}},
        ],
        "7-day outlook for Lisbon": {"tool": "get_forecast", "args": {"city": "Lisbon", "days": 7}},
        "Search the web for MCP news": {"tool": "search_web", "args": {"query": "MCP news"}},
    },
    "default": {"text": "Happy to help!"},
}


def git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@dataclass
class Repo:
    path: Path
    base: str
    head: str


def make_repo(
    root: Path,
    head_description: str = HEAD_FORECAST,
    base_has_config: bool = True,
    extra_config: str = "",
    extra_files: dict[str, str] | None = None,
    models: str = "  provider: openai\n  model: fake-model\n",
) -> Repo:
    """`models`: the config's lines that name the model(s), e.g. an `evals.models:` list."""
    ws = root / "workspace"
    ws.mkdir()
    git("init", "-q", "-b", "main", cwd=ws)
    (ws / "evals").mkdir()
    (ws / "evals" / "tools.json").write_text(json.dumps({"tools": TOOLS}, indent=1))
    golden = "".join(
        json.dumps({"id": n, "question": q, "expected_tool": t, "expected_args": a}) + "\n" for n, q, t, a in CASES
    )
    (ws / "evals" / "golden.jsonl").write_text(golden)
    for name, text in (extra_files or {}).items():
        (ws / "evals" / name).write_text(text)
    config = f"tools_file: tools.json\nevals:\n{models}  min_accuracy: 0.6\n  golden: golden.jsonl\n"
    config += extra_config
    if base_has_config:
        (ws / "evals" / "toolselect.yaml").write_text(config)
    git("add", "-A", cwd=ws)
    git("commit", "-qm", "base", cwd=ws)
    base = git("rev-parse", "HEAD", cwd=ws)
    if not base_has_config:
        (ws / "evals" / "toolselect.yaml").write_text(config)
    tools = [dict(t) for t in TOOLS]
    tools[1]["description"] = head_description
    (ws / "evals" / "tools.json").write_text(json.dumps({"tools": tools}, indent=1))
    git("add", "-A", cwd=ws)
    git("commit", "-qm", "head: reword get_forecast", cwd=ws)
    return Repo(ws, base, git("rev-parse", "HEAD", cwd=ws))


def pull_request_event(repo: Repo, fork: bool = False) -> dict:
    event = json.loads((DATA / "github" / "pull_request.synchronize.json").read_text())
    pr = event["pull_request"]
    event["number"] = pr["number"] = 7
    pr["base"]["sha"] = repo.base
    pr["head"]["sha"] = repo.head
    pr["base"]["repo"]["full_name"] = "acme/weather-mcp"
    pr["head"]["repo"]["full_name"] = "contributor/weather-mcp" if fork else "acme/weather-mcp"
    pr["head"]["ref"] = "reword-forecast"
    event["repository"]["full_name"] = "acme/weather-mcp"
    return event


def register_pull(github: FakeGitHub, repo: Repo, extra: tuple[tuple[str, str | None], ...] = ()) -> None:
    """PR 7 as GitHub shows it: its head, and each changed file with its patch (no file header)."""
    github.add_pull(7, "acme", "reword-forecast", repo.head, repo.base)
    files = []
    for name in git("diff", "--name-only", repo.base, repo.head, cwd=repo.path).split("\n"):
        full = git("diff", "--no-color", "-U3", repo.base, repo.head, "--", name, cwd=repo.path)
        files.append((name, full[full.index("@@") :]))
    github.set_files(7, sorted([*files, *extra]))


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    report_dir: Path

    def report(self, name: str = "report.json") -> dict:
        return json.loads((self.report_dir / name).read_text())


def parse_outputs(text: str) -> dict[str, str]:
    out, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        name, _, delimiter = lines[i].partition("<<")
        j = lines.index(delimiter, i + 1)
        out[name] = "\n".join(lines[i + 1 : j])
        i = j + 1
    return out


def asks_a_model(repo: Path, inputs: dict[str, str]) -> bool:
    """Whether the run asks an API model: the provider input, else a config in the checkout that
    names an API provider (or several models)."""
    if inputs.get("provider") or inputs.get("models"):
        return inputs.get("provider") != "bm25"
    for config in [*repo.glob("*.yaml"), *repo.glob("*/*.yaml")]:
        if config.name not in ("toolselect.yaml", "toolproof.yaml"):
            continue
        try:
            evals = (yaml.safe_load(config.read_text()) or {}).get("evals") or {}
        except (yaml.YAMLError, AttributeError):
            continue
        if isinstance(evals, dict) and (evals.get("provider") in ("openai", "anthropic") or evals.get("models")):
            return True
    return False


def run_action(
    repo: Path,
    tmp: Path,
    *,
    inputs: dict[str, str],
    event: dict | None,
    event_name: str,
    api: FakeModelAPI,
    github: FakeGitHub,
    env: dict[str, str] | None = None,
    timeout: float = 240,
    argv: list[str] | None = None,
    owner: int | None = None,
    meanwhile: Callable[[subprocess.Popen], None] | None = None,
) -> ActionRun:
    """`env`: more of the job's environment (e.g. what earlier steps exported); `argv`: the step's
    command (the container's entrypoint unless given); `owner`: the runner's uid, which owns the
    file commands' folder and files, HOME and RUNNER_TEMP, as on a real runner; `meanwhile`: called
    (in a thread) with the running step, e.g. to cancel it as the runner does."""
    files = tmp / "runner"
    files.mkdir(exist_ok=True)
    (files / "event.json").write_text(json.dumps(event or {}))
    for name in ("output", "summary", "env", "path", "state"):
        (files / name).write_text("")
    if owner is not None:
        for folder in (files, tmp / "github-home", tmp / "runner-temp"):
            folder.mkdir(exist_ok=True)
            for path in (folder, *folder.rglob("*")):
                os.chown(path, owner, owner, follow_symlinks=False)
    extra = env or {}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INPUT_", "OPENAI_", "ANTHROPIC_", "TOOLSELECT_"))
    }
    # GitHub sets every declared input: its default (expressions evaluated), or ""
    for name, spec in ACTION["inputs"].items():
        env[f"INPUT_{name.upper()}"] = str(spec.get("default", "")).replace("${{ github.token }}", TOKEN)
    env.update({"INPUT_WORKING-DIRECTORY": "evals", "INPUT_OPENAI-BASE-URL": api.url + "/v1"})
    if asks_a_model(
        repo, inputs
    ):  # the workflow passes the key its config's provider takes (a key bm25 can't use is an error)
        env["INPUT_OPENAI-API-KEY"] = KEY
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(files / "event.json"),
            "GITHUB_WORKSPACE": str(repo),
            "GITHUB_OUTPUT": str(files / "output"),
            "GITHUB_STEP_SUMMARY": str(files / "summary"),
            "GITHUB_ENV": str(files / "env"),
            "GITHUB_PATH": str(files / "path"),
            "GITHUB_STATE": str(files / "state"),
            "GITHUB_API_URL": github.url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "acme/weather-mcp",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_SHA": "0" * 40,
            "GITHUB_REF": "refs/pull/7/merge",
            "HOME": str(tmp / "github-home"),
            "RUNNER_TEMP": str(tmp / "runner-temp"),
            "PYTHONWARNINGS": "error",
        }
    )
    env.update(extra)
    step = subprocess.Popen(
        argv or [sys.executable, str(ROOT / "entrypoint.py")],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watcher = threading.Thread(target=meanwhile, args=(step,)) if meanwhile else None
    if watcher:
        watcher.start()
    try:
        stdout, stderr = step.communicate(timeout=timeout)
    finally:
        step.kill()
        if watcher:
            watcher.join()
    assert "Traceback" not in stderr, stderr
    return ActionRun(
        step.returncode,
        stdout,
        stderr,
        parse_outputs((files / "output").read_text()),
        (files / "summary").read_text(),
        repo / "toolselect-report",
    )


def run_pull_request(repo: Repo, tmp: Path, api: FakeModelAPI, github: FakeGitHub, **inputs: str) -> ActionRun:
    """The Action on PR 7 of `repo` (its root the working directory, the server on the host, the
    toolchains' environment), with `inputs` on top."""
    return run_action(
        repo.path,
        tmp,
        inputs={"working-directory": ".", "runner": "host", **inputs},
        event=pull_request_event(repo),
        event_name="pull_request",
        api=api,
        github=github,
        env=toolchain_env(tmp),
    )


# ----------------------------------------------------------------------------- real servers on the host

WHEELS = TESTS / ".wheels"


def toolchain_env(home: Path) -> dict[str, str]:
    """What a job's earlier steps would have set up: npm's and uv's caches, uv offline from the
    pinned wheels (these reach setup and the server: NPM_CONFIG_*/UV_* are toolchain variables)."""
    return {
        "npm_config_cache": str(Path.home() / ".npm"),
        "npm_config_prefer_offline": "true",
        "npm_config_update_notifier": "false",
        "UV_OFFLINE": "1",
        "UV_NO_INDEX": "1",
        "UV_FIND_LINKS": str(WHEELS),
        "UV_CACHE_DIR": str(home / "uv-cache"),
        "UV_PYTHON_DOWNLOADS": "never",
    }


def left_running(folder: Path) -> list[str]:
    """Processes whose working folder is in `folder` or in a base worktree: servers left behind."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(folder)) or ("toolselect-base-" in cwd and _base_of(cwd, folder)):
            found.append(f"{proc.name} in {cwd}: {cmd}")
    return found


def _base_of(cwd: str, folder: Path) -> bool:
    """A base worktree's process belongs to the repository in `folder` (another test running at the
    same time has its own); a worktree already gone can't say whose it was, so it counts."""
    root = Path(cwd[: cwd.index("toolselect-base-")]) / cwd[cwd.index("toolselect-base-") :].split("/")[0]
    try:
        gitdir = (root / ".git").read_text().removeprefix("gitdir:").strip()
    except OSError:
        return True
    return gitdir.startswith(str(folder))


def no_process_left(folder: Path) -> None:
    deadline = time.monotonic() + 5
    while (found := left_running(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not found, found


def commit_repo(root: Path, base: dict[str, str], head: dict[str, str], ignore: str = "") -> Repo:
    """A repository whose base commit holds `base` and whose head commit changes `head`'s files."""
    ws = root / "workspace"
    ws.mkdir()
    git("init", "-q", "-b", "main", cwd=ws)
    (ws / ".gitignore").write_text(ignore)
    for files in (base, head):
        for name, text in files.items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(text)
        git("add", "-A", cwd=ws)
        git("commit", "-qm", "base" if files is base else "head", cwd=ws)
        if files is base:
            base_sha = git("rev-parse", "HEAD", cwd=ws)
    return Repo(ws, base_sha, git("rev-parse", "HEAD", cwd=ws))


GOLDEN = "".join(
    json.dumps({"id": n, "question": q, "expected_tool": t, "expected_args": a}) + "\n" for n, q, t, a in CASES
)


def tools_with(description: str) -> list[dict]:
    tools = [dict(t) for t in TOOLS]
    tools[1]["description"] = description
    return tools


def fake_model_config(server: str) -> str:
    return f"{server}evals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n  min_accuracy: 0.6\n"


def tools_ts(forecast: str) -> str:
    """TOOLS in TypeScript source, get_forecast's description a template string."""
    parts = []
    for t in TOOLS:
        description = "`" + forecast + "`" if t["name"] == "get_forecast" else json.dumps(t["description"])
        parts.append(
            f'  {{\n    name: "{t["name"]}",\n    description: {description},\n'
            f"    inputSchema: {json.dumps(t['inputSchema'])},\n  }},\n"
        )
    return "export const TOOLS = [\n" + "".join(parts) + "];\n"


# ----------------------------------------------------------------------------- the providers' command line

PROVIDER_KEY = "sk-test-SECRET-4242"
PROVIDERS = ["anthropic", "openai", "openai-responses", "gemini"]


def base_url(provider: str, api) -> str:
    return api.url if provider in ("anthropic", "gemini") else api.url + "/v1"


def key_env(tmp_path: Path) -> dict[str, str]:
    # an empty HOME and config dir: no credentials on disk can stand in for a missing key
    return {
        "ANTHROPIC_API_KEY": PROVIDER_KEY,
        "OPENAI_API_KEY": PROVIDER_KEY,
        "GEMINI_API_KEY": PROVIDER_KEY,
        "HOME": str(tmp_path),
    }


def run_eval(folder: Path, provider: str, api, *flags: str, env: dict | None = None):
    return toolselect(
        "eval",
        "--provider",
        provider,
        "--base-url",
        base_url(provider, api),
        "--json",
        "r.json",
        *flags,
        cwd=folder,
        env=env if env is not None else key_env(folder),
    )


CATALOGUE_MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4.1",
    "openai-responses": "gpt-4.1",
    "gemini": "gemini-2.5-flash",
}


def catalogue(folder: Path, provider: str, *, tools: int, cases: int, lines: tuple[str, ...]) -> None:
    """A frozen surface of `tools` look-up tools (long enough for the prompt cache), one case per
    record kind expecting its tool, and a config for `provider` with the given `evals:` lines."""
    listed = [
        {
            "name": f"tool_{i:02d}",
            "description": f"Looks up record kind {i} in the catalogue: {'field ' * 12}and returns it as JSON.",
            "inputSchema": {
                "type": "object",
                "properties": {"id": {"type": "string", "description": f"the kind-{i} record's identifier"}},
                "required": ["id"],
            },
        }
        for i in range(tools)
    ]
    (folder / "tools.json").write_text(json.dumps({"tools": listed}))
    golden = [
        {"id": f"c{i}", "question": f"find kind-{i} record r{i}", "expected_tool": f"tool_{i:02d}"}
        for i in range(cases)
    ]
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    (folder / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {CATALOGUE_MODELS[provider]}\n"
        "  golden: golden.jsonl\n  min_accuracy: 0\n" + "".join(f"  {line}\n" for line in lines)
    )


# ----------------------------------------------------------------------------- driven clients

CLIENTS = TESTS / ".clients"  # the real clients tests/install-servers.sh installs, <client>/<version>/
CITY = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}


def weather_tools(forecast: str = "get_forecast") -> list[dict[str, Any]]:
    """The drive tests' surface: get_weather and a forecast tool, named as the test needs (an odd
    character a client rewrites: `get.forecast`, `get forecast`)."""
    return [
        {"name": "get_weather", "description": "Current weather conditions for a city.", "inputSchema": CITY},
        {"name": forecast, "description": "The weather forecast for the next days in a city.", "inputSchema": CITY},
    ]


# Claude Code's model, scripted: its MCP tools are deferred behind its own ToolSearch, so the model
# searches, then calls what it loaded; a file listing takes its own Bash
CLAUDE_CODE_SCRIPT: dict[str, Any] = {
    "answers": {
        "Is it raining in Paris?": [
            {"like": "get_weather", "args": {"city": "Paris"}},
            {"like": "ToolSearch", "args": {"query": "select:mcp__weather__get_weather"}},
        ],
        "List the files here": {"like": "Bash", "args": {"command": "ls", "description": "list"}},
    },
    "default": {"text": "Hello!"},
}


def client_program(name: str, version: str, program: str) -> Path:
    """The installed client's program; the test fails, saying how to install it, when it is missing."""
    import pytest

    path = CLIENTS / name / version / "node_modules" / ".bin" / program
    if not path.exists():
        pytest.fail(f"{path} is missing: run tests/install-servers.sh (it installs the clients from npm)")
    return path


def drive_all(
    tmp_path: Path,
    program: Path,
    tools: list[dict],
    prompts: list[str],
    api,
    provider: str,
    model: str,
    *,
    together: bool = False,
    **driven: Any,
) -> list[Any]:
    """Each prompt asked through the real client `program` (its name and version from its folder),
    against an endpoint whose provider is the fake API through an answer cache in `tmp_path`; each
    refused tools/call written to tmp_path/calls.jsonl. `together`: the samples at once."""
    import asyncio

    from toolselect.drive.endpoint import Endpoint
    from toolselect.drive.sample import Driven, drive
    from toolselect.providers.call import ModelCall
    from toolselect.providing import make_provider
    from toolselect.throttle import Throttle

    version, name = program.parents[2].name, program.parents[3].name

    async def run() -> list[Any]:
        call = ModelCall(provider, model, base_url=base_url(provider, api))
        keys = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}
        remote = make_provider(call, Throttle(4), keys, tmp_path / "cache", "use")
        remote.connect()
        given: dict[str, Any] = {"calls": tmp_path / "calls.jsonl", "runs": CLIENTS.resolve() / ".runs"}
        given |= {"provider": provider} | driven
        client = Driven(name, program, "weather", model, tuple(tools), version, os.environ["PATH"], **given)
        endpoint = Endpoint(remote, ends=client.ends, search_tool=client.search_tool)
        await endpoint.start()
        try:
            if together:
                return list(await asyncio.gather(*(drive(client, endpoint, p) for p in prompts)))
            return [await drive(client, endpoint, p) for p in prompts]
        finally:
            await endpoint.stop()
            await remote.aclose()

    return asyncio.run(run())


def recaptured(client: str, tmp_path: Path) -> dict:
    """The drift test's half: the tested client captured again (`toolselect clients capture`), asserted
    equal to its bundled facts but for the date; the fresh facts, for a test to say what they hold."""
    out = tmp_path / "now.yaml"
    done = toolselect("clients", "capture", client, "--clients-dir", str(CLIENTS), "--out", str(out), cwd=tmp_path)
    assert done.code == 0, done.out + done.err
    now = yaml.safe_load(out.read_text())
    bundled = yaml.safe_load((ROOT / f"src/toolselect/data/clients/{client}.observed.yaml").read_text())
    now.pop("date"), bundled.pop("date")
    assert now == bundled, f"a fact of {client} changed: `toolselect clients capture {client} --out …`"
    return now


def client_project(folder: Path, tools: list[dict], golden: list[dict], provider: str, model: str, client: str) -> None:
    """A project whose config asks `model` through the real `client` (installed in CLIENTS)."""
    (folder / "tools.json").write_text(json.dumps({"tools": tools}))
    (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in golden))
    (folder / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {model}\n  golden: golden.jsonl\n"
        f"  min_accuracy: 0\n  server_name: weather\n  clients: [{client}]\n  clients_dir: {CLIENTS}\n"
    )
