"""Every .cypher file is used by the code, every name the code loads has a file, and every
template a plan may name filters by the caller's principals."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kgrag.errors import QueryRefusedError
from kgrag.graph import cypher

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _string_literals() -> set[str]:
    out: set[str] = set()
    for path in (ROOT / "kgrag").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


def test_every_cypher_file_is_used_by_the_code() -> None:
    literals = _string_literals()
    unused = [n for n in cypher.names() if n not in literals]
    unused += [n for n in cypher.names("templates") if n.split("/", 1)[1] not in literals]
    assert unused == [], f"unused Cypher files: {unused}"


def test_every_statement_name_in_the_code_has_a_file() -> None:
    pattern = re.compile(r"""\.(?:read|write|write_rows)\(\s*["']([a-z0-9_/]+)["']""")
    missing = []
    for path in (ROOT / "kgrag").rglob("*.py"):
        for name in pattern.findall(path.read_text(encoding="utf-8")):
            if not cypher.exists(name):
                missing.append(f"{path.name}: {name}")
    assert missing == []


def test_every_overlay_overrides_an_existing_base_statement() -> None:
    for overlay in (ROOT / "cypher" / "falkordb").rglob("*.cypher"):
        rel = overlay.relative_to(ROOT / "cypher" / "falkordb").with_suffix("")
        assert (ROOT / "cypher" / f"{rel}.cypher").is_file(), f"overlay without base: {rel}"


def test_templates_filter_by_principals() -> None:
    for name in cypher.names("templates"):
        for text in (cypher.load(name), cypher.load(name, ("falkordb",))):
            assert "$principals" in text and "$admin" in text, name


@pytest.mark.parametrize("bad", ["../secrets", "templates/../x", "a;b", "Upper", ""])
def test_bad_names_are_refused(bad: str) -> None:
    with pytest.raises(QueryRefusedError):
        cypher.load(bad)
