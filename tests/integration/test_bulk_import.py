"""The Neo4j bulk path (kgrag.graph.bulk_import): neo4j-admin database import of the CSV files the
job writes gives the same canonical graph as the transactional writer on the same documents,
hostile values round-trip, a non-empty target is refused untouched, and kgrag answers on the
imported graph. Runs on Neo4j only (stops and restarts the suite's server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.graph.bulk_import import BulkImportError, Neo4jServer, bulk_load, dev_script
from kgrag.graph.dump import differences, dump
from kgrag.graph.spaces import EmbeddingSpace
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import RuleEntityExtractor, split_by_document
from kgrag.ingest.records import ChunkRecord, DocumentBundle
from kgrag.ingest.writer import GraphWriter
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from tests.support.engines import NEO4J, Engine, engine_for
from tests.support.neo4j_control import local_neo4j

pytestmark = pytest.mark.neo4j

#: A value built to break a CSV writer: quotes, commas, newlines, a header look-alike.
HOSTILE = 'id:ID(Document),uri:string\n"quoted", comma, and\r\nCRLF; semi;colon \\ back\\"slash'
TEXTS = {
    "doc_b0": [
        "Ada Lovelace wrote to Charles Babbage about the Analytical Engine in London.",
        "Charles Babbage showed the Difference Engine to Mary Somerville in London.",
    ],
    "doc_b1": [
        "Mary Somerville introduced Ada Lovelace to Charles Babbage at the Royal Society.",
        f"Michael Faraday kept a note: {HOSTILE}",
        # an accented name: its folded form is a column of the Entity file too
        "Michael Faraday lectured at the Royal Institution in London after Jöns Berzelius.",
    ],
    "doc_b2": ["George Boole wrote The Laws of Thought in Cork."],
}


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


@pytest.fixture(scope="module")
def bundles(embedder: TextEmbedder) -> list[DocumentBundle]:
    chunks = [(f"{d}:c{p}", t) for d, parts in TEXTS.items() for p, t in enumerate(parts)]
    extractor = RuleEntityExtractor()
    extractor.observe(t for _, t in chunks)
    owner = {cid: cid.split(":")[0] for cid, _ in chunks}
    per_doc = split_by_document(
        extractor.extract(chunks, document_ids=[owner[c] for c, _ in chunks]), owner
    )
    vectors = iter(embedder.embed([t for _, t in chunks]))
    out = []
    for n, (doc_id, parts) in enumerate(TEXTS.items()):
        out.append(
            DocumentBundle(
                id=doc_id,
                uri=f'/corpus/{doc_id}, "copy".md',
                sha256=doc_id,
                modality="text",
                mime="text/markdown",
                title=HOSTILE if n == 1 else doc_id,
                bytes=sum(len(t) for t in parts),
                acl=("group:eng,ops", 'user:"x"') if n == 1 else ("*",),
                tags=() if n != 2 else ("a,b", HOSTILE),
                summary=None if n == 0 else HOSTILE,
                chunks=tuple(
                    ChunkRecord(
                        id=f"{doc_id}:c{p}",
                        text=t,
                        position=p,
                        embedding=next(vectors),
                        # the headings a chunk is under, one with a quote and a comma
                        section=("Chemistry", 'Berzelius, "the father"') if n == 1 else (),
                    )
                    for p, t in enumerate(parts)
                ),
                extraction=per_doc[doc_id],
            )
        )
    assert sum(len(b.extraction.relations) for b in out) > 3
    return out


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return engine_for(NEO4J, tmp_path_factory.mktemp("bulk"))


@pytest.fixture(scope="module")
def server(engine: Engine) -> Neo4jServer:
    local = local_neo4j(engine.uri, engine.credentials()["neo4j_password"])
    env = {k: v for k, v in local._env().items() if k.startswith("NEO4J_")}
    return Neo4jServer.dev_script(dev_script(), env)


@pytest.fixture(scope="module")
def transactional(engine: Engine, bundles: list[DocumentBundle]) -> Iterator[GraphStore]:
    store = engine.fresh()
    GraphWriter(store).write_many(bundles)
    yield store
    store.close()


def test_bulk_import_refuses_a_database_that_is_not_empty(
    transactional: GraphStore,
    engine: Engine,
    server: Neo4jServer,
    bundles: list[DocumentBundle],
    tmp_path: Path,
) -> None:
    before = dump(transactional)
    with pytest.raises(BulkImportError, match=r"holds \d+ nodes: neo4j-admin database import"):
        bulk_load(bundles, tmp_path, server, engine.open(), engine.open)
    assert not differences(before, dump(transactional))  # nothing lost, server still up


def test_bulk_import_gives_the_transactional_graph_and_kgrag_answers_on_it(
    transactional: GraphStore,
    engine: Engine,
    server: Neo4jServer,
    bundles: list[DocumentBundle],
    embedder: TextEmbedder,
    tmp_path: Path,
) -> None:
    expected = dump(transactional)
    assert expected.labels["Document"] == 3 and expected.types["RELATED"] > 0
    engine.reset()
    space = EmbeddingSpace.of("text", embedder)
    result = bulk_load(bundles, tmp_path / "csv", server, engine.open(), engine.open, [space])
    assert result.documents == 3 and result.chunks == 6
    store = engine.open()
    try:
        assert differences(expected, dump(store)) == []
        folded = store.read_freeform(
            "MATCH (e:Entity) WHERE e.name_folded IS NOT NULL RETURN e.name_folded AS f"
        )
        assert [r["f"] for r in folded] == ["Jons Berzelius"]
        doc = store.read_freeform(
            "MATCH (d:Document {id: 'doc_b1'}) RETURN d.title AS t, d.acl AS acl, d.summary AS s"
        )[0]
        assert doc == {"t": HOSTILE, "acl": ["group:eng,ops", 'user:"x"'], "s": HOSTILE}
        tags = store.read_freeform("MATCH (d:Document) RETURN d.id AS id, d.tags AS tags")
        assert sorted((r["id"], r["tags"]) for r in tags) == [
            ("doc_b0", []),
            ("doc_b1", []),
            ("doc_b2", ["a,b", HOSTILE]),
        ]
        # retrieval over the imported vector and full-text indexes finds Boole's document
        # first (cited, or the closest when the tiny corpus makes kgrag abstain)
        answer = KnowledgeAgent(store, embedder).ask("What did George Boole write?")
        assert "doc_b2" in answer.answer.split("doc_b0")[0] or any(
            c.node_id.startswith("doc_b2") for c in answer.citations
        ), answer.answer
    finally:
        store.close()


def test_files_that_cannot_be_written_leave_the_server_up_and_empty(
    transactional: GraphStore,
    engine: Engine,
    server: Neo4jServer,
    bundles: list[DocumentBundle],
    tmp_path: Path,
) -> None:
    # the server shuts down while the CSV files are written (by forked shard writers): a value
    # neo4j-admin cannot read back fails the load, naming the document, and the server comes back
    engine.reset()
    bad = [*bundles[:2], bundles[2].model_copy(update={"acl": ("group:a\x1fb",)})]
    with pytest.raises(BulkImportError, match=r"doc_b2.*U\+001F"):
        bulk_load(bad, tmp_path / "csv", server, engine.open(), engine.open, workers=2)
    store = engine.open()
    try:
        assert store.read_freeform("MATCH (n:Document) RETURN count(n) AS n") == [{"n": 0}]
    finally:
        store.close()
