"""Write what is derived from the option declarations (src/toolselect/options.py) into the files
people and GitHub read: action.yml's inputs, the container step's `with:` and the host step's
`env:`, docs/action.md's table of inputs, and docs/config.md's tables of `evals:` and `stress:` keys. Each
lives between generated markers.

    python scripts/sync_options.py            # update the files
    python scripts/sync_options.py --check    # exit 1 when a file is out of date (a test runs this)
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolselect.options import OPTIONS, Option, inputs  # noqa: E402

MARK = "generated from src/toolselect/options.py by scripts/sync_options.py: edit the declarations there"


def _yaml(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def action_inputs() -> str:
    lines = [f"# >>> inputs: {MARK}", "inputs:"]
    for o in inputs():
        lines += [
            f"  {o.input_name}:",
            f"    description: {_yaml(_sentence(o.help))}",
            "    required: false",
            f"    default: {_yaml(o.input_default)}",
        ]
    return "\n".join([*lines, "# <<< inputs"])


def action_with() -> str:
    lines = [f"        # >>> with: {MARK}"]
    lines += [f"        {o.input_name}: ${{{{ inputs.{o.input_name} }}}}" for o in inputs()]
    return "\n".join([*lines, "        # <<< with"])


def action_env() -> str:
    """The host step's environment: the same INPUT_<NAME> variables (dashes kept) GitHub gives the
    container step."""
    lines = [f"        # >>> env: {MARK}"]
    lines += [f"        INPUT_{str(o.input_name).upper()}: ${{{{ inputs.{o.input_name} }}}}" for o in inputs()]
    return "\n".join([*lines, "        # <<< env"])


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _value(value: object) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value is None:
        return "none"
    if isinstance(value, (dict, list)):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def input_default(o: Option) -> str:
    if o.shown_default:
        return o.shown_default
    if o.input_default:
        return f"`{o.input_default}`"
    if o.config:
        shown = isinstance(o.default, (int, float)) and not isinstance(o.default, bool)
        return "the config's" + (f" ({o.default})" if shown else "")
    return "none"


# The inputs as docs/action.md groups them (an input named nowhere here is "Advanced"), and those that
# ask a paid model more (💲).
INPUT_SECTIONS = (
    ("What to run", ("config", "working-directory", "tools-file", "golden", "provider", "model",
                     "anthropic-api-key", "openai-api-key", "github-token")),
    ("The gate", ("min-accuracy", "max-over-trigger", "min-clarify", "min-tool-recall", "min-dimension", "max-drop",
                  "max-steal-rise", "significance", "fail-on-certain-flips", "fail-on-client-limits", "base-failure",
                  "fail-on-fork")),
    ("Cost", ("max-cost", "max-requests", "max-tokens", "batch", "concurrency", "max-rpm", "max-tpm", "cache-dir")),
    ("Comments and reports", ("comment", "review-comments", "comment-id", "suggest", "junit", "report-artifact")),
)  # fmt: skip
SPENDS = {"models", "repeat", "judge", "clients", "alongside", "rewriter", "candidates", "stress-test", "suggest"}


def inputs_table() -> str:
    listed = {name for _, names in INPUT_SECTIONS for name in names}
    by_name = {o.input_name: o for o in inputs()}
    sections = [*INPUT_SECTIONS, ("Advanced", tuple(n for n in by_name if n not in listed))]
    out = []
    for title, names in sections:
        out += [f"**{title}**", "", "| input | default | |", "|---|---|---|"]
        for name in names:
            o = by_name[name]
            money = " 💲" if name in SPENDS else ""
            out.append(f"| `{o.input_name}`{money} | {input_default(o)} | {_cell(o.help)} |")
        out.append("")
    return "\n".join(out[:-1])


def evals_table(toolproof: bool, section: str = "evals") -> str:
    rows = ["| key | default | |", "|---|---|---|"]
    for o in OPTIONS:
        if o.config != section or (section == "evals" and o.toolproof != toolproof):
            continue
        also = [f"`{o.flag_name}`"] if o.flag_name else []
        also += [f"input `{o.input_name}`"] if o.input_name else []
        also += [f"`{v}`" for v in o.env]
        extra = f" Also {', '.join(also)}." if also else ""
        default = o.shown_default or _value(o.default)
        rows.append(f"| `{o.key}` | {default} | {_cell(_sentence(o.help))}{extra} |")
    return "\n".join(rows)


def _between(text: str, start: str, end: str, new: str, path: Path) -> str:
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: markers {start!r} … {end!r} not found")
    return pattern.sub(lambda _: new, text, count=1)


def action_yml(text: str, path: Path) -> str:
    text = _between(text, "# >>> inputs:", "# <<< inputs", action_inputs(), path)
    text = _between(text, "        # >>> env:", "        # <<< env", action_env(), path)
    return _between(text, "        # >>> with:", "        # <<< with", action_with(), path)


def _block(name: str, body: str) -> Callable[[str, Path], str]:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"

    def fill(text: str, path: Path) -> str:
        return _between(text, start, end, f"{start}\n{body}\n{end}", path)

    return fill


def docs(text: str, path: Path) -> str:
    text = _block("options:toolproof", evals_table(True))(text, path)
    text = _block("options:extensions", evals_table(False))(text, path)
    return _block("options:stress", evals_table(False, "stress"))(text, path)


FILES: dict[str, Callable[[str, Path], str]] = {
    "action.yml": action_yml,
    "docs/action.md": _block("options:inputs", inputs_table()),
    "docs/config.md": docs,
}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, update in FILES.items():
        path = ROOT / name
        old = path.read_text(encoding="utf-8")
        new = update(old, path)
        if new != old:
            stale.append(name)
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print(f"out of date: {', '.join(stale)} (run `python scripts/sync_options.py`)")
        return 1
    print("updated: " + ", ".join(stale) if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
