"""The bad-input corpus: each folder under tests/data/bad/ holds one mistake a user makes and the
exact message toolselect must print for it — `file:line`, what is wrong, the fix — with exit 2 and
never a traceback."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from toolselect.cli import main

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
ENTRIES = sorted(p for p in BAD.iterdir() if p.is_dir() and p.name[0].isdigit())


def test_corpus_is_large_enough():
    assert len(ENTRIES) >= 30


@pytest.mark.parametrize("entry", ENTRIES, ids=[p.name for p in ENTRIES])
def test_bad_input_gives_its_exact_message(entry: Path, monkeypatch, capsys):
    for var in ("TOOLSELECT_PROVIDER", "TOOLSELECT_MODEL", "TOOLPROOF_EVAL_PROVIDER", "TOOLPROOF_EVAL_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(entry)
    args = shlex.split((entry / "args").read_text()) if (entry / "args").exists() else ["eval"]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2
    assert err == (entry / "expected.txt").read_text(encoding="utf-8")
    assert err.startswith("error: ")
