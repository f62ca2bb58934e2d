"""A new description written into its source file in the file's own syntax (literal.py): applied
and parsed again — Python with ast, TypeScript with the TypeScript compiler, JSON and YAML with
their parsers — the file is valid and holds exactly the new text."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from toolselect.literal import rewrite

OLD = "Weather forecast for a city."
NEW = 'Forecast for a city\'s next days: "rain", `snow` and ${temps} \\ all\nline two — ü'
NODE_MODULES = Path(__file__).resolve().parents[1] / "node" / "node_modules"


def applied(path: str, text: str, start: int, end: int, new: str = NEW) -> str:
    made = rewrite(path, text, start, end, OLD, new)
    assert made is not None
    lines = text.splitlines()
    lines[made.start - 1 : made.end] = made.lines
    return "\n".join(lines) + "\n"


def python_description(text: str) -> str:
    tree = ast.parse(text)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg == "description")
    return ast.literal_eval(call.value)


@pytest.mark.parametrize(
    "source, start, end",
    [
        ('tool = Tool(\n    name="f",\n    description="Weather forecast for a city.",\n)\n', 3, 3),
        ("tool = Tool(\n    name='f',\n    description=('Weather forecast '\n        'for a city.'),\n)\n", 3, 4),
        ('tool = Tool(\n    name="f",\n    description="""Weather forecast\n    for a city.""",\n)\n', 3, 4),
        ('tool = Tool(name="f", description=r"Weather forecast for a city.")  # a comment "x"\n', 1, 1),
    ],
)
def test_a_python_string_is_rewritten_in_place_and_the_file_still_parses(source, start, end):
    out = applied("server.py", source, start, end)
    assert python_description(out) == NEW
    assert out.count("name=") == 1 and ("# a comment" in out) == ("# a comment" in source)


def test_a_json_string_is_rewritten_and_the_file_still_loads():
    source = json.dumps({"tools": [{"name": "f", "description": OLD, "inputSchema": {}}]}, indent=2) + "\n"
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "Weather" in text)
    assert json.loads(applied("tools.json", source, line, line))["tools"][0]["description"] == NEW


@pytest.mark.parametrize(
    "body",
    ["  description: Weather forecast for a city.\n", "  description: |\n    Weather forecast\n    for a city.\n",
     "  description: 'Weather forecast for a city.'\n"],
)  # fmt: skip
def test_a_yaml_scalar_becomes_one_quoted_scalar_and_the_file_still_loads(body):
    source = "tools:\n- name: f\n" + body + "  inputSchema: {}\n"
    lines = source.splitlines()
    last = max(i for i, text in enumerate(lines, 1) if "city" in text)
    out = applied("tools.yaml", source, last, last)
    assert yaml.safe_load(out) == {"tools": [{"name": "f", "description": NEW, "inputSchema": {}}]}


@pytest.mark.skipif(not (NODE_MODULES / ".bin" / "tsc").exists() or not shutil.which("node"), reason="no TypeScript")
@pytest.mark.parametrize(
    "literal",
    ["`Weather forecast\n  for a city.`", '"Weather forecast for a city."', "'Weather forecast ' + 'for a city.'"],
)
def test_a_typescript_literal_is_rewritten_and_the_compiler_reads_the_new_text(tmp_path, literal):
    source = (
        '// a quote in a comment: "\n'
        "export const TOOLS: { name: string; description: string }[] = [\n"
        f"  {{ name: `f`, description: {literal} }},\n];\n"
    )
    lines = source.splitlines()
    start = next(i for i, text in enumerate(lines, 1) if "description" in text)
    end = max(i for i, text in enumerate(lines, 1) if "city" in text)
    out = applied("src/tools.ts", source, start, end)
    (tmp_path / "tools.ts").write_text(out)
    tsc = NODE_MODULES / ".bin" / "tsc"
    compiled = subprocess.run(
        [str(tsc), "--target", "es2022", "--module", "commonjs", "--outDir", str(tmp_path / "out"),
         str(tmp_path / "tools.ts")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    read = "console.log(JSON.stringify(require(process.argv[1]).TOOLS[0].description))"
    done = subprocess.run(["node", "-e", read, str(tmp_path / "out" / "tools.js")], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == NEW


def test_no_rewrite_when_the_lines_do_not_hold_the_text():
    source = 'tool = Tool(name="f", description="Something else entirely.")\n'
    assert rewrite("server.py", source, 1, 1, OLD, NEW) is None
    assert rewrite("server.py", "x = (\n", 1, 1, OLD, NEW) is None  # not Python: no guess
    assert rewrite("README.md", OLD + "\n", 1, 1, OLD, NEW) is None  # not a source this knows
