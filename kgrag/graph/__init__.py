"""Graph stores: one interface (:class:`GraphStore`) over embedded FalkorDB, remote FalkorDB and
Neo4j 5; the Cypher corpus loader; migrations; the embedding-space guard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from kgrag.errors import ConfigError
from kgrag.graph.migrations import migrate
from kgrag.graph.store import GraphStore

if TYPE_CHECKING:
    from kgrag.config import Settings

__all__ = ["GraphStore", "open_settings_store", "open_store"]


def open_settings_store(settings: Settings, *, run_migrations: bool = True) -> GraphStore:
    """The store ``settings`` names (URI, graph name, Neo4j credentials, fsync policy)."""
    return open_store(
        settings.store,
        graph_name=settings.graph_name,
        neo4j_user=settings.neo4j_user,
        neo4j_password=settings.neo4j_password.get_secret_value(),
        fsync=settings.fsync,
        run_migrations=run_migrations,
    )


def embedded_path(uri: str) -> Path | None:
    """The database file of an embedded store URI (``falkordb-lite:///path/kg.db``), else None."""
    if urlparse(uri).scheme.lower() != "falkordb-lite":
        return None
    raw = uri[len("falkordb-lite://") :]
    if not raw or raw == "/":
        raise ConfigError(f"store URI {uri!r} names no file; use falkordb-lite:///path/kg.db")
    # falkordb-lite:///abs/path and falkordb-lite:///./relative both work.
    return Path(raw[1:]) if raw.startswith("/./") else Path(raw)


def open_store(
    uri: str,
    *,
    graph_name: str = "kgrag",
    neo4j_user: str = "neo4j",
    neo4j_password: str = "",
    fsync: str = "everysec",
    run_migrations: bool = True,
) -> GraphStore:
    """Open the store at ``uri`` and bring its schema up to date.

    ``falkordb-lite:///path/kg.db`` (embedded, the default), ``falkordb://host:6379``,
    ``neo4j://host:7687`` / ``bolt://host:7687`` (and their ``+s``/``+ssc`` forms).
    """
    parsed = urlparse(uri)
    scheme = parsed.scheme.lower()
    store: GraphStore
    if scheme == "falkordb-lite":
        from kgrag.graph.falkordb_store import FalkorDBStore

        path = embedded_path(uri)
        assert path is not None
        store = FalkorDBStore.open_embedded(path, graph_name, fsync=fsync)
    elif scheme == "falkordb":
        from kgrag.graph.falkordb_store import FalkorDBStore

        store = FalkorDBStore.open_remote(
            parsed.hostname or "localhost", parsed.port or 6379, graph_name
        )
    elif scheme in {"neo4j", "bolt", "neo4j+s", "neo4j+ssc", "bolt+s", "bolt+ssc"}:
        from kgrag.graph.neo4j_store import Neo4jStore

        database = graph_name if graph_name != "kgrag" else None
        store = Neo4jStore.open(uri, neo4j_user, neo4j_password, database)
    else:
        raise ConfigError(
            f"unknown store URI scheme {scheme!r} in {uri!r}; use falkordb-lite:///path, "
            "falkordb://host:port, neo4j://host:port or bolt://host:port"
        )
    if run_migrations:
        try:
            migrate(store)
        except Exception:
            store.close()
            raise
    return store
