"""Schema statements from the corpus against both real engines: a migration is recorded only
once its unique constraints are usable (FalkorDB builds them in the background and a build over
duplicate ids ends FAILED; Neo4j validates the data while CREATE CONSTRAINT runs), the vector
index DDL takes its options as parameters, and the full-text statement its label and property."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kgrag.graph.falkordb_store as backend
from kgrag.errors import MigrationError, StoreError
from kgrag.graph.migrations import migrate, status
from kgrag.graph.schema import MIGRATIONS, RELATIONSHIP_TYPES, VECTOR_INDEXES, UniqueProperty
from kgrag.graph.store import GraphStore
from tests.support.engines import FALKORDB, Engine, engine_for
from tests.support.raw import raw_write


def _drop_schema(store: GraphStore) -> None:
    """Neo4j: drop every constraint and index (Engine.reset empties the one database but keeps
    kgrag's constraints and non-vector indexes, and these tests start from no schema at all).
    A new embedded file has none."""
    if store.dialect != "neo4j":
        return
    for r in raw_write(store, "SHOW CONSTRAINTS YIELD name RETURN name"):
        raw_write(store, f"DROP CONSTRAINT `{r['name']}` IF EXISTS")
    for r in raw_write(store, "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
        raw_write(store, f"DROP INDEX `{r['name']}` IF EXISTS")


@pytest.fixture
def store(engine: Engine) -> Iterator[GraphStore]:
    s = engine.open(run_migrations=False)
    _drop_schema(s)
    yield s
    s.close()


def _constraints(store: GraphStore) -> dict[tuple[str, str], str]:
    return {
        (r["label"], r["property"]): r["status"] for r in store.read("schema/unique_constraints")
    }


def _indexes(store: GraphStore) -> dict[str, dict[str, Any]]:
    """label -> {"types": {property: [index types]}, "options": {property: vector options}},
    the vector options in FalkorDB's words."""
    out: dict[str, dict[str, Any]] = {}
    if store.dialect == "neo4j":
        rows = raw_write(
            store,
            "SHOW INDEXES YIELD type, labelsOrTypes, properties, options "
            "WHERE type <> 'LOOKUP' RETURN type, labelsOrTypes, properties, options",
        )
        for r in rows:
            label = out.setdefault(r["labelsOrTypes"][0], {"types": {}, "options": {}})
            for prop in r["properties"]:
                label["types"].setdefault(prop, []).append(r["type"])
                if r["type"] == "VECTOR":
                    config = r["options"]["indexConfig"]
                    label["options"][prop] = {
                        "dimension": config["vector.dimensions"],
                        "similarityFunction": config["vector.similarity_function"].lower(),
                        "M": config["vector.hnsw.m"],
                        "efConstruction": config["vector.hnsw.ef_construction"],
                    }
        return out
    for r in store.read_freeform(
        "CALL db.indexes() YIELD label, types, options RETURN label, types, options"
    ):
        options = {
            prop: {k: v for k, v in o.items() if k != "efRuntime"}
            for prop, o in (r["options"] or {}).items()
        }
        out[r["label"]] = {"types": r["types"], "options": options}
    return out


def test_duplicate_ids_fail_the_migration_naming_the_constraint(store: GraphStore) -> None:
    # data written before the migration ran (an old store, or writes that raced it)
    raw_write(store, "CREATE (:Document {id: 'dup'}), (:Document {id: 'dup'}), (:Chunk {id: 'c'})")

    with pytest.raises(MigrationError) as e:
        migrate(store)
    message = str(e.value)
    assert "migration 0001_unique_ids failed" in message
    assert "unique constraint on Document.id FAILED" in message
    assert "kgrag db migrate" in message
    assert [s.applied_at for s in status(store)] == [None] * len(MIGRATIONS)
    # the failed constraint is not left behind
    constraints = _constraints(store)
    assert ("Document", "id") not in constraints
    if store.dialect != "neo4j":
        # FalkorDB builds them all in the background, so the others of the migration are built
        # (migrate() raised at the first FAILED one: the others may still be finishing); Neo4j
        # fails at the first CREATE CONSTRAINT (Document's), before the others run
        deadline = time.monotonic() + 30
        while constraints[("Chunk", "id")] != "OPERATIONAL" and time.monotonic() < deadline:
            time.sleep(0.1)
            constraints = _constraints(store)
        assert constraints[("Chunk", "id")] == "OPERATIONAL"

    # fix the data: the same migration now applies, and the constraint holds
    raw_write(store, "MATCH (d:Document {id: 'dup'}) WITH d LIMIT 1 DELETE d")
    assert migrate(store) == [m.name for m in MIGRATIONS]
    assert set(_constraints(store).values()) == {"OPERATIONAL"}
    assert ("Document", "id") in _constraints(store)
    # FalkorDB says "unique constraint violation", Neo4j "already exists with label"
    with pytest.raises(Exception, match=r"(?i)unique|already exists"):
        raw_write(store, "CREATE (:Document {id: 'dup'})")
    assert migrate(store) == []


@pytest.mark.parametrize("together", [False, True], ids=["one_by_one", "together"])
def test_migrate_builds_every_constraint_and_index(store: GraphStore, together: bool) -> None:
    assert migrate(store, together=together) == [m.name for m in MIGRATIONS]
    unique = {
        (op.label, op.property)
        for migration in MIGRATIONS
        for op in migration.ops
        if isinstance(op, UniqueProperty)
    }
    assert _constraints(store) == dict.fromkeys(unique, "OPERATIONAL")
    indexes = _indexes(store)
    assert indexes["Document"]["types"] == {"id": ["RANGE"], "sha256": ["RANGE"], "uri": ["RANGE"]}
    assert indexes["Entity"]["types"]["name"] == ["FULLTEXT"]
    # FalkorDB's full-text index reads the chunks' words (their text with line breaks as
    # spaces: RediSearch does not split at a line break), Neo4j's the text
    chunk_text = "text" if store.dialect == "neo4j" else "words"
    assert indexes["Chunk"]["types"][chunk_text] == ["FULLTEXT"]


def test_chunks_written_before_the_words_migration_are_found_after_it(store: GraphStore) -> None:
    """A store written before 0010_fulltext_words: its chunks have no `words`; the migration
    writes them, and the first word of a line is then found (moreutils' README: "...
    descriptions\nifdata: get network interface info ...")."""
    migrate(store)
    raw_write(
        store,
        "CREATE (d:Document {id: 'old', status: 'complete', acl: ['*']})"
        "<-[:PART_OF]-(:Chunk {id: 'old-1', text: 'errno: look up errno names and "
        "descriptions\nifdata: get network interface info without parsing ifconfig output'})",
    )
    raw_write(store, "MATCH (m:Migration {name: '0010_fulltext_words'}) DELETE m")
    params = {"query": "ifdata", "k": 5, "principals": ["*"], "admin": False}
    if store.dialect != "neo4j":  # before: not found (the chunk's text as RediSearch reads it)
        assert store.read("templates/chunks_fulltext", params) == []
    assert migrate(store) == ["0010_fulltext_words"]
    assert [r["id"] for r in store.read("templates/chunks_fulltext", params)] == ["old-1"]
    assert migrate(store) == []


def test_migrations_applied_together_record_none_when_one_fails(store: GraphStore) -> None:
    # a bulk load applies them all, then waits once: a failure records none of them
    raw_write(store, "CREATE (:Entity {id: 'dup'}), (:Entity {id: 'dup'})")
    with pytest.raises(MigrationError, match=r"unique constraint on Entity\.id FAILED") as e:
        migrate(store, together=True)
    assert "migration 0001_unique_ids, 0002_lookup_indexes" in str(e.value)
    assert [s.applied_at for s in status(store)] == [None] * len(MIGRATIONS)
    raw_write(store, "MATCH (e:Entity {id: 'dup'}) WITH e LIMIT 1 DELETE e")
    assert migrate(store, together=True) == [m.name for m in MIGRATIONS]
    assert set(_constraints(store).values()) == {"OPERATIONAL"}


def test_await_schema_reports_a_constraint_that_was_never_created(store: GraphStore) -> None:
    with pytest.raises(StoreError, match=r"unique constraint on Image\.id was not created"):
        store.await_schema([UniqueProperty(label="Image")], timeout_s=1)


def test_vector_index_options_are_parameters(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk, image = VECTOR_INDEXES["chunk_embedding"], VECTOR_INDEXES["image_embedding"]
    store.create_vector_index(chunk, 16)
    # bench/vector_search.py sets the FalkorDB module's HNSW settings before creating an index;
    # on Neo4j M is fixed in cypher/schema/vector_index.cypher
    monkeypatch.setattr(backend, "HNSW_M", 8)
    store.create_vector_index(image, 12)
    store.create_vector_index(image, 12)  # exists: no error, as before
    indexes = _indexes(store)
    assert indexes["Chunk"]["options"] == {
        "embedding": {
            "dimension": 16,
            "similarityFunction": "cosine",
            "M": 32,
            "efConstruction": 200,
        }
    }
    assert indexes["Image"]["options"]["embedding"]["M"] == (32 if store.dialect == "neo4j" else 8)
    assert indexes["Image"]["options"]["embedding"]["dimension"] == 12

    store.drop_vector_index(chunk)
    store.drop_vector_index(chunk)  # already gone: no error, as before
    assert "Chunk" not in _indexes(store)


def test_an_embedded_store_has_every_relationship_type_before_any_write(tmp_path: Path) -> None:
    """Migration 0009 declares them (FalkorDB creates a type with its first relationship, and
    two writers MERGEing one of a new type both created it: test_write_path's race); they
    stay after the server restarts, and nothing else is left of the declaration."""
    engine = engine_for(FALKORDB, tmp_path)
    for _ in range(2):  # migrated, then reopened: loaded from the file by a new server
        with engine.open() as store:
            types = store.read_freeform(
                "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS t"
            )
            left = store.read_freeform("MATCH (n) WHERE NOT n:Migration RETURN count(n) AS n")
        assert sorted(r["t"] for r in types) == sorted(RELATIONSHIP_TYPES)
        assert left == [{"n": 0}]
