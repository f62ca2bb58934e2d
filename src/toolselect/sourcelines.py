"""Where a changed tool's text lives in a pull request's diff. Pure: no I/O.

(base surface, head surface) → the text that changed, per tool (description, title, each
parameter's description and enum); (that text, the PR's files with their patches) → the added lines
that carry it. Matching is by normalized words, not by file names or languages: a description
written as a TypeScript template string over three lines, a Python string concatenated from four
literals, a YAML block scalar or an escaped JSON string all read as the same words. A match must
cover the words that changed on added lines, and stay mostly text of that tool; when nothing matches
well enough, or two tools claim the same lines, there is no location (never a comment on a wrong
line).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["+", "-", " "]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_WORD = re.compile(r"\w+")
_ESCAPES = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)")
_SIMPLE = {"n": " ", "t": " ", "r": " ", "b": " ", "f": " ", "v": " ", "0": " "}
# Where the source should be, when two files carry the same text equally well: code before data
# files, data files before generated output.
_GENERATED = re.compile(r"(^|/)(dist|build|out|lib|node_modules|vendor|\.next)/|\.min\.|\.map$|lock")
_DATA = (".json", ".yaml", ".yml", ".toml")

MIN_WORDS = 6  # a match names at least this many of the text's words, or all of a shorter text
MIN_NEEDLE = 0.5  # …and at least half of the words that changed, on added lines
MIN_DENSITY = 0.5  # …and at least half the words on the matched lines are the text's own
MAX_GAP = 12  # words of code allowed between two matched pieces of one text


@dataclass(frozen=True)
class FilePatch:
    """A file of the pull request as GitHub lists it: the path in the head, the patch (hunks without
    the file header; None when GitHub gives none: binary, too large, or only renamed)."""

    path: str
    patch: str | None
    status: str = "modified"


@dataclass(frozen=True)
class PatchLine:
    kind: Kind
    text: str
    new: int | None  # the line in the head file; None for a removed line
    old: int | None  # the line in the base file; None for an added line


def parse_patch(patch: str) -> list[list[PatchLine]]:
    """The hunks of a unified diff, each a list of lines with their numbers on both sides."""
    hunks: list[list[PatchLine]] = []
    old = new = 0
    for raw in patch.split("\n"):
        m = _HUNK.match(raw)
        if m:
            old, new = int(m.group(1)), int(m.group(3))
            hunks.append([])
            continue
        if not hunks or not raw or raw.startswith("\\"):  # "\ No newline at end of file"
            continue
        kind, text = raw[0], raw[1:]
        if kind == "+":
            hunks[-1].append(PatchLine("+", text, new, None))
            new += 1
        elif kind == "-":
            hunks[-1].append(PatchLine("-", text, None, old))
            old += 1
        elif kind == " ":
            hunks[-1].append(PatchLine(" ", text, new, old))
            new += 1
            old += 1
    return hunks


def right_lines(patch: str) -> set[int]:
    """The head-side lines a review comment may be placed on: added and context lines of the patch."""
    return {line.new for hunk in parse_patch(patch) for line in hunk if line.new is not None}


# ---------------------------------------------------------------------------------------------- text


def words(text: str) -> list[str]:
    """The words of a text as a description and as source code both show them: lowercased, escape
    sequences read (`\\n` is a space, `\\"` a quote), punctuation and quotes dropped."""
    return _WORD.findall(_unescape(text).casefold())


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        seq = m.group(1)
        if seq[0] in "ux" and len(seq) > 1:
            try:
                return chr(int(seq[1:], 16))
            except ValueError:
                return " "
        return _SIMPLE.get(seq, seq)

    return _ESCAPES.sub(one, text)


@dataclass(frozen=True)
class TextChange:
    """One piece of a tool's text that differs between base and head (old "" for a new tool)."""

    tool: str
    field: str  # "description", "title", "parameter `units`: description", "parameter `units`: enum"
    old: str
    new: str


def text_changes(base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]]) -> dict[str, list[TextChange]]:
    """Every tool whose description, title, or a parameter's description or enum changed (new tools
    included), with what changed, description first."""
    old = {d.get("name"): d for d in base if isinstance(d.get("name"), str)}
    out: dict[str, list[TextChange]] = {}
    for tool in head:
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        before = _texts(old.get(name, {}))
        changes = [
            TextChange(name, field, before.get(field, ""), text)
            for field, text in _texts(tool).items()
            if text.strip() and before.get(field, "") != text
        ]
        if changes:
            out[name] = changes
    return out


def _texts(tool: Mapping[str, Any]) -> dict[str, str]:
    """A tool's texts in order: description, title, then each parameter's description and enum."""
    texts: dict[str, str] = {}
    if isinstance(tool.get("description"), str):
        texts["description"] = tool["description"]
    annotations = tool.get("annotations")
    title = tool.get("title") or (annotations.get("title") if isinstance(annotations, dict) else None)
    if isinstance(title, str):
        texts["title"] = title
    for path, schema in _properties(tool.get("inputSchema"), ""):
        if isinstance(schema.get("description"), str):
            texts[f"parameter `{path}`: description"] = schema["description"]
        if isinstance(schema.get("enum"), list):
            texts[f"parameter `{path}`: enum"] = " ".join(str(v) for v in schema["enum"])
    return texts


def _properties(schema: Any, prefix: str, depth: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict) or depth > 8:
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for key, sub in props.items():
            if isinstance(sub, dict):
                path = f"{prefix}.{key}" if prefix else str(key)
                yield path, sub
                yield from _properties(sub, path, depth + 1)
    if isinstance(schema.get("items"), dict):
        yield from _properties(schema["items"], f"{prefix}[]", depth + 1)


# ------------------------------------------------------------------------------------------ locating


@dataclass(frozen=True)
class Location:
    """The added lines in the PR's diff that carry a tool's changed text."""

    tool: str
    field: str
    path: str
    start_line: int  # head-side lines, both in one hunk; start_line == line for a single line
    line: int
    covered: float  # share of the text's words on the matched lines
    changed: float  # share of the changed words found on added lines

    @property
    def lines(self) -> range:
        return range(self.start_line, self.line + 1)


def locate(changes: Mapping[str, Sequence[TextChange]], files: Iterable[FilePatch]) -> dict[str, Location]:
    """The best location of each tool's changed text (its first change that can be located), in the
    files of a pull request. A tool whose best lines another tool claims at least as well has none."""
    hunks = [(f.path, hunk) for f in files if f.patch for hunk in parse_patch(f.patch)]
    found: dict[str, Location] = {}
    for tool, tool_changes in changes.items():
        for change in tool_changes:
            best = _best(change, hunks)
            if best is not None:
                found[tool] = best
                break
    return _unambiguous(found)


def _unambiguous(found: dict[str, Location]) -> dict[str, Location]:
    """Two tools on overlapping lines: the one whose text covers them better keeps them; a tie keeps
    neither."""
    keep = dict(found)
    items = list(found.values())
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            if a.path != b.path or a.line < b.start_line or b.line < a.start_line:
                continue
            rank_a, rank_b = (a.changed, a.covered), (b.changed, b.covered)
            if rank_a >= rank_b:
                keep.pop(b.tool, None)
            if rank_b >= rank_a:
                keep.pop(a.tool, None)
    return keep


@dataclass(frozen=True)
class _Token:
    word: str
    line: int  # index into the hunk


def _best(change: TextChange, hunks: Sequence[tuple[str, list[PatchLine]]]) -> Location | None:
    target = words(change.new)
    if not target:
        return None
    needle = _changed_positions(words(change.old), target)
    candidates = [loc for path, hunk in hunks if (loc := _in_hunk(change, path, hunk, target, needle))]
    if not candidates:
        return None
    return max(candidates, key=lambda loc: (loc.changed, loc.covered, _preference(loc.path)))


def _preference(path: str) -> int:
    if _GENERATED.search(path):
        return 0
    return 1 if path.lower().endswith(_DATA) else 2


def _changed_positions(old: list[str], new: list[str]) -> list[frozenset[int]]:
    """What changed, as positions in `new`: each new word on its own; for removed words, their two
    neighbours together (either one on an added line shows where the words went)."""
    if not old:
        return [frozenset([p]) for p in range(len(new))]
    groups: list[frozenset[int]] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if j1 == j2:
            around = frozenset(p for p in (j1 - 1, j1) if 0 <= p < len(new))
            groups += [around] if around else []
        else:
            groups += [frozenset([p]) for p in range(j1, j2)]
    return groups


def _in_hunk(
    change: TextChange, path: str, hunk: list[PatchLine], target: list[str], needle: list[frozenset[int]]
) -> Location | None:
    shown = [line for line in hunk if line.new is not None]  # the head side: added and context lines
    tokens = [_Token(w, i) for i, line in enumerate(shown) for w in words(line.text)]
    if not tokens:
        return None
    matcher = difflib.SequenceMatcher(None, [t.word for t in tokens], target, autojunk=False)
    shortest = 1 if len(target) <= 2 else 2  # a lone common word is no evidence
    blocks = [b for b in matcher.get_matching_blocks() if b.size >= shortest]
    best: Location | None = None
    for cluster in _clusters(blocks):
        first, last = cluster[0].a, cluster[-1].a + cluster[-1].size - 1
        matched = {(b.a + k, b.b + k) for b in cluster for k in range(b.size)}
        covered = {j for _, j in matched}
        on_added = {j for i, j in matched if shown[tokens[i].line].kind == "+"}
        hit = [group for group in needle if group & on_added]
        if not hit or len(hit) < MIN_NEEDLE * len(needle):
            continue
        if len(covered) < min(MIN_WORDS, len(target)):
            continue
        span_lines = range(tokens[first].line, tokens[last].line + 1)
        span_words = sum(1 for t in tokens if t.line in span_lines)
        if len(matched) < MIN_DENSITY * span_words:
            continue
        hits = set().union(*hit) & on_added
        changed_lines = sorted({tokens[i].line for i, j in matched if j in hits and shown[tokens[i].line].kind == "+"})
        start, end = shown[changed_lines[0]].new, shown[changed_lines[-1]].new
        assert start is not None and end is not None
        loc = Location(
            change.tool,
            change.field,
            path,
            start,
            end,
            covered=round(len(covered) / len(target), 4),
            changed=round(len(hit) / len(needle), 4),
        )
        if best is None or (loc.changed, loc.covered) > (best.changed, best.covered):
            best = loc
    return best


def _clusters(blocks: list[Any]) -> list[list[Any]]:
    """Matching blocks in hunk order, grouped where they sit close together (one literal, or one
    string concatenated from several)."""
    ordered = sorted(blocks, key=lambda b: b.a)
    groups: list[list[Any]] = []
    for block in ordered:
        if groups and block.a - (groups[-1][-1].a + groups[-1][-1].size) <= MAX_GAP:
            groups[-1].append(block)
        else:
            groups.append([block])
    return groups
