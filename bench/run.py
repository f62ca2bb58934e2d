"""toolselect benchmarks: one command, a table of ratios.

    python bench/run.py            # everything (a few minutes on 2 cores)
    python bench/run.py --quick    # smaller sizes, for a smoke run
    python bench/run.py --only models   # one benchmark: several models in one run
    python bench/run.py --only rate     # one benchmark: runs at a provider's rate limit
    python bench/run.py --only burst    # one benchmark: a small burst, concurrency 32, five runs in a row
    python bench/run.py --only shards   # one benchmark: 3 shards at once and their merge, vs one job
    python bench/run.py --only cost     # one benchmark: the bill, with and without the prompt cache
    python bench/run.py --only replies  # the reply-kind rules against the labelled replies, with their confusion
    python bench/run.py --only scale    # the cases × tools grid, a warm run, memory (bench/scale.py)
    python bench/run.py --only peers    # beside promptfoo and toolproof on one suite (bench/peers.py)

Every number is measured in the same run on the same machine: ours against the ideal, ours
against toolproof 0.3.1 (`pip install mcp-toolproof`, part of the test extras), with the same
config, the same MCP server (examples/weather/server.py over stdio) and the same fake model API
(tests/fakes/model_api.py). The eval phase is what the fake server sees: first request in to last
answer out.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.model_api import OUTPUT_TOKENS, FakeModelAPI  # noqa: E402

SERVER = ROOT / "examples" / "weather" / "server.py"
BIN = Path(sys.executable).parent
ANSWER = {"tool": "get_weather", "args": {"city": "Paris"}}


def config(folder: Path, cases: int) -> Path:
    """A toolproof-valid config (so both tools read it unchanged) with `cases` inline cases."""
    lines = [
        "server:",
        f"  command: [{json.dumps(sys.executable)}, {json.dumps(str(SERVER))}]",
        "evals:",
        "  provider: openai",
        "  model: fake-model",
        "  min_accuracy: 0.5",
        "  cases:",
    ]
    for i in range(cases):
        lines += [f"    - prompt: 'bench case {i}: is it raining in Paris?'", "      expect_tool: get_weather"]
    path = folder / "toolproof.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def env_for(api: FakeModelAPI, folder: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TOOLSELECT_", "TOOLPROOF_", "OPENAI_", "ANTHROPIC_"))
    }
    env.update(OPENAI_API_KEY="bench-key", OPENAI_BASE_URL=api.url + "/v1", HOME=str(folder), NO_COLOR="1")
    env["PATH"] = str(BIN) + os.pathsep + env.get("PATH", "")
    return env


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, proc


def run_toolselect(
    cases: int, latency: float, concurrency: int, folder: Path | None = None, api: FakeModelAPI | None = None
):
    folder = folder or Path(tempfile.mkdtemp(prefix="tsbench-"))
    cfg = config(folder, cases)
    own = api is None
    api = api or FakeModelAPI({"default": ANSWER, "latency": latency}).start()
    before = api.requests
    try:
        wall, proc = timed(
            [
                str(BIN / "toolselect"),
                "eval",
                "-c",
                str(cfg),
                "--concurrency",
                str(concurrency),
                "--json",
                "r.json",
                "-q",
            ],
            folder,
            env_for(api, folder),
        )
        stats = api.stats()
        stats["requests"] -= before
    finally:
        if own:
            api.stop()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect failed: {proc.stderr}")
    report = json.loads((folder / "r.json").read_text())
    return {
        "wall": wall,
        "phase": stats["eval_phase_s"] or 0.0,
        "requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"],
        "report": report,
        "folder": folder,
    }


def run_toolproof(cases: int, latency: float):
    folder = Path(tempfile.mkdtemp(prefix="tpbench-"))
    cfg = config(folder, cases)
    with FakeModelAPI({"default": ANSWER, "latency": latency}) as api:
        wall, proc = timed([str(BIN / "toolproof"), "eval", "-c", str(cfg), "--no-cache"], folder, env_for(api, folder))
        stats = api.stats()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolproof failed: {proc.stderr[-2000:]}")
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "wall": wall,
        "phase": stats["eval_phase_s"] or 0.0,
        "requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"],
    }


def compiled() -> None:
    """toolselect's modules compiled once before anything is timed: an editable install, or a shell with
    PYTHONDONTWRITEBYTECODE set, would otherwise compile each changed module again in every process."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "toolselect")], check=True)


def best_of(n: int, argv: list[str]) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def peak_memory_mb(cases: int, samples: int) -> tuple[float, float]:
    """Max RSS of a toolselect process evaluating cases × samples through the real SDK."""
    folder = Path(tempfile.mkdtemp(prefix="tsmem-"))
    cfg = config(folder, 1)
    golden = folder / "golden.jsonl"
    with golden.open("w") as f:
        for i in range(cases):
            f.write(
                json.dumps({"id": f"c{i}", "question": f"case {i}: weather in Paris?", "expected_tool": "get_weather"})
                + "\n"
            )
    text = cfg.read_text().split("  cases:")[0] + "  cache: false\n  golden: golden.jsonl\n"
    cfg.write_text(text)
    with FakeModelAPI({"default": ANSWER}) as api:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        wall, proc = timed(
            [
                str(BIN / "toolselect"),
                "eval",
                "-c",
                str(cfg),
                "--repeat",
                str(samples),
                "--concurrency",
                "32",
                "-q",
                "--json",
                "r.json",
            ],
            folder,
            env_for(api, folder),
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect failed: {proc.stderr[-2000:]}")
    shutil.rmtree(folder, ignore_errors=True)
    return max(before, after) / 1024, wall


def bench_locate(n_files: int) -> tuple[float, float, int, int]:
    """A PR of `n_files` changed modules, each defining ten tools whose descriptions share one
    vocabulary; two descriptions per module reworded, one tool of every ten of those measured.
    Returns (locate's time, the time to parse and read every patch once, placed, tools)."""
    import difflib
    import random

    from toolselect.sourcelines import FilePatch, lines_changed, parse_patch, text_changes, text_words

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(400)] + [
        "the",
        "a",
        "of",
        "to",
        "in",
        "for",
        "and",
        "with",
        "get",
        "list",
        "file",
        "repository",
    ] * 10
    files, base, head = [], [], []
    for f in range(n_files):
        texts = [" ".join(rng.choice(vocab) for _ in range(24)) for _ in range(10)]
        new = list(texts)
        for k in (2, 7):
            new[k] = texts[k] + " " + " ".join(rng.choice(vocab) for _ in range(4))
        old_src = "".join(
            f'@tool(description="{t}")\ndef t{f}_{k}(x: str) -> str:\n    return x\n\n\n' for k, t in enumerate(texts)
        )
        new_src = "".join(
            f'@tool(description="{t}")\ndef t{f}_{k}(x: str) -> str:\n    return x\n\n\n' for k, t in enumerate(new)
        )
        lines = difflib.unified_diff(old_src.splitlines(), new_src.splitlines(), lineterm="", n=3)
        files.append(FilePatch(f"src/tools_{f:03}.py", "\n".join(list(lines)[2:])))
        for k in (2, 7):
            if (f * 2 + k) % 10 == 2:
                base.append({"name": f"t{f}_{k}", "description": texts[k]})
                head.append({"name": f"t{f}_{k}", "description": new[k]})
    changes = text_changes(base, head)
    start = time.perf_counter()
    for fp in files:
        for hunk in parse_patch(fp.patch or ""):
            for line in hunk:
                text_words(line.text)
    ideal = time.perf_counter() - start
    start = time.perf_counter()
    found = lines_changed(changes, files)
    took = time.perf_counter() - start
    return took, ideal, len(found), len(changes)


def bench_stress(cases: int, latency: float, concurrency: int) -> dict[str, float]:
    """`toolselect stress` at sizes 0…200 × 3 seeds (the bundled pool and 40 tools of a neighbour of
    our own, so the largest surface has 206 tools), every answer `latency` late: the eval phase, the
    distinct requests, the ideal, and the process's peak memory."""
    folder = Path(tempfile.mkdtemp(prefix="tsstress-"))
    cfg = config(folder, cases)
    neighbour = [
        {"name": f"crm_{i}", "description": f"CRM action {i}.", "inputSchema": {"type": "object", "properties": {}}}
        for i in range(40)
    ]
    (folder / "crm.json").write_text(json.dumps({"tools": neighbour}))
    cfg.write_text(
        cfg.read_text().replace("evals:", "stress:\n  sizes: [0, 10, 25, 50, 100, 200]\n  seeds: 3\n"
                                "  distractors: [crm.json]\nevals:")
    )  # fmt: skip
    with FakeModelAPI({"default": ANSWER, "latency": latency}) as api:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        wall, proc = timed(
            [str(BIN / "toolselect"), "stress", "-c", str(cfg), "--concurrency", str(concurrency), "-q"],
            folder,
            env_for(api, folder),
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        stats = api.stats()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect stress failed: {proc.stderr[-2000:]}")
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "wall": wall,
        "phase": stats["eval_phase_s"] or 0.0,
        "requests": stats["requests"],
        "ideal": stats["requests"] * latency / concurrency,
        "peak_mb": max(before, after) / 1024,
    }


def bench_models(models: int, cases: int, latency: float, concurrency: int) -> dict[str, float]:
    """`models` models × `cases` cases on one endpoint (the fake API), every answer `latency` late:
    they share the endpoint's pool, so the ideal is requests × latency / concurrency."""
    folder = Path(tempfile.mkdtemp(prefix="tsmodels-"))
    cfg = config(folder, cases)
    listed = "".join(f"    - {{provider: openai, model: fake-model-{i}}}\n" for i in range(models))
    cfg.write_text(cfg.read_text().replace("  provider: openai\n  model: fake-model\n", f"  models:\n{listed}"))
    with FakeModelAPI({"default": ANSWER, "latency": latency}) as api:
        wall, proc = timed(
            [str(BIN / "toolselect"), "eval", "-c", str(cfg), "--concurrency", str(concurrency), "-q"],
            folder,
            env_for(api, folder),
        )
        stats = api.stats()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect eval (models) failed: {proc.stderr[-2000:]}")
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "wall": wall,
        "phase": stats["eval_phase_s"] or 0.0,
        "requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"],
        "ideal": stats["requests"] * latency / concurrency,
    }


def models_rows(quick: bool) -> list[tuple[str, str, str, str]]:
    """8. Several models in one run: 3 models × 200 cases × 200 ms on one endpoint, concurrency 16."""
    n, latency, conc = (60, 0.2, 16) if quick else (200, 0.2, 16)
    m = bench_models(3, n, latency, conc)
    return [
        (
            f"3 models × {n} cases × {latency * 1000:.0f} ms, one endpoint, concurrency {conc}",
            (
                f"{m['phase']:.2f} s for {m['requests']} requests (ideal {m['ideal']:.2f} s, max in flight "
                f"{m['max_in_flight']}); whole {m['wall']:.1f} s"
            ),
            f"{m['phase'] / m['ideal']:.2f}× ideal",
            "≤ 1.25×",
        )
    ]


def frozen_suite(prefix: str, cases: int, provider: str, concurrency: int) -> Path:
    """A folder with `cases` cases × 3 samples on a frozen tool surface (no server to start)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    tools = ROOT / "tests" / "data" / "outcomes" / "tools.json"
    golden = "".join(
        json.dumps({"id": f"c{i}", "question": f"weather in city {i} now", "expected_tool": "get_weather"}) + "\n"
        for i in range(cases)
    )
    (folder / "g.jsonl").write_text(golden)
    (folder / "toolselect.yaml").write_text(
        f"tools_file: {json.dumps(str(tools))}\nevals:\n  provider: {provider}\n  model: fake-model\n"
        f"  golden: g.jsonl\n  min_accuracy: 0\n  repeat: 3\n  concurrency: {concurrency}\n"
    )
    return folder


def bench_rate_limit(
    rps: float,
    requests: int,
    headers: str | None,
    flags: tuple[str, ...] = (),
    burst: int = 20,
    concurrency: int = 16,
    retry_after: str = "1",
) -> dict[str, float]:
    """`requests` samples against the fake API enforcing a token bucket of `rps` (`burst`, 429 with
    retry-after 1 s beyond it), with the limit announced in `headers` (or not): what the run achieved."""
    provider = "anthropic" if headers == "anthropic" else "openai"
    folder = frozen_suite("tsrate-", requests // 3, provider, concurrency)
    limit = {"rps": rps, "burst": burst, "headers": headers, "retry_after": retry_after}
    script = {"default": {"tool": "get_weather", "args": {}}, "latency": 0.2, "rate_limit": limit}
    with FakeModelAPI(script) as api:
        env = env_for(api, folder) | {"ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": api.url}
        wall, proc = timed([str(BIN / "toolselect"), "eval", *flags, "--json", "r.json", "-q"], folder, env)
        stats = api.stats()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect eval (rate limit) failed: {proc.stderr[-2000:]}")
    report = json.loads((folder / "r.json").read_text())
    shutil.rmtree(folder, ignore_errors=True)
    return {
        # sustained: what the bucket let through beyond its opening burst, over the time it took
        "achieved": (stats["admitted"] - limit["burst"]) / (stats["admitted_span_s"] or 1),
        "refused": stats["rate_limited"],
        "errors": report["counts"]["outcomes"].get("ERROR", 0),
        "wall": wall,
    }


def rate_rows(quick: bool) -> list[tuple[str, str, str, str]]:
    """9. At the rate limit: 600 requests against a 20 requests/s token bucket, 200 ms per answer."""
    rps, n = 20.0, (150 if quick else 600)
    rows = []
    for what, headers, flags in (
        ("announced (OpenAI headers)", "openai", ()),
        ("announced (Anthropic headers)", "anthropic", ()),
        ("found (no headers: 429s only)", None, ()),
        ("by hand (--max-rpm 1140)", None, ("--max-rpm", "1140")),
    ):
        r = bench_rate_limit(rps, n, headers, flags)
        rows.append(
            (
                f"{n} requests at a 20 req/s limit, {what}",
                f"{r['achieved']:.1f} req/s; {r['refused']} answered 429; {r['errors']} ERROR; whole {r['wall']:.1f} s",
                f"{r['achieved'] / rps:.0%} of the limit",
                "≥ 85%, 0 ERROR",
            )
        )
    return rows


def rate_burst_rows(quick: bool) -> list[tuple[str, str, str, str]]:
    """9b. Issue 24's shape: a 20 requests/s bucket with a burst of 5 and a short retry-after (0.1 s:
    the SDK's own retries are spent in half a second), 200 cases × 3 samples at concurrency 32, five
    runs in a row each with and without headers: no sample may fail."""
    rps, n, runs = 20.0, (150 if quick else 600), (2 if quick else 5)
    rows = []
    for what, headers in (("found (no headers: 429s only)", None), ("announced (OpenAI headers)", "openai")):
        results = [bench_rate_limit(rps, n, headers, burst=5, concurrency=32, retry_after="0.1") for _ in range(runs)]
        errors = [int(r["errors"]) for r in results]
        slowest = min(r["achieved"] for r in results)
        rows.append(
            (
                f"{n} requests at 20 req/s, burst 5, concurrency 32, {what}: {runs} runs",
                f"ERROR per run {errors}; 429s {[int(r['refused']) for r in results]}; slowest {slowest:.1f} req/s",
                f"{slowest / rps:.0%} of the limit, {sum(errors)} ERROR",
                "≥ 85%, 0 ERROR in every run",
            )
        )
    return rows


def bench_shards(cases: int, latency: float, concurrency: int, shards: int) -> dict[str, float]:
    """A suite in one job, then as `shards` shard jobs at once (a runner each) and their merge."""
    folder = frozen_suite("tsshards-", cases, "openai", concurrency)
    script = {"default": {"tool": "get_weather", "args": {}}, "latency": latency}
    eval_ = [str(BIN / "toolselect"), "eval", "-q"]
    with FakeModelAPI(script) as api:
        whole, _ = timed([*eval_, "--json", "whole.json", "--cache-dir", "c-whole"], folder, env_for(api, folder))
    # the shards' model servers: one fake API answers them all, each shard with its own `concurrency`
    # in flight (a runner each); one URL, as each runner's own server would be at the same address
    api = FakeModelAPI(script).start()
    try:
        start = time.perf_counter()
        procs = [
            subprocess.Popen(
                [*eval_, "--shard", f"{i + 1}/{shards}", "--json", f"part-{i + 1}.json", "--cache-dir", f"c-{i + 1}"],
                cwd=folder,
                env=env_for(api, folder),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for i in range(shards)
        ]
        for shard_proc in procs:
            shard_proc.wait()
        parallel = time.perf_counter() - start
    finally:
        api.stop()
    env = env_for(api, folder) | {"OPENAI_API_KEY": ""}
    cache = [str(BIN / "toolselect"), "cache", "merge", *(f"c-{i + 1}" for i in range(shards)), "--cache-dir", "c-m"]
    merged_cache, _ = timed(cache, folder, env)
    parts = [f"part-{i + 1}.json" for i in range(shards)]
    merge, merged = timed([str(BIN / "toolselect"), "merge", *parts, "--cache-dir", "c-m", "-o", "m.json"], folder, env)
    if merged.returncode not in (0, 1):
        raise SystemExit(f"toolselect merge failed: {merged.stderr[-2000:]}")
    same = (
        json.loads((folder / "m.json").read_text())["metrics"]
        == json.loads((folder / "whole.json").read_text())["metrics"]
    )
    shutil.rmtree(folder, ignore_errors=True)
    return {"whole": whole, "parallel": parallel, "merge": merged_cache + merge, "same": same}


def shard_rows(quick: bool) -> list[tuple[str, str, str, str]]:
    """10. Shards: 600 samples, 3 shards at once (a model server each) + the merge, vs one job."""
    cases, latency, conc = (50, 0.2, 8) if quick else (200, 0.2, 8)
    r = bench_shards(cases, latency, conc, 3)
    return [
        (
            f"{cases * 3} samples × {latency * 1000:.0f} ms, concurrency {conc}: 3 shards at once + merge vs one job",
            f"one job {r['whole']:.1f} s; shards {r['parallel']:.1f} s + merge {r['merge']:.1f} s"
            + ("; same metrics" if r["same"] else "; METRICS DIFFER"),
            f"{r['whole'] / (r['parallel'] + r['merge']):.2f}× faster",
            "— (3 processes on this machine's 2 cores; a matrix gives each its runner)",
        )
    ]


def cost_suite(cases: int, provider: str, model: str, concurrency: int) -> Path:
    """`cases` cases × 3 shuffled samples on a 60-tool frozen surface and a system prompt."""
    folder = Path(tempfile.mkdtemp(prefix="tscost-"))
    tools = [
        {
            "name": f"tool_{i:02d}",
            "description": f"Looks up record kind {i} in the catalogue: {'field ' * 12}and returns it as JSON.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        }
        for i in range(60)
    ]
    (folder / "tools.json").write_text(json.dumps({"tools": tools}))
    golden = "".join(
        json.dumps(
            {"id": f"c{i}", "question": f"find kind-{i % 60} record r{i}", "expected_tool": f"tool_{i % 60:02d}"}
        )
        + "\n"
        for i in range(cases)
    )
    (folder / "g.jsonl").write_text(golden)
    (folder / "toolselect.yaml").write_text(
        f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {model}\n  golden: g.jsonl\n"
        f"  min_accuracy: 0\n  repeat: 3\n  shuffle: true\n  concurrency: {concurrency}\n"
        "  system: You are the catalogue assistant. Call a tool when one fits.\n"
    )
    return folder


def bench_cost(cases: int, provider: str, model: str, flags: tuple[str, ...], latency: float) -> dict[str, float]:
    """One run; its input cost as the fake API billed it (its own token accounting × the price table)."""
    from toolselect.prices import BATCH_DISCOUNT, price_for

    folder = cost_suite(cases, provider, model, 16)
    script = {"default": {"tool": "tool_00", "args": {"id": "r"}}, "latency": latency, "batch": {"workers": 16}}
    with FakeModelAPI(script) as api:
        env = env_for(api, folder) | {"ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": api.url}
        wall, proc = timed([str(BIN / "toolselect"), "eval", *flags, "--json", "r.json", "-q"], folder, env)
        billed = api.stats()["billed"]
        asked = [(e["billed"], e["batch"]) for e in api.log if e.get("billed") is not None]
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect eval (cost) failed: {proc.stderr[-2000:]}")
    report = json.loads((folder / "r.json").read_text())["run"]
    shutil.rmtree(folder, ignore_errors=True)
    found = price_for(model)
    assert found is not None
    price = found[0]
    read, write, uncached = billed.get("cache_read", 0), billed.get("cache_write", 0), billed.get("input", 0)
    input_usd = (uncached * price.input + write * price.cache_write + read * price.cache_read) / 1e6
    # the fake bills each request at the synchronous price: a batch's at the batch discount
    total_usd = sum(
        (b.input * price.input + b.cache_write * price.cache_write + b.cache_read * price.cache_read)
        / 1e6
        * (BATCH_DISCOUNT if in_batch else 1.0)
        for b, in_batch in asked
    ) + sum(OUTPUT_TOKENS * price.output / 1e6 * (BATCH_DISCOUNT if in_batch else 1.0) for _, in_batch in asked)
    return {
        "input_usd": input_usd,
        "total_usd": total_usd,
        "batched": sum(in_batch for _, in_batch in asked),
        "share": read / max(1, read + write + uncached),
        "uncached_usd": (read + write + uncached) * price.input / 1e6,  # every input token at the full price
        "reported_usd": report["cost_usd"],
        "wall": wall,
    }


def cost_rows(quick: bool) -> list[tuple[str, str, str, str]]:
    """11. The bill: 200 cases × 3 shuffled samples on 60 tools, 200 ms per answer, concurrency 16, both
    wire formats, with and without the prompt cache: input cost as the fake API billed it, against the
    same tokens at the full input price (OpenAI caches on its own: --no-prompt-cache drops only the
    warm-up and the key there); and with --batch, the whole bill against the synchronous run's (the fake
    works a batch through 16 requests at a time)."""
    cases, latency = (50 if quick else 200), 0.2
    rows = []
    for provider, model in (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4.1")):
        cached = bench_cost(cases, provider, model, (), latency)
        full = bench_cost(cases, provider, model, ("--no-prompt-cache",), latency)
        rows.append(
            (
                f"{cases * 3} requests on 60 tools, {provider} ({model}): prompt cache vs --no-prompt-cache",
                (
                    f"input ${cached['input_usd']:.3f} (uncached ${cached['uncached_usd']:.3f}; --no-prompt-cache "
                    f"${full['input_usd']:.3f}); cached share {cached['share']:.0%} ({full['share']:.0%}); "
                    f"reported ${cached['reported_usd']:.3f}, billed ${cached['total_usd']:.3f}"
                ),
                f"input cost {cached['input_usd'] / cached['uncached_usd']:.0%} of uncached",
                "≥ 70% cached, ≤ 30% of uncached",
            )
        )
        batch = bench_cost(cases, provider, model, ("--batch",), latency)
        rows.append(
            (
                f"  --batch: {batch['batched']:.0f} requests in one batch after one warm-up per tool order",
                (
                    f"${batch['total_usd']:.3f} vs ${cached['total_usd']:.3f} synchronous; cached share "
                    f"{batch['share']:.0%}; reported ${batch['reported_usd']:.3f}"
                ),
                f"{batch['total_usd'] / cached['total_usd']:.0%} of the synchronous cost",
                "≤ 55%",
            )
        )
        rows.append(
            (
                "  wall time, same runs (the warm-up's first request per order goes alone)",
                f"{cached['wall']:.1f} s vs {full['wall']:.1f} s",
                f"{cached['wall'] / full['wall']:.2f}×",
                "≤ 1.10×",
            )
        )
    return rows


def print_table(rows: list[tuple[str, str, str, str]]) -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    width = [max(len(r[i]) for r in [*rows, ("benchmark", "measured", "ratio", "target")]) for i in range(4)]
    for row in [
        ("benchmark", "measured", "ratio", "target"),
        ("-" * width[0], "-" * width[1], "-" * width[2], "-" * width[3]),
        *rows,
    ]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, width, strict=False)))


REPLY_SETS = {  # tests/data/replies/: each file's kinds, as labelled by whoever wrote it
    "labelled.jsonl": "written with the rules",
    "fresh.jsonl": "written apart; 72/80 before the rules saw it",
    "heldout.jsonl": "written apart; 84/100 before the rules saw it",
    "final.jsonl": "written apart; 106/120 before the rules saw it",
    "untouched.jsonl": "written apart; 86/100 before the rules saw it",
}


def reply_rows(quick: bool = False) -> list[tuple[str, str, str, str]]:
    """The deterministic reply-kind rules (replies.classify) against each labelled set: the share
    that agrees, and the confusion of kinds (labelled → read), not just the share."""
    from collections import Counter

    from toolselect.replies import classify

    rows = []
    for name, how in REPLY_SETS.items():
        path = ROOT / "tests" / "data" / "replies" / name
        if not path.exists():
            continue
        labelled = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        pairs = Counter((r["kind"], classify(r["text"])) for r in labelled)
        agree = sum(n for (want, got), n in pairs.items() if want == got)
        wrong = ", ".join(f"{want}→{got} {n}" for (want, got), n in sorted(pairs.items()) if want != got) or "none"
        rows.append(
            (
                f"reply kinds, {name} ({len(labelled)} replies, {how})",
                f"{agree}/{len(labelled)} agree; confused: {wrong}",
                f"{agree / len(labelled):.1%}",
                "≥ 90%",
            )
        )
    return rows


SWEEP_PROBE = """import json, os, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from toolselect import sweep
mode, n, hopper = sys.argv[2], int(sys.argv[3]), sys.argv[4]
began = time.perf_counter()
why = sweep.own_namespace() if mode == "namespace" else None
entered = time.perf_counter() - began
if mode == "tree":
    sweep.become_subreaper()
env = {}
if mode == "uid":
    env = {"TOOLSELECT_IMAGE": "1", "GITHUB_WORKSPACE": sys.argv[5]}
    sweep.become_subreaper()
user = ["setpriv", "--reuid=" + sys.argv[6], "--regid=" + sys.argv[6], "--clear-groups"] if mode == "uid" else []
for _ in range(n):
    subprocess.Popen([*user, "sleep", "60"], start_new_session=True)
time.sleep(0.3)
began = time.perf_counter()
stopped = sweep.sweep(env)
took = time.perf_counter() - began
out = os.path.dirname(hopper)
subprocess.run([*user, "/usr/bin/python3", hopper, out, "10"], check=True)
time.sleep(0.3)
sweep.sweep(env)
swept = time.time()  # once the sweep has returned, nothing of the hopper beats again
time.sleep(0.5)
beats = [float(t) for t in open(os.path.join(out, "hopper.beats")).read().split()]
open(os.path.join(out, "stop"), "w").close()
print(json.dumps({"why": why, "entered": entered, "took": took, "stopped": stopped, "hopper": max(beats) < swept}))
"""


def sweep_rows(quick: bool = False) -> list[tuple[str, str, str, str]]:
    """What stopping every program of the pull request costs, and whether a process that keeps
    forking is caught: the sweep that reads pids and kills them (`tree`, the fallback), kill(-1) as
    the checkout owner's uid (the image), and kill(-1) from the init of a PID namespace (runner:
    host). As root (the uid mode needs another uid)."""
    if os.geteuid() != 0:
        return [("sweep", "skipped: needs root", "", "—")]
    import shutil

    n = 10 if quick else 40
    rows, results = [], {}

    def processes() -> int:
        return sum(1 for name in os.listdir("/proc") if name.isdigit())

    def settle(before: int) -> None:
        deadline = time.monotonic() + 60
        while processes() > before + 20 and time.monotonic() < deadline:
            time.sleep(0.5)

    running = processes()
    for mode in ("tree", "uid", "namespace"):
        folder = Path(tempfile.mkdtemp(prefix="tssweep-"))
        folder.chmod(0o777)
        (folder / "out").mkdir()
        (folder / "out").chmod(0o777)
        shutil.copy(ROOT / "tests" / "fakes" / "hopper.py", folder / "out" / "hopper.py")
        uid = str(200_000 + os.getpid() % 50_000)
        os.chown(folder, int(uid), int(uid))
        done = subprocess.run(
            [sys.executable, "-c", SWEEP_PROBE, str(ROOT / "src"), mode, str(n), str(folder / "out" / "hopper.py"),
             str(folder), uid],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        results[mode] = json.loads(done.stdout.splitlines()[-1])
        settle(running)  # the dead hopper's thousands of zombies, reaped by the machine's init in its own time
        shutil.rmtree(folder, ignore_errors=True)
    tree = results["tree"]["took"]
    for mode, what in (("tree", "pass after pass (the fallback)"), ("uid", "kill(-1) as the owner's uid (image)"),
                       ("namespace", "kill(-1) from a PID namespace's init (host)")):  # fmt: skip
        r = results[mode]
        rows.append((
            f"sweep of {n} processes: {what}",
            f"{r['took'] * 1000:.1f} ms, {r['stopped']} stopped; a process that keeps forking "
            + ("caught" if r["hopper"] else "NOT caught"),
            f"{r['took'] / tree:.2f}× the tree sweep",
            "caught" if mode != "tree" else "—",
        ))  # fmt: skip
    entered = results["namespace"]["entered"] * 1000
    rows.append(("entering the PID namespace (probe, unshare, fork, /proc)", f"{entered:.1f} ms", "once per Action run",
                 "—"))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run")
    parser.add_argument(
        "--only",
        choices=["models", "rate", "burst", "shards", "cost", "replies", "sweep", "scale", "peers"],
        help="run one benchmark alone",
    )
    args = parser.parse_args()
    quick = args.quick
    if args.only in ("scale", "peers"):  # their own tables, printed by their own scripts
        subprocess.run([sys.executable, str(ROOT / "bench" / f"{args.only}.py"), *(["--quick"] if quick else [])])
        return
    if args.only:
        only = {
            "models": models_rows,
            "rate": rate_rows,
            "burst": rate_burst_rows,
            "shards": shard_rows,
            "cost": cost_rows,
            "replies": reply_rows,
            "sweep": sweep_rows,
        }[args.only]
        print_table(only(quick))
        return
    rows: list[tuple[str, str, str, str]] = []

    # 1. Concurrency: 200 cases, 200 ms per answer, 16 in flight, vs the ideal.
    n, latency, conc = (80, 0.2, 16) if quick else (200, 0.2, 16)
    ours = run_toolselect(n, latency, conc)
    ideal = n * latency / conc
    rows.append(
        (
            f"eval phase, {n} cases × {latency * 1000:.0f} ms, concurrency {conc}",
            f"{ours['phase']:.2f} s (ideal {ideal:.2f} s, max in flight {ours['max_in_flight']})",
            f"{ours['phase'] / ideal:.2f}× ideal",
            "≤ 1.25×",
        )
    )
    rows.append(
        (
            "  whole process, same run",
            f"{ours['wall']:.2f} s",
            f"{ours['wall'] - ours['phase']:.2f} s outside the eval phase",
            "—",
        )
    )

    # start-up pieces
    bare = best_of(5, [sys.executable, "-c", "pass"])
    version = best_of(5, [str(BIN / "toolselect"), "--version"])
    imports = (
        best_of(
            3,
            [
                sys.executable,
                "-c",
                "import toolselect.pipeline.eval, toolselect.providers.openai, openai, mcp.client.stdio",
            ],
        )
        - bare
    )
    snap_folder = Path(tempfile.mkdtemp(prefix="tssnap-"))
    mcp_start = (
        best_of(
            3,
            [str(BIN / "toolselect"), "snapshot", "-o", str(snap_folder / "t.json"), "--", sys.executable, str(SERVER)],
        )
        - version
    )
    rows.append(("  start-up: imports (pipeline, openai SDK, mcp)", f"{imports:.2f} s", "", "—"))
    rows.append(("  start-up: MCP server start + tools/list", f"{mcp_start:.2f} s", "", "—"))

    # 2. Against toolproof, same config, same server, same fake API.
    n2 = 30 if quick else 60
    tp = run_toolproof(n2, latency)
    ours60 = run_toolselect(n2, latency, conc)
    rows.append(
        (
            f"eval phase vs toolproof 0.3.1, {n2} cases × {latency * 1000:.0f} ms",
            f"ours {ours60['phase']:.2f} s, toolproof {tp['phase']:.2f} s (max in flight {tp['max_in_flight']})",
            f"{tp['phase'] / ours60['phase']:.1f}× faster",
            "≥ 10×",
        )
    )
    rows.append(
        (
            f"whole process vs toolproof 0.3.1, {n2} cases",
            f"ours {ours60['wall']:.2f} s, toolproof {tp['wall']:.2f} s",
            f"{tp['wall'] / ours60['wall']:.1f}× faster",
            "≥ 2×",
        )
    )

    # 3. Warm re-run of cached cases.
    n3 = 300 if quick else 1000
    folder = Path(tempfile.mkdtemp(prefix="tswarm-"))
    with FakeModelAPI({"default": ANSWER}) as api:  # one endpoint: the base URL is part of the cache key
        run_toolselect(n3, 0.0, 32, folder=folder, api=api)
        warm = run_toolselect(n3, 0.0, 32, folder=folder, api=api)
    rep = warm["report"]["run"]
    rows.append(
        (
            f"warm re-run, {n3} cached cases",
            f"eval {rep['duration_s']:.2f} s, {warm['requests']} API calls, {rep['cache_hits']} hits",
            f"{rep['duration_s']:.2f} s",
            "≤ 1 s, 0 calls",
        )
    )
    shutil.rmtree(folder, ignore_errors=True)

    # 4. Start-up.
    rows.append(
        (
            "`toolselect --version` vs `python -c pass`",
            f"{version * 1000:.0f} ms vs {bare * 1000:.0f} ms",
            f"{version / bare:.1f}×",
            "≤ 5×",
        )
    )

    # 5. Memory.
    cases, samples = (2000, 3) if quick else (10000, 3)
    peak, wall = peak_memory_mb(cases, samples)
    rows.append(
        (
            f"peak memory, {cases} cases × {samples} samples (real SDK, fake API)",
            f"{peak:.0f} MB (in {wall:.0f} s)",
            f"{peak:.0f} MB",
            "≤ 300 MB",
        )
    )

    # 6. Finding the source lines of changed tool texts in a pull request's diff.
    n_files = 100 if quick else 300
    took, ideal, found, tools = bench_locate(n_files)
    rows.append(
        (
            f"source lines of {tools} changed tools in a {n_files}-file PR",
            f"{took:.2f} s (reading every patch once: {ideal:.2f} s; {found}/{tools} placed)",
            f"{took / ideal:.1f}× reading",
            "≤ 1 s, all placed",
        )
    )

    # 7. The stress test: 30 cases × 6 sizes × 3 seeds, 100 ms per answer.
    n7 = 10 if quick else 30
    st = bench_stress(n7, 0.1, conc)
    rows.append(
        (
            f"stress, {n7} cases × 6 sizes (to 206 tools) × 3 seeds × 100 ms, concurrency {conc}",
            f"{st['phase']:.2f} s for {st['requests']} requests (ideal {st['ideal']:.2f} s); whole {st['wall']:.1f} s",
            f"{st['phase'] / st['ideal']:.2f}× ideal",
            "≤ 1.25×",
        )
    )
    rows.append(("  peak memory, same run", f"{st['peak_mb']:.0f} MB", f"{st['peak_mb']:.0f} MB", "≤ 300 MB"))

    rows += models_rows(quick)
    rows += rate_rows(quick)
    rows += rate_burst_rows(quick)
    rows += shard_rows(quick)
    rows += cost_rows(quick)
    print_table(rows)
    for script in ("scale", "peers"):  # speed at scale and the peers: their own tables (issue 47)
        print()
        subprocess.run([sys.executable, str(ROOT / "bench" / f"{script}.py"), *(["--quick"] if quick else [])])


if __name__ == "__main__":
    main()
