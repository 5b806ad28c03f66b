"""Neo4j 5 backend through the official driver (Bolt). Reads are routed READ; free-form Cypher is
first checked with EXPLAIN and refused unless its query type is read-only."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from kgrag.errors import (
    DependencyMissingError,
    QueryRefusedError,
    StoreError,
    StoreUnavailableError,
)
from kgrag.graph import cypher
from kgrag.graph.retry import NO_RETRY, RetryPolicy, call_with_retry
from kgrag.graph.schema import (
    VECTOR_INDEXES,
    FulltextIndex,
    PropertyIndex,
    SchemaOp,
    UniqueProperty,
    VectorIndex,
    check_label,
    index_name,
)
from kgrag.graph.store import GraphStore, PlanOperator, Row, constraint_failed, positive_int

log = logging.getLogger(__name__)

#: Neo4j 2026.01 adds the SEARCH clause; db.index.vector.queryNodes is deprecated from 2026.04.
SEARCH_CLAUSE_SINCE = (2026, 1)
#: The statements of ``cypher/neo4j_search/`` (``CYPHER 25`` + ``MATCH ... SEARCH``) overlay the
#: base ``db.index.vector.queryNodes`` ones on servers from SEARCH_CLAUSE_SINCE on.
SEARCH_OVERLAY = "neo4j_search"
#: Server notifications the driver would log as warnings on every run of a correct statement: a
#: property key no node has yet (normal in a schema-less graph: `page` before the first PDF) and
#: planner performance hints on deliberate cross products of two MERGEd ends, and "already
#: exists" / "does not exist" notes on the IF [NOT] EXISTS schema statements of migrations.
QUIET_NOTIFICATIONS: tuple[Literal["UNRECOGNIZED", "PERFORMANCE", "SCHEMA"], ...] = (
    "UNRECOGNIZED",
    "PERFORMANCE",
    "SCHEMA",
)
#: A MERGE that lost a race with another transaction creating the same node under a unique
#: constraint fails with this code; run again, the MERGE matches the node the winner created.
CONSTRAINT_RACE = "Neo.ClientError.Schema.ConstraintValidationFailed"
#: A transaction Neo4j chose as the victim of a deadlock fails with this code. Concurrent writers
#: that share dense entity nodes deadlock on relationship-group locks however their MERGEs are
#: ordered (bench/write_path.py: 19 deadlocks among 180 one-document transactions from 4 writers),
#: so an idempotent write transaction that lost one runs again up to DEADLOCK_RETRY.attempts times
#: (each time, inside the store's own retry policy for other transient errors).
DEADLOCK = "Neo.TransientError.Transaction.DeadlockDetected"
DEADLOCK_RETRY = RetryPolicy(attempts=10, initial_delay_s=0.05, max_delay_s=2.0)
#: An ingestion job's lease (an ``IngestJob`` node) is renewed this often while the job runs...
JOB_HEARTBEAT_S = 10.0
#: ...and a lease not renewed for this long belongs to a job that died on another machine (on
#: this machine a lease whose process is gone is dead at once).
JOB_LEASE_TTL_S = 60.0
#: How often a new job checks whether another job has finished removing crashed jobs' leftovers.
JOB_RECOVERY_POLL_S = 0.5


def parse_version(text: str) -> tuple[int, int]:
    """'5.26.1' -> (5, 26); '2026.01.0' -> (2026, 1); '5' -> (5, 0); no number -> (0, 0)."""
    parts = re.findall(r"\d+", text)
    if not parts:
        return (0, 0)
    return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)


def overlays_for(version: tuple[int, int]) -> tuple[str, ...]:
    """Statement overlays for a Neo4j server version (the base corpus is Neo4j 5): the SEARCH
    clause form of the vector statements from Neo4j 2026.01 on, queryNodes before."""
    return (SEARCH_OVERLAY,) if version >= SEARCH_CLAUSE_SINCE else ()


class Neo4jStore(GraphStore):
    dialect = "neo4j"
    reconnects = True  # the driver's pool replaces dead connections (and routing) by itself
    concurrent_writes = True

    def __init__(
        self,
        uri: str,
        driver: Any,
        database: str | None,
        version: str,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(uri, overlays=overlays_for(parse_version(version)))
        self._driver = driver
        self._database = database
        self._version = version
        self.retry = retry or RetryPolicy()
        self._sleep = sleep

    @classmethod
    def open(
        cls,
        uri: str,
        user: str,
        password: str,
        database: str | None = None,
        *,
        retry: RetryPolicy | None = None,
    ) -> Neo4jStore:
        try:
            import neo4j
        except ImportError as e:
            raise DependencyMissingError("neo4j", "neo4j") from e
        policy = retry or RetryPolicy()

        def connect() -> tuple[Any, str]:
            # The driver's own transaction retries are off: RetryPolicy decides what is repeated.
            driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(user, password),
                max_transaction_retry_time=0,
                notifications_disabled_classifications=QUIET_NOTIFICATIONS,
            )
            try:
                driver.verify_connectivity()
                records, _, _ = driver.execute_query(
                    cypher.load("server_version"),
                    database_=database,
                    routing_=neo4j.RoutingControl.READ,
                )
            except BaseException:
                driver.close()
                raise
            return driver, str(records[0]["v"]) if records else "5"

        try:
            driver, version = call_with_retry(connect, policy, _retryable, what="Neo4j connect")
        except Exception as e:
            raise StoreUnavailableError(
                f"cannot connect to Neo4j at {uri} as {user!r}: {e}{_notes(e)}. Check the URI, "
                "that the server is running, and KGRAG_NEO4J_USER / KGRAG_NEO4J_PASSWORD."
            ) from e
        log.info("connected to Neo4j %s at %s", version, uri)
        return cls(uri, driver, database, version, retry=policy)

    def _execute(
        self, text: str, params: dict[str, Any], *, read_only: bool, idempotent: bool = False
    ) -> list[Row]:
        import neo4j

        routing = neo4j.RoutingControl.READ if read_only else neo4j.RoutingControl.WRITE
        repeatable = read_only or idempotent
        # Concurrent writers (shards on several machines) MERGE the same entities: under the
        # unique constraint the loser of a creation race fails; its MERGE, run again, matches.
        retryable = _retryable_merge if repeatable and _MERGE.search(text) else _retryable

        def run() -> list[Any]:
            records, _, _ = self._driver.execute_query(
                text, params, database_=self._database, routing_=routing
            )
            return list(records)

        try:
            records = call_with_retry(
                run,
                self.retry if repeatable else NO_RETRY,
                retryable,
                what=f"Neo4j {'read' if read_only else 'write'}",
                sleep=self._sleep,
            )
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError) as e:
            raise self._wrap(e, repeatable) from e
        return [_plain(r.data()) for r in records]

    def _execute_transaction(
        self, statements: Sequence[tuple[str, dict[str, Any]]], *, idempotent: bool
    ) -> None:
        """Run write statements in one explicit transaction: one commit for all of them. A
        transient error (deadlock, lost MERGE race, dropped connection) rolls it all back and
        the whole transaction runs again, when every statement is idempotent."""
        import neo4j

        repeatable = idempotent
        merges = any(_MERGE.search(text) for text, _ in statements)
        retryable = _retryable_merge if repeatable and merges else _retryable

        def work(tx: Any) -> None:
            for text, params in statements:
                tx.run(text, params).consume()

        def once() -> None:
            with self._driver.session(
                database=self._database, default_access_mode=neo4j.WRITE_ACCESS
            ) as session:
                session.execute_write(work)

        def run() -> None:
            if not repeatable:
                return once()
            return call_with_retry(
                once, DEADLOCK_RETRY, _deadlock, what="Neo4j write transaction", sleep=self._sleep
            )

        try:
            call_with_retry(
                run,
                self.retry if repeatable else NO_RETRY,
                retryable,
                what="Neo4j write transaction",
                sleep=self._sleep,
            )
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError) as e:
            raise self._wrap(e, repeatable) from e

    def _wrap(self, e: Exception, repeatable: bool) -> StoreError:
        import neo4j

        unsure = (
            ""
            if repeatable
            else " This write is not idempotent and was not retried: check whether it was "
            "applied before running it again."
        )
        # DatabaseUnavailable (a TransientError): the server answers Bolt but its database is not
        # online, as while it starts again after a crash; the store is unavailable, not failing
        unavailable = (
            neo4j.exceptions.ServiceUnavailable,
            neo4j.exceptions.SessionExpired,
            neo4j.exceptions.DatabaseUnavailable,
        )
        if isinstance(e, unavailable):
            return StoreUnavailableError(
                f"Neo4j at {self.uri} is unavailable: {e}{_notes(e)}. Check that the server is "
                "running and reachable, then run the job again (kgrag's writes are idempotent "
                f"MERGEs and interrupted documents are rewritten).{unsure}"
            )
        if isinstance(e, neo4j.exceptions.TransientError):
            return StoreError(
                f"Neo4j reported a transient error: {e.message or e}{_notes(e)}. The database is "
                f"busy (locks, leader change); run the job again shortly.{unsure}"
            )
        if isinstance(e, neo4j.exceptions.Neo4jError):
            return StoreError(f"Neo4j query failed: {e.message or e}")
        return StoreUnavailableError(
            f"the Neo4j driver failed talking to {self.uri}: {e}{_notes(e)}. Reopen the store."
        )

    def _explain(self, text: str, params: dict[str, Any]) -> list[PlanOperator]:
        import neo4j

        try:
            _, summary, _ = self._driver.execute_query(
                "EXPLAIN " + text,
                params,
                database_=self._database,
                routing_=neo4j.RoutingControl.READ,
            )
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError) as e:
            raise self._wrap(e, True) from e
        out: list[PlanOperator] = []
        pending = [summary.plan] if summary.plan else []
        while pending:
            op = pending.pop(0)
            name = str(op.get("operatorType", "")).split("@", 1)[0]
            out.append(PlanOperator(name, str(op.get("args", {}).get("Details", ""))))
            pending.extend(op.get("children", []))
        return out

    def _execute_freeform_read(self, text: str, params: dict[str, Any]) -> list[Row]:
        import neo4j

        def explain() -> Any:
            _, summary, _ = self._driver.execute_query(
                "EXPLAIN " + text,
                params,
                database_=self._database,
                routing_=neo4j.RoutingControl.READ,
            )
            return summary

        try:
            summary = call_with_retry(
                explain, self.retry, _retryable, what="Neo4j EXPLAIN", sleep=self._sleep
            )
        except neo4j.exceptions.Neo4jError as e:
            if _retryable(e):
                raise self._wrap(e, True) from e
            raise QueryRefusedError(f"the query does not compile: {e.message or e}") from e
        except neo4j.exceptions.DriverError as e:
            raise self._wrap(e, True) from e
        if summary.query_type != "r":
            raise QueryRefusedError(
                f"only read-only Cypher may run here; this query's type is {summary.query_type!r}"
            )
        return self._execute(text, params, read_only=True)

    # -- schema: cypher/schema/, identifiers from the allow-list (GraphStore.schema_statement) --
    def apply_schema_op(self, op: SchemaOp) -> None:
        label = check_label(op.label)
        if isinstance(op, UniqueProperty):
            statement = "schema/unique_constraint"
        elif isinstance(op, PropertyIndex):
            statement = "schema/property_index"
        elif isinstance(op, FulltextIndex):
            statement = "schema/fulltext_index"
        text = self.schema_statement(
            statement, name=index_name(op), label=label, property=op.property
        )
        try:
            self._execute_ddl(statement, text, {})
        except StoreError as e:
            # Neo4j validates the stored data while CREATE CONSTRAINT runs and creates nothing
            # when it fails: say so in the words FalkorDB's FAILED background build gets
            code = getattr(e.__cause__, "code", None) or ""
            if isinstance(op, UniqueProperty) and code.endswith("ConstraintCreationFailed"):
                detail = " ".join(str(getattr(e.__cause__, "message", "")).split())
                raise constraint_failed(op, self.uri, detail) from e
            raise

    def declare_relationship_types(self, types: Sequence[str]) -> None:
        """Nothing to do: Neo4j's relationship MERGE locks both end nodes, so concurrent writers
        never create a relationship twice, whether its type exists yet or not
        (test_write_path's two-writer race runs on Neo4j too)."""

    def _execute_ddl(self, statement: str, text: str, params: dict[str, Any]) -> None:
        """Run ``CREATE ... IF NOT EXISTS`` (``text``, rendered from ``statement``). Two processes
        migrating one database at once (N shards starting together) race: the loser's statement
        fails with "an equivalent index already exists" although IF NOT EXISTS was given, and
        that outcome is the one wanted."""
        try:
            self._execute(text, params, read_only=False, idempotent=self.idempotent(statement))
        except StoreError as e:
            if getattr(e.__cause__, "code", None) not in _ALREADY_EXISTS:
                raise
            log.info("schema object created meanwhile by another process: %s", e)

    def create_vector_index(self, index: VectorIndex, dimensions: int) -> None:
        text = self.schema_statement(
            "schema/vector_index",
            name=index_name(index),
            label=check_label(index.label),
            property=index.property,
        )
        dimensions = positive_int("dimensions", dimensions)
        self._execute_ddl("schema/vector_index", text, {"dimensions": dimensions})

    def drop_vector_index(self, index: VectorIndex) -> None:
        statement = "schema/vector_index_drop"
        text = self.schema_statement(statement, name=index_name(index))
        self._execute(text, {}, read_only=False, idempotent=self.idempotent(statement))

    def _await_indexes(self, timeout_s: float) -> None:
        # db.awaitIndexes fails when an index (a constraint's too) FAILED or the time runs out.
        seconds = positive_int("timeout", max(1, math.ceil(timeout_s)))
        self.write("schema/await_indexes", {"timeout_s": seconds})

    def erase(self, batch: int = 5_000) -> int:
        """Delete every node and relationship of this database and kgrag's vector indexes (their
        dimensions come with the next embedding space), in batches that fit a small heap; the
        next open migrates again. For tests, benchmarks and the demo: Neo4j Community has one
        database, so "a fresh store" means this. Returns the number of nodes deleted."""
        size = {"batch": positive_int("batch", batch)}
        while int(self.write("erase_relationships_batch", size)[0]["deleted"]):
            pass
        total = 0
        while deleted := int(self.write("erase_batch", size)[0]["deleted"]):
            total += deleted
        for index in VECTOR_INDEXES.values():
            self.drop_vector_index(index)
        return total

    # -- jobs: a lease per ingestion job in the graph, as several processes (and machines) may
    # ingest into one Neo4j database: `kgrag serve`, a `kgrag ingest` job, a batch runner --
    @contextlib.contextmanager
    def ingest_job(self, recover: Callable[[], list[str]]) -> Iterator[list[str]]:
        """As :meth:`GraphStore.ingest_job`, for the jobs of every process on this database:
        each job holds a lease (an ``IngestJob`` node, heart-beaten), ``recover`` runs only for
        a job that finds no other live lease, and a job that starts while another recovers waits
        for it. A lease is dead when its process is gone (same host) or its heartbeat is older
        than JOB_LEASE_TTL_S; dead leases are removed."""
        job = f"job_{uuid.uuid4().hex}"
        lease = {"id": job, "host": socket.gethostname(), "pid": os.getpid()}
        self.write("ingest_job_begin", lease)
        stop = threading.Event()
        beat = threading.Thread(
            target=self._heartbeat, args=(job, stop), name=f"kgrag-{job}", daemon=True
        )
        beat.start()
        try:
            ttl_ms = int(JOB_LEASE_TTL_S * 1000)
            while True:
                self._remove_dead_jobs(job)
                claimed = self.write("ingest_job_claim", {"id": job, "ttl_ms": ttl_ms})
                if not claimed:  # our lease is gone (the database was emptied): recover nothing
                    claimed = [{"recover": False, "recovering": 0}]
                claim = claimed[0]
                if not claim["recovering"]:
                    break
                log.info("another ingestion job is removing interrupted work; waiting for it")
                self._sleep(JOB_RECOVERY_POLL_S)
            recovered: list[str] = []
            if claim["recover"]:
                try:
                    recovered = recover()
                finally:
                    self.write("ingest_job_recovered", {"id": job})
            else:
                log.info(
                    "another ingestion job runs on %s: unfinished documents left to it", self.uri
                )
            yield recovered
        finally:
            stop.set()
            beat.join()
            try:
                self.write("ingest_job_end", {"ids": [job]})
            except StoreError as e:  # never hide the job's own outcome; the lease will expire
                # INFO: the job's own failure (same cause) is what the user must read, once
                log.info("could not end ingestion job %s's lease: %s", job, e)

    def _heartbeat(self, job: str, stop: threading.Event) -> None:
        while not stop.wait(JOB_HEARTBEAT_S):
            try:
                self.write("ingest_job_heartbeat", {"id": job})
            except StoreError as e:  # the job's own writes will fail and say why
                log.info("could not renew ingestion job %s's lease: %s", job, e)

    def _remove_dead_jobs(self, job: str) -> None:
        host = socket.gethostname()
        dead = [
            r["id"]
            for r in self.read("ingest_job_list", {"id": job})
            if r["age_ms"] is None
            or r["age_ms"] > JOB_LEASE_TTL_S * 1000
            or (r["host"] == host and not _process_alive(r["pid"]))
        ]
        if dead:
            log.info("removing the leases of ingestion jobs that died: %s", ", ".join(dead))
            self.write("ingest_job_end", {"ids": dead})

    def _discard_failed_constraint(self, op: UniqueProperty) -> None:
        """Nothing to remove: a Neo4j constraint that cannot be built is never created."""

    def server_version(self) -> str:
        return f"Neo4j {self._version}"

    def compact(self) -> None:
        """Nothing to do: Neo4j reuses the records of deleted nodes and relationships (its store
        files keep their size), and prunes its transaction logs at its own checkpoints by the
        server's ``db.tx_log.rotation.retention_policy`` (Community has no ``db.checkpoint()``
        procedure to call)."""

    def close(self) -> None:
        self._driver.close()


def _process_alive(pid: object) -> bool:
    """Whether a process of this machine with id ``pid`` exists."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _retryable(e: BaseException) -> bool:
    """The driver's own classification: ServiceUnavailable, SessionExpired and most
    TransientErrors are retryable; client errors (syntax, auth, constraints) are not."""
    check = getattr(e, "is_retryable", None)
    return bool(check()) if callable(check) else False


#: What a concurrent CREATE INDEX / CONSTRAINT ... IF NOT EXISTS may fail with (see _execute_ddl).
_ALREADY_EXISTS = frozenset(
    {
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        "Neo.ClientError.Schema.IndexAlreadyExists",
        "Neo.ClientError.Schema.ConstraintAlreadyExists",
    }
)
_MERGE = re.compile(r"\bMERGE\b", re.IGNORECASE)


def _retryable_merge(e: BaseException) -> bool:
    """As :func:`_retryable`, and a MERGE's lost creation race under a unique constraint."""
    return _retryable(e) or getattr(e, "code", None) == CONSTRAINT_RACE


def _deadlock(e: BaseException) -> bool:
    return getattr(e, "code", None) == DEADLOCK


def _notes(e: BaseException) -> str:
    notes = getattr(e, "__notes__", None)
    return f" ({'; '.join(notes)})" if notes else ""


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
