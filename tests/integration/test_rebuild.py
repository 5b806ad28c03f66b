"""``kgrag db compact`` (kgrag.graph.rebuild) on the real engines: the embedded graph rebuilt with
new ids keeps every node, label, property, relationship, vector (still float32, the vector index
answering the same), index and migration marker, and gives back the snapshot space that the
ids of pruned traces held; a write that races the swap cancels it and is kept; another store
using the embedded server makes it refuse. On Neo4j it says what it cannot do and changes
nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.cli import app as cli_app
from kgrag.errors import StoreUnavailableError
from kgrag.executor.trace import TraceWriter
from kgrag.graph import dump, rebuild
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.retention import prune_traces
from tests.support.engines import Engine

#: Questions written (and pruned) to leave freed ids behind.
QUESTIONS = 1500


@pytest.fixture
def built(engine: Engine) -> Iterator[KnowledgeAgent]:
    """Two small documents ingested with the real text model (chunks with vectors, entities,
    full-text and vector indexes, migration markers)."""
    root = engine.folder / "docs"
    root.mkdir()
    (root / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program for Charles Babbage's "
        "Analytical Engine in 1843.\n\nShe worked with Babbage in London.\n",
        encoding="utf-8",
    )
    (root / "grace.md").write_text(
        "# Grace Hopper\n\nGrace Hopper built the first compiler, the A-0 System, in 1952.\n",
        encoding="utf-8",
    )
    agent = KnowledgeAgent(engine.open(), default_text_embedder())
    agent.ingest([str(root)])
    yield agent
    agent.close()


def _ask_many(store: GraphStore, n: int) -> None:
    """``n`` recorded questions, three in four in a session: trace nodes and relationships."""
    writer = TraceWriter(store)
    for i in range(n):
        session = f"s{i // 4}" if i % 4 else None
        writer.write_query(
            f"q{i}",
            f"question {i}",
            user="u",
            groups=[],
            planner="rule",
            session_id=session,
            turn=i % 4,
        )


def _searches(store: GraphStore) -> dict[str, list[Any]]:
    """What the vector and full-text indexes answer."""
    vector = store.read_freeform("MATCH (c:Chunk) RETURN c.embedding AS v ORDER BY c.id LIMIT 1")
    rows = store.read(
        "vector_chunks", {"vector": vector[0]["v"], "k": 5, "admin": True, "principals": []}
    )
    words = store.read_freeform(
        "CALL db.idx.fulltext.queryNodes('Chunk', 'compiler') YIELD node RETURN node.id AS id"
    )
    return {
        "vector": [(r["id"], round(float(r["score"]), 6)) for r in rows],
        "fulltext": sorted(r["id"] for r in words),
    }


def _markers(store: GraphStore) -> dict[str, Any]:
    """What the canonical dump leaves out: migrations, embedding spaces, indexes."""
    return {
        "migrations": store.read("migration_list"),
        "spaces": store.read("embedding_space_list"),
        "indexes": sorted(json.dumps(r, sort_keys=True) for r in store.read("schema/index_list")),
        "constraints": store.read("schema/unique_constraints"),
    }


@pytest.mark.parametrize("engine", ["falkordb-lite"], indirect=True)
def test_a_rebuild_keeps_the_graph_and_gives_back_the_space_of_pruned_traces(
    built: KnowledgeAgent,
) -> None:
    store = built.store
    assert isinstance(store, FalkorDBStore)
    # a node of two labels (a transcript segment is a Chunk and a Segment), as an ingest writes it
    document = store.read_freeform("MATCH (d:Document) RETURN d.id AS id ORDER BY d.id LIMIT 1")
    segment = {"id": "seg-1", "text": "Ada spoke.", "position": 0, "start_s": 0.5, "end_s": 2.0}
    vector = store.read_freeform("MATCH (c:Chunk) RETURN c.embedding AS v LIMIT 1")[0]["v"]
    store.write_rows(
        "segment_upsert",
        [{**segment, "language": "en", "embedding": vector}],
        params={"document_id": document[0]["id"]},
    )
    before = store.snapshot().stat().st_size
    question = "Who built the first compiler?"
    answered = built.ask(question)
    _ask_many(store, QUESTIONS)
    assert prune_traces(store, older_than_days=0).queries == QUESTIONS + 1
    graph, markers, found = dump.dump(store), _markers(store), _searches(store)
    nodes = store.read_freeform("MATCH (n) RETURN count(n) AS n")[0]["n"]
    pruned = store.snapshot().stat().st_size
    # the freed ids' list stays in the snapshot: what the rebuild is for
    assert pruned > before * 1.05, (before, pruned)

    report = rebuild.rebuild(store)

    assert report.rebuilt and report.nodes == nodes and report.relationships > 0
    after = store.snapshot().stat().st_size
    assert after <= before * 1.05, (before, pruned, after)
    assert dump.differences(graph, dump.dump(store), tolerance=0.0) == []
    assert dump.dump(store).digest == graph.digest
    assert _markers(store) == markers
    assert _searches(store) == found
    kinds = store.read_freeform("MATCH (c:Chunk) RETURN DISTINCT typeOf(c.embedding) AS t")
    assert kinds == [{"t": rebuild.VECTOR_TYPE}]
    labels = store.read_freeform("MATCH (s:Segment) RETURN labels(s) AS l, s.start_s AS s")
    assert [(sorted(r["l"]), r["s"]) for r in labels] == [(["Chunk", "Segment"], 0.5)]
    assert not store._connection.connection.exists("kgrag" + rebuild.REBUILD_SUFFIX)
    # the rebuilt graph answers as before and takes writes
    again = built.ask(question)
    assert (again.answer, again.citations) == (answered.answer, answered.citations)
    _ask_many(store, 3)


@pytest.mark.parametrize("engine", ["falkordb-lite"], indirect=True)
def test_a_write_racing_the_swap_cancels_it_and_is_kept(
    built: KnowledgeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = built.store
    assert isinstance(store, FalkorDBStore)
    graph = dump.dump(store)
    check = rebuild._check_same

    def check_then_write(*args: Any) -> None:
        check(*args)
        _ask_many(store, 1)  # a write to the graph after it was copied, before the swap

    monkeypatch.setattr(rebuild, "_check_same", check_then_write)
    with pytest.raises(StoreUnavailableError, match="written to while it was rebuilt"):
        rebuild.rebuild(store)
    assert store.read_freeform("MATCH (q:Query {id: 'q0'}) RETURN q.text AS t") == [
        {"t": "question 0"}
    ]
    assert not store._connection.connection.exists("kgrag" + rebuild.REBUILD_SUFFIX)
    prune_traces(store, older_than_days=0)
    assert dump.differences(graph, dump.dump(store), tolerance=0.0) == []


@pytest.mark.parametrize("engine", ["falkordb-lite"], indirect=True)
def test_compact_is_refused_while_another_store_uses_the_embedded_one(
    built: KnowledgeAgent, engine: Engine
) -> None:
    graph = dump.dump(built.store)
    # the command line opens a second store on the same file: the agent's store is the other
    result = CliRunner().invoke(cli_app, ["db", "compact", "--store", engine.uri])
    assert isinstance(result.exception, StoreUnavailableError), result.output
    assert "in use by another process or store" in str(result.exception)
    other = engine.open()
    try:
        with pytest.raises(StoreUnavailableError, match="in use"):
            rebuild.rebuild(built.store)
    finally:
        other.close()
    assert rebuild.rebuild(built.store).rebuilt  # alone now
    assert dump.dump(built.store).digest == graph.digest


@pytest.mark.parametrize("engine", [pytest.param("neo4j", marks=pytest.mark.neo4j)], indirect=True)
def test_compact_on_neo4j_says_what_it_cannot_do_and_changes_nothing(
    built: KnowledgeAgent, engine: Engine
) -> None:
    graph = dump.dump(built.store)
    result = CliRunner().invoke(
        cli_app, ["db", "compact", "--json", "--store", engine.uri], env=engine.env()
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["rebuilt"] is False and "clean restart" in report["note"]
    assert dump.dump(built.store).digest == graph.digest
