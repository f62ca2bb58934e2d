"""What CONTRIBUTING.md's recipes promise: a new output format is a renderer and one row of the
table of formats; a new gate option is a declaration in options.py, a field of the gate, and its
rule; a new provider's key is protected by its row in the registry."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from tests.conftest import ROOT
from toolselect.config import load_config
from toolselect.errors import ConfigError
from toolselect.gate import Gate
from toolselect.options import OPTIONS
from toolselect.outputs import WRITERS, Targets
from toolselect.providers.registry import PROVIDERS


def path_fields() -> set[str]:
    hints = typing.get_type_hints(Targets)
    return {f.name for f in dataclasses.fields(Targets) if hints[f.name] == Path | None}


def test_every_file_an_outcome_is_written_to_has_one_row():
    """A `Targets` field without a row would be accepted and silently never written; a row without a
    field could never be asked for."""
    rows = [w.target for w in WRITERS]
    assert len(rows) == len(set(rows))
    assert set(rows) == path_fields()


def test_the_renderer_recipe_names_what_a_new_format_needs():
    recipe = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = recipe.split("## How to add a renderer", 1)[1].split("\n## ", 1)[0]
    for needed in ("render/", "WRITERS", "Targets", "options.py"):
        assert needed in section, needed


def test_a_gate_option_is_a_declaration_a_field_and_a_rule():
    declared = {o.key for o in OPTIONS if o.group in ("gate", "compare") and o.config is not None}
    assert {f.name for f in dataclasses.fields(Gate)} == declared
    recipe = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = recipe.split("## How to add an option", 1)[1].split("\n## ", 1)[0]
    for needed in ("options.py", "gate.py"):
        assert needed in section, needed


def test_every_providers_key_is_protected_from_a_config(tmp_path):
    """A config (a pull request's, too) can't put a provider's key into its server's environment:
    the list comes from the provider registry, so a provider added there is covered."""
    keys = [key for info in PROVIDERS.values() for key in info.keys]
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} <= set(keys)
    for variable in [*keys, *(key.split("_", 1)[0] + "_BASE_URL" for key in keys)]:
        config = tmp_path / "toolselect.yaml"
        config.write_text(f"server:\n  command: [python, s.py]\n  env:\n    K: ${{{variable}}}\n")
        with pytest.raises(ConfigError) as refused:
            load_config(config, {variable: "secret-value-123"})
        assert f"${{{variable}}} can't be used in a config" in refused.value.message


def test_every_outcome_code_has_its_meaning_and_is_documented():
    """A new sample code (taxonomy.SampleOutcome) has its meaning beside it and a place in the
    golden-set page users read when a report names it."""
    from toolselect.taxonomy import OUTCOME_MEANING, SampleOutcome

    assert set(OUTCOME_MEANING) == set(SampleOutcome)
    page = (ROOT / "docs" / "golden-set.md").read_text(encoding="utf-8")
    assert [c.value for c in SampleOutcome if f"`{c.value}`" not in page] == []


RUN_OPTION = """
import sys
from pathlib import Path

import toolselect.options as o

new = o.Option("warmth", "how warm the run is", "int", "run", default=3, ge=0, metavar="N")
o.OPTIONS = (*o.OPTIONS, new)
o.BY_KEY[new.key] = new

from toolselect.config import Overrides, load_config
from toolselect.errors import ConfigError
from toolselect.resolve import resolve_settings

folder = Path(sys.argv[1])
config = folder / "toolselect.yaml"
config.write_text("tools_file: tools.json\\nevals:\\n  provider: bm25\\n  warmth: 5\\n")
loaded = load_config(config, {})
print("config", resolve_settings(loaded, Overrides(), {}, folder).option("warmth"))
flags = Overrides(o.read_flags({"warmth": "7"}))
print("flag", resolve_settings(loaded, flags, {}, folder).option("warmth"))
inputs = Overrides(o.read_inputs({"INPUT_WARMTH": "9"}), source="input")
print("input", resolve_settings(loaded, inputs, {}, folder).option("warmth"))
config.write_text("tools_file: tools.json\\nevals:\\n  provider: bm25\\n  warmth: -1\\n")
try:
    load_config(config, {})
except ConfigError as exc:
    print("refused", " ".join(e.message for e in getattr(exc, "errors", [exc])))
"""


def test_a_run_option_is_one_declaration(tmp_path):
    """Adding a run option is its declaration in options.py (and its behaviour): the config key, the
    flag and the Action input reach the settings (settings.option) and the range is checked — no
    edit to config.py, settings.py or resolve.py."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", RUN_OPTION, str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == ["config 5", "flag 7", "input 9"]
    assert lines[3].startswith("refused") and "warmth" in lines[3] and "0 or more" in lines[3]
    recipe = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = recipe.split("## How to add an option", 1)[1].split("\n## ", 1)[0]
    assert "settings.option(" in section and "config.py" not in section
