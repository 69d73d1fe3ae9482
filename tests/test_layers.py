"""The package's layers: every import points down the order below, and no two modules import each other.

    model < engine < runtime < analysis < api < cli

Every import counts, a function-local or TYPE_CHECKING one included, so a cycle cannot hide in a function.
`macondo_server/__init__.py` (the version) may be imported from anywhere; the generated `pb` stubs and the
client package (`macondo_client`) only from `api` and `cli`. The Cython core never imports the Python side,
and the client never imports the engine.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import macondo_client
import pytest

import engine_cy
import macondo_server

# the packages where they are imported from: the checkout, or an installed copy (the suite also runs there)
ROOT = Path(macondo_server.__file__).resolve().parent.parent
CORE = Path(engine_cy.__file__).resolve().parent
CLIENT = Path(macondo_client.__file__).resolve().parent
LAYERS = ("model", "engine", "runtime", "analysis", "api", "cli")
WIRE_USERS = {"api", "cli"}          # the layers that may import the pb stubs and the client package


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _parse(path: Path) -> ast.Module:
    source = path.read_text(encoding="utf-8")
    for _ in range(2):
        try:
            return ast.parse(source, str(path))
        except SystemError:
            # CPython 3.11 counts the AST builder's recursion per interpreter, not per thread: a parse while
            # another thread builds an AST can fail with "AST constructor recursion depth mismatch"
            # (python/cpython#106905; seen here as an earlier test's Dask client wound down). It parses again.
            pass
    return ast.parse(source, str(path))


def _imports(path: Path, module: str) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file, resolved to absolute names."""
    tree = _parse(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((target, node.lineno))
            # `from package import module` names a module too
            out.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)
    return out


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "macondo_server" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else parts[1]


def check_tree(root: Path) -> list[str]:
    """Every breach of the layer rule under `root` (a folder holding macondo_server/), one line each naming
    the file, the line and the import."""
    pkg = root / "macondo_server"
    files = {p: _module_name(p, root) for p in sorted(pkg.rglob("*.py")) if "pb" not in p.relative_to(pkg).parts
             and "data" not in p.relative_to(pkg).parts}
    modules = set(files.values())
    problems: list[str] = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path, module in files.items():
        here = _layer(module)
        for target, line in _imports(path, module):
            where = f"{path.relative_to(root)}:{line}"
            top = target.split(".")[0]
            if top == "macondo_client" or target.startswith("macondo_server.pb"):
                if here not in WIRE_USERS and module != "macondo_server.__main__":
                    problems.append(f"{where}: {module} ({here}) imports {target}: the wire (pb stubs, client) "
                                    f"is for {' and '.join(sorted(WIRE_USERS))} only")
                continue
            if top != "macondo_server" or target not in modules or target == module:
                continue
            graph[module].add(target)
            there = _layer(target)
            if target == "macondo_server" or module == "macondo_server.__main__":
                continue
            if here not in LAYERS or there not in LAYERS:
                problems.append(f"{where}: {module} or {target} is in no layer ({', '.join(LAYERS)})")
            elif LAYERS.index(there) > LAYERS.index(here):
                problems.append(f"{where}: {module} ({here}) imports {target} ({there}): an upward import "
                                f"(the order is {' < '.join(LAYERS)})")
    problems.extend(_cycles(graph))
    return problems


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """One line per import cycle (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[str] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append("import cycle: " + " -> ".join(sorted(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_layers_point_down_and_no_cycles():
    problems = check_tree(ROOT)
    assert not problems, "\n".join(problems)
    assert len(list((ROOT / "macondo_server").rglob("*.py"))) > 40, f"the package's sources are not under {ROOT}"


def test_every_module_is_in_a_layer():
    pkg = ROOT / "macondo_server"
    top = {p.name for p in pkg.iterdir() if p.is_dir() and (p / "__init__.py").is_file()} - {"pb"}
    assert top == set(LAYERS), f"packages outside the layers: {sorted(top - set(LAYERS))}"
    loose = {p.name for p in pkg.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert not loose, f"modules outside the layers: {sorted(loose)}"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "macondo_server" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for layer in LAYERS:
        (tmp_path / "macondo_server" / layer).mkdir(parents=True, exist_ok=True)
        (tmp_path / "macondo_server" / layer / "__init__.py").touch()
    (tmp_path / "macondo_server" / "__init__.py").touch()
    return tmp_path


def test_the_check_fails_on_an_upward_import(tmp_path):
    root = _tree(tmp_path, {"model/a.py": "def f():\n    from macondo_server.api.b import g\n", "api/b.py": "g = 1\n"})
    problems = check_tree(root)
    assert len(problems) == 1 and "macondo_server/model/a.py:2" in problems[0] and "upward import" in problems[0]


def test_the_check_fails_on_a_cycle_within_a_layer(tmp_path):
    root = _tree(tmp_path, {"analysis/a.py": "from macondo_server.analysis import b\n",
                            "analysis/b.py": "def f():\n    from . import a\n"})
    problems = check_tree(root)
    assert problems == ["import cycle: macondo_server.analysis.a -> macondo_server.analysis.b"]


def test_the_check_fails_on_the_wire_below_the_api(tmp_path):
    root = _tree(tmp_path, {"engine/a.py": "import macondo_client\n"})
    problems = check_tree(root)
    assert len(problems) == 1 and "the wire" in problems[0]


def test_the_check_passes_a_clean_tree(tmp_path):
    root = _tree(tmp_path, {"model/a.py": "X = 1\n", "engine/b.py": "from macondo_server.model.a import X\n",
                            "cli/c.py": "from macondo_server.engine import b\nimport macondo_client\n"})
    assert check_tree(root) == []


_CIMPORT = re.compile(r"^\s*(?:from\s+(\S+)\s+c?import|c?import\s+(\S+))", re.M)


@pytest.mark.parametrize("folder, forbidden", [(CORE, ("macondo_server", "macondo_client", "grpc")),
                                               (CLIENT, ("macondo_server", "engine_cy"))])
def test_the_core_and_the_client_stand_alone(folder, forbidden):
    """The Cython core never imports the Python side or the wire; the client never imports the engine."""
    bad = []
    sources = [p for p in sorted(folder.rglob("*"))
               if p.suffix in (".py", ".pyx", ".pxd", ".pyi") and "pb" not in p.relative_to(folder).parts]
    assert sources, f"no sources under {folder}"
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for m in _CIMPORT.finditer(text):
            name = m.group(1) or m.group(2)
            if name.split(".")[0] in forbidden:
                bad.append(f"{path}:{text.count(chr(10), 0, m.start()) + 1}: imports {name}")
    assert not bad, "\n".join(bad)
