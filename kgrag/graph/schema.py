"""The graph's schema as data: allowed labels and relationship types, the vector indexes, and the
ordered migrations. Backends turn these typed operations into the DDL statements of
``cypher/schema/`` (identifiers substituted by :func:`kgrag.graph.cypher.render`, checked by
:func:`check_identifier` against the allow-lists here)."""

from __future__ import annotations

import re
from typing import Literal

from kgrag.core import Frozen
from kgrag.errors import QueryRefusedError

NODE_LABELS: frozenset[str] = frozenset(
    {
        "Document",
        "Chunk",
        "Segment",
        "Image",
        "Table",
        "Entity",
        "EmbeddingSpace",
        "Migration",
        "IngestJob",
        "Session",
        "Query",
        "Plan",
        "Step",
        "Answer",
        "AclChange",
    }
)
RELATIONSHIP_TYPES: frozenset[str] = frozenset(
    {
        "PART_OF",
        "NEXT",
        "MENTIONS",
        "RELATED",
        "DEPICTS",
        "NEAR",
        "ROW_OF",
        "HAS_TURN",
        "PLANNED",
        "HAS_STEP",
        "DEPENDS_ON",
        "RETURNED",
        "ANSWERED_BY",
        "CITES",
        "CHANGED_ACL_OF",
        "CONTAINED_IN",
        "ATTACHED_TO",
    }
)
# Labels whose content is evidence a user may read (subject to document ACLs).
EVIDENCE_LABELS: frozenset[str] = frozenset({"Chunk", "Segment", "Image", "Entity", "Document"})


def check_label(label: str) -> str:
    """Return ``label`` if it is on the allow-list, else refuse."""
    if label not in NODE_LABELS:
        raise QueryRefusedError(
            f"label {label!r} is not allowed; allowed labels: {', '.join(sorted(NODE_LABELS))}"
        )
    return label


def check_relationship_type(rel: str) -> str:
    """Return ``rel`` if it is on the allow-list, else refuse."""
    if rel not in RELATIONSHIP_TYPES:
        raise QueryRefusedError(
            f"relationship type {rel!r} is not allowed; allowed: "
            f"{', '.join(sorted(RELATIONSHIP_TYPES))}"
        )
    return rel


class UniqueProperty(Frozen):
    kind: Literal["unique"] = "unique"
    label: str
    property: str = "id"


class PropertyIndex(Frozen):
    kind: Literal["index"] = "index"
    label: str
    property: str


class FulltextIndex(Frozen):
    kind: Literal["fulltext"] = "fulltext"
    name: str
    label: str
    property: str
    #: The property FalkorDB indexes instead, when its full-text index cannot read ``property``
    #: as it is (RediSearch does not split words at a line break: a chunk's ``words`` are its
    #: text with line breaks as spaces, written beside it by cypher/falkordb/chunk_upsert).
    falkordb_property: str | None = None


SchemaOp = UniqueProperty | PropertyIndex | FulltextIndex


class DataMigration(Frozen):
    """Rewrites stored data: one named write statement of ``cypher/`` run through
    :meth:`GraphStore.write` without parameters. It must be idempotent (running it again
    changes nothing), since a process may stop between the write and the migration's record."""

    kind: Literal["data"] = "data"
    statement: str


class SearchProperty(Frozen):
    """Fills a search property computed in Python for every node of ``label`` stored before
    ingestion wrote it (:func:`kgrag.graph.migrations.fill_search_property`), page by page: a
    chunk's ``words`` or ``text_folded``
    (:func:`kgrag.text.search_properties.chunk_search_properties`), an entity's ``name_folded``
    (:func:`kgrag.text.folding.folded`). Cypher has no accent folding on FalkorDB, so every such
    property is computed by the same Python as at ingestion. ``dialect``: the one engine that
    stores the property (None: both). Idempotent: it writes the same values again."""

    kind: Literal["search_property"] = "search_property"
    label: Literal["Chunk", "Entity"]
    property: Literal["words", "text_folded", "name_folded"]
    dialect: Literal["falkordb", "neo4j"] | None = None


class ManPageTypes(Frozen):
    """Gives the man pages stored as plain text (before kgrag stored a man page as
    ``text/troff``) that type, page by page: a document is one when
    :func:`kgrag.ingest.roff.read_as_man_page` says so of its file name, title and first passages
    (:func:`kgrag.graph.migrations.mend_man_page_types`). Only the type changes: a page stored
    before kgrag read roff keeps its source as its text until it is ingested again.
    Idempotent: a page mended is no longer plain text."""

    kind: Literal["man_page_types"] = "man_page_types"


class DataFormatTypes(Frozen):
    """Gives the JSON, YAML, XML and TOML files stored as plain text (before kgrag stored a data
    format under its own MIME type) that type, by their file's suffix
    (:data:`kgrag.ingest.sources.DATA_TEXT_TYPES`;
    :func:`kgrag.graph.migrations.mend_data_format_types`). Only the type changes.
    Idempotent: a file mended is no longer plain text."""

    kind: Literal["data_format_types"] = "data_format_types"


class RelationshipTypes(Frozen):
    """Declares relationship types in the store's schema before any write uses them
    (:meth:`GraphStore.declare_relationship_types`). FalkorDB creates a type with the first
    relationship of it, and two writers that MERGE a relationship of a type that neither has
    created yet may both create it: two relationships between the same two nodes, where one is
    wanted. Once the type exists, concurrent MERGEs find each other's relationship."""

    kind: Literal["relationship_types"] = "relationship_types"
    types: tuple[str, ...]


MigrationOp = (
    SchemaOp | DataMigration | RelationshipTypes | SearchProperty | ManPageTypes | DataFormatTypes
)


class VectorIndex(Frozen):
    """A vector index over one node property, in one embedding space."""

    name: str
    label: str
    property: str
    space: Literal["text", "image"]


VECTOR_INDEXES: dict[str, VectorIndex] = {
    "chunk_embedding": VectorIndex(
        name="chunk_embedding", label="Chunk", property="embedding", space="text"
    ),
    "image_embedding": VectorIndex(
        name="image_embedding", label="Image", property="embedding", space="image"
    ),
    "entity_clip": VectorIndex(
        name="entity_clip", label="Entity", property="clip_embedding", space="image"
    ),
}


def index_name(op: SchemaOp | VectorIndex) -> str:
    """The name of the index or constraint ``op`` creates, where the engine names them (Neo4j;
    FalkorDB's are unnamed)."""
    if isinstance(op, UniqueProperty):
        return f"{op.label.lower()}_{op.property}_unique"
    if isinstance(op, PropertyIndex):
        return f"{op.label.lower()}_{op.property}"
    return op.name


FULLTEXT_INDEXES: dict[str, FulltextIndex] = {
    "entity_name": FulltextIndex(name="entity_name", label="Entity", property="name"),
    "chunk_text": FulltextIndex(
        name="chunk_text", label="Chunk", property="text", falkordb_property="words"
    ),
}
#: The folded text of a chunk with accents (kgrag.text.folding), searched beside its text: one
#: more index on Neo4j (an index's properties cannot change), one more field of the label's one
#: full-text index on FalkorDB.
CHUNK_TEXT_FOLDED = FulltextIndex(name="chunk_text_folded", label="Chunk", property="text_folded")
#: The folded name of an entity with accents (kgrag.text.folding), searched beside its name.
ENTITY_NAME_FOLDED = FulltextIndex(
    name="entity_name_folded", label="Entity", property="name_folded"
)


class Migration(Frozen):
    name: str
    ops: tuple[MigrationOp, ...]

    @property
    def schema_ops(self) -> tuple[SchemaOp, ...]:
        """The constraints and indexes it creates (not its data rewrites or the relationship
        types it declares)."""
        return tuple(
            op for op in self.ops if isinstance(op, UniqueProperty | PropertyIndex | FulltextIndex)
        )

    @property
    def relationship_types(self) -> tuple[str, ...]:
        """The relationship types it declares."""
        return tuple(t for op in self.ops if isinstance(op, RelationshipTypes) for t in op.types)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        name="0001_unique_ids",
        ops=(
            *(
                UniqueProperty(label=label)
                for label in (
                    "Document",
                    "Chunk",
                    "Image",
                    "Entity",
                    "Session",
                    "Query",
                    "Plan",
                    "Step",
                    "Answer",
                )
            ),
            UniqueProperty(label="EmbeddingSpace", property="name"),
        ),
    ),
    Migration(
        name="0002_lookup_indexes",
        ops=(
            PropertyIndex(label="Document", property="sha256"),
            PropertyIndex(label="Document", property="uri"),
            PropertyIndex(label="Step", property="query_id"),
        ),
    ),
    Migration(name="0003_fulltext", ops=tuple(FULLTEXT_INDEXES.values())),
    # Ingestion jobs of several processes register in the graph (Neo4j; GraphStore.ingest_job):
    # the unique id makes concurrent MERGEs of the one lock node create it once.
    Migration(name="0004_ingest_jobs", ops=(UniqueProperty(label="IngestJob"),)),
    # ACL entries became namespaced (kgrag.acl): a bare `x` stored before is read by the user x
    # and by the members of the group x, so it becomes both `user:x` and `group:x`.
    Migration(name="0005_namespaced_acl", ops=(DataMigration(statement="document_acl_namespace"),)),
    # Each ACL change an ingestion makes is recorded (kgrag.ingest.records.AclChange), MERGEd by
    # an id derived from the change.
    Migration(name="0006_acl_changes", ops=(UniqueProperty(label="AclChange"),)),
    # Tables as data (issue 24): a Table node per table, its rows are chunks (ROW_OF).
    Migration(name="0007_tables", ops=(UniqueProperty(label="Table"),)),
    # Erasure (kgrag.retention) selects a user's questions. Query.created_at gets no index:
    # FalkorDB 4's range index answers `created_at < $before` on a string with every node.
    Migration(name="0008_query_user", ops=(PropertyIndex(label="Query", property="user"),)),
    # Two writers on a new FalkorDB store (`kgrag ingest --shard`) MERGEd RELATED between the
    # same entities while the type did not exist yet, and both created one (RelationshipTypes).
    # A relationship type added to RELATIONSHIP_TYPES later needs a migration declaring it.
    Migration(
        name="0009_relationship_types",
        ops=(RelationshipTypes(types=tuple(sorted(RELATIONSHIP_TYPES))),),
    ),
    # FalkorDB's full-text index read chunk text as RediSearch tokenises it, and RediSearch does
    # not split words at a line break: the first word of a wrapped line ("sponge" in
    # "tools\nsponge: soak up ...") was found by no query. The chunks' `words` (their text with
    # line breaks as spaces) are written, then indexed. Nothing to do on Neo4j (Lucene splits
    # there; its index exists).
    Migration(
        name="0010_fulltext_words",
        ops=(
            SearchProperty(label="Chunk", property="words", dialect="falkordb"),
            FULLTEXT_INDEXES["chunk_text"],
        ),
    ),
    # Lexical search folds accents (kgrag.text.folding): "zurich" finds "Zürich". Chunks stored
    # before get their folded text here; ingestion writes it from now on.
    Migration(
        name="0011_folded_text",
        ops=(CHUNK_TEXT_FOLDED, SearchProperty(label="Chunk", property="text_folded")),
    ),
    # Entity lookup folds accents too: "Dvorak" finds the entity "Antonín Dvořák". Entities
    # stored before get their folded name here; ingestion writes it from now on.
    Migration(
        name="0012_folded_names",
        ops=(ENTITY_NAME_FOLDED, SearchProperty(label="Entity", property="name_folded")),
    ),
    # Man pages are stored as text/troff (what "Which man pages do you have?" lists); stores
    # ingested before held them as text/plain. Their type is mended here; their text is not (a
    # page ingested before kgrag read roff is its source until it is ingested again).
    Migration(name="0013_man_page_types", ops=(ManPageTypes(),)),
    # JSON, YAML, XML and TOML files are stored under their own MIME types ("Which YAML files do I
    # have?" lists them); stores ingested before held them as text/plain.
    Migration(name="0014_data_format_types", ops=(DataFormatTypes(),)),
)


#: (label, property) pairs under a unique constraint: kgrag.graph.keys guards every value written
#: to them.
UNIQUE_KEYS: frozenset[tuple[str, str]] = frozenset(
    (op.label, op.property)
    for migration in MIGRATIONS
    for op in migration.schema_ops
    if isinstance(op, UniqueProperty)
)


# -- identifiers a DDL statement may name ------------------------------------------------------
# Cypher takes no parameters for labels, property keys or index names, so the statements of
# cypher/schema/ carry `{{slot}}` placeholders that kgrag.graph.cypher.render() fills; each value
# must be a plain identifier on the allow-list of its slot, derived from the schema above.

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ALL_OPS: tuple[SchemaOp | VectorIndex, ...] = (
    *(op for migration in MIGRATIONS for op in migration.schema_ops),
    *VECTOR_INDEXES.values(),
)
#: Property keys that schema statements may name.
SCHEMA_PROPERTIES: frozenset[str] = frozenset(op.property for op in _ALL_OPS) | frozenset(
    op.falkordb_property
    for op in _ALL_OPS
    if isinstance(op, FulltextIndex) and op.falkordb_property is not None
)
#: Index and constraint names that schema statements may name.
SCHEMA_NAMES: frozenset[str] = frozenset(index_name(op) for op in _ALL_OPS)
#: Template slot -> the identifiers allowed in it.
IDENTIFIER_SLOTS: dict[str, frozenset[str]] = {
    "label": NODE_LABELS,
    "property": SCHEMA_PROPERTIES,
    "name": SCHEMA_NAMES,
    "type": RELATIONSHIP_TYPES,
}


def check_identifier(slot: str, value: object) -> str:
    """Return ``value`` if it is a plain identifier allowed in template slot ``slot``, else
    refuse (an unknown slot is refused too)."""
    allowed = IDENTIFIER_SLOTS.get(slot)
    if allowed is None:
        raise QueryRefusedError(
            f"unknown identifier slot {slot!r}; slots: {', '.join(sorted(IDENTIFIER_SLOTS))}"
        )
    if not isinstance(value, str) or not _IDENTIFIER.match(value) or value not in allowed:
        raise QueryRefusedError(
            f"{slot} {value!r} is not allowed in a schema statement; allowed: "
            f"{', '.join(sorted(allowed))}"
        )
    return value
