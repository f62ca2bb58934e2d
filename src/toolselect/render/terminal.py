"""The terminal: rich's console (wide in a CI log), and its tables and progress bars — loaded only by
a run that draws one."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress
    from rich.table import Table

CI_WIDTH = 200  # a CI log is no terminal, but it is wide: don't wrap tables and sentences at 80 columns


def make_console(environ: Mapping[str, str] | None = None) -> Console:
    """A console; in CI logs (no terminal, `CI` or `GITHUB_ACTIONS` set, no `COLUMNS`) a wide one."""
    env = os.environ if environ is None else environ
    console = Console(highlight=False)
    in_ci = bool(env.get("CI") or env.get("GITHUB_ACTIONS"))
    if in_ci and not console.is_terminal and not env.get("COLUMNS"):
        console = Console(highlight=False, width=CI_WIDTH)
    return console


def table_of(title: str, **options: Any) -> Table:
    """A rich table (rich's tables and bars are loaded only by a run that draws one)."""
    from rich.table import Table

    return Table(title=title, title_justify="left", **options)


def bar_of(label: str, console: Console) -> Progress:
    """A progress bar that goes when it stops: the label, the bar, done of all, the time taken."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True
    )
