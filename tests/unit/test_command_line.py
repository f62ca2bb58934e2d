"""The command line builds only the flags of the command it names: each command's parser, built
alone, is the one the whole parser holds (its help word for word), and a first word that names no
command still gets argparse's list of every command."""

from __future__ import annotations

import argparse

import pytest

from toolselect.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


WHOLE = _commands(build_parser())


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_a_command_built_alone_has_every_flag_it_has_in_the_whole_parser(name):
    alone = _commands(build_parser(name))
    assert list(alone) == [name]
    assert alone[name].format_help() == WHOLE[name].format_help()


def test_the_eval_flags_parse_alike_alone_and_whole():
    argv = ["eval", "-q", "--json", "r.json", "--max-drop", "2", "--no-cache", "--model", "m"]
    alone, whole = build_parser("eval").parse_args(argv), build_parser().parse_args(argv)
    assert {k: v for k, v in vars(alone).items() if k != "func"} == {
        k: v for k, v in vars(whole).items() if k != "func"
    }


def test_a_word_that_names_no_command_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["evl"], own_process=False)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'evl'" in err
    assert all(f"'{name}'" in err for name in WHOLE)
