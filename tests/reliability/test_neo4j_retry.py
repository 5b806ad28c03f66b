"""The Neo4j backend's retry policy, at the driver boundary: a fake driver raising the real
driver's exception classes (their own ``is_retryable()`` classification), and the real driver
against a closed port. The Neo4j contract tests need a server and skip here."""

from __future__ import annotations

import random
from typing import Any

import pytest

neo4j = pytest.importorskip("neo4j")

from neo4j.exceptions import (  # noqa: E402
    ClientError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from kgrag.errors import StoreError, StoreUnavailableError  # noqa: E402
from kgrag.graph import cypher  # noqa: E402
from kgrag.graph.neo4j_store import Neo4jStore  # noqa: E402
from kgrag.graph.retry import RetryPolicy  # noqa: E402
from tests.support.idempotence import looks_idempotent  # noqa: E402

pytestmark = pytest.mark.reliability

FAST = RetryPolicy(attempts=4, initial_delay_s=0.1, multiplier=2.0, max_delay_s=0.3, jitter=0)


class Record:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def data(self) -> dict[str, Any]:
        return self._data


class FakeDriver:
    """Stands in for ``neo4j.Driver.execute_query``: raises the scripted errors, then answers."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = list(errors)
        self.calls: list[tuple[str, Any]] = []

    def execute_query(self, text: str, params: Any = None, **kw: Any) -> Any:
        self.calls.append((text, kw.get("routing_")))
        if self.errors:
            raise self.errors.pop(0)
        return [Record({"n": 1})], None, None

    def close(self) -> None:
        pass


def _store(
    errors: list[Exception], policy: RetryPolicy = FAST
) -> tuple[Neo4jStore, FakeDriver, list[float]]:
    driver = FakeDriver(errors)
    slept: list[float] = []
    store = Neo4jStore(
        "neo4j://fake:7687", driver, None, "5.26.0", retry=policy, sleep=slept.append
    )
    return store, driver, slept


def _transient(code: str = "Neo.TransientError.Transaction.DeadlockDetected") -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message="deadlock detected")


def test_reads_are_retried_with_exponential_backoff_until_they_answer() -> None:
    store, driver, slept = _store([ServiceUnavailable("dropped"), SessionExpired("expired")])
    assert store.read("stats_labels") == [{"n": 1}]
    assert len(driver.calls) == 3
    assert slept == [0.1, 0.2]
    assert {routing for _, routing in driver.calls} == {neo4j.RoutingControl.READ}


def test_backoff_is_capped_and_the_error_says_what_to_do_when_attempts_run_out() -> None:
    store, driver, slept = _store([ServiceUnavailable("connection dropped")] * 10)
    with pytest.raises(StoreUnavailableError) as e:
        store.read("stats_labels")
    assert len(driver.calls) == FAST.attempts
    assert slept == [0.1, 0.2, 0.3]
    message = str(e.value)
    assert "neo4j://fake:7687" in message and "gave up after 4 attempt(s)" in message
    assert "run the job again" in message
    assert isinstance(e.value.__cause__, ServiceUnavailable)


def test_idempotent_merge_writes_are_retried_on_transient_errors() -> None:
    assert cypher.idempotent("entity_upsert")
    store, driver, slept = _store([_transient()])
    store.write_rows("entity_upsert", [{"id": "a", "name": "A", "type": "OTHER"}])
    assert len(driver.calls) == 2 and slept == [0.1]
    assert driver.calls[0][1] == neo4j.RoutingControl.WRITE


def test_a_write_that_is_not_idempotent_is_never_repeated() -> None:
    store, driver, slept = _store([ServiceUnavailable("dropped after commit was sent")])
    with pytest.raises(StoreUnavailableError) as e:
        store._execute("CREATE (n:Step {id: $id})", {"id": "s"}, read_only=False)
    assert len(driver.calls) == 1 and slept == []
    assert "not idempotent and was not retried" in str(e.value)


def test_a_database_not_online_yet_is_unavailable_not_a_failure() -> None:
    """Neo4j restarting after a crash answers Bolt before its database is online: that is an
    unavailable store (HTTP 503, the server waits for it), not a failed statement (500)."""
    starting = Neo4jError._hydrate_neo4j(
        code="Neo.TransientError.General.DatabaseUnavailable",
        message="Database 'neo4j' is unavailable.",
    )
    store, driver, _ = _store([starting] * 10)
    with pytest.raises(StoreUnavailableError):
        store.read("stats_labels")
    assert len(driver.calls) == FAST.attempts  # retried first, as every transient error
    store, driver, _ = _store([starting])
    with pytest.raises(StoreUnavailableError) as e:
        store._execute("CREATE (n:Step {id: $id})", {"id": "s"}, read_only=False)
    assert len(driver.calls) == 1 and "not idempotent" in str(e.value)


def test_errors_the_driver_calls_permanent_are_not_retried() -> None:
    syntax = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="bad")
    terminated = _transient("Neo.TransientError.Transaction.Terminated")
    assert isinstance(syntax, ClientError) and not terminated.is_retryable()
    for error in (syntax, terminated):
        store, driver, slept = _store([error])
        with pytest.raises(StoreError):
            store.read("stats_labels")
        assert len(driver.calls) == 1 and slept == []


def test_persistent_transient_errors_end_as_a_store_error_naming_the_cause() -> None:
    store, _, _ = _store([_transient()] * 10)
    with pytest.raises(StoreError) as e:
        store.read("stats_labels")
    assert not isinstance(e.value, StoreUnavailableError)
    assert "transient" in str(e.value) and "deadlock detected" in str(e.value)
    assert isinstance(e.value.__cause__, TransientError)


#: The statements that may not run twice, so the store never retries them: ``kgrag db compact``
#: creates the copy of the graph in a scratch key, checks it against the graph and refuses to
#: swap on any difference, so a failed create leaves the store as it was.
NOT_IDEMPOTENT = {
    "schema/rebuild_nodes_create",
    "schema/rebuild_nodes_create_vector",
    "schema/rebuild_relationships_create",
}


def test_every_statement_in_the_corpus_is_idempotent_so_each_may_be_retried() -> None:
    """Every file declares ``// idempotent: yes`` in its header (the overlays of each dialect
    too) but the rebuild's creates, and no statement's text contradicts its header."""
    names = [*cypher.names(), *cypher.names("templates"), *cypher.names("schema")]
    assert len(names) > 30
    overlays = [(), ("falkordb",), ("neo4j_search",)]
    declared_not = {n for n in names for o in overlays if not cypher.idempotent(n, o)}
    assert declared_not == NOT_IDEMPOTENT
    retried = [n for n in names if n not in NOT_IDEMPOTENT]
    texts = [cypher.load(n, o) for n in retried for o in overlays]
    assert [t for t in texts if not looks_idempotent(t)] == []
    assert all(not looks_idempotent(cypher.load(n)) for n in NOT_IDEMPOTENT)


def test_idempotence_check_recognises_creates_and_increments() -> None:
    assert not looks_idempotent("CREATE (n:Step {id: $id})")
    assert not looks_idempotent("MATCH (a {id: $a}) CREATE (a)-[:NEXT]->(b)")
    assert not looks_idempotent("MATCH (r) SET r.weight = r.weight + 1")
    assert not looks_idempotent("MATCH (r) SET r.weight = coalesce(r.weight, 0) + $w")
    guarded = "MATCH (c)-[r]->() WHERE c.counted IS NULL SET c.counted = true, r.w = r.w + 1"
    assert looks_idempotent(guarded)
    assert not looks_idempotent(guarded.replace("SET c.counted = true, ", "SET "))
    assert looks_idempotent("MERGE (m:Migration {name: $n}) ON CREATE SET m.applied_at = $t")
    assert looks_idempotent("CREATE INDEX chunk_id IF NOT EXISTS FOR (n:Chunk) ON (n.id)")
    assert looks_idempotent(
        "CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.e"
    )
    assert looks_idempotent("MATCH (a), (b) MERGE (a)-[r:RELATED]-(b) SET r.weight = $w")
    assert looks_idempotent("CREATE (a)-[:RELATED]->(b)\nDETACH DELETE a, b")  # leaves nothing
    assert not looks_idempotent("CREATE (a)-[:RELATED]->(b)\nDETACH DELETE a")
    assert not looks_idempotent("MATCH (x {id: $x}) CREATE (a)-[:R]->(x) DETACH DELETE a")


def test_jittered_delays_stay_within_the_policy() -> None:
    policy = RetryPolicy(attempts=6, initial_delay_s=0.2, multiplier=2, max_delay_s=1.0, jitter=0.5)
    delays = list(policy.delays(random.Random(7)))
    caps = [0.2, 0.4, 0.8, 1.0, 1.0]
    assert len(delays) == 5
    assert all(c * 0.5 <= d <= c for d, c in zip(delays, caps, strict=True))


def test_real_driver_against_a_closed_port_gives_up_with_a_clear_error() -> None:
    policy = RetryPolicy(attempts=3, initial_delay_s=0.05, max_delay_s=0.1)
    with pytest.raises(StoreUnavailableError) as e:
        Neo4jStore.open("bolt://127.0.0.1:1", "neo4j", "secret", retry=policy)
    message = str(e.value)
    assert "bolt://127.0.0.1:1" in message and "gave up after 3 attempt(s)" in message
    assert "secret" not in message
