"""Claims of SECURITY.md about the code itself, checked over the whole ``kgrag/`` package: no
``eval``/``exec``/``compile`` of anything, and admin contexts come only from the Python API and
``kgrag eval`` (so never from the HTTP API, ``kgrag/server/`` and ``kgrag/auth/``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KGRAG = ROOT / "kgrag"
#: Builtins that run text as code (or load it as a module).
CODE_RUNNERS = {"eval", "exec", "compile", "__import__", "execfile"}


def _trees(folder: Path) -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(folder.rglob("*.py"))]


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id in {"builtins", "__builtins__"} else None
    return None


def test_nothing_in_kgrag_runs_text_as_code() -> None:
    found = []
    for path, tree in _trees(KGRAG):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee(node) in CODE_RUNNERS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {_callee(node)}()")
            # getattr(builtins, "eval") would dodge the call check
            if (
                isinstance(node, ast.Call)
                and _callee(node) == "getattr"
                and any(isinstance(a, ast.Constant) and a.value in CODE_RUNNERS for a in node.args)
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: getattr(..., code runner)")
    assert found == [], found
    assert len(_trees(KGRAG)) > 50  # the walk does see the package


def test_admin_contexts_come_only_from_the_python_api_and_kgrag_eval() -> None:
    """Outside ``ask(..., admin=...)`` (kgrag/agent/_request.py passes the caller's flag on), the
    operator's ``kgrag eval`` (kgrag/eval/retrieval.py) and ``OPERATOR`` (used by the operator's
    CLI and the demo only), every ``admin=`` is ``False``."""
    allowed = [
        ("kgrag/agent/_request.py", "self.admin"),
        ("kgrag/core/access.py", "True"),  # OPERATOR: the operator's own tools, below
        ("kgrag/eval/answers.py", "True"),  # kgrag eval answers: asks as the operator
        ("kgrag/eval/retrieval.py", "True"),
    ]
    found = []
    for path, tree in _trees(KGRAG):
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "admin":
                if isinstance(node.value, ast.Constant) and node.value.value is False:
                    continue
                found.append((str(path.relative_to(ROOT)), ast.unparse(node.value)))
    assert sorted(found) == allowed
    # OPERATOR reads through no ACL: only the operator's CLI (kgrag trace / kgrag audit) and the
    # demo use it, never the server
    users = sorted(
        str(path.relative_to(ROOT))
        for path, tree in _trees(KGRAG)
        if any(isinstance(n, ast.Name) and n.id == "OPERATOR" for n in ast.walk(tree))
    )
    assert users == [
        "kgrag/cli/ask.py",
        "kgrag/core/access.py",
        "kgrag/demo/run.py",
        "kgrag/eval/answers.py",
    ]
