"""SECURITY.md's claims about the Cypher corpus, computed from ``cypher/`` itself: every read
statement that may return documents' content filters by ACL with the documented expression, and
the table of read statements *without* ``$principals`` is exactly the set the corpus has."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "cypher"
WRITES = re.compile(r"\b(MERGE|CREATE|SET|DELETE|REMOVE)\b", re.IGNORECASE)
#: The filter SECURITY.md quotes, whatever the variable names.
ACL_FILTER = re.compile(
    r"(\w+)\.status = 'complete' AND "
    r"\(\$admin OR any\((\w+) IN \1\.acl WHERE \2 IN \$principals\)\)"
)


def _statements() -> dict[Path, str]:
    """Every statement file but the schema DDL, base and overlays, without comment lines."""
    out = {}
    for path in sorted(CORPUS.rglob("*.cypher")):
        if "schema" in path.relative_to(CORPUS).parts:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        out[path] = "\n".join(ln for ln in lines if not ln.lstrip().startswith("//"))
    return out


def _unfiltered_reads() -> set[str]:
    return {
        path.stem
        for path, text in _statements().items()
        if not WRITES.search(text) and "$principals" not in text
    }


def _documented_unfiltered_reads() -> set[str]:
    lines = (ROOT / "SECURITY.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| Statement |"))
    names: set[str] = set()
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        names |= set(re.findall(r"`([a-z0-9_]+)`", line.split("|")[1]))
    return names


def test_the_table_of_unfiltered_reads_is_exactly_the_corpus() -> None:
    computed = _unfiltered_reads()
    documented = _documented_unfiltered_reads()
    assert computed - documented == set(), "read without $principals missing from SECURITY.md"
    assert documented - computed == set(), "SECURITY.md lists a statement that is not one"
    assert len(computed) > 10  # the computation still sees the corpus


def test_every_statement_taking_principals_uses_the_documented_filter() -> None:
    statements = _statements()
    filtered = {p: t for p, t in statements.items() if "$principals" in t}
    wrong = [
        str(p.relative_to(ROOT))
        for p, t in filtered.items()
        if not ACL_FILTER.search(" ".join(t.split()))
    ]
    assert wrong == [], f"ACL filter not in the documented form: {wrong}"
    assert len(filtered) > 20
