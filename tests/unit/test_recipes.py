"""What CONTRIBUTING.md's recipes promise: a new output format is a renderer and one row of the
table of formats; a new gate option is a declaration in options.py, a field of the gate, and its rule."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

from tests.conftest import ROOT
from toolselect.gate import Gate
from toolselect.options import OPTIONS
from toolselect.outputs import WRITERS, Targets


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
