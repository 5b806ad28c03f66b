"""Ordered, named migrations, recorded as ``Migration`` nodes: schema operations (constraints,
indexes, relationship types) and data rewrites (:class:`~kgrag.graph.schema.DataMigration`, a
named write statement; :class:`~kgrag.graph.schema.SearchProperty`, a property computed in
Python; :class:`~kgrag.graph.schema.ManPageTypes`, documents' types decided in Python).
A migration mends what is stored, not what was read: a document stored before a reader changed
(man pages read from roff, Markdown tables as rows) is read anew only when ingested again.
Run at open and by ``kgrag db migrate``; never from the write path."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from kgrag.core import Frozen
from kgrag.errors import MigrationError, StoreError
from kgrag.graph.schema import (
    MIGRATIONS,
    DataFormatTypes,
    DataMigration,
    ManPageTypes,
    RelationshipTypes,
    SearchProperty,
)
from kgrag.graph.store import SCHEMA_AWAIT_TIMEOUT_S, GraphStore
from kgrag.text.folding import folded
from kgrag.text.search_properties import chunk_search_properties

log = logging.getLogger(__name__)

#: What a migration cannot mend, said by ``kgrag db migrate`` when it applied one.
NOT_MENDED = (
    "migrations mend what is stored (schema, types, search properties), not what was read from "
    "a file: a document ingested by an older kgrag keeps the text its reader gave then (a man "
    "page's roff source, a Markdown table as text, an XPM icon as text) until it is ingested "
    "again, into a new store or after `kgrag delete DOCUMENT_ID` (an unchanged file is skipped); "
    "a file skipped then (an .svg, an .svgz) is read by ingesting its folder again"
)


class MigrationStatus(Frozen):
    name: str
    applied_at: str | None


def status(store: GraphStore) -> list[MigrationStatus]:
    """Every known migration with the time it was applied (None when pending)."""
    applied = {r["name"]: r["applied_at"] for r in store.read("migration_list")}
    return [MigrationStatus(name=m.name, applied_at=applied.get(m.name)) for m in MIGRATIONS]


#: Nodes read per page while a search property is filled.
FILL_PAGE = 1000
#: The statement reading a page of a label's nodes (id and the text the property is computed
#: from), and the one writing each property.
_PAGES = {"Chunk": "chunk_search_page", "Entity": "entity_search_page"}
_SETS = {
    "words": "chunk_set_words",
    "text_folded": "chunk_set_text_folded",
    "name_folded": "entity_set_name_folded",
}


def _value(op: SearchProperty, row: Mapping[str, Any]) -> str | None:
    """The property ``op`` fills, for a row of its label's page statement (as ingestion writes
    it: the same functions)."""
    if op.property == "name_folded":
        return folded(row["name"])
    search = chunk_search_properties(row["text"] or "")
    return search.words if op.property == "words" else search.text_folded


def fill_search_property(store: GraphStore, op: SearchProperty, page: int = FILL_PAGE) -> int:
    """Write ``op``'s property for every node of its label that has one (a chunk's text with
    no accents has no folded copy), in pages by id; return how many. Running it again rewrites
    the same values."""
    after = ""
    changed = 0
    while True:
        rows = store.read(_PAGES[op.label], {"after": after, "limit": page})
        if not rows:
            return changed
        updates = [{"id": r["id"], "value": v} for r in rows if (v := _value(op, r)) is not None]
        if updates:
            store.write_rows(_SETS[op.property], updates)
            changed += len(updates)
        after = rows[-1]["id"]


#: Passages of a document read to tell its roff source: a page's licence comments fill the first
#: (GNU bc's 30 lines before its ``.TH``), pod2man's preamble some 130 lines.
SNIFF_PASSAGES = 4


def mend_man_page_types(store: GraphStore, page: int = FILL_PAGE) -> int:
    """Store as :data:`~kgrag.ingest.roff.ROFF_MIME` every document stored as plain text that
    :func:`~kgrag.ingest.roff.read_as_man_page` says is a man page (by its file name, title and
    first :data:`SNIFF_PASSAGES` passages), in pages by id; return how many. Running it again
    finds none."""
    # ingestion's own decision; imported here, as kgrag.ingest imports the graph package
    from kgrag.ingest.roff import ROFF_MIME, read_as_man_page
    from kgrag.ingest.sources import PLAIN_TEXT

    after = ""
    changed = 0
    while True:
        rows = store.read(
            "document_plain_text_page",
            {"after": after, "limit": page, "mime": PLAIN_TEXT[1], "passages": SNIFF_PASSAGES},
        )
        if not rows:
            return changed
        updates = [
            {"id": r["id"], "value": ROFF_MIME}
            for r in rows
            if read_as_man_page(PurePath(r["uri"] or "").name, r["title"], "\n".join(r["texts"]))
        ]
        if updates:
            store.write_rows("document_set_mime", updates)
            changed += len(updates)
        after = rows[-1]["id"]


def mend_data_format_types(store: GraphStore, page: int = FILL_PAGE) -> int:
    """Store under its data format's MIME type (:func:`kgrag.ingest.sources.sniffed_text_type`)
    every document stored as plain text whose file's suffix names one (``.json``, ``.yaml``...),
    in pages by id; return how many. Running it again finds none."""
    from kgrag.ingest.sources import PLAIN_TEXT, sniffed_text_type

    after = ""
    changed = 0
    while True:
        rows = store.read(
            "document_plain_text_uri_page", {"after": after, "limit": page, "mime": PLAIN_TEXT[1]}
        )
        if not rows:
            return changed
        typed = ((r["id"], sniffed_text_type(PurePath(r["uri"] or ""))) for r in rows)
        updates = [{"id": i, "value": kind[1]} for i, kind in typed if kind != PLAIN_TEXT]
        if updates:
            store.write_rows("document_set_mime", updates)
            changed += len(updates)
        after = rows[-1]["id"]


def migrate(
    store: GraphStore, *, timeout_s: float = SCHEMA_AWAIT_TIMEOUT_S, together: bool = False
) -> list[str]:
    """Apply pending migrations in order; return the names applied now. A migration is recorded
    only once its constraints and indexes are usable (waiting up to ``timeout_s`` for those
    still being built); one that FAILED, e.g. on duplicate ids, raises :class:`MigrationError`
    naming it. ``together``: apply every pending migration's operations first and wait once for
    all of them, so that the indexes of a store loaded in bulk populate side by side (none is
    recorded when one fails)."""
    done = {s.name for s in status(store) if s.applied_at is not None}
    pending = [m for m in MIGRATIONS if m.name not in done]
    batches = [pending] if together and pending else [[m] for m in pending]
    applied: list[str] = []
    for batch in batches:
        names = ", ".join(m.name for m in batch)
        try:
            for migration in batch:
                for op in migration.ops:
                    if isinstance(op, DataMigration):
                        rows = store.write(op.statement)
                        log.info("migration %s: %s %s", migration.name, op.statement, rows)
                    elif isinstance(op, SearchProperty):
                        if op.dialect in (None, store.dialect):
                            n = fill_search_property(store, op)
                            log.info(
                                "migration %s: wrote %s.%s of %d nodes",
                                migration.name,
                                op.label,
                                op.property,
                                n,
                            )
                    elif isinstance(op, ManPageTypes):
                        n = mend_man_page_types(store)
                        log.info(
                            "migration %s: %d man pages stored as text/troff", migration.name, n
                        )
                    elif isinstance(op, DataFormatTypes):
                        n = mend_data_format_types(store)
                        log.info(
                            "migration %s: %d data files stored by their type", migration.name, n
                        )
                    elif isinstance(op, RelationshipTypes):
                        store.declare_relationship_types(op.types)
                    else:
                        store.apply_schema_op(op)
            # FalkorDB builds unique constraints in the background and Neo4j populates indexes
            # in the background: record the migration only once they are usable.
            store.await_schema([op for m in batch for op in m.schema_ops], timeout_s)
        except StoreError as e:
            raise MigrationError(
                f"migration {names} failed: {e}. The store is unchanged past the last "
                "recorded migration; fix the cause and run `kgrag db migrate` again."
            ) from e
        for migration in batch:
            store.write(
                "migration_record",
                {"name": migration.name, "applied_at": datetime.now(UTC).isoformat()},
            )
            log.info("applied migration %s", migration.name)
            applied.append(migration.name)
    return applied
