"""The package's import layers (issue 31): `lint-imports` keeps the contracts in pyproject.toml
([tool.importlinter]: cli > studies > applications > API > _core, and no library module imports the studies), and
no two modules import each other, directly or through others, function-local imports included.

import-linter is a development dependency (`make setup` installs it; `pip install "import-linter>=2.1"`): without
it the contract test fails, it does not skip. The cycle check needs nothing but the standard library."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fabricsim

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(fabricsim.__file__).resolve().parent
"""The fabricsim being tested (the checkout's python/fabricsim, or where it is installed)."""


def test_import_contracts_are_kept():
    if importlib.util.find_spec("importlinter") is None:
        pytest.fail("import-linter is not installed: it is a development dependency (`make setup` installs it; "
                    "or `pip install \"import-linter>=2.1\"`), needed to check the import contracts of pyproject.toml")
    # `lint-imports` (importlinter.cli) reads the checkout's pyproject.toml from its working folder and finds
    # `fabricsim` on the path: the tested copy first.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
           "--no-cache"]
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"lint-imports found broken import contracts:\n{out}"
    kept = re.search(r"(\d+) kept, 0 broken", out)
    assert kept and int(kept[1]) >= 2, out


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under `package` (a package is named by its __init__)."""
    out = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of `mods` it imports: every import statement (at the top, in a function, under
    `if TYPE_CHECKING:`), each name of `from X import a, b` counted as X.a when that is a module. Imports of
    a module's own ancestors (`from .. import _core`: the package's __init__, which Python runs first anyway)
    are not counted."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        base = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    target = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [target] + [f"{target}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                while name and name not in mods:
                    name = name.rpartition(".")[0]
                if name and name != mod and not mod.startswith(name + "."):
                    graph[mod].add(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_cycles():
    mods = modules(PACKAGE)
    assert "fabricsim.spec.scenario" in mods and "fabricsim.cli" in mods
    found = cycles(imports(mods))
    assert not found, "import cycles (function-local imports included):\n" + "\n".join(
        f"  {len(c)} modules: {', '.join(c)}" for c in found)


def test_the_cycle_check_sees_function_local_and_relative_imports(tmp_path):
    # pkg.a imports pkg.sub.b inside a function, pkg.sub.b imports pkg.c, pkg.c imports pkg.a: one cycle of 3.
    # pkg.sub.b's `from .. import x` (its ancestor pkg) is not an edge; pkg.d only imports.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n    return b\n")
    (pkg / "sub" / "b.py").write_text("from .. import x\nfrom ..c import g\n")
    (pkg / "c.py").write_text("import pkg.a\ng = 2\n")
    (pkg / "d.py").write_text("from . import a, c\n")
    graph = imports(modules(pkg))
    assert graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.a"] == {"pkg.sub", "pkg.sub.b"}
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def test_the_library_names_no_built_in_fabric():
    # The built-in fabrics are data (fabricsim/_data/fabrics/NAME.toml): no library module (the CLI, which names a
    # default, and the studies, which know their fabric, aside) names one in its code. Docstrings may.
    from fabricsim.collectives.fabrics import builtin_fabrics

    names = set(builtin_fabrics())
    assert "vela" in names
    found = []
    for mod, path in modules(PACKAGE).items():
        if mod.split(".")[1:2] in (["cli"], ["studies"], ["_data"]):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
                words = set(re.findall(r"[a-z_]+", n.value.lower()))
            elif isinstance(n, (ast.Name, ast.Attribute, ast.FunctionDef, ast.ClassDef, ast.arg)):
                ident = getattr(n, "id", None) or getattr(n, "attr", None) or getattr(n, "name", None) or n.arg
                words = {ident.lower(), *ident.lower().split("_")}
            else:
                continue
            found += [f"{mod}:{n.lineno}: {w}" for w in names & words]
    assert not found, "library code names a built-in fabric:\n" + "\n".join(found)
