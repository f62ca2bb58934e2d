"""The import graph follows the data flow: entry points (the CLI, the Action) are leaves that the
library never imports, and the pure stages touch nothing outside."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from tests.conftest import ROOT

SRC = ROOT / "src" / "toolselect"
ENTRY_POINTS = ("toolselect.cli", "toolselect.action", "toolselect.__main__")
PURE = ("toolselect.scoring", "toolselect.diff", "toolselect.stats", "toolselect.gate", "toolselect.lint")
OUTSIDE_WORLD = {"subprocess", "socket", "httpx", "httpx2", "requests", "github", "anthropic", "openai", "mcp", "os"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_statements(text: str, package: str) -> list[tuple[str, list[str]]]:
    """Each import of a file of `package` as (module, names taken from it), relative imports
    resolved, function-level imports included: `import a.b` is ("a.b", []), `from .c import d`
    ("package.c", ["d"])."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.append((base, [alias.name for alias in node.names]))
    return found


def imports(path: Path) -> set[str]:
    """Every module a file imports (and every name it takes from one, which may be a module too)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for base, names in import_statements(path.read_text(encoding="utf-8"), package):
        found |= {base, *(f"{base}.{n}" for n in names)}
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in SRC.rglob("*.py")}


def is_entry(module: str) -> bool:
    return any(module == e or module.startswith(e + ".") for e in ENTRY_POINTS)


def test_nothing_imports_the_entry_points():
    offenders = {
        module: sorted(i for i in found if is_entry(i))
        for module, found in graph().items()
        if not is_entry(module) and any(is_entry(i) for i in found)
    }
    assert offenders == {}


def test_the_action_does_not_reach_into_the_cli():
    found = graph()["toolselect.action"]
    assert not [i for i in found if i == "toolselect.cli" or i.startswith("toolselect.cli.")]


def test_pure_stages_touch_nothing_outside():
    g = graph()
    for module in PURE:
        outside = {i for i in g[module] if i.split(".")[0] in OUTSIDE_WORLD}
        assert outside == set(), module


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import graph's circles: its strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def importing(found: set[str], known: set[str], me: str) -> set[str]:
    """The modules an import runs: each one named, and the packages above it (their __init__)."""
    out = set()
    for name in found:
        parts = name.split(".")
        out |= {".".join(parts[:n]) for n in range(2, len(parts) + 1)}
    return {m for m in out & known if m != me and not me.startswith(m + ".")}


def test_no_import_circles():
    """Every import counts (TYPE_CHECKING and function-level ones too, and a package's __init__ for
    each of its modules): the flow goes one way, so no module's import comes back to it."""
    g = graph()
    edges = {m: importing(found, set(g), m) for m, found in g.items()}
    assert cycles(edges) == []


def test_a_circle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def room(module: str) -> str:
    """A module's room in the house: a top-level module is one, a subpackage (providers/, surface/,
    report/, …) is one with everything in it."""
    return ".".join(module.split(".")[:2])


def arrows_back_up(edges: dict[str, set[str]]) -> list[tuple[str, str, list[str]]]:
    """The imports that run back up: between two rooms that import each other, through any path
    (a subpackage imports a module that imports the subpackage): (room, room, the modules taking part)."""
    rooms: dict[str, set[str]] = {}
    by: dict[tuple[str, str], set[str]] = {}
    for module, found in edges.items():
        for target in found:
            a, b = room(module), room(target)
            if a != b:
                rooms.setdefault(a, set()).add(b)
                by.setdefault((a, b), set()).add(f"{module} -> {target}")
    for r in list(rooms.values()):
        for name in r:
            rooms.setdefault(name, set())
    circled = {name for component in cycles(rooms) for name in component}
    return sorted(
        (a, b, sorted(why))
        for (a, b), why in by.items()
        if a in circled and b in circled and any(b in c and a in c for c in cycles(rooms))
    )


def test_no_import_runs_back_up_between_rooms():
    """No two rooms (a top-level module, or a subpackage as a whole) import each other, however
    far round: the house has floors, and every arrow goes down. (A provider that read the settings,
    a surface module that read the config, a report that imported the gate: each ran back up.)"""
    g = graph()
    edges = {m: importing(found, set(g), m) for m, found in g.items()}
    assert arrows_back_up(edges) == []


def test_an_arrow_back_up_is_found():
    edges = {
        "toolselect.providers.api": {"toolselect.config"},
        "toolselect.config": {"toolselect.providers.registry"},
        "toolselect.providers.registry": set(),
        "toolselect.cli.main": {"toolselect.config"},
    }
    assert [(a, b) for a, b, _ in arrows_back_up(edges)] == [
        ("toolselect.config", "toolselect.providers"),
        ("toolselect.providers", "toolselect.config"),
    ]


def test_a_provider_is_built_from_a_model_call_alone():
    """Providers read a ModelCall (providers/call.py), never the run's settings or config."""
    upward = ("toolselect.config", "toolselect.settings", "toolselect.resolve", "toolselect.lineup")
    reads = {
        module: sorted(i for i in found if i.startswith(upward))
        for module, found in graph().items()
        if module.startswith("toolselect.providers")
    }
    assert {m: found for m, found in reads.items() if found} == {}


# --------------------------------------------------------------------------- the tests' own imports


def python_files_under_tests() -> list[Path]:
    """Every .py file under tests/ but tests/node's (the Node toolchain) and those of installed
    packages: any node_modules, .wheels or other hidden folder (caches, the host runner's venv)."""
    tests = ROOT / "tests"
    found = []
    for folder, subfolders, files in os.walk(tests):
        here = Path(folder)
        subfolders[:] = sorted(
            name
            for name in subfolders
            if name not in ("node_modules", ".wheels") and not name.startswith(".") and (here, name) != (tests, "node")
        )
        found += [here / name for name in sorted(files) if name.endswith(".py")]
    return found


def is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and any(part.startswith("test_") for part in parts[1:])


def imported_test_modules(text: str, package: str) -> set[str]:
    """The test modules (tests.….test_*) a file of `package` imports: at its top or in a function,
    with `import`, `from … import` or a relative import, `from tests.unit import test_x` too."""
    found: set[str] = set()
    for base, names in import_statements(text, package):
        taken = [base] if is_test_module(base) or not names else [f"{base}.{n}" for n in names]
        found |= {name for name in taken if is_test_module(name)}
    return found


def test_no_file_under_tests_imports_a_test_module():
    """What tests share lives in tests/builders.py (the unit tests' builders) and tests/e2e/harness.py
    (the end-to-end harness): a test module is no library, so one edit to it breaks no other file."""
    offenders = {}
    for path in python_files_under_tests():
        relative = path.relative_to(ROOT)
        found = imported_test_modules(path.read_text(encoding="utf-8"), ".".join(relative.parent.parts))
        if found:
            offenders[relative.as_posix()] = sorted(found)
    assert offenders == {}


def test_an_import_of_a_test_module_is_found():
    text = (
        "import tests.e2e.test_a\n"
        "from tests.e2e.test_b import x, y\n"
        "from tests.unit import test_c, gfm\n"
        "from .test_d import z\n"
        "from . import test_e\n"
        "from tests.builders import gate\n"
        "import tests.conftest\n"
        "def f():\n"
        "    from tests.e2e.test_f import run\n"
    )
    assert imported_test_modules(text, "tests.unit") == {
        "tests.e2e.test_a",
        "tests.e2e.test_b",
        "tests.unit.test_c",
        "tests.unit.test_d",
        "tests.unit.test_e",
        "tests.e2e.test_f",
    }


# --------------------------------------------------------------------------- module sizes

LONG_BY_DESIGN = {"toolselect/options.py"}  # the option table: CONTRIBUTING.md says why
MAX_LINES = 520  # "about 500": a module that grows past it splits by concept


def test_no_module_outgrows_one_sitting():
    src = ROOT / "src"
    sizes = {
        path.relative_to(src).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(src.rglob("*.py"))
    }
    assert set(sizes) >= LONG_BY_DESIGN
    assert {name: n for name, n in sizes.items() if n > MAX_LINES and name not in LONG_BY_DESIGN} == {}


def test_the_action_is_decided_then_carried_out_in_a_straight_line():
    """The Action decides its run in a pure stage (decided.py) and `evaluate_event` only carries it
    out: at most 40 lines, and it imports no option table or policy logic of its own."""
    import ast

    tree = ast.parse((ROOT / "src" / "toolselect" / "action.py").read_text(encoding="utf-8"))
    [carried] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "evaluate_event"]
    assert carried.end_lineno is not None and carried.end_lineno - carried.lineno + 1 <= 40
    called = {n.func.id for n in ast.walk(carried) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "decide_run" in called and not called & {"decide", "resolve_settings", "resolve_value"}
