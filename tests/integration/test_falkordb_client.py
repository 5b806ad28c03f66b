"""The embedded engine's client: a write that runs longer than redis-py's default 5 s read
timeout is executed once and answered, not re-sent by redis-py's retries and then reported as a
lost connection (a real folder's large document failed so, and a CREATE of 23,999 nodes made
263,989)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kgrag.graph.falkordb_store import FalkorDBStore

#: rows the slow write walks (N x N), of which 2N - 1 are created: ~10 s on this machine
N = 12_000
SLOW_WRITE = (
    "UNWIND range(1, $n) AS a UNWIND range(1, $n) AS b WITH a, b "
    "WHERE (a * b) % 10007 = 0 CREATE (:Probe {a: a, b: b})"
)


@pytest.fixture
def store(tmp_path: Path) -> FalkorDBStore:
    opened = FalkorDBStore.open_embedded(tmp_path / "kg.db")
    yield opened
    opened.close()


def test_connections_have_no_read_timeout_and_never_resend(store: FalkorDBStore) -> None:
    pool = store._connection.connection.connection_pool
    assert pool.connection_kwargs["socket_timeout"] is None
    assert pool.connection_kwargs["retry"].get_retries() == 0


def test_a_write_longer_than_five_seconds_runs_once(store: FalkorDBStore) -> None:
    started = time.perf_counter()
    store._graph.query(SLOW_WRITE, {"n": N})
    took = time.perf_counter() - started
    created = store._graph.query("MATCH (p:Probe) RETURN count(p)").result_set[0][0]
    assert created == 2 * N - 1  # multiples of the prime 10007 up to N: one per side
    if took < 6:
        pytest.skip(f"the write took {took:.1f} s: too fast to pass the old 5 s timeout here")
