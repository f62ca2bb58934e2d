"""Selection behind the APIs' tool search on a 90-tool surface: recall@k and the tool list's tokens.

    python bench/tool_search.py

The surface: excel-mcp-server 2.2.2's 46 tools (tests/install-servers.sh installs it), with github's
26, slack's 8, filesystem's 8 and time's 2 from the bundled pool beside them; the golden set: the 28
hand-written excel cases (tests/data/excel-golden.yaml). Printed: `lint --tool-search anthropic-bm25`
(each prompt as the query, offline), then `eval --tool-search MODE` for each mode against the fake
model API (tests/fakes/tool_search.py: it searches as each API documents it, and its model writes its
queries from the prompt — a real model writes better ones), each mode's recall@k, the tools never
found, and the tokens per request deferred vs loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.model_api import FakeModelAPI  # noqa: E402

EXCEL = ROOT / "tests" / ".excel" / "bin" / "excel-mcp-server"
POOL = ROOT / "src" / "toolselect" / "data" / "pool"
BESIDE = {"github": 26, "slack": 8, "filesystem": 8, "time": 2}
MODES = {"anthropic-bm25": "anthropic", "anthropic-regex": "anthropic", "openai": "openai-responses"}


def toolselect(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolselect", *args], cwd=cwd, capture_output=True, text=True)


def surface(folder: Path) -> list[dict]:
    done = toolselect("snapshot", "-o", "excel.json", "--", str(EXCEL), "stdio", cwd=folder)
    if done.returncode:
        sys.exit(f"snapshot of excel-mcp-server failed (run tests/install-servers.sh): {done.stderr}")
    tools = json.loads((folder / "excel.json").read_text())["tools"]
    for server, n in BESIDE.items():
        tools += json.loads((POOL / f"{server}.json").read_text())["tools"][:n]
    names = [t["name"] for t in tools]
    assert len(names) == len(set(names)) == 90, len(names)
    return tools


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="tool-search-"))
    tools = surface(folder)
    (folder / "tools.json").write_text(json.dumps({"tools": tools}))
    golden = (ROOT / "tests" / "data" / "excel-golden.yaml").read_text()
    (folder / "golden.yaml").write_text(golden)
    import yaml

    cases = yaml.safe_load(golden)
    script = {"answers": {c["prompt"]: {"like": c["expect_tool"], "args": {}} for c in cases if c.get("expect_tool")}}
    wanting = sum(1 for c in cases if c.get("expect_tool"))
    print(f"surface: {len(tools)} tools; {len(cases)} cases ({wanting} expect one)")
    for mode, provider in MODES.items():
        model = "claude-haiku-4-5" if provider == "anthropic" else "gpt-5.4"
        (folder / "toolselect.yaml").write_text(
            f"tools_file: tools.json\nevals:\n  provider: {provider}\n  model: {model}\n  golden: golden.yaml\n"
            f"  min_accuracy: 0\n  server_name: office\n  tool_search: {mode}\n"
        )
        if mode == "anthropic-bm25":
            lint = toolselect("lint", "--all", "--json", "lint.json", cwd=folder)
            found = json.loads((folder / "lint.json").read_text())["findings"]
            misses = [f for f in found if f["code"] == "search-miss"]
            print(f"lint --tool-search {mode} (the prompts as queries, offline): {len(misses)} cases not in the top 5")
            assert lint.returncode in (0, 1), lint.stderr
        with FakeModelAPI(script) as api:
            url = api.url if provider == "anthropic" else api.url + "/v1"
            env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
            done = subprocess.run(
                [sys.executable, "-m", "toolselect", "eval", "--base-url", url, "--json", f"{mode}.json", "-q"],
                cwd=folder, capture_output=True, text=True, env={**__import__("os").environ, **env},
            )  # fmt: skip
        if not (folder / f"{mode}.json").exists():
            sys.exit(f"eval {mode} failed: {done.stdout}{done.stderr}")
        report = json.loads((folder / f"{mode}.json").read_text())
        s, ts = report["search"], report["run"]["tool_search"]
        never = sorted(t for t, m in s["per_tool"].items() if m["numerator"] == 0)
        print(
            f"eval --tool-search {mode}: recall@{ts['k']} {s['recall']['value']:.1%} ({s['found']}/{s['samples']}), "
            f"found not picked {s['found_not_picked']}, never found {s['never_found']}; tokens per request "
            f"{ts['tokens_deferred']:,} deferred vs {ts['tokens_loaded']:,} loaded "
            f"({1 - ts['tokens_deferred'] / ts['tokens_loaded']:.0%} less); keep loaded: "
            f"{', '.join(s.get('keep_loaded', [])) or '—'}"
        )
        print(f"  never found: {', '.join(never) or '—'}")


if __name__ == "__main__":
    main()
