"""The words of a tested rewrite: the review comment that carries it as a one-click suggestion on its
source lines, and the PR comment's section with every rewrite tried — the accepted ones with their
held-out evidence (and, when their lines are outside the PR's diff, the patch, folded), the others
with what was tried.

The suggestion block holds the file's own lines exactly as accepting it writes them (a block longer
than any run of backticks in them); lines that would show a control or bidi character are never put
in one (the patch, escaped, carries them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..suggestions import Suggestion, evidence
from .escape import code, esc, exact_fence, fence, fence_ticks, visible

HOW = (
    "A rewrite is suggested only when it passed the held-out test: candidates written from the tuning cases "
    "only, the best re-run on held-out cases it never saw against the current description, sample by sample — "
    "held-out accuracy higher with p < α (McNemar's exact test), no other tool's recall significantly lower "
    "(Holm-corrected), at most 20% more tokens. See docs/fix.md."
)


def suggestion_key(s: Suggestion) -> str:
    """Same tool, same file, same new text: the same suggestion."""
    text = f"{s.tool}\x00{s.path}\x00{s.description}"
    return hashlib.sha256(text.encode(errors="surrogatepass")).hexdigest()[:16]


def suggestable(s: Suggestion) -> bool:
    """An accepted rewrite GitHub can take as a suggestion: placed on lines of the PR's diff, and
    nothing in them that a code block would show other than as written."""
    made = s.rewrite
    return bool(s.in_diff and made is not None and all(visible(line) == line for line in made.lines))


def suggestion_body(s: Suggestion, marker: str, report_url: str | None) -> str:
    """The review comment on the description's lines (`marker` first): the headline, the evidence,
    the suggestion."""
    assert s.rewrite is not None
    block = "\n".join(s.rewrite.lines)
    ticks = fence_ticks(block)  # the lines as written: suggestable() let no hidden character through
    link = f" [The full report]({report_url})." if report_url else ""
    return "\n".join([
        marker,
        f"#### 💡 toolselect: a rewrite of {code(s.tool)}'s description that passed the held-out test",
        "",
        esc(evidence(s)) + ".",
        "",
        f"{ticks}suggestion",
        block,
        ticks,
        "",
        f"<sub>{esc(HOW)}{link}</sub>",
    ])  # fmt: skip


def suggestions_markdown(suggestions: Sequence[Suggestion]) -> str:
    """The PR comment's section: one line per tool rewritten."""
    lines = ["**Description rewrites, tested on held-out cases**", ""]
    for s in suggestions:
        name = code(s.tool)
        if not s.accepted:
            lines.append(f"- ✗ {esc(s.note)}")
            continue
        said = f"- 💡 {name}: {esc(evidence(s))}"
        if suggestable(s) and s.path is not None and s.rewrite is not None:
            lines.append(f"{said} — suggested on {code(s.path)} line {s.rewrite.start} (a review comment)")
        elif s.patch and s.path is not None:
            lines += [
                f"{said} — its lines are outside this PR's diff, so here is the patch:",
                "",
                f"  <details><summary>The patch for {code(s.path)}</summary>",
                "",
                "\n".join("  " + x for x in exact_fence(s.patch.rstrip("\n"), "diff").split("\n")),
                "",
                "  </details>",
            ]
        else:
            lines.append(f"{said} — {esc(s.unplaced or 'no patch')}; the new description:")
            lines += ["", "\n".join("  " + x for x in fence(s.description).split("\n"))]
    return "\n".join([*lines, "", f"<sub>{esc(HOW)}</sub>"])
