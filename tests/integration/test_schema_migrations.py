"""Schema statements from the corpus against the real embedded FalkorDB: a migration is recorded
only once its unique constraints are OPERATIONAL (FalkorDB builds them in the background and
a build over duplicate ids ends FAILED), the vector index DDL takes its options as parameters,
and the full-text procedure its label and property."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import kgrag.graph.falkordb_store as backend
from kgrag.errors import MigrationError, StoreError
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.migrations import migrate, status
from kgrag.graph.schema import MIGRATIONS, VECTOR_INDEXES, UniqueProperty


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FalkorDBStore]:
    s = FalkorDBStore.open_embedded(tmp_path / "kg.db")  # no migrations at open
    yield s
    s.close()


def _constraints(store: FalkorDBStore) -> dict[tuple[str, str], str]:
    return {
        (r["label"], r["property"]): r["status"] for r in store.read("schema/unique_constraints")
    }


def _indexes(store: FalkorDBStore) -> dict[str, dict[str, object]]:
    rows = store.read_freeform(
        "CALL db.indexes() YIELD label, types, options RETURN label, types, options"
    )
    return {r["label"]: r for r in rows}


def test_duplicate_ids_fail_the_migration_naming_the_constraint(store: FalkorDBStore) -> None:
    # data written before the migration ran (an old store, or writes that raced it)
    store._graph.query(
        "CREATE (:Document {id: 'dup'}), (:Document {id: 'dup'}), (:Chunk {id: 'c'})"
    )

    with pytest.raises(MigrationError) as e:
        migrate(store)
    message = str(e.value)
    assert "migration 0001_unique_ids failed" in message
    assert "unique constraint on Document.id FAILED" in message
    assert "kgrag db migrate" in message
    assert [s.applied_at for s in status(store)] == [None] * len(MIGRATIONS)
    # the failed constraint is not left behind; the others of the migration are built
    constraints = _constraints(store)
    assert ("Document", "id") not in constraints
    assert constraints[("Chunk", "id")] == "OPERATIONAL"

    # fix the data: the same migration now applies, and the constraint holds
    store._graph.query("MATCH (d:Document {id: 'dup'}) WITH d LIMIT 1 DELETE d")
    assert migrate(store) == [m.name for m in MIGRATIONS]
    assert set(_constraints(store).values()) == {"OPERATIONAL"}
    assert ("Document", "id") in _constraints(store)
    with pytest.raises(Exception, match=r"(?i)unique"):
        store._graph.query("CREATE (:Document {id: 'dup'})")
    assert migrate(store) == []


def test_migrate_builds_every_constraint_and_index(store: FalkorDBStore) -> None:
    assert migrate(store) == [m.name for m in MIGRATIONS]
    unique = {(op.label, op.property) for op in MIGRATIONS[0].ops if isinstance(op, UniqueProperty)}
    assert _constraints(store) == dict.fromkeys(unique, "OPERATIONAL")
    indexes = _indexes(store)
    assert indexes["Document"]["types"] == {"id": ["RANGE"], "sha256": ["RANGE"], "uri": ["RANGE"]}
    assert indexes["Entity"]["types"]["name"] == ["FULLTEXT"]  # type: ignore[index]
    assert indexes["Chunk"]["types"]["text"] == ["FULLTEXT"]  # type: ignore[index]


def test_await_schema_reports_a_constraint_that_was_never_created(store: FalkorDBStore) -> None:
    with pytest.raises(StoreError, match=r"unique constraint on Image\.id was not created"):
        store.await_schema([UniqueProperty(label="Image")], timeout_s=1)


def test_vector_index_options_are_parameters(
    store: FalkorDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk, image = VECTOR_INDEXES["chunk_embedding"], VECTOR_INDEXES["image_embedding"]
    store.create_vector_index(chunk, 16)
    # bench/vector_search.py sets the module's HNSW settings before creating an index
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
            "efRuntime": 200,
        }
    }
    assert indexes["Image"]["options"]["embedding"]["M"] == 8  # type: ignore[index]
    assert indexes["Image"]["options"]["embedding"]["dimension"] == 12  # type: ignore[index]

    store.drop_vector_index(chunk)
    store.drop_vector_index(chunk)  # already gone: no error, as before
    assert "Chunk" not in _indexes(store)
