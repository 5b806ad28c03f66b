"""Opening an embedded store waits for the indexes the server rebuilds from its snapshot.

FalkorDB loads a store's nodes, then rebuilds every index in the background; until it is done a
vector query fails ("Invalid arguments for procedure 'db.idx.vector.queryNodes'"), and the rule
plan quietly fell back to other seeds: the first questions asked of a reopened store lost their
vector search (seen on a store of 1,890 passages, 1.4 s). ``open_embedded`` now polls
``db.indexes()`` until nothing is UNDER CONSTRUCTION (bounded by ``OPEN_INDEX_WAIT_S``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.graph import open_store
from kgrag.graph.falkordb_store import FalkorDBStore

#: Enough vectors that their index takes about a second to build here (200,000 took 16 s).
VECTORS = 20_000


def test_a_reopened_store_answers_vector_queries_at_once(tmp_path: Path) -> None:
    uri = f"falkordb-lite://{tmp_path / 'kg.db'}"
    store = open_store(uri)
    assert isinstance(store, FalkorDBStore)
    graph = store._graph
    graph.query(
        "UNWIND range(1, $n) AS i CREATE (:Probe {v: vecf32([toFloat(i % 7), toFloat(i % 11), "
        "toFloat(i % 13), 1.0])})",
        {"n": VECTORS},
    )
    graph.query(
        "CREATE VECTOR INDEX FOR (p:Probe) ON (p.v) "
        "OPTIONS {dimension: 4, similarityFunction: 'euclidean'}"
    )
    store.close()

    reopened = open_store(uri)
    try:
        states = {r["label"]: r["state"] for r in reopened.read("schema/index_states")}
        assert states.get("Probe") == "OPERATIONAL", states
        found = reopened._graph.query(
            "CALL db.idx.vector.queryNodes('Probe', 'v', 3, vecf32([1.0, 2.0, 3.0, 1.0])) "
            "YIELD node RETURN count(node)"
        ).result_set
        assert found == [[3]]
    finally:
        reopened.close()


def test_the_wait_is_bounded_and_says_what_is_still_building(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(f"falkordb-lite://{tmp_path / 'kg.db'}")
    assert isinstance(store, FalkorDBStore)
    try:
        store._graph.query(
            "UNWIND range(1, $n) AS i CREATE (:Probe {v: vecf32([toFloat(i % 7), 1.0])})",
            {"n": VECTORS},
        )
        store._graph.query(
            "CREATE VECTOR INDEX FOR (p:Probe) ON (p.v) "
            "OPTIONS {dimension: 2, similarityFunction: 'euclidean'}"
        )
        with caplog.at_level("WARNING", logger="kgrag.graph.falkordb_store"):
            store._await_indexes(0.0)  # returns at once, naming the label
        assert "the indexes of Probe are still being built after 0 s" in caplog.text
        store._await_indexes(120.0)
        states = {r["label"]: r["state"] for r in store.read("schema/index_states")}
        assert states["Probe"] == "OPERATIONAL"
    finally:
        store.close()
