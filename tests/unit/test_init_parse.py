"""A model's answer read leniently as one JSON object, or said why not."""

from __future__ import annotations

import pytest

from toolselect.drafting import read_json_object


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


def test_a_drafted_prompt_must_read_like_one():
    """A small model fills the shape with junk: punctuation, a letter, a page of dates."""
    import asyncio

    from toolselect.drafting import draft
    from toolselect.surface import build_surface
    from toolselect.throttle import Throttle

    class Writer:
        author = "fake junk"

        async def write_cached(self, system, prompt, schema):
            if "five user messages" in prompt:
                return '{"prompts": ["thanks!", ",", "A"]}', False
            return (
                '{"direct": "},", "paraphrase": "do I need a coat in Oslo", "arguments": "' + "2018-09-30 " * 60 + '"}',
                False,
            )

    surface = build_surface(
        [{"name": "get_weather", "description": "Weather now.", "inputSchema": {"type": "object"}}], "t"
    )
    drafts = asyncio.run(draft(Writer(), surface, Throttle(2)))
    assert drafts.tools["get_weather"] == {"paraphrase": "do I need a coat in Oslo"}
    assert drafts.negatives == ["thanks!"]
    reasons = dict(drafts.missing)
    assert reasons["get_weather-direct"] == "the answer's 'direct' is not a prompt ('},')"
    assert reasons["get_weather-arguments"].startswith("the answer's 'arguments' is not a prompt ('2018-09-30")
    assert drafts.summary().startswith("drafted 2 of 8 prompts; 6 kept as TODO")
