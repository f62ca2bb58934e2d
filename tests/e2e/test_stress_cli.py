"""`toolselect stress` as a user runs it: against the fake model API with a picker that degrades as
the tool list grows, and offline on the bundled example with the bundled pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import mutate
from tests.conftest import EXAMPLE, toolselect
from tests.e2e.harness import base_url, key_env

OBJ = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
USER_TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city.", "inputSchema": OBJ},
    {"name": "get_forecast", "description": "Forecast for a city.", "inputSchema": OBJ},
]
# the neighbours a user brings: 30 tools, one of them named like the user's own
NEIGHBOURS = [{"name": "get_weather", "description": "Weather from another server.", "inputSchema": OBJ}] + [
    {"name": f"crm_tool_{i}", "description": f"A CRM action number {i}.", "inputSchema": OBJ} for i in range(29)
]
CITIES = ["Oslo", "Rome", "Lima", "Kyiv", "Pune", "Nice", "Bern", "Cork"]


def setup(folder: Path) -> None:
    (folder / "tools.json").write_text(json.dumps({"tools": USER_TOOLS}))
    (folder / "crm.json").write_text(json.dumps({"tools": NEIGHBOURS}))
    (folder / "golden.jsonl").write_text(
        "".join(
            json.dumps({"id": city, "question": f"Weather in {city}?", "expected_tool": "get_weather"}) + "\n"
            for city in CITIES
        )
    )
    (folder / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  model: m\n  golden: golden.jsonl\n  min_accuracy: 0\n"
        "stress:\n  sizes: [0, 10, 30]\n  seeds: 2\n  distractors: [crm.json]\n  bundled_pool: false\n"
    )


# the scripted model: right while it sees fewer than 20 tools, then it picks a CRM tool
SCRIPT = {
    "answers": {
        f"Weather in {city}?": [
            {"tools_at_least": 20, "tool": "crm_tool_7", "args": {"city": city}},
            {"tool": "get_weather", "args": {"city": city}},
        ]
        for city in CITIES
    }
}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_curve_the_cliff_and_the_culprits_come_out_as_scripted(provider, model_api, tmp_path):
    api = model_api(SCRIPT)
    setup(tmp_path)
    flags = ["--provider", provider, "--base-url", base_url(provider, api), "--json", "stress.json"]
    dry = toolselect("stress", *flags, "--dry-run", cwd=tmp_path, env=key_env(tmp_path))
    assert dry.code == 0, dry.err
    # 48 samples, but at size 0 both seeds offer the two tools in the same order: 8 are asked once
    assert "sizes 0, 10, 30 × 2 seeds = 6 surfaces" in dry.out and "8 already cached, 40 requests" in dry.out
    assert not api.log  # a dry run asks nothing
    run = toolselect("stress", *flags, cwd=tmp_path, env=key_env(tmp_path))
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "stress.json").read_text())
    assert [(p["size"], p["tools"], p["accuracy"]["value"]) for p in report["points"]] == [
        (0, 2, 1.0),
        (10, 12, 1.0),
        (30, 32, 0.0),
    ]
    assert report["cliff"]["size"] == 30 and report["cliff"]["worsened"] == 8 and report["cliff"]["p_value"] < 0.01
    assert report["culprits"] == [
        {"distractor": "crm_tool_7", "server": "crm", "instead_of": "get_weather", "count": 16, "sizes": [30]}
    ]
    assert report["collisions"] == [{"tool": "get_weather", "server": "crm", "offered_as": "crm__get_weather"}]
    assert {e["tools"].count("crm__get_weather") for e in api.log if len(e["tools"]) == 32} == {1}
    assert report["sources"] == [{"server": "crm", "origin": str(tmp_path / "crm.json"), "tools": 30}]
    assert report["run"]["api_calls"] == 40 and report["points"][0]["tokens_per_request"] > 0  # as planned
    assert len(api.log) == 40
    assert "cliff at 30 distractors" in run.out and "crm_tool_7" in run.out and "crm__get_weather" in run.out
    # every answer is cached: a re-run asks nothing and says the same
    sent = len(api.log)
    again = toolselect("stress", *flags, cwd=tmp_path, env=key_env(tmp_path))
    assert again.code == 0, again.err
    assert len(api.log) == sent
    rerun = json.loads((tmp_path / "stress.json").read_text())
    assert rerun["run"]["api_calls"] == 0 and rerun["points"] == report["points"]
    # the gate: a floor at a size, and the cliff against a saved base report that had none
    base = {**report, "cliff": None}
    base["points"] = [{**pt, "accuracy": {**pt["accuracy"], "value": 1.0}} for pt in report["points"]]
    (tmp_path / "base.json").write_text(json.dumps(base))
    gated = toolselect(
        "stress", *flags, "--min-accuracy-at", "30=0.5", "--min-accuracy-at", "10=0.9", "--fail-on-cliff-move",
        "--against", "base.json", "--markdown", "stress.md", cwd=tmp_path, env=key_env(tmp_path),
    )  # fmt: skip
    assert gated.code == 1, gated.out + gated.err
    assert "accuracy with 30 distractors is 0.0% (0/16), below min_accuracy_at 50%" in gated.out
    assert "a cliff appeared at 30 distractors; the base had none" in gated.out
    assert "10 distractors" not in gated.out.split("FAILED", 1)[1]  # 100% at 10 clears its floor
    markdown = (tmp_path / "stress.md").read_text()
    assert "- ❌ a cliff appeared at 30 distractors" in markdown
    assert "| 30 | 32 | 100.0% | 0.0% | −100.0 pt |" in markdown
    assert mermaid(markdown)["ok"] and markdown.count("    line [") == 2


def test_offline_on_the_example_with_the_bundled_pool(tmp_path):
    run = toolselect("stress", "--sizes", "0,25,500", "--seeds", "1", "--json", str(tmp_path / "s.json"), cwd=EXAMPLE)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "s.json").read_text())
    assert [p["size"] for p in report["points"]] == [0, 25, 165]  # capped: every bundled tool
    assert report["points"][-1]["tools"] == 171 and report["points"][-1]["tokens_estimated"]
    assert len(report["sources"]) == 17 and sum(s["tools"] for s in report["sources"]) == 165
    assert any(c["offered_as"] == "github__create_issue" for c in report["collisions"])
    assert "sizes above 165 were capped" in run.out and "Accuracy as the tool list grows" in run.out


RANKER = """
import json, sys
request = json.load(sys.stdin)
names = [t["name"] for t in request["tools"]]
good = request["prompt"].split()[-1].rstrip("?") in ("Oslo", "Rome", "Lima", "Kyiv")
first = ["get_weather"] if good else ["crm_tool_1", "crm_tool_2", "get_weather"]
print(json.dumps({"tools": first + [n for n in names if n not in first]}))
"""


def test_retrieval_recall_at_k_and_selection_with_the_top_k(model_api, tmp_path):
    api = model_api(SCRIPT)
    setup(tmp_path)
    (tmp_path / "rank.py").write_text(RANKER)
    config = (tmp_path / "toolselect.yaml").read_text().replace("sizes: [0, 10, 30]", "sizes: [0]")
    (tmp_path / "toolselect.yaml").write_text(
        config + "  retriever: command\n  retriever_command: [python, rank.py]\n  top_k: 3\n"
    )
    run = toolselect(
        "stress", "--provider", "openai", "--base-url", base_url("openai", api), "--json", "s.json",
        cwd=tmp_path, env=key_env(tmp_path),
    )  # fmt: skip
    assert run.code == 0, run.err
    retrieval = json.loads((tmp_path / "s.json").read_text())["retrieval"]
    # by hand: four cities rank get_weather first, four third
    assert {k: (r["numerator"], r["denominator"]) for k, r in retrieval["recall"].items()} == {
        "1": (4, 8),
        "3": (8, 8),
        "5": (8, 8),
        "10": (8, 8),
    }
    # offered the top 3 the model is right; offered all 32 it picks a CRM tool (seed 003's shape)
    assert retrieval["accuracy_top_k"]["value"] == 1.0 and retrieval["accuracy_all"]["value"] == 0.0
    assert retrieval["pool_tools"] == 32 and "recall @1 50% · @3 100%" in run.out
    narrowed = [e for e in api.log if len(e["tools"]) == 3]
    assert len(narrowed) == 8 and all(e["tools"][:1] in (["get_weather"], ["crm_tool_1"]) for e in narrowed)


def mermaid(text: str) -> dict:
    """Mermaid's own parser (tests/node/mermaid-parse.mjs) on one chart."""
    import subprocess

    from tests.conftest import ROOT

    block = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    proc = subprocess.run(
        ["node", str(ROOT / "tests" / "node" / "mermaid-parse.mjs")], input=block, capture_output=True, text=True,
        timeout=60, cwd=ROOT / "tests" / "node",
    )  # fmt: skip
    return json.loads(proc.stdout)


def test_the_chart_parses_with_mermaids_own_parser(tmp_path):
    from toolselect.render.stress import mermaid_chart, stress_markdown
    from toolselect.stress import StressReport

    run = toolselect(
        "stress", "--sizes", "0,10,25", "--seeds", "1", "--json", str(tmp_path / "s.json"),
        "--markdown", str(tmp_path / "s.md"), cwd=EXAMPLE,
    )  # fmt: skip
    assert run.code == 0, run.err
    written = (tmp_path / "s.md").read_text()
    assert written.startswith("### Accuracy as the tool list grows") and mermaid(written)["ok"]
    head = StressReport.model_validate_json((tmp_path / "s.json").read_text())
    worse = head.model_copy(
        update={
            "points": [
                p.model_copy(update={"accuracy": p.accuracy.model_copy(update={"value": (p.accuracy.value or 0) / 2})})
                for p in head.points
            ]
        }
    )
    both = stress_markdown(head, worse)
    assert mermaid(both) == {"ok": True, "type": "xychart"}
    assert both.count("    line [") == 2 and "Lines: the base, then the head." in both
    [base_line, head_line] = [line for line in both.splitlines() if line.startswith("    line [")]
    assert base_line != head_line
    assert mermaid(mermaid_chart(head)) == {"ok": True, "type": "xychart"}
    assert mermaid("```mermaid\nxychart-beta\n    x-axis [0, 10\n```")["ok"] is False  # the parser does refuse


def test_the_action_runs_the_stress_test_on_head_and_base_and_comments_the_chart(tmp_path):
    from tests.e2e.harness import (
        SCRIPT as ACTION_SCRIPT,
    )
    from tests.e2e.harness import (
        TOKEN,
        make_repo,
        pull_request_event,
        register_pull,
        run_action,
    )
    from tests.fakes.github_api import FakeGitHub
    from tests.fakes.model_api import FakeModelAPI

    crowded = {"tools_at_least": 20, "tool": "crm_tool_0", "args": {"city": "x"}}  # lost among 23 tools
    answers = {
        prompt: [crowded, *(answer if isinstance(answer, list) else [answer])]
        for prompt, answer in ACTION_SCRIPT["answers"].items()
    }
    crm = json.dumps({"tools": NEIGHBOURS[1:21]})
    stress = (
        "stress:\n  sizes: [0, 20]\n  seeds: 1\n  bundled_pool: false\n  distractors: [crm.json]\n"
        "  min_accuracy_at: {20: 0.9}\n"
    )
    with (
        FakeModelAPI({**ACTION_SCRIPT, "answers": answers}) as api,
        FakeGitHub({TOKEN: "github-actions[bot]"}) as github,
    ):
        repo = make_repo(tmp_path, extra_config=stress, extra_files={"crm.json": crm})
        register_pull(github, repo)
        run = run_action(
            repo.path, tmp_path, inputs={}, event=pull_request_event(repo), event_name="pull_request", api=api,
            github=github,
        )  # fmt: skip
        assert run.code == 1, run.stdout + run.stderr  # the stress gate fails the check
        [comment] = [c for c in github.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
    body = comment["body"]
    assert "- ❌ accuracy with 20 distractors is 25.0% (2/8), below min\\_accuracy\\_at 90%" in body
    assert "**Stress: accuracy as the tool list grows**" in body and "Lines: the base, then the head." in body
    assert mermaid(body)["ok"] and body.count("    line [") == 2
    assert "| 20 | 23 | 25.0% | 25.0% | ±0.0 pt |" in body
    assert "**Cliff**: base at 20 (p = 0.031, −75.0 pt per case) → head none" in body  # 4 cases worse: p = 0.125
    assert "| `crm_tool_0` | crm | `get_forecast` | 3 | 20 |" in body
    # the eval's answers and the stress test's all stay in the cache: one manifest for the job, nothing pruned
    cache = repo.path / "evals" / ".toolselect-cache"
    kept = {f.stem for f in cache.glob("v1/*/*.json")}
    assert kept == set(json.loads((cache / "manifest.json").read_text())["keys"])
    assert len(kept) == len(api.log)  # every distinct request asked once, and every answer still there
    head = json.loads((run.report_dir / "stress.json").read_text())
    base = json.loads((run.report_dir / "stress.base.json").read_text())
    assert [p["accuracy"]["value"] for p in head["points"]] == [0.75, 0.25]
    assert [p["accuracy"]["value"] for p in base["points"]] == [1.0, 0.25]
    assert head["gate"] == {"min_accuracy_at": {"20": 0.9}, "fail_on_cliff_move": False}


EMBEDDER = """
import json, sys
texts = json.load(sys.stdin)["texts"]
words = ["weather", "forecast", "alerts", "air", "convert", "search"]
print(json.dumps({"embeddings": [[float(w in t.lower()) for w in words] + [0.01] for t in texts]}))
"""


def test_a_live_server_as_neighbour_and_an_embeddings_retriever(tmp_path):
    """Distractors listed from an MCP server (tools/list only) and tools ranked by your embeddings."""
    import shutil

    shutil.copy(EXAMPLE / "server.py", tmp_path / "neighbour.py")
    (tmp_path / "tools.json").write_text(json.dumps({"tools": USER_TOOLS}))
    (tmp_path / "embed.py").write_text(EMBEDDER)
    (tmp_path / "golden.jsonl").write_text(
        json.dumps({"id": "w", "question": "What's the weather in Oslo?", "expected_tool": "get_weather"}) + "\n"
        + json.dumps({"id": "f", "question": "Forecast for Rome", "expected_tool": "get_forecast"}) + "\n"
    )  # fmt: skip
    (tmp_path / "toolselect.yaml").write_text(
        "tools_file: tools.json\nevals:\n  provider: bm25\n  golden: golden.jsonl\n  min_accuracy: 0\n"
        "stress:\n  sizes: [0, 6]\n  seeds: 1\n  bundled_pool: false\n"
        "  distractors: [{command: [python, neighbour.py], name: weather-example}]\n"
        "  retriever: embeddings-command\n  retriever_command: [python, embed.py]\n  top_k: 3\n"
    )
    run = toolselect("stress", "--json", "s.json", cwd=tmp_path)
    assert run.code == 0, run.err
    report = json.loads((tmp_path / "s.json").read_text())
    [source] = report["sources"]
    assert source["server"] == "weather-example" and source["tools"] == 6 and "neighbour.py" in source["origin"]
    # the neighbour's get_weather and get_forecast collide with ours: prefixed with its label
    prefixed = {c["offered_as"] for c in report["collisions"]}
    assert prefixed == {"weather-example__get_weather", "weather-example__get_forecast"}
    assert report["points"][-1]["tools"] == 8
    recall = report["retrieval"]["recall"]
    # by hand: the prompt's "weather" or "forecast" is one of the six words each tool is embedded by
    assert (recall["3"]["numerator"], recall["3"]["denominator"]) == (2, 2)
    assert report["retrieval"]["pool_tools"] == 8


def test_sizes_are_capped_at_the_apis_tool_limit_and_a_dry_run_runs_no_retriever(tmp_path):
    (tmp_path / "rank.py").write_text("import pathlib\npathlib.Path('ran').write_text('x')\n")
    config = (EXAMPLE / "toolselect.yaml").read_text().replace("python, server.py", f"python, {EXAMPLE / 'server.py'}")
    (tmp_path / "toolselect.yaml").write_text(
        config.replace("    - golden.jsonl\n    - trajectories.yaml", f"    - {EXAMPLE / 'golden.jsonl'}")
        + "stress:\n  retriever: command\n  retriever_command: [python, rank.py]\n"
    )
    run = toolselect(
        "stress", "--provider", "openai", "--model", "m", "--sizes", "0,50,200", "--seeds", "1", "--dry-run",
        cwd=tmp_path, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "sizes 0, 50, 122 × 1 seeds = 3 surfaces" in run.out  # 6 tools of ours + 122 = OpenAI's 128
    assert "openai takes at most 128 tools a request: sizes were capped at 122" in run.out + run.err
    assert not (tmp_path / "ran").exists()  # a dry run asks nothing and runs no retriever
    small = toolselect(
        "stress", "--provider", "openai", "--model", "m", "--sizes", "0,20", "--seeds", "1", "--dry-run",
        cwd=tmp_path, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert small.code == 0, small.err
    assert "sizes 0, 20 × 1 seeds" in small.out and "capped" not in small.out + small.err  # nothing was cut


@pytest.fixture(scope="module")
def example_stress(tmp_path_factory) -> Path:
    """A real stress report of the example, made once for the tests that tamper with it."""
    out = tmp_path_factory.mktemp("stress") / "s.json"
    run = toolselect("stress", "--sizes", "0", "--seeds", "1", "--json", str(out), cwd=EXAMPLE)
    assert run.code == 0, run.err
    return out


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (("points", 0, "accuracy", "value"), float("nan"), "points.0.accuracy.value"),
        (("retrieval",), {"retriever": "x", "pool_tools": 1, "top_k": 1, "recall": {"<img src=x>": {}},
                          "accuracy_top_k": {}, "accuracy_all": {}}, "retrieval.recall"),
        (("gate", "min_accuracy_at"), {"abc": 0.5}, "gate.min_accuracy_at"),
    ],
)  # fmt: skip
def test_a_tampered_stress_report_is_refused_with_where(example_stress, tmp_path, path, value, said):
    from toolselect.errors import ConfigError
    from toolselect.stress import read_stress_report

    data = json.loads(example_stress.read_text())
    (tmp_path / "s.json").write_text(json.dumps(mutate(data, path, value)))
    with pytest.raises(ConfigError) as refused:
        read_stress_report(tmp_path / "s.json")
    assert said in refused.value.message and "not a toolselect stress report" in refused.value.message


def test_the_bundled_pool_ships_in_the_wheel(tmp_path):
    """`pip install .` (the README's first command, the image) must carry the pool and its licences,
    and the HTML report's style and script (without them no `--html` page can be written)."""
    import subprocess
    import sys
    import zipfile

    from tests.conftest import ROOT

    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [wheel] = tmp_path.glob("toolselect-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"toolselect/data/pool/github.json", "toolselect/data/pool/README.md"} <= names
    assert "toolselect/data/pool/LICENSE-playwright-mcp.txt" in names
    assert sum(n.startswith("toolselect/data/pool/") and n.endswith(".json") for n in names) == 17
    assert {"toolselect/render/assets/report.css", "toolselect/render/assets/report.js"} <= names
