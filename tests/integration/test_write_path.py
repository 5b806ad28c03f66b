"""The batched write path (GraphWriter.write_many, one transaction per batch on Neo4j): the graph
it writes is the one the bundles describe whatever the batch size, two writers on a new store
(two shard processes) relate each entity pair once, concurrent Neo4j writers that share entities
create each entity once, and a real deadlock mid-batch is retried without duplicating
anything."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import pytest

from kgrag.config import Settings
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import RuleEntityExtractor, split_by_document
from kgrag.ingest.records import ChunkRecord, DocumentBundle
from kgrag.ingest.writer import GraphWriter
from kgrag.modalities import factory
from tests.support.engines import Engine

#: Every document mentions the same people and places, so batches and writers share entities.
SHARED = (
    "Ada Lovelace wrote to Charles Babbage about the Analytical Engine in London.",
    "Charles Babbage showed the Difference Engine to Ada Lovelace at the Royal Society.",
    "Mary Somerville introduced Ada Lovelace to Charles Babbage in London.",
)
TOPICS = (
    "Michael Faraday",
    "Augustus De Morgan",
    "John Herschel",
    "Luigi Menabrea",
    "Florence Nightingale",
    "Isambard Kingdom Brunel",
    "George Boole",
    "William Whewell",
)
N_DOCS = 12


@pytest.fixture(scope="module")
def bundles() -> list[DocumentBundle]:
    """Documents of three chunks each, with MiniLM vectors and the rule extractor's entities."""
    embedder = factory.text_embedder(Settings())
    texts: dict[str, list[str]] = {}
    for n in range(N_DOCS):
        topic = TOPICS[n % len(TOPICS)]
        texts[f"doc_w{n:02d}"] = [
            SHARED[n % 3],
            f"{topic} met Ada Lovelace in Paris in {1830 + n}.",
            f"{topic} corresponded with Charles Babbage and {TOPICS[(n + 3) % len(TOPICS)]}.",
        ]
    chunks = [(f"{d}:c{p}", t) for d, parts in texts.items() for p, t in enumerate(parts)]
    extractor = RuleEntityExtractor()
    extractor.observe(t for _, t in chunks)
    owner = {cid: cid.split(":")[0] for cid, _ in chunks}
    extraction = extractor.extract(chunks, document_ids=[owner[c] for c, _ in chunks])
    per_doc = split_by_document(extraction, owner)
    vectors = iter(embedder.embed([t for _, t in chunks]))
    out = []
    for doc_id, parts in texts.items():
        records = tuple(
            ChunkRecord(id=f"{doc_id}:c{p}", text=t, position=p, embedding=tuple(next(vectors)))
            for p, t in enumerate(parts)
        )
        out.append(
            DocumentBundle(
                id=doc_id,
                uri=f"/corpus/{doc_id}.md",
                sha256=doc_id,
                modality="text",
                mime="text/markdown",
                title=doc_id,
                bytes=sum(len(t) for t in parts),
                acl=("*",),
                chunks=records,
                extraction=per_doc[doc_id],
            )
        )
    assert len({e.id for b in out for e in b.extraction.entities}) > 10
    return out


def expected_graph(bundles: Sequence[DocumentBundle]) -> dict[str, Any]:
    """The graph the bundles describe, computed here without the store."""
    mentions = {(m.chunk_id, m.entity_id, m.count) for b in bundles for m in b.extraction.mentions}
    by_chunk: dict[str, set[str]] = {}
    for chunk, entity, _ in mentions:
        by_chunk.setdefault(chunk, set()).add(entity)
    pairs = {
        tuple(sorted((r.source_id, r.target_id))) for b in bundles for r in b.extraction.relations
    }
    weights = Counter(pair for ents in by_chunk.values() for pair in combinations(sorted(ents), 2))
    return {
        "documents": sorted((b.id, "complete", len(b.chunks)) for b in bundles),
        "chunks": sorted((c.id, c.text, b.id) for b in bundles for c in b.chunks),
        "next": sorted(
            (x.id, y.id) for b in bundles for x, y in zip(b.chunks, b.chunks[1:], strict=False)
        ),
        "entities": sorted({e.id for b in bundles for e in b.extraction.entities}),
        "mentions": sorted(mentions),
        "related": sorted((a, b, weights[(a, b)]) for a, b in pairs),
    }


def stored_graph(store: GraphStore) -> dict[str, Any]:
    def q(text: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r.values()) for r in store.read_freeform(text))

    return {
        "documents": q("MATCH (d:Document) RETURN d.id AS id, d.status AS s, d.chunk_count AS n"),
        "chunks": q(
            "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN c.id AS id, c.text AS t, d.id AS d"
        ),
        "next": q("MATCH (a:Chunk)-[:NEXT]->(b:Chunk) RETURN a.id AS a, b.id AS b"),
        "entities": sorted(
            r["id"] for r in store.read_freeform("MATCH (e:Entity) RETURN e.id AS id")
        ),
        "mentions": q(
            "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS c, e.id AS e, m.count AS n"
        ),
        "related": q(
            "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, b.id AS b, r.weight AS w"
        ),
    }


def write_in_threads(store: GraphStore, bundles: Sequence[DocumentBundle], threads: int) -> None:
    errors: list[BaseException] = []

    def run(mine: Sequence[DocumentBundle]) -> None:
        writer = GraphWriter(store)
        try:
            for start in range(0, len(mine), 2):
                writer.write_many(mine[start : start + 2])
        except BaseException as e:  # the test fails below, naming it
            errors.append(e)

    workers = [threading.Thread(target=run, args=(bundles[w::threads],)) for w in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors, errors


def test_the_graph_is_the_bundles_whatever_the_batch(
    engine: Engine, bundles: list[DocumentBundle]
) -> None:
    expected = expected_graph(bundles)
    with engine.fresh() as store:
        writer = GraphWriter(store)
        for bundle in bundles:
            writer.write(bundle)
        one_by_one = stored_graph(store)
        assert one_by_one == expected
        writer.write_many(bundles)  # the same documents again, as one batch: nothing changes
        assert stored_graph(store) == expected
        names = store.read_freeform("MATCH (e:Entity) RETURN e.id AS id, e.name AS name")
    with engine.fresh() as store:
        GraphWriter(store).write_many(bundles)
        assert stored_graph(store) == expected
        again = store.read_freeform("MATCH (e:Entity) RETURN e.id AS id, e.name AS name")
    assert sorted(map(str, again)) == sorted(map(str, names))


def test_related_weights_follow_deletes_and_replays(
    engine: Engine, bundles: list[DocumentBundle]
) -> None:
    """RELATED weights grow by each new chunk's co-mentions, once per chunk: a replayed batch
    adds nothing, and after deletes (which recompute the pairs they touch over the corpus) a
    replayed write of the remaining documents still matches the bundles."""
    keep, drop = bundles[: N_DOCS // 2], bundles[N_DOCS // 2 :]
    with engine.fresh() as store:
        writer = GraphWriter(store)
        writer.write_many(bundles)
        writer.write_many(keep)  # a replay: every chunk is counted already
        for bundle in drop:
            writer.delete(bundle.id)
        assert stored_graph(store) == expected_graph(keep)
        writer.write_many(drop)  # written anew: counted again, once
        assert stored_graph(store) == expected_graph(bundles)


#: New stores the two-writer race runs on, and the documents each writer writes: before
#: relationship types were declared by a migration, about one race in three left two RELATED
#: relationships per entity pair on FalkorDB.
RACES = 12
RACE_DOCUMENTS = 2


def write_at_once(
    stores: Sequence[GraphStore], documents: Sequence[Sequence[DocumentBundle]]
) -> list[BaseException]:
    """Each store's writer writes its documents, all starting together; what they raised."""
    start = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def write(store: GraphStore, mine: Sequence[DocumentBundle]) -> None:
        try:
            start.wait(timeout=60)
            GraphWriter(store).write_many(mine)
        except BaseException as e:  # the caller fails, naming it
            errors.append(e)

    workers = [
        threading.Thread(target=write, args=pair) for pair in zip(stores, documents, strict=True)
    ]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return errors


def test_two_writers_on_a_new_store_relate_each_pair_once(
    engine: Engine, bundles: list[DocumentBundle]
) -> None:
    """Two writers with their own connections, as two ``kgrag ingest --shard`` processes have,
    write documents that share every entity into one new store at once: each entity pair gets
    one RELATED relationship with the summed weight. On FalkorDB two MERGEs of a relationship
    whose type neither had created yet both created it (the type is declared by a migration
    now); each race runs on a new graph, so that the type is new to it."""
    mine = [bundles[i::2][:RACE_DOCUMENTS] for i in (0, 1)]
    expected = expected_graph(mine[0] + mine[1])
    for race in range(RACES if not engine.is_neo4j else 2):
        # a new graph of the one embedded server; Neo4j has one database, emptied each time
        named = {} if engine.is_neo4j else {"graph_name": f"race{race}"}
        stores = [engine.fresh(**named), engine.open(**named)]
        try:
            errors = write_at_once(stores, mine)
            assert not errors, errors
            stored = stored_graph(stores[0])
        finally:
            for store in stores:
                store.close()
        pairs = Counter((a, b) for a, b, _ in stored["related"])
        doubled = sorted(pair for pair, n in pairs.items() if n > 1)
        assert doubled == [], f"race {race}: {len(doubled)} pairs have two RELATED: {doubled[:3]}"
        assert stored == expected, f"race {race}"


@pytest.mark.neo4j
def test_concurrent_neo4j_writers_create_each_entity_once(
    bundles: list[DocumentBundle], tmp_path: Any
) -> None:
    from tests.support.engines import NEO4J, engine_for

    with engine_for(NEO4J, tmp_path).fresh() as store:
        write_in_threads(store, bundles, threads=4)
        stored = stored_graph(store)
        count = store.read_freeform("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]
    assert count == len(stored["entities"]) == len(expected_graph(bundles)["entities"])
    assert stored == expected_graph(bundles)


@pytest.mark.neo4j
def test_a_deadlock_mid_batch_is_retried_without_duplicates(
    bundles: list[DocumentBundle], tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A real deadlock: another transaction holds entity e1 (and many other locks), the writer
    holds its new documents and waits for e1, then the other asks for one of those documents.
    Neo4j aborts the transaction holding fewer locks, the writer's; its whole transaction runs
    again once the other is gone, and the graph is the bundles'."""
    import neo4j

    from tests.support.engines import NEO4J, engine_for, neo4j_server

    first, rest = bundles[:1], bundles[1:4]
    e1 = min(
        {e.id for b in rest for e in b.extraction.entities}
        & {e.id for e in first[0].extraction.entities}
    )
    uri, user, password = neo4j_server(NEO4J)
    with engine_for(NEO4J, tmp_path).fresh() as store:
        GraphWriter(store).write_many(first)
        caplog.set_level(logging.WARNING, logger="kgrag.graph.retry")
        driver = neo4j.GraphDatabase.driver(uri, auth=(user, password))
        session = driver.session()
        other = session.begin_transaction()
        outcome: dict[str, BaseException | None] = {}

        def write() -> None:
            try:
                GraphWriter(store).write_many(rest)
                outcome["writer"] = None
            except BaseException as e:  # asserted below
                outcome["writer"] = e

        writer = threading.Thread(target=write)
        try:
            other.run("MATCH (e:Entity {id: $id}) SET e.probe = 1", id=e1).consume()
            other.run(
                "UNWIND range(1, 500) AS i MERGE (:Entity {id: 'probe-' + toString(i)})"
            ).consume()
            writer.start()
            _wait_until_blocked(driver, 1)
            # the writer holds its new documents: asking for one closes the cycle
            other.run("MERGE (:Document {id: $id})", id=rest[0].id).consume()
        finally:
            other.rollback()
            session.close()
            driver.close()
        writer.join(timeout=120)
        assert outcome == {"writer": None}
        assert "DeadlockDetected" in caplog.text or "TransientError" in caplog.text
        stored = stored_graph(store)
        probes = store.read_freeform("MATCH (e:Entity) WHERE e.probe IS NOT NULL RETURN e.id")
    assert stored == expected_graph(bundles[:4])
    assert probes == []


def _wait_until_blocked(driver: Any, n: int, timeout_s: float = 60.0) -> None:
    """Until ``n`` transactions of the server wait for a lock."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        records, _, _ = driver.execute_query("SHOW TRANSACTIONS YIELD status RETURN status")
        if sum(str(r["status"]).startswith("Blocked") for r in records) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{n} transaction(s) never waited for a lock")
