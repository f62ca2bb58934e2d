"""toolproof configs work unchanged: seed 000's weather example (plus the edge cases measured in
the toolproof study) run through both toolproof 0.3.1 and toolselect, with the same `command`
picker and the same MCP server, give the same verdict on every case."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA, EXAMPLE, FAKES, toolselect

SEED_CONFIG = """\
server:
  command: [{python}, {server}]

evals:
  provider: command
  command: [{python}, {picker}, {script}]
  model: your-model-name
  min_accuracy: 0.9
  cases:
    - prompt: Is it raining in Montreal right now?
      expect_tool: get_weather
      expect_args: {{ city: Montreal }}

    - prompt: What's the 5 day forecast for Calgary?
      expect_tool: get_forecast
      expect_args: {{ city: Calgary, days: 5 }}

    - prompt: Tell me a joke.
      expect_tool: null        # no tool should be called

    - prompt: weather in paris
      expect_tool: get_weather
      expect_args: {{ city: Paris }}
    - prompt: forecast for berlin
      expect_tool: get_forecast
      expect_args: {{ city: Berlin }}
    - prompt: Thanks, that's all for Oslo
      expect_tool: null
    - prompt: 5.0 day forecast for Tokyo
      expect_tool: get_forecast
      expect_args: {{ city: Tokyo, days: 5 }}
    - prompt: New  York weather
      expect_tool: get_weather
      expect_args: {{ city: New  York }}
    - prompt: weather in Zurich please
      expect_tool: get_weather
    - prompt: is it hot in Cairo
      expect_tool: get_weather
"""


def test_same_verdicts_as_toolproof(tmp_path: Path):
    config = tmp_path / "toolproof.yaml"
    config.write_text(
        SEED_CONFIG.format(
            python=json.dumps(sys.executable),
            server=json.dumps(str(EXAMPLE / "server.py")),
            picker=json.dumps(str(FAKES / "picker.py")),
            script=json.dumps(str(DATA / "toolproof" / "script.json")),
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLPROOF_", "TOOLSELECT_"))}
    theirs = subprocess.run(
        [str(Path(sys.executable).parent / "toolproof"), "eval", "-c", str(config), "--json", "tp.json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert theirs.returncode == 1, theirs.stderr
    # toolselect finds toolproof.yaml by itself when there is no toolselect.yaml
    ours = toolselect("eval", "--json", "ts.json", cwd=tmp_path)
    assert ours.code == 1, ours.err

    toolproof_verdicts = {
        c["prompt"]: c["passed"] for c in json.loads((tmp_path / "tp.json").read_text())["evals"]["cases"]
    }
    report = json.loads((tmp_path / "ts.json").read_text())
    our_verdicts = {c["prompt"]: c["samples"][0]["outcome"] == "PASS" for c in report["cases"]}
    assert our_verdicts == toolproof_verdicts
    # and the cases the study measured land where toolproof puts them
    assert toolproof_verdicts["weather in paris"] is True  # "PARIS " matches Paris
    assert toolproof_verdicts["forecast for berlin"] is False  # days "3" fails the schema
    outcome = {c["prompt"]: c["samples"][0]["outcome"] for c in report["cases"]}
    assert outcome["forecast for berlin"] == "ARG-INVALID"
    assert outcome["Thanks, that's all for Oslo"] == "RES-UNNECESSARY"
    assert outcome["weather in Zurich please"] == "SEL-WRONG"
    assert outcome["is it hot in Cairo"] == "SEL-MISSED"
    assert report["metrics"]["accuracy"]["numerator"] == sum(toolproof_verdicts.values())
