"""Errors meant for a person: what is wrong, where, and what to do about it.

The CLI catches `ToolselectError` once, prints `error: <message>` and exits with its code.
Exit codes: 0 passed, 1 gate failed, 2 usage/config error, 3 infrastructure failure, 130 interrupted.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

EXIT_PASSED = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INFRA = 3
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM: what a shell reports for SIGINT


class ToolselectError(Exception):
    """Base class; `message` is shown to the user as-is."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ConfigError(ToolselectError):
    """Bad config, golden file, flag or input: exit 2."""

    exit_code = EXIT_USAGE


class ConfigErrors(ConfigError):
    """Several config problems found at once; each is one line."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = messages


class Refused(ConfigError):
    """Something would hand a program of the pull request what it must not have: the run stops (exit
    2) on either side, never "no baseline"."""


class InfraError(ToolselectError):
    """The MCP server, the provider or GitHub failed: exit 3."""

    exit_code = EXIT_INFRA


class MissingProgram(InfraError):
    """A server's setup, start or command needs a program that is not installed where it runs."""


def where(file: str | None, line: int | None) -> str:
    """`file:line: ` prefix for a message, or '' when the place is unknown."""
    if not file:
        return ""
    return f"{file}:{line}: " if line else f"{file}: "


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """' (did you mean 'x'?)' when a known word is close, else ' (known: a, b, c)'."""
    known = sorted(set(known))
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    if not known:
        return ""
    shown = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
    return f" (known: {shown})"
