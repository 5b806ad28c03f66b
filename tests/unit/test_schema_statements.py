"""Schema DDL comes from ``cypher/schema/`` (Neo4j 5) and ``cypher/falkordb/schema/`` (FalkorDB
overlays), its identifiers filled by the one template mechanism, ``kgrag.graph.cypher.render``,
which takes only allow-listed identifiers (``kgrag.graph.schema.check_identifier``) and never
values. The rendered DDL is the DDL the backends built as strings before; Neo4j's side is checked
at the driver boundary (a fake driver, no server here), migrate() included; the statements pass
Neo4j's own linter."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kgrag.errors import MigrationError, QueryRefusedError
from kgrag.graph import cypher
from kgrag.graph.schema import (
    IDENTIFIER_SLOTS,
    MIGRATIONS,
    NODE_LABELS,
    RELATIONSHIP_TYPES,
    SCHEMA_NAMES,
    SCHEMA_PROPERTIES,
    VECTOR_INDEXES,
    FulltextIndex,
    PropertyIndex,
    RelationshipTypes,
    SchemaOp,
    UniqueProperty,
    check_identifier,
    index_name,
)
from kgrag.graph.store import positive_int

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "cypher" / "schema"
OVERLAY = ROOT / "cypher" / "falkordb" / "schema"
LINT = ROOT / "tools" / "cypher-lint" / "lint.mjs"
NODE = shutil.which("node")
LINT_READY = (
    NODE is not None
    and (ROOT / "tools" / "cypher-lint" / "node_modules" / "@neo4j-cypher").is_dir()
)
OPS: list[SchemaOp] = [op for m in MIGRATIONS for op in m.schema_ops]
FALKORDB = ("falkordb",)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _neo4j_ddl(op: SchemaOp) -> str:
    """What Neo4jStore.apply_schema_op built as an f-string before the statements moved."""
    label, prop = op.label, op.property
    if isinstance(op, UniqueProperty):
        name = f"{label.lower()}_{prop}_unique"
        return f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
    if isinstance(op, PropertyIndex):
        return f"CREATE INDEX {label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"
    return f"CREATE FULLTEXT INDEX {op.name} IF NOT EXISTS FOR (n:{label}) ON EACH [n.{prop}]"


def _neo4j_statement(op: SchemaOp) -> str:
    if isinstance(op, UniqueProperty):
        return "schema/unique_constraint"
    if isinstance(op, PropertyIndex):
        return "schema/property_index"
    return "schema/fulltext_index"


# -- render: the template mechanism ---------------------------------------------------------------


@pytest.mark.parametrize("op", OPS, ids=lambda op: f"{op.kind}:{op.label}.{op.property}")
def test_neo4j_ddl_renders_to_what_the_store_built_before(op: SchemaOp) -> None:
    text = cypher.render(
        _neo4j_statement(op), name=index_name(op), label=op.label, property=op.property
    )
    assert _flat(text) == _neo4j_ddl(op)


@pytest.mark.parametrize("index", list(VECTOR_INDEXES.values()), ids=lambda i: i.name)
def test_vector_ddl_renders_to_what_the_stores_built_before(index: Any) -> None:
    ids = {"name": index.name, "label": index.label, "property": index.property}
    neo4j = cypher.render("schema/vector_index", **ids)
    assert _flat(neo4j) == (
        f"CREATE VECTOR INDEX {index.name} IF NOT EXISTS FOR (n:{index.label}) "
        f"ON n.{index.property} OPTIONS {{indexConfig: {{ "
        "`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine', "
        "`vector.hnsw.m`: 32, `vector.hnsw.ef_construction`: 200, "
        "`vector.quantization.enabled`: false }}"
    )
    # FalkorDB: the same DDL, with the integers as parameters instead of formatted in
    falkordb = cypher.render("schema/vector_index", FALKORDB, **ids)
    assert _flat(falkordb) == (
        f"CREATE VECTOR INDEX FOR (n:{index.label}) ON (n.{index.property}) OPTIONS "
        "{dimension: $dimensions, similarityFunction: 'cosine', M: $m, "
        "efConstruction: $ef_construction, efRuntime: $ef_runtime}"
    )
    assert _flat(cypher.render("schema/vector_index_drop", **ids)) == (
        f"DROP INDEX {index.name} IF EXISTS"
    )
    assert _flat(cypher.render("schema/vector_index_drop", FALKORDB, **ids)) == (
        f"DROP VECTOR INDEX FOR (n:{index.label}) ON (n.{index.property})"
    )


def test_falkordb_index_ddl_matches_what_the_store_built_before() -> None:
    for op in OPS:
        ids = {"label": op.label, "property": op.property}
        if isinstance(op, FulltextIndex):
            # label and property are the procedure's string arguments: parameters
            text = cypher.render("schema/fulltext_index", FALKORDB, **ids)
            assert text == "CALL db.idx.fulltext.createNodeIndex($label, $property)"
        else:
            text = cypher.render("schema/property_index", FALKORDB, **ids)
            assert text == f"CREATE INDEX FOR (n:{op.label}) ON (n.{op.property})"


def test_allow_lists_come_from_the_schema() -> None:
    assert IDENTIFIER_SLOTS == {
        "label": NODE_LABELS,
        "property": SCHEMA_PROPERTIES,
        "name": SCHEMA_NAMES,
        "type": RELATIONSHIP_TYPES,
    }
    assert {"id", "name", "sha256", "uri", "query_id", "text", "embedding"} <= SCHEMA_PROPERTIES
    assert {"document_id_unique", "step_query_id", "entity_name", "chunk_embedding"} <= (
        SCHEMA_NAMES
    )
    assert check_identifier("label", "Chunk") == "Chunk"


@pytest.mark.parametrize(
    ("slot", "value"),
    [
        ("label", "Evil"),  # a well-formed identifier not on the allow-list
        ("label", "Document) DETACH DELETE n //"),
        ("label", "Document`"),
        ("label", "chunk"),  # case matters
        ("property", "password"),
        ("property", "id}) RETURN 1 //"),
        ("name", "chunk_embedding IF NOT EXISTS"),
        ("name", ""),
        ("name", 7),
        ("name", None),
        ("value", "Chunk"),  # no such slot
    ],
)
def test_identifiers_off_the_allow_list_are_refused(slot: str, value: Any) -> None:
    with pytest.raises(QueryRefusedError):
        check_identifier(slot, value)
    identifiers = {"name": "document_id_unique", "label": "Document", "property": "id"}
    identifiers[slot] = value
    with pytest.raises(QueryRefusedError):
        cypher.render("schema/unique_constraint", **identifiers)


def test_a_placeholder_without_an_identifier_is_refused() -> None:
    with pytest.raises(QueryRefusedError, match="needs an identifier for 'name'"):
        cypher.render("schema/unique_constraint", label="Document", property="id")


def test_malformed_placeholders_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cypher, "load", lambda name, overlays=(): "MATCH (n:{{label}}) RETURN n")
    with pytest.raises(QueryRefusedError, match="placeholder not written as"):
        cypher.render("anything", label="Chunk")


def test_statements_without_placeholders_render_unchanged() -> None:
    assert cypher.render("vector_chunks") == cypher.load("vector_chunks")
    assert cypher.render("schema/await_indexes") == "CALL db.awaitIndexes($timeout_s)"


def test_every_placeholder_in_the_corpus_is_a_quoted_known_slot() -> None:
    files = sorted((ROOT / "cypher").rglob("*.cypher"))
    slots_seen: set[str] = set()
    for path in files:
        text = "\n".join(
            ln for ln in path.read_text().splitlines() if not ln.lstrip().startswith("//")
        )
        quoted = re.findall(r"`\{\{([a-z_]+)\}\}`", text)
        assert set(quoted) <= set(IDENTIFIER_SLOTS), path
        slots_seen |= set(quoted)
        assert "{{" not in re.sub(r"`\{\{[a-z_]+\}\}`", "", text), f"bare placeholder in {path}"
        if quoted:
            assert path.is_relative_to(SCHEMA) or path.is_relative_to(OVERLAY), path
    assert slots_seen == set(IDENTIFIER_SLOTS)


def test_positive_int_takes_whole_numbers_only() -> None:
    assert positive_int("dimensions", 384) == 384
    np = pytest.importorskip("numpy")
    assert positive_int("dimensions", np.int64(16)) == 16
    for bad in (0, -3, 1.5, 16.0, "16", True, None):
        with pytest.raises(QueryRefusedError):
            positive_int("dimensions", bad)


# -- Neo4j at the driver boundary -----------------------------------------------------------------


class _Record:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def data(self) -> dict[str, Any]:
        return self._data


class _SchemaDriver:
    """Answers SHOW CONSTRAINTS with the unique constraints created so far (as a server does);
    everything else with no rows. Records every statement and its parameters."""

    def __init__(self, drop: tuple[str, str] | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.constraints: list[dict[str, Any]] = []
        self.drop = drop

    def execute_query(self, text: str, params: Any = None, **kw: Any) -> Any:
        self.calls.append((text, dict(params or {})))
        if text.startswith("CREATE CONSTRAINT"):
            m = re.search(r"FOR \(n:(\w+)\) REQUIRE n\.(\w+)", text)
            assert m
            if m.groups() != self.drop:
                self.constraints.append(
                    {"label": m.group(1), "property": m.group(2), "status": "OPERATIONAL"}
                )
        if text.startswith("SHOW CONSTRAINTS"):
            return [_Record(c) for c in self.constraints], None, None
        return [], None, None

    def close(self) -> None:
        pass


def _neo4j(driver: _SchemaDriver) -> Any:
    pytest.importorskip("neo4j")
    from kgrag.graph.neo4j_store import Neo4jStore

    return Neo4jStore("neo4j://fake:7687", driver, None, "5.26.0", sleep=lambda s: None)


def test_neo4j_store_sends_the_corpus_ddl() -> None:
    driver = _SchemaDriver()
    store = _neo4j(driver)
    for op in OPS:
        store.apply_schema_op(op)
    assert [_flat(text) for text, _ in driver.calls] == [_neo4j_ddl(op) for op in OPS]
    assert all(params == {} for _, params in driver.calls)

    driver.calls.clear()
    index = VECTOR_INDEXES["image_embedding"]
    store.create_vector_index(index, 512)
    store.drop_vector_index(index)
    (create, create_params), (drop, drop_params) = driver.calls
    assert create == cypher.render(
        "schema/vector_index", name="image_embedding", label="Image", property="embedding"
    )
    assert create_params == {"dimensions": 512}
    assert (_flat(drop), drop_params) == ("DROP INDEX image_embedding IF EXISTS", {})
    with pytest.raises(QueryRefusedError):
        store.create_vector_index(index, 0)


def test_neo4j_migrate_waits_for_indexes_and_checks_constraints() -> None:
    from kgrag.graph.migrations import migrate

    driver = _SchemaDriver()
    store = _neo4j(driver)
    assert migrate(store, timeout_s=30) == [m.name for m in MIGRATIONS]
    texts = [text for text, _ in driver.calls]
    waits = [params for text, params in driver.calls if text == cypher.load("schema/await_indexes")]
    assert waits == [{"timeout_s": 30}] * len(MIGRATIONS)
    # checked once per migration that has unique constraints (0001 ids, 0004 ingestion jobs,
    # 0006 ACL changes, 0007 tables)
    with_unique = [m for m in MIGRATIONS if any(isinstance(op, UniqueProperty) for op in m.ops)]
    assert len(with_unique) == 4
    assert texts.count(cypher.load("schema/unique_constraints")) == len(with_unique)
    # each migration is recorded after its wait
    records = [i for i, t in enumerate(texts) if t == cypher.load("migration_record")]
    assert len(records) == len(MIGRATIONS)
    assert all(texts[i - 1] != cypher.load("migration_record") for i in records)


def test_neo4j_migrate_fails_naming_a_constraint_that_is_missing() -> None:
    from kgrag.graph.migrations import migrate

    store = _neo4j(_SchemaDriver(drop=("Image", "id")))
    with pytest.raises(MigrationError) as e:
        migrate(store)
    assert "0001_unique_ids" in str(e.value) and "Image.id" in str(e.value)


def test_await_schema_polls_until_operational_and_times_out() -> None:
    driver = _SchemaDriver()
    store = _neo4j(driver)
    op = UniqueProperty(label="Chunk")
    driver.constraints = [{"label": "Chunk", "property": "id", "status": "UNDER CONSTRUCTION"}]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        if len(slept) == 3:
            driver.constraints[0]["status"] = "OPERATIONAL"

    store.await_schema([op], 60, sleep=sleep)
    assert len(slept) == 3 and slept == sorted(slept)

    driver.constraints[0]["status"] = "UNDER CONSTRUCTION"
    with pytest.raises(Exception, match=r"Chunk\.id not OPERATIONAL after 0 s"):
        store.await_schema([op], 0, sleep=lambda s: None)


# -- Neo4j's own linter ---------------------------------------------------------------------------


@pytest.mark.skipif(not LINT_READY, reason="needs node and tools/cypher-lint/node_modules")
def test_schema_statements_pass_neo4j_linter(tmp_path: Path) -> None:
    assert NODE is not None
    files = sorted(SCHEMA.glob("*.cypher"))

    def lint(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [NODE, str(LINT), *map(str, args)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    ok = lint("--strict", SCHEMA, ROOT / "cypher" / "server_version.cypher")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"cypher-lint: {len(files) + 1} files, 0 errors, 0 warnings" in ok.stdout
    # the placeholders do not blind the linter: a typo in a templated statement is found
    bad = tmp_path / "typo.cypher"
    bad.write_text((SCHEMA / "unique_constraint.cypher").read_text().replace("REQUIRE", "REQIRE"))
    out = lint(bad)
    assert out.returncode == 1 and "error: Invalid input 'REQIRE'" in out.stdout, out.stdout


def test_every_relationship_type_is_declared_by_a_migration() -> None:
    # a type added to the allow-list needs a migration declaring it (RelationshipTypes)
    declared = [t for m in MIGRATIONS for t in m.relationship_types]
    assert sorted(declared) == sorted(RELATIONSHIP_TYPES)
    assert all(not isinstance(op, RelationshipTypes) for op in OPS)  # not an index op


def test_relationship_type_ddl_creates_and_deletes_one_relationship() -> None:
    text = cypher.render("schema/relationship_type", FALKORDB, type="RELATED")
    assert _flat(text) == "CREATE (a)-[:RELATED]->(b) DETACH DELETE a, b"
    assert cypher.idempotent("schema/relationship_type", FALKORDB)
    with pytest.raises(QueryRefusedError):
        cypher.render("schema/relationship_type", FALKORDB, type="RELATED]->() DELETE (x")
