"""The judge: when a trajectory case has no `final` checks, a model reads whether the final answer
after a tool error tells the user (seed 004's REC-SILENT); and, for every sample that called no
tool, what kind of reply it gave (clarify, unable, answer, empty), in place of replies.py's rules.

Only samples that need it are judged: a mock answered with an error, no later call succeeded, and
the conversation ended with a text answer. The judge is `evals.judge`, a model on the run's own
provider and endpoint (no other key or endpoint is trusted), asked through the answer cache like
everything else, so a re-run and a fork PR's cache-only run judge for free. Its readings are kept
apart in the report (the sample's `judge`, the run's `judge_*` counts); a judge that can't be asked
(no key, no cached answer, an error) leaves the sample unjudged and says so.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence

from .errors import InfraError
from .golden import Case
from .pick import Pick, Reading
from .providers import Provider, SampleError
from .replies import UNUSABLE, Reply
from .surface import Surface
from .taxonomy import REPLY_KINDS
from .throttle import Throttle

SYSTEM = (
    "You check one thing about an assistant's reply to a user: whether it tells the user that a tool it "
    "relied on failed. Answer with one word: yes or no."
)


def wants_judge(case: Case, pick: Pick, surface: Surface) -> bool:
    """A trajectory sample whose answer after a mock's error is for the judge to read."""
    script, trace = case.script, pick.trace
    if script is None or trace is None or script.expect.final is not None or trace.final is None:
        return False
    mocked = [c for c in trace.calls if surface.get(c.tool) is not None and not (c.args is None and c.raw_args)]
    failed = [i for i, c in enumerate(mocked) if c.error is not None]
    return bool(failed) and not any(c.error is None for c in mocked[failed[0] + 1 :])


def question(case: Case, pick: Pick) -> str:
    trace = pick.trace
    assert trace is not None
    errors = "; ".join(f"{c.tool}: {c.error}" for c in trace.calls if c.error is not None)
    return (
        f"The user asked: {case.prompt}\n\n"
        f"The assistant's tool calls failed: {errors}\n\n"
        f"The assistant's final reply to the user:\n{trace.final}\n\n"
        "Does the reply make clear to the user that the tool failed (or that the information could not be "
        "obtained)? Answer yes or no."
    )


def read_yes_no(text: str) -> bool | None:
    word = re.match(r"\W*(\w+)", text.lower())
    return {"yes": True, "no": False}.get(word.group(1)) if word else None


async def ask_judge(
    judge: Provider, throttle: Throttle, questions: Sequence[tuple[int, str]], system: str, schema: dict | None = None
) -> tuple[dict[int, tuple[str, bool]], str | None]:
    """Each (index, question) asked of the judge through the answer cache: the answers (text, cached)
    by index, and why any is missing (the first failure; None when every one was answered or the
    rest are not in the cache). A missing key or a refused model stops the other questions."""
    answers: dict[int, tuple[str, bool]] = {}
    failures: list[str] = []
    fatal: list[str] = []

    async def one(index: int, prompt: str) -> None:
        if fatal:
            return
        async with throttle:
            try:
                text, cached = await judge.write_cached(system, prompt, schema)
            except SampleError as exc:
                failures.append(str(exc))
                return
            except InfraError as exc:
                fatal.append(exc.message)
                return
        if text is not None:
            answers[index] = (text, cached)

    await asyncio.gather(*(one(i, q) for i, q in questions))
    said = fatal or failures
    return answers, said[0] if said else None


async def judge_all(
    judge: Provider, throttle: Throttle, items: Sequence[tuple[int, Case, Pick]], problems: list[str]
) -> dict[int, Reading]:
    """Ask the judge about each (index, case, pick); a failure leaves that sample unjudged and is
    said once in `problems` (the report's warnings)."""
    answers, failed = await ask_judge(judge, throttle, [(i, question(c, p)) for i, c, p in items], SYSTEM)
    readings = {
        i: Reading(read_yes_no(text), " ".join(text.split())[:200], cached) for i, (text, cached) in answers.items()
    }
    unanswered = len(items) - len(readings)
    if unanswered:
        why = f": {failed}" if failed else " (not in the answer cache)"
        problems.append(f"the judge could not judge {unanswered} of {len(items)} samples{why}; they are unjudged")
    unclear = sum(v.surfaced is None for v in readings.values())
    if unclear:
        problems.append(f"the judge answered neither yes nor no for {unclear} samples; they are unjudged")
    return readings


# ---------------------------------------------------------------------- replies without a call

REPLY_SYSTEM = (
    "You read one reply an assistant gave a user instead of calling a tool, and say what kind of reply it is. "
    "Answer with the JSON object asked for."
)
REPLY_SCHEMA = {
    "type": "object",
    "properties": {"kind": {"type": "string", "enum": list(REPLY_KINDS)}, "why": {"type": "string"}},
    "required": ["kind", "why"],
    "additionalProperties": False,
}


def wants_reading(case: Case, pick: Pick) -> bool:
    """A single-call sample that called no tool and said something the API didn't cut or refuse."""
    usable = pick.text.strip() and not UNUSABLE.get(pick.stop_reason or "")
    return (
        case.script is None and pick.tool is None and not (pick.error or pick.skipped or pick.unsent) and bool(usable)
    )


def reply_question(case: Case, pick: Pick, tools: Sequence[str]) -> str:
    return (
        f"The user asked: {case.prompt}\n\n"
        f"The assistant could call these tools: {', '.join(tools) or 'none'}. It called none, and replied:\n"
        f"{pick.text}\n\n"
        "Which kind of reply is it?\n"
        "- clarify: it asks the user for information it needs before it can act\n"
        "- unable: it says it can't do this, or has no tool, access or permission for it\n"
        "- answer: it answers directly, or chats (a courtesy question or an offer at the end is still an answer)\n"
        "- empty: it is no reply (nothing, or a tool call written out as text)\n"
        "Give the kind and, in one short sentence, why."
    )


def read_kind(text: str) -> Reply | None:
    """The judge's structured answer as a reading; None when it isn't one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("kind") not in REPLY_KINDS:
        return None
    why = data.get("why")
    return Reply(data["kind"], by="judge", said=" ".join(str(why).split())[:200] if why else "")


async def read_replies(
    judge: Provider,
    throttle: Throttle,
    items: Sequence[tuple[int, Case, Pick]],
    tools: Sequence[str],
    problems: list[str],
) -> dict[int, Reply]:
    """The judge's reading of each (index, case, pick) reply; one it can't give leaves that sample to
    the rules (replies.py), said once in `problems`."""
    asked = [(i, reply_question(c, p, tools)) for i, c, p in items]
    answers, failed = await ask_judge(judge, throttle, asked, REPLY_SYSTEM, REPLY_SCHEMA)
    readings = {i: reading for i, (text, _) in answers.items() if (reading := read_kind(text)) is not None}
    unread = len(items) - len(readings)
    if unread:
        why = f": {failed}" if failed else " (not in the answer cache, or not a reading)"
        problems.append(f"the judge could not read {unread} of {len(items)} replies{why}; the rules read them")
    return readings
