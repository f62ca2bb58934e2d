"""Render the bundled example's HTML report for real, and take docs/html-report.png of it.

examples/weather is evaluated offline with the bm25 provider four times: as it is (the base, its
tools listed by its own MCP server) and with get_forecast's description reworded (the head, the
tools frozen in a file), each at bm25's default threshold and at a stricter one — two "models".
The reports are judged as `toolselect diff` would (max-drop 2), put together into one outcome,
rendered with `render_html`, opened in Debian's Chromium through playwright (1280 px wide), one
confusion cell clicked, and the page saved as a PNG.

    python scripts/html_screenshot.py                      # write docs/html-report.png
    python scripts/html_screenshot.py --html report.html   # and keep the HTML page
    python scripts/html_screenshot.py --models 1           # one model only

The tests build their real reports with `example_reports` and `outcome_of` from here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from toolselect.outcome import ModelOutcome, Outcome, compare_saved, joint_verdict
from toolselect.report.files import read_report
from toolselect.report.schema import Report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "weather"
CHROMIUM = "/usr/bin/chromium"
NEW_TEXT = "Daily outlook for a city."  # get_forecast's description in the head (scripts/example_comment.py's)
MODELS = {"bm25": None, "bm25-strict": 2.0}  # label → bm25's threshold (None: its default)
GATE = {"max_drop": 2}


def example_copy(folder: Path, threshold: float | None) -> Path:
    """examples/weather copied to `folder`, with bm25's threshold set (None: its default)."""
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(".toolselect-cache", "__pycache__"))
    if threshold is not None:
        config = folder / "toolselect.yaml"
        text = config.read_text(encoding="utf-8")
        config.write_text(
            text.replace("  provider: bm25\n", f"  provider: bm25\n  params: {{threshold: {threshold}}}\n")
        )
    return folder


def start_eval(folder: Path, tools: Path | None) -> tuple[subprocess.Popen[str], Path]:
    """`toolselect eval` of the example in `folder` (its MCP server, or a frozen `tools` file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLSELECT_", "TOOLPROOF_", "INPUT_"))}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # `python` is this one
    out = folder / "report.json"
    argv = [sys.executable, "-m", "toolselect", "eval", "--provider", "bm25", "--json", str(out), "-q"]
    argv += ["--tools", str(tools)] if tools else []
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def finish_eval(run: tuple[subprocess.Popen[str], Path]) -> Report:
    proc, out = run
    _, err = proc.communicate(timeout=120)
    if not out.exists():
        raise RuntimeError(f"toolselect eval failed in {out.parent} ({proc.returncode}): {err}")
    return read_report(out)


def example_reports(workdir: Path, labels: tuple[str, ...] = tuple(MODELS)) -> dict[tuple[str, str], Report]:
    """(label, "base" | "head") → the report of a real offline run of the example. The first base run
    lists the tools from the example's MCP server; the others read them frozen from that report (the
    head's with get_forecast's description reworded), all at once."""
    first = finish_eval(start_eval(example_copy(workdir / f"{labels[0]}-base", MODELS[labels[0]]), None))
    definitions = first.surface.definitions
    reworded = [{**d, "description": NEW_TEXT} if d.get("name") == "get_forecast" else d for d in definitions]
    if reworded == definitions:
        raise SystemExit("examples/weather has no get_forecast: update scripts/html_screenshot.py")
    surfaces = {"base": workdir / "base-tools.json", "head": workdir / "head-tools.json"}
    surfaces["base"].write_text(json.dumps({"tools": definitions}), encoding="utf-8")
    surfaces["head"].write_text(json.dumps({"tools": reworded}), encoding="utf-8")
    runs = {
        (label, side): start_eval(example_copy(workdir / f"{label}-{side}", MODELS[label]), surfaces[side])
        for label in labels
        for side in ("base", "head")
        if (label, side) != (labels[0], "base")
    }
    return {(labels[0], "base"): first} | {key: finish_eval(run) for key, run in runs.items()}


def outcome_of(reports: dict[tuple[str, str], Report], labels: tuple[str, ...]) -> Outcome:
    """The models' base and head reports judged as `toolselect diff` would, as one outcome."""
    models: list[ModelOutcome] = []
    for label in labels:
        one = compare_saved(reports[(label, "base")], reports[(label, "head")], GATE, base_label="main")
        models.append(replace(one.models[0], label=label))
    return Outcome(models=tuple(models), verdict=joint_verdict(models), base_label="main")


def example_outcome(workdir: Path, models: int = 2) -> Outcome:
    labels = tuple(MODELS)[:models]
    return outcome_of(example_reports(workdir, labels), labels)


def screenshot(page_path: Path, png: Path, width: int = 1280) -> None:
    """The page in Chromium, the first model's biggest confusion clicked, saved as `png` from the top
    down to that cell's cases."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme="light")
            page.goto(page_path.resolve().as_uri())
            model = page.locator("section.model:visible").first
            biggest = model.locator("aside.hot a[data-cell]").first.get_attribute("data-cell")
            model.locator(f'.heatmap a[data-cell="{biggest}"]').click()
            page.evaluate("window.scrollTo(0, 0)")
            bottom = model.locator(".block.cases").evaluate("el => el.getBoundingClientRect().bottom + window.scrollY")
            page.screenshot(path=str(png), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": bottom + 16})
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, help="also keep the HTML page here")
    parser.add_argument("--png", type=Path, default=ROOT / "docs" / "html-report.png")
    parser.add_argument("--models", type=int, default=2, choices=(1, 2))
    args = parser.parse_args()
    from toolselect.render.html import render_html

    with tempfile.TemporaryDirectory() as tmp:
        outcome = example_outcome(Path(tmp), args.models)
        page = args.html or Path(tmp) / "report.html"
        page.write_text(render_html(outcome), encoding="utf-8")
        screenshot(page, args.png)
    print(f"wrote {args.png}" + (f" and {args.html}" if args.html else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
