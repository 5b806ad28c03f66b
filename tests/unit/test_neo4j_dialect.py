"""Neo4j vector query form by server version: ``parse_version`` / ``overlays_for`` pick the
``cypher/neo4j_search/`` overlays (``CYPHER 25`` + ``MATCH ... SEARCH``) from Neo4j 2026.01 on, and
each overlay is a drop-in twin of its base statement: same name, same parameters, same returned
columns, same ACL filters. The overlay folder is also linted by Neo4j's own language service
(skipped without node); a live comparison against a 2026.01+ server runs only with
KGRAG_TEST_NEO4J_URI."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kgrag.graph import cypher
from kgrag.graph.neo4j_store import (
    SEARCH_CLAUSE_SINCE,
    SEARCH_OVERLAY,
    Neo4jStore,
    overlays_for,
    parse_version,
)

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "cypher"
OVERLAY = BASE / SEARCH_OVERLAY
LINT = ROOT / "tools" / "cypher-lint" / "lint.mjs"
NODE = shutil.which("node")
LINT_READY = (
    NODE is not None
    and (ROOT / "tools" / "cypher-lint" / "node_modules" / "@neo4j-cypher").is_dir()
)
ACL = "($admin OR any(p IN d.acl WHERE p IN $principals))"
COMPLETE = "d.status = 'complete'"


def _overlay_names() -> list[str]:
    return sorted(p.stem for p in OVERLAY.glob("*.cypher"))


def _base_vector_names() -> list[str]:
    return sorted(
        p.stem for p in BASE.glob("*.cypher") if "db.index.vector.queryNodes" in p.read_text()
    )


def _params(text: str) -> set[str]:
    return set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text))


def _columns(text: str) -> list[str]:
    """The column names of the final RETURN (``expr AS name`` or a bare variable)."""
    tail = re.split(r"\bRETURN\b", text)[-1]
    tail = re.split(r"\bORDER\s+BY\b|\bLIMIT\b|\bSKIP\b", tail)[0]
    cols = []
    for item in tail.split(","):
        alias = re.search(r"\bAS\s+([A-Za-z_][A-Za-z0-9_]*)\s*$", item.strip())
        cols.append(alias.group(1) if alias else item.strip())
    return cols


# -- parse_version / overlays_for -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5.26.1", (5, 26)),
        ("5.26.0-enterprise", (5, 26)),
        ("5", (5, 0)),
        ("2025.10.1", (2025, 10)),
        ("2025.12.0", (2025, 12)),
        ("2026.01.0", (2026, 1)),
        ("2026.01", (2026, 1)),
        ("2026.04.0", (2026, 4)),
        ("2026.04.1-aura", (2026, 4)),
        ("", (0, 0)),
        ("unknown", (0, 0)),
    ],
)
def test_parse_version(text: str, expected: tuple[int, int]) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize(
    ("version", "overlays"),
    [
        ("5.26.1", ()),
        ("5.11.0", ()),
        ("2025.06.0", ()),
        ("2025.12.1", ()),
        ("2026.01.0", (SEARCH_OVERLAY,)),
        ("2026.02.1", (SEARCH_OVERLAY,)),
        ("2026.04.0", (SEARCH_OVERLAY,)),
        ("2027.01.0", (SEARCH_OVERLAY,)),
    ],
)
def test_overlays_for_server_version(version: str, overlays: tuple[str, ...]) -> None:
    assert overlays_for(parse_version(version)) == overlays
    # what a store opened against that server actually runs (no driver call is made here)
    store = Neo4jStore("bolt://test", object(), None, version)
    text = store.statement("vector_chunks")
    if parse_version(version) >= SEARCH_CLAUSE_SINCE:
        assert text.startswith("CYPHER 25") and "SEARCH node IN" in text
        assert "queryNodes" not in text
    else:
        assert "db.index.vector.queryNodes" in text and "SEARCH" not in text


# -- the overlay folder ---------------------------------------------------------------------------


def test_overlay_folder_covers_every_query_nodes_statement() -> None:
    assert _base_vector_names(), "no base statement calls db.index.vector.queryNodes?"
    assert _overlay_names() == _base_vector_names()
    # templates/ must not need an overlay either
    assert not [
        p for p in (BASE / "templates").glob("*.cypher") if "vector.queryNodes" in p.read_text()
    ]


def test_every_overlay_has_a_base_statement_of_the_same_name() -> None:
    for path in OVERLAY.rglob("*.cypher"):
        rel = path.relative_to(OVERLAY).with_suffix("")
        assert (BASE / f"{rel}.cypher").is_file(), f"overlay without base: {rel}"
        assert cypher.exists(str(rel))


@pytest.mark.parametrize("name", _overlay_names())
def test_overlay_is_a_drop_in_twin_of_its_base(name: str) -> None:
    base = cypher.load(name)
    over = cypher.load(name, (SEARCH_OVERLAY,))
    assert over != base
    assert over.startswith("CYPHER 25\n"), "SEARCH is Cypher 25 only; older databases default to 5"
    assert "queryNodes" not in over and re.search(r"\bSEARCH node IN \(\s*VECTOR INDEX", over)
    index = re.search(r"queryNodes\('([a-z_]+)'", base)
    assert index and f"VECTOR INDEX {index.group(1)} FOR" in over
    assert "SCORE AS score" in over
    assert _params(over) == _params(base)
    assert _columns(over) == _columns(base)
    for flt in (ACL, COMPLETE):
        assert (flt in over) == (flt in base), f"{name}: filter {flt!r} differs"
    assert ("ORDER BY score DESC" in over) == ("ORDER BY score DESC" in base)


def test_columns_parser_reads_the_base_statements() -> None:
    assert _columns(cypher.load("entity_clip_nearest")) == ["id", "name", "score"]
    assert _columns(cypher.load("images_near_clip")) == ["entity_id", "image_id", "score"]


# -- Neo4j's own linter ------------------------------------------------------------------------


def _lint(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run(
        [NODE, str(LINT), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.skipif(not LINT_READY, reason="needs node and tools/cypher-lint/node_modules")
def test_overlays_pass_neo4j_linter_as_cypher_25(tmp_path: Path) -> None:
    ok = _lint("--cypher", "25", "--strict", OVERLAY)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"cypher-lint: {len(_overlay_names())} files, 0 errors, 0 warnings" in ok.stdout

    # the same linter knows SEARCH only in Cypher 25, requires the prefix, flags queryNodes
    bad = tmp_path / "bad"
    bad.mkdir()
    body = (OVERLAY / "vector_chunks.cypher").read_text()
    (bad / "no_prefix.cypher").write_text(body.replace("CYPHER 25\n", ""))
    (bad / "typo.cypher").write_text(body.replace("LIMIT $k", "LIMT $k"))
    (bad / "old.cypher").write_text("CYPHER 25\n" + (BASE / "vector_chunks.cypher").read_text())
    out = _lint("--cypher", "25", bad)
    assert out.returncode == 1
    assert re.search(r"no_prefix\.cypher:1:1: error: .*must start with `CYPHER 25`", out.stdout)
    assert re.search(r"typo\.cypher:\d+:\d+: error: Invalid input 'LIMT'", out.stdout)
    assert re.search(r"old\.cypher:\d+:\d+: warning: .*queryNodes is deprecated", out.stdout)
    as5 = _lint(OVERLAY / "vector_chunks.cypher")
    assert as5.returncode == 1 and "selects CYPHER 25" in as5.stdout


# -- a live server (2026.01+), when one is configured ------------------------------------------


@pytest.mark.neo4j
def test_search_overlay_returns_what_query_nodes_returns(tmp_path: Path) -> None:
    """On the Neo4j 2026 server of the suite (KGRAG_TEST_NEO4J_2026_URI; scripts/test.sh starts
    it): the SEARCH forms and the queryNodes forms of the same server agree."""
    from kgrag.graph.spaces import EmbeddingSpace, ensure_space
    from tests.support.engines import NEO4J_2026, engine_for

    store = engine_for(NEO4J_2026, tmp_path).fresh()
    assert isinstance(store, Neo4jStore)
    try:
        version = store.server_version().removeprefix("Neo4j ")
        assert parse_version(version) >= SEARCH_CLAUSE_SINCE, f"Neo4j {version} is not 2026.01+"
        dim = 16
        ensure_space(store, EmbeddingSpace(name="text", model="test-model", dimensions=dim))
        # the same server and driver, with the pre-2026.01 statement choice
        legacy = Neo4jStore(store.uri, store._driver, store._database, "5.26.0")
        doc = "dialect-twin"
        store.write(
            "documents_begin",
            {
                "rows": [
                    {
                        "id": doc,
                        "uri": f"/tmp/{doc}.txt",
                        "sha256": "x",
                        "modality": "text",
                        "mime": "text/plain",
                        "title": doc,
                        "bytes": 1,
                        "acl": ["alice"],
                        "tags": [],
                        "ingested_at": "2026-01-01T00:00:00Z",
                        "language": None,
                        "summary": None,
                    }
                ]
            },
        )
        rng = np.random.default_rng(7)
        vecs = rng.normal(size=(40, dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rows = [
            {
                "id": f"{doc}:c{i}",
                "text": f"chunk {i}",
                "position": i,
                "page": None,
                "start_s": None,
                "end_s": None,
                "embedding": vecs[i].tolist(),
            }
            for i in range(len(vecs))
        ]
        store.write_rows("chunk_upsert", rows, params={"document_id": doc})
        store.write(
            "documents_complete",
            {"rows": [{"id": doc, "chunk_count": len(rows), "image_count": 0}]},
        )
        params: dict[str, Any] = {"vector": vecs[3].tolist(), "k": 5, "admin": False}
        new = store.read("vector_chunks", {**params, "principals": ["alice"]})
        old = legacy.read("vector_chunks", {**params, "principals": ["alice"]})
        assert [r["id"] for r in new] == [r["id"] for r in old]
        assert [r["score"] for r in new] == pytest.approx([r["score"] for r in old], abs=1e-6)
        assert new[0]["id"] == f"{doc}:c3" and 0.0 <= new[-1]["score"] <= new[0]["score"] <= 1.0
        assert set(new[0]) == set(old[0])
        assert store.read("vector_chunks", {**params, "principals": ["bob"]}) == []
    finally:
        try:
            store.write("document_delete_parts", {"id": "dialect-twin"})
            store.write("document_delete_node", {"id": "dialect-twin"})
        finally:
            store.close()
