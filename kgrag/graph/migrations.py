"""Ordered, named migrations, recorded as ``Migration`` nodes: schema operations (constraints,
indexes, relationship types) and data rewrites (:class:`~kgrag.graph.schema.DataMigration`, a
named write statement).
Run at open and by ``kgrag db migrate``; never from the write path."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from kgrag.core import Frozen
from kgrag.errors import MigrationError, StoreError
from kgrag.graph.schema import MIGRATIONS, DataMigration, FoldedText, RelationshipTypes
from kgrag.graph.store import SCHEMA_AWAIT_TIMEOUT_S, GraphStore
from kgrag.text.folding import folded

log = logging.getLogger(__name__)


class MigrationStatus(Frozen):
    name: str
    applied_at: str | None


def status(store: GraphStore) -> list[MigrationStatus]:
    """Every known migration with the time it was applied (None when pending)."""
    applied = {r["name"]: r["applied_at"] for r in store.read("migration_list")}
    return [MigrationStatus(name=m.name, applied_at=applied.get(m.name)) for m in MIGRATIONS]


#: Chunks read per page while their folded text is filled.
FOLD_PAGE = 1000


def fill_folded_text(store: GraphStore, page: int = FOLD_PAGE) -> int:
    """Write ``Chunk.text_folded`` for every chunk whose text folding changes (in pages, by id);
    return how many. Running it again rewrites the same values."""
    after = ""
    changed = 0
    while True:
        rows = store.read("chunk_text_page", {"after": after, "limit": page})
        if not rows:
            return changed
        updates = [
            {"id": r["id"], "text_folded": f} for r in rows if (f := folded(r["text"])) is not None
        ]
        if updates:
            store.write_rows("chunk_set_text_folded", updates)
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
                    elif isinstance(op, FoldedText):
                        n = fill_folded_text(store)
                        log.info("migration %s: folded the text of %d chunks", migration.name, n)
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
