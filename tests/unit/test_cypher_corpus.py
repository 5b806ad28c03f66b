"""Every .cypher file is used by the code, every name the code loads has a file, and every
template a plan may name filters by the caller's principals. The schema statements
(``cypher/schema/``) are covered too; their identifier templating is tested in
test_schema_statements.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kgrag.errors import QueryRefusedError
from kgrag.graph import cypher

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
NAMED_SCHEMA = re.compile(r"^schema/[a-z][a-z0-9_]*$")


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
    # schema statements are named in full ("schema/unique_constraint")
    unused += [n for n in cypher.names("schema") if n not in literals]
    assert unused == [], f"unused Cypher files: {unused}"


def test_the_schema_folder_is_seen_by_the_checks() -> None:
    assert "schema/unique_constraint" in cypher.names("schema")
    assert "server_version" in cypher.names()
    overlays = {p.stem for p in (ROOT / "cypher" / "falkordb" / "schema").glob("*.cypher")}
    assert {"vector_index", "fulltext_index", "property_index"} <= overlays


def test_every_statement_name_in_the_code_has_a_file() -> None:
    pattern = re.compile(
        r"""(?:\.(?:read|write|write_rows|schema_statement)|cypher\.(?:load|render))"""
        r"""\(\s*["']([a-z0-9_/]+)["']"""
    )
    seen = 0
    missing = []
    for path in (ROOT / "kgrag").rglob("*.py"):
        for name in pattern.findall(path.read_text(encoding="utf-8")):
            seen += 1
            if not cypher.exists(name):
                missing.append(f"{path.name}: {name}")
    # schema statements are also chosen through variables: every "schema/..." literal is a file
    missing += [s for s in _string_literals() if NAMED_SCHEMA.match(s) and not cypher.exists(s)]
    assert missing == []
    assert seen > 50  # the pattern still finds the calls


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
