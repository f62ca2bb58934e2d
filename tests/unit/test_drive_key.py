"""What a driven client's request is cached under: the same request, however the client ordered what it
lists in no fixed order (Gemini CLI's skills, in the order its loader finished them)."""

from __future__ import annotations

import copy

from toolselect.drive.endpoint import keyed


def gemini_request(*skills: str) -> dict:
    listed = "".join(
        f"\n  <skill>\n    <name>{s}</name>\n    <location>/x/{s}/SKILL.md</location>\n  </skill>" for s in skills
    )
    prompt = f"You are a CLI agent.\n\n<available_skills>{listed}\n</available_skills>\n\n# Hook Context"
    return {"systemInstruction": {"parts": [{"text": prompt}]}, "contents": [{"parts": [{"text": "Is it raining?"}]}]}


def test_skills_listed_in_another_order_are_the_same_request():
    one, other = (
        gemini_request("skill-creator", "antigravity-support"),
        gemini_request("antigravity-support", "skill-creator"),
    )
    sent = copy.deepcopy(one)
    assert keyed(one, ()) == keyed(other, ())
    assert one == sent  # the request the model gets is the client's, as it sent it
    assert keyed(one, ()) != keyed(gemini_request("skill-creator"), ())  # another set of skills is another request
