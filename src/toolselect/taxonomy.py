"""The vocabulary every stage shares, declared once at the bottom of the import graph: the failure
codes a trajectory sample can carry and seed 004's four dimensions it is scored on (0–3). The
report's schema, the trajectory scorer, the gate's `min_dimension` option and the renderers all
read these."""

from __future__ import annotations

from typing import Literal, get_args

FailureCode = Literal[
    "SEL-WRONG", "SEL-SUBOPTIMAL", "SEL-MISSED", "ARG-INVALID", "ARG-SEMANTIC", "REC-SILENT", "REC-LOOP",
    "RES-OVERCALL", "RES-UNNECESSARY",
]  # fmt: skip
FAILURE_CODES: tuple[str, ...] = get_args(FailureCode)  # in the order reports list them

Dimension = Literal["selection", "arguments", "recovery", "restraint"]
DIMENSIONS: tuple[str, ...] = get_args(Dimension)
