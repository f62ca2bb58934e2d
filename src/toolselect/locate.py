"""Read YAML and JSONL while remembering the line every value came from.

Config errors and failing cases are reported at `file:line`; the Action annotates that line.
A `Located` document maps a path such as `("evals", "cases", 2, "expect_tool")` to its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .bounds import MAX_FILE_DEPTH, nests_deeper, yaml_too_big
from .errors import ConfigError, where

Loc = tuple[str | int, ...]


@dataclass
class Located:
    """A parsed document plus the line (1-based) of each value and of each mapping key."""

    data: Any
    file: str
    values: dict[Loc, int] = field(default_factory=dict)
    keys: dict[Loc, int] = field(default_factory=dict)

    def line(self, loc: Loc, *, key: bool = False) -> int | None:
        """The line of `loc`, or of its closest ancestor that has one."""
        loc = tuple(loc)
        if key and loc in self.keys:
            return self.keys[loc]
        while loc:
            if loc in self.values:
                return self.values[loc]
            if loc in self.keys:
                return self.keys[loc]
            loc = loc[:-1]
        return self.values.get((), 1)


def display_path(path: Path, base: Path | None = None) -> str:
    """A path as the user should see it: relative to `base` (default: cwd) when inside it."""
    base = (base or Path.cwd()).resolve()
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def read_text(path: Path, shown: str, what: str) -> str:
    """A file's text; a UTF-8 byte-order mark (some Windows editors write one) is dropped, for JSON
    and JSONL as YAML does."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{shown}: {what} not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{shown}: {what} is a folder, not a file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read {what}: {exc.strerror}") from None


def load_yaml(path: Path, shown: str, what: str = "file") -> Located:
    """Parse a YAML file; duplicate keys and syntax errors are config errors at their line."""
    text = read_text(path, shown, what)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if refused := yaml_too_big(node):
            raise ConfigError(f"{shown}: refused: {refused}", hint="write the values out, or use fewer aliases")
        data = yaml.load(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise ConfigError(f"{shown}: refused: it nests deeper than the YAML reader goes") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"{where(shown, line)}invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{shown}: invalid YAML: {exc}") from None
    doc = Located(data=data, file=shown)
    if node is not None:
        _walk(node, (), doc)
    return doc


def _walk(node: yaml.Node, loc: Loc, doc: Located) -> None:
    doc.values[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ConfigError(f"{where(doc.file, line)}duplicate key '{key}' (first set on line {seen[key]})")
            seen[key] = line
            doc.keys[(*loc, key)] = line
            _walk(value_node, (*loc, key), doc)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*loc, index), doc)


def load_jsonl(path: Path, shown: str, what: str = "golden file") -> list[tuple[int, Any]]:
    """Parse JSON Lines: `(line number, value)` for every non-blank, non-`//` line."""
    rows: list[tuple[int, Any]] = []
    # split on "\n" only: JSON strings may hold U+2028 or U+0085, which str.splitlines() would cut at
    for number, line in enumerate(read_text(path, shown, what).split("\n"), start=1):
        line = line.removesuffix("\r")
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            row = json.loads(line, object_pairs_hook=_unique_keys)
        except RecursionError:
            raise ConfigError(f"{where(shown, number)}refused: it nests deeper than {MAX_FILE_DEPTH} levels") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where(shown, number)}invalid JSON: {exc.msg} (column {exc.colno})") from None
        except _DuplicateKey as exc:
            raise ConfigError(f"{where(shown, number)}duplicate key '{exc.args[0]}'") from None
        if nests_deeper(row, MAX_FILE_DEPTH):
            raise ConfigError(f"{where(shown, number)}refused: it nests deeper than {MAX_FILE_DEPTH} levels")
        rows.append((number, row))
    return rows


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


SOURCE_SUFFIXES = {".py", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", ".go", ".rs", ".java", ".kt", ".rb", ".cs"}
NOT_SOURCE = {".git", "node_modules", ".venv", "venv", "__pycache__", ".toolselect-cache", "toolselect-report",
              "build", "dist", "out", "target", ".mypy_cache", ".ruff_cache"}  # fmt: skip
MAX_SOURCE_FILES, MAX_SOURCE_BYTES = 5000, 1 << 20


def source_lines(folder: Path, tools: Mapping[str, str]) -> dict[str, tuple[str, int]]:
    """Where each tool (name → description) is declared in a server's sources — not its build output,
    dependencies or tests, when a source has it. In a layered server a tool's name is also a helper's
    (`operations/sheets.py: def create_sheet`), so the place is, best first: the line holding the start
    of the tool's description (near a line naming the tool, when it is in several places); the
    tool's function under a decorator (`@mcp.tool()` / `def create_sheet(`) or its name as a string
    (`server.tool("create_sheet", …)`); a plain `def` or `function` of that name. For findings to
    point at; a name found nowhere is left out."""
    import os

    from .sourcelines import words

    files: list[Path] = []
    for here, dirs, found in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in NOT_SOURCE and not d.startswith("."))
        files += [Path(here) / f for f in sorted(found) if Path(f).suffix in SOURCE_SUFFIXES]
        if len(files) > MAX_SOURCE_FILES:
            return {}
    files.sort(key=lambda p: ("test" in p.name.lower() or "test" in p.parent.name.lower(), len(p.parts), str(p)))
    found_at: dict[str, tuple[int, int, str, int]] = {}  # name → (rank, file order, path, line): the best so far
    starts = {name: words(description)[:DESCRIPTION_WORDS] for name, description in tools.items()}
    for order, path in enumerate(files):
        try:
            if path.stat().st_size > MAX_SOURCE_BYTES:
                continue
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError:
            continue
        lines = [line.removesuffix("\r") for line in text.split("\n")]  # only newlines end a line
        per_line = [words(line) for line in lines]
        for name in tools:
            best = found_at.get(name)
            if best is not None and best[0] == 0:
                continue
            place = _declared(name, lines, per_line, starts[name])
            if place is not None and (best is None or (place[0], order) < best[:2]):
                found_at[name] = (place[0], order, display_path(path), place[1])
    return {name: (shown, line) for name, (_, _, shown, line) in found_at.items()}


DESCRIPTION_WORDS = 6  # the first words of a description that find the line it starts on
NEAR = 30  # lines: a description this close after a line naming its tool is that tool's


def _declared(
    name: str, lines: Sequence[str], per_line: Sequence[list[str]], start: list[str]
) -> tuple[int, int] | None:
    """(rank, line) of the best place in one file: 0 the description's first line (near the name, or
    the only one), 1 a decorated function or the name as a string, 2 a plain function; None: none."""
    quoted = re.compile(rf"""["'`]{re.escape(name)}["'`]""")
    defined = re.compile(rf"""\b(?:def|function)\s+{re.escape(name)}\s*\(""")
    named: list[tuple[int, int]] = []  # (rank, line) of lines that name the tool
    for i, line in enumerate(lines):
        if quoted.search(line):
            named.append((1, i))
        elif defined.search(line):
            named.append((1 if _decorated(lines, i) else 2, i))
    described = _description_lines(per_line, start) if len(start) >= 2 else []
    near = [d for d in described if any(rank == 1 and 0 <= d - n <= NEAR for rank, n in named)]
    if near or (len(described) == 1 and named):
        return 0, (near or described)[0] + 1
    if named:
        rank, i = min(named)
        return rank, i + 1
    return None


def _decorated(lines: Sequence[str], i: int) -> bool:
    """A decorator sits right above line `i` (on the lines up to it with no blank between)."""
    for j in range(i - 1, max(-1, i - 9), -1):
        if not lines[j].strip():
            return False
        if lines[j].lstrip().startswith("@"):
            return True
    return False


def _description_lines(per_line: Sequence[list[str]], start: list[str]) -> list[int]:
    """The lines where a description's first words begin (read on into the next two lines: a string cut
    after a few words still matches)."""
    out = []
    first = start[0]
    for i, here in enumerate(per_line):
        if first not in here:
            continue
        ahead = [
            *here,
            *(per_line[i + 1] if i + 1 < len(per_line) else []),
            *(per_line[i + 2] if i + 2 < len(per_line) else []),
        ]
        for k, w in enumerate(here):
            if w == first and ahead[k : k + len(start)] == start:
                out.append(i)
                break
    return out
