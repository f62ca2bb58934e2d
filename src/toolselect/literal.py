"""A tool's new description written into its source file, in the file's own syntax: the string
literal(s) that hold the old text — a Python string (concatenated pieces, triple quotes), a
TypeScript or JavaScript string or template literal, a JSON string, a YAML scalar (plain, quoted or
a block) — replaced by one literal holding the new text, quoted and escaped so that the file stays
valid. Pure: lines in, lines out; the suggestion block of a review comment and `fix --patch` are
made from it. When the lines don't hold the old text in a literal, there is no rewrite (never a
guess).
"""

from __future__ import annotations

import difflib
import io
import json
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from .sourcelines import words

PYTHON = (".py", ".pyi")
SCRIPT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
JSON = (".json",)
YAML = (".yaml", ".yml")
_YAML_KEY = re.compile(r"^(?P<lead>\s*(?:-\s+)?)(?P<key>[\"']?[\w.-]+[\"']?):(?P<rest>.*)$")


@dataclass(frozen=True)
class Rewrite:
    """Lines `start`..`end` (1-based, inclusive) of the file, to be replaced by `lines`."""

    start: int
    end: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Lit:
    """One string literal in the file: where it starts and ends (1-based lines, 0-based columns, the
    end just past its closing quote), how it opens (quote, with a Python prefix), its raw inside."""

    line: int
    col: int
    end_line: int
    end_col: int
    opening: str
    inside: str


def rewrite(path: str, text: str, start: int, end: int, old: str, new: str) -> Rewrite | None:
    """The literal holding `old` on lines `start`..`end` of `text` (a file at `path`), rewritten to
    hold `new`; None when it isn't found there."""
    lines = text.splitlines()
    if not 1 <= start <= end <= len(lines):
        return None
    suffix = path[path.rfind(".") :].lower() if "." in path else ""
    if suffix in YAML:
        return _yaml(lines, start, end, old, new)
    if suffix not in (*PYTHON, *SCRIPT, *JSON):
        return None
    found = _python_literals(lines) if suffix in PYTHON else _script_literals(lines, suffix)
    run = _holding([lit for lit in found or () if start <= lit.line <= end], old)
    if run is None:
        return None
    first, last = run
    literal = _literal(new, first.opening, suffix)
    made = lines[first.line - 1][: first.col] + literal + lines[last.end_line - 1][last.end_col :]
    return Rewrite(first.line, last.end_line, tuple(made.split("\n")))


def applied(text: str, made: Rewrite) -> str:
    """`text` with the rewrite's lines in place (one newline at the end)."""
    lines = text.splitlines()
    lines[made.start - 1 : made.end] = made.lines
    return "\n".join(lines) + "\n"


def unified(path: str, before: str, after: str, context: int = 3) -> str:
    """The unified diff of one file (`git apply -p1` takes it: a/ and b/ before `path`)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=context))


# ------------------------------------------------------------------------------ finding the literals

_PY_OPENING = re.compile(r"""[rRbBuUfF]*('''|\"\"\"|'|")""")


def _python_literals(lines: Sequence[str]) -> list[Lit] | None:
    """Every string token of a Python file (None when it doesn't tokenize)."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            m = _PY_OPENING.match(tok.string) if tok.type == tokenize.STRING else None
            if m is None:
                continue
            inside = tok.string[len(m.group(0)) : len(tok.string) - len(m.group(1))]
            out.append(Lit(tok.start[0], tok.start[1], tok.end[0], tok.end[1], m.group(0), inside))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out


def _script_literals(lines: Sequence[str], suffix: str) -> list[Lit] | None:
    """Every string or template literal of a TypeScript, JavaScript or JSON file, scanned from the
    top (a quote inside a comment or another string doesn't mislead it); None when one never closes."""
    quotes = '"' if suffix in JSON else "\"'`"
    out = []
    row, col = 0, 0
    while row < len(lines):
        line = lines[row]
        if col >= len(line) or (suffix not in JSON and line.startswith("//", col)):
            row, col = row + 1, 0
        elif suffix not in JSON and line.startswith("/*", col):
            row, col = _past(lines, row, col + 2, "*/")
        elif line[col] in quotes:
            closed = _close(lines, row, col, line[col])
            if closed is None:
                return None
            end_row, end_col = closed
            if end_row == row:
                inside = line[col + 1 : end_col - 1]
            else:
                inside = "\n".join([line[col + 1 :], *lines[row + 1 : end_row], lines[end_row][: end_col - 1]])
            out.append(Lit(row + 1, col, end_row + 1, end_col, line[col], inside))
            row, col = closed
        else:
            col += 1
    return out


def _past(lines: Sequence[str], row: int, col: int, mark: str) -> tuple[int, int]:
    while row < len(lines):
        found = lines[row].find(mark, col)
        if found >= 0:
            return row, found + len(mark)
        row, col = row + 1, 0
    return row, 0


def _close(lines: Sequence[str], row: int, col: int, quote: str) -> tuple[int, int] | None:
    """Just past the closing quote of the literal opened at (row, col); only a template literal
    spans lines."""
    i = col + 1
    while row < len(lines):
        line = lines[row]
        while i < len(line):
            if line[i] == "\\":
                i += 2
            elif line[i] == quote:
                return row, i + 1
            else:
                i += 1
        if quote != "`":
            return None
        row, i = row + 1, 0
    return None


def _holding(found: Sequence[Lit], old: str) -> tuple[Lit, Lit] | None:
    """The fewest consecutive literals whose words are the old text's (a description may be
    concatenated from pieces): the first and the last."""
    target = words(old)
    if not target:
        return None
    best: tuple[int, int] | None = None
    for i in range(len(found)):
        got: list[str] = []
        for j in range(i, len(found)):
            got += words(found[j].inside)
            if len(got) > len(target):
                break
            if got == target and (best is None or j - i < best[1] - best[0]):
                best = (i, j)
    return (found[best[0]], found[best[1]]) if best is not None else None


# ------------------------------------------------------------------------------ writing the literal


def _literal(text: str, opening: str, suffix: str) -> str:
    """`text` as a literal of the kind `opening` began (a prefix dropped: the text is plain now)."""
    quote = opening.lstrip("rRbBuUfF")
    if suffix in PYTHON and quote in ('"""', "'''"):
        body = text.replace("\\", "\\\\").replace(quote, "\\" + quote[0] * 3)
        return quote + body + quote
    if quote == "`":
        return "`" + text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${") + "`"
    if quote == "'" and suffix not in JSON:
        inner = json.dumps(text, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'")
        return "'" + inner + "'"
    return json.dumps(text, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# ------------------------------------------------------------------------------ YAML


def _yaml(lines: Sequence[str], start: int, end: int, old: str, new: str) -> Rewrite | None:
    """The YAML key whose scalar holds `old`, at or above `start`: its whole scalar (plain, quoted,
    or a block and its more-indented lines) becomes one double-quoted scalar (JSON's escapes are
    YAML's)."""
    import yaml

    target = words(old)
    for row in range(end, max(0, start - 50), -1):  # the key may sit above the text's lines (a block scalar)
        m = _YAML_KEY.match(lines[row - 1])
        if m is None:
            continue
        indent = len(m.group("lead"))
        last = row
        while last < len(lines) and (not lines[last].strip() or _indent(lines[last]) > indent):
            last += 1
        while last > row and not lines[last - 1].strip():
            last -= 1
        try:
            value = yaml.safe_load("\n".join(line[indent:] for line in lines[row - 1 : last]))
        except yaml.YAMLError:
            continue
        scalar = next(iter(value.values())) if isinstance(value, dict) and len(value) == 1 else None
        if isinstance(scalar, str) and words(scalar) == target:
            if last < start:
                return None  # the text's lines are not this scalar's
            quoted = _literal(new, '"', ".json")
            return Rewrite(row, last, (f"{m.group('lead')}{m.group('key')}: {quoted}",))
        if row < start:
            return None
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))
