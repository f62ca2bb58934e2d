"""The vocabulary every stage shares, declared once at the bottom of the import graph: the outcome
code of a sample (`SampleOutcome`) and what each means, the failure codes a trajectory sample can
carry and the four tool-use dimensions it is scored on (0–3). The scorers, the report's schema,
the gate's `min_dimension` option and the renderers all read these."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

FailureCode = Literal[
    "SEL-WRONG", "SEL-SUBOPTIMAL", "SEL-MISSED", "ARG-INVALID", "ARG-SEMANTIC", "REC-SILENT", "REC-LOOP",
    "RES-OVERCALL", "RES-UNNECESSARY",
]  # fmt: skip
FAILURE_CODES: tuple[str, ...] = get_args(FailureCode)  # in the order reports list them

# what a reply without a tool call is (replies.py): When2Call's outcomes besides the call itself
ReplyKind = Literal["clarify", "unable", "answer", "empty"]
REPLY_KINDS: tuple[str, ...] = get_args(ReplyKind)

Dimension = Literal["selection", "arguments", "recovery", "restraint"]
DIMENSIONS: tuple[str, ...] = get_args(Dimension)


class SampleOutcome(StrEnum):
    """The one code each sample is scored with (a trajectory sample's failure codes are its first one)."""

    PASS = "PASS"
    SEL_WRONG = "SEL-WRONG"  # another offered tool
    SEL_UNKNOWN = "SEL-UNKNOWN"  # a name not on the surface, or a left-out tool
    SEL_MISSED = "SEL-MISSED"  # no call, one expected
    RES_UNNECESSARY = "RES-UNNECESSARY"  # a call, none expected
    RES_GUESSED = "RES-GUESSED"  # a call where the case expects a question to the user (expect_reply: clarify)
    RES_WRONG_REPLY = "RES-WRONG-REPLY"  # no call, rightly, but not the kind of reply the case expects
    NO_REPLY = "NO-REPLY"  # no call and no usable reply: cut at the token limit, refused by the API, or empty
    ARG_INVALID = "ARG-INVALID"  # unparseable or schema-invalid arguments
    ARG_SEMANTIC = "ARG-SEMANTIC"  # schema-valid but not the expected values
    SEL_SUBOPTIMAL = "SEL-SUBOPTIMAL"  # an `acceptable` tool: it works, but it is not the best choice
    REC_SILENT = "REC-SILENT"  # after a stubbed error, the final answer doesn't surface it
    REC_LOOP = "REC-LOOP"  # the same failing call repeated more than once
    RES_OVERCALL = "RES-OVERCALL"  # more calls than needed
    SEQ_MISMATCH = "SEQ-MISMATCH"  # the calls don't match the expected sequence (missing, extra, out of order)
    FINAL_MISMATCH = "FINAL-MISMATCH"  # the final answer fails the case's `final` checks
    MAX_TURNS = "MAX-TURNS"  # still calling tools at max_turns: no final answer
    CLIENT_FAILED = "CLIENT-FAILED"  # the client can't present the surface (a name over its limit): nothing sent
    TOOL_MISSING = "TOOL-MISSING"  # the case expects a tool the surface does not have (removed, renamed): not asked
    ERROR = "ERROR"  # the provider failed for this sample
    NOT_EVALUATED = "NOT-EVALUATED"  # never asked (cache-only miss, the run stopped first, a TODO prompt)


OUTCOME_MEANING = {
    SampleOutcome.PASS: "right tool, right arguments (or rightly no tool)",
    SampleOutcome.SEL_WRONG: "picked another tool on the surface",
    SampleOutcome.SEL_UNKNOWN: "picked a tool that is not on the surface (or was left out)",
    SampleOutcome.SEL_MISSED: "called no tool when one was expected",
    SampleOutcome.RES_UNNECESSARY: "called a tool when none was expected",
    SampleOutcome.RES_GUESSED: (
        "called a tool, guessing, where it should have asked the user first (expect_reply: clarify)"
    ),
    SampleOutcome.RES_WRONG_REPLY: (
        "called no tool, rightly, but did not reply as the case expects (e.g. answered instead of asking)"
    ),
    SampleOutcome.NO_REPLY: (
        "called no tool and gave no usable reply: cut at the token limit, refused by the API, or empty"
    ),
    SampleOutcome.ARG_INVALID: "right tool, arguments unparseable or invalid against the input schema",
    SampleOutcome.ARG_SEMANTIC: "right tool, schema-valid arguments with the wrong values",
    SampleOutcome.SEL_SUBOPTIMAL: "picked a tool that works but is not the best choice (the case's acceptable)",
    SampleOutcome.REC_SILENT: "after a tool error, the final answer did not surface it",
    SampleOutcome.REC_LOOP: "repeated the same failing call more than once",
    SampleOutcome.RES_OVERCALL: "made more tool calls than needed",
    SampleOutcome.SEQ_MISMATCH: "the calls don't match the expected sequence (one missing, or out of order)",
    SampleOutcome.FINAL_MISMATCH: "the final answer fails the case's final checks",
    SampleOutcome.MAX_TURNS: "still calling tools at max_turns, with no final answer",
    SampleOutcome.CLIENT_FAILED: "the client can't present the surface (a name over its limit, too many tools)",
    SampleOutcome.TOOL_MISSING: "the case expects a tool the surface does not have (removed or renamed?): not asked",
    SampleOutcome.ERROR: "the provider failed for this sample",
    SampleOutcome.NOT_EVALUATED: "not asked (not in the cache with --cache-only, the run stopped, or a TODO prompt)",
}
