"""The two pydantic bases for everything read from a file: unknown keys are errors in both."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """A file toolselect writes and reads back (report, diff, cache entry, meta.json): untrusted
    when read, so extra keys are refused."""

    model_config = ConfigDict(extra="forbid")


class Authored(BaseModel):
    """A file a person writes (config, golden set): extra keys refused, and no silent coercion
    (`"0.9"` is not a number, `1` is not `true`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
