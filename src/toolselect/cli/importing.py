"""`toolselect import FILE`: a published eval suite → a golden file, each case saying where it came from."""

from __future__ import annotations

import argparse

from ..errors import EXIT_PASSED, ConfigError
from ..importing import read_suite, render_suite, tools_named
from ..locate import display_path, read_text


def cmd_import(args: argparse.Namespace) -> int:
    source, out = args.file, args.output
    if out.exists() and not args.force:
        raise ConfigError(f"{out} already exists: pass --force to overwrite it", hint="or -o FILE to write elsewhere")
    shown = display_path(source)
    suite = read_suite(read_text(source, shown, "suite file"), shown)
    if not suite.cases:
        raise ConfigError(
            f"{shown}: nothing to import ({suite.shape}: {len(suite.skipped)} items, none usable)",
            hint="; ".join(suite.skipped[:3]),
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_suite(suite, shown) + "\n", encoding="utf-8")
    tools = tools_named(suite.cases)
    negatives = sum(c.expect_tool is None and not c.expect_calls for c in suite.cases)
    print(
        f"wrote {out}: {len(suite.cases)} cases from {shown} ({suite.shape}), expecting {len(tools)} tools"
        + (f", {negatives} no-tool" if negatives else "")
    )
    for line in suite.skipped[:10]:
        print(f"  not imported: {line}")
    if len(suite.skipped) > 10:
        print(f"  … and {len(suite.skipped) - 10} more not imported (listed at the top of {out})")
    print(f"next: add {out.name} to evals.golden, then `toolselect lint` (a tool the server lacks is named there)")
    return EXIT_PASSED
