"""The import graph of ``kgrag/``: every module imports on its own in a fresh interpreter, and no
module-level import (``if TYPE_CHECKING:`` blocks included) closes a cycle.

A cycle hidden behind ``TYPE_CHECKING`` still ties two modules together; a cycle that imports
today only because of the order other modules happen to be loaded in breaks the first time
someone imports the other end first. Imports inside functions (deliberately lazy: optional
dependencies, heavy models) are not edges of this graph.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx

import kgrag

ROOT = Path(kgrag.__file__).parent


def _modules() -> dict[str, Path]:
    """Every module of the package, by dotted name (a package by its ``__init__``)."""
    out: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _top_level(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is loaded, and those under ``if TYPE_CHECKING:``: every
    statement at module level, into ``if``/``try``/``with`` blocks, never into a function or
    class."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If | ast.With):
            found += _top_level(node.body) + _top_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            found += _top_level(node.body) + _top_level(node.orelse) + _top_level(node.finalbody)
            for handler in node.handlers:
                found += _top_level(handler.body)
    return found


def _targets(name: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The kgrag modules one import statement names (``from a import b``: ``a.b`` when ``b`` is a
    module, else ``a``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    return [source] + [f"{source}.{a.name}" for a in node.names]


def import_graph() -> nx.DiGraph:
    """Module -> the kgrag modules it imports at module level. Importing ``a.b.c`` also runs
    the packages ``a.b`` and ``a``, except those the importer itself sits in (Python has run them
    already)."""
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        own = set()
        parts = name.split(".")
        for i in range(1, len(parts) + (1 if is_package else 0)):
            own.add(".".join(parts[:i]))
        for node in _top_level(ast.parse(path.read_text(), str(path)).body):
            for target in _targets(name, is_package, node):
                if target not in modules:
                    continue
                t_parts = target.split(".")
                for i in range(1, len(t_parts) + 1):
                    dep = ".".join(t_parts[:i])
                    if dep in modules and dep not in own and dep != name:
                        graph.add_edge(name, dep)
    return graph


def test_no_module_level_import_cycle() -> None:
    graph = import_graph()
    cycles = sorted(
        (sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1),
        key=lambda c: (-len(c), c),
    )
    shown = []
    for component in cycles:
        one = nx.find_cycle(graph.subgraph(component))
        path = " -> ".join([a for a, _ in one] + [one[0][0]])
        shown.append(f"{len(component)} modules import each other, e.g. {path}")
    assert not cycles, "\n".join(shown)


def test_the_core_imports_nothing_above_it() -> None:
    graph = import_graph()
    core = [m for m in graph if m == "kgrag.core" or m.startswith("kgrag.core.")]
    assert "kgrag.core.hits" in core
    above = {
        (m, dep)
        for m in core
        for dep in graph.successors(m)
        if dep not in core and dep != "kgrag.errors"
    }
    assert above == set()


_IMPORT_EACH = """
import importlib, json, sys, traceback, types
import kgrag  # the third-party libraries kgrag loads stay loaded: only kgrag's modules rerun
version, path = kgrag.__version__, list(kgrag.__path__)
failed = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "kgrag" or m.startswith("kgrag.")]:
        del sys.modules[loaded]
    if name != "kgrag":
        # the top package without its __init__ (which imports the agent and with it most of
        # kgrag): importing the module runs its own imports and nothing else
        bare = types.ModuleType("kgrag")
        bare.__path__, bare.__version__ = path, version
        sys.modules["kgrag"] = bare
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        # an optional extra this environment lacks (ray, mcp, opentelemetry...) is not a fault of
        # the module; a kgrag module that cannot be found is
        if (e.name or "").split(".")[0] == "kgrag":
            failed[name] = traceback.format_exc(limit=-3)
    except Exception as e:
        # kgrag's own word for the same (kgrag.errors.DependencyMissingError: the module names
        # the extra to install); the class is re-created with each reload, so matched by name
        if type(e).__name__ != "DependencyMissingError":
            failed[name] = traceback.format_exc(limit=-3)
print(json.dumps(failed))
"""


def test_every_module_imports_on_its_own() -> None:
    # one interpreter per share of the modules (one share per CPU, at most four, run side by
    # side); before each module, kgrag's modules are dropped from sys.modules, so the module is
    # the first of kgrag's to load and no import leans on another loaded before it
    names = sorted(_modules())
    shares = max(1, min(4, os.cpu_count() or 1))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _IMPORT_EACH, json.dumps(names[i::shares])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT.parent,
        )
        for i in range(shares)
    ]
    failed: dict[str, str] = {}
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr
        failed |= json.loads(stdout.strip().splitlines()[-1])
    assert not failed, "\n".join(f"{k}:\n{v}" for k, v in failed.items())
