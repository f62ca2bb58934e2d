"""A tool's new description written into its source file, in the file's own syntax: the string
literal(s) that hold the old text — a Python string (concatenated pieces, triple quotes), a
TypeScript or JavaScript string or template literal, a JSON string, a YAML scalar (plain, quoted or
a block) — replaced by one literal holding the new text, quoted and escaped so that the file stays
valid. Pure: lines in, lines out; the suggestion block of a review comment, the comment's patch and
`fix --patch/--apply` are made from it. When the lines don't hold the old text in a literal, there
is no rewrite (never a guess); and a rewrite is offered only once the changed file has been read
again — Python with `ast`, JSON and YAML with their parsers, TypeScript and JavaScript with the same
literal scanner — and holds exactly the new text where the old was, with nothing else changed.
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
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
    at: tuple[int, int] = (0, 0)  # where the new literal begins (line, column); YAML: the key's line
    literal: str = ""  # the new literal, as written


@dataclass(frozen=True)
class NotWritten:
    """Why there is no rewrite to offer: its literal wasn't found, or the file wouldn't read back."""

    why: str


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


def rewrite(path: str, text: str, start: int, end: int, old: str, new: str) -> Rewrite | NotWritten:
    """The literal holding `old` on lines `start`..`end` of `text` (a file at `path`), rewritten to
    hold `new` — only when the file, read again, holds exactly `new` there and nothing else changed."""
    lines = file_lines(text)
    if not 1 <= start <= end <= len(lines):
        return NotWritten(f"the description's literal was not found in {path}")
    suffix = path[path.rfind(".") :].lower() if "." in path else ""
    if suffix in YAML:
        made = _yaml(lines, start, end, old, new)
    elif suffix in (*PYTHON, *SCRIPT, *JSON):
        made = _in_code(lines, start, end, old, new, suffix)
    else:
        made = None
    if made is None:
        return NotWritten(f"the description's literal was not found in {path}")
    if why := read_back(suffix, text, made, new):
        return NotWritten(f"the rewritten {path} would not read back as the new description ({why}): not offered")
    return made


def _in_code(lines: Sequence[str], start: int, end: int, old: str, new: str, suffix: str) -> Rewrite | None:
    found = _python_literals(lines) if suffix in PYTHON else _script_literals(lines, suffix)
    run = _holding([lit for lit in found or () if start <= lit.line <= end], old)
    if run is None:
        return None
    first, last = run
    literal = _literal(new, first.opening, suffix)
    made = lines[first.line - 1][: first.col] + literal + lines[last.end_line - 1][last.end_col :]
    return Rewrite(first.line, last.end_line, tuple(made.split("\n")), (first.line, first.col), literal)


def applied(text: str, made: Rewrite) -> str:
    """`text` with the rewrite's lines in place (its own line ends, one at the end)."""
    lines = file_lines(text)
    lines[made.start - 1 : made.end] = made.lines
    newline = "\r\n" if "\r\n" in text else "\n"
    return newline.join(lines) + newline


def file_lines(text: str) -> list[str]:
    """The file's lines as Python, JavaScript, JSON, YAML and git count them: ended by a newline (with
    a carriage return before it, or not) — never by a form feed, U+2028 or the other characters
    `str.splitlines` also breaks at, which a literal may hold."""
    lines = re.split(r"\r?\n", text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def unified(path: str, before: str, after: str, context: int = 3) -> str:
    """The unified diff of one file (`git apply -p1` takes it: a/ and b/ before `path`)."""
    a, b = before.split("\n"), after.split("\n")
    a = [line + "\n" for line in a[:-1]] + ([a[-1]] if a[-1] else [])
    b = [line + "\n" for line in b[:-1]] + ([b[-1]] if b[-1] else [])
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
    """`text` as a literal of the kind `opening` began (a prefix dropped: the text is plain now).
    Nothing a reader would not see goes in raw — a control, format (bidi) or separator character is
    an escape — and a multi-line literal keeps its newlines and tabs."""
    quote = opening.lstrip("rRbBuUfF")
    if suffix in PYTHON and quote in ('"""', "'''"):
        mark = quote[0]
        body = _unseen(text.replace("\\", "\\\\"), "\\x{:02x}", "\\u{:04x}", "\\U{:08x}")
        # no two of its quotes side by side, and none last: only the closing three end it
        body = re.sub(f"{mark}(?={mark})|{mark}\\Z", lambda m: "\\" + m.group(), body)
        return quote + body + quote
    if quote == "`":
        body = text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
        return "`" + _unseen(body, "\\x{:02x}", "\\u{:04x}", "\\u{{{:x}}}") + "`"
    quoted = _printable(json.dumps(text, ensure_ascii=False), python=suffix in PYTHON)
    if quote == "'" and suffix not in JSON:
        return "'" + quoted[1:-1].replace('\\"', '"').replace("'", "\\'") + "'"
    return quoted


def _unseen(body: str, byte: str, bmp: str, astral: str) -> str:
    """Every character of `body` a reader would not see (but a newline, a tab and a space) as the
    escape its format says."""

    def escaped(c: str) -> str:
        n = ord(c)
        return (byte if n < 0x100 else bmp if n <= 0xFFFF else astral).format(n)

    return "".join(c if c.isprintable() or c in "\n\t " else escaped(c) for c in body)


def _printable(quoted: str, python: bool = False) -> str:
    """A JSON string with every character a source file or a YAML stream should not hold raw (a line
    or paragraph separator, a control or format character) as an escape: \\uXXXX, past the BMP a
    surrogate pair (Python: \\UXXXXXXXX)."""

    def escaped(c: str) -> str:
        n = ord(c)
        if n <= 0xFFFF:
            return f"\\u{n:04x}"
        if python:
            return f"\\U{n:08x}"
        n -= 0x10000
        return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"

    return "".join(c if c.isprintable() or c == " " else escaped(c) for c in quoted)


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
            return Rewrite(row, last, (f"{m.group('lead')}{m.group('key')}: {quoted}",), (row, 0), quoted)
        if row < start:
            return None
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# ------------------------------------------------------------------------------ reading it back


def read_back(suffix: str, before: str, made: Rewrite, new: str) -> str | None:
    """Why the file with `made` applied would not hold exactly `new` where the old text was, with
    nothing else changed (None: it would). Python is parsed with `ast`, JSON and YAML loaded; in
    TypeScript and JavaScript the literal must close exactly where it was written (the rest of the
    file is the same text, so it reads the same) and decode to `new`."""
    after = applied(before, made)
    try:
        after.encode("utf-8")
    except UnicodeEncodeError:
        return "it can't be written as UTF-8"
    if suffix in PYTHON:
        return _python_back(before, after, made, new)
    if suffix in JSON:
        return _data_back(json.loads, before, after, new)
    if suffix in YAML:
        import yaml

        return _data_back(yaml.safe_load, before, after, new)
    return _script_back(suffix, after, made, new)


def _python_back(before: str, after: str, made: Rewrite, new: str) -> str | None:
    try:
        tree = ast.parse(after)
    except SyntaxError as exc:
        return f"it would not parse: line {exc.lineno}: {exc.msg}"
    token = next((lit for lit in _python_literals(file_lines(after)) or () if (lit.line, lit.col) == made.at), None)
    quote = token.opening.lstrip("rRbBuUfF") if token else ""
    if token is None or token.opening + token.inside + quote != made.literal:
        return "its literal would end somewhere else"
    if ast.literal_eval(made.literal) != new:
        return "its literal would read as another text"
    try:
        was = ast.parse(before)
    except SyntaxError:
        return None  # nothing to compare the rest with: the literal itself reads back
    line = file_lines(after)[made.at[0] - 1]
    at = (made.at[0], len(line[: made.at[1]].encode("utf-8")))  # ast counts columns in UTF-8 bytes
    if ast.dump(_Without(at).visit(was)) != ast.dump(_Without(at).visit(tree)):
        return "it would change more than the description"
    return None


class _Without(ast.NodeTransformer):
    """The string (or f-string) that begins at `at` (line, byte column) replaced by a placeholder."""

    def __init__(self, at: tuple[int, int]) -> None:
        self.at = at

    def visit(self, node: ast.AST) -> ast.AST:
        begins = (getattr(node, "lineno", None), getattr(node, "col_offset", None)) == self.at
        if begins and (
            isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))
        ):
            return ast.Constant(value=None)
        return super().visit(node)


def _data_back(load: Callable[[str], object], before: str, after: str, new: str) -> str | None:
    try:
        doc = load(after)
    except ValueError as exc:  # json's and yaml's errors are ValueErrors… yaml's are not: caught below
        return f"it would not load: {exc}"
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError and its kin: the file would not load
        return f"it would not load: {type(exc).__name__}"
    try:
        was = load(before)
    except Exception:  # noqa: BLE001 - the file did not load before: nothing to compare with
        return None
    changed = list(_differences(was, doc))
    if len(changed) != 1:
        return "it would change more than the description"
    return None if changed[0] == new else "it would read as another text"


def _differences(was: object, now: object) -> Iterator[object]:
    """The values of `now` that differ from `was`'s, leaf by leaf (a whole value where the shape differs)."""
    if isinstance(was, dict) and isinstance(now, dict) and was.keys() == now.keys():
        for key in was:
            yield from _differences(was[key], now[key])
    elif isinstance(was, list) and isinstance(now, list) and len(was) == len(now):
        for a, b in zip(was, now, strict=True):
            yield from _differences(a, b)
    elif was != now or type(was) is not type(now):
        yield now


def _script_back(suffix: str, after: str, made: Rewrite, new: str) -> str | None:
    found = _script_literals(file_lines(after), suffix)
    if found is None:
        return "a literal would never close"
    lit = next((lit for lit in found if (lit.line, lit.col) == made.at), None)
    if lit is None or lit.opening + lit.inside + lit.opening != made.literal:
        return "its literal would end somewhere else"
    return None if _script_string(lit.opening, lit.inside) == new else "its literal would read as another text"


_SCRIPT_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v"}
_LINE_ENDS = ("\r\n", "\n", "\r", "\u2028", "\u2029")


def _script_string(quote: str, inside: str) -> str | None:
    """The text a JavaScript string or template literal holds (None: a template with a `${…}` in it,
    or a legacy octal escape: not a plain text)."""
    out: list[str] = []
    i = 0
    while i < len(inside):
        c = inside[i]
        if quote == "`" and inside.startswith("${", i):
            return None
        if quote == "`" and c == "\r":  # a template's raw line ends read as \n
            out.append("\n")
            i += 2 if inside.startswith("\r\n", i) else 1
            continue
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = inside[i + 1 : i + 2]
        if ended := next((e for e in _LINE_ENDS if inside.startswith(e, i + 1)), None):  # a line continuation
            i += 1 + len(ended)
        elif nxt in _SCRIPT_ESCAPES:
            out.append(_SCRIPT_ESCAPES[nxt])
            i += 2
        elif nxt == "0" and not inside[i + 2 : i + 3].isdigit():
            out.append("\0")
            i += 2
        elif nxt.isdigit():
            return None
        elif nxt in ("x", "u"):
            braced = nxt == "u" and inside.startswith("{", i + 2)
            end = inside.find("}", i + 3) if braced else i + (4 if nxt == "x" else 6)
            digits = inside[i + 3 : end] if braced else inside[i + 2 : end]
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                return None
            i = end + 1 if braced else end
        else:
            out.append(nxt)
            i += 2
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
