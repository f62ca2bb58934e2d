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

from toolselect.literal import NotWritten, Rewrite, rewrite

OLD = "Weather forecast for a city."
NEW = 'Forecast for a city\'s next days: "rain", `snow` and ${temps} \\ all\nline two — ü'
NODE_MODULES = Path(__file__).resolve().parents[1] / "node" / "node_modules"


def applied(path: str, text: str, start: int, end: int, new: str = NEW) -> str:
    made = rewrite(path, text, start, end, OLD, new)
    assert isinstance(made, Rewrite), made
    return applied_text(text, made)


def applied_text(text: str, made: Rewrite) -> str:
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
    for path, text in (("server.py", source), ("server.py", "x = (\n"), ("README.md", OLD + "\n")):
        # not there; not Python (no guess); not a source this knows
        assert rewrite(path, text, 1, 1, OLD, NEW) == NotWritten(f"the description's literal was not found in {path}")


# ------------------------------------------------------------------------------ every literal kind, fuzzed

FUZZ_SEED = 42
TRICKY = ['"', "'", "\\", "`", "$", "{", "}", "${", '"""', "'''", "\n", "\t", "#", ":", " ", "ü", "—", "\u2028", "x"]
PY_KINDS = {
    "double": 'tool = Tool(\n    name="f",\n    description="Weather forecast for a city.",\n)\n',
    "single": "tool = Tool(\n    name='f',\n    description='Weather forecast for a city.',\n)\n",
    "triple double": 'tool = Tool(\n    name="f",\n    description="""Weather forecast\n    for a city.""",\n)\n',
    "triple single": "tool = Tool(\n    name='f',\n    description='''Weather forecast for a city.''',\n)\n",
    "raw": 'tool = Tool(\n    name="f",\n    description=r"Weather forecast for a city.",\n)\n',
    "f-string": 'tool = Tool(\n    name="f",\n    description=f"Weather forecast for a city.",\n)\n',
    "concatenated": "tool = Tool(\n    name='f',\n    description=('Weather forecast '\n        \"for a city.\"),\n)\n",
}
SCRIPT_KINDS = {
    "double": '  { name: "f", description: "Weather forecast for a city." },\n',
    "single": "  { name: 'f', description: 'Weather forecast for a city.' },\n",
    "template": "  { name: `f`, description: `Weather forecast\n    for a city.` },\n",
    "concatenated": "  { name: 'f', description: 'Weather forecast ' +\n    \"for a city.\" },\n",
}
YAML_KINDS = {
    "plain": "  description: Weather forecast for a city.\n",
    "single": "  description: 'Weather forecast for a city.'\n",
    "double": '  description: "Weather forecast for a city."\n',
    "block": "  description: |\n    Weather forecast\n    for a city.\n",
    "folded": "  description: >-\n    Weather forecast\n    for a city.\n",
}


def fuzzed(n: int) -> list[str]:
    """Texts a rewriter could write, made of the pieces that break literals: quotes at either end,
    backslashes (last, too), `${`, backticks, newlines, runs of quotes; seeded, so a failure repeats."""
    import random

    rng = random.Random(FUZZ_SEED)
    texts = [f"Forecast for {q}later{q}" for q in ('"', "'", "`")]  # a quote last: the reported break
    texts += [f"{q}soon{q} {e}" for q in ('"', "'", "`") for e in ("\\", '""', "''", "${x}", "\n")]
    texts += ["a\\", "\\", '"', "'", '""""', "''''", "${a}`b`", "line\nline\n", "x\\\n"]
    while len(texts) < n:
        texts.append("".join(rng.choice(TRICKY) if rng.random() < 0.5 else rng.choice("Forecast ") for _ in
                             range(rng.randint(1, 24))))  # fmt: skip
    return texts


def written(path: str, source: str, text: str) -> str:
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if "escription" in line)
    end = max(i for i, line in enumerate(lines, 1) if "city" in line)
    made = rewrite(path, source, start, end, OLD, text)
    assert isinstance(made, Rewrite), (path, text, made)
    return applied_text(source, made)


@pytest.mark.parametrize("kind", sorted(PY_KINDS))
def test_every_python_literal_kind_reads_back_exactly_whatever_the_text(kind):
    for text in fuzzed(200):
        out = written("server.py", PY_KINDS[kind], text)
        assert python_description(out) == text, (kind, text, out)
        assert "name=" in out and out.rstrip().endswith(")")


@pytest.mark.parametrize("kind", sorted(YAML_KINDS))
def test_every_yaml_scalar_kind_reads_back_exactly_whatever_the_text(kind):
    for text in fuzzed(200):
        source = "tools:\n- name: f\n" + YAML_KINDS[kind] + "  inputSchema: {}\n"
        out = written("tools.yaml", source, text)
        assert yaml.safe_load(out) == {"tools": [{"name": "f", "description": text, "inputSchema": {}}]}, (kind, text)


def test_a_json_string_reads_back_exactly_whatever_the_text():
    source = json.dumps({"tools": [{"name": "f", "description": OLD, "inputSchema": {}}]}, indent=2) + "\n"
    for text in fuzzed(200):
        assert json.loads(written("tools.json", source, text))["tools"][0]["description"] == text, text


@pytest.mark.skipif(not shutil.which("node"), reason="no node")
def test_every_javascript_literal_kind_reads_back_exactly_in_node(tmp_path):
    """Every kind and text written into one module that node loads: each description, as node reads
    it, is the text."""
    texts = fuzzed(200)
    entries, expected = [], []
    for _kind, body in sorted(SCRIPT_KINDS.items()):
        for text in texts:
            source = "export const TOOLS = [\n" + body + "];\n"
            out = written("src/tools.mjs", source, text)
            entries.append(out.split("[\n", 1)[1].rsplit("];", 1)[0])
            expected.append(text)
    (tmp_path / "all.mjs").write_text("export const TOOLS = [\n" + "".join(entries) + "];\n")
    read = "import(process.argv[1]).then(m => console.log(JSON.stringify(m.TOOLS.map(t => t.description))))"
    done = subprocess.run(["node", "-e", read, str(tmp_path / "all.mjs")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == expected


def test_a_rewrite_that_would_not_read_back_is_not_offered(monkeypatch):
    """The safety net under the writer: the reported break (a triple-quoted description ending in a
    quote, written as it was before) is caught by reading the file again, and not offered; so is a
    file that could not be written as UTF-8 (a lone surrogate put in raw). The writer itself escapes
    both."""
    from toolselect import literal

    source = PY_KINDS["triple double"]
    monkeypatch.setattr(literal, "_literal", lambda text, opening, suffix: '"""' + text + '"""')
    refused = rewrite("server.py", source, 3, 4, OLD, 'Forecast, not for "later"')
    assert isinstance(refused, NotWritten)
    assert refused.why.startswith("the rewritten server.py would not read back as the new description (")
    unwritable = rewrite("server.py", source, 3, 4, OLD, "lone \ud800 surrogate")
    assert isinstance(unwritable, NotWritten) and "UTF-8" in unwritable.why
    monkeypatch.undo()
    for text in ('Forecast, not for "later"', "lone \ud800 surrogate"):
        made = rewrite("server.py", source, 3, 4, OLD, text)
        assert isinstance(made, Rewrite) and python_description(applied_text(source, made)) == text
