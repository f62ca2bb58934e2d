"""A model's answer read leniently as one JSON object, or said why not."""

from __future__ import annotations

import pytest

from toolselect.init import read_json_object


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ('{"direct": "a"}', {"direct": "a"}),
        ('  \n{"direct": "a"}\n', {"direct": "a"}),
        ('Sure!\n```json\n{"direct": "a {b}"}\n```\nDone.', {"direct": "a {b}"}),
        ('Here: {"direct": "say \\"hi\\" }"} and that is all', {"direct": 'say "hi" }'}),
        ("Here you go: {'direct': 'it is', 'n': None, 'ok': True}.", {"direct": "it is", "n": None, "ok": True}),
        ('{"a": {"b": [1, 2]}} then {"c": 3}', {"a": {"b": [1, 2]}}),
    ],
)
def test_answers_that_hold_an_object(answer, value):
    assert read_json_object(answer) == (value, None)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("", "the answer was empty"),
        ("I can't help with that.", 'the answer was not JSON ("I can\'t help with that.")'),
        ('["a", "b"]', 'the answer was not JSON (\'["a", "b"]\')'),
        ("{not json at all}", "the answer was not JSON ('{not json at all}')"),
    ],
)
def test_answers_that_do_not(answer, why):
    assert read_json_object(answer) == (None, why)
