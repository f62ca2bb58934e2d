"""Speed at scale (issue 47): the grid of cases × tools, a warm run, memory — as ratios, one run.

    python bench/scale.py                 # the grid (cases 50/200/800 × tools 10/60/240), warm, memory
    python bench/scale.py --quick         # a smaller grid, for a smoke run
    python bench/scale.py --cell 800 240  # one cell, cold and warm (for a profile: --profile out.prof)

Each cell is a frozen surface (tools.json: the bundled pool's real tool definitions, repeated with
a suffix past its 165) and a golden set whose case i expects tool i mod tools, evaluated by
`toolselect eval` against the fake model API (tests/fakes/model_api.py, `LATENCY` per answer) at
`CONCURRENCY`. Measured from outside the process: set-up (the process's start to the first request
the fake sees), the API phase (first request in to last answer out) against the ideal (cases ×
latency ÷ concurrency), the whole process, and a warm re-run (every answer cached) against
`toolselect --version` plus reading and scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.model_api import FakeModelAPI  # noqa: E402

BIN = Path(sys.executable).parent
POOL = ROOT / "src" / "toolselect" / "data" / "pool"
LATENCY = 0.1
CONCURRENCY = 16


def pool_tools() -> list[dict]:
    tools: list[dict] = []
    for path in sorted(POOL.glob("*.json")):
        data = json.loads(path.read_text())
        tools += data["tools"] if isinstance(data, dict) else data
    return tools


def surface(count: int) -> list[dict]:
    """`count` real tool definitions: the pool's, then the pool's again with a suffix."""
    pool, out = pool_tools(), []
    for i in range(count):
        tool = dict(pool[i % len(pool)])
        if i >= len(pool):
            tool["name"] = f"{tool['name']}_{i // len(pool) + 1}"
            tool["description"] = f"(copy {i // len(pool) + 1}) {tool.get('description', '')}"
        out.append(tool)
    return out


def suite(folder: Path, cases: int, tools: int) -> list[dict]:
    """A project in `folder`: tools.json, golden.jsonl, toolselect.yaml. Its tools."""
    defined = surface(tools)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.json").write_text(json.dumps({"tools": defined}))
    with (folder / "golden.jsonl").open("w") as f:
        for i in range(cases):
            tool = defined[i % tools]
            words = " ".join(str(tool.get("description", "")).split()[:12])
            f.write(json.dumps({"id": f"c{i}", "question": f"Case {i}: {words}", "expected_tool": tool["name"]}) + "\n")
    (folder / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: openai\n  model: fake-model\n  golden: golden.jsonl\n"
        f"  min_accuracy: 0\n  concurrency: {CONCURRENCY}\n"
    )
    return defined


def env_for(api: FakeModelAPI, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSELECT_", "OPENAI_", "ANTHROPIC_"))}
    env.update(OPENAI_API_KEY="bench-key", OPENAI_BASE_URL=api.url + "/v1", HOME=str(folder), NO_COLOR="1")
    return env


def run(folder: Path, api: FakeModelAPI, profile: str | None = None) -> dict[str, float]:
    """One `toolselect eval` of the project in `folder`; what the fake saw and the process's wall time."""
    before = api.stats()
    argv = [str(BIN / "toolselect"), "eval", "-q", "--json", "r.json"]
    if profile:
        argv = [sys.executable, "-m", "cProfile", "-o", profile, str(BIN / "toolselect"), *argv[1:]]
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=folder, env=env_for(api, folder), capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolselect failed ({proc.returncode}): {proc.stderr[-3000:]}")
    after = api.stats()
    requests = after["requests"] - before["requests"]
    first = after["first_start"] if requests and after["first_start"] != before["first_start"] else None
    return {
        "wall": wall,
        "setup": (first - start) if first else wall,
        "phase": (after["last_end"] - after["first_start"]) if requests else 0.0,
        "requests": requests,
        "in_flight": after["max_in_flight"],
    }


def cell(cases: int, tools: int, profile: str | None = None) -> dict[str, float]:
    """A cold run and a warm run of one cell."""
    folder = Path(tempfile.mkdtemp(prefix=f"tsscale-{cases}x{tools}-"))
    defined = suite(folder, cases, tools)
    answer = {"tool": defined[0]["name"], "args": {}}
    with FakeModelAPI({"default": answer, "latency": LATENCY, "billing": False}) as api:
        cold = run(folder, api, profile + ".cold" if profile else None)
        warm = run(folder, api, profile + ".warm" if profile else None)
    assert warm["requests"] == 0, warm
    ideal = cases * LATENCY / CONCURRENCY
    return {**{f"cold_{k}": v for k, v in cold.items()}, **{f"warm_{k}": v for k, v in warm.items()}, "ideal": ideal}


def best_of(n: int, argv: list[str]) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def peak_memory(cases: int, tools: int) -> float:
    """Max RSS (MiB) of one cold `toolselect eval` of a cell (the fake in this process, not counted)."""
    folder = Path(tempfile.mkdtemp(prefix=f"tsmem-{cases}x{tools}-"))
    defined = suite(folder, cases, tools)
    with FakeModelAPI({"default": {"tool": defined[0]["name"], "args": {}}}) as api:
        run(folder, api)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def machine() -> str:
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cell", nargs=2, type=int, metavar=("CASES", "TOOLS"))
    parser.add_argument("--profile", help="with --cell: cProfile both runs to PROFILE.cold and PROFILE.warm")
    args = parser.parse_args()
    print(machine())
    if args.cell:
        cases, tools = args.cell
        got = cell(cases, tools, profile=args.profile)
        print(json.dumps({k: round(v, 3) for k, v in got.items()}, indent=1))
        return
    sizes = ((50, 200), (10, 60)) if args.quick else ((50, 200, 800), (10, 60, 240))
    grid = {(c, t): cell(c, t) for c in sizes[0] for t in sizes[1]}
    first = grid[(sizes[0][0], sizes[1][0])]["cold_setup"]
    print(f"{'cases×tools':>12} {'set-up s':>9} {'×50×10':>7} {'API s':>6} {'×ideal':>7} {'whole s':>8} {'warm s':>7}"
          f" {'warm/cold':>9}")  # fmt: skip
    for (c, t), g in grid.items():
        print(
            f"{c:>6}×{t:<5} {g['cold_setup']:>9.2f} {g['cold_setup'] / first:>6.2f}× {g['cold_phase']:>6.2f} "
            f"{g['cold_phase'] / g['ideal']:>6.2f}× {g['cold_wall']:>8.2f} {g['warm_wall']:>7.2f} "
            f"{g['warm_wall'] / g['cold_wall']:>8.2f}×"
        )
    version = best_of(5, [str(BIN / "toolselect"), "--version"])
    print(f"`toolselect --version`: {version:.2f} s")


if __name__ == "__main__":
    main()
