"""The GraphStore: one interface over the two real engines (embedded/remote FalkorDB, Neo4j 5).

Callers name statements from the ``cypher/`` corpus; they never pass Cypher text, except the
admin-only free-form read path, which the engine itself checks to be read-only. Values are always
parameters. Vector scores come back as a similarity in [0, 1], higher is better, on both engines.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kgrag import metrics
from kgrag.errors import QueryRefusedError, StoreError
from kgrag.graph import cypher
from kgrag.graph.keys import guard_write
from kgrag.graph.schema import UNIQUE_KEYS, SchemaOp, UniqueProperty, VectorIndex

log = logging.getLogger(__name__)

Row = dict[str, Any]
Params = Mapping[str, Any]

# Ingestion jobs running in this process, per store URI (see GraphStore.ingest_job).
_LOCAL_JOBS: dict[str, int] = {}
_LOCAL_JOBS_LOCK = threading.Lock()

#: HNSW settings for the embedded engine; measured in bench/ (recall against exact search).
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200
HNSW_EF_RUNTIME = 200

#: How long migrate() waits for new constraints and indexes to become usable.
SCHEMA_AWAIT_TIMEOUT_S = 300.0
_OPERATIONAL = "OPERATIONAL"
_FAILED = "FAILED"


@dataclass(frozen=True)
class PlanOperator:
    """One operator of an engine's query plan (:meth:`GraphStore.explain`): its name as the
    engine spells it (Neo4j ``NodeByLabelScan``, FalkorDB ``Node By Label Scan``) and its
    details (the variable and label it reads, the index it seeks)."""

    name: str
    details: str


@dataclass(frozen=True)
class WriteStep:
    """One write statement of a :meth:`GraphStore.write_all` transaction: statement ``name`` of
    the ``cypher/`` corpus with ``params``, run once; or, given ``rows``, a statement reading
    ``UNWIND $rows AS row`` run over them in batches (no rows: not run)."""

    name: str
    rows: Sequence[Mapping[str, Any]] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


class GraphStore(ABC):
    """A property graph with vector and full-text indexes."""

    dialect: ClassVar[str]
    #: Whether the client reconnects by itself once the server answers again (Neo4j's Bolt
    #: driver): a store that stopped answering is then waited for, not closed and reopened.
    reconnects: ClassVar[bool] = False
    #: Whether several writers may run write transactions at once (Neo4j: row locks, and
    #: deadlocks retried), so an ingestion job may write batches side by side; the embedded
    #: engine takes one writer.
    concurrent_writes: ClassVar[bool] = False

    def __init__(self, uri: str, overlays: tuple[str, ...]) -> None:
        self.uri = uri
        self.overlays = overlays

    # -- statements by name -------------------------------------------------------------------
    def statement(self, name: str) -> str:
        """The exact Cypher text this store runs for statement ``name``."""
        return cypher.load(name, self.overlays)

    def idempotent(self, name: str) -> bool:
        """Whether statement ``name`` may run twice (its header: :func:`cypher.idempotent`)."""
        return cypher.idempotent(name, self.overlays)

    def read(self, name: str, params: Params | None = None) -> list[Row]:
        """Run a read-only statement; the engine refuses it if it writes."""
        return self._counted(self.statement(name), dict(params or {}), read_only=True)

    def write(self, name: str, params: Params | None = None) -> list[Row]:
        """Run a write statement (one atomic query). Values it would store under a unique
        constraint are checked first (kgrag.graph.keys): InvalidKeyError, nothing written."""
        text = self.statement(name)
        values = dict(params or {})
        guard_write(text, values, None, UNIQUE_KEYS)
        return self._counted(text, values, read_only=False, idempotent=self.idempotent(name))

    def write_rows(
        self,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        batch_size: int = 500,
        params: Params | None = None,
    ) -> int:
        """Run statement ``name`` (which reads ``UNWIND $rows AS row``) over ``rows`` in batches.

        Each batch is one atomic query; statements are idempotent MERGEs, so a batch that failed
        half-way can be replayed.
        """
        text = self.statement(name)
        extra = dict(params or {})
        guard_write(text, extra, rows, UNIQUE_KEYS)  # every row, before the first batch
        idempotent = self.idempotent(name)
        for start in range(0, len(rows), batch_size):
            batch = [dict(r) for r in rows[start : start + batch_size]]
            self._counted(text, {**extra, "rows": batch}, read_only=False, idempotent=idempotent)
        return len(rows)

    def write_all(self, steps: Sequence[WriteStep], *, batch_size: int = 500) -> int:
        """Run write ``steps`` in order as one transaction where the engine has them (Neo4j:
        all or nothing, one commit; a transient error such as a deadlock replays the whole
        transaction, so every step must be an idempotent MERGE/SET); an engine without
        multi-statement transactions (FalkorDB) runs them one after the other, each atomic.
        Every key value of every step is checked (kgrag.graph.keys) before the first runs.
        Returns the number of statements sent."""
        statements: list[tuple[str, dict[str, Any]]] = []
        for step in steps:
            text = self.statement(step.name)
            extra = dict(step.params)
            if step.rows is None:
                guard_write(text, extra, None, UNIQUE_KEYS)
                statements.append((text, extra))
                continue
            guard_write(text, extra, step.rows, UNIQUE_KEYS)
            for start in range(0, len(step.rows), batch_size):
                batch = [dict(r) for r in step.rows[start : start + batch_size]]
                statements.append((text, {**extra, "rows": batch}))
        if statements:
            idempotent = all(self.idempotent(step.name) for step in steps)
            self._execute_transaction(statements, idempotent=idempotent)
        return len(statements)

    def _execute_transaction(
        self, statements: Sequence[tuple[str, dict[str, Any]]], *, idempotent: bool
    ) -> None:
        """Run write statements as one transaction (``idempotent``: each may run twice); this
        base version (an engine without multi-statement transactions) runs each on its own, in
        order."""
        for text, params in statements:
            self._execute(text, params, read_only=False, idempotent=idempotent)

    def explain(self, name: str, params: Params | None = None) -> list[PlanOperator]:
        """The engine's plan for statement ``name`` with ``params``, without running it (Neo4j:
        ``EXPLAIN``; FalkorDB: ``GRAPH.EXPLAIN``), as its operators, outermost first. Tests use
        it to check that the question path's statements seek through indexes instead of
        scanning every node of a label."""
        return self._explain(self.statement(name), dict(params or {}))

    @abstractmethod
    def _explain(self, text: str, params: dict[str, Any]) -> list[PlanOperator]: ...

    def read_freeform(self, text: str, params: Params | None = None) -> list[Row]:
        """Run caller-written Cypher, refused by the engine unless it is read-only.

        Only the admin tool path reaches this; the engine's own read-only check (Neo4j: EXPLAIN
        query type and READ routing; FalkorDB: GRAPH.RO_QUERY) is the guard, not a regex.
        """
        return self._execute_freeform_read(text, dict(params or {}))

    def _counted(
        self, text: str, params: dict[str, Any], *, read_only: bool, idempotent: bool = False
    ) -> list[Row]:
        """:meth:`_execute`, a failure counted in ``kgrag_store_errors`` (a refused query is
        the caller's mistake, not the store's, and is not counted)."""
        try:
            return self._execute(text, params, read_only=read_only, idempotent=idempotent)
        except QueryRefusedError:
            raise
        except StoreError as e:
            metrics.observe_store_error(e)
            raise

    # -- jobs ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def ingest_job(self, recover: Callable[[], list[str]]) -> Iterator[list[str]]:
        """Run an ingestion job's body inside this context; it yields what ``recover`` removed.

        ``recover`` (removing what crashed jobs left unfinished) runs only when no other
        ingestion job is running on this store, and no job can start while it runs; otherwise it
        is skipped (yields ``[]``), because the unfinished documents may be that job's work in
        progress. This base version knows the jobs of this process only; the embedded store
        also knows those of other processes (a lock file beside the database), Neo4j those of
        every process and machine (a lease node per job).
        """
        with _LOCAL_JOBS_LOCK:
            alone = _LOCAL_JOBS.get(self.uri, 0) == 0
            recovered = recover() if alone else []
            _LOCAL_JOBS[self.uri] = _LOCAL_JOBS.get(self.uri, 0) + 1
        if not alone:
            log.info("another ingestion job runs on %s: unfinished documents left to it", self.uri)
        try:
            yield recovered
        finally:
            with _LOCAL_JOBS_LOCK:
                _LOCAL_JOBS[self.uri] -= 1

    # -- schema -------------------------------------------------------------------------------
    def schema_statement(self, statement: str, /, **identifiers: str) -> str:
        """Schema statement ``statement`` for this store's dialect, its `{{slot}}` placeholders
        filled with allow-listed identifiers (:func:`kgrag.graph.cypher.render`)."""
        return cypher.render(statement, self.overlays, **identifiers)

    @abstractmethod
    def apply_schema_op(self, op: SchemaOp) -> None:
        """Create a constraint or index if it does not exist."""

    @abstractmethod
    def declare_relationship_types(self, types: Sequence[str]) -> None:
        """Make relationship ``types`` exist in the schema before any write uses them (migration
        op :class:`~kgrag.graph.schema.RelationshipTypes`), where concurrent writers need it."""

    def await_schema(
        self,
        ops: Sequence[SchemaOp],
        timeout_s: float = SCHEMA_AWAIT_TIMEOUT_S,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Wait until the indexes are online and every unique constraint among ``ops`` is
        OPERATIONAL; raise :class:`StoreError` naming a constraint that FAILED (it is removed
        again, so that the migration can run once the data is fixed), is missing, or is not
        ready within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        self._await_indexes(timeout_s)
        wanted = [op for op in ops if isinstance(op, UniqueProperty)]
        delay = 0.02
        while wanted:
            status = {
                (r["label"], r["property"]): str(r["status"])
                for r in self.read("schema/unique_constraints")
            }
            for op in wanted:
                state = status.get((op.label, op.property))
                what = f"unique constraint on {op.label}.{op.property}"
                if state is None:
                    raise StoreError(f"the {what} was not created ({self.uri})")
                if state == _FAILED:
                    self._discard_failed_constraint(op)
                    raise constraint_failed(op, self.uri)
            wanted = [op for op in wanted if status[(op.label, op.property)] != _OPERATIONAL]
            if not wanted:
                return
            if time.monotonic() >= deadline:
                names = ", ".join(f"{op.label}.{op.property}" for op in wanted)
                raise StoreError(
                    f"unique constraint(s) on {names} not OPERATIONAL after {timeout_s:g} s "
                    f"({self.uri}); they are still being built: run the migration again later"
                )
            sleep(delay)
            delay = min(delay * 2, 0.5)

    @abstractmethod
    def _await_indexes(self, timeout_s: float) -> None:
        """Block until the engine's indexes are online, where the engine can (Neo4j)."""

    @abstractmethod
    def _discard_failed_constraint(self, op: UniqueProperty) -> None:
        """Remove a constraint whose build FAILED, where the engine keeps one (FalkorDB)."""

    @abstractmethod
    def create_vector_index(self, index: VectorIndex, dimensions: int) -> None:
        """Create a cosine vector index if it does not exist."""

    @abstractmethod
    def drop_vector_index(self, index: VectorIndex) -> None:
        """Drop a vector index if it exists."""

    # -- engine -------------------------------------------------------------------------------
    @abstractmethod
    def _execute(
        self, text: str, params: dict[str, Any], *, read_only: bool, idempotent: bool = False
    ) -> list[Row]:
        """Run ``text``; ``idempotent``: it may run twice (its file says so), so an engine that
        retries may repeat a write after a transient error. Reads may always be repeated."""

    @abstractmethod
    def _execute_freeform_read(self, text: str, params: dict[str, Any]) -> list[Row]: ...

    @abstractmethod
    def server_version(self) -> str: ...

    @abstractmethod
    def compact(self) -> None:
        """Give the space of deleted data back where the engine can: after a prune of traces
        (:func:`kgrag.retention.compact`). Returns when done."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def constraint_failed(op: UniqueProperty, uri: str, detail: str = "") -> StoreError:
    """The error for a unique constraint that could not be built over the stored data, in the
    same words on every engine (``detail``: the engine's own account, e.g. the duplicate)."""
    seen = f" ({detail})" if detail else ""
    return StoreError(
        f"the unique constraint on {op.label}.{op.property} FAILED to build ({uri}): some "
        f"{op.label} nodes probably share the same {op.property} value{seen}. Remove the "
        "duplicates, then run `kgrag db migrate` again"
    )


def positive_int(what: str, value: object) -> int:
    """``value`` as an int if it is an integer above zero (a DDL option), else refuse."""
    try:
        number = operator.index(value)  # type: ignore[arg-type]  # ints, numpy ints; not floats
    except TypeError:
        number = 0
    if isinstance(value, bool) or number <= 0:
        raise QueryRefusedError(f"{what} must be a positive integer, not {value!r}")
    return number


def rows_to_dicts(header: Iterable[str], rows: Iterable[Sequence[Any]]) -> list[Row]:
    keys = list(header)
    return [dict(zip(keys, row, strict=True)) for row in rows]
