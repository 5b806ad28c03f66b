"""Contract tests: the same test functions against both engines, the embedded FalkorDB and a
Neo4j 5 server (tests/support/engines.py says where it comes from)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kgrag.errors import EmbeddingSpaceMismatchError, QueryRefusedError
from kgrag.graph import open_store
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.schema import MIGRATIONS
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from tests.support.documents import begin_document
from tests.support.engines import CONTRACT_ENGINE_PARAMS, Engine, engine_for

DIM = 16
PUBLIC = {"principals": ["*"], "admin": False}


@pytest.fixture(params=CONTRACT_ENGINE_PARAMS)
def contract_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """The two engines, and Neo4j 2026 beside Neo4j 5.26 (its Cypher 25 statement forms)."""
    found = engine_for(request.param, tmp_path)
    found.reset()
    return found


@pytest.fixture
def store(contract_engine: Engine) -> Iterator[GraphStore]:
    s = contract_engine.open()
    ensure_space(s, EmbeddingSpace(name="text", model="test-model", dimensions=DIM))
    yield s
    s.close()


def _doc(store: GraphStore, doc_id: str = "d1", acl: list[str] | None = None) -> None:
    begin_document(store, doc_id, acl)


def _chunks(n: int, seed: int = 0, doc_id: str = "d1") -> tuple[list[dict], np.ndarray]:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [
        {
            "id": f"{doc_id}:c{i}",
            "text": f"chunk {i}",
            "position": i,
            "page": None,
            "start_s": None,
            "end_s": None,
            "embedding": vecs[i].tolist(),
        }
        for i in range(n)
    ]
    return rows, vecs


def _count(store: GraphStore, label: str) -> int:
    return {r["label"]: r["n"] for r in store.read("stats_labels")}.get(label, 0)


def test_merge_is_idempotent(store: GraphStore) -> None:
    _doc(store)
    rows, _ = _chunks(20)
    for _ in range(3):
        store.write_rows("chunk_upsert", rows, params={"document_id": "d1"})
    assert _count(store, "Chunk") == 20
    rels = {r["type"]: r["n"] for r in store.read("stats_relationships")}
    assert rels["PART_OF"] == 20


def test_batched_unwind_writes_every_row(store: GraphStore) -> None:
    _doc(store)
    rows, _ = _chunks(1234)
    store.write_rows("chunk_upsert", rows, batch_size=100, params={"document_id": "d1"})
    assert _count(store, "Chunk") == 1234


def test_vector_top_k_equals_exact_top_k(store: GraphStore) -> None:
    _doc(store)
    store.write(
        "documents_complete", {"rows": [{"id": "d1", "chunk_count": 300, "image_count": 0}]}
    )
    rows, vecs = _chunks(300, seed=1)
    store.write_rows("chunk_upsert", rows, params={"document_id": "d1"})
    rng = np.random.default_rng(2)
    for _ in range(10):
        q = rng.normal(size=DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        exact = [f"d1:c{i}" for i in np.argsort(-(vecs @ q))[:10]]
        got = store.read("vector_chunks", {"vector": q.tolist(), "k": 10, **PUBLIC})
        assert [r["id"] for r in got] == exact
        # similarity, higher is better, in [0, 1] on every engine: (1 + cos) / 2
        best = float(np.max(vecs @ q))
        assert got[0]["score"] == pytest.approx((1 + best) / 2, abs=1e-4)


def test_acl_filters_vector_reads(store: GraphStore) -> None:
    _doc(store, "pub")
    _doc(store, "sec", acl=["alice"])
    for d in ("pub", "sec"):
        store.write("documents_complete", {"rows": [{"id": d, "chunk_count": 5, "image_count": 0}]})
        rows, _ = _chunks(5, doc_id=d)
        store.write_rows("chunk_upsert", rows, params={"document_id": d})
    q = [1.0] + [0.0] * (DIM - 1)
    anyone = store.read("vector_chunks", {"vector": q, "k": 10, **PUBLIC})
    alice = store.read(
        "vector_chunks", {"vector": q, "k": 10, "principals": ["*", "alice"], "admin": False}
    )
    assert {r["document_id"] for r in anyone} == {"pub"}
    assert {r["document_id"] for r in alice} == {"pub", "sec"}


def test_three_hop_variable_length_pattern(store: GraphStore) -> None:
    _doc(store)
    store.write("documents_complete", {"rows": [{"id": "d1", "chunk_count": 1, "image_count": 0}]})
    rows, _ = _chunks(4)
    store.write_rows("chunk_upsert", rows, params={"document_id": "d1"})
    ents = [{"id": e, "name": e.upper(), "type": "OTHER"} for e in "abcd"]
    store.write_rows("entity_upsert", ents)
    # a-b, b-c, c-d co-occur in chunks 0..2; d is also in chunk 3
    mentions = [
        ("d1:c0", "a"),
        ("d1:c0", "b"),
        ("d1:c1", "b"),
        ("d1:c1", "c"),
        ("d1:c2", "c"),
        ("d1:c2", "d"),
        ("d1:c3", "d"),
    ]
    store.write_rows(
        "mention_upsert", [{"chunk_id": c, "entity_id": e, "count": 1} for c, e in mentions]
    )
    store.write_rows(
        "related_recompute",
        [{"a": "a", "bs": ["b"]}, {"a": "b", "bs": ["c"]}, {"a": "c", "bs": ["d"]}],
    )
    rows = store.read("templates/entity_paths", {"source": "a", "target": "d", "k": 10, **PUBLIC})
    assert {r["id"] for r in rows} == {"d1:c0", "d1:c1", "d1:c2", "d1:c3"}
    none = store.read("templates/entity_paths", {"source": "a", "target": "zz", "k": 10, **PUBLIC})
    assert none == []


def test_read_path_refuses_writes(store: GraphStore) -> None:
    with pytest.raises(QueryRefusedError):
        store.read_freeform("CREATE (n:Document {id: 'x'}) RETURN n.id AS id")
    migrations = store.read_freeform("MATCH (n:Migration) RETURN count(n) AS n")
    assert migrations[0]["n"] == len(MIGRATIONS)


def test_unknown_statement_name_is_refused(store: GraphStore) -> None:
    with pytest.raises(QueryRefusedError):
        store.read("../../etc/passwd")
    with pytest.raises(QueryRefusedError):
        store.read("no_such_statement")


def test_embedding_space_guard_names_both_models(store: GraphStore) -> None:
    with pytest.raises(EmbeddingSpaceMismatchError) as e:
        ensure_space(store, EmbeddingSpace(name="text", model="other-model", dimensions=32))
    assert "test-model" in str(e.value) and "other-model" in str(e.value)


def test_persists_across_close_and_reopen(contract_engine: Engine) -> None:
    s = contract_engine.open()
    _doc(s, "keep")
    s.close()
    s = contract_engine.open()
    try:
        assert s.read("documents_find_by_uris", {"uris": ["/tmp/keep.txt"]})[0]["id"] == "keep"
    finally:
        s.close()


def test_write_survives_sigkill_of_the_embedded_server(tmp_path: Path) -> None:
    """With ``fsync="always"`` an acknowledged write is in the append-only file before the reply.
    (With the default ``everysec``, Redis postpones the file write for up to 2 s while a
    background fsync is in progress, so a SIGKILL under heavy disk I/O can lose the last
    writes: this test failed that way once while another job wrote gigabytes.)"""
    s = open_store(f"falkordb-lite:///{tmp_path}/kg.db", fsync="always")
    assert isinstance(s, FalkorDBStore)
    pid = s.server_pid()
    assert pid
    _doc(s, "crash")
    os.kill(pid, signal.SIGKILL)  # right after the write returned
    for _ in range(50):
        try:
            os.kill(pid, 0)
            time.sleep(0.1)
        except ProcessLookupError:
            break
    s2 = open_store(f"falkordb-lite:///{tmp_path}/kg.db")
    try:
        rows = s2.read("documents_find_by_uris", {"uris": ["/tmp/crash.txt"]})
        assert [r["id"] for r in rows] == ["crash"]
    finally:
        s2.close()


def test_every_vector_statement_returns_the_exact_neighbours(store: GraphStore) -> None:
    """Images and entities' CLIP vectors through each statement that searches them (on Neo4j
    2026.01+ these are the Cypher 25 SEARCH forms, so they run here, not only in the lint)."""
    ensure_space(store, EmbeddingSpace(name="image", model="test-clip", dimensions=DIM))
    _doc(store)
    store.write(
        "documents_complete", {"rows": [{"id": "d1", "chunk_count": 1, "image_count": 120}]}
    )
    rng = np.random.default_rng(5)
    img = rng.normal(size=(120, DIM)).astype(np.float32)
    img /= np.linalg.norm(img, axis=1, keepdims=True)
    store.write_rows(
        "image_upsert",
        [
            {
                "id": f"d1:i{i}",
                "uri": f"/tmp/i{i}.png",
                "width": 8,
                "height": 8,
                "page": None,
                "caption": None,
                "embedding": img[i].tolist(),
            }
            for i in range(120)
        ],
        params={"document_id": "d1"},
    )
    ent = rng.normal(size=(60, DIM)).astype(np.float32)
    ent /= np.linalg.norm(ent, axis=1, keepdims=True)
    ids = [f"e{i}" for i in range(60)]
    store.write_rows(
        "entity_upsert", [{"id": e, "name": e, "type": "OTHER", "name_rank": 0} for e in ids]
    )
    store.write_rows(
        "entity_set_clip",
        [{"id": e, "name": e, "embedding": ent[i].tolist()} for i, e in enumerate(ids)],
    )
    rows, _ = _chunks(1)
    store.write_rows("chunk_upsert", rows, params={"document_id": "d1"})
    store.write_rows(
        "mention_upsert", [{"chunk_id": "d1:c0", "entity_id": e, "count": 1} for e in ids]
    )
    q = rng.normal(size=DIM).astype(np.float32)
    q /= np.linalg.norm(q)
    top_images = [f"d1:i{i}" for i in np.argsort(-(img @ q))[:5]]
    top_entities = [ids[i] for i in np.argsort(-(ent @ q))[:5]]
    got = store.read("vector_images", {"vector": q.tolist(), "k": 5, **PUBLIC})
    assert [r["id"] for r in got] == top_images
    got = store.read("vector_entity_clip", {"vector": q.tolist(), "k": 5, **PUBLIC})
    assert [r["id"] for r in got] == top_entities
    got = store.read("entity_clip_nearest", {"vector": q.tolist(), "k": 5})
    assert sorted(r["id"] for r in got) == sorted(top_entities)
    near = store.read("images_near_clip", {"rows": [{"id": "e0", "vector": q.tolist()}], "k": 5})
    assert sorted(r["image_id"] for r in near) == sorted(top_images)
    assert {r["entity_id"] for r in near} == {"e0"}
