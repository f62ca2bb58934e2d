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
# Where the source should be, when two files carry the same text equally well: code, then data
# files, then docs, then generated output. Lock files are never searched.
_GENERATED = re.compile(r"(^|/)(dist|build|out|node_modules|vendor|\.next)/|\.min\.[a-z]+$|\.map$")
_LOCKS = re.compile(
    r"(^|/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock|Pipfile\.lock"
    r"|Cargo\.lock|Gemfile\.lock|composer\.lock|go\.sum|bun\.lockb?|[^/]*\.lock)$"
)
_DATA = (".json", ".yaml", ".yml", ".toml")
_DOCS = (".md", ".mdx", ".rst", ".txt", ".adoc", ".html")
# A quoted string on a line of code: its opening quote follows no word character (so "it's" is no
# quote), its closing one is followed by none.
_QUOTED = re.compile(r"""(?<![\w\\])(["'`])((?:\\.|(?!\1).)*)\1(?!\w)""")

MIN_WORDS = 6  # a match names at least this many of the text's words, or all of a shorter text
MIN_NEEDLE = 0.5  # …and at least half of the words that changed, on added lines
MIN_DENSITY = 0.5  # …and at least half the words on the matched lines are the text's own
MIN_DENSITY_WHOLE = 0.3  # …or a third, for a short text matched whole (an enum beside its parameter's name)
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


def text_words(line: str) -> list[str]:
    """The words of a source line that can be a tool's text: on a line with quoted strings, the
    words inside them (`state: z.enum(["open"]).describe("Filter by state")` → open, filter, by,
    state); on a line without (a docstring, a template string's middle, a YAML scalar), all of them."""
    quoted = _QUOTED.findall(line)
    if not quoted:
        return words(line)
    return [w for _, inside in quoted for w in words(inside)]


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
    if isinstance(tool.get("title"), str):  # the surface's definitions carry it (surface.build_surface)
        texts["title"] = tool["title"]
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


@dataclass(frozen=True)
class _Hunk:
    path: str
    lines: tuple[PatchLine, ...]  # the head side: added and context lines
    words: tuple[str, ...]  # the text words of those lines, in order
    line_of: tuple[int, ...]  # for each word, its index in `lines`
    added: frozenset[str]  # the words on added lines
    present: frozenset[str]  # every word
    preference: int  # code 3, data 2, docs 1, generated 0


def _hunks(files: Iterable[FilePatch]) -> list[_Hunk]:
    """Each hunk of the PR, tokenized once; lock files and hunks without added lines left out."""
    out = []
    for f in files:
        if not f.patch or _LOCKS.search(f.path):
            continue
        for hunk in parse_patch(f.patch):
            every = [line for line in hunk if line.new is not None]
            # a long hunk is searched in overlapping windows: a text spans a few lines, and matching
            # costs about the product of the two lengths
            for start in range(0, max(1, len(every) - OVERLAP), WINDOW - OVERLAP):
                shown = tuple(every[start : start + WINDOW])
                if any(line.kind == "+" for line in shown):
                    out.append(_hunk(f.path, shown))
    return out


def _hunk(path: str, shown: tuple[PatchLine, ...]) -> _Hunk:
    per_line = [text_words(line.text) for line in shown]
    added = frozenset(w for line, ws in zip(shown, per_line, strict=True) if line.kind == "+" for w in ws)
    flat = tuple(w for ws in per_line for w in ws)
    line_of = tuple(i for i, ws in enumerate(per_line) for _ in ws)
    return _Hunk(path, shown, flat, line_of, added, frozenset(flat), _preference(path))


def _preference(path: str) -> int:
    lower = path.lower()
    if _GENERATED.search(lower):
        return 0
    if lower.endswith(_DOCS):
        return 1
    return 2 if lower.endswith(_DATA) else 3


def lines_changed(changes: Mapping[str, Sequence[TextChange]], files: Iterable[FilePatch]) -> dict[str, Location]:
    """The best location of each tool's changed text (its first change that can be located), in the
    files of a pull request. Pass every tool whose text changed, even those you will not comment
    on: a tool whose best lines another tool claims at least as well gets none."""
    hunks = _hunks(files)
    index: dict[str, list[int]] = {}
    for n, hunk in enumerate(hunks):
        for w in hunk.added:
            index.setdefault(w, []).append(n)
    found: dict[str, Location] = {}
    for tool, tool_changes in changes.items():
        for change in tool_changes:
            best = _best(change, hunks, index)
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
            if not _overlap(a, b):
                continue
            rank_a, rank_b = (a.changed, a.covered), (b.changed, b.covered)
            if rank_a >= rank_b:
                keep.pop(b.tool, None)
            if rank_b >= rank_a:
                keep.pop(a.tool, None)
    return keep


def _overlap(a: Location, b: Location) -> bool:
    """Two locations share a line of one file."""
    return a.path == b.path and a.start_line <= b.line and b.start_line <= a.line


@dataclass(frozen=True)
class _Candidate:
    location: Location
    hits: frozenset[int]  # the changed-word groups it shows on added lines
    density: float  # share of the words on its lines that are the text's
    preference: int

    @property
    def rank(self) -> tuple[float, float, int, float]:
        return (self.location.changed, self.location.covered, self.preference, round(self.density, 4))


def _best(change: TextChange, hunks: Sequence[_Hunk], index: Mapping[str, list[int]]) -> Location | None:
    target = words(change.new)
    if not target:
        return None
    needle = _changed_positions(words(change.old), target)
    wanted = {target[p] for group in needle for p in group}
    distinct = set(target)
    enough = min(MIN_WORDS, len(distinct))
    near = sorted({n for w in wanted for n in index.get(w, ())})  # a changed word on an added line…
    near = [n for n in near if len(distinct & hunks[n].present) >= enough]  # …and enough of the text
    candidates = [c for n in near for c in _in_hunk(change, hunks[n], target, needle)]
    # a text edited in several places of one file shows part of its changes in each hunk: the file
    # as a whole must show enough of them
    by_file: dict[str, set[int]] = {}
    for c in candidates:
        by_file.setdefault(c.location.path, set()).update(c.hits)
    candidates = [c for c in candidates if len(by_file[c.location.path]) >= MIN_NEEDLE * len(needle)]
    if not candidates:
        return None
    candidates.sort(key=lambda c: c.rank, reverse=True)
    best = candidates[0]
    for other in candidates[1:]:
        if other.rank != best.rank:
            break
        a, b = best.location, other.location
        if not _overlap(a, b):
            return None  # the same text, equally well, in two places: no telling which is the tool's
    return best.location


def _changed_positions(old: list[str], new: list[str]) -> list[frozenset[int]]:
    """What changed, as positions in `new`: each new word on its own; for removed words, their two
    neighbours together (either one on an added line shows where the words went). When only
    punctuation or case changed, every word: the text must then be on added lines."""
    if not old or old == new:
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


WINDOW, OVERLAP = 160, 40  # lines of a long hunk searched at once, and shared by neighbouring windows
PASSES = 3  # alignments per hunk: each pass hides what the last one matched, to find another copy


def _in_hunk(change: TextChange, hunk: _Hunk, target: list[str], needle: list[frozenset[int]]) -> list[_Candidate]:
    shortest = 1 if len(target) <= 2 else 2  # a lone common word is no evidence
    seq = list(hunk.words)
    out = []
    for _ in range(PASSES):
        matcher = difflib.SequenceMatcher(None, seq, target, autojunk=False)
        blocks = [b for b in matcher.get_matching_blocks() if b.size >= shortest]
        if not blocks:
            break
        for cluster in _clusters(blocks):
            found = _candidate(change, hunk, cluster, target, needle)
            if found is not None:
                out.append(found)
            for b in cluster:
                seq[b.a : b.a + b.size] = ["\x00"] * b.size
    return out


def _candidate(
    change: TextChange, hunk: _Hunk, cluster: list[Any], target: list[str], needle: list[frozenset[int]]
) -> _Candidate | None:
    matched = {(b.a + k, b.b + k) for b in cluster for k in range(b.size)}
    covered = {j for _, j in matched}
    on_added = {j for i, j in matched if hunk.lines[hunk.line_of[i]].kind == "+"}
    hit = frozenset(n for n, group in enumerate(needle) if group & on_added)
    if not hit or len(covered) < min(MIN_WORDS, len(target)):
        return None
    first, last = cluster[0].a, cluster[-1].a + cluster[-1].size - 1
    span = range(hunk.line_of[first], hunk.line_of[last] + 1)
    span_words = sum(1 for line in hunk.line_of if line in span)
    density = len(matched) / span_words
    if density < (MIN_DENSITY_WHOLE if len(covered) == len(target) else MIN_DENSITY):
        return None
    hits = set().union(*(needle[n] for n in hit)) & on_added
    changed_lines = sorted(
        {hunk.line_of[i] for i, j in matched if j in hits and hunk.lines[hunk.line_of[i]].kind == "+"}
    )
    start, end = hunk.lines[changed_lines[0]].new, hunk.lines[changed_lines[-1]].new
    assert start is not None and end is not None
    location = Location(
        change.tool,
        change.field,
        hunk.path,
        start,
        end,
        covered=round(len(covered) / len(target), 4),
        changed=round(len(hit) / len(needle), 4),
    )
    return _Candidate(location, hit, density, hunk.preference)


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
