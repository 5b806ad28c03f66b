"""``kgrag db compact`` (kgrag.graph.rebuild) on the real engines: the embedded graph rebuilt with
new ids keeps every node, label, property, relationship, vector (still float32, the vector index
answering the same), index and migration marker, and gives back the snapshot space that the
ids of pruned traces held; a write that races the swap cancels it and is kept; another store
using the embedded server makes it refuse. On Neo4j (the suite's real server, stopped and
started by the test) the database is rebuilt offline with neo4j-admin and gives the same graph,
searches and answers; a failed import loads the dump back; a server kgrag cannot manage is
refused, nothing changed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.cli import app as cli_app
from kgrag.errors import ConfigError, StoreUnavailableError
from kgrag.executor.trace import TraceWriter
from kgrag.graph import dump, neo4j_rebuild, rebuild
from kgrag.graph.bulk_import import BulkImportError, Neo4jServer, dev_script
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.retention import prune_traces
from tests.support.engines import Engine
from tests.support.neo4j_control import local_neo4j

#: Questions written (and pruned) to leave freed ids behind.
QUESTIONS = 1500
#: On Neo4j (a transaction each): enough to leave freed records, few enough for a quick test.
NEO4J_QUESTIONS = 300


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
    index = "'chunk_text'" if store.dialect == "neo4j" else "'Chunk'"
    procedure = "db.index.fulltext" if store.dialect == "neo4j" else "db.idx.fulltext"
    words = store.read_freeform(
        f"CALL {procedure}.queryNodes({index}, 'compiler') YIELD node RETURN node.id AS id"
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


def _add_segment(store: GraphStore, text: str) -> None:
    """A node of two labels (a transcript segment is a Chunk and a Segment), as an ingest
    writes it."""
    document = store.read_freeform("MATCH (d:Document) RETURN d.id AS id ORDER BY d.id LIMIT 1")
    segment = {"id": "seg-1", "text": text, "position": 0, "start_s": 0.5, "end_s": 2.0}
    vector = store.read_freeform("MATCH (c:Chunk) RETURN c.embedding AS v LIMIT 1")[0]["v"]
    store.write_rows(
        "segment_upsert",
        [{**segment, "language": "en", "embedding": vector}],
        params={"document_id": document[0]["id"]},
    )


@pytest.mark.parametrize("engine", ["falkordb-lite"], indirect=True)
def test_a_rebuild_keeps_the_graph_and_gives_back_the_space_of_pruned_traces(
    built: KnowledgeAgent,
) -> None:
    store = built.store
    assert isinstance(store, FalkorDBStore)
    _add_segment(store, "Ada spoke.")
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
    # at least 90% of what the pruned traces left in the snapshot is given back (a bound on the
    # bytes the prune left, not 5% of an 11 KB snapshot: the same graph's snapshot varies by a few
    # hundred bytes between builds; CI saw 11,355 -> 11,970 once, 5.4%)
    assert after - before <= 0.1 * (pruned - before), (before, pruned, after)
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


NEO4J = [pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.mark.parametrize("engine", NEO4J, indirect=True)
def test_compact_refuses_a_neo4j_server_it_cannot_stop_and_start(
    built: KnowledgeAgent, engine: Engine
) -> None:
    graph = dump.dump(built.store)
    # the dev script manages another port than the store's: not this server
    env = {**engine.env(), "KGRAG_DATA_DIR": str(engine.folder), "NEO4J_BOLT_PORT": "1"}
    result = CliRunner().invoke(cli_app, ["db", "compact", "--store", engine.uri], env=env)
    assert isinstance(result.exception, ConfigError), result.output
    message = str(result.exception)
    assert "scripts/neo4j.sh" in message and "Bolt port 1, not the store's" in message
    assert "Nothing was changed" in message
    assert dump.dump(built.store).digest == graph.digest


@pytest.mark.parametrize("engine", NEO4J, indirect=True)
def test_a_neo4j_rebuild_keeps_the_graph_and_a_failed_one_leaves_it(
    built: KnowledgeAgent, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real server of the suite is stopped, dumped, imported into and restarted (twice)."""
    local = local_neo4j(engine.uri, engine.credentials()["neo4j_password"])
    env = {k: v for k, v in local._env().items() if k.startswith("NEO4J_")}
    store = built.store
    # two labels (an import file of its own) and a text built to break a CSV writer
    _add_segment(store, 'Ada said: "stop, now",\nthen left;\r\n:ID,x:int \\ "" end')
    question = "Who built the first compiler?"
    answered = built.ask(question)
    _ask_many(store, NEO4J_QUESTIONS)
    assert prune_traces(store, older_than_days=0).queries == NEO4J_QUESTIONS + 1
    graph, markers, found = dump.dump(store), _markers(store), _searches(store)
    nodes = store.read_freeform("MATCH (n) RETURN count(n) AS n")[0]["n"]
    # documents without tags hold an empty list, which neo4j-admin import reads as no property
    empty = "MATCH (d:Document) WHERE d.tags = [] RETURN count(d) AS n"
    assert store.read_freeform(empty)[0]["n"] == 2

    # a bad import file (a relationship to a node that is not there): the dump is loaded back
    write = neo4j_rebuild._write_files

    def write_then_break(export: Any, directory: Path) -> Any:
        out = write(export, directory)
        with out.files[-1].path.open("a", encoding="utf-8") as f:
            f.write('"no-such-node","no-such-node"\n')
        return out

    monkeypatch.setattr(neo4j_rebuild, "_write_files", write_then_break)
    server = Neo4jServer.dev_script(dev_script(), env)
    with pytest.raises(BulkImportError, match=r"(?s)database import failed.*loaded back: nothing"):
        neo4j_rebuild.rebuild_neo4j(engine.open(), engine.open, engine.folder, server)
    monkeypatch.undo()
    assert dump.differences(graph, dump.dump(store), tolerance=0.0) == []
    assert (_markers(store), _searches(store)) == (markers, found)
    assert list(engine.folder.glob("kgrag-compact-*")) == []  # the dump removed once loaded

    result = CliRunner().invoke(
        cli_app,
        ["db", "compact", "--json", "--store", engine.uri],
        env={**engine.env(), **env, "KGRAG_DATA_DIR": str(engine.folder)},
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["rebuilt"] is True and report["nodes"] == nodes
    # the store's size: bench/trace_retention.py (a few hundred questions move Neo4j's store
    # files by less than its fixed part, 40 KB a file for each index and id file)
    # a new database: clients reconnect (a driver's bookmarks name transactions of the old one),
    # as `kgrag serve` is restarted after `kgrag db compact`
    agent = KnowledgeAgent(engine.open(), default_text_embedder())
    try:
        rebuilt = agent.store
        assert dump.differences(graph, dump.dump(rebuilt), tolerance=0.0) == []
        assert dump.dump(rebuilt).digest == graph.digest
        assert rebuilt.read_freeform(empty)[0]["n"] == 2
        segments = rebuilt.read_freeform("MATCH (s:Segment) RETURN labels(s) AS l, s.text AS t")
        assert [(sorted(r["l"]), r["t"]) for r in segments] == [
            (["Chunk", "Segment"], 'Ada said: "stop, now",\nthen left;\r\n:ID,x:int \\ "" end')
        ]
        marked = f"MATCH (n) WHERE n.{neo4j_rebuild.MARKER} IS NOT NULL RETURN count(n) AS n"
        assert rebuilt.read_freeform(marked)[0]["n"] == 0
        assert (_markers(rebuilt), _searches(rebuilt)) == (markers, found)
        again = agent.ask(question)
        assert (again.answer, again.citations) == (answered.answer, answered.citations)
        _ask_many(rebuilt, 3)
    finally:
        agent.close()
