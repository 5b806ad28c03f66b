"""Writes the store's API never makes (what an older kgrag left, forgetting a migration), for the
set-up of migration tests only, on either engine."""

from __future__ import annotations

from typing import Any

from kgrag.graph.migrations import migrate, status
from kgrag.graph.store import GraphStore
from tests.support.engines import Engine


def raw_write(store: GraphStore, text: str, params: dict[str, Any] | None = None) -> Any:
    """Run ``text`` on the store's own client, past kgrag's statement corpus."""
    if store.dialect == "neo4j":
        return store._driver.execute_query(text, params or {})[0]  # type: ignore[attr-defined]
    return store._graph.query(text, params or {})  # type: ignore[attr-defined]


def as_before(store: GraphStore, migration: str, undo: str) -> None:
    """The store as written before ``migration``: ``undo`` (removing what the migration and
    ingestion since wrote) run, and the migration's record deleted."""
    raw_write(store, undo)
    raw_write(store, "MATCH (m:Migration {name: $name}) DELETE m", {"name": migration})


def open_migrates(engine: Engine, migration: str) -> None:
    """Opening ``engine``'s store applies ``migration`` and leaves nothing pending."""
    with engine.open() as store:
        assert {s.name: s.applied_at for s in status(store)}[migration] is not None
        assert migrate(store) == []
