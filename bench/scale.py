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
`toolselect --version` plus reading and scoring (READ_AND_SCORE: what no warm run can skip, its report
written included, done with toolselect's own functions in a process of its own; the best of ROUNDS runs
of each, taken in turns).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.run import best_of, compiled  # noqa: E402

from tests.fakes.model_api import FakeModelAPI  # noqa: E402

BIN = Path(sys.executable).parent
POOL = ROOT / "src" / "toolselect" / "data" / "pool"
LATENCY = 0.1
CONCURRENCY = 16
ROUNDS = 5  # warm runs and runs of reading and scoring, in turns: the best of each


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


# runs one command and says its wall time and its peak memory (its own, not the benchmark's)
MEASURED = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - start
sys.stderr.write(done.stderr)
print(done.returncode, start, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def run(folder: Path, api: FakeModelAPI, profile: str | None = None) -> dict[str, float]:
    """One `toolselect eval` of the project in `folder`; what the fake saw, the process's wall time and
    peak memory (MiB)."""
    before = api.stats()
    argv = [str(BIN / "toolselect"), "eval", "-q", "--json", "r.json"]
    if profile:
        argv = [sys.executable, "-m", "cProfile", "-o", profile, str(BIN / "toolselect"), *argv[1:]]
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED, *argv], cwd=folder, env=env_for(api, folder), capture_output=True, text=True
    )
    code, start, wall, peak = proc.stdout.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"toolselect failed ({code}): {proc.stderr[-3000:]}")
    after = api.stats()
    requests = after["requests"] - before["requests"]
    first = after["first_start"] if requests and after["first_start"] != before["first_start"] else None
    return {
        "wall": float(wall),
        "setup": (first - float(start)) if first else float(wall),
        "phase": (after["last_end"] - after["first_start"]) if requests else 0.0,
        "requests": requests,
        "in_flight": after["max_in_flight"],
        "peak_mib": float(peak),
    }


def cell(cases: int, tools: int, profile: str | None = None) -> dict[str, float]:
    """A cold run, then the best of ROUNDS warm runs and of ROUNDS runs of reading and scoring, taken
    in turns (so a slow moment of the machine weighs on both alike)."""
    folder = Path(tempfile.mkdtemp(prefix=f"tsscale-{cases}x{tools}-"))
    defined = suite(folder, cases, tools)
    answer = {"tool": defined[0]["name"], "args": {}}
    with FakeModelAPI({"default": answer, "latency": LATENCY, "billing": False}) as api:
        cold = run(folder, api, profile + ".cold" if profile else None)
        warms, floors = [], []
        for _ in range(1 if profile else ROUNDS):
            warms.append(run(folder, api, profile + ".warm" if profile else None))
            floors.append(read_and_score(folder, env_for(api, folder)))
    warm, floor = min(warms, key=lambda w: w["wall"]), min(floors)
    assert warm["requests"] == 0, warm
    ideal = cases * LATENCY / CONCURRENCY
    return {
        **{f"cold_{k}": v for k, v in cold.items()},
        **{f"warm_{k}": v for k, v in warm.items()},
        "ideal": ideal,
        "read_and_score": floor,
    }


# Reading and scoring, as its own process with toolselect's own functions: the floor a warm `toolselect
# eval` is held to (beside --version). Read the config, the golden set and the surface (each checked, as a
# run checks them); make each sample's request and answer key; read its answer from the cache; score it; sum
# the scores up into the report (the metrics, the confusion matrix, each tool's numbers, a row per case) and
# write it where the run was asked to (--json: the scores are of no use unwritten). Not in it: the plan and
# its estimate, the pool of workers, the gate, the console, the sweep for strays.
READ_AND_SCORE = """
import os, sys
from pathlib import Path
from toolselect.ask import Offered, plan
from toolselect.cli.common import load_settings
from toolselect.config import Overrides
from toolselect.lint.stops import check_cases
from toolselect.lint.surface import lint_surface
from toolselect.offer import offer_to
from toolselect.providing import make_provider
from toolselect.report.build import build_report
from toolselect.report.files import write_reports
from toolselect.report.schema import RunOut
from toolselect.resolve import load_cases
from toolselect.scoring import score_sample
from toolselect.surface import build_surface
from toolselect.surface.file import read_tools_file
from toolselect.throttle import Throttle

os.chdir(sys.argv[1])
loaded, settings = load_settings(Overrides())
cases = load_cases(loaded, settings)
surface = build_surface(read_tools_file(settings.tools_file), "file")
findings = lint_surface(surface, "tools.json") + check_cases(cases, surface)
provider = make_provider(settings.call, Throttle(1), os.environ, settings.cache_dir, settings.cache_mode)
offer = offer_to(surface, settings.system, None, settings.server_label)
offered = Offered(offer)
results = []
for job in plan(cases, settings.repeat, len(offer.tools)):
    pick = provider.cached_answer(provider.answer_key(offered.request(job)))
    assert pick is not None, job
    results.append(score_sample(job.case, offer.named_back(pick), surface, job.sample))
run = RunOut(
    toolselect_version="floor", provider=settings.call.provider, model=settings.call.model, repeat=settings.repeat,
    concurrency=settings.concurrency, started_at="", finished_at="", duration_s=0.0, args_measured=True,
)
write_reports([build_report(cases, results, surface, run, settings.gate.values(), lint=findings)], Path("floor.json"))
"""


def read_and_score(folder: Path, env: dict[str, str]) -> float:
    """Its wall time (the environment the runs had: the answers' keys hold the endpoint)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", READ_AND_SCORE, str(folder)], env=env, capture_output=True, check=True)
    return time.perf_counter() - start


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
    compiled()
    print(machine())
    if args.cell:
        cases, tools = args.cell
        got = cell(cases, tools, profile=args.profile)
        print(json.dumps({k: round(v, 3) for k, v in got.items()}, indent=1))
        return
    sizes = ((50, 200), (10, 60)) if args.quick else ((50, 200, 800), (10, 60, 240))
    grid = {(c, t): cell(c, t) for c in sizes[0] for t in sizes[1]}
    version = best_of(5, [str(BIN / "toolselect"), "--version"])
    print(f"fake model API: {LATENCY * 1000:.0f} ms per answer, concurrency {CONCURRENCY}; ideal = cases × latency ÷ "
          f"concurrency; `toolselect --version` {version:.2f} s")  # fmt: skip
    head = ("cases × tools", "set-up s", "API s", "× ideal", "whole s", "warm s", "warm/cold", "read+score s", "MiB")
    print(" | ".join(head))
    for (c, t), g in grid.items():
        print(
            f"{c} × {t} | {g['cold_setup']:.2f} | {g['cold_phase']:.2f} | {g['cold_phase'] / g['ideal']:.2f}× | "
            f"{g['cold_wall']:.2f} | {g['warm_wall']:.2f} | {g['warm_wall'] / g['cold_wall']:.2f}× | "
            f"{g['read_and_score']:.2f} | {g['cold_peak_mib']:.0f}"
        )
    small, big = grid[(sizes[0][0], sizes[1][0])], grid[(sizes[0][-1], sizes[1][-1])]
    mid = grid[(sizes[0][-1], sizes[1][1])]
    goals = [
        (f"set-up at {sizes[0][-1]} × {sizes[1][-1]} vs {sizes[0][0]} × {sizes[1][0]}",
         big["cold_setup"] / small["cold_setup"], 3.0),
        (f"warm run at {sizes[0][-1]} × {sizes[1][1]} vs its cold run", mid["warm_wall"] / mid["cold_wall"], 0.25),
        (f"warm run at {sizes[0][-1]} × {sizes[1][1]} vs --version + read and score",
         mid["warm_wall"] / (version + mid["read_and_score"]), 1.1),
        *((f"API phase at {sizes[0][-1]} × {t} vs the ideal", grid[(sizes[0][-1], t)]["cold_phase"]
           / grid[(sizes[0][-1], t)]["ideal"], 1.15) for t in sizes[1]),
        (f"peak memory at {sizes[0][-1]} × {sizes[1][-1]}, MiB", big["cold_peak_mib"], 200.0),
    ]  # fmt: skip
    for what, ratio, target in goals:
        print(f"{'met' if ratio <= target else 'NOT MET'}: {what}: {ratio:.2f} (target ≤ {target:g})")


if __name__ == "__main__":
    main()
